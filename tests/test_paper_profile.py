"""The paper profile end to end: LLM extraction, web search, Wikipedia and self-check agents, all against
one local server speaking the OpenAI, Serper and MediaWiki APIs."""

import json
from collections.abc import Iterator

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


def test_all_three_agents_judge_every_claim(server: FakeServer, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SERPER_API_KEY", "test-key")
    code, output = run_check(server, "--format", "json")
    assert code == 0, output
    data = json.loads(output)
    assert data["scorer"] == "mafc" and data["label"] == "PARTLY TRUE"
    for claim in data["claims"]:
        agents = {j["agent"]: j for j in claim["judgments"]}
        assert set(agents) == {"web", "wikipedia", "selfcheck"}
        assert all(j["error"] is None and j["evidence"] for j in agents.values())
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


def test_without_an_openai_key_every_agent_is_skipped_and_the_check_completes(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("SERPER_API_KEY", "k")
    result = CliRunner().invoke(cli, ["check", TEXT, "--profile", "paper", "--no-cache", "--format", "json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    assert data["label"] == "UNVERIFIED" and len(data["claims"]) == 2  # split into sentences instead
    assert "claim extractor llm failed" in data["usage"]["notes"][0]
    errors = {j["agent"]: j["error"] for c in data["claims"] for j in c["judgments"]}
    assert set(errors) == {"web", "wikipedia", "selfcheck"}
    assert all(e.startswith("skipped:") and "OPENAI_API_KEY" in e for e in errors.values())
