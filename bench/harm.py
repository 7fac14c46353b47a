"""The harm report (issue 39): how often the offline default accuses a true claim or accepts a false one.

Each claim is checked end to end, one claim a text, as ``factcheck check`` checks it on the offline default
(hybrid retrieval over the shipped corpus, the ``nli`` verifier, MAFC, the ``compose`` label rule), with the
judgment cache off. Per set it prints, over the claims with a gold TRUE or FALSE label
(:mod:`factcheck.eval.harm`):

- coverage (claims given TRUE or FALSE), selective accuracy (of those, the share right),
- false accusation (gold TRUE labelled FALSE, over gold TRUE), myth acceptance (gold FALSE labelled TRUE, over
  gold FALSE), and the count of strong wrong verdicts;
- and the median time per claim.

Sets (``--sets``, comma list):

- ``probe-held-out``, ``probe-calibration``: the halves of ``bench/probes/biomed-harm.jsonl`` (established
  biomedical facts, myths and reversals, with sources); the decision rule was fitted on the calibration half;
- ``scifact-dev``: the 188 SciFact dev claims with a SUPPORT or CONTRADICT verdict;
- ``scifact-train-held``: the SciFact train claims ``scripts/train_offline_nli.py`` never trains on (part of
  the calibration split);
- ``check-covid-dev``: Check-COVID dev claims (SUPPORT / REFUTE) against the pre-COVID corpus (calibration);
- ``general``: held-out VitaminC and Fool Me Twice claims outside biomedicine: the share left UNVERIFIED.

``--deliberation lase`` (or ``ecmr``) runs the same checks with that policy at its defaults, and adds its agent
calls per claim. ``--out DIR`` keeps each set's records (``DIR/SET-POLICY.jsonl``, as ``factcheck eval`` records
checks, so ``factcheck calibrate`` reads them); a rerun finding the same claims there reads them instead of
checking again. The risk-coverage picture of ``docs/harm.md`` is drawn by ``scripts/fit_risk.py --plot``.

    python bench/harm.py [--sets probe-held-out,scifact-dev] [--deliberation lase] [--out build/harm]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import statistics
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "scripts"))  # the loaders the rule was fitted with, so both read the same claims

from fit_risk import covid_dev, probe_claims  # noqa: E402
from train_offline_nli import heldout_groups, read_jsonl  # noqa: E402
from tune_nli import general_claims  # noqa: E402
from tune_relevance import scifact_dev  # noqa: E402

from factcheck import Claim, Label, TextVerdict  # noqa: E402
from factcheck.build import build_checker  # noqa: E402
from factcheck.eval.harm import HarmFigures, Outcome, harm_figures  # noqa: E402
from factcheck.paths import shared_data_dir  # noqa: E402
from factcheck.verifiers.nli import SHIPPED_MODEL  # noqa: E402

SETS = ("probe-held-out", "probe-calibration", "scifact-dev", "scifact-train-held", "check-covid-dev", "general")
Gold = list[tuple[str, bool | None]]


def claims_of(name: str, data: Path) -> Gold:
    """The claims of set ``name`` with their gold truth (None: no gold, outside the corpus's domain)."""
    config = json.loads((SHIPPED_MODEL / "nli.json").read_text(encoding="utf-8"))
    seed, share = config["hyperparameters"]["seed"], config["hyperparameters"]["holdout"]
    if name.startswith("probe-"):
        return list(probe_claims(name.removeprefix("probe-")))
    if name == "scifact-dev":
        return [(c, bool(g)) for c, g in scifact_dev(data)]
    if name == "scifact-train-held":
        held = heldout_groups(data, share, random.Random(seed))
        return [
            (str(r["claim"]), r["label"] == "SUPPORT")
            for r in read_jsonl(data / "scifact" / "claims_train.jsonl")
            if f"scifact-{r['id']}" in held and r["label"] != "NOT_ENOUGH_INFO"
        ]
    if name == "check-covid-dev":
        return list(covid_dev(data))
    if name == "general":
        return [(c, None) for c in general_claims(data, seed, 0.08, 300)]
    raise SystemExit(f"unknown set {name!r}: one of {', '.join(SETS)}")


async def check_all(claims: Gold, deliberation: str, concurrency: int) -> list[tuple[TextVerdict, float]]:
    """Each claim checked as a text of its own (the claim given, no extraction), with its wall time."""
    checker = build_checker(profile="offline", deliberation=deliberation, cache={"enabled": False})
    limit = asyncio.Semaphore(concurrency)

    async def one(text: str) -> tuple[TextVerdict, float]:
        async with limit:
            started = time.perf_counter()
            verdict = await checker.acheck(text, [Claim("c1", text)])
            return verdict, time.perf_counter() - started

    return list(await asyncio.gather(*(one(text) for text, _ in claims)))


def records(name: str, claims: Gold, args: argparse.Namespace) -> list[dict[str, Any]]:
    """The set's checked claims, read from ``--out`` when a run with the same settings left them there."""
    path = args.out / f"{name}-{args.deliberation}.jsonl" if args.out else None
    if path is not None and path.exists():
        lines = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
        if len(lines) == len(claims) and [r["claims"][0]["text"] for r in lines] == [c for c, _ in claims]:
            return lines
    checked = asyncio.run(check_all(claims, args.deliberation, args.concurrency))
    rows = [
        record(f"{name}-{i}", gold, verdict, seconds)
        for i, ((_, gold), (verdict, seconds)) in enumerate(zip(claims, checked, strict=True))
    ]
    if path is not None:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return rows


def record(item: str, gold: bool | None, verdict: TextVerdict, seconds: float) -> dict[str, Any]:
    """One checked claim as ``factcheck eval`` records it (the project's JSON with ``id`` and ``gold``, the
    claim's gold too), so that ``factcheck calibrate`` reads it; and its wall time."""
    label = None if gold is None else ("TRUE" if gold else "FALSE")
    data = {"id": item, "gold": label, **verdict.to_dict(), "seconds": seconds}
    data["claims"][0]["gold"] = label
    return data


def outcome(row: dict[str, Any]) -> Outcome:
    claim = row["claims"][0]
    return Outcome(row["gold"] == "TRUE", Label.parse(claim["label"]), claim["strength"])


def agent_calls(row: dict[str, Any]) -> int:
    """Agent calls spent on the claim: the first round's and deliberation's (``usage.calls``)."""
    calls = row["usage"].get("calls", {})
    return sum(n for key, n in calls.items() if key.startswith(("verifier:", "source:")))


def table(results: dict[str, tuple[HarmFigures | None, list[dict[str, Any]]]], deliberation: str) -> None:
    head = "| set | claims | coverage | selective accuracy | false accusation | myth acceptance | strong wrong "
    head += "| UNVERIFIED | median ms | agent calls / claim |"
    print(f"deliberation: {deliberation}\n")
    print(head)
    print("|" + "---|" * (head.count("|") - 1))
    for name, (figures, rows) in results.items():
        unverified = sum(r["claims"][0]["label"] == "UNVERIFIED" for r in rows) / len(rows)
        median = statistics.median(r["seconds"] for r in rows) * 1000
        calls = statistics.fmean(agent_calls(r) for r in rows)
        if figures is None:
            cells = ["", "", "", "", ""]
        else:
            cells = [
                f"{figures.coverage:.3f}",
                f"{figures.selective_accuracy:.3f} ({figures.right}/{figures.answered})",
                f"{figures.false_accusation:.3f} ({figures.accused}/{figures.gold_true})",
                f"{figures.myth_acceptance:.3f} ({figures.accepted}/{figures.gold_false})",
                str(figures.strong_wrong),
            ]
        print(f"| {name} | {len(rows)} | " + " | ".join(cells) + f" | {unverified:.1%} | {median:.0f} | {calls:.2f} |")


def main(args: argparse.Namespace) -> None:
    data = args.data or shared_data_dir()
    if data is None or not (data / "scifact").is_dir():
        raise SystemExit("the shared data folder is needed: give it with --data")
    results: dict[str, tuple[HarmFigures | None, list[dict[str, Any]]]] = {}
    for name in args.sets.split(","):
        claims = claims_of(name, data)
        rows = records(name, claims, args)
        gold = [r for r in rows if r["gold"] is not None]
        results[name] = (harm_figures(map(outcome, gold)) if gold else None, rows)
    table(results, args.deliberation)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sets", default="probe-held-out,scifact-dev")
    parser.add_argument("--deliberation", default="off", help="deliberation policy: off, lase, ecmr")
    parser.add_argument("--data", type=Path, default=None, help="the shared data folder (default: ../shared/data)")
    parser.add_argument("--concurrency", type=int, default=2)
    parser.add_argument("--out", type=Path, default=None, help="keep each set's records here, and reuse them")
    main(parser.parse_args())
