"""Measure the experience memory offline, with simulated corrections (docs/learning.md).

SciFact's labelled train claims the shipped NLI model trained on are "corrected earlier": their gold labels go
into a memory (as ``factcheck memory import`` puts an eval run's labels). The claims checked later are the
model's held-out train claims (``scifact-heldout``, the tuning set) and the 188 SciFact dev claims
(``scifact-dev``, never tuned on). Each later claim is checked by the offline default (the ``corpus`` agent),
then with the ``memory`` agent added, then with a poisoned memory (``--poison`` of the earlier labels flipped,
seeded): accuracy, the share of claims a precedent lent a verdict to, and how accurate those verdicts were.

``tune`` chooses the precedent verifier's options on the train claims alone: the earlier claims split in two
halves (seeded), one half remembered and the other checked, sweeping ``min_similarity``, ``min_relation`` and
``negation_weight``; the best net vote (right minus wrong precedent verdicts) is taken, the more accurate on a
tie.

    python scripts/measure_memory.py tune
    python scripts/measure_memory.py measure --set scifact-heldout --set scifact-dev
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import json
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from factcheck.build import build_checker
from factcheck.eval.metrics import accuracy, bootstrap_ci
from factcheck.memory.precedent import PrecedentVerifier, relations
from factcheck.memory.source import MemorySource
from factcheck.memory.store import Correction, MemoryStore
from factcheck.precedents import precedent_of
from factcheck.types import Claim, Label
from factcheck.verifiers.nli import REFUTES, SHIPPED_MODEL, load_model

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "scripts"))
from measure_deliberation import DATA, claims_of  # noqa: E402
from train_offline_nli import heldout_groups, read_jsonl  # noqa: E402


def earlier_claims(data: Path) -> list[tuple[str, bool]]:
    """The labelled SciFact train claims the shipped model trained on (not its held-out slice)."""
    config = json.loads((ROOT / "factcheck" / "data" / "nli" / "nli.json").read_text(encoding="utf-8"))
    hyper = config["hyperparameters"]
    held = heldout_groups(data, hyper["holdout"], random.Random(hyper["seed"]))
    return [
        (str(r["claim"]), r["label"] == "SUPPORT")
        for r in read_jsonl(data / "scifact" / "claims_train.jsonl")
        if f"scifact-{r['id']}" not in held and r["label"] != "NOT_ENOUGH_INFO"
    ]


def remember(path: Path, claims: list[tuple[str, bool]], poison: float, seed: int) -> int:
    """Write ``claims`` with their gold labels into a fresh memory at ``path``, ``poison`` of them flipped."""
    rng = random.Random(seed)
    flipped = set(rng.sample(range(len(claims)), round(poison * len(claims))))
    store = MemoryStore(path)
    store.add_many(
        [
            Correction(text, "TRUE" if (truth != (i in flipped)) else "FALSE", "gold:scifact-train", "import")
            for i, (text, truth) in enumerate(claims)
        ]
    )
    return len(flipped)


def tune(args: argparse.Namespace) -> None:
    claims = earlier_claims(args.data)
    random.Random(args.seed).shuffle(claims)
    half = len(claims) // 2
    remembered, checked = claims[:half], claims[half:]
    rows = []
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "memory.sqlite"
        remember(path, remembered, 0.0, args.seed)
        source = MemorySource(path=str(path))
        found = [asyncio.run(source.retrieve(Claim(f"c{i}", text))) for i, (text, _) in enumerate(checked)]
        labelled = [[(e, case[1]) for e in evidence if (case := precedent_of(e))] for evidence in found]
        for negation_weight in (0.5, 0.8, 1.0):
            # The relations are read once per weight; the thresholds only choose among them (the verifier's rule).
            read = [
                relations(text, precedents, negation_weight) if precedents else []
                for (text, _), precedents in zip(checked, labelled, strict=True)
            ]
            for min_similarity, min_relation in itertools.product((0.6, 0.7, 0.8), (0.5, 0.6, 0.7)):
                verifier = PrecedentVerifier(min_similarity=min_similarity, min_relation=min_relation)
                lent = [
                    (lending[0].verdict, truth)
                    for relation, (_, truth) in zip(read, checked, strict=True)
                    if (lending := verifier.lending(relation))
                ]
                right = sum(v == t for v, t in lent)
                rows.append((min_similarity, min_relation, negation_weight, len(lent), right, 2 * right - len(lent)))
    rows.sort()
    copied = {}
    for floor in (0.7, 0.8, 0.9):  # the label of the closest past claim at least this close, copied
        pairs = [
            (max(r, key=lambda x: x.similarity).ruled, truth)
            for r, (_, truth) in zip(read, checked, strict=True)
            if r and max(x.similarity for x in r) >= floor
        ]
        copied[floor] = (len(pairs), sum(v == t for v, t in pairs))
    print(f"tune: {len(remembered)} train claims remembered, {len(checked)} checked (seed {args.seed})")
    print("min_similarity  min_relation  negation_weight  lent   accuracy  net")
    for ms, mr, nw, lent_n, right, net in rows:
        acc = right / lent_n if lent_n else 0.0
        print(f"{ms:14.2f}  {mr:12.2f}  {nw:15.2f}  {lent_n / len(checked):5.1%}  {acc:8.3f}  {net:+4d}")
    model = load_model(SHIPPED_MODEL)
    itself = model.probabilities([(text, text) for text, _ in checked]).argmax(axis=1)
    refuted = int((itself == REFUTES).sum())
    print(f"the NLI model reads {refuted} of {len(checked)} checked claims against themselves as REFUTES")
    for floor, (n, right) in copied.items():
        print(
            f"copy the closest past claim's label at similarity >= {floor}: lent {n / len(checked):.1%}, "
            f"accuracy {right / n if n else 0:.3f}"
        )
    best = max(rows, key=lambda r: (r[5], r[4] / r[3] if r[3] else 0.0))  # the best net vote; ties: more accurate
    print(f"best net vote: min_similarity={best[0]}, min_relation={best[1]}, negation_weight={best[2]}")


def paired_difference(a: list[bool], b: list[bool], resamples: int = 1000, seed: int = 0) -> tuple[float, float]:
    """95% percentile bootstrap interval of accuracy(b) - accuracy(a), the same claims resampled for both."""
    rng, n, values = random.Random(seed), len(a), []
    for _ in range(resamples):
        idx = [rng.randrange(n) for _ in range(n)]
        values.append(sum(b[i] - a[i] for i in idx) / n)
    values.sort()
    return values[int(0.025 * resamples)], values[int(0.975 * resamples) - 1]


def run(checker: Any, later: list[tuple[str, bool]]) -> dict[str, Any]:
    gold, predicted, lent, lent_right, seconds = [], [], 0, 0, []
    for i, (text, truth) in enumerate(later):
        start = time.perf_counter()
        verdict = checker.check(text, claims=[Claim(f"c{i}", text)])
        seconds.append(time.perf_counter() - start)
        claim = verdict.claims[0]
        gold.append(Label.TRUE if truth else Label.FALSE)
        predicted.append(claim.label)
        memory = next((j for j in claim.judgments if j.agent == "memory"), None)
        if memory is not None and memory.factuality is not None:
            lent += 1
            lent_right += memory.factuality == truth
    low, high = bootstrap_ci(gold, predicted, accuracy)
    return {
        "claims": len(later),
        "accuracy": round(accuracy(gold, predicted), 4),
        "ci": [round(low, 4), round(high, 4)],
        "right": [g == p for g, p in zip(gold, predicted, strict=True)],
        "unverified": round(sum(p is Label.UNVERIFIED for p in predicted) / len(predicted), 4),
        "precedent_share": round(lent / len(later), 4),
        "precedent_accuracy": round(lent_right / lent, 4) if lent else None,
        "median_ms": round(statistics.median(seconds) * 1000),
    }


def measure(args: argparse.Namespace) -> None:
    earlier = earlier_claims(args.data)
    cache = {"path": str(args.cache)}  # the corpus agent's judgments are reused across the runs; memory's never
    results: dict[str, dict[str, Any]] = {}
    with tempfile.TemporaryDirectory() as folder:
        clean, poisoned = Path(folder) / "memory.sqlite", Path(folder) / "poisoned.sqlite"
        remember(clean, earlier, 0.0, args.seed)
        flipped = remember(poisoned, earlier, args.poison, args.seed)
        print(f"memory: {len(earlier)} SciFact train claims corrected earlier ({flipped} flipped in the poisoned one)")
        for name in args.sets:
            later = [(text, label is Label.TRUE) for text, label in claims_of(name, args.data)][: args.limit]
            base: list[bool] = []
            for run_name, memory in (("no memory", None), ("memory", clean), ("poisoned memory", poisoned)):
                checker = build_checker(
                    cache=cache, memory={"path": str(memory)} if memory else None, scorer="mafc", labels="threshold"
                )
                row = run(checker, later)
                base = base or row["right"]
                low, high = paired_difference(base, row["right"])
                results[f"{name} / {run_name}"] = {**row, "difference_ci": [round(low, 4), round(high, 4)]}
                share, lent_accuracy = row["precedent_share"], row["precedent_accuracy"]
                print(
                    f"  {name:16} {run_name:16} acc {row['accuracy']:.3f} [{row['ci'][0]:.3f}, {row['ci'][1]:.3f}]  "
                    f"against no memory [{low:+.3f}, {high:+.3f}]  UNVERIFIED {row['unverified']:.1%}  "
                    f"precedent lent {share:.1%}, accurate {'-' if lent_accuracy is None else f'{lent_accuracy:.3f}'}  "
                    f"median {row['median_ms']} ms",
                    flush=True,
                )
    if args.out is not None:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(results, indent=1) + "\n", encoding="utf-8")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("mode", choices=("tune", "measure"))
    parser.add_argument("--set", dest="sets", action="append", default=[])
    parser.add_argument("--data", type=Path, default=DATA)
    parser.add_argument("--poison", type=float, default=0.2, help="share of the remembered labels flipped")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--limit", type=int, default=None)
    parser.add_argument("--cache", type=Path, default=ROOT / "build" / "memory-measure-cache.sqlite")
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args(argv)
    args.sets = args.sets or ["scifact-heldout", "scifact-dev"]
    tune(args) if args.mode == "tune" else measure(args)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
