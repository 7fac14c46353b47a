"""``factcheck calibrate``: learn agent trust from labelled, recorded judgments, and
cross-validate it so nobody fools themselves."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import click
from rich.console import Console
from rich.table import Table

from factcheck.cli.flags import HelpOption
from factcheck.errors import InputError
from factcheck.eval.metrics import accuracy, bootstrap_ci
from factcheck.jsonl import read_records
from factcheck.plugins.hookspecs import hookimpl
from factcheck.scoring.mafc import MAFCScorer
from factcheck.scoring.pamas import DEFAULT_GROUPS, pamas_score, parse_groups
from factcheck.trust import WEIGHTINGS, claim_cases, fold_of_records, learn_trust
from factcheck.types import Label


def cross_validate(
    records: Sequence[Mapping[str, Any]],
    folds: int,
    *,
    weighting: str,
    groups: str,
    rate: float = 0.1,
    seed: int = 0,
) -> dict[str, tuple[float, tuple[float, float]]]:
    """Held-out claim accuracy (with a bootstrap CI) of MAFC and of ``pamas`` with trust learned on the other folds."""
    fold_of = fold_of_records(len(records), folds, seed)
    cases = claim_cases(records)
    mafc = MAFCScorer()
    predicted: dict[str, list[Label]] = {"mafc": [], f"pamas ({weighting})": []}
    gold: list[Label] = []
    for fold in range(folds):
        trust = learn_trust([r for i, r in enumerate(records) if fold_of[i] != fold], rate=rate)
        for index, judgments, truth in cases:
            if fold_of[index] != fold:
                continue
            votes = [j for j in judgments if j.factuality is not None]
            gold.append(Label.TRUE if truth else Label.FALSE)
            if not votes:
                for labels in predicted.values():
                    labels.append(Label.UNVERIFIED)
                continue
            weights = {j.agent: trust.weight(j.agent, weighting) for j in votes}
            for name, score in (
                ("mafc", mafc.score_votes(votes)),
                (f"pamas ({weighting})", pamas_score(votes, weights, parse_groups(groups), False)),
            ):
                predicted[name].append(Label.TRUE if score > 0.5 else Label.FALSE)
    return {name: (accuracy(gold, p), bootstrap_ci(gold, p, accuracy)) for name, p in predicted.items()}


@click.command(short_help="Learn each agent's trust from labelled recorded checks.")
@click.argument("judgments", metavar="JUDGMENTS.jsonl")
@click.option(
    "--out",
    type=click.Path(dir_okay=False, path_type=Path),
    default="trust.json",
    show_default=True,
    help="Where to write the trust file (for --trust, or -o trust=FILE).",
)
@click.option("--rate", type=click.FloatRange(0, 1), default=0.1, show_default=True, help="PAMAS eq. 15 learning rate.")
@click.option("--cv", type=click.IntRange(min=2), help="Also report K-fold cross-validated accuracy.")
@click.option(
    "--weighting",
    type=click.Choice(WEIGHTINGS),
    default="log_odds",
    show_default=True,
    help="Agent weight used by --cv's pamas: log_odds (log of the accuracy odds) or pamas (PAMAS eq. 15).",
)
@click.option(
    "--groups",
    cls=HelpOption,
    default=DEFAULT_GROUPS,
    default_text=DEFAULT_GROUPS or "every agent its own coordinator",
    help="pamas coordinator groups for --cv, e.g. retrieval=web,wikipedia;model=selfcheck.",
)
def calibrate(judgments: str, out: Path, rate: float, cv: int | None, weighting: str, groups: str) -> None:
    """Learn each agent's trust from labelled recorded checks (each line's `gold`, or a claim's own)."""
    records = [r for _, r in read_records(judgments)]
    trust = learn_trust(records, rate=rate)
    if not trust.agents:
        raise InputError(f"{judgments}: no judgments of claims with a TRUE / FALSE gold label")
    trust.save(out)
    table = Table(title=f"trust from {len(records)} texts -> {out}")
    for column in ("agent", "judged", "accuracy", "abstention", "log_odds", "pamas (eq. 15)"):
        table.add_column(column)
    for name, t in trust.agents.items():
        table.add_row(
            name, str(t.judged), f"{t.accuracy:.3f}", f"{t.abstention:.1%}", f"{t.log_odds:.3f}", f"{t.pamas:.3f}"
        )
    console = Console()
    console.print(table)
    if cv:
        for name, (value, (low, high)) in cross_validate(
            records, cv, weighting=weighting, groups=groups, rate=rate
        ).items():
            console.print(f"{cv}-fold cross-validated accuracy, {name}: {value:.3f} [{low:.3f}, {high:.3f}]")


@hookimpl
def register_commands(register: Callable[[Any], None]) -> None:
    register(calibrate)
