"""``factcheck serve --workers N``: the server's settings handed to its worker processes.

uvicorn's supervisor starts each worker as a new process that imports the app factory and the
protocol class by name, so nothing can be handed to them as an argument. The settings travel in one
environment variable, :data:`HANDOFF`, as JSON (:class:`WorkerStart`): the server's settings, the
connection cap already split between the workers, and ``factcheck serve``'s flags for the checkers.
It is the only variable factcheck writes. Each worker reads it once, as it starts (:func:`app`,
:data:`Protocol`), and builds its checkers from it, the settings file and the environment it
inherited, as one process would.
"""

from __future__ import annotations

import functools
import json
import os
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from factcheck.server.runner import connection_limit, install_log_filters, protocol, serve_processes
from factcheck.server.settings import ServerSettings

if TYPE_CHECKING:
    from fastapi import FastAPI

    from factcheck.server.runner import GuardedH11Protocol

HANDOFF = "FACTCHECK_SERVER_SETTINGS_JSON"
MIN_CONNECTIONS = 16  # each worker's share of the connection cap is at least this


@dataclass(frozen=True)
class WorkerStart:
    """What each worker process is handed: the server's settings (``max_connections`` is the worker's
    share) and the overrides of every checker's settings (``factcheck serve``'s ``--corpus``...)."""

    settings: ServerSettings
    checker_overrides: Mapping[str, Any] = field(default_factory=dict)

    def to_json(self) -> str:
        """As JSON (it holds the caller keys: keep it in memory)."""
        settings = json.loads(self.settings.to_json())
        return json.dumps({"settings": settings, "checker_overrides": dict(self.checker_overrides)})

    @classmethod
    def from_json(cls, text: str) -> WorkerStart:
        """What :meth:`to_json` wrote."""
        data = json.loads(text)
        return cls(ServerSettings.from_json(json.dumps(data["settings"])), data["checker_overrides"])


def serve_workers(
    settings: ServerSettings,
    host: str,
    port: int,
    workers: int,
    *,
    checker_overrides: Mapping[str, Any] | None = None,
    forwarded_allow_ips: str | None = None,
    log_level: str = "info",
) -> None:
    """Serve with ``workers`` processes sharing one listening socket (uvicorn's supervisor).

    Each worker has its own event loop, checkers, answer cache and rate buckets, and its share of
    ``max_connections``. The SQLite cache file is shared.
    """
    share = max(MIN_CONNECTIONS, connection_limit(settings.max_connections) // workers)
    hand_off(WorkerStart(replace(settings, max_connections=share), checker_overrides or {}))
    serve_processes(
        f"{__name__}:app",
        f"{__name__}:Protocol",
        host,
        port,
        workers,
        forwarded_allow_ips=forwarded_allow_ips,
        log_level=log_level,
    )


def hand_off(start: WorkerStart) -> None:
    """Put ``start`` where the worker processes started next will find it (it holds the caller keys:
    the variable lives in this process's memory and its children's only). The one write of the
    environment in factcheck."""
    os.environ[HANDOFF] = start.to_json()


@functools.cache
def handed() -> WorkerStart:
    """What the supervisor handed to this worker process."""
    return WorkerStart.from_json(os.environ[HANDOFF])


def app() -> FastAPI:
    """The app of this worker process (uvicorn's factory)."""
    from factcheck.server.app import create_app

    install_log_filters()
    start = handed()
    return create_app(start.settings, checker_overrides=start.checker_overrides)


@functools.cache
def _protocol() -> type[GuardedH11Protocol]:
    settings = handed().settings
    return protocol(settings.max_connections, settings.header_timeout_s, settings.max_pending_per_address)


def __getattr__(name: str) -> object:
    # ``Protocol``: the connection guard with this worker's limits, made when uvicorn first asks for it
    # (as the worker starts), not when the module is imported.
    if name == "Protocol":
        return _protocol()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
