"""Running the app with uvicorn: in the foreground (``factcheck serve``) or in a thread (tests, benchmarks).

Connections are guarded before the app sees them (:class:`GuardedH11Protocol`):
at most ``max_connections`` open at once, so the process never runs out of file
descriptors. A connection is *pending* while it has not shown that it is a
caller: while it waits for its request headers, and while the body of a request
whose key the app has not accepted is still coming (the app checks the key as
soon as the headers are in, before the body, and vouches for the connection;
see :data:`VOUCH`). When a new connection would pass the cap, the oldest pending
connection is closed to make room (a flood of idle or slow connections pushes
out its own, not the clients being served); only when no connection is pending
is the new one closed. One client address may hold at most
``max_pending_per_address`` pending connections: its next one closes its oldest,
so an address without a key cannot take the slots that callers need (it is
trimmed :data:`ADDRESS_CAP_DELAY_S` later, so a caller's connection that came in
a burst of the same address's has its headers read, and its key seen, first). A
connection must send its request headers within ``header_timeout_s`` (a client
that opens connections and sends nothing, or a byte a minute, is cut off); the
body has a deadline and a minimum rate in the app. A request answered before its
body is all in (a refusal) has its connection closed: the rest is not read.
Repeated log lines from the accept loop (``Too many open files``) and from the
protocol are rate-limited.
"""

from __future__ import annotations

import asyncio
import errno
import functools
import logging
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

from factcheck.errors import ConfigError

DEFAULT_MAX_CONNECTIONS = 1000
DEFAULT_HEADER_TIMEOUT_S = 10.0
DEFAULT_MAX_PENDING_PER_ADDRESS = 64
ADDRESS_CAP_DELAY_S = 0.05  # how soon an address over its cap of pending connections is trimmed
# The ASGI scope extension through which the app vouches for a connection whose key it accepted:
# ``scope["extensions"][VOUCH]["vouch"]()``.
VOUCH = "factcheck.vouch"
REPEAT_WINDOW_S = 10.0


class GuardedH11Protocol(H11Protocol):
    """uvicorn's h11 protocol with a connection cap, a cap per client address on pending connections,
    and a time-out on reading request headers.

    The limits are class attributes: :func:`protocol` makes a subclass with its own (a worker process
    of ``--workers`` gets its subclass by name, :data:`factcheck.server.workers.Protocol`).
    """

    max_connections: int = DEFAULT_MAX_CONNECTIONS
    header_timeout_s: float = DEFAULT_HEADER_TIMEOUT_S
    max_pending_per_address: int = DEFAULT_MAX_PENDING_PER_ADDRESS
    # Pending connections, oldest first, and the same by client address (maps per server: see protocol()).
    waiting: ClassVar[OrderedDict[int, GuardedH11Protocol]] = OrderedDict()
    pending_by_address: ClassVar[dict[str, OrderedDict[int, GuardedH11Protocol]]] = {}

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        over = len(self.connections) >= self.max_connections
        super().connection_made(transport)
        self._header_timer: asyncio.TimerHandle | None = None
        self._vouched: object = None  # the request cycle whose key the app accepted
        self._address = self.client[0] if self.client else "unknown"
        if over:
            if not self.waiting:  # every connection is serving a caller: this one must try again later
                transport.close()
                return
            _, oldest = self.waiting.popitem(last=False)
            oldest._drop()
        self._watch()
        if len(self.pending_by_address.get(self._address, ())) > self.max_pending_per_address:
            # Trimmed a moment later, once what already came has been read: a caller's connection that arrived
            # in a burst of this address's (its headers and key in) is then no longer pending, and stays.
            self.loop.call_later(ADDRESS_CAP_DELAY_S, self._trim_address)

    def data_received(self, data: bytes) -> None:
        super().data_received(data)
        self._watch()

    def handle_events(self) -> None:
        cycle = self.cycle
        super().handle_events()
        if self.cycle is not None and self.cycle is not cycle:  # a new request: its app task has not run yet
            extensions = self.scope.setdefault("extensions", {})
            extensions[VOUCH] = {"vouch": functools.partial(self._vouch, self.cycle)}

    def on_response_complete(self) -> None:
        super().on_response_complete()
        if self.conn.their_state is h11.SEND_BODY and not self.transport.is_closing():
            # Answered before its body was all in (401, 413, 408...): reading the rest would let a client
            # that drips it hold the connection, each byte restarting the keep-alive time-out.
            self.transport.close()
        self._watch()

    def connection_lost(self, exc: Exception | None) -> None:
        self._forget()
        super().connection_lost(exc)

    def _trim_address(self) -> None:
        """Close this address's oldest pending connections while it has more than its cap."""
        same = self.pending_by_address.get(self._address)
        while same and len(same) > self.max_pending_per_address:
            _, oldest = same.popitem(last=False)
            oldest._drop()

    def _vouch(self, cycle: object) -> None:
        """The app accepted the key of ``cycle``'s request: the connection is no longer pending."""
        if cycle is self.cycle:
            self._vouched = cycle
            self._watch()

    def _waiting_for_headers(self) -> bool:
        return self.conn.their_state is h11.IDLE and self.conn.our_state is h11.IDLE

    def _pending(self) -> bool:
        """Waiting for request headers, or for the body of a request nobody vouched for."""
        if self.transport.is_closing():
            return False
        if self._waiting_for_headers():
            return True
        return self.conn.their_state is h11.SEND_BODY and self._vouched is not self.cycle

    def _watch(self) -> None:
        """Keep the pending maps and the header timer (armed while a request's headers are awaited) true."""
        key = id(self)
        if self._pending():
            if key not in self.waiting:
                self.waiting[key] = self
                self.pending_by_address.setdefault(self._address, OrderedDict())[key] = self
        else:
            self._unlist()
        if self._waiting_for_headers() and not self.transport.is_closing():
            if self._header_timer is None:
                self._header_timer = self.loop.call_later(self.header_timeout_s, self._headers_too_slow)
        else:
            self._cancel_header_timer()

    def _unlist(self) -> None:
        key = id(self)
        self.waiting.pop(key, None)
        same = self.pending_by_address.get(getattr(self, "_address", ""))
        if same is not None:
            same.pop(key, None)
            if not same:
                del self.pending_by_address[self._address]

    def _cancel_header_timer(self) -> None:
        timer = getattr(self, "_header_timer", None)
        if timer is not None:
            timer.cancel()
            self._header_timer = None

    def _forget(self) -> None:
        self._cancel_header_timer()
        self._unlist()

    def _drop(self) -> None:
        """Close this pending connection to make room for a newer one."""
        self._forget()
        self.transport.close()

    def _headers_too_slow(self) -> None:
        self._header_timer = None
        if self._waiting_for_headers() and not self.transport.is_closing():
            self._forget()
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


def protocol(
    max_connections: int, header_timeout_s: float, max_pending_per_address: int = DEFAULT_MAX_PENDING_PER_ADDRESS
) -> type[GuardedH11Protocol]:
    """The protocol class with these limits (see :func:`connection_limit`)."""
    attributes = {
        "max_connections": connection_limit(max_connections),
        "header_timeout_s": header_timeout_s,
        "max_pending_per_address": max_pending_per_address,
        "waiting": OrderedDict(),
        "pending_by_address": {},
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
    max_pending_per_address: int = DEFAULT_MAX_PENDING_PER_ADDRESS,
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
        http=protocol(max_connections, header_timeout_s, max_pending_per_address),
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


def check_port(host: str, port: int) -> None:
    """ConfigError unless ``port`` of ``host`` can be listened on: said in one line before anything starts,
    where uvicorn would warm the app up first and then log its bind error among its start-up lines.

    Each address ``host`` stands for is bound as uvicorn binds it (``SO_REUSEADDR``: a port only in
    ``TIME_WAIT`` is free) and let go at once. Port 0 (any free one) is never in use.
    """
    if port == 0:
        return
    try:
        addresses = socket.getaddrinfo(host or None, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
    except socket.gaierror as exc:
        raise ConfigError(f"cannot listen on {host}: {exc.strerror}; choose another with --host") from None
    for family, kind, proto, _, address in addresses:
        try:
            with socket.socket(family, kind, proto) as sock:
                sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
                if family == socket.AF_INET6:  # as asyncio binds it: the IPv4 address is bound on its own
                    sock.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)
                sock.bind(address)
        except OSError as exc:
            if exc.errno == errno.EADDRINUSE:
                raise ConfigError(f"port {port} on {host} is in use; choose another with --port") from None
            if exc.errno == errno.EACCES:
                raise ConfigError(
                    f"port {port} on {host} needs more privileges (ports below 1024 do); choose another with --port"
                ) from None
            raise ConfigError(f"cannot listen on {host} port {port}: {exc.strerror or exc}") from None


def serve(app: FastAPI, host: str, port: int, **options: Any) -> None:
    """Serve until interrupted."""
    uvicorn.Server(config(app, host, port, **options)).run()


def serve_processes(
    app: str,
    http: str,
    host: str,
    port: int,
    workers: int,
    *,
    forwarded_allow_ips: str | None = None,
    log_level: str = "info",
) -> None:
    """Serve with ``workers`` processes sharing one listening socket (uvicorn's supervisor): each imports
    the app factory ``app`` and the protocol class ``http`` by name (see :mod:`factcheck.server.workers`)."""
    uvicorn.run(
        app,
        factory=True,
        host=host,
        port=port,
        workers=workers,
        http=http,
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
