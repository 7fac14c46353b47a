"""What the components of one check share, in one object: :class:`CheckContext`.

A check's usage record, the run's spending limits, the time the text was written, the cache, the LLM
settings, the service layer its HTTP goes through and the interrupt that stops its synchronous work
travel together. The Checker makes one per check (:meth:`factcheck.Checker.stream`) and hands it
to each source's and verifier's ``retrieve``, ``judge`` and ``prepare`` that takes a keyword-only
``context`` (:mod:`factcheck.calls`).

Each part is a context variable of the service that reads it, so a service never imports this module
(the cache: :data:`factcheck.cache.cache_var`; the usage record and the spending limits:
:mod:`factcheck.usage`; the service: :data:`factcheck.net.service_var`; the LLM settings:
:data:`factcheck.llm.client.llm_var`; the interrupt: :data:`factcheck.interrupt.interrupt_var`; the
text's time: :data:`reference_var`, here). A CheckContext is those variables together: setting one
(:func:`enter`, :func:`using`) sets each of them, and :func:`current` reads them. Context variables
follow the check into its tasks, worker threads and plugin loops.

Outside a check, :func:`using` sets parts of it for a block (a test, a batch's spending)::

    with using(cache=Cache("c.sqlite"), usage=recorder):
        ...
"""

from __future__ import annotations

import dataclasses
import inspect
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar, Token
from dataclasses import dataclass
from datetime import datetime
from functools import cache
from typing import Any

from factcheck.cache import Cache, cache_var
from factcheck.interrupt import Interrupt, interrupt_var
from factcheck.llm.client import LLMSettings, llm_var
from factcheck.net import Service, service_var
from factcheck.usage import Spending, UsageRecorder, spending_var, usage_var


@dataclass(frozen=True)
class CheckContext:
    """One check's shared state. Every part is optional: ``None`` means none set (no usage recorded,
    no spending limit, now, no cache, the default LLM settings, the default service)."""

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


reference_var: ContextVar[datetime | None] = ContextVar("factcheck.reference", default=None)
"""When the text of the check running here was written (``None``: now)."""

_PARTS: dict[str, ContextVar[Any]] = {
    "usage": usage_var,
    "spending": spending_var,
    "reference": reference_var,
    "cache": cache_var,
    "llm": llm_var,
    "service": service_var,
    "interrupt": interrupt_var,
}
_NONE = CheckContext()
# The context last set, handed back as long as each variable still holds its part.
_last: ContextVar[CheckContext] = ContextVar("factcheck.context", default=_NONE)


def current() -> CheckContext:
    """The context of the check running here (an empty one outside a check)."""
    last = _last.get()
    parts = {name: var.get() for name, var in _PARTS.items()}
    if all(getattr(last, name) is part for name, part in parts.items()):
        return last
    return CheckContext(**parts)


def _set(context: CheckContext) -> list[Token[Any]]:
    """Set each variable to its part of ``context``; the tokens that undo it."""
    return [*(var.set(getattr(context, name)) for name, var in _PARTS.items()), _last.set(context)]


def enter(context: CheckContext) -> None:
    """Make ``context`` current for the rest of this task (a check's own task sets its context once)."""
    _set(context)


@contextmanager
def using(**changes: Any) -> Iterator[CheckContext]:
    """The current context with ``changes``, for the block."""
    changed = current().but(**changes)
    tokens = _set(changed)
    try:
        yield changed
    finally:
        for token in reversed(tokens):
            token.var.reset(token)


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


__all__ = ["CheckContext", "current", "enter", "reference_var", "takes_context", "using"]
