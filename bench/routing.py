"""Replay benchmark of the routing policies: accuracy against agent calls per claim.

Every policy is replayed over recorded judgments (:func:`factcheck.routing.simulate`),
so no agent is called and every policy sees the same answers; only which of them
it collects differs. Each claim is scored with the MAFC scorer over the
judgments the policy collected (TRUE if the score > 0.5) and compared with its
gold label. Trust (for ``trust`` routing, ``gated`` weights and the ``pamas``
scorer) is learned with K-fold cross-validation over texts, so the trust never
sees the claims it is scored on.

Default input: the MAFC authors' recorded judgments on SciFact (188 claims,
agents Google, Wikipedia, LLM), read straight from ``../shared/data``. With
``--judgments DIR/judgments.jsonl`` (from ``factcheck eval ... --out DIR``) it
replays those instead; the offline profile has one agent, so every policy asks
it and routing changes nothing there.

    python bench/routing.py [--data ../shared/data] [--judgments FILE] [--out bench/out]
"""

from __future__ import annotations

import argparse
import json
import shlex
import sys
import tempfile
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from factcheck import get_scorers
from factcheck.eval.mafc import judged_records
from factcheck.eval.metrics import accuracy, bootstrap_ci
from factcheck.plugin import Scorer
from factcheck.routing import AllAgents, GatedRouting, RoutingPolicy, TrustRouting, simulate
from factcheck.scoring.mafc import MAFCScorer
from factcheck.trust import Trust, claim_cases, fold_of_records, learn_trust
from factcheck.types import Judgment, Label

TAUS = (0.5, 0.6, 0.7, 0.8, 0.9, 0.95, 1.0)
# The paper's agents: the LLM agent needs no search, Wikipedia's search is free, Google's is paid.
DEFAULT_COSTS = "LLM=1,Wikipedia=2,Google=3"


@dataclass(frozen=True)
class Case:
    """One labelled claim: the record it came from, every agent's recorded judgment, its gold label."""

    record: int
    judgments: Mapping[str, Judgment]
    gold: Label


@dataclass(frozen=True)
class Row:
    """One line of the table (and one point of the plot)."""

    name: str
    accuracy: float
    ci: tuple[float, float]
    calls: float
    cost: float


def cases_of(records: Sequence[Mapping[str, Any]]) -> list[Case]:
    """Every claim with a TRUE / FALSE gold, as :func:`factcheck.trust.claim_cases` finds them."""
    return [
        Case(index, {j.agent: j for j in judgments}, Label.TRUE if truth else Label.FALSE)
        for index, judgments, truth in claim_cases(records)
    ]


def replay(
    name: str,
    cases: Sequence[Case],
    fold: Sequence[int],
    folds: int,
    make: Callable[[Trust], tuple[RoutingPolicy, Scorer]],
    train: Callable[[int], Trust],
    costs: Mapping[str, float],
) -> Row:
    """Route and score every case with the policy and scorer ``make`` builds from its fold's trust."""
    gold: list[Label] = []
    predicted: list[Label] = []
    calls = cost = 0.0
    for k in range(folds):
        policy, scorer = make(train(k))
        for case in cases:
            if fold[case.record] != k:
                continue
            asked = simulate(policy, case.judgments)
            calls += len(asked)
            cost += sum(costs.get(j.agent, 1.0) for j in asked)
            score = scorer.score_claim(asked)
            gold.append(case.gold)
            predicted.append(Label.UNVERIFIED if score is None else Label.TRUE if score > 0.5 else Label.FALSE)
    n = len(cases)
    return Row(name, accuracy(gold, predicted), bootstrap_ci(gold, predicted, accuracy), calls / n, cost / n)


def parse_costs(text: str) -> dict[str, float]:
    pairs = [part.partition("=") for part in text.split(",") if part.strip()]
    return {agent.strip(): float(value) for agent, _, value in pairs}


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--data", type=Path, default=Path("../shared/data"), help="shared data folder (MAFC files)")
    parser.add_argument("--judgments", type=Path, help="replay this judgments.jsonl instead of the MAFC authors'")
    parser.add_argument("--out", type=Path, default=Path("bench/out"), help="folder for the plot and the table")
    parser.add_argument("--folds", type=int, default=5)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--costs", default=DEFAULT_COSTS, help="agent=cost,... for gated routing (default: %(default)s)"
    )
    parser.add_argument("--weighting", choices=("log_odds", "pamas"), default="log_odds")
    args = parser.parse_args(argv)

    print("$ " + shlex.join(["python", *sys.argv]) if argv is None else "$ " + shlex.join(["python", *argv]))
    records, source = judged_records(args.judgments or None, args.data)
    cases = cases_of(records)
    agents = list(dict.fromkeys(a for c in cases for a in c.judgments))
    costs = parse_costs(args.costs)
    print(f"data: {source}: {len(cases)} labelled claims, agents {', '.join(agents)}")
    print(f"trust: learned on the other folds ({args.folds}-fold CV by text, seed {args.seed}), {args.weighting}")
    print(f"gated costs: {', '.join(f'{a}={costs.get(a, 1.0):g}' for a in agents)} (unlisted: 1)")
    if len(agents) < 2:
        print("one agent only: every policy asks it, so routing cannot save a call here")

    fold = fold_of_records(len(records), args.folds, args.seed)
    trusts = {
        k: learn_trust([r for i, r in enumerate(records) if fold[i] != k]) for k in range(args.folds)
    }  # one trust per fold, shared by every row
    mafc = MAFCScorer()
    weighting = args.weighting

    def run(name: str, make: Callable[[Trust], tuple[RoutingPolicy, Scorer]]) -> Row:
        return replay(name, cases, fold, args.folds, make, trusts.__getitem__, costs)

    rows = [run("all agents + mafc", lambda t: (AllAgents(), mafc))]
    scorers = get_scorers()
    with tempfile.TemporaryDirectory() as tmp:

        def pamas(trust: Trust) -> Scorer:
            """The pamas scorer reads trust from a file: write this fold's."""
            path = Path(tmp) / f"trust-{id(trust)}.json"
            trust.save(path)
            return scorers["pamas"].configure(trust=str(path), weighting=weighting)

        if "pamas" in scorers:  # another change adds it; skip the rows without it
            rows.append(run(f"all agents + pamas ({weighting})", lambda t: (AllAgents(), pamas(t))))
        rows.append(run("trust routing, equal weights + mafc", lambda t: (TrustRouting(), mafc)))
        rows.append(run(f"trust routing ({weighting}) + mafc", lambda t: (TrustRouting(t, weighting), mafc)))
        if "pamas" in scorers:
            rows.append(run(f"trust routing ({weighting}) + pamas", lambda t: (TrustRouting(t, weighting), pamas(t))))

    def gated_at(tau: float) -> Callable[[Trust], tuple[RoutingPolicy, Scorer]]:
        return lambda trust: (GatedRouting(tau, costs, trust, weighting), mafc)

    gated = [run(f"gated tau={tau:g} + mafc", gated_at(tau)) for tau in TAUS]
    rows.extend(gated)

    print()
    header = f"{'policy':<38} {'accuracy':>8}  {'95% CI':<15} {'calls/claim':>11} {'cost/claim':>10}"
    print(header)
    print("-" * len(header))
    for row in rows:
        ci = f"[{row.ci[0]:.3f}, {row.ci[1]:.3f}]"
        print(f"{row.name:<38} {row.accuracy:>8.3f}  {ci:<15} {row.calls:>11.2f} {row.cost:>10.2f}")

    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "routing.json").write_text(
        json.dumps([row.__dict__ for row in rows], indent=2) + "\n", encoding="utf-8"
    )
    plot(rows, gated, args.out / "routing.png", source)
    print(f"\nwrote {args.out / 'routing.png'} and {args.out / 'routing.json'}")
    return 0


def plot(rows: Sequence[Row], gated: Sequence[Row], path: Path, title: str) -> None:
    """Accuracy (with its 95% CI) against calls per claim: the gated curve and the other policies as points."""
    import matplotlib

    matplotlib.use("Agg")  # no display needed
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 4.5))

    def errors(points: Sequence[Row]) -> list[list[float]]:
        return [[r.accuracy - r.ci[0] for r in points], [r.ci[1] - r.accuracy for r in points]]

    ax.errorbar(
        [r.calls for r in gated], [r.accuracy for r in gated], yerr=errors(gated), marker="o", capsize=3, label="gated"
    )
    for row in gated:
        ax.annotate(row.name.split()[1], (row.calls, row.accuracy), textcoords="offset points", xytext=(4, -10))
    for row in (r for r in rows if r not in gated):
        ax.errorbar(
            [row.calls], [row.accuracy], yerr=errors([row]), marker="s", capsize=3, linestyle="", label=row.name
        )
    ax.set_xlabel("agent calls per claim")
    ax.set_ylabel("accuracy (95% bootstrap CI)")
    ax.set_title(f"Routing: accuracy vs calls\n{title}", fontsize=9)
    ax.legend(fontsize=7, loc="lower right")
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


if __name__ == "__main__":
    raise SystemExit(main())
