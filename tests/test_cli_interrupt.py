"""Ctrl-C in any command: exit status 130 and one ``interrupted: ...`` line saying what was kept."""

from __future__ import annotations

import io
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import click
from click.testing import CliRunner

import factcheck
from factcheck.cli import cli
from factcheck.cli.interrupted import keeps
from factcheck.testing import registered
from factcheck.testing.http import FakeServer, Request, Response


def _interruptible() -> None:
    """In the child: SIGINT acts as Ctrl-C even where the tests run with SIGINT ignored (no job control)."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def never_answers(request: Request) -> Response:
    """A MediaWiki that takes the request and does not answer for a minute (stopping the server wakes it)."""
    return Response({}, delay_s=60)


def test_ctrl_c_during_a_check_exits_130_with_one_line(tmp_path: Path) -> None:
    with FakeServer(fallback=never_answers) as wiki:
        command = [sys.executable, "-m", "factcheck", "check", "The Eiffel Tower is in Paris."]
        command += ["--profile", "wiki", "--wikipedia-url", f"{wiki.url}/w/api.php", "--cache", str(tmp_path / "c.db")]
        env = {**os.environ, "FACTCHECK_LOAD_PLUGINS": ""}
        process = subprocess.Popen(
            command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, preexec_fn=_interruptible
        )
        deadline = time.monotonic() + 120
        while not wiki.requests:  # the check is waiting for the wiki: Ctrl-C now
            assert process.poll() is None, process.communicate()
            assert time.monotonic() < deadline, "the check never asked the wiki"
            time.sleep(0.05)
        process.send_signal(signal.SIGINT)
        stdout, stderr = process.communicate(timeout=60)
    assert process.returncode == 130, stderr
    assert stdout == b""
    lines = stderr.decode().strip().splitlines()
    assert lines == [f"interrupted: nothing was printed; the cache {tmp_path / 'c.db'} keeps the judgments made so far"]


@click.command(name="slow")
@click.option("--kept", is_flag=True)
def slow(kept: bool) -> None:
    if kept:
        keeps(lambda: "3 of 5 rows in out.jsonl")
    raise KeyboardInterrupt


@click.command(name="ask")
def ask() -> None:
    click.confirm("go on?", abort=True)


class Plugin:
    @factcheck.hookimpl
    def register_commands(self, register):  # type: ignore[no-untyped-def]
        register(slow)
        register(ask)


def test_every_command_exits_130_saying_what_was_kept() -> None:
    with registered(Plugin()):
        said = CliRunner().invoke(cli, ["slow", "--kept"])
        assert (said.exit_code, said.output) == (130, "interrupted: 3 of 5 rows in out.jsonl\n")
        unsaid = CliRunner().invoke(cli, ["slow"])
        assert (unsaid.exit_code, unsaid.output) == (130, "interrupted: nothing was written\n")


class CtrlCAtPrompt(io.BytesIO):
    """Standard input whose reading is interrupted, as Ctrl-C at a question interrupts it."""

    def read(self, size: int | None = -1) -> bytes:
        if size == 0:  # click looking whether the stream is binary
            return b""
        raise KeyboardInterrupt

    read1 = read


def test_ctrl_c_at_a_question_is_an_interrupt_and_no_is_still_aborted() -> None:
    with registered(Plugin()):
        answered_no = CliRunner().invoke(cli, ["ask"], input="n\n")
        assert answered_no.exit_code == 1 and answered_no.output.endswith("Aborted!\n")
        interrupted = CliRunner().invoke(cli, ["ask"], input=CtrlCAtPrompt())
        assert interrupted.exit_code == 130
        assert "interrupted: nothing was written\n" in interrupted.output and "Aborted!" not in interrupted.output
