"""factcheck batch killed for real (SIGKILL, SIGINT) half-way, then rerun: every document once.

The batch runs as a subprocess against the fake model server (0.25 s a call,
two documents at a time), so it is certainly mid-way when the signal lands.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from factcheck.testing.http import Request, Response
from factcheck.testing.llm import FakeChatServer
from tests.test_batch import ARTICLE, lines_of, offline_config

SENTENCES = [
    "Statins lower LDL cholesterol.",
    "Smoking causes lung cancer.",
    "Aspirin lowers the risk of heart attacks.",
    "Vitamin C does not cure the common cold.",
    "Exercise improves sleep quality.",
    "Coffee never causes dehydration.",
]


def _interruptible() -> None:
    """In the child: SIGINT acts as Ctrl-C, even when the tests run in the background of a shell without job
    control, which starts them with SIGINT ignored (a child inherits that, and Python then leaves it ignored)."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def start(*args: str | Path) -> subprocess.Popen[bytes]:
    command = [sys.executable, "-m", "factcheck", "batch", *map(str, args), "--concurrency", "2", "--no-cache", "-q"]
    return subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, preexec_fn=_interruptible)


def wait_for_lines(out: Path, count: int, process: subprocess.Popen[bytes], timeout_s: float = 60.0) -> int:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        done = len(out.read_bytes().splitlines()) if out.exists() else 0
        if done >= count:
            return done
        assert process.poll() is None, process.communicate()
        time.sleep(0.02)
    raise AssertionError(f"no {count} lines in {out} after {timeout_s}s")


@pytest.fixture
def slow_llm() -> Iterator[FakeChatServer]:
    with FakeChatServer(latency_s=0.25) as server:
        yield server


def test_sigkill_half_way_then_rerun_loses_and_repeats_nothing(tmp_path: Path, slow_llm: FakeChatServer) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    for number, sentence in enumerate(SENTENCES):
        (docs / f"{number}.txt").write_text(sentence + "\n")
        (docs / f"{number}.html").write_text(ARTICLE.replace("Statins lower LDL cholesterol", sentence.rstrip(".")))
    ids = sorted(p.name for p in docs.iterdir())
    config, out = offline_config(tmp_path, base_url=slow_llm.url), tmp_path / "out.jsonl"
    process = start(docs, "--out", out, "--config", config)
    wait_for_lines(out, 3, process)
    process.send_signal(signal.SIGKILL)
    assert process.wait(timeout=30) == -signal.SIGKILL
    kept = lines_of(out)
    assert 3 <= len(kept) < len(ids)
    with out.open("ab") as handle:  # and as if the kill had landed in the middle of a write
        handle.write(b'{"id": "5.txt", "schema": "factcheck/1", "te')
    before = slow_llm.requests
    rerun = start(docs, "--out", out, "--config", config)
    assert rerun.wait(timeout=120) == 0, rerun.communicate()
    records = lines_of(out)
    assert sorted(r["id"] for r in records) == ids  # none lost, none twice
    assert records[: len(kept)] == kept  # earlier lines untouched
    assert not any("error" in r for r in records)
    # Only the documents without a line were checked again (the HTML pages make 2 LLM calls each).
    assert slow_llm.requests - before == sum(r["usage"]["llm_calls"] for r in records[len(kept) :])


class StallingChat(FakeChatServer):
    """A model that answers its first ``quick`` requests after 0.25 s, and every later one after ``stall_s``
    while ``stalling`` is set. Half the documents here find no evidence and never ask the model, so the rest
    were once done in about a second: the stall keeps a batch certainly mid-way when the signal lands,
    however slowly its lines reach the disk (each is fsync-ed) on a loaded machine."""

    def __init__(self, quick: int, stall_s: float) -> None:
        super().__init__(latency_s=0.25)
        self.quick, self.stall_s, self.stalling = quick, stall_s, True

    def _chat(self, request: Request) -> Response:
        answer = super()._chat(request)
        if self.stalling and self.requests > self.quick:
            answer.delay_s = self.stall_s
        return answer


def test_sigint_stops_cleanly_and_a_rerun_finishes(tmp_path: Path) -> None:
    path = tmp_path / "in.jsonl"
    texts = [f"{s[:-1]} in cohort {i}." for i, s in enumerate(SENTENCES * 4)]  # 24 texts, no two the same
    path.write_text("".join(json.dumps({"id": f"d{i}", "text": t}) + "\n" for i, t in enumerate(texts)))
    with StallingChat(quick=4, stall_s=5.0) as llm:
        config, out = offline_config(tmp_path, base_url=llm.url), tmp_path / "out.jsonl"
        process = start(path, "--out", out, "--config", config)
        wait_for_lines(out, 2, process)
        process.send_signal(signal.SIGINT)
        _, stderr = process.communicate(timeout=30)
        llm.stalling = False  # the rerun is answered at the usual pace
        assert process.returncode == 130, stderr
        assert b"run the same command again to continue" in stderr
        kept = lines_of(out)  # every line whole: json.loads would fail on a torn one
        assert 2 <= len(kept) < 24 and out.read_bytes().endswith(b"\n")
        said = f"interrupted: {out} keeps {len(kept)} of 24 documents ({len(kept)} from this run)"
        assert stderr.decode().strip().splitlines()[-1].startswith(said), stderr
        rerun = start(path, "--out", out, "--config", config)
        assert rerun.wait(timeout=120) == 0, rerun.communicate()
    assert sorted(r["id"] for r in lines_of(out)) == sorted(f"d{i}" for i in range(24))
    assert os.path.exists(str(out) + ".run.json")
