"""The wikipedia source against a local fake MediaWiki serving recorded API answers (tests/data/mediawiki)."""

from __future__ import annotations

import asyncio
import json
import threading
import time
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager, nullcontext
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest

import factcheck
from factcheck import Agent, Checker, Claim, ConfigError, Evidence, SourceError
from factcheck.cache import Cache, current_cache
from factcheck.sources import wikipedia as wikipedia_module
from factcheck.sources.wikipedia import WikipediaSource, strip_html, trim_at_sentence, wiki_url
from factcheck.testing import ScriptedVerifier, registered
from factcheck.usage import UsageRecorder, current_usage
from tests.fakes import FakeServer, Request, Response

DATA = Path(__file__).resolve().parent / "data" / "mediawiki"
API = "/w/api.php"
EIFFEL_URL = "https://en.wikipedia.org/wiki/Eiffel_Tower"

# Which recorded search answer a query gets: the first keyword it contains wins.
SEARCHES = (
    ("gustave", "search-gustave-eiffel"),
    ("eiffel", "search-eiffel-tower"),
    ("curie", "search-marie-curie"),
    ("great wall", "search-great-wall-of-china"),
)
PAGES = {
    "Eiffel Tower": "page-eiffel-tower",
    "Gustave Eiffel": "page-gustave-eiffel",
    "Marie Curie": "page-marie-curie",
    "Great Wall of China": "page-great-wall-of-china",
}


def fixture(name: str) -> Any:
    return json.loads((DATA / f"{name}.json").read_text(encoding="utf-8"))


def params(request: Request) -> dict[str, str]:
    return {key: values[-1] for key, values in request.query.items()}


def mediawiki(request: Request) -> Response:
    """A fake api.php answering list=search and prop=extracts|info from the recorded answers."""
    query = params(request)
    if query.get("list") == "search":
        name = next((f for word, f in SEARCHES if word in query.get("srsearch", "").lower()), "search-no-results")
        data = fixture(name)
        data["query"]["search"] = data["query"]["search"][: int(query.get("srlimit", "10"))]
        return Response(data)
    if query.get("prop") == "extracts|info":
        title = query.get("titles", "")
        if title in PAGES:
            return Response(fixture(PAGES[title]))
        missing = fixture("page-missing")
        missing["query"]["pages"][0]["title"] = title
        return Response(missing)
    return Response(fixture("error-nosrsearch"))


@pytest.fixture(scope="module")
def running_server() -> Iterator[FakeServer]:
    # One server for the module: stopping one takes up to half a second (its poll interval).
    with FakeServer() as fake:
        yield fake


@pytest.fixture
def server(running_server: FakeServer) -> FakeServer:
    """The fake MediaWiki, with no requests recorded, nothing queued and the recorded answers routed."""
    running_server.requests.clear()
    running_server.queued.clear()
    running_server.routes.clear()
    running_server.route("GET", API, mediawiki)
    return running_server


@pytest.fixture
def fast_retries(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(wikipedia_module, "BACKOFF_S", 0.01)


def source_for(server: FakeServer, **options: Any) -> WikipediaSource:
    return WikipediaSource(api_url=server.url + API, **options)


def retrieve(source: WikipediaSource, text: str, *queries: str) -> list[Evidence]:
    return asyncio.run(source.retrieve(Claim("c1", text, queries=queries)))


def searches(server: FakeServer) -> list[dict[str, str]]:
    return [params(r) for r in server.calls(API) if params(r).get("list") == "search"]


def page_fetches(server: FakeServer) -> list[dict[str, str]]:
    return [params(r) for r in server.calls(API) if params(r).get("prop")]


# --- the happy path -----------------------------------------------------------------------


def test_claim_gets_the_lead_of_the_top_page(server: FakeServer) -> None:
    [evidence] = retrieve(source_for(server), "The Eiffel Tower is 330 metres tall.")
    assert evidence.source == "wikipedia"
    assert evidence.title == "Eiffel Tower"
    assert evidence.url == EIFFEL_URL
    assert evidence.text.startswith("The Eiffel Tower ( EYE-fəl; French: Tour Eiffel")
    assert len(evidence.text) <= 1500 and evidence.text.endswith(".")
    assert fixture("page-eiffel-tower")["query"]["pages"][0]["extract"].startswith(evidence.text)
    assert evidence.retrieved_at is not None
    assert datetime.fromisoformat(evidence.retrieved_at).utcoffset() is not None

    first, second = server.calls(API)
    assert params(first) == {
        "action": "query",
        "list": "search",
        "srsearch": "The Eiffel Tower is 330 metres tall.",
        "srlimit": "1",
        "format": "json",
        "formatversion": "2",
    }
    assert "factcheck" in first.headers["User-Agent"]
    assert params(second) == {
        "action": "query",
        "prop": "extracts|info",
        "exintro": "1",
        "explaintext": "1",
        "inprop": "url",
        "titles": "Eiffel Tower",
        "format": "json",
        "formatversion": "2",
        "redirects": "1",
    }


def test_a_page_found_by_two_queries_is_fetched_and_returned_once(server: FakeServer) -> None:
    evidence = retrieve(source_for(server), "claim", "Eiffel Tower height", "Who designed the Eiffel Tower?")
    assert [e.title for e in evidence] == ["Eiffel Tower"]
    assert sorted(q["srsearch"] for q in searches(server)) == ["Eiffel Tower height", "Who designed the Eiffel Tower?"]
    assert [p["titles"] for p in page_fetches(server)] == ["Eiffel Tower"]


def test_top_pages_in_query_then_rank_order(server: FakeServer) -> None:
    source = source_for(server, pages=2)
    evidence = retrieve(source, "claim", "Eiffel Tower", "Gustave Eiffel engineer", "Marie Curie")
    # Query 2 ranks Gustave Eiffel, Eiffel Tower: both already found; max_queries=2 drops query 3.
    assert [e.title for e in evidence] == ["Eiffel Tower", "Gustave Eiffel"]
    assert evidence[1].url == "https://en.wikipedia.org/wiki/Gustave_Eiffel"
    assert len(searches(server)) == 2 and all(q["srlimit"] == "2" for q in searches(server))
    assert sorted(p["titles"] for p in page_fetches(server)) == ["Eiffel Tower", "Gustave Eiffel"]


def test_other_topics(server: FakeServer) -> None:
    source = source_for(server, max_queries=3)
    evidence = retrieve(source, "claim", "Marie Curie Nobel Prize", "Great Wall of China length")
    assert [(e.title, e.url) for e in evidence] == [
        ("Marie Curie", "https://en.wikipedia.org/wiki/Marie_Curie"),
        ("Great Wall of China", "https://en.wikipedia.org/wiki/Great_Wall_of_China"),
    ]
    assert "first woman to win a Nobel Prize" in evidence[0].text


def test_no_search_results_gives_no_evidence(server: FakeServer) -> None:
    assert retrieve(source_for(server), "Zorblax quintuple fnord.") == []
    assert len(searches(server)) == 1 and page_fetches(server) == []


def test_a_missing_page_is_skipped(server: FakeServer) -> None:
    evidence = retrieve(source_for(server, pages=3), "Eiffel Tower replicas")
    assert [e.title for e in evidence] == ["Eiffel Tower", "Gustave Eiffel"]  # the third hit has no page any more


def test_lead_is_trimmed_at_a_sentence_end(server: FakeServer) -> None:
    [evidence] = retrieve(source_for(server, max_chars=300), "Eiffel Tower")
    assert evidence.text == (
        "The Eiffel Tower ( EYE-fəl; French: Tour Eiffel [tuʁ ɛfɛl] ) is a wrought-iron lattice tower on the Champ de "
        "Mars in Paris, France. It is named after the engineer Gustave Eiffel, whose company designed and built the "
        "tower from 1887 to 1889."
    )


def test_url_falls_back_to_the_article_path_and_text_to_the_snippet(server: FakeServer) -> None:
    def bare(request: Request) -> Response:
        if params(request).get("prop"):
            data = fixture("page-eiffel-tower")
            page = data["query"]["pages"][0]
            for key in ("fullurl", "canonicalurl", "editurl"):
                del page[key]
            page["extract"] = ""  # a wiki without the TextExtracts extension
            return Response(data)
        return mediawiki(request)

    server.route("GET", API, bare)
    [evidence] = retrieve(source_for(server, language="fr"), "Eiffel Tower")
    assert evidence.url == "https://fr.wikipedia.org/wiki/Eiffel_Tower"
    assert evidence.text.startswith("The Eiffel Tower ( EYE-fəl; French: Tour Eiffel [tuʁ ɛfɛl] ) is a wrought-iron")
    assert "<span" not in evidence.text


def test_helpers() -> None:
    assert strip_html('The <span class="searchmatch">Eiffel</span> &quot;Iron Lady&quot;') == 'The Eiffel "Iron Lady"'
    assert (
        wiki_url("en", "Eiffel Tower (Paris, Tennessee)")
        == "https://en.wikipedia.org/wiki/Eiffel_Tower_(Paris,_Tennessee)"
    )
    assert wiki_url("de", "Straße?") == "https://de.wikipedia.org/wiki/Stra%C3%9Fe%3F"
    assert trim_at_sentence("  Short.  ", 100) == "Short."
    assert trim_at_sentence("One two. Three four.", 8) == "One two."  # a sentence ending exactly at the limit
    assert trim_at_sentence("One two. Three four.", 12) == "One two."
    assert trim_at_sentence("It is 3.5 m tall. More.", 12) == "It is 3.5 m\u2026"  # no sentence end fits
    assert len(trim_at_sentence("word " * 100, 50)) <= 50


# --- failures and retries -----------------------------------------------------------------


def test_rate_limit_is_retried_after_the_servers_delay(server: FakeServer) -> None:
    times: list[float] = []
    lock = threading.Lock()

    def limited(request: Request) -> Response:
        if params(request).get("list") == "search":
            with lock:
                times.append(time.monotonic())
                if len(times) == 1:
                    return Response({"error": "rate limited"}, status=429, headers={"Retry-After": "1"})
        return mediawiki(request)

    server.route("GET", API, limited)
    [evidence] = retrieve(source_for(server), "Eiffel Tower")
    assert evidence.title == "Eiffel Tower"
    assert len(times) == 2 and times[1] - times[0] >= 0.9


def test_server_error_is_retried(server: FakeServer, fast_retries: None) -> None:
    server.queue("GET", API, Response({"error": "upstream"}, status=500))
    [evidence] = retrieve(source_for(server), "Eiffel Tower")
    assert evidence.title == "Eiffel Tower"
    assert len(searches(server)) == 2


def test_malformed_json_is_a_source_error(server: FakeServer) -> None:
    server.queue("GET", API, Response(raw=b"<html><body>Wikimedia Error</body></html>"))
    with pytest.raises(SourceError, match="malformed JSON"):
        retrieve(source_for(server), "Eiffel Tower")


def test_api_error_object_is_a_source_error(server: FakeServer) -> None:
    server.queue("GET", API, Response(fixture("error-nosrsearch")))
    with pytest.raises(SourceError, match="nosrsearch"):
        retrieve(source_for(server), "Eiffel Tower")


def test_slow_server_times_out(server: FakeServer, fast_retries: None) -> None:
    server.queue("GET", API, *[Response(fixture("search-eiffel-tower"), delay_s=1.0)] * (wikipedia_module.RETRIES + 1))
    start = time.monotonic()
    with pytest.raises(SourceError, match=r"timed out after 0\.3s"):
        retrieve(source_for(server, timeout_s=0.3), "Eiffel Tower")
    assert time.monotonic() - start < 3.0
    assert len(server.calls(API)) == wikipedia_module.RETRIES + 1


def test_one_failed_query_does_not_lose_the_others(server: FakeServer) -> None:
    def half_broken(request: Request) -> Response:
        if "broken" in params(request).get("srsearch", ""):
            return Response({"error": "bad request"}, status=400)
        return mediawiki(request)

    server.route("GET", API, half_broken)
    evidence = retrieve(source_for(server), "claim", "broken query", "Marie Curie")
    assert [e.title for e in evidence] == ["Marie Curie"]


# --- cache and usage ----------------------------------------------------------------------


@contextmanager
def in_context(cache: Cache | None, recorder: UsageRecorder) -> Iterator[None]:
    """Make ``cache`` and ``recorder`` the current ones, as a check does."""
    cache_token, usage_token = current_cache.set(cache), current_usage.set(recorder)
    try:
        yield
    finally:
        current_cache.reset(cache_token)
        current_usage.reset(usage_token)


def test_real_requests_count_as_search_calls(server: FakeServer) -> None:
    recorder = UsageRecorder()
    with in_context(None, recorder):
        retrieve(source_for(server), "claim", "Eiffel Tower height", "Who designed the Eiffel Tower?")
    assert recorder.search_calls == 3  # two searches and one page
    assert dict(recorder.cache_hits) == {}


def test_second_retrieve_is_served_from_the_cache(server: FakeServer, tmp_path: Path) -> None:
    source = source_for(server)
    cache = Cache(tmp_path / "c.sqlite")
    first_usage, second_usage = UsageRecorder(), UsageRecorder()
    with in_context(cache, first_usage):
        first = retrieve(source, "Eiffel Tower")
    requests = len(server.requests)
    with in_context(cache, second_usage):
        second = retrieve(source, "Eiffel Tower")
    cache.close()
    assert second == first  # retrieved_at included: it says when the page was fetched
    assert len(server.requests) == requests == 2
    assert first_usage.search_calls == 2 and dict(first_usage.cache_hits) == {}
    assert second_usage.search_calls == 0 and dict(second_usage.cache_hits) == {"wikipedia": 2}


def test_feeds_a_check(server: FakeServer, tmp_path: Path) -> None:
    checker = Checker(agents=[Agent("wikipedia", source_for(server), ScriptedVerifier())])
    claims = [Claim("c1", "The Eiffel Tower is in Paris."), Claim("c2", "Zorblax quintuple fnord.")]
    cache = Cache(tmp_path / "c.sqlite")
    token = current_cache.set(cache)
    try:
        verdict = checker.check("The Eiffel Tower is in Paris. Zorblax quintuple fnord.", claims)
        again = checker.check("The Eiffel Tower is in Paris. Zorblax quintuple fnord.", claims)
    finally:
        current_cache.reset(token)
        cache.close()
    found, nothing = verdict.claims
    assert found.judgments[0].factuality is True
    assert found.judgments[0].evidence[0].url == EIFFEL_URL
    assert nothing.judgments[0].abstained and not nothing.verified  # no evidence: the verifier abstains
    assert verdict.usage.search_calls == 3
    assert again.usage.search_calls == 0 and again.usage.cache_hits == {"wikipedia": 3}


# --- options and registration -------------------------------------------------------------


@pytest.mark.parametrize(
    "options",
    [
        {"language": "EN"},
        {"language": "en.evil.example/x"},
        {"language": ""},
        {"api_url": "ftp://wiki.example.org/w/api.php"},
        {"api_url": "wiki.example.org/w/api.php"},
        {"pages": 0},
        {"pages": 51},
        {"pages": True},
        {"max_queries": 0},
        {"max_chars": 0},
        {"timeout_s": 0},
        {"timeout_s": -1.0},
        {"concurrency": 0},
    ],
)
def test_bad_options_are_config_errors(options: dict[str, Any]) -> None:
    with pytest.raises(ConfigError, match="wikipedia"):
        WikipediaSource(**options)


def test_options_from_strings() -> None:
    source = WikipediaSource().configure(language="simple", pages="3", api_url="https://wiki.example.org/w/api.php")
    assert (source.language, source.pages, source.endpoint) == ("simple", 3, "https://wiki.example.org/w/api.php")
    assert WikipediaSource(language="de").endpoint == "https://de.wikipedia.org/w/api.php"
    with pytest.raises(ConfigError):
        WikipediaSource().configure(max_chars="0")


def test_registers_as_the_wikipedia_source() -> None:
    already = "wikipedia" in factcheck.get_sources()
    context: AbstractContextManager[None] = nullcontext() if already else registered(wikipedia_module)
    with context:
        assert isinstance(factcheck.get_sources()["wikipedia"], WikipediaSource)
