"""What the components of one check share, in one object: :class:`CheckContext`.

A check's usage record, the run's spending limits, the time the text was written, the cache, the LLM
settings, the service layer its HTTP goes through and the interrupt that stops its synchronous work
travel together. The Checker makes one per check (:meth:`factcheck.Checker.stream`) and hands it
to each source's and verifier's ``retrieve``, ``judge`` and ``prepare`` that takes a keyword-only
``context``; the library's own helpers underneath (the HTTP layer, the cache, the usage counters) read
the same object from :func:`current`, which follows the check into worker threads and plugin loops.

Outside a check, :func:`using` sets parts of it for a block (a test, a batch's spending)::

    with using(cache=Cache("c.sqlite"), usage=recorder):
        ...
"""

from __future__ import annotations

import dataclasses
import inspect
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from datetime import datetime
from functools import cache
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from factcheck.cache import Cache
    from factcheck.interrupt import Interrupt
    from factcheck.llm.client import LLMSettings
    from factcheck.net import Service
    from factcheck.usage import Spending, UsageRecorder


@dataclass(frozen=True)
class CheckContext:
    """One check's shared state. Every part is optional: ``None`` means none set (no usage recorded,
    no spending limit, now, no cache, the LLM settings of the environment, the default service)."""

    usage: UsageRecorder | None = None
    spending: Spending | None = None
    reference: datetime | None = None
    cache: Cache | None = None
    llm: LLMSettings | None = None
    service: Service | None = None
    interrupt: Interrupt | None = None

    def but(self, **changes: Any) -> CheckContext:
        """A copy with ``changes``."""
        return dataclasses.replace(self, **changes)


_NONE = CheckContext()
_current: ContextVar[CheckContext | None] = ContextVar("factcheck_check", default=None)


def current() -> CheckContext:
    """The context of the check running here (an empty one outside a check)."""
    return _current.get() or _NONE


def enter(context: CheckContext) -> None:
    """Make ``context`` current for the rest of this task (a check's own task sets its context once)."""
    _current.set(context)


@contextmanager
def using(**changes: Any) -> Iterator[CheckContext]:
    """The current context with ``changes``, for the block."""
    changed = current().but(**changes)
    token = _current.set(changed)
    try:
        yield changed
    finally:
        _current.reset(token)


def takes_context(function: Callable[..., Any]) -> bool:
    """Whether ``function`` (a component's bound method) takes a keyword-only ``context``
    (``async def retrieve(self, claim, *, context)``). Only keyword-only: a plugin's positional
    parameter that happens to be called ``context`` (the evidence, say) is its own, never filled."""
    return _takes_context(getattr(function, "__func__", function))


@cache
def _takes_context(function: Callable[..., Any]) -> bool:
    try:
        parameters = inspect.signature(function).parameters
    except (TypeError, ValueError):
        return False
    found = parameters.get("context")
    return found is not None and found.kind is found.KEYWORD_ONLY


__all__ = ["CheckContext", "current", "enter", "takes_context", "using"]
