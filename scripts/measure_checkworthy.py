"""How well the offline extractor tells check-worthy sentences from the rest, on ClaimBuster.

Reads ``claimbuster/data/two_class/train.json`` and ``2020_debate.tsv`` of ../shared/data (or
FACTCHECK_SHARED_DATA; GPL-3.0: measured here, nothing learned from it is shipped). Prints:

1. end to end, as ``factcheck extract`` runs: every sentence its own paragraph (sentences joined by
   blank lines), the default ``sentence`` extractor; a sentence is kept when a claim comes from it.
   "keep" is the share of check-worthy sentences kept, "drop" the share of the others skipped;
2. cross-validated on train.json (5 folds, fixed seed): on four folds, the set of filters (and
   ``keep_figures``) that drops the most non-check-worthy sentences while keeping at least
   ``--min-keep`` of the check-worthy ones is chosen; it is measured on the fifth. The filters
   were written by reading train.json, so the held-out folds measure the tuning, not the writing:
   2020_debate.tsv, read only to measure, is the independent figure;
3. the same with only the filters the extractor had before (fragment, question), and the time per
   sentence; 4. how many claims of SciFact (dev) and FEVER (paper_dev, first 2,000) are kept: each
   is a factual statement written to be checked, so every one dropped is a loss.

    python scripts/measure_checkworthy.py            # about a minute on one core
    python scripts/measure_checkworthy.py --folds 0  # end to end only
    python scripts/measure_checkworthy.py --model blank  # spaCy's rule-based sentencizer, no model

With ``--model blank`` only the filters that need no parse run (what the extractor does without the
model), and the cross-validation chooses among those.

The figures are quoted in docs/extraction.md.
"""

from __future__ import annotations

import argparse
import csv
import json
import random
import time
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from factcheck.extractors.checkworthy import FILTER_NAMES, PARSE_FREE, assess
from factcheck.extractors.sentence import SentenceExtractor, load_pipeline, paragraph_pieces
from factcheck.paths import shared_data_dir

FOLDER = Path("claimbuster/data/two_class")


def read_sets(root: Path) -> dict[str, list[tuple[int, str]]]:
    """``{"train": [(label, sentence)], "2020_debate": [...]}``; label 1 is check-worthy."""
    train = json.loads((root / FOLDER / "train.json").read_text(encoding="utf-8"))
    with (root / FOLDER / "2020_debate.tsv").open(encoding="utf-8", newline="") as handle:
        debate = [(int(row["label"]), row["text"]) for row in csv.DictReader(handle, delimiter="\t")]
    return {
        "train": [(int(r["label"]), " ".join(str(r["text"]).split())) for r in train],
        "2020_debate": [(label, " ".join(text.split())) for label, text in debate],
    }


def end_to_end(rows: Sequence[tuple[int, str]], extractor: SentenceExtractor) -> tuple[list[bool], float]:
    """Which sentences yield a claim when each is a paragraph of one text, and seconds per sentence."""
    kept: list[bool] = []
    started = time.perf_counter()
    for chunk_start in range(0, len(rows), 500):
        chunk = [text for _, text in rows[chunk_start : chunk_start + 500]]
        text = "\n\n".join(chunk)
        bounds, offset = [], 0
        for sentence in chunk:
            bounds.append((offset, offset + len(sentence)))
            offset += len(sentence) + 2
        starts = {c.span[0] for c in extractor.extraction(text).claims if c.span is not None}
        kept += [any(start <= s < end for s in starts) for start, end in bounds]
    return kept, (time.perf_counter() - started) / max(len(rows), 1)


def rates(kept: Sequence[bool], labels: Sequence[int]) -> tuple[float, float]:
    """(share of check-worthy kept, share of the others dropped)."""
    positives = [k for k, label in zip(kept, labels, strict=True) if label == 1]
    negatives = [k for k, label in zip(kept, labels, strict=True) if label == 0]
    return sum(positives) / max(len(positives), 1), sum(not k for k in negatives) / max(len(negatives), 1)


def filter_names(model: str) -> tuple[str, ...]:
    """The filters the extractor runs on ``model``'s pipeline: without a parser, only the parse-free ones."""
    return (
        FILTER_NAMES
        if "parser" in load_pipeline(model).pipe_names
        else tuple(n for n in FILTER_NAMES if n in PARSE_FREE)
    )


def flags(rows: Sequence[tuple[int, str]], model: str) -> list[dict[tuple[str, bool], bool]]:
    """Per sentence, whether each filter alone (with and without ``keep_figures``) skips it."""
    nlp = load_pipeline(model)
    parsed = "parser" in nlp.pipe_names
    if "ner" in nlp.disabled:
        nlp.enable_pipe("ner")
    try:
        docs = list(nlp.pipe(text for _, text in rows))
    finally:
        if "ner" in nlp.pipe_names:
            nlp.disable_pipe("ner")
    out = []
    for doc in docs:
        pieces = [piece for sent in doc.sents for piece in paragraph_pieces(sent)]
        out.append(
            {
                (name, figures): all(
                    assess(piece, (name,), attribution=parsed, keep_figures=figures).skipped is not None
                    for piece in pieces
                )
                for name in filter_names(model)
                for figures in (True, False)
            }
        )
    return out


def masks(fired: Sequence[dict[tuple[str, bool], bool]], names: Sequence[str], figures: bool) -> np.ndarray:
    """One bit per filter of ``names`` that skips the sentence."""
    return np.array(
        [sum(1 << bit for bit, name in enumerate(names) if f[(name, figures)]) for f in fired], dtype=np.int64
    )


def choose(
    fired: Sequence[dict[tuple[str, bool], bool]], names: Sequence[str], labels: np.ndarray, min_keep: float
) -> tuple[tuple[str, ...], bool]:
    """The filters (and keep_figures) that drop the most of the others while keeping ``min_keep``."""
    best: tuple[float, tuple[str, ...], bool] = (-1.0, (), True)
    positive = labels == 1
    for figures in (True, False):
        bits = masks(fired, names, figures)
        for subset_mask in range(1 << len(names)):
            kept = (bits & subset_mask) == 0
            keep, drop = kept[positive].mean(), (~kept[~positive]).mean()
            if keep >= min_keep and drop >= best[0]:
                subset = tuple(name for bit, name in enumerate(names) if subset_mask >> bit & 1)
                # On a tie, the larger set: a filter that changes nothing on these folds stays on.
                if drop > best[0] or len(subset) > len(best[1]):
                    best = (float(drop), subset, figures)
    return best[1], best[2]


def cross_validate(rows: Sequence[tuple[int, str]], folds: int, min_keep: float, seed: int, model: str) -> None:
    labels = np.array([label for label, _ in rows])
    names = filter_names(model)
    fired = flags(rows, model)
    order = list(range(len(rows)))
    random.Random(seed).shuffle(order)
    held_keep, held_drop = [], []
    for fold in range(folds):
        test = set(order[fold::folds])
        train_idx = [i for i in range(len(rows)) if i not in test]
        subset, figures = choose([fired[i] for i in train_idx], names, labels[train_idx], min_keep)
        test_idx = sorted(test)
        kept = [not any(fired[i][(name, figures)] for name in subset) for i in test_idx]
        keep, drop = rates(kept, [int(labels[i]) for i in test_idx])
        held_keep.append(keep)
        held_drop.append(drop)
        off = sorted(set(names) - set(subset))
        print(
            f"  fold {fold + 1}: keep {keep:.3f} drop {drop:.3f}  "
            f"(chosen: all filters{' but ' + ', '.join(off) if off else ''}, keep_figures={figures})"
        )
    mean_keep, mean_drop = sum(held_keep) / folds, sum(held_drop) / folds
    print(f"  held-out mean: keep {mean_keep:.3f} drop {mean_drop:.3f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--folds", type=int, default=5, help="cross-validation folds on train.json (0: none)")
    parser.add_argument("--min-keep", type=float, default=0.92, help="keep rate a fold's choice must reach")
    parser.add_argument("--seed", type=int, default=13)
    parser.add_argument("--limit", type=int, default=None, help="read only the first N sentences of each set")
    parser.add_argument("--model", default="auto", help="the extractor's spaCy pipeline (auto: the model; blank)")
    args = parser.parse_args()
    sets = read_sets(shared_data_dir())
    if args.limit:
        sets = {name: rows[: args.limit] for name, rows in sets.items()}
    default = SentenceExtractor(model=args.model)
    before = SentenceExtractor(model=args.model, filters=("fragment", "question"), attribution=False)
    before = before.configure(decontextualise=False)
    print(f"spaCy pipeline: {args.model} ({', '.join(load_pipeline(args.model).component_names)})")
    for name, rows in sets.items():
        labels = [label for label, _ in rows]
        print(f"{name}: {len(rows)} sentences, {sum(labels)} check-worthy")
        for what, extractor in (("filters (default)", default), ("before (fragment, question)", before)):
            kept, seconds = end_to_end(rows, extractor)
            keep, drop = rates(kept, labels)
            print(f"  {what:28} keep {keep:.3f} drop {drop:.3f}  {seconds * 1000:.1f} ms/sentence")
    # Sets of claims written to be checked (every one a factual statement): how many the filters keep.
    for path, field in (("scifact/claims_dev.jsonl", "claim"), ("fever/paper_dev.jsonl", "claim")):
        lines = (shared_data_dir() / path).read_text(encoding="utf-8").splitlines()[: args.limit or 2000]
        rows = [(1, " ".join(str(json.loads(line)[field]).split())) for line in lines if line.strip()]
        kept, _ = end_to_end(rows, default)
        print(f"{path} (first {len(rows)} claims, all factual): kept {sum(kept) / len(rows):.3f}")
    if args.folds:
        print(f"train cross-validated ({args.folds} folds, filters chosen for keep >= {args.min_keep}):")
        cross_validate(sets["train"], args.folds, args.min_keep, args.seed, args.model)


if __name__ == "__main__":
    main()
