"""Measure deliberation policies offline, side by side: accuracy, macro-F1, the share deliberated, the agent
calls and passages read per claim, and time per claim (docs/deliberation.md).

Every policy runs on the same claims with the same agents, each in a checker of its own with no cache (so a
judgment reused from an earlier policy never hides its cost). Sets:

- ``scifact-heldout``: the SciFact train claims the shipped model never trained on (its held-out slice,
  found again from nli.json's seed), against the shipped corpus: the set policies are tuned on;
- ``scifact-dev``: the 188 SciFact dev claims of the MAFC authors (``scifact-binary``): the evaluation set,
  never tuned on;
- ``check-covid-dev`` / ``check-covid-test``: Check-COVID claims against Check-COVID's own 347 abstracts
  (``python scripts/build_eval_corpus.py`` writes them);
- ``fever``: 300 FEVER claims (SufficientFacts, never trained on) against their pooled gold Wikipedia
  sentences (``python scripts/build_eval_corpus.py --set fever``).

Setups are bench/deliberation.toml's: ``single`` (the offline default's one agent), ``duo`` (hybrid top 3 and
BM25 top 5, both ``nli``), ``trio`` (duo and a ``lexical`` agent), ``control`` (duo with top_k doubled).

    python scripts/measure_deliberation.py --set scifact-heldout --setup duo \\
        --policy off --policy ecmr --policy "ecmr:always=true" --policy lase --policy "lase:round0=all"
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import sys
import time
from pathlib import Path
from typing import Any

from factcheck.agent import Agent
from factcheck.build import build_checker
from factcheck.eval.datasets import load_dataset
from factcheck.eval.metrics import accuracy, macro_f1
from factcheck.pipeline import Checker
from factcheck.registry import get_registry
from factcheck.types import Claim, Label

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT.parent / "shared" / "data"
COVID_CORPUS = ROOT / "build" / "check-covid-corpus.jsonl"
FEVER_CORPUS, FEVER_CLAIMS = ROOT / "build" / "fever-corpus.jsonl", ROOT / "build" / "fever-claims.jsonl"


def claims_of(name: str, data: Path) -> list[tuple[str, Label]]:
    """The set's claims with their gold labels (TRUE / FALSE)."""
    if name == "fever":
        rows = [json.loads(line) for line in FEVER_CLAIMS.read_text(encoding="utf-8").splitlines() if line.strip()]
        return [(str(r["claim"]), Label.parse(r["gold"])) for r in rows]
    if name == "scifact-heldout":
        sys.path.insert(0, str(ROOT / "scripts"))
        from train_offline_nli import heldout_groups, read_jsonl

        config = json.loads((ROOT / "factcheck" / "data" / "nli" / "nli.json").read_text(encoding="utf-8"))
        hyper = config["hyperparameters"]
        held = heldout_groups(data, hyper["holdout"], random.Random(hyper["seed"]))
        rows = read_jsonl(data / "scifact" / "claims_train.jsonl")
        return [
            (str(r["claim"]), Label.TRUE if r["label"] == "SUPPORT" else Label.FALSE)
            for r in rows
            if f"scifact-{r['id']}" in held and r["label"] != "NOT_ENOUGH_INFO"
        ]
    dataset = (
        load_dataset("scifact-binary", data)
        if name == "scifact-dev"
        else load_dataset("check-covid", data, split=name.removeprefix("check-covid-"))
    )
    return [(item.claims[0].text, item.gold) for item in dataset.items if len(item.claims) == 1]


def agents(setup: str, corpus: str | None) -> list[Agent]:
    registry = get_registry()
    source = registry.get("sources", "corpus").configure(**({"path": corpus} if corpus else {}))
    nli = registry.get("verifiers", "nli")
    k = 2 if setup == "control" else 1
    chosen = [Agent("corpus", source.configure(top_k=3 * k), nli)]
    if setup != "single":
        chosen.append(Agent("corpus_bm25", source.configure(retrieval="bm25", top_k=5 * k), nli))
    if setup == "trio":
        chosen.append(Agent("lex", source, registry.get("verifiers", "lexical")))
    return chosen


def policy_of(spec: str) -> Any:
    name, _, options = spec.partition(":")
    pairs = dict(kv.split("=", 1) for kv in options.split(";") if kv)
    return get_registry().get("deliberators", name).configure(**pairs)


def measure(checker: Checker, claims: list[tuple[str, Label]], records: list[dict[str, Any]]) -> dict[str, Any]:
    """One policy over ``claims``; each checked claim is added to ``records`` (its verdict's JSON and gold)."""
    gold, predicted, calls, passages, seconds, deliberated, steps = [], [], [], [], [], 0, []
    for i, (text, label) in enumerate(claims):
        start = time.perf_counter()
        verdict = checker.check(text, claims=[Claim(f"c{i}", text)])
        seconds.append(time.perf_counter() - start)
        gold.append(label)
        predicted.append(verdict.claims[0].label)
        records.append({**verdict.to_dict(), "gold": str(label)})
        usage = verdict.usage.calls
        calls.append(sum(n for key, n in usage.items() if key.startswith(("source:", "verifier:"))))
        passages.append(usage.get("nli:pairs", 0))
        record = verdict.claims[0].deliberation
        deliberated += int(record is not None and record.gated is not None)
        steps.append(len(record.steps) if record is not None else 0)
    classes = (Label.TRUE, Label.FALSE)
    return {
        "claims": len(claims),
        "accuracy": round(accuracy(gold, predicted), 4),
        "macro_f1": round(macro_f1(gold, predicted, classes), 4),
        "unverified": round(sum(p is Label.UNVERIFIED for p in predicted) / len(predicted), 4),
        "deliberated": round(deliberated / len(claims), 4),
        "agent_calls": round(statistics.fmean(calls), 3),
        "passages": round(statistics.fmean(passages), 1),
        "steps": round(statistics.fmean(steps), 2),
        "median_ms": round(statistics.median(seconds) * 1000),
        "p95_ms": round(sorted(seconds)[int(0.95 * (len(seconds) - 1))] * 1000),
        "labels": [str(p) for p in predicted],
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--set", default="scifact-heldout", dest="name")
    parser.add_argument("--setup", default="duo", choices=("single", "duo", "trio", "control"))
    parser.add_argument("--policy", action="append", default=[])
    parser.add_argument("--data", type=Path, default=DATA)
    parser.add_argument("--limit", type=int, default=None)
    parser.add_argument("--out", type=Path, default=None, help="write every row (with its labels) as JSON")
    parser.add_argument(
        "--records",
        type=Path,
        default=None,
        help="a folder for each policy's checked claims as JSON lines (what `factcheck calibrate` reads)",
    )
    args = parser.parse_args(argv)
    claims = claims_of(args.name, args.data)[: args.limit]
    corpus = {"fever": str(FEVER_CORPUS)}.get(
        args.name, str(COVID_CORPUS) if args.name.startswith("check-covid") else None
    )
    rows = {}
    print(f"{args.name}: {len(claims)} claims, setup {args.setup}")
    for spec in args.policy or ["off"]:
        checker = build_checker(
            agents=agents(args.setup, corpus),
            cache={"enabled": False},
            scorer="mafc",
            labels="threshold",
            deliberation=policy_of(spec),
        )
        records: list[dict[str, Any]] = []
        row = measure(checker, claims, records)
        rows[spec] = row
        if args.records is not None:
            args.records.mkdir(parents=True, exist_ok=True)
            lines = "".join(json.dumps(r) + "\n" for r in records)
            stem = f"{args.name}-{args.setup}-{spec.replace(':', '-').replace(';', '-')}"
            (args.records / f"{stem}.jsonl").write_text(lines, encoding="utf-8")
        print(
            f"  {spec:44} acc {row['accuracy']:.3f}  F1 {row['macro_f1']:.3f}  UNVERIFIED {row['unverified']:.1%}  "
            f"deliberated {row['deliberated']:.1%}  agent calls {row['agent_calls']:.2f}  "
            f"passages {row['passages']:.1f}  median {row['median_ms']} ms (p95 {row['p95_ms']})",
            flush=True,
        )
    if args.out is not None:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps({"set": args.name, "setup": args.setup, "rows": rows}, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
