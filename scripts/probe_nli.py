"""Probes of the ``nli`` verifier that ``factcheck eval`` does not run (evaluation only: nothing here is tuned on).

``fever-symmetric``
    FEVER-Symmetric v0.2 dev (708 claim-evidence pairs, SUPPORTS / REFUTES), the verifier alone on the
    given evidence ("given mode"): binary accuracy, an abstention counted as wrong.
``general``
    General-knowledge claims (FEVER paper_dev, which no training set holds) checked end to end against the
    shipped SciFact corpus (BM25 top 3 + ``nli``): the share judged UNVERIFIED, which should be high.
``negation``
    Held-out SciFact **train** claims (the slice training never saw) with a SUPPORT rationale, given that
    rationale: the claim as written should be TRUE, and its negation FALSE. Two negations: the training
    script's ``contradict`` (a direction word flipped, else "not" after the first auxiliary) and the plain
    "It is not true that ...". Flip rate = the share of claims judged TRUE whose negation is judged FALSE.
``multilingual``
    The hand-written probe of ``multilingual_probe/dev.jsonl`` (German, French, Spanish and Portuguese pairs,
    and claims in those languages against English evidence), zero-shot: three-way accuracy per language,
    of the model alone (the most probable of SUPPORTS / REFUTES / NOT ENOUGH INFO for the pair) and of the
    verifier on the given evidence, its gate included (TRUE / FALSE / UNVERIFIED read as the three labels).
    ``--multilingual FILE`` reads another file of the same design (a held-out test set).

    python scripts/probe_nli.py [--model factcheck/data/nli] [--min-relevance X] [--min-coverage Y] [--min-shared N] \
        [--probes fever-symmetric,negation,general,multilingual]
"""

from __future__ import annotations

import argparse
import json
import random
from pathlib import Path

from train_offline_nli import contradict, heldout_groups, read_jsonl

from factcheck import Claim, Evidence
from factcheck.sources.corpus import CorpusSource
from factcheck.verifiers.nli import SHIPPED_MODEL, NLIVerifier, load_model

DATA = Path(__file__).resolve().parent.parent.parent / "shared" / "data"


def fever_symmetric(verifier: NLIVerifier, data: Path) -> None:
    rows = read_jsonl(data / "fever" / "fever_symmetric_v0.2_dev.jsonl")
    right = abstained = 0
    for row in rows:
        result = verifier.assess(Claim("f", row["claim"]), [Evidence("gold", row["evidence"])])
        abstained += result.factuality is None
        right += result.factuality is (row["gold_label"] == "SUPPORTS")
    print(f"FEVER-Symmetric dev, given: {len(rows)} pairs, accuracy {right / len(rows):.3f}, abstained {abstained}")


def general(verifier: NLIVerifier, data: Path, n: int, seed: int) -> None:
    rows = read_jsonl(data / "fever" / "paper_dev.jsonl")
    random.Random(seed).shuffle(rows)
    source = CorpusSource()
    unverified = 0
    examples: list[str] = []
    for row in rows[:n]:
        claim = Claim("g", row["claim"])
        result = verifier.assess(claim, source.search(claim))
        unverified += result.factuality is None
        if result.factuality is not None and len(examples) < 5:
            examples.append(f"  answered: {row['claim']!r} -> {result.factuality} {result.confidence:.2f}")
    print(
        f"general-knowledge claims (FEVER paper_dev, {n} drawn with seed {seed}) against the SciFact corpus: "
        f"UNVERIFIED {unverified / n:.1%} ({unverified}/{n})"
    )
    print("\n".join(examples))


def negation(verifier: NLIVerifier, data: Path, model: Path) -> None:
    config = json.loads((model / "nli.json").read_text(encoding="utf-8"))
    seed, share = config["hyperparameters"]["seed"], config["hyperparameters"]["holdout"]
    held = heldout_groups(data, share, random.Random(seed))
    corpus = {r["doc_id"]: r for r in read_jsonl(data / "scifact" / "corpus.jsonl")}
    cases = []
    for row in read_jsonl(data / "scifact" / "claims_train.jsonl"):
        if f"scifact-{row['id']}" not in held:
            continue
        for doc_id, rationales in row["evidence"].items():
            for rationale in rationales:
                if rationale["label"] == "SUPPORT":
                    text = " ".join(corpus[int(doc_id)]["abstract"][i] for i in rationale["sentences"])
                    cases.append((row["claim"], Evidence("gold", text, corpus[int(doc_id)]["title"])))
    for name, negate in (
        ("contradict()", contradict),
        ("It is not true that", lambda c: "It is not true that " + c[0].lower() + c[1:]),
    ):
        supported = flipped = negated_false = total = 0
        for claim, evidence in cases:
            negated = negate(claim.rstrip("."))
            if negated is None:
                continue
            total += 1
            original = verifier.assess(Claim("n", claim), [evidence]).factuality
            after = verifier.assess(Claim("n", negated), [evidence]).factuality
            negated_false += after is False
            if original is True:
                supported += 1
                flipped += after is False
        print(
            f"negation probe ({name}), held-out SciFact train SUPPORT rationales: {total} pairs; "
            f"claim judged TRUE {supported}/{total}; negation judged FALSE {negated_false}/{total} "
            f"({negated_false / total:.3f}); flip rate {flipped}/{supported} ({flipped / max(supported, 1):.3f})"
        )


LABELS = ("SUPPORTS", "REFUTES", "NOT ENOUGH INFO")
VERDICT = {True: "SUPPORTS", False: "REFUTES", None: "NOT ENOUGH INFO"}


def multilingual(verifier: NLIVerifier, path: Path) -> dict[str, dict[str, float]]:
    rows = read_jsonl(path)
    model = load_model(verifier.model_folder)
    tally: dict[str, list[int]] = {}
    for row in rows:
        alone = LABELS[int(model.probabilities([(row["claim"], row["evidence"])])[0].argmax())]
        judged = VERDICT[verifier.assess(Claim("m", row["claim"]), [Evidence("gold", row["evidence"])]).factuality]
        for key in (row["lang"], "all"):
            counts = tally.setdefault(key, [0, 0, 0])
            counts[0] += 1
            counts[1] += alone == row["label"]
            counts[2] += judged == row["label"]
    report = {k: {"pairs": n, "model": a / n, "verifier": v / n} for k, (n, a, v) in sorted(tally.items())}
    print(f"multilingual probe ({path.name}), three-way accuracy, zero-shot:")
    for key, figures in report.items():
        print(
            f"  {key:6} {figures['pairs']:3} pairs: "
            f"model alone {figures['model']:.3f}, verifier {figures['verifier']:.3f}"
        )
    return report


def main(args: argparse.Namespace) -> None:
    given = {"min_relevance": args.min_relevance, "min_coverage": args.min_coverage, "min_shared": args.min_shared}
    options = {k: v for k, v in given.items() if v is not None}
    verifier = NLIVerifier(model=str(args.model), **options)
    print(
        f"model {args.model}, min_relevance {verifier.min_relevance}, min_coverage {verifier.min_coverage}, "
        f"min_shared {verifier.min_shared}"
    )
    probes = args.probes.split(",")
    if "fever-symmetric" in probes:
        fever_symmetric(verifier, args.data)
    if "negation" in probes:
        negation(verifier, args.data, args.model)
    if "general" in probes:
        general(verifier, args.data, args.general, args.seed)
    if "multilingual" in probes:
        multilingual(verifier, args.multilingual or args.data / "multilingual_probe" / "dev.jsonl")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", type=Path, default=SHIPPED_MODEL)
    parser.add_argument("--min-relevance", type=float, default=None, help="default: the verifier's")
    parser.add_argument("--min-coverage", type=float, default=None, help="default: the verifier's")
    parser.add_argument("--min-shared", type=int, default=None, help="default: the verifier's")
    parser.add_argument("--probes", default="fever-symmetric,negation,general")
    parser.add_argument("--general", type=int, default=300)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--data", type=Path, default=DATA)
    parser.add_argument(
        "--multilingual", type=Path, help="another file of the probe's design (default: multilingual_probe/dev.jsonl)"
    )
    main(parser.parse_args())
