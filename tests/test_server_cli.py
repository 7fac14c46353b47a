"""``factcheck serve`` as a user starts it: the command in its own process."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("fastapi", reason="the server extra is not installed")

ROOT = Path(__file__).resolve().parent.parent


def test_a_busy_port_is_one_line_naming_it_and_exit_status_1() -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        env = {**os.environ, "PYTHONPATH": str(ROOT), "FACTCHECK_API_KEYS": ""}
        done = subprocess.run(
            [sys.executable, "-m", "factcheck", "serve", "--port", str(port)],
            capture_output=True,
            text=True,
            env=env,
            timeout=120,
        )
    assert done.returncode == 1, done.stderr
    assert done.stderr.splitlines() == [f"Error: port {port} on 127.0.0.1 is in use; choose another with --port"]
    assert done.stdout == ""


def test_a_port_that_is_free_passes_the_check() -> None:
    from factcheck.server.runner import check_port

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    check_port("127.0.0.1", port)  # no error: free again once closed
    check_port("127.0.0.1", 0)  # any free port
