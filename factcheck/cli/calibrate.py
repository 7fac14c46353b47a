"""``factcheck calibrate``: the command, and the tables it prints. The calibration itself (trust, the team's
shape, the gate's thresholds, cross-validation) is :mod:`factcheck.eval.calibrate`'s."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import click
from rich.console import Console
from rich.table import Table

from factcheck.cli.flags import HelpOption
from factcheck.errors import InputError
from factcheck.eval.calibrate import (
    DEFAULT_MAX_SHARE,
    DEFAULT_TARGET,
    GATE_OPTIONS,
    NO_EVIDENCE_NOTE,
    GateCase,
    TeamValidation,
    cross_validate,
    cross_validate_team,
    fit_gate,
    gate_cases,
    gate_object,
    gate_option,
    has_evidence,
    learning_name,
    reliability,
)
from factcheck.eval.team import TeamParams, TeamShape, team_shape
from factcheck.jsonl import read_records
from factcheck.scoring.pamas import DEFAULT_GROUPS
from factcheck.text import plural
from factcheck.trust import GATE, TEAM, UPDATES, WEIGHTINGS, Trust, TrustFit, claim_cases, fit_trust


def _pct(value: float | None) -> str:
    return "-" if value is None else f"{value:.3f}"


def _print_gate(
    console: Console, records: Sequence[Mapping[str, Any]], trust: Trust, weighting: str, target: float, share: float
) -> dict[str, Any]:
    """Fit every built-in policy's gate threshold; print the reliability table and the sweeps; the gate object."""
    from factcheck.registry import get_deliberators

    cases = gate_cases(records)
    if not cases:
        raise InputError("no claims with a TRUE / FALSE gold label to fit the gate on")

    def alpha_of(case: GateCase) -> dict[str, float]:
        return {a: trust.weight(a, weighting) for a in case.agents}

    table = Table(title=f"leader's confidence against accuracy ({plural(len(cases), 'claim')}, first round)")
    for column in ("confidence", "claims", "leader accuracy", "first-round accuracy (mafc)"):
        table.add_column(column)
    for low, high, n, lead, pooled in reliability(cases, alpha_of):
        if n:
            table.add_row(f"[{low:.1f}, {high:.1f}{']' if high >= 1 else ')'}", str(n), _pct(lead), _pct(pooled))
    console.print(table)
    if not has_evidence(cases):
        console.print(f"note: {NO_EVIDENCE_NOTE}")
    policies = get_deliberators()
    fits = []
    for name in GATE_OPTIONS:
        option = gate_option(name, cases)
        if name not in policies or option is None:
            continue
        fit = fit_gate(cases, policies[name], option, alpha_of, target=target, max_share=share)
        fits.append(fit)
        others = ", ".join(f"{k}={v:g}" for k, v in fit.alone.items())
        sweep = Table(title=f"{name}: {option} sweep ({others or 'other options at their defaults'})")
        for column in (option, "deliberated", "stopped", "stopped accuracy", "sent-on accuracy"):
            sweep.add_column(column)
        for value, outcome in fit.sweep:
            sweep.add_row(
                f"{value:.2f}",
                f"{outcome.share:.1%}",
                str(outcome.stopped),
                _pct(outcome.stopped_accuracy),
                _pct(outcome.sent_accuracy),
            )
        console.print(sweep)
        if fit.reached:
            verdict = "reached"
        elif fit.outcome.share > share:
            verdict = "NOT reached: its other triggers alone send more than the cap; the smallest share taken"
        else:
            verdict = "NOT reached: the most accurate stop within the cap taken"
        console.print(
            f"{name}: {option} = {fit.value:.2f}: {fit.outcome.share:.1%} deliberated, the claims it stops "
            f"{_pct(fit.outcome.stopped_accuracy)} accurate (first round, all claims "
            f"{fit.outcome.accuracy:.3f}); target {target:g} within {share:.0%} {verdict}"
        )
    return gate_object(fits, target=target, max_share=share, weighting=weighting, claims=len(cases))


def _print_trust(console: Console, fit: TrustFit, records: int, out: Path, epochs: int, update: str) -> None:
    """The trust table, and what the passes of a learner other than the one-pass fit did."""
    trust = fit.trust
    how = learning_name(epochs, update)
    table = Table(title=f"trust from {plural(records, 'text')} -> {out}")
    for column in ("agent", "judged", "accuracy", "abstention", "log_odds", f"pamas (eq. 15, {how})"):
        table.add_column(column)
    for name, t in trust.agents.items():
        table.add_row(
            name, str(t.judged), f"{t.accuracy:.3f}", f"{t.abstention:.1%}", f"{t.log_odds:.3f}", f"{t.pamas:.3f}"
        )
    console.print(table)
    if (epochs, update) != (1, "all"):
        console.print(
            f"eq. 15 {how}: the team was wrong on {', '.join(map(str, fit.errors))} of {plural(fit.claims, 'claim')}, "
            f"pass by pass; {sum(fit.updates)} weight updates"
        )


def _print_team(console: Console, shape: TeamShape) -> None:
    """The team's shape: the agents' table, the clusters, the prune candidates and the recommended team."""
    p = shape.params
    agents = Table(
        title=f"team shape on {plural(shape.claims, 'claim')} (clusters: mean cosine >= {p.threshold:g}, <= {p.n_max})"
    )
    for column in ("agent", "trust", "F1", "calls/claim", "cluster", "closest more trusted", "cosine"):
        agents.add_column(column)
    for a in shape.agents:
        cos = "-" if a.similarity is None else f"{a.similarity:.3f}"
        agents.add_row(
            a.name, f"{a.trust:.3f}", f"{a.f1:.3f}", f"{a.calls:.2f}", str(a.cluster), a.redundant_with or "-", cos
        )
    console.print(agents)
    adapt = Table(title=f"eq. 12-13: lambda {p.lam:g}, gamma {p.gamma:g}, tolerance {p.tolerance:g}")
    for column in ("agent", "eq. 12 score", "eq. 13 gain", "rescues", "team"):
        adapt.add_column(column)
    for a in shape.agents:
        adapt.add_row(a.name, f"{a.score:+.3f}", f"{a.gain:+.3f}", str(a.rescues), a.decision)
    console.print(adapt)
    console.print("rescues: the claims an agent got right where the vote of the rest of the team was wrong")
    clusters = " ".join(f"[{', '.join(c)}]" for c in shape.clusters)
    console.print(f"clusters (eq. 10-11, anchor first): {clusters}; as --groups: {shape.groups}", markup=False)
    candidates = ", ".join(f"{a.name} (saves {a.calls:.2f} calls/claim)" for a in shape.prune_candidates)
    console.print(f"prune candidates (eq. 12 < 0): {candidates or 'none'}", markup=False)
    console.print(
        f"recommended team (routing order): {', '.join(shape.recommended)}: accuracy "
        f"{shape.recommended_accuracy:.3f} against {shape.accuracy:.3f} for the full team, "
        f"{shape.recommended_calls:.2f} against {shape.calls:.2f} calls per claim (in-sample)",
        markup=False,
    )


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
@click.option(
    "--epochs",
    type=click.IntRange(min=1),
    default=1,
    show_default=True,
    help="Passes of eq. 15 over the samples (the first in file order, the others shuffled, seeded).",
)
@click.option(
    "--update",
    type=click.Choice(UPDATES),
    default="all",
    show_default=True,
    help="Which samples move the eq. 15 weights: all, or errors (only where the trust-weighted team vote was "
    "wrong: PAMAS's targeted correction). With --cv the one-pass fit is reported beside it.",
)
@click.option("--cv", type=click.IntRange(min=2), help="Also report K-fold cross-validated accuracy.")
@click.option(
    "--weighting",
    type=click.Choice(WEIGHTINGS),
    default="log_odds",
    show_default=True,
    help="Agent weight used by --cv's pamas, --gate's states and the team's shape: log_odds (log of the accuracy "
    "odds) or pamas (PAMAS eq. 15).",
)
@click.option(
    "--groups",
    cls=HelpOption,
    default=DEFAULT_GROUPS,
    default_text=DEFAULT_GROUPS or "every agent its own coordinator",
    help="pamas coordinator groups for --cv, the team vote --update errors corrects and the team's shape, e.g. "
    "retrieval=web,wikipedia;model=selfcheck.",
)
@click.option(
    "--lambda",
    "lam",
    type=click.FloatRange(min=0),
    default=TeamParams.lam,
    show_default=True,
    help="Team shape: PAMAS eq. 12's redundancy penalty (accuracy an agent must add per unit of cosine).",
)
@click.option(
    "--gamma",
    type=click.FloatRange(min=0),
    default=TeamParams.gamma,
    show_default=True,
    help="Team shape: PAMAS eq. 13's similarity penalty on an agent's gain.",
)
@click.option(
    "--cluster-similarity",
    type=click.FloatRange(-1, 1),
    default=TeamParams.threshold,
    show_default=True,
    help="Team shape: the mean cosine of prediction vectors at which clusters merge (eq. 10-11).",
)
@click.option(
    "--group-size",
    type=click.IntRange(min=1),
    default=TeamParams.n_max,
    show_default=True,
    help="Team shape: the largest cluster (eq. 11's n_max).",
)
@click.option(
    "--prune-tolerance",
    type=click.FloatRange(0, 1),
    default=TeamParams.tolerance,
    show_default=True,
    help="Team shape: how much team accuracy the recommended team may lose against the full team.",
)
@click.option(
    "--gate",
    is_flag=True,
    help="Also fit the deliberation gates' confidence thresholds (lase tau_conf, or tau_lp where the verifiers "
    "measured lp_min; ecmr tau_confidence) on the records' first round and write them into the trust file.",
)
@click.option(
    "--target",
    type=click.FloatRange(0, 1),
    default=DEFAULT_TARGET,
    show_default=True,
    help="--gate: the accuracy the claims a gate stops after the first round must reach.",
)
@click.option(
    "--max-share",
    type=click.FloatRange(0, 1),
    default=DEFAULT_MAX_SHARE,
    show_default=True,
    help="--gate: the largest share of claims a gate may send on to deliberation.",
)
def calibrate(
    judgments: str,
    out: Path,
    rate: float,
    epochs: int,
    update: str,
    cv: int | None,
    weighting: str,
    groups: str,
    lam: float,
    gamma: float,
    cluster_similarity: float,
    group_size: int,
    prune_tolerance: float,
    gate: bool,
    target: float,
    max_share: float,
) -> None:
    """Learn each agent's trust from labelled recorded checks (each line's `gold`, or a claim's own),
    report the team's shape and write the recommended agents (--agents recommended); with --gate, also
    fit the deliberation gates' thresholds."""
    records = [r for _, r in read_records(judgments)]
    fit = fit_trust(records, rate=rate, epochs=epochs, update=update, groups=groups)
    trust = fit.trust
    if not trust.agents:
        raise InputError(f"{judgments}: no judgments of claims with a TRUE / FALSE gold label")
    console = Console()
    _print_trust(console, fit, len(records), out, epochs, update)
    params = TeamParams(lam, gamma, cluster_similarity, group_size, prune_tolerance, weighting, groups)
    shape = team_shape(claim_cases(records), trust, params)
    _print_team(console, shape)
    extra: dict[str, Any] = {TEAM: shape.to_dict()}
    if gate:
        fitted = _print_gate(console, records, trust, weighting, target, max_share)
        extra[GATE] = fitted
        thresholds = "; ".join(
            f"{name} " + ", ".join(f"{k}={v:g}" for k, v in policy["options"].items())
            for name, policy in fitted["policies"].items()
        )
        console.print(f"gate thresholds -> {out}: {thresholds or 'none'}")
    if cv:
        for name, (value, (low, high)) in cross_validate(
            records, cv, weighting=weighting, groups=groups, rate=rate, epochs=epochs, update=update
        ).items():
            console.print(f"{cv}-fold cross-validated accuracy, {name}: {value:.3f} [{low:.3f}, {high:.3f}]")
        validation = cross_validate_team(records, cv, params=params, rate=rate, epochs=epochs, update=update)
        _print_team_validation(console, cv, validation, weighting)
        extra[TEAM] = {**extra[TEAM], "cross_validated": validation.to_dict()}
    trust.save(out, extra=extra)
    console.print(f"recommended team -> {out}: {', '.join(shape.recommended)} (use --agents recommended)", markup=False)
    kept = sorted(set(json.loads(out.read_text(encoding="utf-8"))) - {"schema", "agents", *extra})
    if kept:
        console.print(
            f"kept from the earlier {out}: {', '.join(kept)} (not refitted here; --gate refits the gate)", markup=False
        )


def _print_team_validation(console: Console, folds: int, validation: TeamValidation, weighting: str) -> None:
    chosen: dict[tuple[str, ...], int] = {}
    for team in validation.teams:
        chosen[team] = chosen.get(team, 0) + 1
    picks = "; ".join(f"{', '.join(team)} in {n} of {folds}" for team, n in chosen.items())
    for name, (value, (low, high)), calls in (
        (f"full team, pamas ({weighting})", validation.full, validation.full_calls),
        (f"recommended team, pamas ({weighting})", validation.recommended, validation.recommended_calls),
    ):
        console.print(
            f"{folds}-fold cross-validated accuracy, {name}: {value:.3f} [{low:.3f}, {high:.3f}], "
            f"{calls:.2f} calls per claim"
        )
    console.print(f"recommended teams, chosen on each fold's training claims: {picks}", markup=False)
