"""The paper profile end to end: LLM extraction, web search, Wikipedia and self-check agents, all against
one local server speaking the OpenAI, Serper and MediaWiki APIs."""

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner

from factcheck.cli import cli
from factcheck.config import default_profile, load_settings
from tests.fake_llm import fake_model
from tests.fakes import FakeServer, Request, Response

TEXT = "The Eiffel Tower is in Paris. The Eiffel Tower is in Berlin."


def mediawiki(request: Request) -> Response:
    query = {k: v[0] for k, v in request.query.items()}
    if query.get("list") == "search":
        hits = [{"ns": 0, "title": "Eiffel Tower", "pageid": 9232, "snippet": "The <span>Eiffel</span> Tower"}]
        return Response({"batchcomplete": True, "query": {"searchinfo": {"totalhits": 1}, "search": hits}})
    page = {
        "pageid": 9232,
        "ns": 0,
        "title": "Eiffel Tower",
        "extract": "The Eiffel Tower is a wrought-iron lattice tower on the Champ de Mars in Paris, France.",
        "fullurl": "https://en.wikipedia.org/wiki/Eiffel_Tower",
        "canonicalurl": "https://en.wikipedia.org/wiki/Eiffel_Tower",
    }
    return Response({"batchcomplete": True, "query": {"pages": [page]}})


def serper(request: Request) -> Response:
    organic = [
        {
            "title": "Eiffel Tower - Official site",
            "link": "https://www.toureiffel.paris/en",
            "position": 1,
            "snippet": "The Eiffel Tower stands on the Champ de Mars in Paris.",
        },
    ]
    return Response({"searchParameters": {"q": request.json()["q"]}, "organic": organic})


@pytest.fixture
def server() -> Iterator[FakeServer]:
    with FakeServer() as s:
        s.route("POST", "/v1/chat/completions", fake_model)
        s.route("POST", "/search", serper)
        s.route("GET", "/w/api.php", mediawiki)
        yield s


def run_check(server: FakeServer, *extra: str) -> tuple[int, str]:
    args = [
        "check",
        TEXT,
        "--profile",
        "paper",
        "--llm-base-url",
        server.url + "/v1",
        "--llm-model",
        "fake-model",
        "--serper-url",
        server.url,
        "--wikipedia-url",
        server.url + "/w/api.php",
        "--no-cache",
        *extra,
    ]
    result = CliRunner().invoke(cli, args)
    return result.exit_code, result.output


def test_the_papers_three_agents_judge_every_claim(server: FakeServer, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SERPER_API_KEY", "test-key")
    code, output = run_check(server, "--format", "json")
    assert code == 0, output
    data = json.loads(output)
    assert data["scorer"] == "mafc" and data["label"] == "PARTLY TRUE"
    for claim in data["claims"]:
        agents = {j["agent"]: j for j in claim["judgments"]}
        assert set(agents) == {"web", "wikipedia", "selfcheck", "wikidata"}
        assert all(
            agents[name]["error"] is None and agents[name]["evidence"] for name in ("web", "wikipedia", "selfcheck")
        )
        # The wikidata agent takes part too; the tests' empty Wikibase names no item, so it gives no judgment.
        assert agents["wikidata"]["error"] is None and agents["wikidata"]["factuality"] is None
    assert [c["label"] for c in data["claims"]] == ["TRUE", "FALSE"]
    usage = data["usage"]
    assert usage["llm_calls"] == 1 + 2 * 4  # extraction; per claim: 3 judgments + 1 self-check answer
    assert usage["prompt_tokens"] > 0 and usage["search_calls"] >= 6
    assert server.calls("/search")[0].headers["X-API-KEY"] == "test-key"


def test_the_text_report_names_agents_and_a_skipped_one(server: FakeServer, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("SERPER_API_KEY", raising=False)
    monkeypatch.delenv("SERPAPI_API_KEY", raising=False)
    code, output = run_check(server)
    assert code == 0, output
    assert "agents: web (skipped:" in output and "SERPER_API_KEY" in output
    assert "wikipedia" in output and "selfcheck" in output
    assert not server.calls("/search")


def test_profile_defaults_to_paper_only_when_keys_are_present() -> None:
    assert default_profile({}) == "offline"
    assert default_profile({"OPENAI_API_KEY": "k"}) == "offline"
    assert default_profile({"OPENAI_API_KEY": "k", "SERPER_API_KEY": "s"}) == "paper"
    assert default_profile({"OPENAI_BASE_URL": "http://localhost:11434/v1", "SERPAPI_API_KEY": "s"}) == "paper"
    settings = load_settings(env={"OPENAI_API_KEY": "k", "SERPER_API_KEY": "s"})
    assert settings.profile == "paper" and settings.extractor_name == "llm"


def test_serpapi_is_used_when_only_its_key_is_set(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("SERPER_API_KEY", raising=False)
    monkeypatch.setenv("SERPAPI_API_KEY", "k")
    web = load_settings(profile="paper").resolved_agents()[0]
    assert (web.name, web.source) == ("web", "serpapi")


def test_without_an_openai_key_no_agent_can_run_so_nothing_is_checked(
    server: FakeServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Every agent of the paper profile asks the model: with the search key alone none can run.
    monkeypatch.setenv("SERPER_API_KEY", "k")
    args = ["check", TEXT, "--profile", "paper", "--serper-url", server.url]
    result = CliRunner().invoke(cli, [*args, "--wikipedia-url", server.url + "/w/api.php", "--no-cache"])
    assert result.exit_code == 2, result.output
    assert result.output.count("\n") == 1 and result.output.startswith("Error: no agent of profile paper can run")
    assert "OPENAI_API_KEY" in result.output and "--profile wiki" in result.output
    assert not server.requests  # stopped before checking: nothing was searched


@pytest.mark.parametrize("command", ["check", "batch"])
def test_with_no_key_at_all_one_line_names_every_missing_key(
    command: str, server: FakeServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for variable in ("OPENAI_API_KEY", "SERPER_API_KEY", "SERPAPI_API_KEY"):
        monkeypatch.delenv(variable, raising=False)
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "doc.txt").write_text(TEXT)
    args = [TEXT] if command == "check" else [str(tmp_path / "docs"), "--out", str(tmp_path / "out.jsonl")]
    urls = ["--serper-url", server.url, "--wikipedia-url", server.url + "/w/api.php"]
    result = CliRunner().invoke(cli, [command, *args, "--profile", "paper", *urls, "--no-cache"])
    assert result.exit_code == 2, result.output
    assert result.output == (
        "Error: no agent of profile paper can run: each needs an API key that is not set; set SERPER_API_KEY "
        "(or SERPAPI_API_KEY) or OPENAI_API_KEY (or a local LLM server: --llm-base-url), or use --profile wiki, "
        "which needs none\n"
    )
    assert not server.requests and not (tmp_path / "out.jsonl").exists()


OPENAI_401 = {
    "error": {
        "message": "Incorrect API key provided: sk-bad. You can find your API key at "
        "https://platform.openai.com/account/api-keys.",
        "type": "invalid_request_error",
        "param": None,
        "code": "invalid_api_key",
    }
}
SEVEN = " ".join(f"The Eiffel Tower is {n} metres tall." for n in range(300, 307))


def test_a_rejected_key_stops_its_agents_and_is_said_once_and_short(
    server: FakeServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-bad")
    monkeypatch.setenv("SERPER_API_KEY", "test-key")
    server.route("POST", "/v1/chat/completions", lambda request: Response(OPENAI_401, status=401))
    args = ["check", SEVEN, "--profile", "paper", "--llm-base-url", server.url + "/v1", "--serper-url", server.url]
    result = CliRunner().invoke(cli, [*args, "--wikipedia-url", server.url + "/w/api.php", "--no-cache"])
    assert result.exit_code == 0, result.output
    assert len(server.calls("/v1/chat/completions")) == 1  # the extractor's: refused, so no agent asked again
    said = [line for line in result.output.splitlines() if "HTTP 401" in line]
    assert len(said) == 2, result.output  # the agents line, and the extractor's note
    assert said[0].startswith("agents: web, wikipedia, selfcheck (skipped: LLM at")
    assert said[0].endswith("HTTP 401: Incorrect API key provided: sk-bad. (check OPENAI_API_KEY)), wikidata")
    assert "platform.openai.com" not in result.output
    assert result.output.count("abstained (see agents above)") == 7 * 3


def test_a_key_missing_for_one_agent_is_said_once(server: FakeServer, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("SERPER_API_KEY", raising=False)
    monkeypatch.delenv("SERPAPI_API_KEY", raising=False)
    code, output = run_check(server)
    assert code == 0, output
    assert output.count("SERPER_API_KEY") == 1 and "web: abstained (see agents above)" in output


def test_a_key_rejected_while_claims_are_in_flight_is_said_once(
    server: FakeServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Sentence extraction asks no model: the agents meet the refusal themselves, several claims at once.
    monkeypatch.setenv("OPENAI_API_KEY", "sk-bad")
    monkeypatch.setenv("SERPER_API_KEY", "test-key")
    server.route("POST", "/v1/chat/completions", lambda request: Response(OPENAI_401, status=401))
    config = tmp_path / "factcheck.toml"
    config.write_text('[extractor]\nname = "sentence"\n')
    args = ["check", SEVEN, "--profile", "paper", "--llm-base-url", server.url + "/v1", "--serper-url", server.url]
    args += ["--wikipedia-url", server.url + "/w/api.php", "--no-cache", "--config", str(config)]
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 0, result.output
    assert result.output.count("HTTP 401") == 1, result.output
    assert "(check OPENAI_API_KEY)" in result.output and "platform.openai.com" not in result.output
