"""Running the app with uvicorn: in the foreground (``factcheck serve``) or in a thread (tests, benchmarks)."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import uvicorn
from fastapi import FastAPI


def config(app: FastAPI, host: str, port: int, **options: Any) -> uvicorn.Config:
    """Uvicorn settings for one process and one event loop, so every request shares the
    per-service concurrency limits; ``X-Forwarded-*`` is trusted only from ``forwarded_allow_ips``."""
    options.setdefault("log_level", "info")
    return uvicorn.Config(app, host=host, port=port, workers=1, proxy_headers=True, lifespan="on", **options)


def serve(app: FastAPI, host: str, port: int, **options: Any) -> None:
    """Serve until interrupted."""
    uvicorn.Server(config(app, host, port, **options)).run()


@contextmanager
def serve_in_thread(app: FastAPI, host: str = "127.0.0.1", *, startup_s: float = 120.0) -> Iterator[str]:
    """Serve ``app`` on a free port of ``host`` in a daemon thread; yields its base URL.

    The socket is bound before the server starts, so the port is known and
    never raced for; the block starts once the app's start-up (warm-up) is done.
    """
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((host, 0))
    port = sock.getsockname()[1]
    server = uvicorn.Server(config(app, host, port, log_level="warning"))
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
