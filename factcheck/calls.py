"""Calling plugin code where it cannot stop the caller.

Sources, verifiers and extractors (built-in ones too: plugins all the way
down) are called through :func:`call_plugin`. Their coroutines run on an
event loop of their own in a background thread, one loop per top-level
package (``factcheck`` for the built-ins, ``my_plugin`` for a third party's),
so that:

- a component that blocks (``time.sleep``, a CPU loop, a synchronous HTTP
  call) stalls its own loop, never the caller's: the server keeps answering
  ``/v1/health`` and the caller's time-out still fires;
- a synchronous method (``def retrieve``, an extractor's ``extract``) runs in a
  worker thread of a pool kept for its package's synchronous methods
  (:data:`SYNC_WORKERS` threads), so a burst of them, or a plugin that blocks in
  every one, never holds up asyncio's default executor or another package's calls;
- a component that swallows its cancellation is left behind at the time-out,
  not waited for;
- ``KeyboardInterrupt``, ``SystemExit`` or a ``CancelledError`` it raises by
  itself become a :class:`~factcheck.PluginError`, which the pipeline turns
  into an abstention like any other failure;
- the built-ins keep sharing one loop, so the per-service concurrency limits
  and connection pools of :mod:`factcheck.net` and the LLM client hold across
  every check of the process.

A loop found stuck when a call to it times out or is cancelled (it has not
ticked for :data:`STUCK_S` seconds) is retired: later calls get a fresh loop,
and the old one stops once the blocking call returns. Context variables (the
check's usage recorder, LLM settings, cache) follow each call into its loop.
:func:`run_beside` runs several calls to one component's loop in one hop (the
pipeline retrieves and judges a claim that way). :func:`start_plugin` starts a
call that outlives its caller (a component's ``prepare()``, which later checks
find done or still running).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextvars
import functools
import inspect
import os
import threading
import time
from collections.abc import Awaitable, Callable, Coroutine, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import suppress
from typing import Any, TypeVar

from factcheck.context import current, takes_context
from factcheck.errors import PluginError
from factcheck.interrupt import interruptible
from factcheck.text import valid_unicode
from factcheck.types import PRECEDENT_SOURCE, Evidence

T = TypeVar("T")
STUCK_S = 0.4  # a loop that has not ticked for this long when a call to it times out is replaced
_TICK_S = 0.1
SYNC_WORKERS = 32  # threads per package for synchronous plugin methods (a blocking ``def retrieve`` holds one)


class _Runner:
    """An event loop in a daemon thread, with a heartbeat that tells whether it is blocked."""

    def __init__(self, group: str) -> None:
        self.group = group
        # Made in an empty context: the loop's own handles (its self-pipe reader) keep the context they were
        # made in for the life of the loop, and the first caller's check must not live that long.
        self.loop = contextvars.Context().run(asyncio.new_event_loop)
        self.beat = time.monotonic()
        self.thread = threading.Thread(target=self._run, daemon=True, name=f"factcheck-plugins-{group}")
        self.thread.start()

    def _tick(self) -> None:
        self.beat = time.monotonic()
        self.loop.call_later(_TICK_S, self._tick)

    def _run(self) -> None:
        asyncio.set_event_loop(self.loop)
        self.loop.call_soon(self._tick)
        # A plugin's escape ends this loop only: the next call starts a new one.
        with suppress(BaseException):
            self.loop.run_forever()

    def alive(self) -> bool:
        return self.thread.is_alive() and not self.loop.is_closed()

    def stuck(self) -> bool:
        return time.monotonic() - self.beat > STUCK_S

    def stop(self) -> None:
        """Stop the loop once it gets to run again (at once when it is idle)."""
        if self.alive():
            with suppress(RuntimeError):  # closed meanwhile
                self.loop.call_soon_threadsafe(self.loop.stop)


_lock = threading.Lock()
_runners: dict[str, _Runner] = {}
_pools: dict[str, ThreadPoolExecutor] = {}
_pid = os.getpid()


def group_of(component: object) -> str:
    """Which loop ``component`` runs on: the top-level package that defines its class."""
    return (type(component).__module__ or "unknown").split(".")[0]


def _forget_after_fork() -> None:
    """In a forked child, forget the parent's loops and worker threads (they are not here); callers hold ``_lock``."""
    global _pid
    if os.getpid() != _pid:
        _runners.clear()
        _pools.clear()
        _pid = os.getpid()


def _runner(group: str) -> _Runner:
    with _lock:
        _forget_after_fork()
        runner = _runners.get(group)
        if runner is None or not runner.alive():
            runner = _runners[group] = _Runner(group)
        return runner


def _sync_pool(group: str) -> ThreadPoolExecutor:
    """The worker threads of ``group``'s synchronous methods. They are not asyncio's default executor:
    a burst of them (the claim extraction of every document a batch has in flight) must not queue
    ahead of the short jobs the checks hand that one. And each package has its own: a plugin whose
    every call blocks, each left behind at its time-out, uses up its own threads, never those of the
    built-in extractor."""
    with _lock:
        _forget_after_fork()
        pool = _pools.get(group)
        if pool is None:
            name = f"factcheck-sync-{group}"
            pool = _pools[group] = ThreadPoolExecutor(max_workers=SYNC_WORKERS, thread_name_prefix=name)
        return pool


def on_plugin_loop() -> bool:
    """True when the running event loop is one of the plugin loops (they live as long as the process,
    so what is bound to them, such as an open HTTP client, may be kept)."""
    try:
        loop = asyncio.get_running_loop()
    except RuntimeError:
        return False
    with _lock:
        return any(runner.loop is loop for runner in _runners.values())


def _retire(runner: _Runner) -> None:
    with _lock:
        if _runners.get(runner.group) is runner:
            del _runners[runner.group]
    runner.stop()


def describe(component: object, method: str) -> str:
    """``name.method()`` for messages."""
    return f"{getattr(component, 'name', type(component).__name__)}.{method}()"


def _invoke(component: object, method: str, args: Sequence[Any]) -> Any:
    """``component.method(*args)``, with the check's :class:`~factcheck.context.CheckContext` as ``context=``
    when the method takes that keyword (how a component reads the check's cache, LLM settings, usage, time)."""
    function = getattr(component, method)
    if takes_context(function):
        return function(*args, context=current())
    return function(*args)


async def _guarded(component: object, method: str, args: Sequence[Any]) -> Any:
    """Await the component's coroutine method on this (its) loop; anything but an Exception becomes a PluginError."""
    what = describe(component, method)
    try:
        return await _invoke(component, method, args)
    except (Exception, GeneratorExit):  # GeneratorExit: the coroutine is being closed, not a plugin's doing
        raise
    except asyncio.CancelledError:
        task = asyncio.current_task()
        if task is not None and task.cancelling():
            raise  # really cancelled: let it end
        raise PluginError(f"{what} raised CancelledError without being cancelled") from None
    except BaseException as exc:  # KeyboardInterrupt, SystemExit from plugin code: never past here
        raise PluginError(f"{what} raised {type(exc).__name__}: {exc}") from None


def _sync_guarded(component: object, method: str, args: Sequence[Any]) -> Any:
    """A synchronous method, in a worker thread; anything but an Exception becomes a PluginError."""
    try:
        with interruptible():  # a caller that gave up (a server client gone) stops it: factcheck/interrupt.py
            result = _invoke(component, method, args)
    except (Exception, GeneratorExit):
        raise
    except BaseException as exc:
        raise PluginError(f"{describe(component, method)} raised {type(exc).__name__}: {exc}") from None
    if inspect.isawaitable(result):  # a sync function handing back a coroutine: run it on its own loop
        return asyncio.run(_awaited(result))
    return result


async def _awaited(awaitable: Any) -> Any:
    return await awaitable


async def call_plugin(component: object, method: str, *args: Any, timeout_s: float | None = None) -> Any:
    """``await component.method(*args)`` on the component's own loop (see the module's docstring).

    ``timeout_s`` (or the caller's own time-out, which cancels this) stops waiting;
    the component's task is cancelled and, if it ignores that, abandoned.
    """
    function = getattr(component, method)
    if not inspect.iscoroutinefunction(function):
        # Synchronous code cannot block a loop from a worker thread: run it there directly (one hop fewer),
        # with the caller's context variables, as asyncio.to_thread would.
        async with asyncio.timeout(timeout_s):
            call = functools.partial(contextvars.copy_context().run, _sync_guarded, component, method, args)
            return await asyncio.get_running_loop().run_in_executor(_sync_pool(group_of(component)), call)
    return await _on_loop(group_of(component), lambda: _guarded(component, method, args), timeout_s)


async def run_beside(component: object, work: Callable[[], Awaitable[T]], timeout_s: float | None = None) -> T:
    """``await work()`` on ``component``'s loop: one hop for several calls to it (``work`` calls
    :func:`call_plugin`, which then runs each call in place). A BaseException that is no
    Exception, raised by plugin code inside, becomes a PluginError as in :func:`call_plugin`."""
    return await _on_loop(group_of(component), lambda: _contained(work), timeout_s)


async def _contained(work: Callable[[], Awaitable[T]]) -> T:
    try:
        return await work()
    except (Exception, GeneratorExit):
        raise
    except asyncio.CancelledError:
        task = asyncio.current_task()
        if task is not None and task.cancelling():
            raise
        raise PluginError("plugin code raised CancelledError without being cancelled") from None
    except BaseException as exc:
        raise PluginError(f"plugin code raised {type(exc).__name__}: {exc}") from None


async def _on_loop(group: str, make: Callable[[], Coroutine[Any, Any, T]], timeout_s: float | None) -> T:
    """Run the coroutine ``make()`` returns on ``group``'s loop (in place when already there)."""
    runner = _runner(group)
    if _running_loop() is runner.loop:
        async with asyncio.timeout(timeout_s):
            return await make()
    future = asyncio.run_coroutine_threadsafe(make(), runner.loop)
    try:
        async with asyncio.timeout(timeout_s):
            return await asyncio.wrap_future(future)
    except (asyncio.CancelledError, TimeoutError):
        future.cancel()  # the component's task is cancelled (if it still runs, it is abandoned)
        if runner.stuck():
            _retire(runner)
        raise


def start_plugin(
    component: object, method: str, *args: Any, timeout_s: float | None = None
) -> concurrent.futures.Future[Any]:
    """Start ``component.method(*args)`` on its own loop (a synchronous method: in its package's worker
    threads) and return at once, for work that must outlive the check that starts it (a ``prepare()``
    a later check may find done). It goes on whether or not anyone waits for it, with the caller's
    context variables; a coroutine is cancelled after ``timeout_s`` (its future then raises
    TimeoutError). Wait for it with :func:`settled`; give up on it with :func:`abandon`."""
    group = group_of(component)
    if not inspect.iscoroutinefunction(getattr(component, method)):
        call = functools.partial(contextvars.copy_context().run, _sync_guarded, component, method, args)
        return _sync_pool(group).submit(call)

    async def bounded() -> Any:
        async with asyncio.timeout(timeout_s):
            return await _guarded(component, method, args)

    # The context is copied here, in the caller's thread, when the task is scheduled.
    return asyncio.run_coroutine_threadsafe(bounded(), _runner(group).loop)


async def settled(future: concurrent.futures.Future[Any], timeout_s: float) -> bool:
    """Wait at most ``timeout_s`` for a :func:`start_plugin` call to end; whether it has. Neither this
    wait's time-out nor its cancellation stops the call."""
    if future.done() or timeout_s <= 0:
        return future.done()
    loop = asyncio.get_running_loop()
    ended = asyncio.Event()

    def wake(_: object) -> None:
        with suppress(RuntimeError):  # the waiting loop is gone (a CLI check's asyncio.run ended)
            loop.call_soon_threadsafe(ended.set)

    future.add_done_callback(wake)
    with suppress(TimeoutError):
        async with asyncio.timeout(timeout_s):
            await ended.wait()
    return future.done()


def abandon(component: object, future: concurrent.futures.Future[Any]) -> None:
    """Stop a :func:`start_plugin` call: its task is cancelled (a synchronous call is left to finish in
    its thread), and its loop, if the call blocks it, is retired as in :func:`call_plugin`."""
    future.cancel()
    with _lock:
        runner = _runners.get(group_of(component))
    if runner is not None and runner.stuck():
        _retire(runner)


def _running_loop() -> asyncio.AbstractEventLoop | None:
    try:
        return asyncio.get_running_loop()
    except RuntimeError:
        return None


def usable_evidence(found: object, limit: int, *, precedents: bool = False) -> tuple[list[Evidence], list[str]]:
    """The evidence to judge from what a source returned, and what was wrong with the rest.

    Keeps at most ``limit`` items (the first ones: sources return the best first);
    drops anything that is not an :class:`~factcheck.Evidence` with string fields, and a passage marked as a
    precedent of the experience memory unless the source gives precedents (``precedents``: a plugin's passage
    must not pass for a reviewer's ruling); makes the text of what it keeps valid Unicode.
    """
    problems: list[str] = []
    if not precedents and isinstance(found, list | tuple):
        marked = [item for item in found if isinstance(item, Evidence) and item.source == PRECEDENT_SOURCE]
        if marked:
            problems.append(f"returned {len(marked)} passages marked as precedents ({PRECEDENT_SOURCE}), dropped")
            found = [item for item in found if not any(item is m for m in marked)]
    if not isinstance(found, list | tuple):
        return [], [f"returned {type(found).__name__}, not a list of Evidence"]
    if len(found) > limit:
        problems.append(f"returned {len(found)} passages; the first {limit} were kept")
    kept: list[Evidence] = []
    bad: dict[str, int] = {}
    for item in found[:limit]:
        if not isinstance(item, Evidence) or not _well_formed(item):
            kind = type(item).__name__ if not isinstance(item, Evidence) else "Evidence with non-string fields"
            bad[kind] = bad.get(kind, 0) + 1
            continue
        kept.append(_clean(item))
    if bad:
        listed = ", ".join(f"{n} {kind}" for kind, n in bad.items())
        problems.append(f"returned unusable evidence, dropped: {listed}")
    return kept, problems


def _well_formed(item: Evidence) -> bool:
    optional = (item.url, item.retrieved_at, item.published_at)
    return (
        isinstance(item.source, str)
        and isinstance(item.text, str)
        and isinstance(item.title, str)
        and all(value is None or isinstance(value, str) for value in optional)
    )


def _clean(item: Evidence) -> Evidence:
    fields = (item.source, item.text, item.title, item.url, item.retrieved_at, item.published_at)
    cleaned = tuple(None if value is None else valid_unicode(value) for value in fields)
    if cleaned == fields:
        return item
    source, text, title, url, retrieved_at, published_at = cleaned
    return Evidence(str(source), str(text), str(title), url, retrieved_at, published_at)
