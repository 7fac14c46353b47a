"""Running the app with uvicorn: in the foreground (``factcheck serve``) or in a thread (tests, benchmarks).

Connections are guarded before the app sees them (:class:`GuardedH11Protocol`):
at most ``max_connections`` open at once, so the process never runs out of file
descriptors. When a new connection would pass the cap, the oldest connection
still waiting for its request headers is closed to make room (a flood of idle
connections pushes out its own, not the clients being served); only when every
connection is busy with a request is the new one closed. A connection must
send its request headers within ``header_timeout_s`` (a client that opens
connections and sends nothing, or a byte a minute, is cut off). The request
body has its own time-out in the app. Repeated log lines from the accept loop
(``Too many open files``) and from the protocol are rate-limited.
"""

from __future__ import annotations

import asyncio
import logging
import os
import re
import socket
import threading
import time
from collections import OrderedDict
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any, ClassVar

import h11
import uvicorn
from fastapi import FastAPI
from uvicorn.protocols.http.h11_impl import H11Protocol

DEFAULT_MAX_CONNECTIONS = 1000
DEFAULT_HEADER_TIMEOUT_S = 10.0
REPEAT_WINDOW_S = 10.0


def _env_number(name: str, default: float) -> float:
    try:
        return float(os.environ.get(name, default))
    except ValueError:
        return default


class GuardedH11Protocol(H11Protocol):
    """uvicorn's h11 protocol with a connection cap and a time-out on reading request headers.

    The limits are class attributes: :func:`protocol` makes a subclass with its own; a worker
    process (``--workers``) imports this class by name and reads them from the environment.
    """

    max_connections: int = int(_env_number("FACTCHECK_WORKER_MAX_CONNECTIONS", DEFAULT_MAX_CONNECTIONS))
    header_timeout_s: float = _env_number("FACTCHECK_HEADER_TIMEOUT_S", DEFAULT_HEADER_TIMEOUT_S)
    # Connections waiting for their request headers, oldest first (one map per server: see protocol()).
    waiting: ClassVar[OrderedDict[int, GuardedH11Protocol]] = OrderedDict()

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        over = len(self.connections) >= self.max_connections
        super().connection_made(transport)
        self._header_timer: asyncio.TimerHandle | None = None
        if over:
            if not self.waiting:  # every connection is serving a request: this one must try again later
                transport.close()
                return
            _, oldest = self.waiting.popitem(last=False)
            oldest._cancel_header_timer()
            oldest.transport.close()
        self._watch_headers()

    def data_received(self, data: bytes) -> None:
        super().data_received(data)
        self._watch_headers()

    def connection_lost(self, exc: Exception | None) -> None:
        self._cancel_header_timer()
        super().connection_lost(exc)

    def _waiting_for_headers(self) -> bool:
        return self.conn.their_state is h11.IDLE and self.conn.our_state is h11.IDLE

    def _watch_headers(self) -> None:
        """Arm the header timer while a request's headers are awaited; disarm it once they are in."""
        if self._waiting_for_headers():
            if self._header_timer is None:
                self._header_timer = self.loop.call_later(self.header_timeout_s, self._headers_too_slow)
                self.waiting[id(self)] = self
        else:
            self._cancel_header_timer()

    def _cancel_header_timer(self) -> None:
        timer = getattr(self, "_header_timer", None)
        if timer is not None:
            timer.cancel()
            self._header_timer = None
        self.waiting.pop(id(self), None)

    def _headers_too_slow(self) -> None:
        self._header_timer = None
        self.waiting.pop(id(self), None)
        if self._waiting_for_headers() and not self.transport.is_closing():
            self.transport.close()


class RepeatFilter(logging.Filter):
    """Lets the same message through at most once per ``window_s`` seconds; the next one that
    passes says how many were held back. For messages an attacker can make the server repeat."""

    def __init__(self, window_s: float = REPEAT_WINDOW_S) -> None:
        super().__init__()
        self.window_s = window_s
        self._lock = threading.Lock()
        self._seen: dict[str, tuple[float, int]] = {}  # message template -> (last shown, held back since)

    def filter(self, record: logging.LogRecord) -> bool:
        key = f"{record.name}:{record.msg}"
        now = time.monotonic()
        with self._lock:
            shown, held = self._seen.get(key, (-float("inf"), 0))
            if now - shown < self.window_s:
                self._seen[key] = (shown, held + 1)
                return False
            self._seen[key] = (now, 0)
            if len(self._seen) > 1000:
                self._seen = {key: (now, 0)}
        if held:
            record.msg = f"{record.msg} ({held} more like this in the last {self.window_s:g}s not shown)"
        return True


_QUERY = re.compile(r"\?.*$")


class QueryRedactor(logging.Filter):
    """Drops the query string from access-log lines: a client may put a key there, and it must not
    be written to the log (the server never reads keys from the URL)."""

    def filter(self, record: logging.LogRecord) -> bool:
        args = record.args
        if isinstance(args, tuple) and len(args) >= 3 and isinstance(args[2], str) and "?" in args[2]:
            record.args = (*args[:2], _QUERY.sub("?[query not logged]", args[2]), *args[3:])
        return True


_repeats = RepeatFilter()
_queries = QueryRedactor()


def install_log_filters() -> None:
    """Rate-limit the accept loop's and the protocols' messages; keep query strings out of the access log."""
    for name in ("asyncio", "uvicorn.error"):
        logger = logging.getLogger(name)
        if _repeats not in logger.filters:
            logger.addFilter(_repeats)
    access = logging.getLogger("uvicorn.access")
    if _queries not in access.filters:
        access.addFilter(_queries)


def raise_file_limit() -> int:
    """Raise this process's open-file limit to its hard limit; the soft limit now in force."""
    try:
        import resource
    except ImportError:  # not POSIX
        return 1 << 16
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard == resource.RLIM_INFINITY or hard > soft:
        target = 1 << 16 if hard == resource.RLIM_INFINITY else hard
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))
            soft = target
        except (ValueError, OSError):
            pass
    return soft


def connection_limit(max_connections: int) -> int:
    """``max_connections`` kept below the open-file limit, with room for the app's own files."""
    return max(16, min(max_connections, raise_file_limit() - 64))


def protocol(max_connections: int, header_timeout_s: float) -> type[GuardedH11Protocol]:
    """The protocol class with these limits (see :func:`connection_limit`)."""
    attributes = {
        "max_connections": connection_limit(max_connections),
        "header_timeout_s": header_timeout_s,
        "waiting": OrderedDict(),
    }
    return type("GuardedH11", (GuardedH11Protocol,), attributes)


def config(
    app: FastAPI,
    host: str,
    port: int,
    *,
    forwarded_allow_ips: str | None = None,
    max_connections: int = DEFAULT_MAX_CONNECTIONS,
    header_timeout_s: float = DEFAULT_HEADER_TIMEOUT_S,
    **options: Any,
) -> uvicorn.Config:
    """Uvicorn settings for one process and one event loop, so every request shares the
    per-service concurrency limits. ``X-Forwarded-*`` headers are believed only from
    ``forwarded_allow_ips``, and from nobody when it is not given (not even from loopback:
    a local client could otherwise claim any address and escape its rate limit)."""
    options.setdefault("log_level", "info")
    return uvicorn.Config(
        app,
        host=host,
        port=port,
        workers=1,
        http=protocol(max_connections, header_timeout_s),
        **_common(forwarded_allow_ips),
        **options,
    )


def _common(forwarded_allow_ips: str | None) -> dict[str, Any]:
    """The uvicorn settings of one process and of workers alike (installs the log filters too)."""
    install_log_filters()
    trusted = bool(forwarded_allow_ips and forwarded_allow_ips.strip())
    return {
        "proxy_headers": trusted,
        "forwarded_allow_ips": forwarded_allow_ips if trusted else None,
        "lifespan": "on",
        "timeout_keep_alive": 5,
    }


def serve(app: FastAPI, host: str, port: int, **options: Any) -> None:
    """Serve until interrupted."""
    uvicorn.Server(config(app, host, port, **options)).run()


WORKER_SETTINGS = "FACTCHECK_SERVER_SETTINGS_JSON"


def serve_workers(
    settings_json: str,
    host: str,
    port: int,
    workers: int,
    *,
    forwarded_allow_ips: str | None = None,
    max_connections: int = DEFAULT_MAX_CONNECTIONS,
    header_timeout_s: float = DEFAULT_HEADER_TIMEOUT_S,
    log_level: str = "info",
) -> None:
    """Serve with ``workers`` processes sharing one listening socket (uvicorn's supervisor).

    Each worker builds its app from ``settings_json`` (handed over in the environment) and
    has its own event loop, checkers, answer cache and rate buckets; the connection cap is
    split between them. The SQLite cache file is shared.
    """
    os.environ[WORKER_SETTINGS] = settings_json
    os.environ["FACTCHECK_WORKER_MAX_CONNECTIONS"] = str(max(16, connection_limit(max_connections) // workers))
    os.environ["FACTCHECK_HEADER_TIMEOUT_S"] = str(header_timeout_s)
    uvicorn.run(
        "factcheck.server.app:app_from_environment",
        factory=True,
        host=host,
        port=port,
        workers=workers,
        http="factcheck.server.runner:GuardedH11Protocol",
        **_common(forwarded_allow_ips),
        log_level=log_level,
    )


@contextmanager
def serve_in_thread(
    app: FastAPI, host: str = "127.0.0.1", *, startup_s: float = 120.0, **options: Any
) -> Iterator[str]:
    """Serve ``app`` on a free port of ``host`` in a daemon thread; yields its base URL.

    The socket is bound before the server starts, so the port is known and
    never raced for; the block starts once the app's start-up (warm-up) is done.
    ``options`` go to :func:`config` (``forwarded_allow_ips``, ``max_connections``, ...).
    """
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((host, 0))
    port = sock.getsockname()[1]
    options.setdefault("log_level", "warning")
    server = uvicorn.Server(config(app, host, port, **options))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True, name="factcheck-server")
    thread.start()
    started = time.monotonic()
    while not server.started:
        if not thread.is_alive() or time.monotonic() - started > startup_s:
            sock.close()
            raise RuntimeError(f"the server on {host}:{port} did not start")
        time.sleep(0.02)
    try:
        yield f"http://{host}:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout=10)
        sock.close()
