"""The web search sources (Serper, SerpAPI) against a local HTTP server replaying recorded answers.

Answers are recorded in tests/data/serper, tests/data/serpapi and, for the quirks real pages
have (direct answers with their own titles, knowledge-graph facts, HTML in snippets, error
bodies), tests/data/quirks/search. The fake picks an answer by the query only.
"""

from __future__ import annotations

import asyncio
import json
import socket
import time
from collections.abc import Iterator
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from factcheck import Claim
from factcheck.cache import Cache, cache_key
from factcheck.context import using
from factcheck.errors import ConfigError, MissingKeyError, ServiceRefusedError, SourceError
from factcheck.net import REFUSALS
from factcheck.secrets import redact
from factcheck.sources import websearch
from factcheck.sources.websearch import SerpAPISource, SerperSource
from factcheck.types import Evidence
from factcheck.usage import UsageRecorder
from tests.fakes import FakeServer, Request, Response

DATA = Path(__file__).resolve().parent / "data"
QUIRKS = DATA / "quirks" / "search"
KEY = "sk-test-0123456789abcdef0123456789abcdef"

EIFFEL_COMPLETED = "When was the Eiffel Tower completed?"
CURIE = "Marie Curie"
VITAMIN_D = "vitamin D supplements reduce fractures in older adults"
NONSENSE = "zxqv florbnicate quintessimal glarbonite 1887"
EIFFEL_HEIGHT = "how tall is the eiffel tower"
COFFEE = "coffee consumption risk of type 2 diabetes"
EIFFEL_DIRECT = "eiffel tower height"
GUSTAVE = "Gustave Eiffel"


def recorded(api: str, query_path: tuple[str, str]) -> dict[str, dict[str, Any]]:
    """The recorded answers of one API (plain pages and quirks), by the query they answer."""
    answers = {}
    for file in sorted([*(DATA / api).glob("*.json"), *(QUIRKS / api).glob("*.json")]):
        answer = json.loads(file.read_text(encoding="utf-8"))
        answers[answer[query_path[0]][query_path[1]]] = answer
    return answers


def error_body(name: str) -> Any:
    return json.loads((QUIRKS / "errors" / f"{name}.json").read_text(encoding="utf-8"))


SERPER = recorded("serper", ("searchParameters", "q"))
SERPAPI = recorded("serpapi", ("search_parameters", "q"))


def serper_answer(request: Request) -> Response:
    return Response(SERPER.get(request.json()["q"], SERPER[NONSENSE]))


def serpapi_answer(request: Request) -> Response:
    return Response(SERPAPI.get(request.query["q"][0], SERPAPI[NONSENSE]))


@pytest.fixture(scope="module")
def shared_server() -> Iterator[FakeServer]:
    # One server for the module: stopping one takes half a second (serve_forever's poll interval).
    with FakeServer() as fake:
        yield fake


@pytest.fixture(autouse=True)
def no_refusals() -> Iterator[None]:
    """Each test starts with no key known to be refused (refusals last for the process otherwise)."""
    REFUSALS.clear()
    yield
    REFUSALS.clear()


@pytest.fixture
def server(shared_server: FakeServer, monkeypatch: pytest.MonkeyPatch) -> FakeServer:
    """A local server answering like Serper (POST /search) and SerpAPI (GET /search.json), with keys set."""
    monkeypatch.setenv("SERPER_API_KEY", KEY)
    monkeypatch.setenv("SERPAPI_API_KEY", KEY)
    shared_server.requests.clear()
    shared_server.queued.clear()
    shared_server.route("POST", "/search", serper_answer)
    shared_server.route("GET", "/search.json", serpapi_answer)
    return shared_server


def retrieve(source: websearch.WebSearchSource, *queries: str) -> list[Evidence]:
    return asyncio.run(source.retrieve(Claim("c1", queries[0], queries=queries)))


def urls(evidence: list[Evidence]) -> list[str | None]:
    return [e.url for e in evidence]


# --- Serper: parsing -------------------------------------------------------------------------


def test_serper_answer_box_comes_first_then_organic_snippets(server: FakeServer) -> None:
    evidence = retrieve(SerperSource(base_url=server.url), EIFFEL_COMPLETED)
    box = evidence[0]
    # A featured snippet keeps the title of the page it quotes.
    assert (box.source, box.title, box.url) == (
        "serper",
        "Eiffel Tower - Wikipedia",
        "https://en.wikipedia.org/wiki/Eiffel_Tower",
    )
    assert box.text.startswith("Constructed from 1887 to 1889")
    # The first organic result is the page the answer box quotes: its own, different snippet is kept.
    assert urls(evidence[1:]) == [
        "https://en.wikipedia.org/wiki/Eiffel_Tower",
        "https://www.britannica.com/topic/Eiffel-Tower-Paris-France",
        "https://www.toureiffel.paris/en/the-monument/history",
        "https://www.history.com/topics/landmarks/eiffel-tower",
    ]
    assert evidence[1].text.startswith("The Eiffel Tower is a wrought-iron lattice tower")
    assert evidence[2].title == "Eiffel Tower | History, Height, & Facts | Britannica"
    assert evidence[2].text.startswith("Eiffel Tower, Parisian landmark")
    stamp = datetime.fromisoformat(str(box.retrieved_at))
    assert stamp.utcoffset() == timedelta(0)


def test_serper_knowledge_graph_then_organic(server: FakeServer) -> None:
    evidence = retrieve(SerperSource(base_url=server.url), CURIE)
    kg = evidence[0]
    assert kg.title == "Marie Curie" and kg.url == "https://en.wikipedia.org/wiki/Marie_Curie"
    assert kg.text.startswith("Marie Curie: Maria Salomea Skłodowska-Curie was a Polish")
    assert "Awards: Nobel Prize in Physics (1903), Nobel Prize in Chemistry (1911)" in kg.text
    assert len(evidence) == 5  # top_k: the panel and four organic results
    # Organic result 1 is the Wikipedia page the panel cites: its snippet is kept all the same.
    assert urls(evidence[1:3]) == [
        "https://en.wikipedia.org/wiki/Marie_Curie",
        "https://www.nobelprize.org/prizes/physics/1903/marie-curie/facts/",
    ]
    assert "https://www.sciencehistory.org/education/scientific-biographies/marie-sklodowska-curie/" not in urls(
        evidence
    )  # the sixth organic result


def test_serper_organic_only_skips_results_without_a_snippet(server: FakeServer) -> None:
    evidence = retrieve(SerperSource(base_url=server.url), VITAMIN_D)
    assert [e.title for e in evidence] == [
        "Supplemental Vitamin D and Incident Fractures in Midlife and Older Adults",
        "Vitamin D - Health Professional Fact Sheet",
        "Vitamin D and calcium for the prevention of fracture: a systematic review and meta-analysis",
        "Vitamin D for the prevention of falls and fractures | USPSTF",
    ]
    assert all(e.text and e.url for e in evidence)


def test_each_result_carries_the_date_google_shows_for_it(server: FakeServer) -> None:
    serper = retrieve(SerperSource(base_url=server.url), VITAMIN_D)
    assert [e.published_at for e in serper] == ["2022-07-28", None, "2019-12-27", None]  # "Jul 28, 2022", none, ...
    serpapi = retrieve(SerpAPISource(base_url=server.url), COFFEE)
    assert [e.published_at for e in serpapi][-1] == "2005-06-01"  # "Jun 1, 2005"
    assert all(e.to_dict()["published_at"] == e.published_at for e in serper)


def test_a_relative_result_date_counts_back_from_the_retrieval(server: FakeServer) -> None:
    answer = {
        "organic": [
            {"title": "A", "link": "https://a.example/1", "snippet": "Fresh news.", "date": "3 days ago"},
            {"title": "B", "link": "https://b.example/2", "snippet": "Older news.", "date": "Mar 2021"},
            {"title": "C", "link": "https://c.example/3", "snippet": "Undated.", "date": "sometime soon"},
        ]
    }
    server.queue("POST", "/search", Response(answer))
    [fresh, month, unknown] = retrieve(SerperSource(base_url=server.url), "recent news")
    assert fresh.retrieved_at is not None
    retrieved = datetime.fromisoformat(fresh.retrieved_at)
    assert fresh.published_at == (retrieved - timedelta(days=3)).date().isoformat()
    assert month.published_at == "2021-03" and unknown.published_at is None


def test_a_text_written_long_ago_searches_only_what_was_published_by_then(server: FakeServer) -> None:
    from factcheck.claimtime import reference_time

    with using(reference=reference_time("2014-05-10")):
        retrieve(SerperSource(base_url=server.url), VITAMIN_D)
        retrieve(SerperSource(base_url=server.url, date_restrict=False), VITAMIN_D)
        retrieve(SerpAPISource(base_url=server.url), COFFEE)
    retrieve(SerperSource(base_url=server.url), VITAMIN_D + " today")  # a check of today: no restriction
    restricted, unrestricted, today = (r.json() for r in server.calls("/search") if r.method == "POST")
    assert restricted["tbs"] == "cdr:1,cd_max:05/10/2014"
    assert "tbs" not in unrestricted and "tbs" not in today
    [serpapi] = server.calls("/search.json")
    assert serpapi.query["tbs"] == ["cdr:1,cd_max:05/10/2014"]


def test_serper_no_results_is_no_evidence(server: FakeServer) -> None:
    assert retrieve(SerperSource(base_url=server.url), NONSENSE) == []


def test_serper_request_carries_key_header_and_json_query(server: FakeServer) -> None:
    retrieve(SerperSource(base_url=server.url + "/", gl="fr", hl="fr"), VITAMIN_D)
    (request,) = server.calls("/search")
    headers = {k.lower(): v for k, v in request.headers.items()}
    assert request.method == "POST"
    assert headers["x-api-key"] == KEY
    assert headers["user-agent"].startswith("factcheck-agents/")
    assert request.json() == {"q": VITAMIN_D, "num": 10, "gl": "fr", "hl": "fr"}


def test_serper_searches_at_most_max_queries_and_merges_by_url(server: FakeServer) -> None:
    other = {
        "organic": [
            {"title": "dup", "link": "https://www.britannica.com/topic/Eiffel-Tower-Paris-France", "snippet": "again"},
            {"title": "New", "link": "https://example.org/new", "snippet": "Something new.", "position": 2},
        ]
    }
    server.route("POST", "/search", lambda r: Response(SERPER[EIFFEL_COMPLETED] if r.json()["q"] != "other" else other))
    source = SerperSource(base_url=server.url, top_k=10)
    evidence = retrieve(source, EIFFEL_COMPLETED, "other", "never searched")
    assert sorted(r.json()["q"] for r in server.calls("/search")) == sorted([EIFFEL_COMPLETED, "other"])
    assert len(evidence) == 7 and evidence[-1].url == "https://example.org/new"
    # Organic results are merged by URL; the answer box shares its URL with organic result 1 and stays.
    assert len(set(urls(evidence[1:]))) == 6 and urls(evidence).count(evidence[0].url) == 2
    assert "again" not in [e.text for e in evidence]
    assert len(retrieve(SerperSource(base_url=server.url, top_k=2), EIFFEL_COMPLETED, "other")) == 2


# --- Serper: failures ------------------------------------------------------------------------


def test_serper_honours_retry_after_on_429(server: FakeServer) -> None:
    server.queue(
        "POST", "/search", Response({"message": "Too many requests"}, status=429, headers={"Retry-After": "1"})
    )
    start = time.perf_counter()
    evidence = retrieve(SerperSource(base_url=server.url), VITAMIN_D)
    assert time.perf_counter() - start >= 0.9
    assert len(evidence) == 4 and len(server.calls("/search")) == 2


def test_serper_retries_a_server_error(server: FakeServer) -> None:
    server.queue("POST", "/search", Response({"message": "Internal error"}, status=500))
    assert len(retrieve(SerperSource(base_url=server.url), VITAMIN_D)) == 4
    assert len(server.calls("/search")) == 2


def test_serper_malformed_json_is_a_source_error(server: FakeServer) -> None:
    server.queue("POST", "/search", Response(raw=b"<html>oops</html>"))
    with pytest.raises(SourceError, match="serper: answered with malformed JSON"):
        retrieve(SerperSource(base_url=server.url), VITAMIN_D)


def test_serper_time_out_is_a_source_error(server: FakeServer) -> None:
    server.queue("POST", "/search", Response(SERPER[VITAMIN_D], delay_s=1.0))
    start = time.perf_counter()
    with pytest.raises(SourceError, match=r"serper: timed out after 0\.3s"):
        retrieve(SerperSource(base_url=server.url, timeout_s=0.3, retries=0), VITAMIN_D)
    assert time.perf_counter() - start < 0.9


@pytest.mark.parametrize("padding", [0, 167])  # 167: the 200-character excerpt ends inside the key
def test_serper_errors_never_show_the_key(server: FakeServer, padding: int) -> None:
    server.queue("POST", "/search", Response({"message": "x" * padding + KEY}, status=400))
    with pytest.raises(SourceError, match="serper: HTTP 400") as caught:
        retrieve(SerperSource(base_url=server.url), VITAMIN_D)
    assert KEY[:8] not in str(caught.value)
    assert "[redacted]" in str(caught.value)


@pytest.mark.parametrize("source", [SerperSource(), SerpAPISource(), SerperSource(api_key_env="MY_SEARCH_KEY")])
def test_missing_key_stops_prepare_and_names_the_variable(
    monkeypatch: pytest.MonkeyPatch, source: websearch.WebSearchSource
) -> None:
    monkeypatch.delenv(source.api_key_env, raising=False)
    with pytest.raises(MissingKeyError, match=f"{source.name}: no API key \\(set {source.api_key_env}\\)"):
        asyncio.run(source.prepare())
    with pytest.raises(SourceError):
        retrieve(source, "anything")


def test_a_second_identical_search_is_served_from_the_cache(server: FakeServer, tmp_path: Path) -> None:
    cache, recorder = Cache(tmp_path / "cache.sqlite"), UsageRecorder()
    with using(cache=cache, usage=recorder):
        source = SerperSource(base_url=server.url)
        first = retrieve(source, CURIE)
        second = retrieve(source, CURIE)
        cache.close()
    assert first == second
    assert len(server.calls("/search")) == 1
    assert recorder.search_calls == 1 and recorder.cache_hits["serper"] == 1
    assert KEY.encode() not in (tmp_path / "cache.sqlite").read_bytes()


def test_a_page_without_evidence_is_cached_as_an_empty_answer(server: FakeServer, tmp_path: Path) -> None:
    # An empty value is what the cache keeps only briefly, so a passing outage is asked again later.
    cache = Cache(tmp_path / "cache.sqlite")
    with using(cache=cache):
        source = SerperSource(base_url=server.url)
        assert retrieve(source, NONSENSE) == []
        assert len(retrieve(source, CURIE)) == 5
        request = {"q": NONSENSE, "base_url": source.root, **source.request_params()}
        assert cache.get(cache_key("serper", source.VERSION, request)) == {}
        found = cache.get(cache_key("serper", source.VERSION, {**request, "q": CURIE}))
        assert found is not None and len(found["featured"]) == 1 and len(found["organic"]) == 5
        cache.close()


# --- SerpAPI ---------------------------------------------------------------------------------


def test_serpapi_answer_box_over_http(server: FakeServer) -> None:
    evidence = retrieve(SerpAPISource(base_url=server.url), EIFFEL_HEIGHT)
    (request,) = server.calls("/search.json")
    assert request.method == "GET"
    assert {k: v[0] for k, v in request.query.items() if k in {"q", "api_key", "engine", "num", "gl", "hl"}} == {
        "q": EIFFEL_HEIGHT,
        "api_key": KEY,
        "engine": "google",
        "num": "10",
        "gl": "us",
        "hl": "en",
    }
    # A direct answer keeps the title that says what it answers.
    assert (evidence[0].source, evidence[0].title, evidence[0].text, evidence[0].url) == (
        "serpapi",
        "Eiffel Tower/Height",
        "Eiffel Tower/Height: 330 m",
        None,
    )
    assert urls(evidence[1:]) == [
        "https://en.wikipedia.org/wiki/Eiffel_Tower",
        "https://www.toureiffel.paris/en/the-monument/key-figures",
        "https://www.britannica.com/story/how-tall-is-the-eiffel-tower",
    ]


def test_serpapi_knowledge_graph_cites_its_source(server: FakeServer) -> None:
    evidence = retrieve(SerpAPISource(base_url=server.url), CURIE)
    assert evidence[0].title == "Marie Curie" and evidence[0].url == "https://en.wikipedia.org/wiki/Marie_Curie"
    # SerpAPI gives the panel's facts as top-level keys: they are kept.
    assert evidence[0].text.splitlines()[1:] == [
        "Born: November 7, 1867, Warsaw, Poland",
        "Died: July 4, 1934, Passy, France",
        "Spouse: Pierre Curie (m. 1895\u20131906)",
    ]
    assert urls(evidence[1:]) == [
        "https://en.wikipedia.org/wiki/Marie_Curie",
        "https://www.nobelprize.org/prizes/physics/1903/marie-curie/facts/",
    ]


def test_serpapi_organic_only_and_empty(server: FakeServer) -> None:
    assert len(retrieve(SerpAPISource(base_url=server.url), COFFEE)) == 3
    assert retrieve(SerpAPISource(base_url=server.url), NONSENSE) == []  # SerpAPI's "no results" error


def test_serpapi_error_answer_is_a_source_error(server: FakeServer) -> None:
    message = f"Invalid API key {KEY}. Your API key should be here: https://serpapi.com/manage-api-key"
    server.queue("GET", "/search.json", Response({"error": message}, status=401))
    with pytest.raises(SourceError, match="serpapi: HTTP 401: Invalid API key") as caught:
        retrieve(SerpAPISource(base_url=server.url), COFFEE)
    assert KEY[:8] not in str(caught.value)


@pytest.mark.parametrize(
    ("response", "expected"),
    [
        (Response(raw=b"<html>500 Internal Server Error</html>", status=500), "malformed JSON"),
        (Response({}, status=500), "unexpected answer"),
    ],
)
def test_serpapi_server_error_is_a_source_error(server: FakeServer, response: Response, expected: str) -> None:
    server.queue("GET", "/search.json", response)
    with pytest.raises(SourceError, match=expected):
        retrieve(SerpAPISource(base_url=server.url), COFFEE)
    assert len(server.calls("/search.json")) == 1  # sent once: no retries


def test_serpapi_time_out_and_unreachable_host(server: FakeServer) -> None:
    server.queue("GET", "/search.json", Response(SERPAPI[COFFEE], delay_s=1.0))
    with pytest.raises(SourceError, match=r"serpapi: timed out after 0\.3s"):
        retrieve(SerpAPISource(base_url=server.url, timeout_s=0.3), COFFEE)
    port = closed_port()
    # Through the service layer, as Serper: the host is named, and the key is not.
    with pytest.raises(
        ServiceRefusedError, match=rf"serpapi: cannot reach 127\.0\.0\.1:{port} \(connection refused\)"
    ) as caught:
        retrieve(SerpAPISource(base_url=f"http://127.0.0.1:{port}"), COFFEE)
    assert KEY[:8] not in str(caught.value)


def test_serpapi_out_of_searches_is_its_own_message_sent_once_and_no_refusal(server: FakeServer) -> None:
    # SerpAPI answers 429 both for the hourly throughput and for a plan's spent searches: not retried.
    server.queue("GET", "/search.json", Response(error_body("serpapi-429-out-of-searches"), status=429))
    with pytest.raises(SourceError, match=r"^serpapi: Your account has run out of searches\. \(HTTP 429\)$") as caught:
        retrieve(SerpAPISource(base_url=server.url), COFFEE)
    assert not isinstance(caught.value, ServiceRefusedError)
    assert len(server.calls("/search.json")) == 1
    assert len(retrieve(SerpAPISource(base_url=server.url), COFFEE)) == 3  # the key is still used


# --- what real pages carry: titled answers, panel facts, HTML ---------------------------------


def test_serper_direct_answer_keeps_its_title_then_the_panel_facts(server: FakeServer) -> None:
    box, panel, *organic = retrieve(SerperSource(base_url=server.url), EIFFEL_DIRECT)
    assert (box.title, box.text, box.url) == ("Eiffel Tower / Height", "Eiffel Tower / Height: 330 m", None)
    # The panel comes too (not only when there is no answer box), with its facts.
    assert (panel.title, panel.url) == ("Eiffel Tower", "https://en.wikipedia.org/wiki/Eiffel_Tower")
    assert panel.text.splitlines()[1:] == [
        "Height: 330 m",
        "Opened: March 31, 1889",
        "Architect: Stephen Sauvestre",
        "Construction started: January 28, 1887",
    ]
    assert [e.url for e in organic] == [
        "https://en.wikipedia.org/wiki/Eiffel_Tower",
        "https://www.toureiffel.paris/en/the-monument/key-figures",
        "https://www.britannica.com/story/how-tall-is-the-eiffel-tower",
    ]


def test_serper_html_in_titles_and_snippets_becomes_text(server: FakeServer) -> None:
    evidence = retrieve(SerperSource(base_url=server.url), EIFFEL_DIRECT)
    wikipedia, official, britannica = evidence[2:]
    assert wikipedia.title == "Eiffel Tower - Wikipedia"
    assert wikipedia.text == (
        "The tower is 330 metres (1,083 ft) tall, about the same height as an 81-storey building, "
        "and the tallest structure in Paris."
    )
    assert official.title == "The Eiffel Tower's dimensions - La tour Eiffel"
    assert official.text.startswith("Height: 330 m (with antennas) & 300 m without. The tower grows by up")
    assert britannica.text.startswith("Mar 21, 2024 \u2014 The Eiffel Tower was the tallest")
    assert not any(marker in e.title + e.text for e in evidence for marker in ("<", "&amp;", "&#", "&nbsp;"))


def test_serpapi_keeps_answer_box_title_knowledge_graph_facts_and_organic_snippets(server: FakeServer) -> None:
    evidence = retrieve(SerpAPISource(base_url=server.url), GUSTAVE)
    box, panel, *organic = evidence
    assert box.title == "Gustave Eiffel | Biography, Accomplishments, & Facts | Britannica"
    assert box.url == "https://www.britannica.com/biography/Gustave-Eiffel"
    assert box.text == (
        "Gustave Eiffel, (born December 15, 1832, Dijon, France\u2014died December 27, 1923, Paris), "
        "French civil engineer renowned for the Eiffel Tower in Paris."
    )
    assert (panel.title, panel.url) == ("Gustave Eiffel", "https://en.wikipedia.org/wiki/Gustave_Eiffel")
    # Top-level facts are kept (entities decoded); links, ids, images and "people also search for" are not.
    assert panel.text.splitlines() == [
        "Gustave Eiffel: Alexandre Gustave Eiffel was a French civil engineer. A graduate of \u00c9cole Centrale "
        "des Arts et Manufactures, he made his name with various bridges for the French railway network.",
        "Born: December 15, 1832, Dijon, France",
        "Died: December 27, 1923, Paris, France",
        "Place of burial: Levallois-Perret Cemetery",
        "Education: \u00c9cole Centrale Paris (1852\u20131855)",
    ]
    # Organic result 1 quotes the same page as the answer box, with other words: it is kept.
    assert [(e.url, e.text[:40]) for e in organic] == [
        ("https://www.britannica.com/biography/Gustave-Eiffel", "Gustave Eiffel was a French civil engine"),
        ("https://en.wikipedia.org/wiki/Gustave_Eiffel", "Alexandre Gustave Eiffel was a French ci"),
    ]
    assert "<em>" not in organic[1].text and "&amp;" not in organic[0].text


def test_an_answer_box_seen_by_two_queries_is_kept_once(server: FakeServer) -> None:
    answer = SERPER[EIFFEL_DIRECT]
    server.route("POST", "/search", lambda request: Response(answer))
    evidence = retrieve(SerperSource(base_url=server.url, top_k=10), EIFFEL_DIRECT, "height of the eiffel tower")
    assert len(server.calls("/search")) == 2
    assert [e.title for e in evidence].count("Eiffel Tower / Height") == 1
    assert len(evidence) == 5  # box, panel and three organic results, none twice


# --- a refused key is not sent again ---------------------------------------------------------


def claims(n: int) -> list[Claim]:
    return [Claim(f"c{i}", f"Claim number {i}.", queries=(f"query {i}",)) for i in range(n)]


async def retrieve_all(source: websearch.WebSearchSource, batch: list[Claim]) -> list[Any]:
    return await asyncio.gather(*(source.retrieve(c) for c in batch), return_exceptions=True)


def test_a_key_serper_refuses_is_sent_once_for_many_claims(server: FakeServer) -> None:
    server.route("POST", "/search", lambda request: Response(error_body("serper-403-unauthorized"), status=403))
    recorder = UsageRecorder()
    with using(usage=recorder):
        first = asyncio.run(retrieve_all(SerperSource(base_url=server.url), claims(6)))
        later = asyncio.run(retrieve_all(SerperSource(base_url=server.url), claims(2)))  # a later check, same key
    assert len(server.calls("/search")) == 1 and recorder.search_calls == 1
    for error in [*first, *later]:
        assert isinstance(error, SourceError) and isinstance(error, ServiceRefusedError)
        # Serper's own message, and the variable to fix.
        assert str(error).startswith("serper: HTTP 403: Unauthorized. (check SERPER_API_KEY)")
    assert sum("not sent again" in str(e) for e in first) == 5


def test_another_key_is_tried_after_a_refusal(server: FakeServer, monkeypatch: pytest.MonkeyPatch) -> None:
    server.queue("POST", "/search", Response(error_body("serper-403-unauthorized"), status=403))
    with pytest.raises(SourceError, match="Unauthorized"):
        retrieve(SerperSource(base_url=server.url), VITAMIN_D)
    with pytest.raises(SourceError, match="not sent again"):
        retrieve(SerperSource(base_url=server.url + "/"), VITAMIN_D)  # the same endpoint
    assert len(server.calls("/search")) == 1
    monkeypatch.setenv("SERPER_API_KEY", "sk-test-another-key-0123456789")
    assert len(retrieve(SerperSource(base_url=server.url), VITAMIN_D)) == 4
    assert len(server.calls("/search")) == 2


def test_a_key_serpapi_refuses_is_not_sent_again(server: FakeServer) -> None:
    body = error_body("serpapi-401-invalid-key")
    server.route("GET", "/search.json", lambda request: Response(body, status=401))
    results = asyncio.run(retrieve_all(SerpAPISource(base_url=server.url), claims(4)))
    assert len(server.calls("/search.json")) == 1
    assert all(isinstance(r, ServiceRefusedError) for r in results)
    assert str(results[0]).startswith(
        "serpapi: HTTP 401: Invalid API key. Your API key should be here: https://serpapi.com/manage-api-key"
    )
    assert all("SERPAPI_API_KEY" in str(r) and KEY[:8] not in str(r) for r in results)


def test_a_rate_limit_is_not_a_refusal(server: FakeServer) -> None:
    server.queue("POST", "/search", Response(error_body("serper-429-rate-limited"), status=429))
    with pytest.raises(SourceError, match=r"serper: HTTP 429: Too many requests, please slow down\.") as caught:
        retrieve(SerperSource(base_url=server.url, retries=0), VITAMIN_D)
    assert not isinstance(caught.value, ServiceRefusedError)
    assert len(retrieve(SerperSource(base_url=server.url, retries=0), VITAMIN_D)) == 4
    assert len(server.calls("/search")) == 2


def test_refusals_expire() -> None:
    from factcheck.net import Refusals

    refusals = Refusals(ttl_s=0.05)
    refusals.accept(("serper", "u", "k"))
    refusals.remember(("serper", "u", "k"), "first")
    refusals.remember(("serper", "u", "k"), "second")
    assert refusals.reason(("serper", "u", "k")) == "first" and not refusals.accepted(("serper", "u", "k"))
    assert refusals.reason(("serper", "u", "other")) is None
    time.sleep(0.06)
    assert refusals.reason(("serper", "u", "k")) is None


# --- options, registration, helpers ----------------------------------------------------------


@pytest.mark.parametrize(
    "options",
    [{"top_k": 0}, {"max_queries": 0}, {"concurrency": 0}, {"timeout_s": 0}, {"base_url": "ftp://x"}, {"gl": ""}],
)
def test_bad_options_are_config_errors(options: dict[str, Any]) -> None:
    for source in (SerperSource(), SerpAPISource()):
        with pytest.raises(ConfigError):
            source.configure(**options)
    with pytest.raises(ConfigError):
        SerperSource(retries=-1)


def test_page_reading_options_default_off_and_are_checked() -> None:
    for source in (SerperSource(), SerpAPISource()):
        assert (source.read_pages, source.allow_hosts, source.page_bytes, source.page_timeout_s) == (
            0,
            (),
            2 * 1024 * 1024,
            10.0,
        )
        configured = source.configure(read_pages="3", allow_hosts="intranet.example, 127.0.0.1", page_timeout_s="5")
        assert (configured.read_pages, configured.allow_hosts, configured.page_timeout_s) == (
            3,
            ("intranet.example", "127.0.0.1"),
            5.0,
        )
        assert source.configure(allow_hosts=["10.0.0.5"]).allow_hosts == ("10.0.0.5",)
        for bad in (
            {"read_pages": -1},
            {"read_pages": 11},
            {"page_timeout_s": 0},
            {"page_bytes": 0},
            {"allow_hosts": ["http://10.0.0.5/"]},
        ):
            with pytest.raises(ConfigError):
                source.configure(**bad)
    # How long a page may take changes how it asks, not what it finds.
    assert "page_timeout_s" in SerperSource.transport_options and "read_pages" not in SerperSource.transport_options


def test_options_are_coerced_and_hold_no_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SERPER_API_KEY", KEY)
    source = SerperSource().configure(top_k="3", timeout_s="2.5", max_queries="1")
    assert (source.top_k, source.timeout_s, source.max_queries) == (3, 2.5, 1)
    assert KEY not in repr(source.options()) and KEY not in repr(source)


def test_both_sources_register() -> None:
    registered: list[Any] = []
    websearch.register_sources(registered.append)
    assert [s.name for s in registered] == ["serper", "serpapi"]


def test_redact_covers_encoded_and_truncated_keys() -> None:
    assert redact(f"a {KEY} b", KEY) == "a [redacted] b"
    assert redact("key=abcd%2Bef%2Fgh", "abcd+ef/gh") == "key=[redacted]"
    assert redact("cut at " + KEY[:10], KEY) == "cut at [redacted]"
    assert redact("nothing here", KEY) == "nothing here"


def test_an_unreadable_retry_after_falls_back_to_backoff() -> None:
    import httpx

    from factcheck.net import retry_after

    response = httpx.Response(429, headers={"Retry-After": "garbage"})
    assert retry_after(response, 0.25, 30.0) == 0.25
    assert retry_after(httpx.Response(429, headers={"Retry-After": "120"}), 0.25, 30.0) == 30.0


def test_redact_leaves_text_alone_for_a_key_too_short_to_be_real() -> None:
    assert redact("Name or service not known", "k") == "Name or service not known"


# ---- an unreachable host fails at once, named (issue 24, item 9) -----------------------------------


def closed_port() -> int:
    """A loopback port nothing listens on (bound, then closed)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def test_an_unreachable_host_fails_at_once_with_the_host_named_and_is_not_tried_again(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from factcheck.net import REFUSALS

    REFUSALS.clear()
    monkeypatch.setenv("SERPER_API_KEY", KEY)
    port = closed_port()
    source = SerperSource(base_url=f"http://127.0.0.1:{port}")
    recorder = UsageRecorder()
    with using(usage=recorder):
        started = time.monotonic()
        named = rf"serper: cannot reach 127\.0\.0\.1:{port} \(connection refused\)"
        with pytest.raises(ServiceRefusedError, match=named):
            asyncio.run(source.retrieve(Claim(id="c", text=EIFFEL_COMPLETED)))
        first = time.monotonic() - started
        # No retries with back-off (they took 1.75 s or more): one attempt, refused at once.
        assert first < 1.5
        assert recorder.search_calls == 1
        # Remembered: the next claim's search is not sent at all, and says why.
        with pytest.raises(ServiceRefusedError, match="not sent: unreachable a moment ago"):
            asyncio.run(source.retrieve(Claim(id="d", text=CURIE)))
        assert recorder.search_calls == 1
        assert any(f"127.0.0.1:{port}" in reason for reason in REFUSALS.met())
        REFUSALS.clear()


def test_the_serpapi_key_in_the_query_string_never_reaches_a_log(
    server: FakeServer, caplog: pytest.LogCaptureFixture
) -> None:
    import logging

    with caplog.at_level(logging.INFO, logger="httpx"):  # the level factcheck serve logs at
        retrieve(SerpAPISource(base_url=server.url), EIFFEL_HEIGHT)
    requests = [r.getMessage() for r in caplog.records if r.name == "httpx"]
    assert requests and all("api_key=[redacted]" in m for m in requests)
    assert KEY not in caplog.text


# --- --serpapi-url, as --serper-url (issue 40 item 16) --------------------------------------------------


def test_serpapi_url_points_the_web_agent_at_another_endpoint(
    server: FakeServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from click.testing import CliRunner

    from factcheck.cli import cli

    monkeypatch.delenv("SERPER_API_KEY")  # only SerpAPI's key: the paper profile's web agent uses SerpAPI
    server.route("GET", "/search.json", lambda request: Response(SERPAPI[COFFEE]))
    config = tmp_path / "factcheck.toml"
    config.write_text('[agents.web]\nsource = "serpapi"\nverifier = "lexical"\n')
    args = ["check", "Coffee consumption lowers the risk of type 2 diabetes.", "--config", str(config)]
    result = CliRunner().invoke(cli, [*args, "--serpapi-url", server.url, "--no-cache", "--format", "json"])
    assert result.exit_code == 0, result.output
    (request,) = server.calls("/search.json")
    assert request.query["api_key"] == [KEY] and request.query["engine"] == ["google"]
    web = next(j for j in json.loads(result.output)["claims"][0]["judgments"] if j["agent"] == "web")
    assert web["error"] is None and web["evidence"]
    assert {e["url"] for e in web["evidence"]} <= {r["link"] for r in SERPAPI[COFFEE]["organic_results"]}


def test_factcheck_serpapi_url_is_the_flag_for_every_checker_serve_builds(monkeypatch: pytest.MonkeyPatch) -> None:
    from factcheck.config import load_settings

    monkeypatch.delenv("SERPER_API_KEY", raising=False)
    monkeypatch.setenv("SERPAPI_API_KEY", "k")  # the web agent's source is chosen by the keys set
    env = {"SERPAPI_API_KEY": "k", "FACTCHECK_SERPAPI_URL": "http://127.0.0.1:9"}
    agents = {a.source: a.source_options for a in load_settings(None, env=env, profile="paper").resolved_agents()}
    assert agents["serpapi"]["base_url"] == "http://127.0.0.1:9"
