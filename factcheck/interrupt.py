"""Stopping synchronous work that a caller gave up on, in the worker thread that runs it.

A coroutine is cancelled where it awaits; a synchronous method handed to a worker
thread (spaCy splitting a text into claims) cannot be, and goes on spending CPU
after its caller is gone: a client that disconnects during claim splitting
would cost the whole split. The caller sets an :class:`Interrupt` as the
check's (:data:`interrupt_var`, the ``interrupt`` of its :class:`~factcheck.context.CheckContext`); the
variable follows the call into its thread (:func:`factcheck.calls.call_plugin` copies the context
variables), where :func:`interruptible` runs the work. :meth:`Interrupt.request` then raises
:class:`Abandoned` inside that thread at its next Python instruction (CPython's
``PyThreadState_SetAsyncExc``), so the work stops within one call into compiled
code (one spaCy pipeline step) instead of running to its end.

The exception is raised only while the thread runs work of this interrupt, never
after it has gone back to its pool: arming and clearing happen under one lock,
and each interrupt fires at most once per thread.
"""

from __future__ import annotations

import ctypes
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar


class Abandoned(BaseException):
    """Raised inside a worker thread whose caller gave up (a BaseException: ``except Exception`` in the
    work does not swallow it, so the work stops)."""


def _raise_in(thread_id: int, exception: type[BaseException] | None) -> None:
    """Make ``thread_id`` raise ``exception`` at its next instruction (``None``: forget a pending one)."""
    ctypes.pythonapi.PyThreadState_SetAsyncExc(
        ctypes.c_ulong(thread_id), ctypes.py_object(exception) if exception is not None else None
    )


class Interrupt:
    """A caller's handle on the synchronous work it started in worker threads."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._threads: set[int] = set()
        self._requested = False

    @property
    def requested(self) -> bool:
        """True once :meth:`request` was called."""
        return self._requested

    def request(self) -> int:
        """Stop the work: each thread now running it raises :class:`Abandoned`, and work that starts later
        under this interrupt does at once. The number of threads stopped; a second request does nothing."""
        with self._lock:
            if self._requested:
                return 0
            self._requested = True
            for thread_id in self._threads:
                _raise_in(thread_id, Abandoned)
            return len(self._threads)

    @contextmanager
    def running(self) -> Iterator[None]:
        """The block of a worker thread that :meth:`request` may stop."""
        thread_id = threading.get_ident()
        with self._lock:
            if self._requested:
                raise Abandoned
            self._threads.add(thread_id)
        try:
            yield
        finally:
            with self._lock:
                self._threads.discard(thread_id)
                if self._requested:  # armed but not yet raised: it must not reach the pool's next job
                    _raise_in(thread_id, None)


interrupt_var: ContextVar[Interrupt | None] = ContextVar("factcheck.interrupt", default=None)
"""The interrupt of the check running here, if any."""


@contextmanager
def interruptible() -> Iterator[None]:
    """Run the block under the interrupt of the caller's check (:data:`interrupt_var`), if any."""
    interrupt = interrupt_var.get()
    if interrupt is None:
        yield
        return
    with interrupt.running():
        yield
