"""``POST /v1/feedback``: corrections into the experience memory, from a key's holder only. The real server
on a free loopback port, driven with httpx, as in test_server.py."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest
from click.testing import CliRunner

pytest.importorskip("fastapi", reason="the server extra is not installed")

from factcheck.cli import cli
from factcheck.errors import ConfigError
from factcheck.memory.corrections import correction_from_text
from factcheck.memory.store import MemoryStore
from factcheck.server.app import create_app
from factcheck.server.runner import serve_in_thread
from factcheck.server.settings import ServerSettings
from tests.test_memory_corrections import STATINS, crafted_result

KEY = "client-key-0123456789"
OTHER_KEY = "client-key-abcdefghij"
AUTH = {"Authorization": f"Bearer {KEY}"}
OTHER = {"Authorization": f"Bearer {OTHER_KEY}"}


def config(folder: Path, memory: str = "") -> str:
    """Settings whose one agent needs no index or model (the warm-up is quick), and the ``[memory]`` table
    ``memory`` (none: the server keeps no memory)."""
    path = folder / "factcheck.toml"
    path.write_text(f'profile = "offline"\n[agents.corpus]\nsource = "given"\nverifier = "lexical"\n{memory}')
    return str(path)


def memory_table(path: Path, extra: str = "") -> str:
    return f'[memory]\npath = "{path}"\n{extra}'


@contextmanager
def server(**options: Any) -> Iterator[str]:
    options = {"api_keys": (KEY, OTHER_KEY), "feedback_keys": ("key-1", "key-2"), "rate_per_minute": 0, **options}
    with serve_in_thread(create_app(ServerSettings(**options))) as url:
        yield url


def post(url: str, body: dict[str, Any], headers: dict[str, str] | None = None) -> httpx.Response:
    return httpx.post(f"{url}/v1/feedback", json=body, headers=headers, timeout=30)


@pytest.fixture(scope="module")
def memory_path(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("memory") / "memory.sqlite"


@pytest.fixture(scope="module")
def base_url(tmp_path_factory: pytest.TempPathFactory, memory_path: Path) -> Iterator[str]:
    with server(config=config(tmp_path_factory.mktemp("config"), memory_table(memory_path))) as url:
        yield url


def stored_ids(path: Path) -> list[int]:
    return [c.id for c in MemoryStore(path).corrections()]


def test_a_correction_without_a_valid_key_is_refused(base_url: str, memory_path: Path) -> None:
    before = stored_ids(memory_path)
    body = {"result": crafted_result(), "claim": "c1", "label": "FALSE"}
    refused = post(base_url, body)
    assert refused.status_code == 401 and refused.headers["WWW-Authenticate"] == "Bearer"
    assert refused.json() == {"error": "missing or wrong API key"}
    assert post(base_url, body, {"Authorization": "Bearer not-a-key-of-ours"}).status_code == 401
    assert stored_ids(memory_path) == before


def test_a_key_holders_correction_is_stored_under_its_key_id(base_url: str, memory_path: Path) -> None:
    body = {"result": crafted_result(), "claim": "c1", "label": "FALSE", "note": "the trial was retracted"}
    answer = post(base_url, body, OTHER)
    assert answer.status_code == 201, answer.text
    data = answer.json()
    assert data["schema"] == "factcheck-correction/1"
    assert (data["reviewer"], data["origin"], data["label"], data["verdict"]) == ("key-2", "server", "FALSE", "TRUE")
    assert data["lent"] is True and data["trust"] is None
    stored = MemoryStore(memory_path).get(data["id"])
    assert stored is not None
    assert (stored.claim, stored.reviewer, stored.note) == (STATINS, "key-2", "the trial was retracted")
    assert [j.agent for j in stored.judgments] == ["corpus", "wiki"] and len(stored.evidence) == 1
    assert stored.check_ref is not None and "claim=c1" in stored.check_ref
    assert data["check_ref"] == stored.check_ref and data["created_at"] == stored.created_at


def test_a_claim_by_its_text_and_the_refusals_of_a_bad_body(base_url: str, memory_path: Path) -> None:
    answer = post(base_url, {"claim_text": "Aspirin prevents colds.", "label": "false"}, AUTH)
    assert answer.status_code == 201, answer.text
    data = answer.json()
    assert (data["claim"], data["label"], data["verdict"], data["reviewer"]) == (
        "Aspirin prevents colds.",
        "FALSE",
        None,
        "key-1",
    )
    assert data["judgments"] == [] and data["check_ref"] is None
    before = stored_ids(memory_path)
    missing = post(base_url, {"result": crafted_result(), "claim": "c9", "label": "TRUE"}, AUTH)
    assert missing.status_code == 422 and missing.json()["error"] == "no claim 'c9' in the result (its claims: c1, c2)"
    both = post(base_url, {"result": crafted_result(), "claim_text": "x", "label": "TRUE"}, AUTH)
    assert both.status_code == 422 and "either result (with claim) or claim_text" in both.json()["error"]
    maybe = post(base_url, {"claim_text": "x", "label": "MAYBE"}, AUTH)
    assert maybe.status_code == 422
    assert (
        maybe.json()["error"] == 'invalid request: "label" must be one of "TRUE", "FALSE" or "UNVERIFIED", not "MAYBE"'
    )
    reviewer = post(base_url, {"claim_text": "x", "label": "TRUE", "reviewer": "admin"}, AUTH)
    assert reviewer.status_code == 422
    assert reviewer.json()["error"] == (
        'invalid request: unknown field "reviewer" (fields: result, claim, claim_text, label, note)'
    )
    assert stored_ids(memory_path) == before


def test_feedback_is_described_in_the_openapi_schema(base_url: str) -> None:
    schema = httpx.get(f"{base_url}/openapi.json", timeout=10).json()
    route = schema["paths"]["/v1/feedback"]["post"]
    assert {"201", "401", "403", "404"} <= set(route["responses"])
    assert "FeedbackRequest" in schema["components"]["schemas"]


def test_a_server_without_keys_takes_no_correction(tmp_path: Path) -> None:
    memory = tmp_path / "memory.sqlite"
    with server(api_keys=(), feedback_keys=(), config=config(tmp_path, memory_table(memory))) as url:
        refused = post(url, {"claim_text": STATINS, "label": "TRUE"})
        assert refused.status_code == 403
        assert "runs without API keys" in refused.json()["error"]
        assert post(url, {"claim_text": STATINS, "label": "TRUE"}, AUTH).status_code == 403  # no key is known
    assert not memory.exists()


def test_feedback_keys_limit_who_may_correct_and_learn_trust_updates_the_trust_file(tmp_path: Path) -> None:
    memory, trust = tmp_path / "memory.sqlite", tmp_path / "trust.json"
    settings = config(tmp_path, memory_table(memory, f'learn_trust = true\ntrust = "{trust}"\nrate = 0.5\n'))
    body = {"result": crafted_result(), "claim": "c1", "label": "FALSE"}
    with server(config=settings, feedback_keys=("key-1",)) as url:
        refused = post(url, body, OTHER)
        assert refused.status_code == 403 and "key-2 may not send corrections" in refused.json()["error"]
        assert not memory.exists() and not trust.exists()
        answer = post(url, body, AUTH)
    assert answer.status_code == 201, answer.text
    # Trust is learned from the server's own check of the claim, never from the judgments the caller sent:
    # the crafted result's confident corpus verdict and its "wiki" agent move nothing.
    assert answer.json()["trust"] == {"team_right": None, "updated": []}
    agents = json.loads(trust.read_text())["agents"]
    assert set(agents) == {"corpus", "memory"} and agents["corpus"]["abstained"] == 1
    assert agents["corpus"]["judged"] == 0 and agents["corpus"]["pamas"] == 1.0
    stored = MemoryStore(memory).corrections()
    assert [c.reviewer for c in stored] == ["key-1"] and [j.agent for j in stored[0].judgments] == ["corpus", "wiki"]


def test_a_server_that_names_no_feedback_keys_takes_no_correction(tmp_path: Path) -> None:
    memory = tmp_path / "memory.sqlite"
    with server(feedback_keys=(), config=config(tmp_path, memory_table(memory))) as url:
        refused = post(url, {"claim_text": STATINS, "label": "TRUE"}, AUTH)
    assert refused.status_code == 403 and "names no feedback_keys" in refused.json()["error"]
    assert not memory.exists()


def test_a_server_without_memory_says_so(tmp_path: Path) -> None:
    with server(config=config(tmp_path)) as url:
        answer = post(url, {"claim_text": STATINS, "label": "TRUE"}, AUTH)
    assert answer.status_code == 404
    assert "keeps no experience memory" in answer.json()["error"] and "--memory" in answer.json()["error"]
    assert [p.name for p in tmp_path.iterdir()] == ["factcheck.toml"]


def test_feedback_is_rate_limited_like_the_other_endpoints(tmp_path: Path) -> None:
    memory = tmp_path / "memory.sqlite"
    with server(config=config(tmp_path, memory_table(memory)), rate_per_minute=1, rate_burst=1) as url:
        assert post(url, {"claim_text": STATINS, "label": "TRUE"}, AUTH).status_code == 201
        limited = post(url, {"claim_text": STATINS, "label": "TRUE"}, AUTH)
    assert limited.status_code == 429 and "Retry-After" in limited.headers
    assert len(MemoryStore(memory).corrections()) == 1


def test_feedback_keys_are_key_ids_never_keys() -> None:
    with pytest.raises(ConfigError, match="names no key: there are 2 API keys"):
        ServerSettings(api_keys=(KEY, OTHER_KEY), feedback_keys=("key-3",))
    with pytest.raises(ConfigError, match="must be a key's id") as refused:
        ServerSettings(api_keys=(KEY,), feedback_keys=(KEY,))
    assert KEY not in str(refused.value)  # a key put there by mistake is not echoed
    env = {"FACTCHECK_API_KEYS": f"{KEY},{OTHER_KEY}", "FACTCHECK_FEEDBACK_KEYS": "key-1, key-2"}
    settings = ServerSettings.from_env(env)
    assert settings.feedback_keys == ("key-1", "key-2")
    assert "key-1, key-2" not in settings.secrets(env)  # ids, no secret: "key-1" in an answer is not redacted


def test_serve_memory_flag_sets_the_checkers_memory(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import factcheck.server.runner as runner

    served: list[Any] = []
    monkeypatch.setattr(runner, "serve", lambda app, *args, **kwargs: served.append(app))
    monkeypatch.setattr("factcheck.server.cli.configure_logging", lambda level: None)  # no handler left behind
    monkeypatch.setenv("FACTCHECK_MEMORY", "unset")  # the flag wins over the variable, and leaves it alone
    result = CliRunner().invoke(
        cli, ["serve", "--port", "0", "--memory", str(tmp_path / "m.sqlite"), "--feedback-key", "key-1"]
    )
    assert result.exit_code == 0, result.output
    assert os.environ["FACTCHECK_MEMORY"] == "unset" and len(served) == 1
    assert served[0].state.factcheck.memory().path == str(tmp_path / "m.sqlite")
    help_text = CliRunner().invoke(cli, ["serve", "--help"], terminal_width=200).output
    assert "--memory" in help_text and "--feedback-key" in help_text


def test_an_answer_kept_from_before_a_correction_is_not_repeated_after_it(tmp_path: Path) -> None:
    memory = tmp_path / "memory.sqlite"
    with server(config=config(tmp_path, memory_table(memory))) as url:

        def checked() -> dict[str, Any]:
            answer = httpx.post(f"{url}/v1/check", json={"text": STATINS}, headers=AUTH, timeout=60)
            assert answer.status_code == 200, answer.text
            return answer.json()

        def streamed() -> dict[str, Any]:
            """The verdict of the stream, the way the browser extension checks."""
            body = {"text": STATINS}
            with httpx.stream("POST", f"{url}/v1/check/stream", json=body, headers=AUTH, timeout=60) as answer:
                lines = [line for line in answer.iter_lines() if line.startswith("data: ")]
            verdict: dict[str, Any] = json.loads(lines[-1].removeprefix("data: "))
            return verdict

        first, again = checked(), checked()
        first_stream, again_stream = streamed(), streamed()
        assert "answer" not in first["usage"].get("cache_hits", {})
        assert "answer" not in first_stream["usage"].get("cache_hits", {})  # the stream keeps its own answer
        assert again["usage"]["cache_hits"].get("answer") == 1  # repeated from memory: nothing changed
        assert again_stream["usage"]["cache_hits"].get("answer") == 1
        assert post(url, {"claim_text": STATINS, "label": "FALSE"}, AUTH).status_code == 201
        after, after_stream = checked(), streamed()
    assert "answer" not in after["usage"].get("cache_hits", {})
    assert "answer" not in after_stream["usage"].get("cache_hits", {}) and after_stream["claims"] == after["claims"]
    (judgment,) = [j for j in after["claims"][0]["judgments"] if j["agent"] == "memory"]
    assert judgment["factuality"] is False and judgment["evidence"][0]["url"] == "factcheck-memory:1/FALSE"


def test_a_correction_stored_by_another_process_ends_the_kept_answer_too(tmp_path: Path) -> None:
    """Another worker, or ``factcheck memory forget``, writes the file from another process: the server's
    kept answer must not outlive that write either (its stamp is read on every request, not remembered)."""
    memory = tmp_path / "memory.sqlite"
    MemoryStore(memory).add(correction_from_text("Aspirin cures every cancer.", "FALSE", "", "key-1", "feedback"))
    with server(config=config(tmp_path, memory_table(memory))) as url:

        def hits() -> int:
            answer = httpx.post(f"{url}/v1/check", json={"text": STATINS}, headers=AUTH, timeout=60)
            assert answer.status_code == 200, answer.text
            return int(answer.json()["usage"].get("cache_hits", {}).get("answer", 0))

        assert (hits(), hits()) == (0, 1)
        code = (
            "import sys; from factcheck.memory.store import MemoryStore;"
            "from factcheck.memory.corrections import correction_from_text;"
            "MemoryStore(sys.argv[1]).add(correction_from_text(sys.argv[2], 'FALSE', '', 'key-2', 'feedback'))"
        )
        env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parent.parent)}
        subprocess.run([sys.executable, "-c", code, str(memory), STATINS], check=True, timeout=60, env=env)
        assert hits() == 0  # checked again: the precedent may change the verdict
        assert hits() == 1
        forgotten = CliRunner().invoke(cli, ["memory", "forget", "2", "--yes", "--memory", str(memory)])
        assert forgotten.exit_code == 0, forgotten.output
        assert hits() == 0
        memory.unlink()
        for extra in ("-wal", "-shm"):
            memory.with_name(memory.name + extra).unlink(missing_ok=True)
        assert hits() == 0  # the file gone: another memory (none), another answer
