"""``--engine ray``: the same per-document check, run by Ray workers across a cluster.

Each worker is a Ray actor holding its own :class:`~factcheck.pipeline.Checker`
(built from the driver's settings), its own cache and its own event loop, so
per-service limits hold per worker; it runs several documents at once (async
actor methods), each through :func:`~factcheck.batch.engine.check_document`.
The driver streams documents to the workers and writes every line itself,
with the same resumable output, budgets and progress as the local engine.

Ray is an optional extra: ``pip install '.[ray]'`` in a checkout.
"""

from __future__ import annotations

import asyncio
import logging
import math
from dataclasses import dataclass, field
from types import TracebackType
from typing import Any

from factcheck.batch.inputs import Document
from factcheck.batch.output import failure_record
from factcheck.config import Settings
from factcheck.errors import ConfigError

RAY_EXTRA = "pip install '.[ray]' in a checkout"


def import_ray() -> Any:
    """The ``ray`` module, or a ConfigError naming the install command."""
    try:
        import ray
    except ImportError:
        raise ConfigError(f"--engine ray needs Ray: {RAY_EXTRA}") from None
    return ray


class CheckerWorker:
    """The body of a Ray worker (wrapped with ``ray.remote`` at run time, so importing this needs no Ray)."""

    def __init__(self, settings: Settings) -> None:
        from factcheck.build import build_checker

        self.checker = build_checker(settings)

    def ready(self) -> bool:
        """Answered once the worker's Checker is built: a broken setup fails here, before any document."""
        return True

    async def check(self, doc: Document) -> dict[str, Any]:
        """The output line for ``doc``."""
        from factcheck.batch.engine import check_document

        return await check_document(self.checker, doc)


@dataclass
class RayEngine:
    """Checks documents on Ray workers: ``workers`` actors (default: one per CPU of the cluster),
    each with up to ``concurrency / workers`` documents in flight.

    With ``address`` it joins that cluster (``auto``, ``ray://head:10001``, ``head:6379``);
    without, it joins the Ray instance already initialised in this process, or starts a local one.
    """

    settings: Settings
    concurrency: int = 4
    address: str | None = None
    workers: int | None = None
    _ray: Any = field(default=None, init=False, repr=False)
    _actors: list[Any] = field(default_factory=list, init=False, repr=False)
    _started_ray: bool = field(default=False, init=False, repr=False)

    async def __aenter__(self) -> RayEngine:
        ray = self._ray = import_ray()
        if not ray.is_initialized():
            options: dict[str, Any] = {"include_dashboard": False, "logging_level": logging.WARNING}
            if self.address:
                options["address"] = self.address
            # On this (the main) thread, blocking: Ray installs signal handlers, and nothing else runs yet.
            ray.init(**options)
            self._started_ray = True
        cpus = int(ray.cluster_resources().get("CPU", 1))
        count = max(1, min(self.workers or cpus, self.concurrency))
        per_worker = math.ceil(self.concurrency / count)
        remote = ray.remote(num_cpus=1, max_restarts=1)(CheckerWorker)
        self._actors = [remote.options(max_concurrency=per_worker).remote(self.settings) for _ in range(count)]
        try:
            await asyncio.gather(*(actor.ready.remote() for actor in self._actors))
        except Exception as exc:
            await self.__aexit__(None, None, None)
            raise ConfigError(f"Ray workers could not start: {type(exc).__name__}: {exc}") from None
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        ray, actors = self._ray, self._actors
        self._actors = []
        for actor in actors:
            ray.kill(actor)
        if self._started_ray:
            ray.shutdown()
            self._started_ray = False

    async def check(self, doc: Document, slot: int) -> dict[str, Any]:
        """``doc``'s line from the worker serving ``slot``; a worker lost mid-document fails only that document."""
        actor = self._actors[slot % len(self._actors)]
        try:
            record: dict[str, Any] = await actor.check.remote(doc)
        except self._ray.exceptions.RayError as exc:
            cause = getattr(exc, "cause", None)
            if isinstance(cause, ConfigError):  # a broken setup stops the batch, as it does locally
                raise ConfigError(str(cause)) from None
            return failure_record(doc, type(exc).__name__, str(exc).splitlines()[0] if str(exc) else "")
        return record
