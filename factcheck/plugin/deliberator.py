"""The deliberation policy plugin interface: :class:`Deliberator`, and the :class:`Action` it chooses.

A policy is a frozen dataclass with options (like scorers), registered through ``register_deliberators``.
Its decisions are pure: :meth:`Deliberator.gate` says why a claim should be deliberated after its first
round (or ``None``: stop there, at single-round cost) and :meth:`Deliberator.next_action` picks the next
step from the state and the steps so far. The pipeline's floor (:mod:`factcheck.deliberation.floor`)
carries the actions out; a replay (``bench/deliberation.py``) or a gate fit (``factcheck calibrate``)
calls the pure functions alone.
"""

from __future__ import annotations

import math
from abc import ABC, abstractmethod
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, fields
from typing import Any

from factcheck.options import Configurable, setting
from factcheck.types import DELIBERATION_ACTIONS, DeliberationStep, Evidence

ROLES = ("verifier", "llm")  # who plays the roles: the agents' own verifiers (offline), or the LLM
OVERTURN = ("surer", "always")  # when a ruling against the standing answer replaces it
ARBITER = "arbiter"  # the agent name of a decision-maker's ruling


@dataclass(frozen=True)
class DeliberationState:
    """What a policy knows about one claim at some point of its deliberation (computed by
    :mod:`factcheck.deliberation.state`, whose docstring defines each field; docs/deliberation.md)."""

    agents: int  # configured
    asked: int  # judgments held (abstentions included)
    votes: int  # judgments that did not abstain
    leading: bool | None  # the trust-weighted leading answer; None with no votes
    concentration: float
    independent_concentration: float
    independent_supporters: int
    support_entropy: float
    independence: float | None
    contradiction: float
    leader: str | None
    leader_confidence: float
    lp_min: float | None = None
    h_max: float | None = None
    counter: float | None = None  # the leader's opposing evidence over its deciding evidence (nli)
    steps_left: int = 0
    calls_left: int = 0

    @property
    def unanswered(self) -> bool:
        """True when no agent gave a verdict."""
        return self.votes == 0

    @property
    def leader_probability(self) -> float | None:
        """``exp(lp_min)``: LASE's tau_lp is quoted as a probability (Table 5)."""
        return math.exp(self.lp_min) if self.lp_min is not None else None

    def to_dict(self) -> dict[str, Any]:
        return {k: (round(v, 6) if isinstance(v, float) else v) for k, v in asdict(self).items()}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> DeliberationState:
        fields = cls.__dataclass_fields__
        return cls(**{k: v for k, v in data.items() if k in fields})


@dataclass(frozen=True)
class Action:
    """One step a policy asks for: its ``kind`` (verify, challenge, support, revise, arbitrate, diversify,
    stop), the ``role`` that takes it ("devil's advocate", "collaborator", "expert", "leader",
    "decision-maker", "verifier"), and ``why`` (what in the state called for it, or why it stopped)."""

    kind: str
    role: str = ""
    why: str = ""

    def __post_init__(self) -> None:
        if self.kind not in DELIBERATION_ACTIONS:
            raise ValueError(f"unknown deliberation action {self.kind!r} (one of {', '.join(DELIBERATION_ACTIONS)})")


def stop(why: str) -> Action:
    return Action("stop", "", why)


@dataclass(frozen=True)
class Deliberator(Configurable, ABC):
    """A deliberation policy. Options every policy has:

    - ``always``: deliberate on every claim, whatever the gate says (the "always deliberate" baseline);
    - ``max_steps`` / ``max_calls``: per claim, the most steps and the most agent calls (retrievals,
      verifier readings, model calls) deliberation may spend;
    - ``roles``: ``verifier`` (the agents' own verifiers re-read, retrieval finds counter-evidence: no
      model needed) or ``llm`` (the configured model plays the devil's advocate, the collaborator, the
      expert, the leader's revision and the decision-maker);
    - ``overturn``: ``surer`` (a revision or ruling against the standing answer replaces it only when it is
      at least as sure as the judgments it overturns; a less sure one is recorded, not applied) or
      ``always``;
    - ``leader``: the agent that leads (default: the most trusted, then the first configured);
    - ``trust``: a trust file (``factcheck calibrate``) whose weights rank and weigh the agents.
    """

    name: str
    always: bool = False
    max_steps: int = setting(6, minimum=0)
    max_calls: int = setting(8, minimum=0)
    roles: str = setting("verifier", choices=ROLES)
    overturn: str = setting("surer", choices=OVERTURN)
    leader: str = ""
    trust: str = ""

    @property
    def active(self) -> bool:
        """False for the ``off`` policy: the pipeline then skips the stage and computes no state."""
        return True

    def round0_agents(self, agents: Sequence[str], alpha: Mapping[str, float]) -> list[str]:
        """The agents asked in the first round (handed to the routing policy): every agent by default."""
        return list(agents)

    def lead(self, agents: Sequence[str], alpha: Mapping[str, float]) -> str:
        """The leading agent among ``agents``: the ``leader`` option when it is one of them, else the most
        trusted (ties: the configured order)."""
        if self.leader in agents:
            return self.leader
        return min(agents, key=lambda a: (-alpha.get(a, 1.0), list(agents).index(a)))

    def opening(self, state: DeliberationState) -> str | None:
        """Why this claim goes on past the first round (``always`` sends every claim), or ``None``."""
        if self.always:
            return "always: every claim is deliberated"
        return self.gate(state)

    @abstractmethod
    def gate(self, state: DeliberationState) -> str | None:
        """Why the first round's state could change with deliberation, or ``None`` to stop there. Pure."""

    @abstractmethod
    def next_action(self, state: DeliberationState, steps: Sequence[DeliberationStep]) -> Action:
        """The next step, from the current state and the steps taken so far. Pure."""

    def final(self, held: Mapping[str, Any], leader: str) -> list[str] | None:
        """Which held judgments (by agent name) the scorer reads once deliberation ends; ``None``: all."""
        return None


COMMON_OPTIONS = frozenset(f.name for f in fields(Deliberator) if f.name != "name")  # every policy's options


def taken(steps: Sequence[DeliberationStep], action: str, role: str | None = None) -> int:
    """How many of ``steps`` took ``action`` (in ``role``)."""
    return sum(1 for s in steps if s.action == action and (role is None or s.role == role))


def step_of(action: Action, actor: str, *, evidence: Iterable[Evidence] = (), **fields: Any) -> DeliberationStep:
    """The step ``action`` took, by ``actor`` (the floor numbers and charges it)."""
    return DeliberationStep(0, action.kind, action.role, actor, evidence=tuple(evidence), **fields)


__all__ = ["ARBITER", "COMMON_OPTIONS", "OVERTURN", "ROLES", "Action", "Deliberator", "step_of", "stop", "taken"]
