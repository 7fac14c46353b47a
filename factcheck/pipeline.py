"""The Checker: extract claims -> ask the agents (retrieve, then judge) -> score -> label.

One implementation of a check, :meth:`Checker.stream`, yields its steps (:mod:`factcheck.events`);
``acheck`` and the server consume it. The Checker holds resolved components only:
:func:`factcheck.build_checker` makes one from settings.

Which agents answer a claim is the routing policy's choice (``routing``: every
agent by default; see :mod:`factcheck.routing`).

Agents and claims run concurrently under one concurrency limit, each agent
call under a time-out. An agent whose source or verifier fails, or that runs
out of time, abstains on that claim with ``error`` set; the check completes.
"""

from __future__ import annotations

import asyncio
import contextvars
import copy
import inspect
import math
import time
import weakref
from collections.abc import AsyncGenerator, Awaitable, Callable, Sequence
from concurrent.futures import CancelledError as CancelledFuture
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import aclosing
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any

from factcheck.agent import Agent
from factcheck.cache import Cache, cache_key, cached
from factcheck.calls import abandon, call_plugin, run_beside, settled, start_plugin, usable_evidence
from factcheck.claimtime import marked, reference_time, with_times
from factcheck.context import current, enter, using
from factcheck.deliberation.builtins import Off
from factcheck.deliberation.floor import Floor, Roles
from factcheck.deliberation.roles import VerifierRoles
from factcheck.errors import (
    BudgetReachedError,
    ConfigError,
    FactcheckError,
    InputError,
    MissingKeyError,
    ServiceRefusedError,
    SourceError,
)
from factcheck.events import CheckEvent, ClaimChecked, ClaimDeliberated, ClaimsFound, TextChecked
from factcheck.independence import THRESHOLD_RANGE, independent_judgments
from factcheck.interrupt import Interrupt
from factcheck.judged_by import judged_by
from factcheck.language import Detection
from factcheck.language import detect as detect_language
from factcheck.language import refusal as language_refusal
from factcheck.limits import Limits
from factcheck.llm.client import LLMSettings
from factcheck.plugin import ClaimExtractor, Deliberator, LabelRule, Scorer, Source, Verifier
from factcheck.plugin.deliberator import ARBITER
from factcheck.routing import AllAgents, RoutingPolicy
from factcheck.scoring import score_claim, text_verdict
from factcheck.switches import raise_errors_requested
from factcheck.text import valid_unicode
from factcheck.trust import Trust
from factcheck.types import (
    TOO_LONG_RULE,
    Assessment,
    Claim,
    ClaimVerdict,
    Deliberation,
    DeliberationStep,
    Evidence,
    Extraction,
    JudgedBy,
    Judgment,
    SkippedSentence,
    TextVerdict,
)
from factcheck.usage import UsageRecorder, record_cache_hit

JUDGMENT_CACHE_VERSION = "2"  # bump when a judgment's meaning changes; options and cache_version() cover the rest


EXTRACT_CHARS_PER_CLAIM = 500  # with max_claims = 200, claims are read from the first 100,000 characters
# A claim longer than this is a run-on text (a page without full stops), not one statement: skipped, with why.
MAX_CLAIM_CHARS = 1000
UNREADY_RETRY_S = 600.0  # a component whose prepare() timed out is not waited for again before this
PREPARE_CLOCK_SLACK_S = 0.05  # a wait for prepare_timeout_s may end this much early (timer granularity)


class Checker:
    """Checks texts with resolved components: its agents, claim extractor, scorer, label rule and routing
    policy, the LLM settings and cache its components use, and the :class:`~factcheck.limits.Limits` of a
    check. Build one from settings with :func:`factcheck.build_checker`, the one place that reads
    settings and looks names up::

        checker = factcheck.build_checker(scorer="normsum", corpus="my-docs/")
        verdict = checker.check("Aspirin lowers the risk of colorectal cancer.")

    ``deliberation`` (a :class:`~factcheck.Deliberator`; default ``off``) settles, after the first round,
    the claims its gate sends on (:mod:`factcheck.deliberation`).

    ``independence`` (a similarity threshold, e.g. 0.5) merges agreeing agents whose evidence is
    near-duplicate before a claim is scored, so they count once. ``profile`` names where the agents
    came from (a verdict's ``judged_by``). If the extractor fails (no key, a time-out, an unusable
    answer), ``fallback_extractor`` splits the text instead, with a note.
    """

    def __init__(
        self,
        agents: Sequence[Agent],
        *,
        extractor: ClaimExtractor,
        scorer: Scorer,
        labels: LabelRule,
        routing: RoutingPolicy | None = None,
        llm: LLMSettings | None = None,
        cache: Cache | None = None,
        limits: Limits | None = None,
        independence: float | None = None,
        profile: str | None = None,
        fallback_extractor: ClaimExtractor | None = None,
        deliberation: Deliberator | None = None,
    ) -> None:
        self.agents: tuple[Agent, ...] = tuple(agents)
        if not self.agents:
            raise ConfigError("no agents configured: nothing would check the claims")
        names = [a.name for a in self.agents]
        if len(set(names)) != len(names):
            raise ConfigError(f"agent names must be unique, got {names}")
        if independence is not None and not THRESHOLD_RANGE.allows(independence):
            raise ConfigError(f"independence threshold must be {THRESHOLD_RANGE.bounds_text()}, got {independence!r}")
        self.extractor = extractor
        self.scorer = scorer
        self.labels = labels
        self.routing = routing or AllAgents()
        self.llm = llm or LLMSettings()
        self.cache = cache
        self.limits = limits or Limits()
        self.independence = independence
        self.profile = profile
        self.fallback_extractor = fallback_extractor
        self.deliberation = deliberation or Off()
        _check_deliberation(self.deliberation, names)
        self._judged_by: JudgedBy | None = None  # worked out on first use (judged_by)
        self._alpha: dict[str, float] | None = None  # the deliberation's trust weights (trust_weights)
        # Components whose prepare() timed out, by id: (retry after, why), so later checks skip them at once.
        self._unready: dict[int, tuple[float, str]] = {}
        # Prepares running in the background, by component id, and the components a check gave up waiting
        # for (later checks do not wait for them until one of their prepares has ended).
        self._preparing: dict[int, _Preparing] = {}
        self._slow: set[int] = set()
        # The environment variable each component whose prepare() found no API key needs (missing_key).
        self._missing_keys: dict[int, str] = {}

    def with_agents(self, agents: Sequence[Agent]) -> Checker:
        """This checker with other agents; it shares the extractor, scorer, label rule, routing and cache."""
        names = [a.name for a in agents]
        if not names or len(set(names)) != len(names):
            raise ConfigError(f"agents must be at least one, with unique names, got {names}")
        _check_deliberation(self.deliberation, names)
        clone = copy.copy(self)
        clone.agents = tuple(agents)
        clone.profile = None
        clone._judged_by = None
        clone._alpha = None
        return clone

    def trust_weights(self) -> dict[str, float]:
        """The deliberation policy's trust weight of each agent (1 each without a trust file)."""
        if self._alpha is None:
            path = self.deliberation.trust
            trust = Trust.load(path) if path else None
            self._alpha = {a.name: trust.weight(a.name) if trust is not None else 1.0 for a in self.agents}
        return self._alpha

    def judged_by(self) -> JudgedBy:
        """Who judges this checker's checks (a verdict's ``judged_by``): the profile its agents came from
        (``None`` for agents handed in), each agent with the corpus it searches, and the caution a reader
        needs when they search only a corpus of one domain. Worked out once: the agents are fixed."""
        if self._judged_by is None:
            self._judged_by = judged_by(self.profile, ((a.name, a.source, a.verifier) for a in self.agents))
        return self._judged_by

    def check(self, text: str, claims: Sequence[Claim] | None = None, as_of: str | None = None) -> TextVerdict:
        """Check ``text`` (synchronous; safe to call from inside a running event loop)."""
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            return asyncio.run(self.acheck(text, claims, as_of))
        # Called from async code (a notebook): run on a private loop in a worker thread, in this context.
        with ThreadPoolExecutor(max_workers=1) as pool:
            run = contextvars.copy_context().run
            return pool.submit(run, asyncio.run, self.acheck(text, claims, as_of)).result()

    async def acheck(self, text: str, claims: Sequence[Claim] | None = None, as_of: str | None = None) -> TextVerdict:
        """Check ``text``: the last event of :meth:`stream` (see there for the arguments)."""
        async with aclosing(self.stream(text, claims, as_of)) as steps:
            async for event in steps:
                if isinstance(event, TextChecked):
                    return event.verdict
        raise AssertionError("a check ends with its verdict")  # pragma: no cover

    async def stream(
        self,
        text: str,
        claims: Sequence[Claim] | None = None,
        as_of: str | None = None,
        *,
        deadline_s: float | None = None,
        max_claims: int | None = None,
        max_claims_by: str = "max_claims",
        prepare_wait_s: float | None = None,
    ) -> AsyncGenerator[CheckEvent, None]:
        """Check ``text``, yielding its steps (:mod:`factcheck.events`): the claims found, each claim as it
        is judged, and last the checked text. The only implementation of a check: :meth:`acheck` keeps
        the last event, the server sends each.

        - ``claims`` (a dataset's own segmentation): extraction is skipped.
        - ``as_of``: when the text was written (ISO 8601 date or time; default now). Claims' times are
          resolved against it, and sources that can read the past (Wikipedia) read the pages of then.
        - ``deadline_s``: the check ends by then. Claims not yet judged abstain, saying so, and the
          verdict is marked partial.
        - ``max_claims``: keep fewer claims than the limits' own; the note names it ``max_claims_by``.
        - ``prepare_wait_s``: bounds the wait for a component still preparing (:meth:`ready_wait_s`),
          so a caller with a deadline of its own keeps the ready agents' answers inside it.

        Nothing is judged before the consumer asks for the event after :class:`ClaimsFound` (a server can
        refuse the check on its claim count). Agents are prepared once and the language read once per
        check, under one concurrency limit, into one usage record. A problem of settings or input raises
        a :class:`~factcheck.FactcheckError`; any other failure makes agents abstain, saying why.
        """
        if not isinstance(text, str) or not text.strip():
            raise InputError("empty text: there is nothing to check")
        text = valid_unicode(text)
        try:
            reference = reference_time(as_of)
        except ValueError as exc:
            raise InputError(str(exc)) from None
        given = None if claims is None else list(claims)
        run = _Run(self, text, reference, deadline_s, (max_claims, max_claims_by), prepare_wait_s)
        # The check runs in a task of its own, in a copy of this context: the state its components read
        # (usage, LLM settings, cache, the text's time) is set there once, whichever task reads the events.
        events: asyncio.Queue[CheckEvent | BaseException] = asyncio.Queue()
        go = asyncio.Event()
        task = asyncio.create_task(run.drive(given, events.put_nowait, go))
        # A check task cancelled from elsewhere (a loop shutting down) ends the wait for its next event too.
        task.add_done_callback(lambda done: events.put_nowait(asyncio.CancelledError()) if done.cancelled() else None)
        try:
            while True:
                event = await events.get()
                if isinstance(event, BaseException):
                    raise event
                yield event
                if isinstance(event, TextChecked):
                    return
                go.set()  # the consumer came back for more: judge the claims
        finally:
            if not task.done():
                run.interrupt.request()  # stop synchronous work in worker threads (spaCy splitting) too
                task.cancel()
            await asyncio.gather(task, return_exceptions=True)

    async def extraction(
        self, text: str, recorder: UsageRecorder | None = None, as_of: str | None = None
    ) -> Extraction:
        """The claims of ``text``, as a check would extract them (with its fallback) and with their times
        resolved against ``as_of`` (default now), and the sentences the extractor skipped and why
        (``factcheck extract``); usage goes to ``recorder``."""
        recorder = recorder or UsageRecorder()
        with using(usage=recorder, llm=self.llm, cache=self.cache), recorder.timed("extract"):
            found = await self._extract(text, recorder)
        return replace(found, claims=tuple(with_times(found.claims, reference_time(as_of))))

    def _refuse_unread_language(
        self, detection: Detection | None, broken: dict[str, str], recorder: UsageRecorder
    ) -> bool:
        """Put each agent whose source or verifier cannot read the text's language in ``broken``, saying why.

        Its claims then abstain at no cost (UNVERIFIED, not verdicts read from a text it cannot read).
        """
        refused = []
        for agent in self.agents:
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

    async def _extract(
        self, text: str, recorder: UsageRecorder, cap: tuple[int | None, str] = (None, "max_claims")
    ) -> Extraction:
        """The claims of ``text``. If a model-based extractor fails (no key, a time-out, an
        unusable answer), the spaCy sentence extractor takes over and a note says why."""
        recorder.count(recorder.calls, f"extractor:{self.extractor.name}")
        text = self._readable(text, recorder)
        try:
            async with asyncio.timeout(self.limits.agent_timeout_s):
                return self._capped(await _extraction(self.extractor, text), recorder, cap)
        except (ConfigError, InputError):
            raise
        except Exception as exc:
            fallback = self.fallback_extractor
            if raise_errors_requested() or fallback is None or self.extractor.name == fallback.name:
                raise
            reason = "timed out" if isinstance(exc, TimeoutError) else f"{type(exc).__name__}: {exc}"
            recorder.count(recorder.errors, f"extractor:{self.extractor.name}")
            if isinstance(exc, BudgetReachedError):
                recorder.count(recorder.errors, "budget")
            recorder.notes.append(f"claim extractor {self.extractor.name} failed ({reason}); split into sentences")
            recorder.count(recorder.calls, f"extractor:{fallback.name}")
            return self._capped(await _extraction(fallback, text), recorder, cap)

    def _readable(self, text: str, recorder: UsageRecorder) -> str:
        """The part of ``text`` claims are read from: all of it, unless it is far longer than
        ``max_claims`` claims need (then its start, cut at a line or word break, with a note).

        Claim spans still point into the whole text: only its end is left out.
        """
        limit = EXTRACT_CHARS_PER_CLAIM * self.limits.max_claims
        if len(text) <= limit:
            return text
        cut = text.rfind("\n", 0, limit)
        if cut < limit // 2:
            cut = text.rfind(" ", 0, limit)
        cut = cut if cut > 0 else limit
        recorder.notes.append(
            f"the text has {len(text)} characters; claims were read from the first {cut} "
            f"(max_claims = {self.limits.max_claims} reads at most {limit})"
        )
        return text[:cut]

    def _capped(
        self, extraction: Extraction, recorder: UsageRecorder, cap: tuple[int | None, str] = (None, "max_claims")
    ) -> Extraction:
        """The first ``max_claims`` claims (or fewer: ``cap`` is a lower limit and its name), with a note
        when there were more; their text valid Unicode (a model-based extractor may write what the text
        did not hold)."""
        limit, named = self.limits.max_claims, "max_claims"
        lower, lower_named = cap
        if lower is not None and lower < limit:
            limit, named = lower, lower_named
        claims = [_valid_claim(claim) for claim in extraction.claims]
        too_long = [claim for claim in claims if _written_length(claim) > MAX_CLAIM_CHARS]
        if too_long:
            claims = [claim for claim in claims if claim not in too_long]
            skipped = (*extraction.skipped, *map(_too_long, too_long))
            extraction = replace(extraction, skipped=_in_reading_order(skipped))
        if len(claims) > limit:
            recorder.notes.append(
                f"{len(claims)} claims found; only the first {limit} were checked ({named} = {limit})"
            )
            claims = claims[:limit]
        if claims != list(extraction.claims):
            return replace(extraction, claims=tuple(claims))
        return extraction

    def ready_wait_s(self, bound_s: float | None = None) -> float:
        """How long a check waits for a component's ``prepare()``: its agents' time-out (an agent that
        cannot start within the time it has to answer is as good as timed out), at most
        ``prepare_timeout_s`` and ``bound_s`` (the caller's own limit). Counted from when the prepare
        started, so a check that joins one started by an earlier check (or by the server's warm-up)
        waits only for the rest."""
        wait = min(self.limits.agent_timeout_s, self.limits.prepare_timeout_s)
        return wait if bound_s is None else min(wait, bound_s)

    def missing_key(self, component: Source | Verifier) -> str | None:
        """The environment variable ``component`` needs, when its last prepare() found it unset."""
        return self._missing_keys.get(id(component))

    async def prepare_component(self, component: Source | Verifier, wait_s: float | None = None) -> str | None:
        """Run ``component.prepare()`` as a check does, with this checker's LLM settings and cache:
        ``None`` when it can run, else why its agents abstain.

        The prepare runs in the background, on the component's loop, for up to ``prepare_timeout_s``;
        a check waits for it at most :meth:`ready_wait_s` (``wait_s`` bounds it). One still running then
        is not waited for again (nor its retries) until one of its prepares has ended: its agents abstain
        at once, saying so, and the other agents answer at full speed; a later check finds it done, or a prepare still
        not done after ``prepare_timeout_s`` is given up (and tried again after :data:`UNREADY_RETRY_S`).

        A ConfigError or InputError (a bad corpus path) is raised: the user must fix it.
        A missing API key or a service that refused for good skips the agents that need it.
        """
        if _inherits_prepare(component):  # nothing to prepare: no need to reach its loop
            return None
        key, limit = id(component), self.limits.prepare_timeout_s
        unready = self._unready.get(key)
        if unready is not None and unready[0] > time.monotonic():
            return unready[1]  # it hung a moment ago: do not make every check wait for it again
        running = self._preparing.get(key)
        if running is None:
            # Shared by later checks: not stopped when the check that started it is (interrupt=None).
            with using(llm=self.llm, cache=self.cache, interrupt=None):
                running = _Preparing(start_plugin(component, "prepare", timeout_s=limit), time.monotonic())
            self._preparing[key] = running
        ready_wait = self.ready_wait_s(wait_s)
        wait = 0.0 if key in self._slow else running.started + ready_wait - time.monotonic()
        try:
            done = await settled(running.future, wait)
        except asyncio.CancelledError:
            # Its check ran out of time while the prepare ran on (a server's deadline): later checks do not
            # wait for it. Not so when the prepare had ended (a sibling claim's check failed on its error).
            if not running.future.done():
                self._slow.add(key)
            raise
        timed_out = f"prepare of {component.name} did not finish within {limit:g}s"
        if not done:
            age = time.monotonic() - running.started
            if age < limit - PREPARE_CLOCK_SLACK_S:  # else its wait was prepare_timeout_s itself: timed out
                self._slow.add(key)
                return (
                    f"{component.name} is not ready: its prepare() goes on in the background (checks wait "
                    f"{ready_wait:g}s for it, prepare_timeout_s = {limit:g}); "
                    "its agents abstain until it is done"
                )
            abandon(component, running.future)  # one that blocks its loop cannot time itself out
        if self._preparing.get(key) is running:
            del self._preparing[key]
        self._missing_keys.pop(key, None)  # said again below if this prepare found no key either
        try:
            if not done:
                raise TimeoutError
            running.future.result()
        except (TimeoutError, CancelledFuture):
            self._unready[key] = (time.monotonic() + UNREADY_RETRY_S, timed_out)
            return timed_out
        except (ConfigError, InputError):
            self._slow.discard(key)  # it ended, if badly: a later prepare of it is waited for as any other
            raise
        except (MissingKeyError, ServiceRefusedError) as exc:
            self._slow.discard(key)
            if isinstance(exc, MissingKeyError) and exc.variable:
                self._missing_keys[key] = exc.variable
            return f"skipped: {exc}"
        except Exception as exc:
            self._slow.discard(key)
            if raise_errors_requested():
                raise
            return f"prepare failed in {component.name}: {type(exc).__name__}: {exc}"
        self._slow.discard(key)
        return None

    async def _prepare_agents(self, recorder: UsageRecorder, wait_s: float | None = None) -> dict[str, str]:
        """Run each source's and verifier's ``prepare`` once; why each agent that cannot run is out.

        A ConfigError or InputError (a bad corpus path) stops the check: the user must fix it.
        A missing API key or a service that refused for good skips the agents that need it;
        any other failure makes them abstain.
        """
        components: dict[tuple[str, str], Source | Verifier] = {}
        for agent in self.agents:
            components.setdefault(("source", agent.source.name), agent.source)
            components.setdefault(("verifier", agent.verifier.name), agent.verifier)

        async def prepare(kind: str, component: Source | Verifier) -> str | None:
            reason = await self.prepare_component(component, wait_s)
            if reason is not None:
                recorder.count(recorder.errors, f"{kind}:{component.name}")
                if reason.startswith(f"{component.name} is not ready") and reason not in recorder.notes:
                    recorder.notes.append(reason)
            return reason

        results = await asyncio.gather(*(prepare(kind, c) for (kind, _), c in components.items()))
        failed = dict(zip(components, results, strict=True))
        broken = {}
        for agent in self.agents:
            reason = failed[("source", agent.source.name)] or failed[("verifier", agent.verifier.name)]
            if reason:
                broken[agent.name] = reason
        return broken

    async def _judge_claim(
        self, claim: Claim, limit: asyncio.Semaphore, recorder: UsageRecorder, broken: dict[str, str]
    ) -> tuple[Judgment, ...]:
        """The judgments of the agents the routing policy asks, in the configured agent order."""
        by_name = {agent.name: agent for agent in self.agents}

        async def ask(name: str) -> Judgment:
            return await self._ask_unless_out(by_name[name], claim, limit, recorder, broken)

        first = self.deliberation.round0_agents(list(by_name), self.trust_weights())
        judgments = await self.routing.run(first, ask)
        asked = {j.agent for j in judgments}
        avoided = sum(1 for name in by_name if name not in asked and name not in broken)
        if avoided:
            recorder.count(recorder.calls, "routing:avoided", avoided)
        order = list(by_name)
        return tuple(sorted(judgments, key=lambda j: order.index(j.agent)))

    async def _ask_unless_out(
        self, agent: Agent, claim: Claim, limit: asyncio.Semaphore, recorder: UsageRecorder, broken: dict[str, str]
    ) -> Judgment:
        """:meth:`_ask`, except for an agent out of this check (``broken``): it abstains at no cost, saying why
        (so routing may escalate past it, and deliberation ask another)."""
        if agent.name in broken:
            return await _abstain(agent, broken[agent.name])
        return await self._ask(agent, claim, limit, recorder, broken)

    async def _ask(
        self, agent: Agent, claim: Claim, limit: asyncio.Semaphore, recorder: UsageRecorder, broken: dict[str, str]
    ) -> Judgment:
        """One agent on one claim; any failure becomes an abstention that says why.

        A service that refuses for good (ServiceRefusedError: a rejected key, an
        unknown model) puts the agent in ``broken`` for the rest of the check, so
        claims not yet asked skip it at no cost; the reason is noted once. The
        time-out stops waiting, but work a component handed to a thread runs on
        in the background.
        """
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
                evidence, problems = usable_evidence(
                    found, self.limits.max_evidence, precedents=agent.source.gives_precedents
                )
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

        request = agent.judgment_request(claim, self.llm) if self.cache is not None else None
        async with limit:
            try:
                async with asyncio.timeout(self.limits.agent_timeout_s):
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
                message = f"timed out after {self.limits.agent_timeout_s:g}s during {stage}"
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


class _Run:
    """The state of one check (:meth:`Checker.stream`): its usage record, concurrency limit, the agents out
    of it and why, and the deadline."""

    def __init__(
        self,
        checker: Checker,
        text: str,
        reference: datetime,
        deadline_s: float | None,
        cap: tuple[int | None, str],
        prepare_wait_s: float | None,
    ) -> None:
        self.checker, self.text, self.reference = checker, text, reference
        self.deadline_s, self.cap, self.prepare_wait_s = deadline_s, cap, prepare_wait_s
        self.recorder = UsageRecorder()
        self.interrupt = Interrupt()
        self.limit = asyncio.Semaphore(checker.limits.max_concurrency)
        self.broken: dict[str, str] = {}  # agent -> why it is out of this check (refused, unready, language)
        self.deadline: float | None = None  # the event loop's time the check must end by

    async def drive(
        self, given: list[Claim] | None, emit: Callable[[CheckEvent | BaseException], None], go: asyncio.Event
    ) -> None:
        """Run the check in this task, handing each event (or the error that stopped it) to ``emit``."""
        checker, recorder = self.checker, self.recorder
        # This task's own context (a copy of the caller's: the run's spending, a service it chose): what
        # components share during the check, set once for all of it.
        enter(
            current().but(
                usage=recorder, reference=self.reference, cache=checker.cache, llm=checker.llm, interrupt=self.interrupt
            )
        )
        try:
            emit(await self._check(given, emit, go))
        except asyncio.CancelledError:
            raise
        except BaseException as exc:
            emit(exc)

    def _late(self, what: str) -> str:
        return f"deadline of {self.deadline_s:g}s reached{what}"

    async def _check(
        self, given: list[Claim] | None, emit: Callable[[CheckEvent], None], go: asyncio.Event
    ) -> TextChecked:
        checker, recorder, text = self.checker, self.recorder, self.text
        loop = asyncio.get_running_loop()
        deadline = None if self.deadline_s is None else loop.time() + self.deadline_s
        self.deadline = deadline
        partial, language = False, None
        skipped: tuple[SkippedSentence, ...] = ()
        verdicts: dict[int, ClaimVerdict] = {}
        with recorder.timed("total"):
            claims = given or []
            if given is None:
                scope = asyncio.timeout_at(deadline)
                try:
                    async with scope:
                        with recorder.timed("extract"):
                            extraction = await checker._extract(text, recorder, self.cap)
                        claims, skipped = list(extraction.claims), extraction.skipped
                except TimeoutError:
                    if not scope.expired():
                        raise
                    self.interrupt.request()  # the split may go on in its worker thread: stop it
                    recorder.notes.append(self._late(" during claim extraction: no claim was checked"))
                    partial = True
            emit(ClaimsFound(tuple(claims), skipped))
            await go.wait()
            scope = asyncio.timeout_at(deadline)
            try:
                async with scope:
                    language = await self._judge(claims, verdicts, emit)
            except TimeoutError:
                if not scope.expired():
                    raise
                partial = True
                missed = len(claims) - len(verdicts)
                if missed:
                    recorder.notes.append(self._late(f": {missed} of {len(claims)} claims not checked"))
            with recorder.timed("score"):
                judged = [verdicts[i] if i in verdicts else self._not_reached(claim) for i, claim in enumerate(claims)]
        not_reached = tuple(i for i in range(len(claims)) if i not in verdicts)
        verdict = text_verdict(text, judged, checker.scorer, checker.labels, recorder.freeze())
        return TextChecked(
            replace(
                verdict,
                language=language,
                skipped=skipped,
                as_of=self.reference.isoformat(),
                judged_by=checker.judged_by(),
            ),
            partial,
            not_reached,
        )

    def _not_reached(self, claim: Claim) -> ClaimVerdict:
        """A claim the deadline came before: each agent abstains, saying so."""
        late = _abstentions(self.checker, self._late(" before this claim was checked"))
        return score_claim(claim, late, self.checker.scorer, self.checker.labels)

    async def _judge(
        self, claims: list[Claim], verdicts: dict[int, ClaimVerdict], emit: Callable[[CheckEvent], None]
    ) -> str | None:
        """Judge ``claims`` into ``verdicts`` (by index), emitting each as it is done; the text's language."""
        checker, recorder = self.checker, self.recorder
        # When each claim speaks of, against the text's time, and the text's language: one hop to a
        # worker thread for both (spaCy's entities; the detector's model loads on first use).
        timed, detection = await asyncio.to_thread(_read_text, self.text, claims, self.reference)
        # After extraction: a model the extractor found refusing (a bad key or model name) skips its agents.
        with recorder.timed("prepare"):
            self.broken.update(await checker._prepare_agents(recorder, self.prepare_wait_s))
            refused = checker._refuse_unread_language(detection, self.broken, recorder)
        tasks = {asyncio.create_task(self._claim(claim, i, emit)): i for i, claim in enumerate(timed)}
        pending = set(tasks)
        try:
            while pending:
                done, pending = await asyncio.wait(pending, return_when=asyncio.FIRST_COMPLETED)
                for task in sorted(done, key=tasks.__getitem__):
                    verdicts[tasks[task]] = task.result()  # a FactcheckError stops the check here
                    emit(ClaimChecked(tasks[task], verdicts[tasks[task]]))
        finally:
            for task in pending:
                task.cancel()
            await asyncio.gather(*pending, return_exceptions=True)
        # The language acted on, or one the detector is sure of; None for a short or mixed text.
        return detection.code if detection and (refused or detection.sure) else None

    async def _claim(self, claim: Claim, index: int, emit: Callable[[CheckEvent], None]) -> ClaimVerdict:
        """One claim judged by the agents the routing asks, its passages' dates marked, deliberated where
        the policy's gate sends it on, dependent agreeing agents merged (``independence``), then scored."""
        checker, recorder = self.checker, self.recorder
        try:
            judgments = await checker._judge_claim(claim, self.limit, recorder, self.broken)
        except FactcheckError:
            raise
        except Exception as exc:  # not an agent's failure (those abstain in _ask): the claim's own
            if raise_errors_requested():
                raise
            recorder.count(recorder.errors, "claim")
            judgments = _abstentions(checker, f"check failed: {type(exc).__name__}: {exc}")
        # Passages dated far from the time their claim speaks of are marked (docs/time.md).
        judgments = tuple(marked(j, claim, self.reference) for j in judgments)
        record = None
        if checker.deliberation.active:
            judgments, record = await self._deliberate(claim, index, judgments, emit)
        if checker.independence is not None:
            # Agents citing near-duplicate evidence count once (ECMR); merges are noted in usage.
            judgments, notes = independent_judgments(claim.id, judgments, checker.independence)
            recorder.notes.extend(notes)
        verdict = score_claim(claim, judgments, checker.scorer, checker.labels)
        return verdict if record is None else replace(verdict, deliberation=record)

    async def _deliberate(
        self, claim: Claim, index: int, judgments: tuple[Judgment, ...], emit: Callable[[CheckEvent], None]
    ) -> tuple[tuple[Judgment, ...], Deliberation]:
        """The claim's deliberation (:class:`~factcheck.deliberation.floor.Floor`): the judgments to score
        and its record. It ends a little before the check's deadline, so the claim keeps an answer."""
        checker = self.checker
        policy = checker.deliberation

        async def ask(agent: Agent, recorder: UsageRecorder) -> Judgment:
            judgment = await checker._ask_unless_out(agent, claim, self.limit, recorder, self.broken)
            return marked(judgment, claim, self.reference)

        def announce(step: DeliberationStep) -> None:
            emit(ClaimDeliberated(index, policy.name, step))

        floor = Floor(
            claim,
            checker.agents,
            judgments,
            policy=policy,
            roles=_roles(policy),
            alpha=checker.trust_weights(),
            ask=ask,
            mark=lambda j: marked(j, claim, self.reference),
            recorder=self.recorder,
            out=self.broken,
            timeout_s=checker.limits.agent_timeout_s,
            max_evidence=checker.limits.max_evidence,
            on_step=announce,
            limit=self.limit,
        )
        until = None
        if self.deadline is not None and self.deadline_s is not None:
            until = self.deadline - max(DELIBERATION_RESERVE_S, DELIBERATION_RESERVE_SHARE * self.deadline_s)
        return await floor.run(until)


DELIBERATION_RESERVE_S = 0.05  # deliberation ends this much (or the share below of the deadline) before it
DELIBERATION_RESERVE_SHARE = 0.02


def _check_deliberation(policy: Deliberator, names: Sequence[str]) -> None:
    """ConfigError when ``policy`` cannot deliberate among agents ``names``: one of them has the
    decision-maker's name, or its ``leader`` is none of them."""
    if not policy.active:
        return
    if ARBITER in names:
        raise ConfigError(f"agent name {ARBITER!r} is the decision-maker's under deliberation: rename the agent")
    if policy.leader and policy.leader not in names:
        raise ConfigError(f"deliberation leader {policy.leader!r} is not an agent (agents: {', '.join(names)})")


def _roles(policy: Deliberator) -> Roles:
    """Who plays ``policy``'s roles: the agents' verifiers, or the configured model (``roles = "llm"``)."""
    if policy.roles == "llm":
        from factcheck.deliberation.llm_roles import LLMRoles

        return LLMRoles()
    return VerifierRoles()


def _abstentions(checker: Checker, reason: str) -> tuple[Judgment, ...]:
    return tuple(Judgment(agent.name, None, error=reason) for agent in checker.agents)


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


def _valid_claim(claim: Claim) -> Claim:
    """``claim`` with its text and queries made valid Unicode (the same object when they were)."""
    text, queries = valid_unicode(claim.text), tuple(valid_unicode(q) for q in claim.queries)
    if text is claim.text and all(a is b for a, b in zip(queries, claim.queries, strict=True)):
        return claim
    return replace(claim, text=text, queries=queries)


def _written_length(claim: Claim) -> int:
    """How long ``claim`` is as the text has it (its span: a rewritten claim may be short), or as given."""
    written = claim.span[1] - claim.span[0] if claim.span is not None else 0
    return max(len(claim.text), len(claim.original or ""), written)


def _too_long(claim: Claim) -> SkippedSentence:
    """A claim of more than :data:`MAX_CLAIM_CHARS` characters, as a sentence not checked."""
    reason = f"too long for a claim ({_written_length(claim):,} characters; at most {MAX_CLAIM_CHARS:,})"
    return SkippedSentence(claim.original or claim.text, claim.span, TOO_LONG_RULE, reason)


def _in_reading_order(skipped: Sequence[SkippedSentence]) -> tuple[SkippedSentence, ...]:
    """``skipped`` by where each starts in the text (those with no span last, in their order)."""
    return tuple(sorted(skipped, key=lambda s: s.span[0] if s.span is not None else math.inf))


def _inherits_prepare(component: Source | Verifier) -> bool:
    """True when ``component`` keeps the base class's ``prepare``, which does nothing."""
    base = Source if isinstance(component, Source) else Verifier
    return getattr(type(component), "prepare", None) is base.prepare


@dataclass(frozen=True)
class _Preparing:
    """A component's ``prepare()`` running in the background, and when it started (``time.monotonic()``)."""

    future: Future[Any]
    started: float


class _AgentRefused(Exception):
    """The agent's service refused for good earlier in this check: skip it without calling anything."""


async def _abstain(agent: Agent, error: str) -> Judgment:
    return Judgment(agent.name, None, error=error)


def _read_text(text: str, claims: list[Claim], reference: datetime) -> tuple[list[Claim], Detection | None]:
    """``claims`` with their times resolved against ``reference``, and the language of ``text``."""
    return with_times(claims, reference), detect_language(text)


async def _extraction(extractor: ClaimExtractor, text: str) -> Extraction:
    """What ``extractor`` makes of ``text``: its ``extraction`` (claims and skipped sentences), or, for a
    plugin that has only ``extract``, its claims.

    An extractor with a coroutine ``aextraction`` (the ``llm`` one) is awaited on its package's loop:
    a time-out then cancels its model request. Its synchronous ``extraction`` would run in a worker
    thread that no time-out stops, sending retries after the check has given up on it.
    """
    if inspect.iscoroutinefunction(getattr(extractor, "aextraction", None)):
        found = await call_plugin(extractor, "aextraction", text)
        if isinstance(found, Extraction):
            return found
        raise TypeError(f"aextraction() must return an Extraction, got {type(found).__name__}")
    if callable(getattr(extractor, "extraction", None)):
        found = await call_plugin(extractor, "extraction", text)
        if isinstance(found, Extraction):
            return found
        raise TypeError(f"extraction() must return an Extraction, got {type(found).__name__}")
    return Extraction(tuple(await call_plugin(extractor, "extract", text)))


def _shown(retrieved: list[Evidence], ordered: tuple[Evidence, ...] | None) -> tuple[Evidence, ...]:
    """The evidence a judgment shows: the verifier's order (the passage that decided first) when it is a
    reordering of what was retrieved, else the retrieved order."""
    if ordered is None or sorted(map(repr, ordered)) != sorted(map(repr, retrieved)):
        return tuple(retrieved)
    return ordered
