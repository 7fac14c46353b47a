"""A small real HTTP server on 127.0.0.1 for tests: routes answer from Python functions,
and queued responses (errors, delays) are served first, so tests drive the real
client code through real sockets without touching the internet."""

from __future__ import annotations

import json
import threading
import time
from collections import defaultdict, deque
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit


@dataclass
class Request:
    """What the server received."""

    method: str
    path: str
    query: dict[str, list[str]]
    headers: dict[str, str]
    body: bytes

    def json(self) -> Any:
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


class FakeServer:
    """A threaded HTTP server; use as ``with FakeServer() as server`` and read ``server.url``."""

    def __init__(self) -> None:
        self.routes: dict[tuple[str, str], Route] = {}
        self.queued: dict[tuple[str, str], deque[Response]] = defaultdict(deque)
        self.requests: list[Request] = []
        server = self

        class Handler(BaseHTTPRequestHandler):
            def _serve(self) -> None:
                parts = urlsplit(self.path)
                length = int(self.headers.get("Content-Length") or 0)
                request = Request(
                    self.command, parts.path, parse_qs(parts.query), dict(self.headers.items()), self.rfile.read(length)
                )
                server.requests.append(request)
                key = (self.command, parts.path)
                if server.queued[key]:
                    response = server.queued[key].popleft()
                elif key in server.routes:
                    response = server.routes[key](request)
                else:
                    response = Response({"error": f"no route {key}"}, status=404)
                if response.delay_s:
                    time.sleep(response.delay_s)
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
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up (a time-out test)

            do_GET = do_POST = _serve

            def log_message(self, format: str, *args: Any) -> None:
                pass

        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
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

    def __enter__(self) -> FakeServer:
        threading.Thread(target=self._httpd.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()


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
