"""``factcheck calibrate``: learn agent trust from labelled, recorded judgments, and
cross-validate it so nobody fools themselves.

With ``--gate`` it also fits the deliberation gate's confidence threshold per policy (``lase``:
``tau_conf``, or ``tau_lp`` where the leaders' verifiers measured their answer's probability; ``ecmr``:
``tau_confidence``) from the records' first round: the smallest share of claims
deliberated at which the claims the gate stops reach ``--target`` accuracy, at most ``--max-share``. The
thresholds go into the trust file as an optional ``"gate"`` object (:func:`factcheck.trust.gate_thresholds`
reads them; :meth:`factcheck.trust.Trust.from_dict` reads only ``agents``, so older readers ignore it).
The replay functions here (:func:`gate_cases`, :func:`replay_gate`) are also ``bench/deliberation.py``'s.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import click
from rich.console import Console
from rich.table import Table

from factcheck.cli.flags import HelpOption
from factcheck.deliberation import Deliberator, state_of
from factcheck.deliberation.base import ARBITER
from factcheck.deliberation.lase import LASE
from factcheck.errors import ConfigError, InputError
from factcheck.eval.metrics import accuracy, bootstrap_ci
from factcheck.jsonl import read_records
from factcheck.plugins.hookspecs import hookimpl
from factcheck.scoring.base import Scorer
from factcheck.scoring.mafc import MAFCScorer
from factcheck.scoring.pamas import DEFAULT_GROUPS, pamas_score, parse_groups
from factcheck.trust import GATE, WEIGHTINGS, Trust, claim_cases, fold_of_records, learn_trust
from factcheck.types import ClaimVerdict, JudgedBy, Judgment, Label, TextVerdict


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


# The gate option --gate fits for each built-in policy: its threshold on the leader's confidence. Where the
# leaders' verifiers measured their answer's probability (signal lp_min), LASE's gate reads that first
# (tau_lp) and the verbal fallback rarely decides, so tau_lp is fitted instead (gate_option).
GATE_OPTIONS = {"lase": "tau_conf", "ecmr": "tau_confidence"}
MEASURED_OPTIONS = {"lase": "tau_lp"}
# While one of LASE's certainty thresholds is fitted, its others are off, so the fitted gate reads one signal
# (the paper's tau_h is a token entropy; the nli verifier's is its three classes', which it would send on
# nearly always); they are written into the trust file with it.
FIT_ALONE = {
    ("lase", "tau_lp"): {"tau_h": 10.0, "tau_conf": 0.0},
    ("lase", "tau_conf"): {"tau_lp": 0.0, "tau_h": 10.0},
}
DEFAULT_TARGET = 0.85
DEFAULT_MAX_SHARE = 0.3
GRID = tuple(i / 100 for i in range(101))  # the thresholds a fit sweeps, 0.00 to 1.00
NO_EVIDENCE_NOTE = (
    "these records carry no evidence: independence is unknown (never taken for independent), "
    "so the false-consensus trigger (ECMR's min_independence) cannot fire"
)


@dataclass(frozen=True)
class GateCase:
    """One labelled claim's first round: the record it came from (for folds), the configured agents in
    order, the judgments held after the first round, and whether the claim is TRUE."""

    record: int
    agents: tuple[str, ...]
    judgments: tuple[Judgment, ...]
    truth: bool


@dataclass(frozen=True)
class GateOutcome:
    """What a gate did to a set of claims: how many it sent on past the first round, and how many of the
    claims it stopped (and of those it sent on) the first round's answer got right."""

    name: str
    claims: int
    sent: int
    stopped_correct: int
    sent_correct: int

    @property
    def stopped(self) -> int:
        return self.claims - self.sent

    @property
    def share(self) -> float:
        """The share of claims the gate sent on (deliberated)."""
        return self.sent / self.claims if self.claims else 0.0

    @property
    def stopped_accuracy(self) -> float | None:
        """The first-round accuracy of the claims the gate stopped; ``None`` when it stopped none."""
        return self.stopped_correct / self.stopped if self.stopped else None

    @property
    def sent_accuracy(self) -> float | None:
        """The first-round accuracy of the claims the gate sent on; ``None`` when it sent none."""
        return self.sent_correct / self.sent if self.sent else None

    @property
    def accuracy(self) -> float:
        """The first-round accuracy of every claim (the same scorer, whatever the gate does)."""
        return (self.stopped_correct + self.sent_correct) / self.claims if self.claims else 0.0

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "claims": self.claims,
            "sent": self.sent,
            "share": self.share,
            "stopped_accuracy": self.stopped_accuracy,
            "sent_accuracy": self.sent_accuracy,
            "accuracy": self.accuracy,
        }


@dataclass(frozen=True)
class GateFit:
    """A fitted gate threshold: the policy and option, the value chosen and what it does, whether the
    stopped claims reach the target, and the sweep (one row per distinct outcome, at the smallest
    threshold that gives it; shares rise down the rows)."""

    policy: str
    option: str
    value: float
    outcome: GateOutcome
    reached: bool
    sweep: tuple[tuple[float, GateOutcome], ...]
    alone: Mapping[str, float] = field(default_factory=dict)  # the other thresholds, off while fitting

    def to_dict(self) -> dict[str, Any]:
        return {
            "options": {**self.alone, self.option: self.value},
            "share": round(self.outcome.share, 6),
            "stopped_accuracy": None
            if self.outcome.stopped_accuracy is None
            else round(self.outcome.stopped_accuracy, 6),
            "reached": self.reached,
        }


def first_round(claim: ClaimVerdict) -> tuple[Judgment, ...]:
    """The judgments a claim held after its first round. A deliberated claim's held judgments with each one
    a step took the place of given back (``deliberation.replaced``) and those the steps added (a
    decision-maker's ruling, an agent asked later) left out; a claim without deliberation: its judgments."""
    deliberation = claim.deliberation
    if deliberation is None:
        return claim.judgments
    added = {  # the judgments steps added (not revisions of a first-round one, nor rulings left unapplied)
        ARBITER if s.action == "arbitrate" else s.judgment.agent
        for s in deliberation.steps
        if s.judgment is not None and s.applied and s.error is None and s.replaces is None
    }
    original: dict[str, Judgment] = {}
    for j in deliberation.replaced:
        original.setdefault(j.agent, j)
    held = []
    for j in claim.judgments:
        if j.agent in original:
            held.append(original.pop(j.agent))
        elif j.agent not in added:
            held.append(j)
    return (*held, *original.values())


def _agents_of(judged_by: JudgedBy | None) -> tuple[str, ...]:
    return tuple(a.name for a in judged_by.agents) if judged_by is not None else ()


def gate_cases(records: Sequence[Mapping[str, Any]]) -> list[GateCase]:
    """Every claim with a TRUE / FALSE gold (found as :func:`factcheck.trust.claim_cases` finds them), with
    its first round (:func:`first_round`) and its agents: the record's ``judged_by`` agents, else every agent
    judging in ``records``, in the order first seen."""
    found: list[tuple[int, tuple[str, ...], tuple[Judgment, ...], bool]] = []
    seen: dict[str, None] = {}
    for index, record in enumerate(records):
        verdict = TextVerdict.from_dict(record)
        raw_claims = record.get("claims") or []
        for raw, claim in zip(raw_claims, verdict.claims, strict=True):
            judgments = first_round(claim)
            seen.update((j.agent, None) for j in judgments)
            gold = raw.get("gold") or (record.get("gold") if len(raw_claims) == 1 else None)
            if gold in ("TRUE", "FALSE"):
                found.append((index, _agents_of(verdict.judged_by), judgments, gold == "TRUE"))
    everyone = tuple(seen)
    return [GateCase(index, agents or everyone, judgments, truth) for index, agents, judgments, truth in found]


def has_evidence(cases: Iterable[GateCase]) -> bool:
    """True when some first-round judgment cites evidence (else independence is unknown everywhere)."""
    return any(j.evidence for case in cases for j in case.judgments)


def has_signal(cases: Iterable[GateCase], name: str = "lp_min") -> bool:
    """True when some first-round judgment carries the verifier's signal ``name``."""
    return any(j.signal(name) is not None for case in cases for j in case.judgments)


def gate_option(policy: str, cases: Sequence[GateCase]) -> str | None:
    """The option ``--gate`` fits for ``policy`` on ``cases`` (``None``: a policy it does not fit)."""
    if policy in MEASURED_OPTIONS and has_signal(cases):
        return MEASURED_OPTIONS[policy]
    return GATE_OPTIONS.get(policy)


def leader_for(
    policy: Deliberator, agents: Sequence[str], judgments: Sequence[Judgment], alpha: Mapping[str, float]
) -> str:
    """The leader the pipeline's floor gives the state (``Floor._first_leader``): the policy's ``leader``
    option where it names an agent, else the most trusted agent that gave a verdict (else that answered,
    else any)."""
    if policy.leader and policy.leader in agents:
        return policy.leader
    held = [j.agent for j in judgments]
    voted = [a for a in agents if a in held and any(j.agent == a and not j.abstained for j in judgments)]
    return policy.lead(voted or [a for a in agents if a in held] or list(agents), alpha)


def round0_right(case: GateCase, scorer: Scorer) -> bool:
    """Whether the scorer over the first round's judgments gets the claim right (no verdict: wrong)."""
    score = scorer.score_claim(case.judgments)
    return score is not None and (score > 0.5) == case.truth


AlphaOf = Callable[[GateCase], Mapping[str, float]]


class GateReplay:
    """The first-round states of ``cases`` as ``policy`` reads them (its leader, the trust ``alpha_of`` each
    case gives), computed once, and the scorer's first-round right/wrong: a gate replays over them at any
    threshold without recomputing the states."""

    def __init__(self, cases: Sequence[GateCase], policy: Deliberator, alpha_of: AlphaOf, scorer: Scorer) -> None:
        self.cases = list(cases)
        self.states = []
        for case in self.cases:
            alpha = alpha_of(case)
            leader = leader_for(policy, case.agents, case.judgments, alpha)
            self.states.append(state_of(case.judgments, case.agents, alpha, leader=leader))
        self.right = [round0_right(case, scorer) for case in self.cases]

    def outcome(self, name: str, policy: Deliberator) -> GateOutcome:
        """What ``policy``'s gate (``opening``: ``always`` sends every claim) does to the cases."""
        sent = stopped_correct = sent_correct = 0
        for state, right in zip(self.states, self.right, strict=True):
            if policy.opening(state) is not None:
                sent += 1
                sent_correct += right
            else:
                stopped_correct += right
        return GateOutcome(name, len(self.cases), sent, stopped_correct, sent_correct)


def replay_gate(
    name: str, cases: Sequence[GateCase], policy: Deliberator, alpha_of: AlphaOf, scorer: Scorer | None = None
) -> GateOutcome:
    """Run ``policy``'s gate over every case's first-round state (trust weights from ``alpha_of``); the
    share it sends on and the first-round accuracy (``scorer``, default MAFC) of what it stops."""
    return GateReplay(cases, policy, alpha_of, scorer or MAFCScorer()).outcome(name, policy)


def choose(
    sweep: Sequence[tuple[float, GateOutcome]], target: float, max_share: float
) -> tuple[float, GateOutcome, bool]:
    """The sweep row with the smallest share deliberated whose stopped claims reach ``target`` accuracy, at
    most ``max_share`` deliberated (``True``: reached). Failing that, the row within ``max_share`` whose
    stopped claims are the most accurate (``False``); if none is within it, the smallest share (``False``)."""
    allowed = [(v, o) for v, o in sweep if o.share <= max_share + 1e-12]
    for value, outcome in sorted(allowed, key=lambda row: (row[1].share, row[0])):
        if outcome.stopped_accuracy is not None and outcome.stopped_accuracy >= target:
            return value, outcome, True
    if allowed:
        value, outcome = max(allowed, key=lambda row: (row[1].stopped_accuracy or 0.0, -row[1].share, -row[0]))
        return value, outcome, False
    value, outcome = min(sweep, key=lambda row: (row[1].share, row[0]))
    return value, outcome, False


def fit_gate(
    cases: Sequence[GateCase],
    policy: Deliberator,
    option: str,
    alpha_of: AlphaOf,
    *,
    target: float = DEFAULT_TARGET,
    max_share: float = DEFAULT_MAX_SHARE,
    scorer: Scorer | None = None,
    grid: Sequence[float] = GRID,
) -> GateFit:
    """Fit ``policy``'s gate threshold ``option`` (its other options as they are) over ``grid``: see
    :func:`choose`. The first round is scored with ``scorer`` (default MAFC)."""
    if option not in policy.options():
        raise ConfigError(f"deliberation policy {policy.name!r} has no option {option!r}")
    alone = FIT_ALONE.get((policy.name, option), {})
    policy = policy.configure(**alone)
    replay = GateReplay(cases, policy, alpha_of, scorer or MAFCScorer())
    sweep: list[tuple[float, GateOutcome]] = []
    for value in grid:
        outcome = replay.outcome(f"{policy.name} {option}={value:g}", policy.configure(**{option: value}))
        last = sweep[-1][1] if sweep else None
        if last is None or (outcome.sent, outcome.stopped_correct) != (last.sent, last.stopped_correct):
            sweep.append((value, outcome))
    value, outcome, reached = choose(sweep, target, max_share)
    return GateFit(policy.name, option, value, outcome, reached, tuple(sweep), alone)


def reliability(
    cases: Sequence[GateCase], alpha_of: AlphaOf, scorer: Scorer | None = None, bins: int = 10
) -> list[tuple[float, float, int, float | None, float | None]]:
    """The leader's confidence against accuracy: per confidence bin (``bins`` equal bins of [0, 1], the last
    closed), ``(low, high, claims, the leader's accuracy, the first round's pooled accuracy)``; the leader is
    LASE's (the most trusted agent), an abstention counts as wrong and confidence 0."""
    policy = LASE()
    replay = GateReplay(cases, policy, alpha_of, scorer or MAFCScorer())
    counts = [[0, 0, 0] for _ in range(bins)]  # claims, leader right, pooled right
    for case, state, pooled in zip(replay.cases, replay.states, replay.right, strict=True):
        head = next((j for j in case.judgments if j.agent == state.leader), None)
        leader_right = head is not None and head.factuality is not None and head.factuality == case.truth
        row = counts[min(int(state.leader_confidence * bins), bins - 1)]
        row[0] += 1
        row[1] += leader_right
        row[2] += pooled
    return [
        (i / bins, (i + 1) / bins, n, lead / n if n else None, pool / n if n else None)
        for i, (n, lead, pool) in enumerate(counts)
    ]


def gate_object(
    fits: Sequence[GateFit], *, target: float, max_share: float, weighting: str, claims: int
) -> dict[str, Any]:
    """The trust file's optional ``"gate"`` object (:func:`factcheck.trust.gate_thresholds` reads it)."""
    return {
        "target": target,
        "max_share": max_share,
        "weighting": weighting,
        "scorer": "mafc",
        "claims": claims,
        "policies": {fit.policy: fit.to_dict() for fit in fits},
    }


def _pct(value: float | None) -> str:
    return "-" if value is None else f"{value:.3f}"


def _print_gate(
    console: Console, records: Sequence[Mapping[str, Any]], trust: Trust, weighting: str, target: float, share: float
) -> dict[str, Any]:
    """Fit every built-in policy's gate threshold; print the reliability table and the sweeps; the gate object."""
    from factcheck.plugins.manager import get_deliberators

    cases = gate_cases(records)
    if not cases:
        raise InputError("no claims with a TRUE / FALSE gold label to fit the gate on")

    def alpha_of(case: GateCase) -> dict[str, float]:
        return {a: trust.weight(a, weighting) for a in case.agents}

    table = Table(title=f"leader's confidence against accuracy ({len(cases)} claims, first round)")
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
    help="Agent weight used by --cv's pamas and --gate's states: log_odds (log of the accuracy odds) or pamas "
    "(PAMAS eq. 15).",
)
@click.option(
    "--groups",
    cls=HelpOption,
    default=DEFAULT_GROUPS,
    default_text=DEFAULT_GROUPS or "every agent its own coordinator",
    help="pamas coordinator groups for --cv, e.g. retrieval=web,wikipedia;model=selfcheck.",
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
    cv: int | None,
    weighting: str,
    groups: str,
    gate: bool,
    target: float,
    max_share: float,
) -> None:
    """Learn each agent's trust from labelled recorded checks (each line's `gold`, or a claim's own);
    with --gate, also fit the deliberation gates' thresholds."""
    records = [r for _, r in read_records(judgments)]
    trust = learn_trust(records, rate=rate)
    if not trust.agents:
        raise InputError(f"{judgments}: no judgments of claims with a TRUE / FALSE gold label")
    table = Table(title=f"trust from {len(records)} texts -> {out}")
    for column in ("agent", "judged", "accuracy", "abstention", "log_odds", "pamas (eq. 15)"):
        table.add_column(column)
    for name, t in trust.agents.items():
        table.add_row(
            name, str(t.judged), f"{t.accuracy:.3f}", f"{t.abstention:.1%}", f"{t.log_odds:.3f}", f"{t.pamas:.3f}"
        )
    console = Console()
    console.print(table)
    if not gate:
        trust.save(out)
    else:
        fitted = _print_gate(console, records, trust, weighting, target, max_share)
        out.write_text(json.dumps({**trust.to_dict(), GATE: fitted}, indent=2) + "\n", encoding="utf-8")
        thresholds = "; ".join(
            f"{name} " + ", ".join(f"{k}={v:g}" for k, v in fit["options"].items())
            for name, fit in fitted["policies"].items()
        )
        console.print(f"gate thresholds -> {out}: {thresholds or 'none'}")
    if cv:
        for name, (value, (low, high)) in cross_validate(
            records, cv, weighting=weighting, groups=groups, rate=rate
        ).items():
            console.print(f"{cv}-fold cross-validated accuracy, {name}: {value:.3f} [{low:.3f}, {high:.3f}]")


@hookimpl
def register_commands(register: Callable[[Any], None]) -> None:
    register(calibrate)
