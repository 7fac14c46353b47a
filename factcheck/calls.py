"""Calling plugin code where it cannot stop the caller.

Sources, verifiers and extractors (built-in ones too: plugins all the way
down) are called through :func:`call_plugin`. Their coroutines run on an
event loop of their own in a background thread, one loop per top-level
package (``factcheck`` for the built-ins, ``my_plugin`` for a third party's;
see :mod:`factcheck.loops`), so that:

- a component that blocks (``time.sleep``, a CPU loop, a synchronous HTTP
  call) stalls its own loop, never the caller's: the server keeps answering
  ``/v1/health`` and the caller's time-out still fires;
- a synchronous method (``def retrieve``, an extractor's ``extract``) runs in a
  worker thread of a pool kept for its package's synchronous methods
  (:data:`~factcheck.loops.SYNC_WORKERS` threads), so a burst of them, or a plugin that blocks in
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
ticked for :data:`~factcheck.loops.STUCK_S` seconds) is retired: later calls get a fresh loop,
and the old one stops once the blocking call returns. Context variables (the
check's usage recorder, LLM settings, cache) follow each call into its loop, and
a method that takes a keyword-only ``context`` is handed the check's
:class:`~factcheck.context.CheckContext`.
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
from collections.abc import Awaitable, Callable, Coroutine, Sequence
from contextlib import suppress
from typing import Any, TypeVar

from factcheck.context import current, takes_context
from factcheck.errors import PluginError
from factcheck.interrupt import interruptible
from factcheck.loops import SYNC_WORKERS as SYNC_WORKERS  # where plugin authors have read it
from factcheck.loops import group_of, retire, runner, running, sync_pool
from factcheck.text import valid_unicode
from factcheck.types import PRECEDENT_SOURCE, Evidence

T = TypeVar("T")


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
            return await asyncio.get_running_loop().run_in_executor(sync_pool(group_of(component)), call)
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
    loop = runner(group)
    if _running_loop() is loop.loop:
        async with asyncio.timeout(timeout_s):
            return await make()
    future = asyncio.run_coroutine_threadsafe(make(), loop.loop)
    try:
        async with asyncio.timeout(timeout_s):
            return await asyncio.wrap_future(future)
    except (asyncio.CancelledError, TimeoutError):
        future.cancel()  # the component's task is cancelled (if it still runs, it is abandoned)
        if loop.stuck():
            retire(loop)
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
        return sync_pool(group).submit(call)

    async def bounded() -> Any:
        async with asyncio.timeout(timeout_s):
            return await _guarded(component, method, args)

    # The context is copied here, in the caller's thread, when the task is scheduled.
    return asyncio.run_coroutine_threadsafe(bounded(), runner(group).loop)


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
    found = running(group_of(component))
    if found is not None and found.stuck():
        retire(found)


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
