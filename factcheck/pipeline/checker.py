"""The Checker, the public face of a check: its components, and :meth:`Checker.stream`, the one
implementation of a check, whose steps are the modules beside this one (:mod:`factcheck.pipeline`)."""

from __future__ import annotations

import asyncio
import contextvars
import copy
from collections.abc import AsyncGenerator, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import aclosing
from dataclasses import replace

from factcheck.agent import Agent
from factcheck.cache import Cache
from factcheck.claimtime import reference_time, with_times
from factcheck.context import using
from factcheck.deliberation.builtins import Off
from factcheck.errors import ConfigError, InputError
from factcheck.events import CheckEvent, TextChecked
from factcheck.independence import THRESHOLD_RANGE
from factcheck.judged_by import judged_by
from factcheck.limits import Limits
from factcheck.llm.client import LLMSettings
from factcheck.pipeline.deliberate import check_deliberation
from factcheck.pipeline.extract import extract_claims
from factcheck.pipeline.prepare import Readiness, ready_wait_s
from factcheck.pipeline.run import CheckRun
from factcheck.plugin import ClaimExtractor, Deliberator, LabelRule, Scorer, Source, Verifier
from factcheck.routing import AllAgents, RoutingPolicy
from factcheck.text import valid_unicode
from factcheck.trust import Trust
from factcheck.types import Claim, Extraction, JudgedBy, TextVerdict
from factcheck.usage import UsageRecorder


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
        self.extractor, self.scorer, self.labels = extractor, scorer, labels
        self.routing = routing or AllAgents()
        self.llm = llm or LLMSettings()
        self.cache = cache
        self.limits = limits or Limits()
        self.independence, self.profile, self.fallback_extractor = independence, profile, fallback_extractor
        self.deliberation = deliberation or Off()
        check_deliberation(self.deliberation, names)
        self._judged_by: JudgedBy | None = None  # worked out on first use (judged_by)
        self._alpha: dict[str, float] | None = None  # the deliberation's trust weights (trust_weights)
        self._readiness = Readiness()  # what the components' prepare() came to, shared by every check

    def with_agents(self, agents: Sequence[Agent]) -> Checker:
        """This checker with other agents; it shares the extractor, scorer, label rule, routing and cache."""
        names = [a.name for a in agents]
        if not names or len(set(names)) != len(names):
            raise ConfigError(f"agents must be at least one, with unique names, got {names}")
        check_deliberation(self.deliberation, names)
        clone = copy.copy(self)
        clone.agents, clone.profile, clone._judged_by, clone._alpha = tuple(agents), None, None, None
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
        run = CheckRun(self, text, reference, deadline_s, (max_claims, max_claims_by), prepare_wait_s)
        async with aclosing(run.events(given)) as events:
            async for event in events:
                yield event

    async def extraction(
        self, text: str, recorder: UsageRecorder | None = None, as_of: str | None = None
    ) -> Extraction:
        """The claims of ``text``, as a check would extract them (with its fallback) and with their times
        resolved against ``as_of`` (default now), and the sentences the extractor skipped and why
        (``factcheck extract``); usage goes to ``recorder``."""
        recorder = recorder or UsageRecorder()
        with using(usage=recorder, llm=self.llm, cache=self.cache), recorder.timed("extract"):
            found = await extract_claims(self, text, recorder)
        return replace(found, claims=tuple(with_times(found.claims, reference_time(as_of))))

    def ready_wait_s(self, bound_s: float | None = None) -> float:
        """How long a check waits for a component's ``prepare()``: its agents' time-out (an agent that
        cannot start within the time it has to answer is as good as timed out), at most
        ``prepare_timeout_s`` and ``bound_s`` (the caller's own limit). Counted from when the prepare
        started, so a check that joins one started by an earlier check (or by the server's warm-up)
        waits only for the rest."""
        return ready_wait_s(self.limits, bound_s)

    def missing_key(self, component: Source | Verifier) -> str | None:
        """The environment variable ``component`` needs, when its last prepare() found it unset."""
        return self._readiness.missing_keys.get(id(component))

    async def prepare_component(self, component: Source | Verifier, wait_s: float | None = None) -> str | None:
        """Run ``component.prepare()`` as a check does, with this checker's LLM settings and cache, waiting
        at most :meth:`ready_wait_s` (``wait_s`` bounds it): ``None`` when it can run, else why its agents
        abstain (:meth:`factcheck.pipeline.prepare.Readiness.prepare`). A ConfigError or InputError (a bad
        corpus path) is raised: the user must fix it."""
        return await self._readiness.prepare(component, self.limits, self.llm, self.cache, wait_s)
