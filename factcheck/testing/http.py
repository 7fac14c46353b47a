"""The one fake HTTP server of factcheck's tests and benchmarks: a small threaded server on
127.0.0.1 that replays scripted answers, so tests drive the real client code through real
sockets without touching the internet.

Answers come from routes (``route(method, path, handler)``, a Python function of the
:class:`Request`), after any queued for that route (``queue(...)``: errors, delays),
else from ``fallback``. The fake LLM server (:mod:`factcheck.testing.llm`) and the
tests' search and wiki fakes are all this server with other routes::

    with FakeServer() as server:
        server.route("GET", "/w/api.php", lambda request: Response({"query": {}}))
        ...  # point the client at server.url
"""

from __future__ import annotations

import functools
import json
import socket
import threading
import time
from collections import defaultdict, deque
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

STOP_POLL_S = 0.05  # how often the serving loop looks whether stop() was asked


@dataclass
class Request:
    """What the server received."""

    method: str
    path: str
    query: dict[str, list[str]]
    headers: dict[str, str]
    body: bytes

    def json(self) -> Any:
        """The body parsed as JSON (None for an empty body)."""
        return json.loads(self.body or b"null")


@dataclass
class Response:
    """What the server answers: a JSON value (or raw bytes), status, headers, and a delay before answering.

    The Content-Type is ``application/json`` unless ``headers`` gives one (a text/plain error page).
    """

    body: Any = None
    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)
    delay_s: float = 0.0
    raw: bytes | None = None


Route = Callable[[Request], Response]


def no_route(request: Request) -> Response:
    """The answer where no route matches: 404 naming the method and path."""
    return Response({"error": f"no route {(request.method, request.path)}"}, status=404)


class FakeServer:
    """A threaded HTTP server; use as ``with FakeServer() as server`` and read ``server.url``.

    ``keep_alive``: speak HTTP/1.1 and keep a client's connection open between requests, as
    real API servers do (HTTP/1.0 otherwise: one request a connection). ``record``: keep every
    :class:`Request` in ``requests`` (a server left running for a benchmark turns it off).
    Stopping closes the connections clients keep open and wakes delayed answers, so a stop
    never waits on a stalled client or a scripted delay.
    """

    def __init__(
        self, *, port: int = 0, keep_alive: bool = False, record: bool = True, fallback: Route = no_route
    ) -> None:
        self.routes: dict[tuple[str, str], Route] = {}
        self.queued: dict[tuple[str, str], deque[Response]] = defaultdict(deque)
        self.requests: list[Request] = []
        self.fallback = fallback
        self._record = record
        self._stopping = threading.Event()
        self._connections: set[socket.socket] = set()
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None
        self._httpd = ThreadingHTTPServer(("127.0.0.1", port), self._handler(keep_alive))
        self._httpd.daemon_threads = True
        self.url = f"http://127.0.0.1:{self._httpd.server_address[1]}"

    def route(self, method: str, path: str, handler: Route) -> None:
        """Answer ``method path`` with ``handler(request)``."""
        self.routes[(method, path)] = handler

    def queue(self, method: str, path: str, *responses: Response) -> None:
        """Serve these responses, in order, before the route's own answers."""
        self.queued[(method, path)].extend(responses)

    def calls(self, path: str) -> list[Request]:
        """The requests received on ``path``."""
        return [r for r in self.requests if r.path == path]

    def answer(self, request: Request) -> Response:
        """The response to ``request``: a queued one first, then the route's, then the fallback's."""
        if self._record:
            self.requests.append(request)
        key = (request.method, request.path)
        if self.queued[key]:
            return self.queued[key].popleft()
        return self.routes.get(key, self.fallback)(request)

    def start(self) -> FakeServer:
        """Start serving in a background thread (the port is open from construction on)."""
        # A short poll: stop() waits for the loop's next poll (serve_forever's default is half a second).
        serve = functools.partial(self._httpd.serve_forever, poll_interval=STOP_POLL_S)
        self._thread = threading.Thread(target=serve, name="fake-server", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving, close the connections clients keep open and the port."""
        if self._thread is None:
            return
        self._stopping.set()
        self._httpd.shutdown()
        with self._lock:
            for connection in self._connections:
                with suppress(OSError):  # already closed by its client
                    connection.shutdown(socket.SHUT_RDWR)  # a kept-alive client sees the server go
        self._httpd.server_close()
        self._thread = None

    def __enter__(self) -> FakeServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def _handler(self, keep_alive: bool) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1" if keep_alive else "HTTP/1.0"

            def setup(self) -> None:
                super().setup()
                with server._lock:
                    server._connections.add(self.connection)

            def finish(self) -> None:
                with server._lock:
                    server._connections.discard(self.connection)
                with suppress(OSError):  # the stop already closed it
                    super().finish()

            def _serve(self) -> None:
                parts = urlsplit(self.path)
                length = int(self.headers.get("Content-Length") or 0)
                request = Request(
                    self.command, parts.path, parse_qs(parts.query), dict(self.headers.items()), self.rfile.read(length)
                )
                response = server.answer(request)
                if response.delay_s and server._stopping.wait(response.delay_s):
                    self.close_connection = True
                    return  # stopped while it waited: nobody is listening for the answer
                payload = response.raw if response.raw is not None else json.dumps(response.body).encode()
                try:
                    self.send_response(response.status)
                    if not any(name.lower() == "content-type" for name in response.headers):
                        self.send_header("Content-Type", "application/json")  # unless the response names its own
                    self.send_header("Content-Length", str(len(payload)))
                    for name, value in response.headers.items():
                        self.send_header(name, value)
                    self.end_headers()
                    self.wfile.write(payload)
                except OSError:
                    self.close_connection = True  # the client gave up (a time-out test) or the server stopped

            do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = _serve

            def log_message(self, format: str, *args: Any) -> None:
                pass

        return Handler


class InFlight:
    """A route that answers with ``answer(request)`` after ``delay_s`` and records the most requests it held at once."""

    def __init__(self, answer: Route, delay_s: float = 0.1) -> None:
        self.answer = answer
        self.delay_s = delay_s
        self.lock = threading.Lock()
        self.now = self.most = 0

    def __call__(self, request: Request) -> Response:
        with self.lock:
            self.now += 1
            self.most = max(self.most, self.now)
        time.sleep(self.delay_s)
        with self.lock:
            self.now -= 1
        return self.answer(request)


@contextmanager
def serving() -> Iterator[FakeServer]:
    """A running FakeServer for the block."""
    with FakeServer() as server:
        yield server
