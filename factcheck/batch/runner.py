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

Budgets are checked before each document starts: once spending reaches
``--max-cost`` or ``--max-llm-calls``, no new document starts, the ones in
flight finish (so a run can overshoot by what they cost), and the result says
how many are left.
"""

from __future__ import annotations

import asyncio
import hashlib
import time
from collections.abc import AsyncIterator, Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from itertools import islice
from typing import Any, Protocol

from factcheck.batch.inputs import Document
from factcheck.batch.output import duplicate_record, failure_record, is_failure, success_record
from factcheck.errors import ConfigError, raise_errors_requested
from factcheck.pipeline import Checker
from factcheck.resume import AppendLog
from factcheck.types import Usage


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
        verdict = await checker.acheck(doc.text)
    except ConfigError:
        raise
    except Exception as exc:
        if raise_errors_requested():
            raise
        return failure_record(doc, type(exc).__name__, str(exc))
    return success_record(doc, verdict.to_dict())


class Engine(Protocol):
    """Where documents are checked. ``slot`` (0 .. concurrency-1) names the worker asking,
    so an engine with several workers can give each slot its own."""

    async def check(self, doc: Document, slot: int) -> dict[str, Any]:
        """The output line for ``doc``."""
        ...


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

    def exhausted(self, tally: Tally) -> str | None:
        """Why no new document may start, or ``None`` while there is budget left."""
        if self.max_cost_usd is not None and tally.cost_usd >= self.max_cost_usd:
            return f"--max-cost {self.max_cost_usd:g} reached (${tally.cost_usd:.4f} spent)"
        if self.max_llm_calls is not None and tally.llm_calls >= self.max_llm_calls:
            return f"--max-llm-calls {self.max_llm_calls} reached ({tally.llm_calls} calls made)"
        return None


# Cache hits that are not answers (loading a prebuilt search index) stay out of the hit rate.
NOT_ANSWERS = frozenset({"corpus-index"})


def lookups(usage: Usage) -> tuple[int, int]:
    """``(hits, misses)``: answers served from a cache, and answers made (LLM calls, searches, judgments)."""
    hits = sum(n for kind, n in usage.cache_hits.items() if kind not in NOT_ANSWERS)
    judged = sum(n for key, n in usage.calls.items() if key.startswith("verifier:"))
    return hits, usage.llm_calls + usage.search_calls + judged


@dataclass
class Tally:
    """Running totals of this run, from the usage of each finished document."""

    documents: int = 0
    failed: int = 0
    llm_calls: int = 0
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
    """How a run ended: ``stopped`` says why it stopped early (a budget), ``None`` when it ran out of work."""

    tally: Tally
    stopped: str | None = None


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
    result = BatchResult(tally)
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
        key = hashlib.sha256(doc.text.encode("utf-8", "surrogatepass")).hexdigest()
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
            result.stopped = result.stopped or budget.exhausted(tally)
            if result.stopped:
                return
            doc = await queue.get()
            if doc is None:
                return
            record = await check(doc, slot)
            await write(record)
            tally.add(record)
            on_record(record, tally)

    async with _writer(log) as write:
        tasks = [asyncio.create_task(read()), *(asyncio.create_task(work(slot, write)) for slot in range(concurrency))]
        try:
            await asyncio.gather(*tasks[1:])
        finally:
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
    if reader_failed:
        raise reader_failed[0]
    return result
