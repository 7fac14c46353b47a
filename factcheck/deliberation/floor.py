"""The floor: carries a policy's actions out for one claim, and records, charges and caps each step.

The pipeline makes one :class:`Floor` per claim whose first round the policy's gate sends on. A role
(:mod:`factcheck.deliberation.roles`) asks the floor to retrieve, read and ask; the floor excludes what was
already seen, keeps the per-claim caps (``max_steps``, ``max_calls``), runs every step in a usage record
of its own (its cost) that is then added to the check's, and stops on the first failure, keeping the
judgments held at that point. A deadline ends deliberation, never the answer: the claim keeps what it has.
"""

from __future__ import annotations

import asyncio
import time
from abc import ABC, abstractmethod
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from dataclasses import replace
from typing import ClassVar

from factcheck.agent import Agent
from factcheck.calls import call_plugin, usable_evidence
from factcheck.context import current, using
from factcheck.deliberation.queries import key_terms
from factcheck.deliberation.state import seen_key, state_of
from factcheck.errors import BudgetReachedError, SourceError
from factcheck.plugin import Action, DeliberationState, Deliberator
from factcheck.plugin.deliberator import ARBITER, step_of
from factcheck.precedents import precedent_of
from factcheck.switches import raise_errors_requested
from factcheck.text import valid_unicode
from factcheck.types import (
    Assessment,
    Claim,
    Critique,
    Deliberation,
    DeliberationStep,
    Evidence,
    Judgment,
    StepCost,
)
from factcheck.usage import UsageRecorder, record_note

SENTENCES_PER_PASSAGE = 16  # a verifier with ``max_sentences`` re-reads this many per pooled passage,
MAX_REREAD_SENTENCES = 96  # and at most this many in all (the sentences are ranked by meaning first)


class Roles(ABC):
    """What a deliberation's roles do; each method returns the step it took (the floor numbers, times,
    charges and records it).

    ``same_reader``: the roles rule by re-reading evidence with the agents' own verifiers (the offline roles).
    Such a ruling may replace a judgment only on a passage the first round did not read (the same reader on
    the same passages would only repeat its misreading more surely), and never gives a verdict where every
    judgment it would replace abstained (:meth:`Floor.overturns`)."""

    same_reader: ClassVar[bool] = False

    @abstractmethod
    async def challenge(self, floor: Floor, action: Action) -> DeliberationStep:
        """The devil's advocate: the strongest counter-evidence or weak point of the leading verdict."""

    @abstractmethod
    async def support(self, floor: Floor, action: Action) -> DeliberationStep:
        """A collaborator's or an expert's hints (``action.role``); never a verdict."""

    @abstractmethod
    async def revise(self, floor: Floor, action: Action) -> DeliberationStep:
        """The leader rules again, with what the supporters said; its judgment replaces the leader's."""

    @abstractmethod
    async def arbitrate(self, floor: Floor, action: Action) -> DeliberationStep:
        """The decision-maker rules with every verdict, rationale, evidence and critique (PAMAS eq. 6)."""


class StepFailed(Exception):
    """A step could not be taken (a time-out, a failing component): deliberation stops there."""


class CapReached(Exception):
    """The claim's call cap would be passed: deliberation stops there, as it would at its step cap."""


class Floor:
    """One claim's deliberation (see the module docstring).

    ``agents`` are the configured agents in order; ``held`` starts as the first round's judgments.
    ``ask`` runs one agent on the claim as the first round does (into a usage record it is handed);
    ``mark`` dates a judgment's passages against the claim's time."""

    def __init__(
        self,
        claim: Claim,
        agents: Sequence[Agent],
        held: Sequence[Judgment],
        *,
        policy: Deliberator,
        roles: Roles,
        alpha: Mapping[str, float],
        ask: Callable[[Agent, UsageRecorder], Awaitable[Judgment]],
        mark: Callable[[Judgment], Judgment],
        recorder: UsageRecorder,
        out: Iterable[str] = (),
        timeout_s: float = 30.0,
        max_evidence: int = 20,
        on_step: Callable[[DeliberationStep], None] | None = None,
        limit: asyncio.Semaphore | None = None,
    ) -> None:
        self.claim, self.policy, self.roles, self.alpha = claim, policy, roles, alpha
        self.agents = {a.name: a for a in agents}
        self.first = tuple(held)
        self.held: dict[str, Judgment] = {j.agent: j for j in held}
        self._ask, self._mark, self.recorder = ask, mark, recorder
        self.out = set(out)  # agents out of this check (refused, unready)
        self.timeout_s, self.max_evidence, self.on_step = timeout_s, max_evidence, on_step
        self.limit = limit or asyncio.Semaphore(1)  # the check's concurrency limit, shared with the first round
        self.leader = self._first_leader()
        self.steps: list[DeliberationStep] = []
        self.critiques: list[Critique] = []
        self.found: list[Evidence] = []
        self._ids: dict[tuple[str, str], str] = {}
        for judgment in held:
            self._seen(judgment.evidence)
        # The passages each agent's first-round judgment read: its verifier re-reading them is no new evidence.
        self._read_by = {j.agent: {seen_key(e.url, e.text) for e in j.evidence} for j in held}
        self.calls = 0
        self._step_calls = 0

    # --- what the policy and the roles read ---

    def _first_leader(self) -> str:
        names = list(self.agents)
        voted = [n for n in names if n in self.held and not self.held[n].abstained]
        if self.policy.leader and self.policy.leader in self.agents:
            return self.policy.leader
        return self.policy.lead(voted or [n for n in names if n in self.held] or names, self.alpha)

    def state(self) -> DeliberationState:
        """The state now, with the leader's judgment read as the leader's."""
        return state_of(
            list(self.held.values()),
            list(self.agents),
            self.alpha,
            leader=self.leader,
            steps_left=max(0, self.policy.max_steps - len(self.steps)),
            calls_left=max(0, self.policy.max_calls - self.calls),
        )

    def leader_verifier(self) -> str:
        """The name of the verifier that reads for the leader (the actor of offline roles)."""
        return self.agents[self.leader].verifier.name

    def collaborator(self) -> str | None:
        """The most trusted agent other than the leader that can run (LASE's collaborator), if any."""
        others = [n for n in self.agents if n != self.leader and n not in self.out]
        return self.policy.lead(others, self.alpha) if others else None

    def sources_asked(self, every: bool = False) -> list[str]:
        """The agents whose sources a role searches: those that answered the claim (``every``: all that can
        run), one per distinct source configuration."""
        names = [n for n in self.agents if n not in self.out and (every or (n in self.held and not self.held[n].error))]
        distinct: dict[str, str] = {}
        for name in names:
            source = self.agents[name].source
            distinct.setdefault(f"{source.name}{sorted(source.options().items())!r}", name)
        return list(distinct.values()) or [self.leader]

    def pooled(self, every: bool = False) -> list[Evidence]:
        """The evidence to re-read, deduplicated: the leader's (deciding passage first), the critiques'
        counter-evidence, what the steps found, then (``every``) each other agent's, taken in turn so
        that a verifier reading a bounded number of sentences sees some of each."""
        groups = [list(self.held[self.leader].evidence) if self.leader in self.held else []]
        groups.append([e for c in self.critiques for e in c.counter])
        groups.append(list(self.found))
        if every:
            groups += [list(j.evidence) for name, j in self.held.items() if name != self.leader]
        pooled, keys = [], set()
        for layer in range(max((len(g) for g in groups), default=0)):
            for group in groups:
                if layer < len(group):
                    key = seen_key(group[layer].url, group[layer].text)
                    if key not in keys:
                        keys.add(key)
                        pooled.append(group[layer])
        return pooled[: self.max_evidence * 2]

    def ids(self, evidence: Iterable[Evidence]) -> tuple[str, ...]:
        """Stable ids (``evidence:E3``) of passages, in the order the deliberation first saw them."""
        return tuple(f"evidence:{self._ids[seen_key(e.url, e.text)]}" for e in self._seen(evidence))

    def critique_ids(self) -> tuple[str, ...]:
        return tuple(f"critique:{s.number}" for s in self.steps if s.critique is not None)

    def _seen(self, evidence: Iterable[Evidence]) -> list[Evidence]:
        evidence = list(evidence)
        for e in evidence:
            self._ids.setdefault(seen_key(e.url, e.text), f"E{len(self._ids) + 1}")
        return evidence

    # --- what the roles ask of it ---

    def _charge(self, key: str | None, n: int = 1) -> None:
        """Count ``n`` agent calls against the caps (and in usage under ``key``), before making them."""
        if self.calls + n > self.policy.max_calls:
            raise CapReached(f"call cap reached (max_calls = {self.policy.max_calls})")
        if (spending := current().spending) is not None and (why := spending.reached()) is not None:
            raise BudgetReachedError(why)
        self.calls += n
        self._step_calls += n
        recorder = current().usage
        if recorder is not None and key is not None:
            recorder.count(recorder.calls, key, n)

    async def _timed(self, what: str, call: Awaitable[object]) -> object:
        try:
            async with asyncio.timeout(self.timeout_s):
                return await call
        except TimeoutError:
            raise StepFailed(f"{what} timed out after {self.timeout_s:g}s") from None

    async def retrieve(self, name: str, queries: Sequence[str], *, deeper: bool) -> list[Evidence]:
        """New passages from agent ``name``'s source for ``queries``; ``deeper`` asks for three times as
        many as the first round did (where the source has ``top_k``). Passages seen before are left out."""
        source = self.agents[name].source
        if deeper and isinstance(top_k := source.options().get("top_k"), int):
            source = source.configure(top_k=top_k * 3)
        self._charge(f"source:{source.name}")
        asked = replace(self.claim, queries=tuple(q for q in queries if q.strip()) or self.claim.search_queries())
        async with self.limit:
            found = await self._timed(f"source {source.name}", call_plugin(source, "retrieve", asked))
        evidence, problems = usable_evidence(found, self.max_evidence, precedents=source.gives_precedents)
        for problem in problems:
            record_note(f"source {source.name} {problem}")
        known = set(self._ids)
        fresh = [e for e in evidence if seen_key(e.url, e.text) not in known]
        self._seen(fresh)
        return fresh

    async def retrieve_each(self, names: Sequence[str], queries: Sequence[str], *, deeper: bool) -> list[Evidence]:
        """:meth:`retrieve` from each of ``names``' sources; one that fails is noted and passed over, and the
        step fails only when every one of them did."""
        found: list[Evidence] = []
        failures = []
        for name in names:
            try:
                found += await self.retrieve(name, queries, deeper=deeper)
            except (StepFailed, SourceError, TimeoutError, TypeError, ValueError) as exc:
                failures.append(f"{self.agents[name].source.name}: {exc}")
                recorder = current().usage
                if recorder is not None:
                    recorder.count(recorder.errors, f"source:{self.agents[name].source.name}")
        if failures and len(failures) == len(names):
            raise StepFailed("; ".join(failures))
        for failure in failures:
            record_note(f"deliberation passed over a failing source ({failure})")
        return found

    def readable(self, name: str, evidence: Sequence[Evidence]) -> list[Evidence]:
        """The passages of ``evidence`` agent ``name`` may re-read: a precedent (a past claim and its ruling)
        only when the agent is the one whose source gives precedents (``memory``). Another agent's verifier
        would take a claim ruled FALSE for a statement of fact (``nli``), or lean on the ruling the memory
        agent already speaks for, so that it counts twice (an LLM). The decision-maker of LLM roles still sees
        precedents among the pooled evidence."""
        agent = self.agents[name]
        if agent.source.gives_precedents and agent.verifier.reads_precedents:
            return list(evidence)
        return [e for e in evidence if precedent_of(e) is None]

    async def read(self, name: str, evidence: Sequence[Evidence]) -> Assessment:
        """Agent ``name``'s verifier on ``evidence`` (raised to read the pooled passages whole)."""
        verifier = self.agents[name].verifier
        evidence = self.readable(name, evidence)
        limit, wanted = verifier.options().get("max_sentences"), SENTENCES_PER_PASSAGE * len(evidence)
        if isinstance(limit, int) and limit < wanted:
            verifier = verifier.configure(max_sentences=min(wanted, max(limit, MAX_REREAD_SENTENCES)))
        self._charge(f"verifier:{verifier.name}")
        assessment = await self._timed(
            f"verifier {verifier.name}", call_plugin(verifier, "judge", self.claim, evidence)
        )
        if not isinstance(assessment, Assessment):
            raise StepFailed(f"judge() must return an Assessment, got {type(assessment).__name__}")
        return assessment

    async def rejudge(self, name: str, evidence: Sequence[Evidence], *, as_agent: str) -> Judgment:
        """Agent ``name``'s verifier re-reads ``evidence``; the judgment is ``as_agent``'s."""
        evidence = self.readable(name, evidence)
        if not evidence:
            return Judgment(as_agent, None, error="no evidence to re-read")
        assessment = await self.read(name, evidence)
        shown = assessment.evidence if assessment.evidence is not None else tuple(evidence)
        return self._mark(
            Judgment(
                agent=as_agent,
                factuality=assessment.factuality,
                confidence=assessment.confidence if assessment.factuality is not None else 0.0,
                rationale=valid_unicode(str(assessment.rationale)),
                evidence=tuple(shown),
                signals=assessment.signals,
            )
        )

    # --- the actions the floor takes itself ---

    async def verify(self, action: Action) -> DeliberationStep:
        """Independent evidence: an agent not yet asked, else the leader's source deeper, past what was seen."""
        unasked = [n for n in self.agents if n not in self.held and n not in self.out]
        if unasked:
            name = self.policy.lead(unasked, self.alpha)
            self._charge(None, 2)  # a retrieval and a reading, counted in usage by the agent's own call
            judgment = await self._ask(self.agents[name], current().usage or UsageRecorder())
            self._seen(judgment.evidence)
            return step_of(action, name, judgment=judgment, evidence=judgment.evidence)
        found = await self.retrieve(self.leader, self.claim.search_queries(), deeper=True)
        if not found:
            return step_of(action, self.leader, critique=Critique("no independent evidence found"))
        judgment = await self.rejudge(self.leader, found, as_agent=f"{self.leader}:verify")
        return step_of(action, self.leader, judgment=judgment, evidence=found, inputs=self.ids(found))

    async def diversify(self, action: Action) -> DeliberationStep:
        """A new query: the last critique's, else the claim's key terms; searched in every asked source."""
        asked = [c.query for c in reversed(self.critiques) if c.query]
        searched = {s.query for s in self.steps}
        query = next((q for q in asked if q not in searched), None) or key_terms(self.claim.text)
        found = await self.retrieve_each(self.sources_asked(), (query,), deeper=True)
        return step_of(action, "every source", query=query, evidence=found)

    async def do(self, action: Action) -> DeliberationStep:
        """Take ``action``: run it in a usage record of its own, then record, apply and announce the step."""
        child, started = UsageRecorder(), time.perf_counter()
        self._step_calls = 0
        try:
            with using(usage=child):
                step = await self._dispatch(action)
            if not isinstance(step, DeliberationStep):
                raise StepFailed(f"the {action.kind} role returned {type(step).__name__}, not a DeliberationStep")
            if step.judgment is not None and not isinstance(step.judgment, Judgment):
                raise StepFailed(f"the {action.kind} role's judgment is a {type(step.judgment).__name__}")
        except BudgetReachedError as exc:
            step = step_of(action, "", error=f"budget: {exc}")
        except CapReached as exc:
            step = step_of(action, "", error=str(exc))
        except StepFailed as exc:
            step = step_of(action, "", error=str(exc))
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            if raise_errors_requested():
                raise
            step = step_of(action, "", error=f"{type(exc).__name__}: {exc}")
        finally:
            self.recorder.absorb(child)
        step = replace(
            step,
            number=len(self.steps) + 1,
            cost=StepCost(
                calls=self._step_calls,
                passages=child.calls.get("nli:pairs", 0),
                llm_calls=child.llm_calls,
                tokens=child.prompt_tokens + child.completion_tokens,
                cost_usd=round(child.cost_usd, 6),
                seconds=round(time.perf_counter() - started, 4),
            ),
        )
        self.recorder.count(self.recorder.calls, f"deliberation:{action.kind}")
        if step.error is None and self.repeats(step) is not None:
            return replace(step, number=0)  # not recorded: the loop stops on it
        step = self._apply(step)
        if self.on_step is not None:
            self.on_step(step)
        return step

    async def _dispatch(self, action: Action) -> DeliberationStep:
        if action.kind == "verify":
            return await self.verify(action)
        if action.kind == "diversify":
            return await self.diversify(action)
        role: Callable[[Floor, Action], Awaitable[DeliberationStep]] = getattr(self.roles, action.kind)
        return await role(self, action)

    def overturns(self, judgment: Judgment, standing: Sequence[Judgment]) -> bool:
        """Whether a ruling may take the place of ``standing``: it gave a verdict and, where it goes against
        theirs, it is at least as sure as the surest of them (``overturn = "surer"``). For roles that re-read
        with the agents' own verifiers (:attr:`Roles.same_reader`), it must also rest on a passage the leader
        did not read in the first round (:meth:`rests_on_new_evidence`): re-reading what it read, the same
        reader could only repeat its reading, and more surely; and it never gives a verdict where every
        judgment it would replace abstained."""
        if judgment.abstained:
            return False  # a ruling that found nothing keeps what it would replace
        if self.roles.same_reader and not self.rests_on_new_evidence(judgment, self.leader):
            return False  # the same reader on the same passage: neither surer nor the other way
        if self.roles.same_reader and all(j.abstained for j in standing):
            # Read deeper, the offline roles' new verdicts on a claim the first round could not answer were wrong
            # more often than right where they said FALSE (issue 39, docs/deliberation.md): the rule's
            # thresholds hold for the first round's evidence, not for three times as much.
            return False
        against = [j.confidence for j in standing if not j.abstained and j.factuality != judgment.factuality]
        return self.policy.overturn == "always" or not against or judgment.confidence >= max(against)

    def rests_on_new_evidence(self, judgment: Judgment, reader: str) -> bool:
        """Whether the passage ``judgment`` decided on (its first) is one agent ``reader``'s first-round
        judgment did not read: another agent's passage, or one the deliberation found."""
        if not judgment.evidence:
            return False
        return seen_key(judgment.evidence[0].url, judgment.evidence[0].text) not in self._read_by.get(reader, set())

    def repeats(self, step: DeliberationStep) -> DeliberationStep | None:
        """The earlier step ``step`` repeats word for word (:func:`_same_step`), or None: such a step adds
        nothing, and deliberation stops rather than record it again. For roles that re-read with the agents'
        own verifiers, what a step was shown does not make it new: the same reader rules the same way."""
        return next((s for s in self.steps if _same_step(s, step, shown=not self.roles.same_reader)), None)

    def _apply(self, step: DeliberationStep) -> DeliberationStep:
        judgment = step.judgment
        # The leader's own source read deeper (verify, when no agent is left to ask) rules over what is held, as
        # a decision-maker does: not an independent agent's first answer.
        deeper = step.action == "verify" and step.actor == self.leader  # not an unasked agent's first answer
        if judgment is not None and step.error is None and (step.action == "arbitrate" or step.replaces or deeper):
            replaced = [self.held[str(step.replaces)]] if step.replaces in self.held else []
            standing = list(self.held.values()) if step.action == "arbitrate" or deeper else replaced
            if not self.overturns(judgment, standing):
                step = replace(step, applied=False)
        self.steps.append(step)
        if step.critique is not None:
            self.critiques.append(step.critique)
        self.found += [e for e in step.evidence if e not in self.found]
        if judgment is None or step.error is not None or not step.applied:
            return step
        if step.action == "arbitrate":
            self.held[ARBITER] = replace(judgment, agent=ARBITER)
        elif step.replaces is not None:
            self.held[step.replaces] = replace(judgment, agent=step.replaces)
        else:
            self.held[judgment.agent] = judgment
            lead = self.held.get(self.leader)
            if judgment.agent in self.agents and not judgment.abstained and (lead is None or lead.abstained):
                self.leader = judgment.agent  # the leader found nothing: the first agent that did leads
        return step

    # --- the whole deliberation ---

    async def run(self, until: float | None = None) -> tuple[tuple[Judgment, ...], Deliberation]:
        """Deliberate until the policy stops, a cap or the budget is reached, a step fails or ``until`` (the
        event loop's clock) passes; the judgments to score and the record.

        A policy whose ``gate``, ``next_action`` or ``final`` raises or answers nonsense ends deliberation as a
        failing step does: the claim keeps the judgments held then. (A policy that never returns from a
        synchronous call cannot be stopped: ``gate`` and ``next_action`` must be quick and pure.)"""
        start = self.state()
        options = {k: v for k, v in self.policy.options().items() if k != "name"}
        try:
            gated = self.policy.opening(start)
        except Exception as exc:
            if raise_errors_requested():
                raise
            record = Deliberation(self.policy.name, options, start.to_dict(), None, (), _policy_error("gate", exc))
            return self.first, record
        if gated is None:
            record = Deliberation(self.policy.name, options, start.to_dict(), None, (), "settled in the first round")
            return self.first, record
        stopped = ""
        try:
            async with asyncio.timeout_at(until):
                stopped = await self._loop()
        except TimeoutError:
            stopped = "deadline: deliberation was cut short; the claim keeps the judgments it had"
            note = f"the deadline cut deliberation short on claim {self.claim.id or self.claim.text[:60]!r}"
            self.recorder.notes.append(note)
        judgments = self._final()
        kept = {id(j) for j in judgments}
        replaced = tuple(j for j in self.first if id(j) not in kept)
        record = Deliberation(
            self.policy.name, options, start.to_dict(), str(gated), tuple(self.steps), stopped, replaced
        )
        return judgments, record

    def _final(self) -> tuple[Judgment, ...]:
        """The judgments the scorer reads: the policy's choice of those held, or all of them (also when its
        choice names none it holds, or raises)."""
        try:
            final = self.policy.final(self.held, self.leader)
        except Exception:
            if raise_errors_requested():
                raise
            final = None
        chosen = tuple(self.held[n] for n in final or () if n in self.held)
        return chosen or tuple(self.held.values())

    async def _loop(self) -> str:
        while True:
            try:
                action = self.policy.next_action(self.state(), self.steps)
                if not isinstance(action, Action):
                    raise TypeError(f"next_action() must return an Action, got {type(action).__name__}")
            except Exception as exc:
                if raise_errors_requested():
                    raise
                return _policy_error("next_action", exc)
            if action.kind == "stop":
                return action.why
            if len(self.steps) >= self.policy.max_steps:
                return f"step cap reached (max_steps = {self.policy.max_steps})"
            if (spending := current().spending) is not None and (why := spending.reached()) is not None:
                return f"budget: {why}"
            step = await self.do(action)
            if step.error is None and step.number == 0:
                return f"nothing new: the next {action.kind} repeated an earlier step word for word"
            if step.error is not None:
                if step.error.startswith(("budget", "call cap")):
                    return step.error
                return f"error: {step.error}"


def _same_step(a: DeliberationStep, b: DeliberationStep, *, shown: bool) -> bool:
    """Whether two steps say the same thing, as a reader of the transcript sees it: a ruling by the same actor
    with the same verdict, confidence, rationale and deciding passage, or a critique or search with the same
    words, query and passages (their numbers and costs aside). With ``shown``, a step that was shown something
    new (a model's leader given a supporter's hints) is a new step even where its words are the same."""

    def said(step: DeliberationStep) -> tuple[object, ...]:
        judgment = step.judgment
        inputs = step.inputs if shown else ()
        if judgment is not None:
            first = (judgment.evidence[0].url, judgment.evidence[0].text) if judgment.evidence else None
            return (
                step.action,
                step.actor,
                judgment.factuality,
                judgment.confidence,
                judgment.rationale,
                first,
                inputs,
            )
        critique = step.critique.to_dict() if step.critique is not None else None
        passages = tuple((e.url, e.text) for e in step.evidence)
        return (step.action, step.role, step.actor, step.query, repr(critique), passages, inputs)

    return said(a) == said(b)


def _policy_error(where: str, exc: Exception) -> str:
    return f"error: the policy's {where} failed: {type(exc).__name__}: {exc}"
