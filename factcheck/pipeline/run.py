"""One check, from text to verdict (:meth:`factcheck.pipeline.Checker.stream`): its state (usage record,
concurrency limit, the agents out of it, the deadline), its task, and the order of its steps: extract,
:class:`~factcheck.events.ClaimsFound`, read the text once, prepare the agents, judge the claims
concurrently (ask, deliberate, score: :class:`~factcheck.events.ClaimChecked` each), and the verdict
(:class:`~factcheck.events.TextChecked`)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator, Callable
from datetime import datetime

from factcheck.claimtime import marked, with_times
from factcheck.context import current, enter
from factcheck.errors import FactcheckError
from factcheck.events import CheckEvent, ClaimChecked, ClaimsFound, TextChecked
from factcheck.interrupt import Interrupt
from factcheck.language import Detection
from factcheck.language import detect as detect_language
from factcheck.pipeline.ask import judge_claim
from factcheck.pipeline.components import Components
from factcheck.pipeline.deliberate import deliberate
from factcheck.pipeline.extract import extract_claims
from factcheck.pipeline.prepare import prepare_agents, refuse_unread_language
from factcheck.pipeline.verdict import abstained_verdict, abstentions, claim_verdict, text_checked
from factcheck.switches import raise_errors_requested
from factcheck.types import Claim, ClaimVerdict, SkippedSentence
from factcheck.usage import UsageRecorder


class CheckRun:
    """The state of one check: its usage record, concurrency limit, the agents out of it and why, and the
    deadline."""

    def __init__(
        self,
        checker: Components,
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

    async def events(self, given: list[Claim] | None) -> AsyncGenerator[CheckEvent, None]:
        """The check's events, as :meth:`~factcheck.pipeline.Checker.stream` yields them. Nothing is judged
        before the consumer asks for the event after :class:`ClaimsFound`."""
        # The check runs in a task of its own, in a copy of this context: the state its components read
        # (usage, LLM settings, cache, the text's time) is set there once, whichever task reads the events.
        events: asyncio.Queue[CheckEvent | BaseException] = asyncio.Queue()
        go = asyncio.Event()
        task = asyncio.create_task(self.drive(given, events.put_nowait, go))
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
                self.interrupt.request()  # stop synchronous work in worker threads (spaCy splitting) too
                task.cancel()
            await asyncio.gather(task, return_exceptions=True)

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
                            extraction = await extract_claims(checker, text, recorder, self.cap)
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
        return text_checked(
            checker,
            text,
            judged,
            recorder,
            reference=self.reference,
            language=language,
            skipped=skipped,
            partial=partial,
            not_reached=not_reached,
        )

    def _not_reached(self, claim: Claim) -> ClaimVerdict:
        """A claim the deadline came before: each agent abstains, saying so."""
        return abstained_verdict(self.checker, claim, self._late(" before this claim was checked"))

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
            self.broken.update(await prepare_agents(checker, recorder, self.prepare_wait_s))
            refused = refuse_unread_language(checker, detection, self.broken, recorder)
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
            judgments = await judge_claim(checker, claim, self.limit, recorder, self.broken)
        except FactcheckError:
            raise
        except Exception as exc:  # not an agent's failure (those abstain in ask): the claim's own
            if raise_errors_requested():
                raise
            recorder.count(recorder.errors, "claim")
            judgments = abstentions(checker, f"check failed: {type(exc).__name__}: {exc}")
        # Passages dated far from the time their claim speaks of are marked (docs/time.md).
        judgments = tuple(marked(j, claim, self.reference) for j in judgments)
        record = None
        if checker.deliberation.active:
            judgments, record = await deliberate(
                checker,
                claim,
                index,
                judgments,
                reference=self.reference,
                limit=self.limit,
                broken=self.broken,
                recorder=recorder,
                emit=emit,
                deadline=self.deadline,
                deadline_s=self.deadline_s,
            )
        return claim_verdict(checker, claim, judgments, record, recorder)


def _read_text(text: str, claims: list[Claim], reference: datetime) -> tuple[list[Claim], Detection | None]:
    """``claims`` with their times resolved against ``reference``, and the language of ``text``."""
    return with_times(claims, reference), detect_language(text)
