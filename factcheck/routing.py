"""Routing: which agents to ask about a claim, in what order, and when to stop.

A policy sees only the agents' names and an ``ask(name)`` coroutine that returns
that agent's :class:`~factcheck.types.Judgment` of the claim. The live pipeline
passes an ``ask`` that retrieves and judges; :func:`simulate` passes one that
returns recorded judgments, so a benchmark replays exactly the decisions the
pipeline would take. A policy returns the judgments of the agents it asked, in
the order it asked them; agents it did not ask have no judgment (the scorer
sees only the asked ones).

Policies (``routing`` setting):

- ``all``: ask every agent, concurrently (the default; what the paper did).
- ``trust``: PAMAS confidence-guided routing (papers/000, eq. 17-20): the two
  most trusted agents first; more, two at a time, only while they disagree.
- ``gated``: LASE-style confidence-gated escalation (papers/003, eq. 7-8): the
  cheapest agent first; the next cheapest only while the answer so far is not
  confident enough (``tau``).

Trust weights come from a trust file (``factcheck calibrate``); without one
every agent weighs 1, so ``trust`` is then exactly the paper's unweighted rule.
"""

from __future__ import annotations

import asyncio
import math
from abc import ABC, abstractmethod
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from factcheck.errors import ConfigError
from factcheck.options import reject_unknown
from factcheck.trust import WEIGHTINGS, Trust
from factcheck.types import Judgment

Ask = Callable[[str], Awaitable[Judgment]]
ROUTINGS = ("all", "trust", "gated")
ROUTING_OPTIONS = ("tau", "costs", "trust", "weighting")
# Weighted margins are sums of floats: treat anything this close to 0 as a tie.
TIE_EPS = 1e-9


class RoutingPolicy(ABC):
    """Decides which agents answer a claim. Stateless: one instance serves every claim concurrently."""

    name: str

    @abstractmethod
    async def run(self, agents: Sequence[str], ask: Ask) -> list[Judgment]:
        """The judgments of the agents asked, in the order asked (``agents`` is the configured order)."""


def _weights(agents: Sequence[str], trust: Trust | None, weighting: str) -> dict[str, float]:
    return {a: trust.weight(a, weighting) if trust is not None else 1.0 for a in agents}


def weighted_margin(judgments: Sequence[Judgment], weights: Mapping[str, float]) -> float:
    """PAMAS eq. 19 with trust: ``sum alpha_j (2 d_j - 1)`` over the judgments that did not abstain."""
    return sum(weights.get(j.agent, 1.0) * (1.0 if j.factuality else -1.0) for j in judgments if not j.abstained)


def weighted_confidence(judgments: Sequence[Judgment], weights: Mapping[str, float]) -> float:
    """The trust-weighted mean signed score ``sum alpha_j w_j / sum alpha_j`` (the PAMAS coordinator
    score, DESIGN §5), in [-1, 1]; 0 when nobody voted or every voter weighs 0."""
    votes = [j for j in judgments if not j.abstained]
    total = sum(weights.get(j.agent, 1.0) for j in votes)
    if total <= 0:
        return 0.0
    return sum(weights.get(j.agent, 1.0) * j.signed_score for j in votes) / total


@dataclass(frozen=True)
class AllAgents(RoutingPolicy):
    """Ask every agent, concurrently."""

    name = "all"

    async def run(self, agents: Sequence[str], ask: Ask) -> list[Judgment]:
        return list(await asyncio.gather(*(ask(a) for a in agents)))


@dataclass(frozen=True)
class TrustRouting(RoutingPolicy):
    """PAMAS confidence-guided routing (papers/000, eq. 17-20).

    Agents are ranked by trust weight ``alpha_j`` (descending; ties keep the
    configured order). The two most trusted are asked concurrently (eq. 17). If
    the verdicts among them that did not abstain agree (and there is at least
    one), stop. Otherwise ask the next two (eq. 18), concurrently, and stop as
    soon as the trust-weighted margin ``m = sum alpha_j (2 d_j - 1)`` over the
    answers so far is not a tie (eq. 19; the decision is ``m > 0``, eq. 20), or
    when the agents run out. Abstentions are not votes.

    The paper's margin is unweighted; here it carries each agent's trust, as the
    paper's coordinators weigh their votes (eq. 5). With every weight 1 (no
    trust file) the rule is the paper's exactly. With unequal weights a 2-2 split
    is settled by trust instead of asking two more agents.
    """

    name = "trust"
    trust: Trust | None = None
    weighting: str = "log_odds"

    def __post_init__(self) -> None:
        _check_weighting(self.weighting)

    def order(self, agents: Sequence[str]) -> list[str]:
        """Agents by trust, most trusted first (a stable sort keeps the configured order among equals)."""
        weights = _weights(agents, self.trust, self.weighting)
        return sorted(agents, key=lambda a: -weights[a])

    async def run(self, agents: Sequence[str], ask: Ask) -> list[Judgment]:
        ranked = self.order(agents)
        weights = _weights(agents, self.trust, self.weighting)
        asked: list[Judgment] = []
        for start in range(0, len(ranked), 2):
            asked.extend(await asyncio.gather(*(ask(a) for a in ranked[start : start + 2])))
            if start == 0:
                verdicts = {j.factuality for j in asked if not j.abstained}
                if len(verdicts) == 1:  # eq. 17: the top two agree
                    break
            elif abs(weighted_margin(asked, weights)) > TIE_EPS:  # eq. 19: a non-tie majority
                break
        return asked


@dataclass(frozen=True)
class GatedRouting(RoutingPolicy):
    """Confidence-gated escalation (LASE, papers/003, eq. 7-8), cheapest agent first.

    Agents are asked one at a time in order of cost (ascending; among equally
    cheap agents the most trusted goes first, then the configured order). After
    each answer the policy computes the trust-weighted mean signed score of the
    answers so far, ``c = sum alpha_j w_j / sum alpha_j`` (abstentions
    excluded), and stops when ``|c| >= tau``; otherwise it asks the next
    cheapest agent, until the agents run out.

    Why this rule rather than "stop when the latest agent is confident":

    - For the first agent ``|c|`` is its confidence, so the first step is LASE's
      gate on the leader's own confidence (eq. 7-8).
    - Later, a confident agent that *contradicts* the earlier ones lowers ``|c|``
      and keeps the escalation going; under the latest-agent rule it would stop
      the check on a split vote, which the scorer then turns into a coin toss.
      Escalation is meant to resolve doubt, so the stop rule measures the doubt
      of the combined answer, not of one agent.
    - ``|c|`` of a growing set is checked at each step, so the set of steps that
      clear ``tau`` shrinks as ``tau`` grows: calls per claim never fall as
      ``tau`` rises, and ``tau`` traces a monotone accuracy/cost curve (``tau``
      = 0 asks one agent; ``tau`` > 1 asks everyone).
    """

    name = "gated"
    tau: float = 0.8
    costs: Mapping[str, float] = field(default_factory=dict)
    trust: Trust | None = None
    weighting: str = "log_odds"

    def __post_init__(self) -> None:
        _check_weighting(self.weighting)
        if isinstance(self.tau, bool) or not isinstance(self.tau, int | float) or math.isnan(self.tau):
            raise ConfigError(f"routing option tau must be a number, got {self.tau!r}")
        for agent, cost in self.costs.items():
            if isinstance(cost, bool) or not isinstance(cost, int | float) or not 0 <= cost < math.inf:
                raise ConfigError(f"routing cost of agent {agent!r} must be a non-negative number, got {cost!r}")

    def order(self, agents: Sequence[str]) -> list[str]:
        """Agents by cost, cheapest first (unlisted agents cost 1); equal costs: most trusted first
        (a stable sort keeps the configured order among equals)."""
        trust = self.trust or Trust()
        return sorted(agents, key=lambda a: (self.costs.get(a, 1.0), -trust.weight(a, self.weighting)))

    async def run(self, agents: Sequence[str], ask: Ask) -> list[Judgment]:
        weights = _weights(agents, self.trust, self.weighting)
        asked: list[Judgment] = []
        for agent in self.order(agents):
            asked.append(await ask(agent))
            if abs(weighted_confidence(asked, weights)) >= self.tau:
                break
        return asked


def _check_weighting(weighting: str) -> None:
    if weighting not in WEIGHTINGS:
        raise ConfigError(f"routing option weighting must be one of {', '.join(WEIGHTINGS)}, got {weighting!r}")


def _float(name: str, value: Any) -> float:
    try:
        if isinstance(value, bool):
            raise TypeError
        return float(value)
    except (TypeError, ValueError):
        raise ConfigError(f"routing option {name} must be a number, got {value!r}") from None


def _costs(value: Any) -> dict[str, float]:
    """Costs from a mapping, or from ``agent=cost,agent=cost`` (a flag or an environment variable)."""
    if isinstance(value, str):
        pairs = [part.partition("=") for part in value.split(",") if part.strip()]
        if any(not sep for _, sep, _ in pairs):
            raise ConfigError(f"routing option costs must look like agent=cost,agent=cost, got {value!r}")
        value = {name.strip(): cost for name, _, cost in pairs}
    if not isinstance(value, Mapping):
        raise ConfigError(f"routing option costs must map agents to numbers, got {value!r}")
    return {str(agent): _float(f"costs.{agent}", cost) for agent, cost in value.items()}


def build_routing(name: str, options: Mapping[str, Any] | None = None) -> RoutingPolicy:
    """The policy a ``routing`` setting names, configured from ``routing_options``.

    Options: ``tau`` (gated), ``costs`` (gated), ``trust`` (a trust file path or a
    :class:`~factcheck.trust.Trust`; trust and gated), ``weighting`` (trust and
    gated). Options a policy does not use are checked but otherwise ignored, so
    one config file can switch between policies; unknown options are a ConfigError.
    """
    options = dict(options or {})
    reject_unknown(options, ROUTING_OPTIONS, what="routing option")
    if name not in ROUTINGS:
        raise ConfigError(f"unknown routing {name!r} (available: {', '.join(ROUTINGS)})")
    # Parse every option given, even one this policy ignores, so a typo fails now rather than
    # when the config is switched to the policy that uses it.
    tau = _float("tau", options.get("tau", 0.8))
    costs = _costs(options.get("costs", {}))
    weighting = str(options.get("weighting", "log_odds"))
    _check_weighting(weighting)
    trust = options.get("trust")
    if trust is not None and not isinstance(trust, Trust | str | Path):
        raise ConfigError(f"routing option trust must be a trust file path, got {trust!r}")
    if name == "all":
        return AllAgents()
    if isinstance(trust, str | Path):  # read only when a policy uses it
        trust = Trust.load(trust)
    if name == "trust":
        return TrustRouting(trust=trust, weighting=weighting)
    return GatedRouting(tau=tau, costs=costs, trust=trust, weighting=weighting)


def simulate(policy: RoutingPolicy, judgments_by_agent: Mapping[str, Judgment]) -> list[Judgment]:
    """Replay ``policy`` over recorded judgments (agents in the mapping's order): the ones it would have asked.

    Runs its own event loop, so call it from synchronous code.
    """

    async def ask(agent: str) -> Judgment:
        return judgments_by_agent[agent]

    return asyncio.run(policy.run(list(judgments_by_agent), ask))
