"""Ask: the agents the routing policy picks answer a claim, each retrieving evidence and then judging it
on its source's loop, within the agents' time-out, reusing a judgment a cache or a concurrent check holds.
Any failure becomes an abstention that says why; an agent whose service refused for good is out of the
rest of the check."""

from __future__ import annotations

import asyncio
import weakref
from collections.abc import Awaitable, Callable
from dataclasses import replace
from typing import Any

from factcheck.agent import Agent
from factcheck.cache import cache_key, cached
from factcheck.calls import call_plugin, run_beside, usable_evidence
from factcheck.errors import (
    BudgetReachedError,
    MissingKeyError,
    ServiceRefusedError,
    SourceError,
)
from factcheck.pipeline.components import Components
from factcheck.switches import raise_errors_requested
from factcheck.text import valid_unicode
from factcheck.types import Assessment, Claim, Evidence, Judgment
from factcheck.usage import UsageRecorder, record_cache_hit

JUDGMENT_CACHE_VERSION = "2"  # bump when a judgment's meaning changes; options and cache_version() cover the rest


async def judge_claim(
    checker: Components, claim: Claim, limit: asyncio.Semaphore, recorder: UsageRecorder, broken: dict[str, str]
) -> tuple[Judgment, ...]:
    """The judgments of the agents the routing policy asks, in the configured agent order."""
    by_name = {agent.name: agent for agent in checker.agents}

    async def ask(name: str) -> Judgment:
        return await ask_unless_out(checker, by_name[name], claim, limit, recorder, broken)

    first = checker.deliberation.round0_agents(list(by_name), checker.trust_weights())
    judgments = await checker.routing.run(first, ask)
    asked = {j.agent for j in judgments}
    avoided = sum(1 for name in by_name if name not in asked and name not in broken)
    if avoided:
        recorder.count(recorder.calls, "routing:avoided", avoided)
    order = list(by_name)
    return tuple(sorted(judgments, key=lambda j: order.index(j.agent)))


async def ask_unless_out(
    checker: Components,
    agent: Agent,
    claim: Claim,
    limit: asyncio.Semaphore,
    recorder: UsageRecorder,
    broken: dict[str, str],
) -> Judgment:
    """:func:`ask`, except for an agent out of this check (``broken``): it abstains at no cost, saying why
    (so routing may escalate past it, and deliberation ask another)."""
    if agent.name in broken:
        return await _abstain(agent, broken[agent.name])
    return await ask(checker, agent, claim, limit, recorder, broken)


async def ask(
    checker: Components,
    agent: Agent,
    claim: Claim,
    limit: asyncio.Semaphore,
    recorder: UsageRecorder,
    broken: dict[str, str],
) -> Judgment:
    """One agent on one claim; any failure becomes an abstention that says why.

    A service that refuses for good (ServiceRefusedError: a rejected key, an
    unknown model) puts the agent in ``broken`` for the rest of the check, so
    claims not yet asked skip it at no cost; the reason is noted once. The
    time-out stops waiting, but work a component handed to a thread runs on
    in the background.
    """
    limits = checker.limits
    evidence: list[Evidence] = []
    stage = "retrieve"

    def refused_earlier() -> None:
        if agent.name in broken:
            raise _AgentRefused(broken[agent.name])

    async def judge() -> Judgment:
        nonlocal evidence, stage
        refused_earlier()  # another claim found the agent's service refusing while this one waited
        with recorder.timed("retrieve"):
            recorder.count(recorder.calls, f"source:{agent.source.name}")
            found = await call_plugin(agent.source, "retrieve", claim)
            evidence, problems = usable_evidence(found, limits.max_evidence, precedents=agent.source.gives_precedents)
            for problem in problems:
                note = f"source {agent.source.name} {problem}"
                if note not in recorder.notes:
                    recorder.notes.append(note)
            if problems and not evidence:
                raise SourceError("; ".join(problems))
        stage = "judge"
        refused_earlier()
        with recorder.timed("judge"):
            recorder.count(recorder.calls, f"verifier:{agent.verifier.name}")
            assessment = await call_plugin(agent.verifier, "judge", claim, evidence)
            if not isinstance(assessment, Assessment):
                raise TypeError(f"judge() must return an Assessment, got {type(assessment).__name__}")
        return Judgment(
            agent=agent.name,
            factuality=assessment.factuality,
            confidence=assessment.confidence if assessment.factuality is not None else 0.0,
            rationale=valid_unicode(str(assessment.rationale)),
            evidence=_shown(evidence, assessment.evidence),
            signals=assessment.signals,
        )

    async def judge_beside() -> Judgment:
        # On the source's own loop: retrieving and judging there cost one hop, not two.
        return await run_beside(agent.source, judge)

    request = agent.judgment_request(claim, checker.llm) if checker.cache is not None else None
    async with limit:
        try:
            async with asyncio.timeout(limits.agent_timeout_s):
                if request is None:
                    return await judge_beside()
                return replace(await _reused_or(request, judge_beside), agent=agent.name)
        except MissingKeyError as exc:
            recorder.count(recorder.errors, f"agent:{agent.name}")
            return Judgment(agent.name, None, evidence=tuple(evidence), error=f"skipped: {exc}")
        except _AgentRefused as exc:
            return Judgment(agent.name, None, evidence=tuple(evidence), error=f"skipped: {exc}")
        except BudgetReachedError as exc:  # no paid call was made; the rest of the check skips the agent too
            recorder.count(recorder.errors, "budget")
            broken.setdefault(agent.name, str(exc))
            return Judgment(agent.name, None, evidence=tuple(evidence), error=str(exc))
        except TimeoutError:
            recorder.count(recorder.errors, f"agent:{agent.name}")
            message = f"timed out after {limits.agent_timeout_s:g}s during {stage}"
            return Judgment(agent.name, None, evidence=tuple(evidence), error=message)
        except Exception as exc:
            if raise_errors_requested():
                raise
            component = agent.source.name if stage == "retrieve" else agent.verifier.name
            recorder.count(recorder.errors, f"{'source' if stage == 'retrieve' else 'verifier'}:{component}")
            message = f"{stage} failed in {component}: {type(exc).__name__}: {exc}"
            if isinstance(exc, ServiceRefusedError) and agent.name not in broken:
                broken[agent.name] = f"{component} refused earlier in this check: {exc}"
                recorder.notes.append(f"agent {agent.name} stopped for the rest of the check: {message}")
            return Judgment(agent.name, None, evidence=tuple(evidence), error=message)


class _AgentRefused(Exception):
    """The agent's service refused for good earlier in this check: skip it without calling anything."""


async def _abstain(agent: Agent, error: str) -> Judgment:
    return Judgment(agent.name, None, error=error)


# Judgments being made right now, per event loop: a second request for the same one waits for the first.
_in_flight: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, dict[str, asyncio.Future[dict[str, Any] | None]]] = (
    weakref.WeakKeyDictionary()
)


async def _reused_or(request: dict[str, Any], judge: Callable[[], Awaitable[Judgment]]) -> Judgment:
    """The stored judgment for ``request``, the one being made now by a concurrent check, or ``judge()``.

    Only completed judgments are stored: an error or time-out is never reused,
    so the next check tries again. A check waiting on a concurrent one that
    fails judges the claim itself.
    """
    loop = asyncio.get_running_loop()
    in_flight = _in_flight.setdefault(loop, {})
    key = cache_key("judgment", JUDGMENT_CACHE_VERSION, request)
    if key in in_flight:
        shared = await asyncio.shield(in_flight[key])
        if shared is not None:
            record_cache_hit("judgment")
            return Judgment.from_dict(shared)
        return await judge()
    future: asyncio.Future[dict[str, Any] | None] = loop.create_future()
    in_flight[key] = future

    async def compute() -> dict[str, Any]:
        return (await judge()).to_dict()

    data: dict[str, Any] | None = None
    try:
        # A judgment made without evidence (an abstention) expires like any other absence.
        data = await cached(
            "judgment", JUDGMENT_CACHE_VERSION, request, compute, absent=lambda d: d.get("factuality") is None
        )
        return Judgment.from_dict(data)
    finally:
        future.set_result(data)
        del in_flight[key]


def _shown(retrieved: list[Evidence], ordered: tuple[Evidence, ...] | None) -> tuple[Evidence, ...]:
    """The evidence a judgment shows: the verifier's order (the passage that decided first) when it is a
    reordering of what was retrieved, else the retrieved order."""
    if ordered is None or sorted(map(repr, ordered)) != sorted(map(repr, retrieved)):
        return tuple(retrieved)
    return ordered
