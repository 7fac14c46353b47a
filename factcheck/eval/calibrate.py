"""Calibration, what ``factcheck calibrate`` runs (its command: :mod:`factcheck.cli.calibrate`): learn agent
trust from labelled, recorded judgments, and cross-validate it so nobody fools themselves.

With ``--gate`` it also fits the deliberation gate's confidence threshold per policy (``lase``:
``tau_conf``, or ``tau_lp`` where the leaders' verifiers measured their answer's probability; ``ecmr``:
``tau_confidence``) from the records' first round: the smallest share of claims
deliberated at which the claims the gate stops reach ``--target`` accuracy, at most ``--max-share``. The
thresholds go into the trust file as an optional ``"gate"`` object (:func:`factcheck.trust.gate_thresholds`
reads them; :meth:`factcheck.trust.Trust.from_dict` reads only ``agents``, so older readers ignore it).
The replay functions here (:func:`gate_cases`, :func:`replay_gate`) are also ``bench/deliberation.py``'s.

``--epochs N --update errors`` learns the eq. 15 weights by PAMAS's targeted correction (Algorithm 1):
over ``N`` passes, only where the team was wrong (:func:`factcheck.trust.fit_trust`). With ``--cv`` the
one-pass fit is reported beside it, on the same folds. The team's shape (:mod:`factcheck.eval.team`: clusters,
redundancy, complementarity, the recommended agents) is always printed and written into the trust file as
its ``"team"`` object. With ``--cv``, the recommended team, chosen on the training folds only, is scored
against the full team on the held-out folds (:func:`cross_validate_team`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from factcheck.deliberation.lase import LASE
from factcheck.deliberation.state import state_of
from factcheck.errors import ConfigError
from factcheck.eval.metrics import accuracy, bootstrap_ci
from factcheck.eval.team import (
    TeamParams,
    agents_of,
    calls_per_claim,
    team_shape,
    team_votes,
)
from factcheck.plugin import Deliberator, Scorer
from factcheck.plugin.deliberator import ARBITER
from factcheck.scoring.mafc import MAFCScorer
from factcheck.trust import (
    Case,
    claim_cases,
    fold_of_records,
    learn_trust,
)
from factcheck.types import ClaimVerdict, JudgedBy, Judgment, Label, TextVerdict
from factcheck.vote import pamas_score, parse_groups

Score = tuple[float, tuple[float, float]]  # a held-out accuracy and its bootstrap CI


def learning_name(epochs: int, update: str) -> str:
    """How a trust fit learned its eq. 15 weights, for row names and table headers."""
    if (epochs, update) == (1, "all"):
        return "one pass"
    how = "errors-only" if update == "errors" else "every sample"
    return f"{how}, {epochs} epoch{'s' if epochs != 1 else ''}"


def cross_validate(
    records: Sequence[Mapping[str, Any]],
    folds: int,
    *,
    weighting: str,
    groups: str,
    rate: float = 0.1,
    seed: int = 0,
    epochs: int = 1,
    update: str = "all",
) -> dict[str, Score]:
    """Held-out claim accuracy (with a bootstrap CI) of MAFC and of ``pamas`` with trust learned on the other folds.

    Trust is learned in one pass (``learn_trust``'s default). With ``epochs`` / ``update`` other than one
    pass over every sample, eq. 15 trust learned that way is scored too, as ``pamas (pamas, <how>)``, with
    the one-pass eq. 15 row beside it (``pamas (pamas)`` or ``pamas (pamas, one pass)``): on the same folds."""
    fold_of = fold_of_records(len(records), folds, seed)
    cases = claim_cases(records)
    mafc = MAFCScorer()
    learned = (epochs, update) != (1, "all")
    one_pass = f"pamas ({weighting})"
    rows: dict[str, str] = {one_pass: weighting}  # pamas row -> the weighting it reads
    if learned and weighting != "pamas":
        rows["pamas (pamas, one pass)"] = "pamas"
    predicted: dict[str, list[Label]] = {"mafc": [], **{name: [] for name in rows}}
    if learned:
        predicted[f"pamas (pamas, {learning_name(epochs, update)})"] = []
    gold: list[Label] = []
    for fold in range(folds):
        training = [r for i, r in enumerate(records) if fold_of[i] != fold]
        trust = learn_trust(training, rate=rate)
        fitted = (
            learn_trust(training, rate=rate, epochs=epochs, update=update, seed=seed, groups=groups)
            if learned
            else trust
        )
        for index, judgments, truth in cases:
            if fold_of[index] != fold:
                continue
            votes = [j for j in judgments if j.factuality is not None]
            gold.append(Label.TRUE if truth else Label.FALSE)
            if not votes:
                for labels in predicted.values():
                    labels.append(Label.UNVERIFIED)
                continue
            scores = {"mafc": mafc.score_votes(votes)}
            for name, weights_by in rows.items():
                weights = {j.agent: trust.weight(j.agent, weights_by) for j in votes}
                scores[name] = pamas_score(votes, weights, parse_groups(groups), False)
            if learned:
                weights = {j.agent: fitted.weight(j.agent, "pamas") for j in votes}
                scores[f"pamas (pamas, {learning_name(epochs, update)})"] = pamas_score(
                    votes, weights, parse_groups(groups), False
                )
            for name, score in scores.items():
                predicted[name].append(Label.TRUE if score > 0.5 else Label.FALSE)
    return {name: (accuracy(gold, p), bootstrap_ci(gold, p, accuracy)) for name, p in predicted.items()}


@dataclass(frozen=True)
class TeamValidation:
    """The full and the recommended team on held-out folds: accuracy with its bootstrap CI, agent calls
    per claim, and the team each fold's training claims recommended (routing order)."""

    full: Score
    recommended: Score
    full_calls: float
    recommended_calls: float
    teams: tuple[tuple[str, ...], ...]

    def to_dict(self) -> dict[str, Any]:
        def row(score: Score, calls: float) -> dict[str, Any]:
            value, (low, high) = score
            return {"accuracy": round(value, 6), "ci": [round(low, 6), round(high, 6)], "calls_per_claim": calls}

        return {
            "folds": len(self.teams),
            "full": row(self.full, round(self.full_calls, 6)),
            "recommended": row(self.recommended, round(self.recommended_calls, 6)),
            "teams": [list(t) for t in self.teams],
        }


def _team_label(
    judgments: Sequence[Judgment], team: Sequence[str], weights: Mapping[str, float], groups: Mapping[str, str]
) -> Label:
    """The label ``team``'s ``pamas`` vote gives a claim (UNVERIFIED where no member voted)."""
    votes = team_votes(judgments, team)
    if not votes:
        return Label.UNVERIFIED
    return Label.TRUE if pamas_score(votes, weights, groups, False) > 0.5 else Label.FALSE


def cross_validate_team(
    records: Sequence[Mapping[str, Any]],
    folds: int,
    *,
    params: TeamParams,
    rate: float = 0.1,
    seed: int = 0,
    epochs: int = 1,
    update: str = "all",
) -> TeamValidation:
    """The recommended team against the full team, on the folds of :func:`cross_validate`: in each fold,
    trust and the team's shape come from the other folds only, and both teams' ``pamas`` votes (trust
    ``params.weighting``, groups ``params.groups``) are scored on the held-out claims, with their calls."""
    fold_of = fold_of_records(len(records), folds, seed)
    cases = claim_cases(records)
    everyone = agents_of(cases)
    gold: list[Label] = []
    full: list[Label] = []
    pruned: list[Label] = []
    full_calls = recommended_calls = 0.0
    teams = []
    for fold in range(folds):
        training = [r for i, r in enumerate(records) if fold_of[i] != fold]
        trust = learn_trust(training, rate=rate, epochs=epochs, update=update, seed=seed, groups=params.groups)
        shape = team_shape(claim_cases(training), trust, params)
        teams.append(shape.recommended)
        held_out: list[Case] = [c for c in cases if fold_of[c[0]] == fold]
        weights = {a: trust.weight(a, params.weighting) for a in everyone}
        for _, judgments, truth in held_out:
            gold.append(Label.TRUE if truth else Label.FALSE)
            full.append(_team_label(judgments, everyone, weights, parse_groups(params.groups)))
            pruned.append(_team_label(judgments, shape.recommended, weights, parse_groups(params.groups)))
        full_calls += calls_per_claim(held_out, everyone) * len(held_out)
        recommended_calls += calls_per_claim(held_out, shape.recommended) * len(held_out)
    n = len(gold) or 1
    return TeamValidation(
        (accuracy(gold, full), bootstrap_ci(gold, full, accuracy)),
        (accuracy(gold, pruned), bootstrap_ci(gold, pruned, accuracy)),
        full_calls / n,
        recommended_calls / n,
        tuple(teams),
    )


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
