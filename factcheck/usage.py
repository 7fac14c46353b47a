"""Recording what a check costs, from anywhere inside it.

The pipeline opens a :class:`UsageRecorder` for each check and makes it the
current one (a context variable, so it follows the check's tasks and worker
threads). Components report through the ``record_*`` functions; outside a
check they do nothing.
"""

from __future__ import annotations

import threading
import time
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

from factcheck.types import Usage


class UsageRecorder:
    """Calls, cache hits, errors, LLM tokens and stage times of one check."""

    def __init__(self) -> None:
        self._lock = threading.Lock()  # components may report from worker threads
        self.calls: Counter[str] = Counter()
        self.cache_hits: Counter[str] = Counter()
        self.errors: Counter[str] = Counter()
        self.wall_s: dict[str, float] = {}
        self.notes: list[str] = []
        self.refused: dict[
            str, str
        ] = {}  # service -> why it refused for good (see factcheck.errors.ServiceRefusedError)
        self.llm_calls = self.prompt_tokens = self.completion_tokens = self.search_calls = 0
        self.estimated_llm_calls = 0
        self.cost_usd = 0.0

    def count(self, counter: Counter[str], key: str, n: int = 1) -> None:
        with self._lock:
            counter[key] += n

    @contextmanager
    def timed(self, stage: str) -> Iterator[None]:
        """Add the block's wall time to ``stage`` (summed when blocks overlap)."""
        start = time.perf_counter()
        try:
            yield
        finally:
            elapsed = time.perf_counter() - start
            with self._lock:
                self.wall_s[stage] = self.wall_s.get(stage, 0.0) + elapsed

    def freeze(self) -> Usage:
        """The immutable :class:`~factcheck.Usage` for the result."""
        with self._lock:
            return Usage(
                calls=dict(self.calls),
                cache_hits=dict(self.cache_hits),
                errors=dict(self.errors),
                wall_s={stage: round(seconds, 6) for stage, seconds in self.wall_s.items()},
                llm_calls=self.llm_calls,
                prompt_tokens=self.prompt_tokens,
                completion_tokens=self.completion_tokens,
                estimated_llm_calls=self.estimated_llm_calls,
                search_calls=self.search_calls,
                cost_usd=round(self.cost_usd, 6),
                notes=tuple(self.notes),
            )


current_usage: ContextVar[UsageRecorder | None] = ContextVar("factcheck_usage", default=None)


def record_call(key: str, n: int = 1) -> None:
    """Count a call to a component or service (``"corpus-index:build"``)."""
    if (recorder := current_usage.get()) is not None:
        recorder.count(recorder.calls, key, n)


def record_cache_hit(key: str) -> None:
    """Count an answer served from a cache instead of being computed or fetched."""
    if (recorder := current_usage.get()) is not None:
        recorder.count(recorder.cache_hits, key)


def record_llm(prompt_tokens: int, completion_tokens: int, cost_usd: float = 0.0, *, estimated: bool = False) -> None:
    """Count one LLM call with its token usage and estimated cost (``estimated``: the server reported no tokens)."""
    if (recorder := current_usage.get()) is not None:
        with recorder._lock:
            recorder.llm_calls += 1
            recorder.estimated_llm_calls += int(estimated)
            recorder.prompt_tokens += prompt_tokens
            recorder.completion_tokens += completion_tokens
            recorder.cost_usd += cost_usd


def record_note(note: str) -> None:
    """Say once in the check's ``usage.notes`` that something went differently than asked."""
    if (recorder := current_usage.get()) is not None:
        with recorder._lock:
            if note not in recorder.notes:
                recorder.notes.append(note)


def refuse(service: str, reason: str) -> None:
    """Remember for the rest of the check that ``service`` refused for good (a bad key, an unknown model)."""
    if (recorder := current_usage.get()) is not None:
        with recorder._lock:
            recorder.refused.setdefault(service, reason)


def refusal(service: str) -> str | None:
    """Why ``service`` refused earlier in this check, or ``None`` if it has not."""
    if (recorder := current_usage.get()) is not None:
        with recorder._lock:
            return recorder.refused.get(service)
    return None


def record_search() -> None:
    """Count one call to a web search service."""
    if (recorder := current_usage.get()) is not None:
        with recorder._lock:
            recorder.search_calls += 1
