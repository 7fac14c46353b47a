"""Choose the ``nli`` verifier's relevance gate (``min_relevance``) and the corpus ``top_k`` on held-out
**training** claims, never on an evaluation set.

Two kinds of held-out claims, both slices that ``scripts/train_offline_nli.py`` never trains on (same seed and
shares):

* SciFact train claims (SUPPORT / CONTRADICT): the gate should let them through, and the verdict should be
  right. Accuracy and macro-F1 over TRUE / FALSE; an abstention counts as wrong, as in the reported results.
* General-knowledge claims (held-out VitaminC and Fool Me Twice claims) run against the shipped biomedical
  corpus: nothing there addresses them, so the gate should abstain (UNVERIFIED).

Each claim is retrieved and classified once per ``top_k``; every ``min_relevance`` is then applied to the same
probabilities, giving the coverage-vs-accuracy table of the model card. A third kind, held-out Check-COVID and
Citation-Integrity training pairs given their gold evidence, shows what the word test costs long biomedical claims.
SciFact dev is not read.

    python scripts/tune_nli.py [--model factcheck/data/nli] [--top-k 3] [--values 0.2,0.5] [--coverages 0.3,0.4] \
        [--shared 3,4,99]
"""

from __future__ import annotations

import argparse
import json
import random
from pathlib import Path

from train_offline_nli import (
    REFUTES,
    SUPPORTS,
    Pair,
    _clean,
    _hashed,
    check_covid_pairs,
    citation_pairs,
    heldout_groups,
    read_jsonl,
)

from factcheck import Claim, Evidence, Label
from factcheck.eval.metrics import accuracy, macro_f1
from factcheck.sources.corpus import CorpusSource
from factcheck.verifiers.nli import SHIPPED_MODEL, NLIVerifier, Reading

DATA = Path(__file__).resolve().parent.parent.parent / "shared" / "data"


def general_claims(data: Path, seed: int, share: float, n: int) -> list[str]:
    """Held-out VitaminC (real, synthetic) and Fool Me Twice claims: the groups the training never saw."""
    claims: dict[str, str] = {}
    for part in ("vitaminc_real", "vitaminc_synthetic"):
        for row in read_jsonl(data / "vitaminc" / part / "test.jsonl"):
            if _hashed(f"vc-{row['case_id']}", seed) < share:
                claims.setdefault(f"vc-{row['case_id']}", _clean(row["claim"]))
    for split in ("dev", "test"):
        for row in read_jsonl(data / "fm2/dataset" / f"{split}.jsonl"):
            if _hashed(f"fm2-{row['id']}", seed) < share:
                claims[f"fm2-{row['id']}"] = row["text"]
    chosen = sorted(claims)
    random.Random(seed).shuffle(chosen)
    return [claims[k] for k in chosen[:n]]


def domain_pairs(data: Path, seed: int, share: float) -> list[Pair]:
    """Held-out Check-COVID and Citation-Integrity train pairs (SUPPORTS / REFUTES) with their gold evidence:
    long biomedical claims against short passages, which the word test must let through."""
    pairs = check_covid_pairs(data) + citation_pairs(data)
    return [p for p in pairs if _hashed(p.group, seed) < share and p.label in (SUPPORTS, REFUTES)]


def labelled(predicted: list[bool | None]) -> list[Label]:
    return [Label.UNVERIFIED if p is None else Label.TRUE if p else Label.FALSE for p in predicted]


def main(args: argparse.Namespace) -> None:
    config = json.loads((args.model / "nli.json").read_text(encoding="utf-8"))
    seed, share = config["hyperparameters"]["seed"], config["hyperparameters"]["holdout"]
    held = heldout_groups(args.data, share, random.Random(seed))
    rows = [
        r
        for r in read_jsonl(args.data / "scifact" / "claims_train.jsonl")
        if f"scifact-{r['id']}" in held and r["label"] != "NOT_ENOUGH_INFO"
    ]
    corpus = {r["doc_id"]: r for r in read_jsonl(args.data / "scifact" / "corpus.jsonl")}
    gold = [r["label"] == "SUPPORT" for r in rows]
    general = general_claims(args.data, seed, args.other_holdout, args.general)
    domain = domain_pairs(args.data, seed, args.other_holdout)
    print(f"held-out SciFact train claims: {len(rows)} ({sum(gold)} SUPPORT / {len(gold) - sum(gold)} CONTRADICT)")
    print(f"held-out general-knowledge claims (VitaminC, FM2) against the SciFact corpus: {len(general)}")
    print(f"held-out Check-COVID / Citation-Integrity pairs, gold evidence given: {len(domain)}")
    values = [float(v) for v in args.values.split(",")]
    coverages = [float(c) for c in args.coverages.split(",")]
    shared = [int(n) for n in args.shared.split(",")]
    verifier = NLIVerifier(model=str(args.model))
    truth = [Label.TRUE if g else Label.FALSE for g in gold]
    domain_truth = [Label.TRUE if p.label == SUPPORTS else Label.FALSE for p in domain]
    domain_readings = [
        verifier.read(Claim(f"d{i}", p.claim), [Evidence(p.source, p.evidence)]) for i, p in enumerate(domain)
    ]
    settings: list[tuple[str, int | None]] = [("gold", None)] + [("top_k", int(k)) for k in args.top_k.split(",")]
    print(
        "| evidence | min_relevance | min_coverage | min_shared | SciFact answered | accuracy of answered "
        "| accuracy (abstain wrong) | macro-F1 | general claims UNVERIFIED | Check-COVID / CitInt answered "
        "| their accuracy (abstain wrong) |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for mode, k in settings:
        readings: list[Reading] = []
        for row in rows:
            claim = Claim(str(row["id"]), row["claim"])
            cited = [corpus[int(d)] for d in row["evidence"]]
            if k is None:
                evidence = [Evidence("gold", "\n".join(doc["abstract"]), doc["title"]) for doc in cited]
            else:
                evidence = CorpusSource(top_k=k).search(claim)
            readings.append(verifier.read(claim, evidence))
        off_topic = (
            [verifier.read(Claim("g", c), CorpusSource(top_k=k).search(Claim("g", c))) for c in general]
            if k is not None
            else []
        )
        for v, c, n in [(v, c, n) for v in values for c in coverages for n in shared]:
            decide = verifier.configure(min_relevance=v, min_coverage=c, min_shared=n).decide
            labels = labelled([decide(reading).factuality for reading in readings])
            answered = [(t, lab) for t, lab in zip(truth, labels, strict=True) if lab != Label.UNVERIFIED]
            of_answered = sum(t == lab for t, lab in answered) / len(answered) if answered else 0.0
            f1 = macro_f1(truth, labels, [Label.TRUE, Label.FALSE])
            abstained = (
                f"{sum(decide(r).factuality is None for r in off_topic) / len(off_topic):.0%}" if off_topic else "-"
            )
            domain_labels = labelled([decide(r).factuality for r in domain_readings])
            domain_answered = sum(lab != Label.UNVERIFIED for lab in domain_labels) / len(domain_labels)
            print(
                f"| {mode + (f' {k}' if k else '')} | {v:g} | {c:g} | {n} | {len(answered) / len(rows):.0%} "
                f"| {of_answered:.3f} | {accuracy(truth, labels):.3f} | {f1:.3f} | {abstained} "
                f"| {domain_answered:.0%} | {accuracy(domain_truth, domain_labels):.3f} |",
                flush=True,
            )


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", type=Path, default=SHIPPED_MODEL)
    parser.add_argument("--top-k", default="3")
    parser.add_argument("--values", default="0.2,0.3,0.4,0.5,0.6,0.7,0.8,0.9")
    parser.add_argument("--coverages", default="0,0.3,0.4,0.5")
    parser.add_argument("--shared", default="3,4,5,99", help="min_shared values (99: the share alone decides)")
    parser.add_argument("--general", type=int, default=300, help="held-out general-knowledge claims to run")
    parser.add_argument("--other-holdout", type=float, default=0.08, help="as train_offline_nli.py pairs")
    parser.add_argument("--data", type=Path, default=DATA)
    main(parser.parse_args())
