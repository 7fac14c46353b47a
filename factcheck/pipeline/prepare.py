"""Prepare: each source's and verifier's ``prepare()`` (an index, a model) run once, in the background,
and waited for within the agents' time; the agents that cannot run (a missing key, a refused service, a
prepare still going, a language they cannot read) out of the check, each with why."""

from __future__ import annotations

import asyncio
import time
from concurrent.futures import CancelledError as CancelledFuture
from concurrent.futures import Future
from dataclasses import dataclass
from typing import Any

from factcheck.cache import Cache
from factcheck.calls import abandon, settled, start_plugin
from factcheck.context import using
from factcheck.errors import ConfigError, InputError, MissingKeyError, ServiceRefusedError
from factcheck.language import Detection
from factcheck.language import refusal as language_refusal
from factcheck.limits import Limits
from factcheck.llm.client import LLMSettings
from factcheck.pipeline.components import Components
from factcheck.plugin import Source, Verifier
from factcheck.switches import raise_errors_requested
from factcheck.usage import UsageRecorder

UNREADY_RETRY_S = 600.0  # a component whose prepare() timed out is not waited for again before this
PREPARE_CLOCK_SLACK_S = 0.05  # a wait for prepare_timeout_s may end this much early (timer granularity)


def ready_wait_s(limits: Limits, bound_s: float | None = None) -> float:
    """How long a check waits for a component's ``prepare()`` (:meth:`~factcheck.pipeline.Checker.ready_wait_s`)."""
    wait = min(limits.agent_timeout_s, limits.prepare_timeout_s)
    return wait if bound_s is None else min(wait, bound_s)


@dataclass(frozen=True)
class _Preparing:
    """A component's ``prepare()`` running in the background, and when it started (``time.monotonic()``)."""

    future: Future[Any]
    started: float


class Readiness:
    """What a checker knows of its components' ``prepare()``, by component id, shared by its checks (and by
    the checkers :meth:`~factcheck.pipeline.Checker.with_agents` makes of it)."""

    def __init__(self) -> None:
        # Components whose prepare() timed out: (retry after, why), so later checks skip them at once.
        self.unready: dict[int, tuple[float, str]] = {}
        # Prepares running in the background, and the components a check gave up waiting for (later checks
        # do not wait for them until one of their prepares has ended).
        self.preparing: dict[int, _Preparing] = {}
        self.slow: set[int] = set()
        # The environment variable each component whose prepare() found no API key needs.
        self.missing_keys: dict[int, str] = {}

    async def prepare(
        self,
        component: Source | Verifier,
        limits: Limits,
        llm: LLMSettings,
        cache: Cache | None,
        wait_s: float | None = None,
    ) -> str | None:
        """Run ``component.prepare()`` as a check does (:meth:`~factcheck.pipeline.Checker.prepare_component`),
        with ``llm`` and ``cache``: ``None`` when it can run, else why its agents abstain.

        The prepare runs in the background, on the component's loop, for up to ``prepare_timeout_s``;
        a check waits for it at most :func:`ready_wait_s` (``wait_s`` bounds it). One still running then
        is not waited for again (nor its retries) until one of its prepares has ended: its agents abstain
        at once, saying so, and the other agents answer at full speed; a later check finds it done, or a prepare
        still not done after ``prepare_timeout_s`` is given up (and tried again after :data:`UNREADY_RETRY_S`).

        A ConfigError or InputError (a bad corpus path) is raised: the user must fix it.
        A missing API key or a service that refused for good skips the agents that need it.
        """
        if _inherits_prepare(component):  # nothing to prepare: no need to reach its loop
            return None
        key, limit = id(component), limits.prepare_timeout_s
        unready = self.unready.get(key)
        if unready is not None and unready[0] > time.monotonic():
            return unready[1]  # it hung a moment ago: do not make every check wait for it again
        running = self.preparing.get(key)
        if running is None:
            # Shared by later checks: not stopped when the check that started it is (interrupt=None).
            with using(llm=llm, cache=cache, interrupt=None):
                running = _Preparing(start_plugin(component, "prepare", timeout_s=limit), time.monotonic())
            self.preparing[key] = running
        ready_wait = ready_wait_s(limits, wait_s)
        wait = 0.0 if key in self.slow else running.started + ready_wait - time.monotonic()
        try:
            done = await settled(running.future, wait)
        except asyncio.CancelledError:
            # Its check ran out of time while the prepare ran on (a server's deadline): later checks do not
            # wait for it. Not so when the prepare had ended (a sibling claim's check failed on its error).
            if not running.future.done():
                self.slow.add(key)
            raise
        timed_out = f"prepare of {component.name} did not finish within {limit:g}s"
        if not done:
            age = time.monotonic() - running.started
            if age < limit - PREPARE_CLOCK_SLACK_S:  # else its wait was prepare_timeout_s itself: timed out
                self.slow.add(key)
                return (
                    f"{component.name} is not ready: its prepare() goes on in the background (checks wait "
                    f"{ready_wait:g}s for it, prepare_timeout_s = {limit:g}); "
                    "its agents abstain until it is done"
                )
            abandon(component, running.future)  # one that blocks its loop cannot time itself out
        if self.preparing.get(key) is running:
            del self.preparing[key]
        self.missing_keys.pop(key, None)  # said again below if this prepare found no key either
        try:
            if not done:
                raise TimeoutError
            running.future.result()
        except (TimeoutError, CancelledFuture):
            self.unready[key] = (time.monotonic() + UNREADY_RETRY_S, timed_out)
            return timed_out
        except (ConfigError, InputError):
            self.slow.discard(key)  # it ended, if badly: a later prepare of it is waited for as any other
            raise
        except (MissingKeyError, ServiceRefusedError) as exc:
            self.slow.discard(key)
            if isinstance(exc, MissingKeyError) and exc.variable:
                self.missing_keys[key] = exc.variable
            return f"skipped: {exc}"
        except Exception as exc:
            self.slow.discard(key)
            if raise_errors_requested():
                raise
            return f"prepare failed in {component.name}: {type(exc).__name__}: {exc}"
        self.slow.discard(key)
        return None


async def prepare_agents(checker: Components, recorder: UsageRecorder, wait_s: float | None = None) -> dict[str, str]:
    """Run each source's and verifier's ``prepare`` once; why each agent that cannot run is out.

    A ConfigError or InputError (a bad corpus path) stops the check: the user must fix it.
    A missing API key or a service that refused for good skips the agents that need it;
    any other failure makes them abstain.
    """
    components: dict[tuple[str, str], Source | Verifier] = {}
    for agent in checker.agents:
        components.setdefault(("source", agent.source.name), agent.source)
        components.setdefault(("verifier", agent.verifier.name), agent.verifier)

    async def prepare(kind: str, component: Source | Verifier) -> str | None:
        reason = await checker.prepare_component(component, wait_s)
        if reason is not None:
            recorder.count(recorder.errors, f"{kind}:{component.name}")
            if reason.startswith(f"{component.name} is not ready") and reason not in recorder.notes:
                recorder.notes.append(reason)
        return reason

    results = await asyncio.gather(*(prepare(kind, c) for (kind, _), c in components.items()))
    failed = dict(zip(components, results, strict=True))
    broken = {}
    for agent in checker.agents:
        reason = failed[("source", agent.source.name)] or failed[("verifier", agent.verifier.name)]
        if reason:
            broken[agent.name] = reason
    return broken


def refuse_unread_language(
    checker: Components, detection: Detection | None, broken: dict[str, str], recorder: UsageRecorder
) -> bool:
    """Put each agent whose source or verifier cannot read the text's language in ``broken``, saying why.

    Its claims then abstain at no cost (UNVERIFIED, not verdicts read from a text it cannot read).
    """
    refused = []
    for agent in checker.agents:
        if agent.name in broken:
            continue
        for kind, component in (("verifier", agent.verifier), ("source", agent.source)):
            reason = language_refusal(detection, f"{component.name} {kind}", component.languages)
            if reason is not None:
                broken[agent.name] = reason
                refused.append(agent.name)
                break
    if refused and detection is not None:
        recorder.notes.append(
            f"the text is {detection.note()}: agent {', '.join(refused)} cannot read it and abstained"
        )
    return bool(refused)


def _inherits_prepare(component: Source | Verifier) -> bool:
    """True when ``component`` keeps the base class's ``prepare``, which does nothing."""
    base = Source if isinstance(component, Source) else Verifier
    return getattr(type(component), "prepare", None) is base.prepare
