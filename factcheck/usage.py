"""Recording what a check costs, from anywhere inside it.

The pipeline opens a :class:`UsageRecorder` for each check and makes it the
current one (:data:`usage_var`, a context variable, so it follows the check's
tasks and worker threads); a run's :class:`Spending` is :data:`spending_var`.
Components report through the ``record_*`` functions; outside a check they do
nothing.
"""

from __future__ import annotations

import threading
import time
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

from factcheck.errors import BudgetReachedError
from factcheck.text import plural
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

    def absorb(self, other: UsageRecorder) -> None:
        """Add what ``other`` recorded (one deliberation step's own record) to this record."""
        with other._lock:
            calls, hits, errors = Counter(other.calls), Counter(other.cache_hits), Counter(other.errors)
            wall, notes = dict(other.wall_s), list(other.notes)
            numbers = (other.llm_calls, other.prompt_tokens, other.completion_tokens, other.search_calls)
            estimated, cost = other.estimated_llm_calls, other.cost_usd
        with self._lock:
            self.calls.update(calls)
            self.cache_hits.update(hits)
            self.errors.update(errors)
            for stage, seconds in wall.items():
                self.wall_s[stage] = self.wall_s.get(stage, 0.0) + seconds
            self.notes.extend(n for n in notes if n not in self.notes)
            self.llm_calls += numbers[0]
            self.prompt_tokens += numbers[1]
            self.completion_tokens += numbers[2]
            self.search_calls += numbers[3]
            self.estimated_llm_calls += estimated
            self.cost_usd += cost

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


# Cache hits that are no answer read from a cache: loading a search index built earlier (the corpus's BM25).
INDEX_LOADS = frozenset({"corpus-index"})


def answers_from_cache(usage: Usage) -> int:
    """How many answers (judgments, searches, model answers, whole texts) ``usage`` read from a cache:
    its ``cache_hits`` without the loads of a prebuilt index (:data:`INDEX_LOADS`)."""
    return sum(n for kind, n in usage.cache_hits.items() if kind not in INDEX_LOADS)


def limit_reached(
    max_llm_calls: int | None,
    max_cost_usd: float | None,
    llm_calls: int,
    cost_usd: float,
    max_searches: int | None = None,
    searches: int = 0,
) -> str | None:
    """Why a budget of ``max_llm_calls`` calls, ``max_cost_usd`` dollars and ``max_searches`` search requests
    allows nothing more after ``llm_calls`` calls costing ``cost_usd`` and ``searches`` requests, or ``None``
    (the wording of ``--max-llm-calls`` / ``--max-cost`` / ``--max-searches``)."""
    if max_llm_calls is not None and llm_calls >= max_llm_calls:
        return f"--max-llm-calls {max_llm_calls} reached ({plural(llm_calls, 'call')} made)"
    if max_cost_usd is not None and cost_usd >= max_cost_usd:
        return f"--max-cost {max_cost_usd:g} reached (${cost_usd:.4f} spent)"
    if max_searches is not None and searches >= max_searches:
        return f"--max-searches {max_searches} reached ({plural(searches, 'search request')} sent)"
    return None


class Spending:
    """Limits on what many checks together may spend, checked before each paid call.

    A batch makes one and sets it as the spending of the context of all its checks (``context.using(spending=...)``).
    A model call first takes a slot with :meth:`charge` (so ``max_llm_calls`` is
    never exceeded, however many calls are in flight); its cost is added once
    its answer says how many tokens it took. ``max_cost_usd`` is checked before
    each call against what is spent, so it can be passed by at most the cost of
    the calls already in flight. A search request first takes a slot with
    :meth:`charge_search` (``max_searches``, counted by service); once any limit
    is reached, neither kind of request starts.
    """

    def __init__(
        self, max_llm_calls: int | None = None, max_cost_usd: float | None = None, max_searches: int | None = None
    ) -> None:
        self.max_llm_calls = max_llm_calls
        self.max_cost_usd = max_cost_usd
        self.max_searches = max_searches
        self._lock = threading.Lock()
        self.llm_calls = 0
        self.cost_usd = 0.0
        self.searches: Counter[str] = Counter()  # service -> search requests sent (each retry is one)

    def reached(self) -> str | None:
        """Why no further paid call may start, or ``None``."""
        with self._lock:
            return self._reached_locked()

    def _reached_locked(self) -> str | None:
        searches = sum(self.searches.values())
        return limit_reached(
            self.max_llm_calls, self.max_cost_usd, self.llm_calls, self.cost_usd, self.max_searches, searches
        )

    def charge(self) -> None:
        """Take a slot for one model call; BudgetReachedError when a limit is reached."""
        with self._lock:
            reason = self._reached_locked()
            if reason is not None:
                raise BudgetReachedError(f"budget: {reason}")
            self.llm_calls += 1

    def add_cost(self, cost_usd: float) -> None:
        """Count the cost of a call made."""
        with self._lock:
            self.cost_usd += cost_usd

    def charge_search(self, service: str) -> None:
        """Take a slot for one search request to ``service``; BudgetReachedError when any limit is reached
        (once a run's budget is spent, a search only feeds a check that is cut short anyway)."""
        with self._lock:
            reason = self._reached_locked()
            if reason is not None:
                raise BudgetReachedError(f"budget: {reason}")
            self.searches[service] += 1

    def sent(self) -> str:
        """``5 LLM calls, 12 search requests (serper 8, wikipedia 4), $0.0012``: what went out, as counted
        before each request was sent (whether or not its check finished)."""
        with self._lock:
            by_service = ", ".join(f"{name} {n}" for name, n in sorted(self.searches.items()))
            searches = plural(sum(self.searches.values()), "search request")
            searches += f" ({by_service})" if by_service else ""
            return f"{plural(self.llm_calls, 'LLM call')}, {searches}, ${self.cost_usd:.4f}"


usage_var: ContextVar[UsageRecorder | None] = ContextVar("factcheck.usage", default=None)
"""The usage record of the check running here, if any."""
spending_var: ContextVar[Spending | None] = ContextVar("factcheck.spending", default=None)
"""The spending limits of the run this check is part of, if any."""


def charge_search(service: str) -> None:
    """Before a search request is sent (each retry too): take a slot from the current :class:`Spending`,
    if any (BudgetReachedError when spent), and count it in the check's ``usage.search_calls``."""
    if (spending := spending_var.get()) is not None:
        spending.charge_search(service)
    record_search()


def charge_llm_call() -> None:
    """Before a model call: take a slot from the current :class:`Spending`, if any (BudgetReachedError when spent)."""
    if (spending := spending_var.get()) is not None:
        spending.charge()


def record_call(key: str, n: int = 1) -> None:
    """Count a call to a component or service (``"corpus-index:build"``)."""
    if (recorder := usage_var.get()) is not None:
        recorder.count(recorder.calls, key, n)


def record_cache_hit(key: str) -> None:
    """Count an answer served from a cache instead of being computed or fetched."""
    if (recorder := usage_var.get()) is not None:
        recorder.count(recorder.cache_hits, key)


def record_llm(prompt_tokens: int, completion_tokens: int, cost_usd: float = 0.0, *, estimated: bool = False) -> None:
    """Count one LLM call with its token usage and estimated cost (``estimated``: the server reported no tokens)."""
    if (spending := spending_var.get()) is not None:
        spending.add_cost(cost_usd)
    if (recorder := usage_var.get()) is not None:
        with recorder._lock:
            recorder.llm_calls += 1
            recorder.estimated_llm_calls += int(estimated)
            recorder.prompt_tokens += prompt_tokens
            recorder.completion_tokens += completion_tokens
            recorder.cost_usd += cost_usd


def amend_llm(
    *, calls: int = 0, estimated: int = 0, prompt_tokens: int = 0, completion_tokens: int = 0, cost_usd: float = 0.0
) -> None:
    """Correct what :func:`record_llm` counted for a request when it was sent, by these differences: its
    answer's real tokens and cost in place of the estimate, or a request the server refused with an error
    status (nothing billed) taken out again."""
    if (spending := spending_var.get()) is not None:
        spending.add_cost(cost_usd)
    if (recorder := usage_var.get()) is not None:
        with recorder._lock:
            recorder.llm_calls += calls
            recorder.estimated_llm_calls += estimated
            recorder.prompt_tokens += prompt_tokens
            recorder.completion_tokens += completion_tokens
            recorder.cost_usd += cost_usd


def record_note(note: str) -> None:
    """Say once in the check's ``usage.notes`` that something went differently than asked."""
    if (recorder := usage_var.get()) is not None:
        with recorder._lock:
            if note not in recorder.notes:
                recorder.notes.append(note)


def record_search() -> None:
    """Count one call to a web search service."""
    if (recorder := usage_var.get()) is not None:
        with recorder._lock:
            recorder.search_calls += 1
