"""Running a batch: documents in, one output line per document out, within a budget.

One event loop drives everything. A reader task streams documents (in a
thread: HTML extraction is CPU work) into a small queue; ``concurrency``
workers take them one at a time, hand each to the engine (a local
:class:`~factcheck.pipeline.Checker`, or Ray workers) and append its line to
the output as soon as it is done. Memory stays flat however long the input.

Sharing one loop and one Checker is what makes the per-service limits hold
across documents: LLM and HTTP concurrency limits are kept per event loop and
endpoint (:func:`factcheck.net.host_limit`), so 64 documents in flight still
send at most ``[llm] max_concurrency`` requests at once to one model server.

Budgets are checked before each paid request (a :class:`~factcheck.usage.Spending`
shared by every check of the run): once ``--max-llm-calls`` calls are made no
further call starts, once ``--max-searches`` search requests are sent (Serper,
SerpAPI, MediaWiki: each retry is one) none is sent, and once ``--max-cost`` is
spent none starts either (the calls already in flight may add their cost). Once
any limit is reached, no request of either kind starts. A document whose check was
cut short by the budget gets no line, so a rerun with a larger budget checks it;
no new document starts, and the result says how many are left and what went out
(:meth:`~factcheck.usage.Spending.sent`, counted as each request was sent).
"""

from __future__ import annotations

import asyncio
import calendar
import hashlib
import time
from collections.abc import AsyncIterator, Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from itertools import islice
from typing import Any, Protocol

from factcheck.batch.inputs import Document
from factcheck.batch.output import duplicate_record, failure_record, is_failure, success_record
from factcheck.context import using
from factcheck.dates import evidence_date
from factcheck.errors import ConfigError, InputError
from factcheck.pipeline import Checker
from factcheck.resume import AppendLog
from factcheck.switches import raise_errors_requested
from factcheck.types import Usage
from factcheck.usage import Spending, answers_from_cache, limit_reached


async def check_document(checker: Checker, doc: Document) -> dict[str, Any]:
    """The output line for one document: its verdict, or the error that stopped it.

    This is the unit of work of every engine (locally, and inside each Ray
    worker). It never raises for a bad document: one failure must not stop a
    batch. A ConfigError does stop it: a setup that is wrong (a missing model,
    an unknown option) would fail every document the same way, so the user
    should fix it rather than collect a failed line per document.
    """
    if doc.error is not None:
        return failure_record(doc, "InputError", doc.error)
    try:
        as_of = document_date(doc)
    except InputError as exc:
        return failure_record(doc, "InputError", str(exc))
    try:
        verdict = await checker.acheck(doc.text, as_of=as_of)
    except ConfigError:
        raise
    except Exception as exc:
        if raise_errors_requested():
            raise
        return failure_record(doc, type(exc).__name__, str(exc))
    return success_record(doc, verdict.to_dict())


DATE_FIELDS = ("date", "as_of")  # a document's field saying when it was written


def document_date(doc: Document) -> str | None:
    """When ``doc`` was written, from its ``date`` (or ``as_of``) field, as an ISO date for ``as_of``.

    ISO 8601 or as a search result dates a page ("Mar 3, 2021"); a year or a month alone means its last day.
    A field that holds no date is an InputError: checking the document as of today would judge it against
    the wrong time without saying so.
    """
    raw = next((doc.meta[key] for key in DATE_FIELDS if doc.meta.get(key) not in (None, "")), None)
    if raw is None:
        return None
    day = evidence_date(str(raw), datetime.now(UTC).isoformat())
    if day is None:
        raise InputError(f"date {str(raw)[:40]!r} is not a date (use ISO 8601, e.g. 2014-05-10)")
    if len(day) == 4:
        return f"{day}-12-31"
    if len(day) == 7:
        year, month = int(day[:4]), int(day[5:])
        return f"{day}-{calendar.monthrange(year, month)[1]:02d}"
    return day


class Engine(Protocol):
    """Where documents are checked. ``slot`` (0 .. concurrency-1) names the worker asking,
    so an engine with several workers can give each slot its own."""

    async def check(self, doc: Document, slot: int) -> dict[str, Any]:
        """The output line for ``doc``."""
        ...


def cut_by_budget(record: dict[str, Any]) -> bool:
    """True when a paid call of this document's check was refused by the budget (its verdict is incomplete)."""
    usage = record.get("usage")
    return isinstance(usage, dict) and bool((usage.get("errors") or {}).get("budget"))


@dataclass
class LocalEngine:
    """Checks in this process, every document through the one ``checker``."""

    checker: Checker

    async def check(self, doc: Document, slot: int) -> dict[str, Any]:
        return await check_document(self.checker, doc)


@dataclass(frozen=True)
class Budget:
    """Limits on what a run may spend (``None``: no limit)."""

    max_cost_usd: float | None = None
    max_llm_calls: int | None = None
    max_searches: int | None = None

    def spending(self) -> Spending:
        """The per-request limits of this budget, for the checks' context (:class:`~factcheck.context.CheckContext`)."""
        return Spending(self.max_llm_calls, self.max_cost_usd, self.max_searches)

    def exhausted(self, tally: Tally) -> str | None:
        """Why no new document may start, or ``None`` while there is budget left."""
        return limit_reached(
            self.max_llm_calls, self.max_cost_usd, tally.llm_calls, tally.cost_usd, self.max_searches, tally.searches
        )


def lookups(usage: Usage) -> tuple[int, int]:
    """``(hits, misses)``: answers served from a cache, and answers made (LLM calls, searches, judgments)."""
    hits = answers_from_cache(usage)  # loading a prebuilt search index is no answer: out of the hit rate
    judged = sum(n for key, n in usage.calls.items() if key.startswith("verifier:"))
    return hits, usage.llm_calls + usage.search_calls + judged


@dataclass
class Tally:
    """Running totals of this run, from the usage of each finished document."""

    documents: int = 0
    failed: int = 0
    llm_calls: int = 0
    searches: int = 0
    cost_usd: float = 0.0
    cache_hits: int = 0
    cache_misses: int = 0
    started: float = field(default_factory=time.monotonic)

    def add(self, record: dict[str, Any]) -> None:
        """Count one finished document."""
        usage = Usage.from_dict(record.get("usage"))
        self.documents += 1
        self.failed += is_failure(record)
        self.llm_calls += usage.llm_calls
        self.searches += usage.search_calls
        self.cost_usd += usage.cost_usd
        hits, misses = lookups(usage)
        self.cache_hits += hits
        self.cache_misses += misses

    @property
    def cache_hit_rate(self) -> float | None:
        """Of the answers needed (LLM answers, searches, judgments), the share served from a cache."""
        needed = self.cache_hits + self.cache_misses
        return self.cache_hits / needed if needed else None

    @property
    def rate(self) -> float:
        """Documents per second so far."""
        elapsed = time.monotonic() - self.started
        return self.documents / elapsed if elapsed > 0 else 0.0


@dataclass
class BatchResult:
    """How a run ended: ``stopped`` says why it stopped early (a budget), ``None`` when it ran out of work;
    ``spending`` what its requests spent, counted as each was sent (documents cut short included)."""

    tally: Tally
    stopped: str | None = None
    spending: Spending | None = None


@asynccontextmanager
async def _writer(log: AppendLog) -> AsyncIterator[Callable[[dict[str, Any]], Any]]:
    """An awaitable ``write(record)`` that runs the (fsync-ing) append on its own thread,
    so the event loop keeps serving the checks and the writes keep their order."""
    pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="factcheck-batch-writer")
    loop = asyncio.get_running_loop()
    try:
        yield lambda record: loop.run_in_executor(pool, log.write, record)
    finally:
        pool.shutdown(wait=True)


async def run_batch(
    documents: Iterator[Document],
    log: AppendLog,
    engine: Engine,
    *,
    concurrency: int = 4,
    budget: Budget = Budget(),
    on_record: Callable[[dict[str, Any], Tally], None] = lambda record, tally: None,
) -> BatchResult:
    """Check ``documents`` with ``concurrency`` in flight, appending each one's line to ``log``.

    Two documents with the same text in flight at once are checked once (the
    second gets a copy of the first's verdict); later repeats of a claim are
    answered by the Checker's cache.
    """
    tally = Tally()
    spending = budget.spending()
    result = BatchResult(tally, spending=spending)
    queue: asyncio.Queue[Document | None] = asyncio.Queue(maxsize=2 * concurrency)
    in_flight: dict[str, asyncio.Future[dict[str, Any]]] = {}

    reader_failed: list[BaseException] = []

    async def read() -> None:
        # Its own thread, a chunk per hop: the default executor is busy with the checks' own work.
        loop = asyncio.get_running_loop()
        with ThreadPoolExecutor(max_workers=1, thread_name_prefix="factcheck-batch-reader") as pool:
            try:
                while chunk := await loop.run_in_executor(pool, list, islice(documents, concurrency)):
                    for doc in chunk:
                        await queue.put(doc)
            except Exception as exc:  # an unreadable input: stop the workers, then report it
                reader_failed.append(exc)
        for _ in range(concurrency):
            await queue.put(None)

    async def check(doc: Document, slot: int) -> dict[str, Any]:
        if doc.error is not None:
            return await engine.check(doc, slot)
        # Same text and same date: the same check (a text written at another time is judged against another).
        dated = "\0".join(str(doc.meta.get(k) or "") for k in DATE_FIELDS)
        key = hashlib.sha256(f"{doc.text}\0{dated}".encode("utf-8", "surrogatepass")).hexdigest()
        if key in in_flight:
            return duplicate_record(doc, await asyncio.shield(in_flight[key]))
        future: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        in_flight[key] = future
        try:
            record = await engine.check(doc, slot)
            future.set_result(record)
            return record
        finally:
            if not future.done():  # cancelled: a duplicate waiting on it is cancelled too
                future.cancel()
            del in_flight[key]

    async def work(slot: int, write: Callable[[dict[str, Any]], Any]) -> None:
        while True:
            result.stopped = result.stopped or spending.reached() or budget.exhausted(tally)
            if result.stopped:
                return
            doc = await queue.get()
            if doc is None:
                return
            record = await check(doc, slot)
            if cut_by_budget(record):  # not finished: no line, so a rerun with more budget checks it
                result.stopped = result.stopped or spending.reached() or "the budget was reached"
                return
            await write(record)
            tally.add(record)
            on_record(record, tally)

    # Set before the tasks start, so every check (and every model call in it) charges this run's budget.
    with using(spending=spending):
        async with _writer(log) as write:
            tasks = [
                asyncio.create_task(read()),
                *(asyncio.create_task(work(slot, write)) for slot in range(concurrency)),
            ]
            try:
                await asyncio.gather(*tasks[1:])
            finally:
                for task in tasks:
                    task.cancel()
                await asyncio.gather(*tasks, return_exceptions=True)
    if reader_failed:
        raise reader_failed[0]
    return result
