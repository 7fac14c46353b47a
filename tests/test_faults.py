"""Hostile input and misbehaving plugins: nothing one document, passage or plugin does may stop a check,
a batch or the server (issue 16). The slow load and fault runs are in bench/faults.py."""

from __future__ import annotations

import asyncio
import contextvars
import json
import logging
import os
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import pytest
from click.testing import CliRunner

from factcheck.agent import Agent
from factcheck.batch.engine import Budget, LocalEngine, run_batch
from factcheck.batch.inputs import Document, FolderInput
from factcheck.batch.output import claim_output, lock_path, settings_path
from factcheck.build import build_checker
from factcheck.cache import Cache
from factcheck.calls import SYNC_WORKERS, call_plugin
from factcheck.cli import cli
from factcheck.errors import InputError
from factcheck.extractors.sentence import SentenceExtractor
from factcheck.pipeline import Checker
from factcheck.plugin import Source
from factcheck.resume import AppendLog, exclusive
from factcheck.testing import ScriptedVerifier, StaticSource, registered
from factcheck.testing.llm import FakeChatServer
from factcheck.text import valid_unicode, valid_unicode_data
from factcheck.types import Claim, Evidence

SURROGATE = "\ud800"
KEY = "fault-key-0123456789abcdef"
CLAIM = Claim("c1", "Statins lower LDL cholesterol.", (0, 30))
AUTH = {"Authorization": f"Bearer {KEY}"}


def checker(source: Source, **settings: Any) -> Checker:
    return build_checker(agents=[Agent("a", source, ScriptedVerifier())], cache={"enabled": False}, **settings)


def lines_of(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


@pytest.fixture(autouse=True, scope="module")
def _warm() -> None:
    """Load the sentence splitter once, so the short time-outs below time the plugins, not spaCy."""
    checker(StaticSource()).check("Statins lower LDL cholesterol in adults. The splitter is loaded.")


# ---- misbehaving sources -------------------------------------------------------------------


@dataclass(frozen=True)
class Sleeper(Source):
    """Blocks its event loop (``time.sleep``) in retrieve, or in prepare."""

    name: str = "sleeper"
    seconds: float = 3.0
    in_prepare: bool = False

    async def prepare(self) -> None:
        if self.in_prepare:
            time.sleep(self.seconds)

    async def retrieve(self, claim: Claim) -> list[Evidence]:
        time.sleep(self.seconds)
        return [Evidence(self.name, "Slow evidence.")]


@dataclass(frozen=True)
class Stubborn(Source):
    """Swallows its cancellation and keeps going."""

    name: str = "stubborn"

    async def retrieve(self, claim: Claim) -> list[Evidence]:
        for _ in range(20):
            with suppress(asyncio.CancelledError):
                await asyncio.sleep(0.5)
        return []


@dataclass(frozen=True)
class NeverReady(Source):
    """A ``prepare`` that never returns."""

    name: str = "never-ready"

    async def prepare(self) -> None:
        await asyncio.Event().wait()

    async def retrieve(self, claim: Claim) -> list[Evidence]:
        return [Evidence(self.name, "Never reached.")]


@dataclass(frozen=True)
class Raiser(Source):
    """Raises a BaseException that is no Exception."""

    name: str = "raiser"
    kind: str = "KeyboardInterrupt"

    async def retrieve(self, claim: Claim) -> list[Evidence]:
        if self.kind == "SystemExit":
            raise SystemExit(3)
        if self.kind == "CancelledError":
            raise asyncio.CancelledError()
        raise KeyboardInterrupt


@dataclass(frozen=True)
class Garbage(Source):
    """Returns whatever it is given instead of Evidence."""

    name: str = "garbage"
    items: tuple[Any, ...] = ()

    async def retrieve(self, claim: Claim) -> list[Evidence]:
        return list(self.items)


@dataclass(frozen=True)
class Flood(Source):
    """Returns far too many passages."""

    name: str = "flood"
    count: int = 200_000

    async def retrieve(self, claim: Claim) -> list[Evidence]:
        passage = Evidence(self.name, "Statins lower LDL cholesterol.")
        return [passage] * self.count


@dataclass(frozen=True)
class SyncSource(Source):
    """A plugin written without async."""

    name: str = "sync"

    def retrieve(self, claim: Claim) -> list[Evidence]:  # type: ignore[override]
        time.sleep(0.05)
        return [Evidence(self.name, "Synchronous evidence.")]


@dataclass(frozen=True)
class Held(Source):
    """A plugin written without async whose every call blocks until ``release`` is set."""

    name: str = "held"
    release: threading.Event = field(default_factory=threading.Event)

    def retrieve(self, claim: Claim) -> list[Evidence]:  # type: ignore[override]
        self.release.wait(10)
        return []


@dataclass(frozen=True)
class Watched(Source):
    """Slow; records whether it was cancelled."""

    name: str = "watched"
    cancelled: threading.Event = field(default_factory=threading.Event)

    async def retrieve(self, claim: Claim) -> list[Evidence]:
        try:
            await asyncio.sleep(10)
        except asyncio.CancelledError:
            self.cancelled.set()
            raise
        return []


# ---- 1. valid Unicode at the boundary ------------------------------------------------------


def test_lone_surrogates_become_replacement_characters_and_pairs_are_joined() -> None:
    assert valid_unicode(f"a{SURROGATE}b") == "a\ufffdb"
    assert valid_unicode("\ud83d\ude00") == "\U0001f600"
    assert valid_unicode_data({"k\udc00": [SURROGATE, 1, None]}) == {"k\ufffd": ["\ufffd", 1, None]}
    clean = "plain text, é, 😀"
    assert valid_unicode(clean) is clean


def test_a_surrogate_line_does_not_stop_a_batch(tmp_path: Path) -> None:
    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text(json.dumps({"id": "p", "text": "Statins lower LDL cholesterol in adults."}) + "\n")
    config = tmp_path / "factcheck.toml"
    config.write_text(f'profile = "offline"\n[agents.c]\nsource = "corpus"\nverifier = "lexical"\npath = "{corpus}"\n')
    docs = tmp_path / "in.jsonl"
    texts = [
        "Statins lower LDL cholesterol.",
        f"Statins {SURROGATE} lower LDL.",
        "Statins lower LDL cholesterol a lot.",
    ]
    # json.dumps writes the lone surrogate as the escape \ud800, as any JSON producer may.
    docs.write_text(
        "".join(json.dumps({"id": f"d{i}", "text": t, "note": SURROGATE}) + "\n" for i, t in enumerate(texts))
    )
    out = tmp_path / "out.jsonl"
    result = CliRunner().invoke(cli, ["batch", str(docs), "--out", str(out), "--config", str(config), "--quiet"])
    assert result.exit_code == 0, result.output
    records = sorted(lines_of(out), key=lambda r: r["id"])
    assert [r["id"] for r in records] == ["d0", "d1", "d2"]
    assert records[1]["text"] == "Statins \ufffd lower LDL." and records[1]["meta"] == {"note": "\ufffd"}


def test_surrogate_evidence_does_not_stop_a_batch(tmp_path: Path) -> None:
    source = StaticSource(passages=(f"Statins {SURROGATE} lower LDL.",), title=f"T{SURROGATE}")
    docs = [Document(f"d{i}", f"Claim number {i} is here.") for i in range(5)]
    out = tmp_path / "out.jsonl"
    with AppendLog(out) as log:
        asyncio.run(run_batch(iter(docs), log, LocalEngine(checker(source)), concurrency=2))
    records = lines_of(out)
    assert len(records) == 5 and not any(r.get("error") for r in records)
    evidence = records[0]["claims"][0]["judgments"][0]["evidence"][0]
    assert evidence["text"] == "Statins \ufffd lower LDL." and evidence["title"] == "T\ufffd"


def test_surrogates_in_model_answers_are_replaced() -> None:
    from factcheck.testing.llm import FakeModel

    class Careless(FakeModel):
        def answer(self, body: Any) -> str:
            said = super().answer(body)
            if '"claims"' in said:
                return json.dumps({"claims": [{"claim": f"Statins lower {SURROGATE} LDL.", "queries": []}]})
            return said.replace('"rationale": "', f'"rationale": "{SURROGATE} ', 1)

    with FakeChatServer(model=Careless()) as fake:
        llm = {"base_url": fake.url, "model": "fake-model"}
        checker_ = build_checker(
            extractor="llm",
            agents=[Agent("a", StaticSource(), _llm_verifier())],
            llm=llm,
            cache={"enabled": False},
        )
        verdict = checker_.check("Statins lower LDL cholesterol.")
    answer = json.dumps(verdict.to_dict(), ensure_ascii=False).encode("utf-8")  # no UnicodeEncodeError
    assert "\ufffd" in verdict.claims[0].claim.text and b"\xef\xbf\xbd" in answer
    assert "\ufffd" in verdict.claims[0].judgments[0].rationale


def _llm_verifier() -> Any:
    from factcheck.registry import get_verifiers

    return get_verifiers()["llm"]


# ---- 2. plugins cannot freeze or kill the process ----------------------------------------


def test_a_source_that_blocks_its_loop_times_out_and_abstains() -> None:
    started = time.monotonic()
    verdict = checker(Sleeper(seconds=3), agent_timeout_s=0.5).check("Statins lower LDL cholesterol.")
    assert time.monotonic() - started < 2.5
    (judgment,) = verdict.claims[0].judgments
    assert judgment.factuality is None and "timed out after 0.5s during retrieve" in (judgment.error or "")


def test_a_source_that_swallows_cancellation_is_left_behind() -> None:
    started = time.monotonic()
    verdict = checker(Stubborn(), agent_timeout_s=0.5).check("Statins lower LDL cholesterol.")
    assert time.monotonic() - started < 2.5
    assert "timed out" in (verdict.claims[0].judgments[0].error or "")


def test_a_prepare_that_never_returns_times_out() -> None:
    started = time.monotonic()
    hanging = checker(NeverReady(), prepare_timeout_s=0.5)
    verdict = hanging.check("Statins lower LDL cholesterol.")
    assert time.monotonic() - started < 2.5
    assert "did not finish within 0.5s" in (verdict.claims[0].judgments[0].error or "")
    started = time.monotonic()
    again = hanging.check("Statins lower LDL cholesterol again.")  # not waited for a second time
    assert time.monotonic() - started < 0.4 and "did not finish" in (again.claims[0].judgments[0].error or "")
    blocking = checker(Sleeper(seconds=2, in_prepare=True), prepare_timeout_s=0.3).check("Statins lower LDL.")
    assert "did not finish within 0.3s" in (blocking.claims[0].judgments[0].error or "")


@pytest.mark.parametrize("kind", ["KeyboardInterrupt", "SystemExit", "CancelledError"])
def test_a_plugin_raising_a_base_exception_abstains(kind: str) -> None:
    verdict = checker(Raiser(kind=kind)).check("Statins lower LDL cholesterol.")
    (judgment,) = verdict.claims[0].judgments
    assert judgment.factuality is None and "PluginError" in (judgment.error or "") and kind in (judgment.error or "")
    # The process and the plugin machinery are still fine.
    assert checker(StaticSource()).check("Statins lower LDL cholesterol.").label == "TRUE"


def test_garbage_evidence_is_dropped_with_the_abstention_recorded() -> None:
    garbage = Garbage(items=("a string", {"text": "a dict"}, object(), Evidence("x", 42)))  # type: ignore[arg-type]
    verdict = checker(garbage).check("Statins lower LDL cholesterol.")
    (judgment,) = verdict.claims[0].judgments
    assert judgment.factuality is None and judgment.evidence == ()
    assert "dropped: 1 str, 1 dict, 1 object, 1 Evidence with non-string fields" in (judgment.error or "")
    json.dumps(verdict.to_dict())  # the answer is still JSON
    mixed = checker(Garbage(items=("junk", Evidence("x", "Statins lower LDL.")))).check("Statins lower LDL.")
    assert mixed.claims[0].judgments[0].factuality is True
    assert any("dropped: 1 str" in note for note in mixed.usage.notes)


def test_evidence_per_agent_is_capped() -> None:
    started = time.monotonic()
    verdict = checker(Flood(), max_evidence=5).check("Statins lower LDL cholesterol.")
    assert time.monotonic() - started < 5
    assert len(verdict.claims[0].judgments[0].evidence) == 5
    assert any("returned 200000 passages; the first 5 were kept" in note for note in verdict.usage.notes)


def test_a_synchronous_plugin_runs_in_a_thread() -> None:
    verdict = checker(SyncSource()).check("Statins lower LDL cholesterol.")
    assert verdict.claims[0].judgments[0].evidence[0].text == "Synchronous evidence."


def test_synchronous_plugins_blocked_in_numbers_leave_the_default_executor_free() -> None:
    """Forty synchronous calls blocked at once (a batch's extractions, a plugin waiting on the network)
    hold their own worker threads: the checks' short jobs on asyncio's default executor still run."""
    held = Held()

    async def short_job_while_blocked() -> float:
        calls = [asyncio.ensure_future(call_plugin(held, "retrieve", CLAIM)) for _ in range(40)]
        await asyncio.sleep(0.2)
        started = time.monotonic()
        try:
            assert await asyncio.wait_for(asyncio.to_thread(lambda: "ran"), 5) == "ran"
            return time.monotonic() - started
        finally:
            held.release.set()
            await asyncio.gather(*calls)

    assert asyncio.run(short_job_while_blocked()) < 1


def test_a_plugin_blocking_every_synchronous_call_leaves_the_built_in_extractor_its_threads() -> None:
    """Forty calls of a third party's blocking ``def retrieve``, each left behind, use up that package's worker
    threads only: the built-in sentence extractor (package ``factcheck``) still gets one at once."""
    held = Held()

    async def extract_while_stuck() -> tuple[list[Claim], float]:
        stuck = [asyncio.ensure_future(call_plugin(held, "retrieve", CLAIM)) for _ in range(SYNC_WORKERS + 8)]
        await asyncio.sleep(0.2)
        started = time.monotonic()
        try:
            claims = await call_plugin(SentenceExtractor(), "extract", "Statins lower LDL cholesterol.", timeout_s=5)
            return claims, time.monotonic() - started
        finally:
            held.release.set()
            await asyncio.gather(*stuck)

    claims, took = asyncio.run(extract_while_stuck())
    assert [c.text for c in claims] == ["Statins lower LDL cholesterol."] and took < 2


def test_a_synchronous_plugin_sees_the_callers_context() -> None:
    seen: contextvars.ContextVar[str] = contextvars.ContextVar("seen", default="unset")

    @dataclass(frozen=True)
    class Reader(Source):
        name: str = "reader"

        def retrieve(self, claim: Claim) -> list[Evidence]:  # type: ignore[override]
            return [Evidence(self.name, seen.get())]

    async def call() -> list[Evidence]:
        seen.set("the caller's value")
        return await call_plugin(Reader(), "retrieve", CLAIM)  # type: ignore[no-any-return]

    assert asyncio.run(call())[0].text == "the caller's value"


# ---- 3. bounded work: claims per text, budgets per call ---------------------------------------


def test_claims_per_text_are_capped_with_a_note() -> None:
    text = " ".join(f"Statins lower LDL cholesterol by {i} percent." for i in range(10))
    verdict = checker(StaticSource(), max_claims=3).check(text)
    assert len(verdict.claims) == 3
    assert "10 claims found; only the first 3 were checked (max_claims = 3)" in verdict.usage.notes


def test_a_huge_text_is_read_only_as_far_as_max_claims_needs() -> None:
    text = " ".join(f"Statins lower LDL cholesterol by {i} percent." for i in range(2000))  # about 90 KB
    started = time.monotonic()
    verdict = checker(StaticSource(), max_claims=5).check(text)
    assert time.monotonic() - started < 10
    assert len(verdict.claims) == 5 and verdict.text == text
    assert any("claims were read from the first" in note for note in verdict.usage.notes)


def test_the_llm_call_budget_holds_across_documents_in_flight(tmp_path: Path) -> None:
    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text(json.dumps({"id": "p", "text": "Statins lower LDL cholesterol in adults."}) + "\n")
    with FakeChatServer(latency_s=0.2) as fake:
        config = tmp_path / "factcheck.toml"
        config.write_text(
            f'profile = "offline"\n[agents.c]\nsource = "corpus"\nverifier = "llm"\npath = "{corpus}"\n'
            f'[llm]\nmodel = "gpt-4o-mini"\nbase_url = "{fake.url}"\n'
        )
        docs = tmp_path / "in.jsonl"
        docs.write_text(
            "".join(json.dumps({"id": i, "text": f"Statins lower LDL by {i} percent."}) + "\n" for i in range(8))
        )
        out = tmp_path / "out.jsonl"
        args = ["batch", str(docs), "--out", str(out), "--config", str(config), "--no-cache", "--quiet"]
        result = CliRunner().invoke(cli, [*args, "--concurrency", "8", "--max-llm-calls", "3"])
        assert result.exit_code == 3, result.output
        assert fake.requests == 3  # not one call per document in flight
        written = lines_of(out)
        assert len(written) <= 3 and all(r["usage"]["llm_calls"] == 1 for r in written)
        # A rerun with more budget checks the documents the budget cut short.
        result = CliRunner().invoke(cli, [*args, "--concurrency", "8"])
        assert result.exit_code == 0, result.output
        assert sorted(r["id"] for r in lines_of(out)) == [str(i) for i in range(8)]
        assert all(r["usage"].get("errors", {}).get("budget") is None for r in lines_of(out))


def test_budget_reached_makes_the_batch_stop_before_the_next_document() -> None:
    spending = Budget(max_llm_calls=1).spending()
    spending.charge()
    with pytest.raises(Exception, match="--max-llm-calls 1 reached"):
        spending.charge()
    assert spending.reached() == "--max-llm-calls 1 reached (1 call made)"
    dollars = Budget(max_cost_usd=0.01).spending()
    dollars.charge()
    dollars.add_cost(0.012)  # the call in flight when the limit was reached may pass it; the next may not start
    with pytest.raises(Exception, match=r"--max-cost 0.01 reached \(\$0.0120 spent\)"):
        dollars.charge()


# ---- 5. a corrupt cache is set aside ---------------------------------------------------------


@pytest.mark.parametrize("damage", ["truncate", "garbage"])
def test_a_corrupt_cache_is_moved_aside_with_one_warning(
    tmp_path: Path, damage: str, caplog: pytest.LogCaptureFixture
) -> None:
    path = tmp_path / "cache.sqlite"
    cache = Cache(path)
    for i in range(200):
        cache.set(f"k{i}", "test", {"value": "x" * 100})
    cache.close()
    if damage == "truncate":
        with path.open("r+b") as handle:
            handle.truncate(path.stat().st_size // 3)
    else:
        path.write_bytes(b"not a database at all " * 500)
    for suffix in ("-wal", "-shm"):
        Path(f"{path}{suffix}").unlink(missing_ok=True)
    cache = Cache(path)
    with caplog.at_level(logging.WARNING, logger="factcheck.cache"):
        assert cache.get("k1") is None
        cache.set("fresh", "test", 1)
        assert cache.get("fresh") == 1 and cache.get("k2") is None
    warnings = [r for r in caplog.records if "is corrupt" in r.getMessage()]
    assert len(warnings) == 1 and "a fresh cache was started" in warnings[0].getMessage()
    assert len(list(tmp_path.glob("cache.sqlite.corrupt-*"))) == 1
    cache.close()
    assert Cache(path).get("fresh") == 1  # the fresh file keeps what is cached from now on


# ---- 6. batch: lock, symlinks, write errors ----------------------------------------------------


def test_a_run_starting_while_another_holds_the_output_changes_nothing(tmp_path: Path) -> None:
    docs = tmp_path / "in.jsonl"
    docs.write_text(json.dumps({"id": 1, "text": "Statins lower LDL cholesterol."}) + "\n")
    out = tmp_path / "out.jsonl"
    with exclusive(lock_path(out), out):  # another run is starting
        result = CliRunner().invoke(cli, ["batch", str(docs), "--out", str(out), "--quiet"])
    assert result.exit_code == 1 and "being written by another run" in result.output
    assert not settings_path(out).exists() and not out.exists()


def test_simultaneous_starts_let_exactly_one_run_hold_the_output(tmp_path: Path) -> None:
    out = tmp_path / "out.jsonl"
    barrier = threading.Barrier(12)
    outcomes: list[str] = []
    holding = threading.Event()
    release = threading.Event()

    def start(number: int) -> None:
        barrier.wait()
        try:
            with exclusive(lock_path(out), out):
                claim_output(out, {"settings": "same"})
                holding.set()
                outcomes.append("held")
                release.wait(5)
        except InputError:
            outcomes.append("refused")
        except Exception as exc:
            outcomes.append(f"{type(exc).__name__}: {exc}")

    threads = [threading.Thread(target=start, args=(n,)) for n in range(12)]
    for thread in threads:
        thread.start()
    holding.wait(5)
    time.sleep(0.2)
    release.set()
    for thread in threads:
        thread.join(10)
    assert sorted(set(outcomes)) == ["held", "refused"] and outcomes.count("held") >= 1
    assert json.loads(settings_path(out).read_text()) == {"settings": "same"}


def test_runs_recording_their_settings_at_once_never_share_a_temporary_file(tmp_path: Path) -> None:
    failures: list[str] = []
    for round_ in range(5):
        out = tmp_path / f"out{round_}.jsonl"
        barrier = threading.Barrier(16)

        def start(out: Path, barrier: threading.Barrier) -> None:
            barrier.wait()
            try:
                claim_output(out, {"settings": "same"})
            except Exception as exc:  # any exception is the failure looked for
                failures.append(f"{type(exc).__name__}: {exc}")

        threads = [threading.Thread(target=start, args=(out, barrier)) for _ in range(16)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(10)
        assert json.loads(settings_path(out).read_text()) == {"settings": "same"}
    assert failures == []


def test_folder_input_does_not_follow_links_out_of_the_folder(tmp_path: Path) -> None:
    outside = tmp_path / "secret.txt"
    outside.write_text("The secret is 42.\n")
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "a.txt").write_text("Statins lower LDL cholesterol.\n")
    (folder / "link.txt").symlink_to(outside)
    (folder / "inside.txt").symlink_to(folder / "a.txt")
    (folder / "dir").symlink_to(tmp_path, target_is_directory=True)
    ids = list(FolderInput(folder).ids())
    assert ids == ["a.txt", "inside.txt"]


def test_a_full_disk_is_one_line(tmp_path: Path) -> None:
    if not Path("/dev/full").exists():
        pytest.skip("no /dev/full here")
    with AppendLog(Path("/dev/full"), sync=False) as log, pytest.raises(InputError, match="cannot write /dev/full"):
        log.write({"id": "1"})


# ---- the server ----------------------------------------------------------------------------------


def agent_config(folder: Path, source: str) -> str:
    path = folder / f"factcheck-{source}.toml"
    path.write_text(f'profile = "offline"\n[agents.corpus]\nsource = "{source}"\nverifier = "scripted"\n')
    return str(path)


@contextmanager
def server(folder: Path, *components: Any, source: str = "static", **options: Any) -> Iterator[str]:
    from factcheck.server.app import create_app
    from factcheck.server.runner import serve_in_thread
    from factcheck.server.settings import ServerSettings

    runner_options = {
        k: options.pop(k)
        for k in ("forwarded_allow_ips", "header_timeout_s", "max_connections", "max_pending_per_address")
        if k in options
    }
    settings = {"api_keys": (KEY,), "profile": "offline", "rate_per_minute": 0, **options}
    with registered(*components, ScriptedVerifier()):
        config = agent_config(folder, source)
        with serve_in_thread(create_app(ServerSettings(config=config, **settings)), **runner_options) as url:
            yield url


pytest.importorskip("fastapi", reason="the server extra is not installed")


def test_the_server_answers_a_surrogate_text_and_surrogate_evidence(tmp_path: Path) -> None:
    source = StaticSource(name="badtext", passages=(f"Statins {SURROGATE} lower LDL.",))
    with server(tmp_path, source, source="badtext") as url:
        raw = '{"text": "Statins lower LDL \\ud800 cholesterol."}'
        response = httpx.post(f"{url}/v1/check", content=raw, headers={**AUTH, "Content-Type": "application/json"})
        assert response.status_code == 200, response.text
        assert response.json()["text"] == "Statins lower LDL \ufffd cholesterol."
        with httpx.stream(
            "POST", f"{url}/v1/check/stream", content=raw, headers={**AUTH, "Content-Type": "application/json"}
        ) as streamed:
            names = [line.removeprefix("event: ") for line in streamed.iter_lines() if line.startswith("event: ")]
        assert names[-1] == "verdict"


def test_a_blocking_source_does_not_freeze_the_server(tmp_path: Path) -> None:
    os.environ["FACTCHECK_AGENT_TIMEOUT_S"] = "1"
    try:
        with server(tmp_path, Sleeper(seconds=4), source="sleeper") as url, httpx.Client(timeout=10) as client:
            pending = threading.Thread(
                target=client.post,
                args=(f"{url}/v1/check",),
                kwargs={"json": {"text": "Statins x."}, "headers": AUTH},
            )
            pending.start()
            time.sleep(0.3)
            started = time.monotonic()
            assert httpx.get(f"{url}/v1/health", timeout=5).status_code == 200
            assert time.monotonic() - started < 0.5
            pending.join(10)
    finally:
        del os.environ["FACTCHECK_AGENT_TIMEOUT_S"]


def test_a_source_raising_keyboard_interrupt_does_not_stop_the_server(tmp_path: Path) -> None:
    with server(tmp_path, Raiser(), source="raiser") as url:
        for _ in range(2):
            response = httpx.post(f"{url}/v1/check", json={"text": "Statins lower LDL."}, headers=AUTH, timeout=10)
            assert response.status_code == 200
            assert "KeyboardInterrupt" in response.json()["claims"][0]["judgments"][0]["error"]
        assert httpx.get(f"{url}/v1/health").status_code == 200


def test_garbage_evidence_still_gets_an_answer_from_the_server(tmp_path: Path) -> None:
    with server(tmp_path, Garbage(items=("text", {"a": 1}, object())), source="garbage") as url:
        response = httpx.post(f"{url}/v1/check", json={"text": "Statins lower LDL."}, headers=AUTH, timeout=10)
        assert response.status_code == 200 and "dropped" in response.json()["claims"][0]["judgments"][0]["error"]


def test_a_check_is_cancelled_when_the_client_goes_away(tmp_path: Path) -> None:
    watched = Watched()
    with server(tmp_path, watched, source="watched") as url:
        with pytest.raises(httpx.ReadTimeout):
            httpx.post(f"{url}/v1/check", json={"text": "Statins lower LDL."}, headers=AUTH, timeout=0.5)
        assert watched.cancelled.wait(3)


def test_claims_per_request_are_capped_and_rate_limited(tmp_path: Path) -> None:
    text = " ".join(f"Statins lower LDL cholesterol by {i} percent." for i in range(8))
    with server(tmp_path, StaticSource(), max_claims=5, claims_per_minute=1, claims_burst=6) as url:
        first = httpx.post(f"{url}/v1/check", json={"text": text}, headers=AUTH, timeout=10)
        assert first.status_code == 200 and len(first.json()["claims"]) == 5
        assert any("only the first 5 were checked" in note for note in first.json()["usage"]["notes"])
        second = httpx.post(f"{url}/v1/check/stream", json={"text": text + " Again."}, headers=AUTH, timeout=10)
        assert second.status_code == 429 and "claim rate limit" in second.json()["error"]
        assert int(second.headers["retry-after"]) >= 1


def test_wrong_keys_are_rate_limited_per_address(tmp_path: Path) -> None:
    with server(tmp_path, StaticSource()) as url:
        wrong = {"Authorization": "Bearer wrong-key-0123456789"}
        statuses = [httpx.get(f"{url}/v1/components", headers=wrong).status_code for _ in range(12)]
        assert statuses[:10] == [401] * 10 and statuses[-1] == 429
        assert httpx.get(f"{url}/v1/components", headers=AUTH).status_code == 429  # even the right key, for now


def test_forwarded_for_is_not_believed_without_configured_proxies(tmp_path: Path) -> None:
    with server(tmp_path, StaticSource(), api_keys=(), rate_per_minute=1, rate_burst=1) as url:
        codes = [
            httpx.post(
                f"{url}/v1/check", json={"text": "Statins lower LDL."}, headers={"X-Forwarded-For": f"10.0.0.{i}"}
            ).status_code
            for i in range(1, 3)
        ]
        assert codes == [200, 429]


def test_a_key_in_the_query_string_stays_out_of_the_access_log() -> None:
    from factcheck.server.runner import QueryRedactor, install_log_filters

    install_log_filters()
    assert any(isinstance(f, QueryRedactor) for f in logging.getLogger("uvicorn.access").filters)
    record = logging.LogRecord(
        "uvicorn.access",
        logging.INFO,
        "",
        0,
        '%s - "%s %s HTTP/%s" %d',
        ("1.2.3.4:5", "GET", "/v1/health?key=s3cret", "1.1", 200),
        None,
    )
    assert QueryRedactor().filter(record) and "s3cret" not in record.getMessage()


def test_weak_keys_are_refused_on_a_public_address() -> None:
    from factcheck.errors import ConfigError
    from factcheck.server.settings import ServerSettings

    with pytest.raises(ConfigError, match="guessable API key"):
        ServerSettings(api_keys=("12345678",)).check_exposure("0.0.0.0")
    ServerSettings(api_keys=("12345678",)).check_exposure("127.0.0.1")  # loopback: the operator's own machine
    ServerSettings(api_keys=(KEY,)).check_exposure("0.0.0.0")


def test_emoji_under_the_character_limit_fit_the_byte_limit() -> None:
    from factcheck.server.settings import ServerSettings

    body = json.dumps({"text": "\U0001f600" * 15_000})  # ASCII-escaped: 12 bytes a character
    assert len(body.encode()) <= ServerSettings(max_text_chars=20_000).max_body_bytes


def test_a_body_that_stops_arriving_gets_408(tmp_path: Path) -> None:
    import socket

    with server(tmp_path, StaticSource(), body_timeout_s=1.0) as url:
        host, port = url.removeprefix("http://").split(":")
        with socket.create_connection((host, int(port))) as conn:
            conn.sendall(
                b"POST /v1/check HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer " + KEY.encode() + b"\r\n"
                b'Content-Type: application/json\r\nContent-Length: 100\r\n\r\n{"text": '
            )
            conn.settimeout(5)
            started = time.monotonic()
            answer = conn.recv(4096)
        assert answer.startswith(b"HTTP/1.1 408") and 0.8 < time.monotonic() - started < 4


def test_half_open_connections_are_closed_and_capped(tmp_path: Path) -> None:
    import socket

    with server(tmp_path, StaticSource(), header_timeout_s=1.0, max_connections=16) as url:
        host, port = url.removeprefix("http://").split(":")
        idle = socket.create_connection((host, int(port)))
        idle.sendall(b"POST /v1/check HTTP/1.1\r\nHost: x\r\n")  # headers never finished
        idle.settimeout(5)
        started = time.monotonic()
        assert idle.recv(1) == b""  # closed by the server
        assert 0.8 < time.monotonic() - started < 3
        idle.close()
        crowd = [socket.create_connection((host, int(port))) for _ in range(24)]
        closed = 0
        for conn in crowd:
            conn.settimeout(0.5)
            with suppress(TimeoutError):
                closed += conn.recv(1) == b""
        for conn in crowd:
            conn.close()
        assert closed >= 8  # over the cap of 16: the oldest idle ones made room for the newest
        assert httpx.get(f"{url}/v1/health", timeout=5).status_code == 200  # served while the crowd waits


def test_worker_settings_survive_the_trip_through_the_environment() -> None:
    from factcheck.server.settings import ServerSettings

    settings = ServerSettings(api_keys=(KEY,), cors_origins=("https://a.example",), max_claims=7, deadline_s=3.5)
    assert ServerSettings.from_json(settings.to_json()) == settings


def test_only_complete_answers_are_kept_and_they_expire() -> None:
    from factcheck.server.answers import AnswerCache

    now = [0.0]
    cache = AnswerCache(size=2, ttl_s=10, clock=lambda: now[0])
    judged = {"claims": [{"judgments": [{"error": None}]}], "partial": False, "label": "TRUE"}
    cache.put("a", judged, lambda answer: json.dumps(answer).encode())
    cache.put("partial", {**judged, "partial": True}, lambda answer: b"{}")
    cache.put("failed", {"claims": [{"judgments": [{"error": "timed out"}]}]}, lambda answer: b"{}")
    stored = cache.get("a")
    assert stored is not None and json.loads(stored.body)["usage"]["cache_hits"] == {"answer": 1}
    assert json.loads(stored.with_fields(b'{"url": "u"}'))["url"] == "u"
    assert cache.get("partial") is None and cache.get("failed") is None
    now[0] = 11
    assert cache.get("a") is None


# ---- issue 24, items 1 and 5: slow bodies without a key; a client gone during claim splitting ----


def _raw(url: str) -> Any:
    import socket

    host, port = url.removeprefix("http://").split(":")
    return socket.create_connection((host, int(port)))


def _body_headers(key: str | None = None, length: int = 1000) -> bytes:
    auth = f"Authorization: Bearer {key}\r\n" if key else ""
    return (
        f"POST /v1/check HTTP/1.1\r\nHost: x\r\n{auth}Content-Type: application/json\r\n"
        f"Content-Length: {length}\r\n\r\n"
    ).encode()


def test_a_request_without_a_key_is_refused_before_its_body_and_closed(tmp_path: Path) -> None:
    with server(tmp_path, StaticSource()) as url, _raw(url) as conn:
        conn.sendall(_body_headers() + b"{")  # 999 bytes still to come, one every few seconds
        conn.settimeout(3)
        started = time.monotonic()
        answer = b""
        while chunk := conn.recv(4096):  # the server answers and closes: the rest of the body is not awaited
            answer += chunk
        assert answer.startswith(b"HTTP/1.1 401") and b"missing or wrong API key" in answer
        assert time.monotonic() - started < 2


def test_a_dripping_body_is_cut_off_at_its_deadline_each_byte_does_not_restart_it(tmp_path: Path) -> None:
    with server(tmp_path, StaticSource(), body_timeout_s=1.0) as url, _raw(url) as conn:
        conn.sendall(_body_headers(KEY))
        conn.settimeout(0.2)
        started = time.monotonic()
        answer, ended = b"", False
        while not ended and time.monotonic() - started < 4:
            try:
                conn.sendall(b" ")  # a byte every 0.2 s: each would restart a time-out per part
                answer += conn.recv(4096)
                ended = True
                conn.settimeout(2)
                while chunk := conn.recv(4096):  # the rest of the answer, up to the close
                    answer += chunk
            except TimeoutError:
                pass
            except OSError:  # reset: the server closed with our last bytes unread (the 408 may be lost then)
                ended = True
        assert ended and 0.8 < time.monotonic() - started < 3.5, answer
        assert not answer or answer.startswith(b"HTTP/1.1 408"), answer
        assert b"{" not in answer or b"not received within 1s" in answer


def test_a_body_below_the_minimum_rate_is_cut_off_after_the_grace() -> None:
    from factcheck.server.app import BodyLimit

    async def app(scope: Any, receive: Any, send: Any) -> None:
        while (await receive()).get("more_body"):
            pass
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": b""})

    async def drip() -> dict[str, Any]:
        await asyncio.sleep(0.1)
        return {"type": "http.request", "body": b"x", "more_body": True}

    sent: list[Any] = []

    async def send(message: Any) -> None:
        sent.append(message)

    limit = BodyLimit(app, max_bytes=10_000, timeout_s=10, min_rate=1000, grace_s=0.3)
    scope = {"type": "http", "headers": [(b"content-length", b"1000")]}
    started = time.monotonic()
    with pytest.raises(Exception, match="slower than 1000 bytes a second"):
        asyncio.run(limit(scope, drip, send))  # the app's own handlers answer the HTTPException with 408
    assert time.monotonic() - started < 1.5 and not sent


def test_pending_connections_are_capped_per_address_and_a_caller_with_a_key_keeps_its_own(tmp_path: Path) -> None:
    with server(tmp_path, StaticSource(), max_pending_per_address=4) as url:
        caller = _raw(url)
        # Vouched for (its key was read); 4,000 bytes buy it 6 s at the minimum rate.
        caller.sendall(_body_headers(KEY, length=4031) + b" " * 4000 + b'{"text": ')
        time.sleep(0.3)
        crowd = [_raw(url) for _ in range(12)]  # idle, from the same address: pending
        time.sleep(0.5)
        closed = 0
        for conn in crowd:
            conn.setblocking(False)
            with suppress(BlockingIOError):
                closed += conn.recv(1) == b""
        assert closed >= 8  # at most 4 of them are kept
        caller.sendall(b'"Statins lower LDL."}'.ljust(31))
        caller.settimeout(5)
        assert caller.recv(4096).startswith(b"HTTP/1.1 200")
        for conn in (*crowd, caller):
            conn.close()
        assert httpx.get(f"{url}/v1/health", timeout=5).status_code == 200


@dataclass(frozen=True)
class Spinner(SentenceExtractor):
    """A claim extractor that spends CPU in its thread for ``seconds``, recording whether it was stopped."""

    name = "spinner"
    seconds: float = 4.0
    stopped: threading.Event = field(default_factory=threading.Event, compare=False)
    finished: threading.Event = field(default_factory=threading.Event, compare=False)

    def extraction(self, text: str) -> Any:
        until = time.monotonic() + self.seconds
        try:
            while time.monotonic() < until:
                sum(range(1000))
        except BaseException:
            self.stopped.set()
            raise
        self.finished.set()
        return super().extraction(text)


@pytest.mark.parametrize("path", ["/v1/check", "/v1/check/stream"])
def test_a_client_gone_during_claim_splitting_stops_the_split(tmp_path: Path, path: str) -> None:
    from factcheck.server.app import create_app
    from factcheck.server.runner import serve_in_thread
    from factcheck.server.settings import ServerSettings

    spinner = Spinner()
    config = tmp_path / "factcheck.toml"
    config.write_text(
        'profile = "offline"\nextractor = "spinner"\n[agents.corpus]\nsource = "static"\nverifier = "scripted"\n'
    )
    settings = ServerSettings(api_keys=(KEY,), profile="offline", rate_per_minute=0, config=str(config))
    with registered(spinner, StaticSource(), ScriptedVerifier()), serve_in_thread(create_app(settings)) as url:
        spinner.stopped.clear()  # the warm-up does not split with it: only the request below does
        with pytest.raises(httpx.ReadTimeout):
            httpx.post(f"{url}{path}", json={"text": "Statins lower LDL."}, headers=AUTH, timeout=0.3)
        assert spinner.stopped.wait(1.5) and not spinner.finished.is_set()
        assert httpx.get(f"{url}/v1/health", timeout=5).status_code == 200


def test_requests_without_a_key_do_not_lock_out_their_address(tmp_path: Path) -> None:
    with server(tmp_path, StaticSource()) as url:
        statuses = [httpx.get(f"{url}/v1/components").status_code for _ in range(12)]
        assert statuses == [401] * 12  # no key guesses nothing: the wrong-key lockout is not charged
        assert httpx.get(f"{url}/v1/components", headers=AUTH).status_code == 200


def test_an_interrupt_stops_its_own_work_in_a_thread_and_nothing_after_it() -> None:
    from factcheck.interrupt import Abandoned, Interrupt

    interrupt, started, outcome = Interrupt(), threading.Event(), []

    def work() -> None:
        try:
            with interrupt.running():
                started.set()
                while True:
                    sum(range(100))
        except Abandoned:
            outcome.append("stopped")
        for _ in range(10_000):  # the same thread goes on with other work: nothing is left pending for it
            sum(range(100))
        outcome.append("went on")

    thread = threading.Thread(target=work)
    thread.start()
    assert started.wait(5)
    assert interrupt.request() == 1 and interrupt.request() == 0  # fires once
    thread.join(5)
    assert outcome == ["stopped", "went on"]
    with pytest.raises(Abandoned), interrupt.running():  # work started after the request stops at once
        pass
    later = Interrupt()
    with later.running():
        pass
    later.request()  # after its work ended: nothing is raised here
    assert sum(range(10_000)) == 49_995_000


def test_a_checker_the_warm_up_never_prepared_skips_a_never_ready_source_within_the_deadline(tmp_path: Path) -> None:
    """A request naming another scorer gets a checker of its own, whose components the warm-up never
    prepared: its first check waits a third of the deadline for the never-ready source, not the agent
    time-out (here 3 s, over the 2 s deadline), and the ready agent's verdict comes back whole, in time."""
    from factcheck.server.app import create_app
    from factcheck.server.runner import serve_in_thread
    from factcheck.server.settings import ServerSettings

    config = tmp_path / "factcheck.toml"
    config.write_text(
        'profile = "offline"\n[agents.corpus]\nsource = "static"\nverifier = "scripted"\n'
        '[agents.hangs]\nsource = "never-ready"\nverifier = "scripted"\n[pipeline]\nagent_timeout_s = 3\n'
    )
    settings = ServerSettings(api_keys=(KEY,), profile="offline", rate_per_minute=0, deadline_s=2, config=str(config))
    with registered(NeverReady(), StaticSource(), ScriptedVerifier()), serve_in_thread(create_app(settings)) as url:
        started = time.monotonic()
        body = {"text": "Statins lower LDL cholesterol.", "scorer": "normsum"}
        answer = httpx.post(f"{url}/v1/check", json=body, headers=AUTH, timeout=30).json()
        took = time.monotonic() - started
    judgments = {j["agent"]: j for j in answer["claims"][0]["judgments"]}
    assert judgments["corpus"]["factuality"] is True  # the ready agent answered
    assert "is not ready" in (judgments["hangs"]["error"] or "")
    assert answer["partial"] is False and took < 2, (took, answer.get("usage", {}).get("notes"))
