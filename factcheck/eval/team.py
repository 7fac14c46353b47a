"""The team's shape, from labelled recorded judgments: PAMAS topology adaptation (papers/000, eq. 10-13).

Each agent's prediction vector ``v_i`` over the labelled claims is +1 where it said TRUE, -1 where it
said FALSE and 0 where it abstained or was not asked. Agents are compared by the cosine of their vectors.
A team's accuracy is that of its trust-weighted ``pamas`` vote (the ``pamas`` scorer's, TRUE above 0.5;
a claim none of its members voted on counts as wrong). An agent's calls are the share of claims it has a
recorded judgment on: it was asked, and an abstention costs a call too.

- Clusters (eq. 10-11): agglomerative clustering with average linkage (Murtagh & Contreras, as the paper
  cites). The two closest clusters merge while their mean cosine is at least ``threshold`` and the merged
  cluster holds at most ``n_max`` agents. Each cluster's anchor is its best-F1 agent (eq. 10, macro F1
  over TRUE / FALSE, an abstention wrong). The others follow in order of similarity to the anchor.
  Departures: the paper fills a group to ``n_max`` by random sampling, from the nearest cluster when its
  own is too small. Here the order is deterministic and a small cluster stays small, since filling it with
  dissimilar agents would undo the clustering. There is one level, because the decision maker sits right
  above the coordinators, as in the ``pamas`` scorer. The clusters are reported as a ``--groups`` string.
- Redundancy (eq. 12): ``Score_i = [Acc(S) - Acc(S minus i)] - lambda * mean_j cos(v_i, v_j)`` over the
  other members ``j``. An agent with ``Score_i < 0`` is a prune candidate when another member is more
  trusted: pruning keeps the stronger of a redundant pair. Departure: the paper scores each
  coordinator's own group, but the project's vote is flat (every agent its own coordinator under the
  decision maker), so ``S`` is the whole team, the agents whose votes make the verdict.
- Complementarity (eq. 13): ``Gain_i = [Acc(R with i) - Acc(R without i)] - gamma * mean_j cos(v_i, v_j)``
  against the recommended team ``R`` (``j`` in ``R`` other than ``i``). For a member this is the gain of
  keeping it; for an agent left out, the gain of adding it. ``rescues`` counts the claims it got right
  where the vote of the rest of the full team was wrong.
- The recommended team: from the full team, the lowest-scoring prune candidate (eq. 12, recomputed on
  the team as it stands) is dropped while the team's accuracy stays within ``tolerance`` of the full
  team's. Then the left-out agent of highest positive gain (eq. 13), if any, is added back (Algorithm 1:
  prune, then expand). The members are listed in routing order, most trusted first.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from factcheck.eval.metrics import macro_f1
from factcheck.trust import Case, Trust
from factcheck.types import Judgment, Label
from factcheck.vote import pamas_score, parse_groups

KEEP, PRUNE, ADD = "keep", "prune", "add"


@dataclass(frozen=True)
class TeamParams:
    """The knobs of topology adaptation. ``lam`` (eq. 12's lambda) and ``gamma`` (eq. 13's) trade one
    point of accuracy against redundancy: with 0.05, an agent whose vectors agree with its peers' at
    cosine 0.6 must add 3 points to stay. ``threshold`` is the mean cosine at which clusters merge,
    ``n_max`` the largest cluster, and ``tolerance`` how much team accuracy pruning may cost."""

    lam: float = 0.05
    gamma: float = 0.05
    threshold: float = 0.5
    n_max: int = 3
    tolerance: float = 0.01
    weighting: str = "log_odds"
    groups: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {
            "lambda": self.lam,
            "gamma": self.gamma,
            "threshold": self.threshold,
            "n_max": self.n_max,
            "tolerance": self.tolerance,
            "weighting": self.weighting,
            "groups": self.groups,
        }


@dataclass(frozen=True)
class AgentShape:
    """One agent's place in the team. ``redundant_with`` is its most similar more trusted agent (and
    ``similarity`` that cosine), ``score`` its eq. 12 score in the full team, ``gain`` its eq. 13 gain
    against the recommended team, ``calls`` the calls per claim it costs (and pruning it saves)."""

    name: str
    trust: float
    accuracy: float
    f1: float
    calls: float
    cluster: int
    redundant_with: str | None
    similarity: float | None
    score: float
    gain: float
    rescues: int
    prune_candidate: bool
    decision: str

    def to_dict(self) -> dict[str, Any]:
        return {
            "trust": round(self.trust, 6),
            "accuracy": round(self.accuracy, 6),
            "f1": round(self.f1, 6),
            "calls_per_claim": round(self.calls, 6),
            "cluster": self.cluster,
            "redundant_with": self.redundant_with,
            "similarity": None if self.similarity is None else round(self.similarity, 6),
            "score": round(self.score, 6),
            "gain": round(self.gain, 6),
            "rescues": self.rescues,
            "prune_candidate": self.prune_candidate,
            "decision": self.decision,
        }


@dataclass(frozen=True)
class TeamShape:
    """The team's shape on ``claims`` labelled claims: the agents (first seen first), their cosine
    similarities, the clusters (anchor first), and the recommended team in routing order, with the
    accuracy and calls per claim of the full and the recommended team, measured on the same claims."""

    agents: tuple[AgentShape, ...]
    similarity: Mapping[str, Mapping[str, float]]
    clusters: tuple[tuple[str, ...], ...]
    recommended: tuple[str, ...]
    claims: int
    accuracy: float
    recommended_accuracy: float
    calls: float
    recommended_calls: float
    params: TeamParams = field(default_factory=TeamParams)

    @property
    def groups(self) -> str:
        """The clusters as ``pamas`` coordinator groups (``--groups``, ``-o groups=...``)."""
        return ";".join(f"c{n}={','.join(members)}" for n, members in enumerate(self.clusters, 1))

    @property
    def prune_candidates(self) -> tuple[AgentShape, ...]:
        return tuple(a for a in self.agents if a.prune_candidate)

    def to_dict(self) -> dict[str, Any]:
        """The trust file's ``"team"`` object (:func:`factcheck.trust.recommended_agents` reads it)."""
        return {
            "recommended": list(self.recommended),
            "claims": self.claims,
            "accuracy": {"full": round(self.accuracy, 6), "recommended": round(self.recommended_accuracy, 6)},
            "calls_per_claim": {"full": round(self.calls, 6), "recommended": round(self.recommended_calls, 6)},
            "clusters": [list(c) for c in self.clusters],
            "groups": self.groups,
            "agents": {a.name: a.to_dict() for a in self.agents},
            "similarity": {a: {b: round(v, 6) for b, v in row.items()} for a, row in self.similarity.items()},
            "params": self.params.to_dict(),
        }


def agents_of(cases: Sequence[Case]) -> tuple[str, ...]:
    """Every agent judging in ``cases``, in the order first seen."""
    seen: dict[str, None] = {}
    for _, judgments, _ in cases:
        seen.update((j.agent, None) for j in judgments)
    return tuple(seen)


def prediction_vector(cases: Sequence[Case], agent: str) -> tuple[int, ...]:
    """``agent``'s predictions over ``cases``: +1 TRUE, -1 FALSE, 0 abstained or not asked."""
    vector = []
    for _, judgments, _ in cases:
        verdict = next((j.factuality for j in judgments if j.agent == agent and j.factuality is not None), None)
        vector.append(0 if verdict is None else 1 if verdict else -1)
    return tuple(vector)


def cosine(u: Sequence[int], v: Sequence[int]) -> float:
    """The cosine of two prediction vectors (0 when either is all zeros)."""
    norm = math.sqrt(sum(x * x for x in u) * sum(y * y for y in v))
    return sum(x * y for x, y in zip(u, v, strict=True)) / norm if norm else 0.0


def team_votes(judgments: Sequence[Judgment], team: Sequence[str]) -> list[Judgment]:
    """The verdicts (abstentions left out) of ``team``'s members among a claim's judgments."""
    members = set(team)
    return [j for j in judgments if j.agent in members and j.factuality is not None]


def calls_per_claim(cases: Sequence[Case], team: Sequence[str]) -> float:
    """Agent calls per claim of ``team``: its members' recorded judgments (an abstention is a call too)."""
    members = set(team)
    return sum(sum(j.agent in members for j in judgments) for _, judgments, _ in cases) / len(cases) if cases else 0.0


class TeamScorer:
    """Scores sub-teams of an agent set on labelled claims with the trust-weighted ``pamas`` vote."""

    def __init__(self, cases: Sequence[Case], weights: Mapping[str, float], groups: str = "") -> None:
        self.cases = list(cases)
        self.weights = dict(weights)
        self.groups = parse_groups(groups)
        self._right: dict[frozenset[str], tuple[bool, ...]] = {}

    def right(self, team: Sequence[str]) -> tuple[bool, ...]:
        """Per claim, whether ``team``'s vote gets it right (no member voted: wrong)."""
        key = frozenset(team)
        if key not in self._right:
            self._right[key] = tuple(self._claim_right(judgments, key, truth) for _, judgments, truth in self.cases)
        return self._right[key]

    def _claim_right(self, judgments: Sequence[Judgment], team: frozenset[str], truth: bool) -> bool:
        votes = team_votes(judgments, tuple(team))
        return bool(votes) and (pamas_score(votes, self.weights, self.groups, False) > 0.5) == truth

    def accuracy(self, team: Sequence[str]) -> float:
        right = self.right(team)
        return sum(right) / len(right) if right else 0.0


def cluster(
    agents: Sequence[str], similarity: Mapping[str, Mapping[str, float]], f1: Mapping[str, float], params: TeamParams
) -> tuple[tuple[str, ...], ...]:
    """Average-linkage clusters of ``agents`` (eq. 10-11, with the departures of the module docstring),
    each anchor first (best F1, then first seen), then by similarity to the anchor; clusters in the order
    of their anchors' F1."""
    groups = [[a] for a in agents]

    def linkage(x: list[str], y: list[str]) -> float:
        return sum(similarity[a][b] for a in x for b in y) / (len(x) * len(y))

    while True:
        pairs = [
            (linkage(groups[i], groups[k]), i, k)
            for i in range(len(groups))
            for k in range(i + 1, len(groups))
            if len(groups[i]) + len(groups[k]) <= params.n_max
        ]
        best = max(pairs, key=lambda p: (p[0], -p[1], -p[2]), default=None)
        if best is None or best[0] < params.threshold:
            break
        _, i, k = best
        groups[i] += groups.pop(k)
    order = {a: n for n, a in enumerate(agents)}
    ranked = []
    for members in groups:
        anchor = max(members, key=lambda a: (f1[a], -order[a]))
        rest = sorted((a for a in members if a != anchor), key=lambda a: (-similarity[anchor][a], order[a]))
        ranked.append((anchor, *rest))
    return tuple(sorted(ranked, key=lambda c: (-f1[c[0]], order[c[0]])))


def routing_order(agents: Sequence[str], weights: Mapping[str, float]) -> tuple[str, ...]:
    """Most trusted first; among equals, the given order (as trust routing orders them)."""
    return tuple(sorted(agents, key=lambda a: -weights.get(a, 1.0)))


def _mean_similarity(agent: str, others: Sequence[str], similarity: Mapping[str, Mapping[str, float]]) -> float:
    return sum(similarity[agent][o] for o in others) / len(others) if others else 0.0


def marginal(agent: str, team: Sequence[str], scorer: TeamScorer) -> float:
    """``Acc(team with agent) - Acc(team without agent)``."""
    without = [a for a in team if a != agent]
    return scorer.accuracy([*without, agent]) - scorer.accuracy(without)


def redundancy_score(
    agent: str, team: Sequence[str], scorer: TeamScorer, similarity: Mapping[str, Mapping[str, float]], lam: float
) -> float:
    """PAMAS eq. 12 of a member of ``team``: its marginal accuracy less ``lam`` times its mean cosine with
    the other members."""
    others = [a for a in team if a != agent]
    return marginal(agent, team, scorer) - lam * _mean_similarity(agent, others, similarity)


def prune_candidates(
    team: Sequence[str], scorer: TeamScorer, similarity: Mapping[str, Mapping[str, float]], params: TeamParams
) -> list[tuple[float, str]]:
    """``(eq. 12 score, agent)`` of the members with a negative score that a more trusted member
    outranks (the first in routing order is never one), lowest score first."""
    ranked = routing_order(team, scorer.weights)
    found = []
    for agent in ranked[1:]:
        score = redundancy_score(agent, team, scorer, similarity, params.lam)
        if score < 0:
            found.append((score, agent))
    return sorted(found, key=lambda row: (row[0], ranked.index(row[1])))


def recommend(
    agents: Sequence[str], scorer: TeamScorer, similarity: Mapping[str, Mapping[str, float]], params: TeamParams
) -> tuple[tuple[str, ...], str | None]:
    """The recommended team (module docstring), in the agents' order, and the agent expansion added back
    (``None``: none had a positive gain)."""
    floor = scorer.accuracy(agents) - params.tolerance - 1e-12
    team = list(agents)
    while len(team) > 1:
        affordable = [
            agent
            for _, agent in prune_candidates(team, scorer, similarity, params)
            if scorer.accuracy([m for m in team if m != agent]) >= floor
        ]
        if not affordable:
            break
        team.remove(affordable[0])
    gains = [(complementarity(a, team, scorer, similarity, params.gamma), a) for a in agents if a not in team]
    best = max(gains, key=lambda g: (g[0], -agents.index(g[1])), default=None)
    added = best[1] if best is not None and best[0] > 0 else None
    return tuple(a for a in agents if a in team or a == added), added


def complementarity(
    agent: str, team: Sequence[str], scorer: TeamScorer, similarity: Mapping[str, Mapping[str, float]], gamma: float
) -> float:
    """PAMAS eq. 13 of ``agent`` against ``team`` (the agent itself left out of it): the accuracy it adds
    less ``gamma`` times its mean cosine with the team's other members."""
    base = [a for a in team if a != agent]
    return marginal(agent, [*base, agent], scorer) - gamma * _mean_similarity(agent, base, similarity)


def team_shape(cases: Sequence[Case], trust: Trust, params: TeamParams | None = None) -> TeamShape:
    """The team's shape on labelled claims (``factcheck.trust.claim_cases`` rows), trust from ``trust``."""
    params = params or TeamParams()
    agents = agents_of(cases)
    weights = {a: trust.weight(a, params.weighting) for a in agents}
    vectors = {a: prediction_vector(cases, a) for a in agents}
    similarity = {a: {b: cosine(vectors[a], vectors[b]) for b in agents if b != a} for a in agents}
    gold = [Label.TRUE if truth else Label.FALSE for _, _, truth in cases]
    predicted = {a: [{1: Label.TRUE, -1: Label.FALSE}.get(x, Label.UNVERIFIED) for x in vectors[a]] for a in agents}
    f1 = {a: macro_f1(gold, predicted[a], (Label.TRUE, Label.FALSE)) for a in agents}
    scorer = TeamScorer(cases, weights, params.groups)
    clusters = cluster(agents, similarity, f1, params)
    recommended, added = recommend(agents, scorer, similarity, params)
    ranked = routing_order(agents, weights)
    candidates = {a for _, a in prune_candidates(agents, scorer, similarity, params)}
    shapes = []
    for agent in agents:
        ahead = ranked[: ranked.index(agent)]
        closest = max(ahead, key=lambda a: similarity[agent][a], default=None)
        others = [a for a in agents if a != agent]
        rest_right = scorer.right(others)
        shapes.append(
            AgentShape(
                name=agent,
                trust=weights[agent],
                accuracy=sum(p == g for p, g in zip(predicted[agent], gold, strict=True)) / len(gold) if gold else 0.0,
                f1=f1[agent],
                calls=calls_per_claim(cases, [agent]),
                cluster=next(n for n, c in enumerate(clusters, 1) if agent in c),
                redundant_with=closest,
                similarity=None if closest is None else similarity[agent][closest],
                score=redundancy_score(agent, agents, scorer, similarity, params.lam),
                gain=complementarity(agent, recommended, scorer, similarity, params.gamma),
                rescues=sum(p == g and not r for p, g, r in zip(predicted[agent], gold, rest_right, strict=True)),
                prune_candidate=agent in candidates,
                decision=ADD if agent == added else KEEP if agent in recommended else PRUNE,
            )
        )
    return TeamShape(
        agents=tuple(shapes),
        similarity=similarity,
        clusters=clusters,
        recommended=routing_order(recommended, weights),
        claims=len(cases),
        accuracy=scorer.accuracy(agents),
        recommended_accuracy=scorer.accuracy(recommended),
        calls=calls_per_claim(cases, agents),
        recommended_calls=calls_per_claim(cases, recommended),
        params=params,
    )
