"""A check whose client went away is stopped (its agent calls cancelled, none started after) and counted;
a claim the deadline came before is marked ``"checked": false`` in the answer."""

from __future__ import annotations

import asyncio
import socket
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

import httpx
import pytest

pytest.importorskip("fastapi", reason="the server extra is not installed")

from factcheck.plugin import Source
from factcheck.server.app import create_app
from factcheck.server.runner import serve_in_thread
from factcheck.server.settings import ServerSettings
from factcheck.testing import ScriptedVerifier, registered
from factcheck.types import Claim, Evidence
from tests.test_server import AUTH, KEY, SlowFor, config_with, events

CALL_S = 0.6  # each retrieval of the counting source takes this long


@dataclass(frozen=True)
class Counting(Source):
    """A slow source that writes down each retrieval as it starts, ends, or is cancelled."""

    name = "counting"
    log: ClassVar[list[tuple[str, str, float]]] = []  # (what, claim, when): started, finished, cancelled
    lock: ClassVar[threading.Lock] = threading.Lock()

    def note(self, what: str, claim: Claim) -> None:
        with self.lock:
            self.log.append((what, claim.text, time.monotonic()))

    async def retrieve(self, claim: Claim) -> list[Evidence]:
        self.note("started", claim)
        try:
            await asyncio.sleep(CALL_S)
        except asyncio.CancelledError:
            self.note("cancelled", claim)
            raise
        self.note("finished", claim)
        return [Evidence(source=self.name, text="A passage.", title="Passage", url="https://example.org/p")]

    @classmethod
    def started(cls) -> list[str]:
        with cls.lock:
            return [claim for what, claim, _ in cls.log if what == "started"]

    @classmethod
    def events(cls, what: str) -> list[str]:
        with cls.lock:
            return [claim for done, claim, _ in cls.log if done == what]


@pytest.fixture
def one_at_a_time(tmp_path: Path) -> Iterator[str]:
    """A server whose one agent retrieves with :class:`Counting`, one claim at a time."""
    config = tmp_path / "factcheck.toml"
    config.write_text(
        'profile = "offline"\n[agents.corpus]\nsource = "counting"\nverifier = "scripted"\n'
        "[pipeline]\nmax_concurrency = 1\n"
    )
    settings = ServerSettings(api_keys=(KEY,), profile="offline", rate_per_minute=0, config=str(config))
    with registered(Counting(), ScriptedVerifier()), serve_in_thread(create_app(settings)) as url:
        Counting.log.clear()
        yield url


def sentences(tag: str, count: int = 6) -> str:
    """``count`` claims no earlier check judged (the judgment cache would answer them without a call)."""
    return " ".join(f"Claim {tag} number {n} is checked one at a time." for n in range(count))


def wait_for_calls(count: int, timeout: float = 20) -> None:
    deadline = time.monotonic() + timeout
    while len(Counting.started()) < count:
        assert time.monotonic() < deadline, f"no {count} calls: {Counting.log}"
        time.sleep(0.01)


def health(url: str) -> dict[str, Any]:
    return dict(httpx.get(f"{url}/v1/health", timeout=10).json())


def test_a_stream_whose_client_goes_away_starts_no_further_agent_call(one_at_a_time: str) -> None:
    url = one_at_a_time
    assert health(url)["checks_cancelled"] == 0
    with httpx.stream("POST", f"{url}/v1/check/stream", json={"text": sentences("s")}, headers=AUTH) as response:
        lines = response.iter_lines()
        assert next(lines) == "event: claims"
        wait_for_calls(1)  # the first claim is being retrieved: the client goes away now
    gone = time.monotonic()
    time.sleep(4 * CALL_S)  # the six claims would have taken 3.6 s
    started = Counting.started()
    assert len(started) == 1, Counting.log  # no agent call started after the client had gone
    assert Counting.events("cancelled") == started  # and the one under way was stopped, not finished
    assert all(when < gone + CALL_S for _, _, when in Counting.log)
    assert health(url)["checks_cancelled"] == 1


def test_a_plain_check_whose_client_goes_away_starts_no_further_agent_call(one_at_a_time: str) -> None:
    url = one_at_a_time
    body = {"text": sentences("p")}
    request = httpx.Request("POST", f"{url}/v1/check", json=body, headers=AUTH)
    head = "POST /v1/check HTTP/1.1\r\n" + "".join(f"{k}: {v}\r\n" for k, v in request.headers.items())
    # A raw socket: the request sent whole, then closed while the check runs (no client library waits on).
    with socket.create_connection((request.url.host, request.url.port or 80)) as sock:
        sock.sendall(head.encode() + b"\r\n" + request.read())
        wait_for_calls(1)
    time.sleep(4 * CALL_S)
    started = Counting.started()
    assert len(started) == 1, Counting.log
    assert Counting.events("cancelled") == started
    assert health(url)["checks_cancelled"] == 1


def test_claims_the_deadline_came_before_are_marked_not_checked(tmp_path: Path) -> None:
    text = "The first claim is quick. The second claim comes slowly."
    settings = ServerSettings(
        api_keys=(KEY,), profile="offline", rate_per_minute=0, config=config_with(tmp_path, "slow-for"), deadline_s=0.5
    )
    with registered(SlowFor(), ScriptedVerifier()), serve_in_thread(create_app(settings)) as url:
        data = httpx.post(f"{url}/v1/check", json={"text": text}, headers=AUTH, timeout=10).json()
        with httpx.stream("POST", f"{url}/v1/check/stream", json={"text": text}, headers=AUTH) as streamed:
            verdict = events(streamed)[-1][1]
        complete = httpx.post(f"{url}/v1/check", json={"text": "The first claim is quick."}, headers=AUTH).json()
    for answer in (data, verdict):
        quick, slow = answer["claims"]
        assert "checked" not in quick and quick["label"] == "TRUE"
        assert slow["checked"] is False and slow["label"] == "UNVERIFIED"
    assert "checked" not in complete["claims"][0]
