"""The keyless ``wiki`` profile end to end: sentence claims, the Wikipedia agent against a local fake MediaWiki
serving recorded API answers (tests/data/mediawiki), judged by the shipped ``nli`` model; no key anywhere."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator

import pytest
from click.testing import CliRunner

from factcheck.cli import cli
from factcheck.config import PROFILES, load_settings
from tests.fakes import FakeServer
from tests.test_sources_wikipedia import API, mediawiki, mediawiki_with, params

# A lead of "Eiffel Tower" that does not say when it was completed; its History section does.
LEAD_WITHOUT_THE_DATE = (
    "The Eiffel Tower is a wrought-iron lattice tower on the Champ de Mars in Paris, France. It is named after the "
    "engineer Gustave Eiffel, whose company designed and built it."
)
KEYS = ("OPENAI_API_KEY", "OPENAI_BASE_URL", "FACTCHECK_LLM_BASE_URL", "SERPER_API_KEY", "SERPAPI_API_KEY")


@pytest.fixture
def server(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeServer]:
    for key in KEYS:  # the profile must need none of them
        monkeypatch.delenv(key, raising=False)
    with FakeServer() as fake:
        fake.route("GET", API, mediawiki)
        yield fake


def check(server: FakeServer, text: str, *extra: str) -> tuple[int, str]:
    """The wiki profile's Wikipedia agent alone (the wikidata agent's own tests: tests/test_wikidata_agent.py)."""
    args = ["check", text, "--profile", "wiki", "--agents", "wikipedia", "--wikipedia-url", server.url + API]
    args += ["--no-cache", *extra]
    result = CliRunner().invoke(cli, args)
    return result.exit_code, result.output


def test_the_profile_is_the_wikipedia_agent_judged_by_nli_and_the_wikidata_agent_with_sentence_claims() -> None:
    profile = PROFILES["wiki"]
    assert [(a.name, a.source, a.verifier) for a in profile.agents] == [
        ("wikipedia", "wikipedia", "nli"),
        ("wikidata", "wikidata", "wikidata"),
    ]
    assert (profile.extractor, profile.default_verifier) == ("sentence", "nli")
    settings = load_settings(env={}, profile="wiki", source_options={"wikipedia": {"api_url": "http://x/w/api.php"}})
    wikipedia, wikidata = settings.resolved_agents()
    assert wikipedia.source_options == {"api_url": "http://x/w/api.php"} and wikidata.source_options == {}


def test_a_claim_the_lead_section_states_is_true_with_one_request_per_claim(server: FakeServer) -> None:
    code, output = check(server, "The Eiffel Tower is a wrought-iron lattice tower in Paris.", "--format", "json")
    assert code == 0, output
    data = json.loads(output)
    assert data["language"] == "en"
    [claim] = data["claims"]
    [judgment] = claim["judgments"]
    assert judgment["agent"] == "wikipedia" and judgment["error"] is None
    assert judgment["evidence"][0]["title"] == "Eiffel Tower"
    assert judgment["evidence"][0]["url"] == "https://en.wikipedia.org/wiki/Eiffel_Tower"
    # The lead's first sentence supports it (p 0.95). Since issue 39 a verdict also needs no sentence about the
    # claim against it, and today's model reads the lead's "the tallest structure in Paris" as refuting it
    # (0.79): conflicting evidence, UNVERIFIED with both shown, never FALSE (docs/harm.md).
    assert re.search(
        r'SUPPORTS \(p=0\.9\d, similarity 0\.\d\d\) by \(Eiffel Tower\): "The Eiffel Tower', judgment["rationale"]
    )
    assert claim["label"] in ("TRUE", "UNVERIFIED") and judgment["factuality"] is not False
    [request] = server.calls(API)  # the request contract: one generator=search request with the extracts
    query = params(request)
    assert query["generator"] == "search" and query["prop"] == "extracts|info|revisions"
    assert query["gsrsearch"] == "The Eiffel Tower is a wrought-iron lattice tower in Paris."
    assert data["usage"]["llm_calls"] == 0 and data["usage"]["calls"]["verifier:nli"] == 1


def test_a_claim_only_a_section_states_reaches_the_evidence_from_that_section(server: FakeServer) -> None:
    server.route("GET", API, mediawiki_with(leads={"Eiffel Tower": LEAD_WITHOUT_THE_DATE}))
    code, output = check(server, "The Eiffel Tower was completed in 1889.", "--format", "json")
    assert code == 0, output
    [claim] = json.loads(output)["claims"]
    [judgment] = claim["judgments"]
    assert judgment["error"] is None
    evidence = judgment["evidence"]  # as the verifier ordered it
    [lead] = [e for e in evidence if e["title"] == "Eiffel Tower"]
    assert "1889" not in lead["text"]
    [history] = [e for e in evidence if "The tower was completed on 31 March 1889." in e["text"]]
    assert history["title"] == "Eiffel Tower § History"
    assert history["url"] == "https://en.wikipedia.org/wiki/Eiffel_Tower#History"
    assert history["published_at"] == lead["published_at"]


def test_the_text_report_names_the_agent_and_the_page(server: FakeServer) -> None:
    code, output = check(server, "Marie Curie won two Nobel Prizes. The Great Wall of China is in China.")
    assert code == 0, output
    assert "wikipedia" in output and "skipped" not in output
    assert {params(r)["gsrsearch"] for r in server.calls(API)} == {
        "Marie Curie won two Nobel Prizes.",
        "The Great Wall of China is in China.",
    }


def test_a_german_text_is_unverified_without_asking_the_wiki(server: FakeServer) -> None:
    code, output = check(server, "Der Eiffelturm steht in Berlin. Er wurde 1925 gebaut.", "--format", "json")
    assert code == 0, output
    data = json.loads(output)
    assert data["label"] == "UNVERIFIED" and data["language"] == "de"
    for claim in data["claims"]:
        assert claim["label"] == "UNVERIFIED"
        assert claim["judgments"][0]["error"] == "the text is German (de); the nli verifier reads English only"
    assert not server.calls(API)


def test_the_cli_help_lists_the_profile() -> None:
    result = CliRunner().invoke(cli, ["check", "--help"])
    assert result.exit_code == 0 and "wiki" in result.output


def test_a_sentence_about_something_else_is_no_contradiction(server: FakeServer) -> None:
    # Issue 26: "The tower was completed on 31 March 1889." refuted "The Eiffel Tower is in Paris." at p=0.94,
    # while the lead's first sentence supported it at 0.93. The sentence closer to the claim now decides.
    code, output = check(server, "The Eiffel Tower is in Paris.", "--format", "json")
    assert code == 0, output
    [claim] = json.loads(output)["claims"]
    [judgment] = claim["judgments"]
    assert claim["label"] == "TRUE", judgment["rationale"]
    assert "Paris" in judgment["rationale"].split(': "', 1)[1]


def test_the_date_a_section_states_decides_the_claim_about_it(server: FakeServer) -> None:
    server.route("GET", API, mediawiki_with(leads={"Eiffel Tower": LEAD_WITHOUT_THE_DATE}))
    code, output = check(server, "The Eiffel Tower was completed in 1889.", "--format", "json")
    assert code == 0, output
    [claim] = json.loads(output)["claims"]
    [judgment] = claim["judgments"]
    assert claim["label"] == "TRUE", judgment["rationale"]
    assert "completed on 31 March 1889" in judgment["rationale"]
