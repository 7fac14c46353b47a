"""Where plugin code runs: an event loop per package, and worker threads for its synchronous methods.

Each top-level package (``factcheck`` for the built-ins, ``my_plugin`` for a third party's) gets
an event loop of its own in a daemon thread (:func:`runner`), and a pool of :data:`SYNC_WORKERS`
threads for its synchronous methods (:func:`sync_pool`). Both live as long as the process, so what
is bound to a loop (an open HTTP client, :func:`on_plugin_loop`) may be kept; a loop found stuck
is retired (:func:`retire`) and the next call gets a fresh one. :mod:`factcheck.calls` calls plugin
code on them; this module knows nothing of a check.
"""

from __future__ import annotations

import asyncio
import contextvars
import os
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from contextlib import suppress

STUCK_S = 0.4  # a loop that has not ticked for this long when a call to it times out is replaced
_TICK_S = 0.1
SYNC_WORKERS = 32  # threads per package for synchronous plugin methods (a blocking ``def retrieve`` holds one)


class Runner:
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
_runners: dict[str, Runner] = {}
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


def runner(group: str) -> Runner:
    """``group``'s loop, started when it has none (or its last one ended)."""
    with _lock:
        _forget_after_fork()
        found = _runners.get(group)
        if found is None or not found.alive():
            found = _runners[group] = Runner(group)
        return found


def running(group: str) -> Runner | None:
    """``group``'s loop if it has one, without starting one."""
    with _lock:
        return _runners.get(group)


def sync_pool(group: str) -> ThreadPoolExecutor:
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
        return any(each.loop is loop for each in _runners.values())


def retire(stuck: Runner) -> None:
    """Give later calls of its group a fresh loop, and stop ``stuck`` once it runs again."""
    with _lock:
        if _runners.get(stuck.group) is stuck:
            del _runners[stuck.group]
    stuck.stop()
