"""Deliberate: after the first round, the claims the deliberation policy's gate sends on are settled on
the floor (:class:`~factcheck.deliberation.floor.Floor`), one step at a time, each announced; the floor
ends a little before the check's deadline, so the claim keeps an answer (docs/deliberation.md)."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from datetime import datetime

from factcheck.agent import Agent
from factcheck.claimtime import marked
from factcheck.deliberation.floor import Floor, Roles
from factcheck.deliberation.roles import VerifierRoles
from factcheck.errors import ConfigError
from factcheck.events import CheckEvent, ClaimDeliberated
from factcheck.pipeline.ask import ask_unless_out
from factcheck.pipeline.components import Components
from factcheck.plugin import Deliberator
from factcheck.plugin.deliberator import ARBITER
from factcheck.types import Claim, Deliberation, DeliberationStep, Judgment
from factcheck.usage import UsageRecorder

DELIBERATION_RESERVE_S = 0.05  # deliberation ends this much (or the share below of the deadline) before it
DELIBERATION_RESERVE_SHARE = 0.02


async def deliberate(
    checker: Components,
    claim: Claim,
    index: int,
    judgments: tuple[Judgment, ...],
    *,
    reference: datetime,
    limit: asyncio.Semaphore,
    broken: dict[str, str],
    recorder: UsageRecorder,
    emit: Callable[[CheckEvent], None],
    deadline: float | None,
    deadline_s: float | None,
) -> tuple[tuple[Judgment, ...], Deliberation]:
    """The deliberation of claim number ``index``: the judgments to score and its record. ``deadline`` is
    the event loop's time the check ends by (``deadline_s`` after it started)."""
    policy = checker.deliberation

    async def ask(agent: Agent, recorder: UsageRecorder) -> Judgment:
        judgment = await ask_unless_out(checker, agent, claim, limit, recorder, broken)
        return marked(judgment, claim, reference)

    def announce(step: DeliberationStep) -> None:
        emit(ClaimDeliberated(index, policy.name, step))

    floor = Floor(
        claim,
        checker.agents,
        judgments,
        policy=policy,
        roles=roles(policy),
        alpha=checker.trust_weights(),
        ask=ask,
        mark=lambda j: marked(j, claim, reference),
        recorder=recorder,
        out=broken,
        timeout_s=checker.limits.agent_timeout_s,
        max_evidence=checker.limits.max_evidence,
        on_step=announce,
        limit=limit,
    )
    until = None
    if deadline is not None and deadline_s is not None:
        until = deadline - max(DELIBERATION_RESERVE_S, DELIBERATION_RESERVE_SHARE * deadline_s)
    return await floor.run(until)


def check_deliberation(policy: Deliberator, names: Sequence[str]) -> None:
    """ConfigError when ``policy`` cannot deliberate among agents ``names``: one of them has the
    decision-maker's name, or its ``leader`` is none of them."""
    if not policy.active:
        return
    if ARBITER in names:
        raise ConfigError(f"agent name {ARBITER!r} is the decision-maker's under deliberation: rename the agent")
    if policy.leader and policy.leader not in names:
        raise ConfigError(f"deliberation leader {policy.leader!r} is not an agent (agents: {', '.join(names)})")


def roles(policy: Deliberator) -> Roles:
    """Who plays ``policy``'s roles: the agents' verifiers, or the configured model (``roles = "llm"``)."""
    if policy.roles == "llm":
        from factcheck.deliberation.llm_roles import LLMRoles

        return LLMRoles()
    return VerifierRoles()
