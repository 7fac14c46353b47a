"""How good is the offline default? SciFact binary claims, end to end and verifier-alone.

For each labelled claim (SUPPORT -> TRUE, CONTRADICT -> FALSE) this runs, side by side:

- ``always-true``: the majority-class floor;
- ``end-to-end``: the offline default (spaCy claims, BM25 over the shipped SciFact
  corpus, the ``lexical`` verifier, MAFC), text label at threshold 0.5;
- ``gold-evidence``: the verifier alone, given the claim's gold abstracts.

An UNVERIFIED text (every agent abstained) counts as wrong in ``accuracy``;
``answered acc`` is the accuracy on the rest. Confidence intervals: 1000 bootstrap
resamples of claims (seed 0).

    python bench/offline_scifact.py                      # the 188 dev claims of the MAFC paper
    python bench/offline_scifact.py --split train        # SciFact train (used to choose min_coverage)
    python bench/offline_scifact.py --option min_coverage=0.6
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import time
from collections.abc import Sequence
from pathlib import Path

from factcheck import Agent, Checker, Claim, Evidence, Label
from factcheck.options import parse_option_pairs
from factcheck.sources.corpus import CorpusSource
from factcheck.verifiers.lexical import LexicalVerifier

DATA = Path(__file__).resolve().parent.parent.parent / "shared" / "data"


def load(split: str, data: Path) -> list[tuple[str, bool, list[int]]]:
    """(claim, gold is TRUE, gold abstract ids) for each SUPPORT / CONTRADICT claim."""
    scifact = data / "scifact"
    if split == "dev188":
        dev = {c["id"]: c for c in map(json.loads, (scifact / "claims_dev.jsonl").open())}
        rows = [json.loads(line) for line in (data / "ito_mafc" / "scifact_single_dev188.jsonl").open()]
        return [
            (r["claim"], r["label"] == "SUPPORTS", [int(d) for d in dev[r["scifact_dev_id"]]["evidence"]]) for r in rows
        ]
    rows = [json.loads(line) for line in (scifact / "claims_train.jsonl").open()]
    return [
        (r["claim"], r["label"] == "SUPPORT", [int(d) for d in r["evidence"]])
        for r in rows
        if r["label"] in ("SUPPORT", "CONTRADICT")
    ]


def metrics(predicted: Sequence[Label | None], gold: Sequence[bool], seed: int = 0) -> dict[str, float]:
    def accuracy(idx: Sequence[int]) -> float:
        return sum(predicted[i] == (Label.TRUE if gold[i] else Label.FALSE) for i in idx) / len(idx)

    everything = range(len(gold))
    rng = random.Random(seed)
    samples = sorted(accuracy([rng.randrange(len(gold)) for _ in everything]) for _ in range(1000))
    answered = [i for i in everything if predicted[i] in (Label.TRUE, Label.FALSE)]
    f1s = []
    for positive in (True, False):
        label = Label.TRUE if positive else Label.FALSE
        tp = sum(predicted[i] == label and gold[i] == positive for i in everything)
        fp = sum(predicted[i] == label and gold[i] != positive for i in everything)
        fn = sum(predicted[i] != label and gold[i] == positive for i in everything)
        f1s.append(2 * tp / (2 * tp + fp + fn) if tp else 0.0)
    return {
        "accuracy": accuracy(everything),
        "ci_low": samples[25],
        "ci_high": samples[974],
        "macro_f1": sum(f1s) / 2,
        "abstain": 1 - len(answered) / len(gold),
        "answered_acc": accuracy(answered) if answered else 0.0,
    }


def gold_abstracts(data: Path) -> dict[int, Evidence]:
    docs = {}
    for line in (data / "scifact" / "corpus.jsonl").open():
        doc = json.loads(line)
        docs[doc["doc_id"]] = Evidence("gold", "\n".join(doc["abstract"]), doc["title"])
    return docs


async def run(args: argparse.Namespace) -> None:
    rows = load(args.split, args.data)
    gold = [g for _, g, _ in rows]
    options = parse_option_pairs(args.option)
    verifier = LexicalVerifier().configure(**options)
    checker = Checker(agents=[Agent("corpus", CorpusSource(), verifier)], scoring_options={"thresholds": "0.5"})
    start = time.perf_counter()
    end_to_end = [(await checker.acheck(text)).label for text, _, _ in rows]
    seconds = time.perf_counter() - start

    docs = gold_abstracts(args.data)
    given = []
    for text, _, doc_ids in rows:
        assessment = await verifier.judge(Claim("c1", text), [docs[d] for d in doc_ids])
        given.append(None if assessment.factuality is None else Label.TRUE if assessment.factuality else Label.FALSE)

    print(
        f"SciFact {args.split}: {len(rows)} claims ({sum(gold)} TRUE / {len(gold) - sum(gold)} FALSE); "
        f"verifier options {options or 'default'}; end-to-end {len(rows) / seconds:.1f} claims/s"
    )
    print(f"{'system':<16}{'accuracy':>10}{'95% CI':>16}{'macro-F1':>10}{'abstain':>9}{'answered acc':>14}")
    for name, predicted in (
        ("always-true", [Label.TRUE] * len(rows)),
        ("end-to-end", end_to_end),
        ("gold-evidence", given),
    ):
        m = metrics(predicted, gold)
        ci = f"[{m['ci_low']:.3f}, {m['ci_high']:.3f}]"
        print(
            f"{name:<16}{m['accuracy']:>10.3f}{ci:>16}"
            f"{m['macro_f1']:>10.3f}{m['abstain']:>9.1%}{m['answered_acc']:>14.3f}"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--split", choices=["dev188", "train"], default="dev188")
    parser.add_argument("--data", type=Path, default=DATA)
    parser.add_argument("--option", action="append", default=[], help="lexical verifier option key=value")
    asyncio.run(run(parser.parse_args()))


if __name__ == "__main__":
    main()
