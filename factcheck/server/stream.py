"""A check as a sequence of events, under a deadline.

The :class:`~factcheck.Checker` answers a whole text at once. A browser
extension wants to paint claims as they resolve, and a server must answer
in bounded time, so the server drives the check from the Checker's public
pieces instead: its extractor splits the text, each claim is checked with
``checker.acheck(text, claims=[claim])`` (the agents, routing and cache as in
any check), and the text is scored over all claims with the checker's scorer
and label rule, exactly as :func:`factcheck.scoring.score_text` scores a
whole check. Events, in order:

- ``claims``: the extracted claims, before any is judged;
- ``claim``: one claim's verdict, as soon as it is done (in completion order);
- ``verdict``: the checked text (``TextVerdict.to_dict()``, ``judged_by`` included) with ``partial``.

When the deadline passes, claims not yet done get an abstaining judgment from
each agent saying so, the verdict is marked ``"partial": true`` and a usage
note says how many claims were cut off; nothing hangs.
"""

from __future__ import annotations

import asyncio
import time
from collections import Counter
from collections.abc import AsyncGenerator, Awaitable, Callable, Iterable, Sequence
from dataclasses import dataclass, replace
from typing import Any, TypeVar

from factcheck.claimtime import reference_time
from factcheck.errors import FactcheckError, InputError, raise_errors_requested
from factcheck.interrupt import Interrupt, current_interrupt
from factcheck.pipeline import Checker
from factcheck.scoring import score_text
from factcheck.types import Claim, ClaimVerdict, Judgment, SkippedSentence, Usage
from factcheck.usage import UsageRecorder

T = TypeVar("T")


@dataclass(frozen=True)
class CheckEvent:
    """One step of a check: ``name`` is ``claims``, ``claim`` or ``verdict``; ``data`` is its JSON."""

    name: str
    data: dict[str, Any]


def merge_usage(usages: Iterable[Usage], total_s: float) -> Usage:
    """One usage for several checks of the same text: counts and stage times added, notes kept once.

    ``total`` is the wall time of the whole request, not the sum of the claims' totals (they overlap).
    """
    calls: Counter[str] = Counter()
    hits: Counter[str] = Counter()
    errors: Counter[str] = Counter()
    wall: dict[str, float] = {}
    notes: dict[str, None] = {}
    llm_calls = prompt = completion = searches = estimated = 0
    cost = 0.0
    for usage in usages:
        calls.update(usage.calls)
        hits.update(usage.cache_hits)
        errors.update(usage.errors)
        for stage, seconds in usage.wall_s.items():
            if stage != "total":
                wall[stage] = wall.get(stage, 0.0) + seconds
        notes.update(dict.fromkeys(usage.notes))
        llm_calls += usage.llm_calls
        prompt += usage.prompt_tokens
        completion += usage.completion_tokens
        estimated += usage.estimated_llm_calls
        searches += usage.search_calls
        cost += usage.cost_usd
    wall_s = {stage: round(s, 6) for stage, s in wall.items()}
    wall_s["total"] = round(total_s, 6)
    return Usage(
        calls=dict(calls),
        cache_hits=dict(hits),
        errors=dict(errors),
        wall_s=wall_s,
        llm_calls=llm_calls,
        prompt_tokens=prompt,
        completion_tokens=completion,
        estimated_llm_calls=estimated,
        search_calls=searches,
        cost_usd=round(cost, 6),
        notes=tuple(notes),
    )


def _abstentions(checker: Checker, reason: str) -> tuple[Judgment, ...]:
    return tuple(Judgment(agent.name, None, error=reason) for agent in checker.agents)


async def _stoppable(work: Awaitable[T]) -> T:
    """``await work``; if this is cancelled (the client went away) or times out (the deadline), the synchronous
    work it runs in worker threads (spaCy splitting the text) is stopped too, not left to spend the CPU."""
    interrupt = Interrupt()
    token = current_interrupt.set(interrupt)
    try:
        return await work
    except BaseException:
        interrupt.request()
        raise
    finally:
        current_interrupt.reset(token)


PREPARE_SHARE_OF_DEADLINE = 1 / 3  # how much of the deadline a check may wait for a component's prepare()


async def check_events(
    checker: Checker,
    text: str,
    deadline_s: float,
    *,
    max_claims: int | None = None,
    admit: Callable[[int], None] | None = None,
    as_of: str | None = None,
) -> AsyncGenerator[CheckEvent, None]:
    """Check ``text`` with ``checker``, yielding events as it goes; the last is always ``verdict``.

    Raises a :class:`~factcheck.FactcheckError` for a problem of settings or
    input (before or during the check); any other failure of one claim makes
    its agents abstain with the error, and the other claims go on. At most
    ``max_claims`` claims are checked (a note says how many were left out);
    ``admit(number of claims)`` is called before any is, and may raise to refuse. ``as_of`` is when
    the text was written (ISO 8601; default now), the same for every claim's check.
    """
    try:
        written = reference_time(as_of).isoformat()
    except ValueError as exc:
        raise InputError(str(exc)) from None
    loop = asyncio.get_running_loop()
    started = time.perf_counter()
    deadline = loop.time() + deadline_s
    recorder = UsageRecorder()
    late = f"deadline of {deadline_s:g}s reached before this claim was checked"
    claims: list[Claim] = []
    skipped: tuple[SkippedSentence, ...] = ()  # sentences the extractor did not send, and why
    try:
        async with asyncio.timeout_at(deadline):
            # The server's limit goes to the extraction, so one note says how many were found and how many kept.
            extraction = await _stoppable(
                checker.extraction(text, recorder, max_claims=max_claims, max_claims_by="the server's max_claims")
            )
            claims, skipped = list(extraction.claims), extraction.skipped
    except TimeoutError:
        recorder.notes.append(f"deadline of {deadline_s:g}s reached during claim extraction: no claim was checked")
        partial = True
    else:
        partial = False
    if admit is not None:
        admit(len(claims))
    yield CheckEvent("claims", {"claims": [claim.to_dict() for claim in claims]})

    limit = asyncio.Semaphore(checker.settings.max_concurrency)
    prepare_wait_s = deadline_s * PREPARE_SHARE_OF_DEADLINE
    languages: list[str | None] = []  # each claim's check detects the same text's language

    async def check_one(claim: Claim) -> tuple[ClaimVerdict, Usage]:
        async with limit:
            try:
                # A component still preparing is waited for a share of the deadline at most, so the agents
                # that are ready answer before it.
                verdict = await checker.acheck(text, claims=[claim], as_of=written, prepare_wait_s=prepare_wait_s)
                languages.append(verdict.language)
            except FactcheckError:
                raise
            except Exception as exc:
                if raise_errors_requested():
                    raise
                reason = f"check failed: {type(exc).__name__}: {exc}"
                return ClaimVerdict(claim, _abstentions(checker, reason)), Usage(errors={"server:claim": 1})
        return verdict.claims[0], verdict.usage

    tasks = {asyncio.create_task(check_one(claim)): index for index, claim in enumerate(claims)}
    done_claims: dict[int, ClaimVerdict] = {}
    usages: list[Usage] = [recorder.freeze()]
    pending = set(tasks)
    try:
        while pending:
            remaining = deadline - loop.time()
            if remaining <= 0:
                break
            done, pending = await asyncio.wait(pending, timeout=remaining, return_when=asyncio.FIRST_COMPLETED)
            for task in sorted(done, key=tasks.__getitem__):
                claim_verdict, usage = task.result()  # a FactcheckError stops the check here
                done_claims[tasks[task]] = claim_verdict
                usages.append(usage)
                yield CheckEvent("claim", {"index": tasks[task], "claim": claim_verdict.to_dict()})
    finally:
        for task in pending:
            task.cancel()
        if pending:
            await asyncio.gather(*pending, return_exceptions=True)
    if pending:
        partial = True
        usages.append(
            Usage(notes=(f"deadline of {deadline_s:g}s reached: {len(pending)} of {len(claims)} claims not checked",))
        )
    judged: Sequence[tuple[Claim, Sequence[Judgment]]] = [
        # A checked claim as its check returned it (with its time); one not reached as extracted.
        (done_claims[i].claim, done_claims[i].judgments) if i in done_claims else (claim, _abstentions(checker, late))
        for i, claim in enumerate(claims)
    ]
    usage = merge_usage(usages, time.perf_counter() - started)
    verdict = replace(
        score_text(text, judged, checker.scorer, checker.labels, usage),
        language=next(iter(languages), None),
        skipped=skipped,
        as_of=written,
        judged_by=checker.judged_by(),
    )
    yield CheckEvent("verdict", {**verdict.to_dict(), "partial": partial})
