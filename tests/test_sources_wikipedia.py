"""The wikipedia source against a local fake MediaWiki serving recorded API answers (tests/data/mediawiki,
and the quirks of Wikimedia's servers in tests/data/quirks/wikipedia)."""

from __future__ import annotations

import asyncio
import json
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import AbstractContextManager, contextmanager, nullcontext
from datetime import datetime
from pathlib import Path
from typing import Any

import httpx
import pytest

import factcheck
from factcheck import Agent, Claim, ConfigError, Evidence, SourceError
from factcheck.build import build_checker
from factcheck.cache import Cache
from factcheck.context import using
from factcheck.errors import ServiceRefusedError
from factcheck.net import REFUSALS
from factcheck.pages import PASSAGE_CHARS
from factcheck.sources import mediawiki as mediawiki_module
from factcheck.sources import wikipedia as wikipedia_module
from factcheck.sources.wikipedia import WikipediaSource, section_url, trim_at_sentence, wiki_url
from factcheck.testing import ScriptedVerifier, StaticSource, registered
from factcheck.usage import UsageRecorder
from tests.fakes import FakeServer, InFlight, Request, Response

DATA = Path(__file__).resolve().parent / "data" / "mediawiki"
QUIRKS = Path(__file__).resolve().parent / "data" / "quirks" / "wikipedia"
API = "/w/api.php"
EIFFEL_URL = "https://en.wikipedia.org/wiki/Eiffel_Tower"
UA_ENV = "FACTCHECK_WIKIPEDIA_USER_AGENT"

# Which recorded search answer a query gets: the first keyword it contains wins.
SEARCHES = (
    ("gustave", "gustave-eiffel"),
    ("eiffel", "eiffel-tower"),
    ("curie", "marie-curie"),
    ("great wall", "great-wall-of-china"),
)


def fixture(name: str) -> Any:
    return json.loads((DATA / f"{name}.json").read_text(encoding="utf-8"))


def quirk(name: str) -> Any:
    return json.loads((QUIRKS / name).read_text(encoding="utf-8"))


def params(request: Request) -> dict[str, str]:
    return {key: values[-1] for key, values in request.query.items()}


def topic(search: str) -> str | None:
    return next((name for word, name in SEARCHES if word in search.lower()), None)


# Section headings as TextExtracts writes them with explaintext, by exsectionformat (its default: wiki).
SECTION_FORMATS: dict[str, Callable[[int, str], str]] = {
    "wiki": lambda level, heading: f"{'=' * level} {heading} {'=' * level}",
    "plain": lambda level, heading: heading,
}
# TextExtracts' warning when it gives a whole page to one page only (apiwarn-textextracts-limit).
EXLIMIT_WARNING = '"exlimit" was too large for a whole article extracts request, lowered to 1.'


def whole_text(title: str, lead: str, query: dict[str, str]) -> str:
    """What TextExtracts sends for a whole page with explaintext: the lead, then each section's heading after
    two blank lines (the white space before an HTML heading became "\\n\\n" and a marker, the marker
    "\\n== History ==") and the section's paragraphs, one a line. Sections: tests/data/mediawiki/pages.json."""
    heading_line = SECTION_FORMATS[query.get("exsectionformat", "wiki")]
    text = lead
    for level, heading, body in fixture("pages")["pages"].get(title, []):
        text += f"\n\n\n{heading_line(level, heading)}" + (f"\n{body}" if body else "")
    return text


def generator_answer(data: dict[str, Any], query: dict[str, str]) -> dict[str, Any]:
    """What api.php does with a recorded generator answer: keep the top ``gsrlimit`` hits, and give
    extracts to at most ``exlimit`` pages (TextExtracts' limit), in the order the pages are listed. Without
    ``exintro`` an extract is the whole page, which TextExtracts gives to one page a request only: for
    more pages it lowers exlimit to 1, warns, and sends the others with no extract."""
    hits = [p for p in data.get("query", {}).get("pages", []) if p.get("index", 0) <= int(query.get("gsrlimit", "10"))]
    whole = "exintro" not in query
    exlimit = int(query.get("exlimit", "20"))
    lowered = whole and exlimit > 1 and len(hits) > 1
    exlimit = 1 if lowered else exlimit
    for position, page in enumerate(hits):
        if position >= exlimit:
            page.pop("extract", None)
        elif whole and "extract" in page:
            page["extract"] = whole_text(page["title"], page["extract"], query)
        if "revisions" in query.get("prop", "").split("|") and "lastrevid" in page:
            # prop=revisions with no rvlimit lists each page's latest revision (the recorded lastrevid; the
            # recording kept no edit time, so the page's "touched" time stands in for it).
            latest = {"revid": page["lastrevid"], "parentid": page["lastrevid"] - 1, "timestamp": page["touched"]}
            page["revisions"] = [latest]
    if not hits:
        return {"batchcomplete": True}  # a search that finds nothing: no "query" at all
    answer = {**data, "query": {**data["query"], "pages": hits}}
    if len(hits) > exlimit:  # the extracts go on in the next request; the search's own continuation waits
        answer.pop("batchcomplete", None)
        answer["continue"] = {"excontinue": exlimit, "continue": "||info|revisions"}
    if lowered:
        answer["warnings"] = {"extracts": {"warnings": EXLIMIT_WARNING}}
    return answer


def extracts_answer(query: dict[str, str], leads: Mapping[str, str]) -> dict[str, Any]:
    """``prop=extracts&titles=T``: the page's lead (``exintro``) or its whole text, for any page of the
    recorded generator answers; another title as ``missing``."""
    title = query["titles"]
    recorded = {
        p["title"]: p
        for path in sorted(DATA.glob("generator-*.json"))
        for p in fixture(path.stem).get("query", {}).get("pages", [])
    }
    page = recorded.get(title)
    if page is None:
        return {"batchcomplete": True, "query": {"pages": [{"ns": 0, "title": title, "missing": True}]}}
    lead = leads.get(title, page["extract"])
    extract = lead if "exintro" in query else whole_text(title, lead, query)
    return {
        "batchcomplete": True,
        "query": {"pages": [{"pageid": page["pageid"], "ns": 0, "title": title, "extract": extract}]},
    }


def revisions_answer(query: dict[str, str]) -> dict[str, Any]:
    """``prop=revisions&titles=T&rvlimit=1&rvdir=older&rvstart=TS``: the revision current at TS; a page with
    no revision by then is listed without ``revisions``, an unknown title as ``missing``."""
    title = query["titles"]
    page = fixture("history-eiffel-tower")["pages"].get(title)
    if page is None:
        return {"batchcomplete": True, "query": {"pages": [{"ns": 0, "title": title, "missing": True}]}}
    older = [r for r in page["revisions"] if r["timestamp"] <= query["rvstart"]]
    listed: dict[str, Any] = {"pageid": page["pageid"], "ns": 0, "title": title}
    if older:
        listed["revisions"] = [{k: v for k, v in older[-1].items() if k not in {"html", "full"}}]
    return {"batchcomplete": True, "query": {"pages": [listed]}}


def rendered(revision: dict[str, Any], query: dict[str, str], toc: str) -> str:
    """A revision as ``action=parse&prop=text`` renders it: its lead for ``section=0``, else the whole page,
    its table of contents before the first heading unless ``disabletoc`` is sent."""
    if query.get("section") == "0" or "full" not in revision:
        return str(revision["html"])
    html = str(revision["full"])
    first = html.find('<div class="mw-heading')
    if "disabletoc" in query or first < 0:
        return html
    return html[:first] + toc + html[first:]


def parse_answer(query: dict[str, str]) -> dict[str, Any]:
    """``action=parse&oldid=N&prop=text`` (``section=0``, or the whole revision): the revision rendered."""
    history = fixture("history-eiffel-tower")
    for title, page in history["pages"].items():
        for revision in page["revisions"]:
            if str(revision["revid"]) == query["oldid"]:
                parsed = {"title": title, "pageid": page["pageid"], "revid": revision["revid"]}
                return {"parse": {**parsed, "text": rendered(revision, query, history["toc"])}}
    return {"error": {"code": "nosuchrevid", "info": f"There is no revision with ID {query['oldid']}."}}


def mediawiki_with(leads: Mapping[str, str] | None = None) -> Callable[[Request], Response]:
    """A fake api.php answering generator=search (and list=search) from the recorded answers, whole pages
    (no exintro) and prop=extracts&titles=... with the sections written in tests/data/mediawiki/pages.json,
    and old revisions (prop=revisions, action=parse) from a written history. ``leads``: pages (by title)
    whose lead extract is another."""
    replaced = dict(leads or {})

    def answer(request: Request) -> Response:
        query = params(request)
        if query.get("action") == "parse":
            return Response(parse_answer(query))
        if query.get("prop") == "revisions" and "titles" in query:
            return Response(revisions_answer(query))
        if query.get("prop") == "extracts" and "titles" in query:
            return Response(extracts_answer(query, replaced))
        if query.get("generator") == "search":
            data = fixture(f"generator-{topic(query.get('gsrsearch', '')) or 'no-results'}")
            for page in data.get("query", {}).get("pages", []):
                page["extract"] = replaced.get(page["title"], page["extract"])
            return Response(generator_answer(data, query))
        if query.get("list") == "search":
            data = fixture(f"search-{topic(query.get('srsearch', '')) or 'no-results'}")
            data["query"]["search"] = data["query"]["search"][: int(query.get("srlimit", "10"))]
            return Response(data)
        return Response(fixture("error-nosrsearch"))

    return answer


# The fake api.php with the recorded pages as they are.
mediawiki = mediawiki_with()


@pytest.fixture(scope="module")
def running_server() -> Iterator[FakeServer]:
    # One server for the module: stopping one takes up to half a second (its poll interval).
    with FakeServer() as fake:
        yield fake


@pytest.fixture(autouse=True)
def clean_environment(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """No User-Agent from the environment, and no refusal remembered from another test."""
    monkeypatch.delenv(UA_ENV, raising=False)
    REFUSALS.clear()
    mediawiki_module.LAGGING.clear()
    yield
    REFUSALS.clear()
    mediawiki_module.LAGGING.clear()


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
    monkeypatch.setattr(mediawiki_module, "BACKOFF_S", 0.01)


def source_for(server: FakeServer, **options: Any) -> WikipediaSource:
    return WikipediaSource(api_url=server.url + API, **options)


def retrieve(source: WikipediaSource, text: str, *queries: str) -> list[Evidence]:
    return asyncio.run(source.retrieve(Claim("c1", text, queries=queries)))


def leads(evidence: list[Evidence]) -> list[Evidence]:
    """The lead sections among ``evidence`` (a section's passage is titled "Page § Section")."""
    return [e for e in evidence if " § " not in e.title]


def searches(server: FakeServer) -> list[dict[str, str]]:
    return [params(r) for r in server.calls(API) if params(r).get("generator") == "search"]


# --- the happy path -----------------------------------------------------------------------


def test_with_no_sections_one_request_gives_the_lead_of_the_top_page_as_before(server: FakeServer) -> None:
    [evidence] = retrieve(source_for(server, sections=0), "The Eiffel Tower is 330 metres tall.")
    assert evidence.source == "wikipedia"
    assert evidence.title == "Eiffel Tower"
    assert evidence.url == EIFFEL_URL
    assert evidence.text.startswith("The Eiffel Tower ( EYE-fəl; French: Tour Eiffel")
    assert len(evidence.text) <= 1500 and evidence.text.endswith(".")
    [recorded] = [p for p in fixture("generator-eiffel-tower")["query"]["pages"] if p["title"] == "Eiffel Tower"]
    assert recorded["extract"].startswith(evidence.text)
    assert evidence.retrieved_at is not None
    assert datetime.fromisoformat(evidence.retrieved_at).utcoffset() is not None
    assert evidence.published_at == recorded["touched"]  # the date of the revision the lead was read from

    [request] = server.calls(API)  # search and lead sections in one request
    assert params(request) == {
        "action": "query",
        "format": "json",
        "formatversion": "2",
        "generator": "search",
        "gsrsearch": "The Eiffel Tower is 330 metres tall.",
        "gsrlimit": "1",
        "prop": "extracts|info|revisions",
        "rvprop": "ids|timestamp",
        "exintro": "1",
        "explaintext": "1",
        "exlimit": "1",
        "inprop": "url",
        "redirects": "1",
        "maxlag": "5",
    }


def test_the_default_user_agent_names_the_software_and_asks_for_a_contact(server: FakeServer) -> None:
    retrieve(source_for(server), "Eiffel Tower")
    agent = server.calls(API)[0].headers["User-Agent"]
    assert agent.startswith("factcheck-agents/")
    assert UA_ENV in agent and "contact" in agent
    assert "://" not in agent and "@" not in agent  # no contact that is not the operator's


def test_the_user_agent_comes_from_the_option_else_the_environment(
    server: FakeServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(UA_ENV, "env-checker/2.0 (ops@example.org)")
    retrieve(source_for(server), "Eiffel Tower")
    retrieve(source_for(server, user_agent="toml-checker/1.0 (me@example.org)"), "Marie Curie")
    agents = [r.headers["User-Agent"] for r in server.calls(API)]
    assert agents == ["env-checker/2.0 (ops@example.org)", "toml-checker/1.0 (me@example.org)"]
    configured = WikipediaSource().configure(user_agent="cli-checker/1.0 (me@example.org)")
    assert configured.user_agent_header() == "cli-checker/1.0 (me@example.org)"


def test_a_user_agent_that_cannot_be_a_header_stops_the_check(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(UA_ENV, "two\nlines")
    with pytest.raises(ConfigError, match=UA_ENV):
        asyncio.run(WikipediaSource().prepare())


def test_a_page_found_by_two_queries_is_returned_once(server: FakeServer) -> None:
    evidence = retrieve(source_for(server), "claim", "Eiffel Tower height", "Who designed the Eiffel Tower?")
    assert [e.title for e in leads(evidence)] == ["Eiffel Tower"]
    assert sorted(q["gsrsearch"] for q in searches(server)) == ["Eiffel Tower height", "Who designed the Eiffel Tower?"]
    assert len(server.calls(API)) == 2


def test_pages_come_in_search_rank_order_not_in_listed_order(server: FakeServer) -> None:
    # The API lists Eiffel Tower (page id 9232) before Gustave Eiffel (168302); the search ranked them the other way.
    evidence = retrieve(source_for(server, pages=2), "Gustave Eiffel engineer")
    assert [e.title for e in leads(evidence)] == ["Gustave Eiffel", "Eiffel Tower"]


def test_top_pages_in_query_then_rank_order(server: FakeServer) -> None:
    source = source_for(server, pages=2)
    evidence = retrieve(source, "claim", "Eiffel Tower", "Gustave Eiffel engineer", "Marie Curie")
    # Query 2 ranks Gustave Eiffel, Eiffel Tower: both already found; max_queries=2 drops query 3.
    assert [e.title for e in leads(evidence)] == ["Eiffel Tower", "Gustave Eiffel"]
    assert leads(evidence)[1].url == "https://en.wikipedia.org/wiki/Gustave_Eiffel"
    assert len(searches(server)) == 2 and all(q["gsrlimit"] == q["exlimit"] == "2" for q in searches(server))


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
    assert len(server.calls(API)) == 1


def test_a_redirect_carries_the_rank_of_its_target(server: FakeServer) -> None:
    server.queue("GET", API, Response(quirk("generator-redirect.json")))
    evidence = retrieve(source_for(server, pages=2), "Tour Eiffel")
    # Eiffel Tower is listed first but has no index: the redirect "Tour Eiffel" (search hit 1) carries it.
    assert [(e.title, e.url) for e in leads(evidence)] == [
        ("Eiffel Tower", EIFFEL_URL),
        ("Paris", "https://en.wikipedia.org/wiki/Paris"),
    ]


def test_lead_is_trimmed_at_a_sentence_end(server: FakeServer) -> None:
    evidence, *_ = retrieve(source_for(server, max_chars=300), "Eiffel Tower")
    assert evidence.text == (
        "The Eiffel Tower ( EYE-fəl; French: Tour Eiffel [tuʁ ɛfɛl] ) is a wrought-iron lattice tower on the Champ de "
        "Mars in Paris, France. It is named after the engineer Gustave Eiffel, whose company designed and built the "
        "tower from 1887 to 1889."
    )


def test_a_wiki_without_textextracts_falls_back_to_snippets_and_the_article_path(server: FakeServer) -> None:
    server.queue("GET", API, Response(quirk("generator-without-textextracts.json")))
    [evidence] = retrieve(source_for(server, language="fr"), "Eiffel Tower")
    assert evidence.url == "https://fr.wikipedia.org/wiki/Eiffel_Tower"  # no inprop=url either
    assert evidence.text.startswith("The Eiffel Tower ( EYE-fəl; French: Tour Eiffel [tuʁ ɛfɛl] ) is a wrought-iron")
    assert "<span" not in evidence.text
    first, second = (params(r) for r in server.calls(API))
    assert first["generator"] == "search"
    assert (second["list"], second["srsearch"], second["maxlag"]) == ("search", "Eiffel Tower", "5")


def test_html_in_a_lead_extract_is_stripped_as_snippets_are(server: FakeServer) -> None:
    # A wiki that ignores explaintext (an older TextExtracts, a mirror) sends the lead as HTML.
    data = fixture("generator-eiffel-tower")
    html = '<p class="mw-empty-elt"></p><p>The <b>Eiffel Tower</b> is a <i>wrought-iron</i> tower'
    html += " &amp; a<br/>landmark.</p>"
    for page in data["query"]["pages"]:
        page["extract"] = html
    server.queue("GET", API, Response(data))
    [evidence] = retrieve(source_for(server), "Eiffel Tower")
    assert evidence.text == "The Eiffel Tower is a wrought-iron tower & a landmark."
    # a plain extract is left as it is: its line breaks still end sentences, "x < 5" is no tag
    assert mediawiki_module.plain_extract(" Tall.\nx < 5 and a <= b. ") == "Tall.\nx < 5 and a <= b."


def test_helpers() -> None:
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


# --- sections beyond the lead (issue 26) ------------------------------------------------------

DESIGNERS = (
    "The design of the Eiffel Tower is attributed to Maurice Koechlin and Émile Nouguier, two senior engineers "
    "working for the Compagnie des Établissements Eiffel. It was envisioned after discussion about a suitable "
    "centrepiece for the proposed 1889 Exposition Universelle, a world's fair to celebrate the centennial of the "
    "French Revolution."
)


def extract_requests(server: FakeServer) -> list[dict[str, str]]:
    return [params(r) for r in server.calls(API) if params(r).get("prop") == "extracts"]


def test_a_section_that_bears_on_the_claim_follows_the_lead(server: FakeServer) -> None:
    claim = "Maurice Koechlin and Émile Nouguier designed the Eiffel Tower."
    lead, section = retrieve(source_for(server, sections=1), claim, "Who designed the Eiffel Tower?")
    assert "Koechlin" not in lead.text and lead.title == "Eiffel Tower"  # the lead does not say it
    # BM25 chose History's passage over Materials' ("... of the Eiffel Tower weighs 7,300 tonnes ...").
    assert section.text == DESIGNERS and len(section.text) <= PASSAGE_CHARS
    assert (section.title, section.url) == ("Eiffel Tower § History", EIFFEL_URL + "#History")
    assert (section.source, section.published_at, section.retrieved_at) == (
        lead.source,
        lead.published_at,
        lead.retrieved_at,
    )
    [request] = server.calls(API)  # one page a query: the whole page comes with the search
    query = params(request)
    assert "exintro" not in query
    assert (query["explaintext"], query["exsectionformat"], query["exlimit"], query["gsrlimit"]) == (
        "1",
        "wiki",
        "1",
        "1",
    )


def test_appendices_and_empty_sections_are_never_passages(server: FakeServer) -> None:
    # "References" says "Who designed the Eiffel Tower ... Koechlin's and Nouguier's words": a citation, not the page.
    evidence = retrieve(
        source_for(server, sections=10), "Maurice Koechlin and Émile Nouguier designed the Eiffel Tower."
    )
    titles = [e.title for e in evidence]
    assert titles[:2] == ["Eiffel Tower", "Eiffel Tower § History"]
    assert "Eiffel Tower § Materials" in titles  # a subsection is titled with its own heading
    assert not {"Eiffel Tower § References", "Eiffel Tower § See also", "Eiffel Tower § Design"} & set(titles)
    assert len(evidence) == len(set(e.text for e in evidence))


def test_two_pages_each_have_their_whole_text_read_one_page_a_request(server: FakeServer, tmp_path: Path) -> None:
    source = source_for(server, pages=2, sections=1)
    cache, usage, again = Cache(tmp_path / "c.sqlite"), UsageRecorder(), UsageRecorder()
    with in_context(cache, usage):
        evidence = retrieve(source, "Gustave Eiffel was born in Dijon.", "Gustave Eiffel engineer")
    with in_context(cache, again):
        assert retrieve(source, "Gustave Eiffel was born in Dijon.", "Gustave Eiffel engineer") == evidence
    cache.close()
    titles = [e.title for e in evidence]
    assert titles[:3] == ["Gustave Eiffel", "Gustave Eiffel § Early life", "Eiffel Tower"]
    assert len(titles) == 4 and titles[3].startswith("Eiffel Tower § ")
    assert evidence[1].text.startswith("Eiffel was born in Dijon")
    assert evidence[1].url == "https://en.wikipedia.org/wiki/Gustave_Eiffel#Early_life"
    # TextExtracts gives a whole page to one page a request: the search asks for both leads, then one
    # request a page for its whole text.
    [search] = searches(server)
    assert (search["exintro"], search["exlimit"]) == ("1", "2")
    wholes = extract_requests(server)
    assert sorted(q["titles"] for q in wholes) == ["Eiffel Tower", "Gustave Eiffel"]
    assert all("exintro" not in q and q["exsectionformat"] == "wiki" and q["maxlag"] == "5" for q in wholes)
    assert usage.search_calls == 3 and dict(usage.cache_hits) == {}  # each request counted, as the search is
    assert again.search_calls == 0 and dict(again.cache_hits) == {"wikipedia": 3}


def test_the_fake_gives_a_whole_page_to_one_page_a_request_as_textextracts_does(server: FakeServer) -> None:
    query = {"action": "query", "format": "json", "formatversion": "2", "generator": "search"}
    query |= {"gsrsearch": "Gustave Eiffel", "gsrlimit": "2", "prop": "extracts", "explaintext": "1", "exlimit": "2"}
    answer = httpx.get(server.url + API, params=query).json()
    with_text = [p["title"] for p in answer["query"]["pages"] if "extract" in p]
    assert with_text == ["Eiffel Tower"]  # the first listed, not the best hit
    assert answer["continue"]["excontinue"] == 1 and "lowered to 1" in answer["warnings"]["extracts"]["warnings"]


def test_a_whole_text_that_cannot_be_read_leaves_the_lead_and_a_note(server: FakeServer, fast_retries: None) -> None:
    broken = b"<!DOCTYPE html><html><title>Wikimedia Error</title><body>Our servers are currently under maintenance"

    def failing(request: Request) -> Response:
        if params(request).get("titles") == "Eiffel Tower" and params(request).get("prop") == "extracts":
            return Response(raw=broken, status=500, headers={"Content-Type": "text/html"})
        return mediawiki(request)

    server.route("GET", API, failing)
    recorder = UsageRecorder()
    with in_context(None, recorder):
        evidence = retrieve(
            source_for(server, pages=2, sections=1), "Gustave Eiffel was born in Dijon.", "Gustave Eiffel engineer"
        )
    assert [e.title for e in evidence] == ["Gustave Eiffel", "Gustave Eiffel § Early life", "Eiffel Tower"]
    assert evidence[2].text.startswith("The Eiffel Tower ( EYE-fəl")
    [note] = [n for n in recorder.notes if "sections of 'Eiffel Tower' not read" in n]
    assert "500" in note and note.endswith("its lead stands")
    assert len([q for q in extract_requests(server) if q["titles"] == "Eiffel Tower"]) == mediawiki_module.RETRIES + 1


def test_as_of_a_date_the_old_revision_is_read_whole(server: FakeServer) -> None:
    claim = "The Eiffel Tower was built for the 1889 Exposition Universelle."
    lead, section = retrieve(source_for(server, as_of="2012-06-30", sections=1), claim)
    permalink = f"{server.url}/w/index.php?title=Eiffel_Tower&oldid=338421190"
    assert lead.url == permalink and lead.text.endswith("about the same height as an 81-storey building.")
    assert lead.text.startswith("The Eiffel Tower (Tour Eiffel) is a 19th-century iron lattice tower")
    assert (section.title, section.url, section.published_at) == (
        "Eiffel Tower § History",
        permalink + "#History",
        "2010-01-17T18:02:51Z",
    )
    assert section.text.startswith("The tower was built as the entrance arch to the 1889 Exposition Universelle")
    assert "[3]" not in section.text  # the footnote mark is left out, as in the lead
    search, lookup, parse = [params(r) for r in server.calls(API)]
    assert search["generator"] == "search" and "exintro" not in search
    assert lookup["rvstart"] == "2012-06-30T23:59:59Z"
    assert parse["action"] == "parse" and parse["oldid"] == "338421190" and "section" not in parse
    assert parse["disabletoc"] == "1"  # the whole revision, with no table of contents


def test_as_of_a_revision_that_cannot_be_rendered_whole_keeps_its_lead(server: FakeServer) -> None:
    def no_whole_page(request: Request) -> Response:
        if params(request).get("action") == "parse" and "section" not in params(request):
            return Response({"error": {"code": "parseerror", "info": "The page could not be rendered."}})
        return mediawiki(request)

    server.route("GET", API, no_whole_page)
    recorder = UsageRecorder()
    with in_context(None, recorder):
        [lead] = retrieve(source_for(server, as_of="2012-06-30"), "The Eiffel Tower was built for the 1889 fair.")
    assert lead.published_at == "2010-01-17T18:02:51Z" and lead.text.endswith("an 81-storey building.")
    assert any("(revision 338421190) not read: wikipedia: API error parseerror" in n for n in recorder.notes)
    assert [params(r).get("section") for r in server.calls(API) if params(r).get("action") == "parse"] == [None, "0"]


def test_sections_of_splits_a_page_at_its_headings() -> None:
    text = (
        "Lead one.\nLead two.\n\n\n== History ==\nIt began.\n\n\n=== Origin ===\nFrom afar.\n\n\n"
        "== Empty ==\n\n\n=== Inner ===\nInside.\n\n\n== References ==\nA book. 1999.\n\n\n=== Citations ===\n"
        "A paper.\n\n\n== Later ==\nThen."
    )
    lead, sections = mediawiki_module.sections_of(text)
    assert lead == "Lead one.\nLead two."
    assert [(s["heading"], s["text"]) for s in sections] == [
        ("History", "It began."),
        ("Origin", "From afar."),
        ("Inner", "Inside."),
        ("Later", "Then."),
    ]
    assert mediawiki_module.sections_of("Only a lead.") == ("Only a lead.", [])
    # An HTML extract (a wiki that ignores explaintext): cut at its first heading.
    html = "<p>The <b>tower</b>.</p><h2><span id='History'>History</span></h2><p>Built &amp; done.</p>"
    assert mediawiki_module.whole_extract(html) == ("The tower.", [{"heading": "History", "text": "Built & done."}])
    assert section_url(EIFFEL_URL, "Early life (1832\u20131855)") == EIFFEL_URL + "#Early_life_(1832%E2%80%931855)"


# --- etiquette: one request at a time, maxlag, a refused User-Agent -----------------------


async def retrieve_many(source: WikipediaSource, n: int) -> list[Any]:
    claims = [Claim(f"c{i}", f"claim {i}", queries=(f"Eiffel Tower {i}", f"Marie Curie {i}")) for i in range(n)]
    return await asyncio.gather(*(source.retrieve(c) for c in claims), return_exceptions=True)


@pytest.mark.parametrize(("options", "most"), [({}, 1), ({"concurrency": 3}, 3)])
def test_one_request_at_a_time_per_host_by_default(server: FakeServer, options: dict[str, Any], most: int) -> None:
    counter = InFlight(mediawiki, delay_s=0.05)
    server.route("GET", API, counter)
    results = asyncio.run(retrieve_many(source_for(server, **options), 4))
    assert all(isinstance(r, list) and len(leads(r)) == 2 for r in results)
    assert len(server.calls(API)) == 8 and counter.most == most


def test_maxlag_is_honoured_after_the_servers_delay(server: FakeServer) -> None:
    server.queue("GET", API, Response(quirk("maxlag.json"), headers={"Retry-After": "1", "X-Database-Lag": "6"}))
    start = time.monotonic()
    evidence, *_ = retrieve(source_for(server), "Eiffel Tower")
    assert evidence.title == "Eiffel Tower"
    assert len(server.calls(API)) == 2 and time.monotonic() - start >= 0.9


def test_lasting_lag_is_a_source_error(server: FakeServer) -> None:
    lagged = Response(quirk("maxlag.json"), headers={"Retry-After": "0"})
    server.queue("GET", API, *[lagged] * (mediawiki_module.MAXLAG_RETRIES + 1))
    with pytest.raises(SourceError, match=r"lags \(maxlag\).*Waiting for 10\.64\.48\.35: 6 seconds lagged"):
        retrieve(source_for(server), "Eiffel Tower")
    assert len(server.calls(API)) == mediawiki_module.MAXLAG_RETRIES + 1


def test_a_wiki_that_never_stops_lagging_is_given_up_and_the_other_agents_answer(
    server: FakeServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(mediawiki_module, "MAXLAG_WAIT_S", 0.2)  # the cap on the server's 30 s (5 s in use)
    server.route("GET", API, lambda request: Response(quirk("maxlag.json"), headers={"Retry-After": "30"}))
    agents = [
        Agent("wikipedia", source_for(server, max_queries=2), ScriptedVerifier()),
        Agent("other", StaticSource(passages=("The Eiffel Tower is in Paris.",)), ScriptedVerifier()),
    ]
    checker = build_checker(agents=agents, cache={"enabled": False}, agent_timeout_s=20)
    claim = Claim("c1", "The Eiffel Tower is in Paris.", queries=("Eiffel Tower", "Eiffel Tower Paris"))
    started = time.monotonic()
    result = checker.check("The Eiffel Tower is in Paris.", [claim])
    seconds = time.monotonic() - started
    lagging, other = result.claims[0].judgments
    assert seconds < 10  # not the agent time-out (20 s), nor 30 s per retry
    assert lagging.abstained and "lags (maxlag): gave up after 1 retry of at most 0.2s" in (lagging.error or "")
    assert other.factuality is True
    assert sum("lags (maxlag)" in note for note in result.usage.notes) == 1
    # the first query: one try and MAXLAG_RETRIES retries; the second, sent while the host lags: once, no wait
    assert len(server.calls(API)) == mediawiki_module.MAXLAG_RETRIES + 2


def test_a_refused_user_agent_names_the_setting_and_is_not_sent_again(server: FakeServer) -> None:
    body = (QUIRKS / "403-user-agent.txt").read_bytes()
    server.route("GET", API, lambda r: Response(raw=body, status=403, headers={"Content-Type": "text/plain"}))
    results = asyncio.run(retrieve_many(source_for(server), 3))
    assert len(server.calls(API)) == 1
    for error in results:
        assert isinstance(error, SourceError) and isinstance(error, ServiceRefusedError)
        message = str(error)
        assert "refused the User-Agent 'factcheck-agents/" in message
        assert "Please set a user-agent and respect our robot policy" in message  # Wikimedia's own words
        assert "user_agent" in message and UA_ENV in message
    # Another User-Agent is another request: the operator fixed it.
    server.route("GET", API, mediawiki)
    assert len(leads(retrieve(source_for(server, user_agent="fixed/1.0 (me@example.org)"), "Eiffel Tower"))) == 1


def test_another_403_is_an_ordinary_error(server: FakeServer) -> None:
    server.queue("GET", API, Response({"error": {"code": "readapidenied", "info": "You need read permission."}}, 403))
    with pytest.raises(SourceError, match=r"HTTP 403: You need read permission\.") as caught:
        retrieve(source_for(server), "Eiffel Tower")
    assert not isinstance(caught.value, ServiceRefusedError)
    assert len(leads(retrieve(source_for(server), "Eiffel Tower"))) == 1


# --- failures and retries -----------------------------------------------------------------


def test_rate_limit_is_retried_after_the_servers_delay(server: FakeServer) -> None:
    times: list[float] = []
    lock = threading.Lock()

    def limited(request: Request) -> Response:
        if params(request).get("generator") == "search":
            with lock:
                times.append(time.monotonic())
                if len(times) == 1:
                    return Response({"error": "rate limited"}, status=429, headers={"Retry-After": "1"})
        return mediawiki(request)

    server.route("GET", API, limited)
    evidence, *_ = retrieve(source_for(server), "Eiffel Tower")
    assert evidence.title == "Eiffel Tower"
    assert len(times) == 2 and times[1] - times[0] >= 0.9


def test_server_error_is_retried(server: FakeServer, fast_retries: None) -> None:
    server.queue("GET", API, Response({"error": "upstream"}, status=500))
    evidence, *_ = retrieve(source_for(server), "Eiffel Tower")
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
    slow = Response(fixture("generator-eiffel-tower"), delay_s=1.0)
    server.queue("GET", API, *[slow] * (mediawiki_module.RETRIES + 1))
    start = time.monotonic()
    with pytest.raises(SourceError, match=r"timed out after 0\.3s"):
        retrieve(source_for(server, timeout_s=0.3), "Eiffel Tower")
    assert time.monotonic() - start < 3.0
    assert len(server.calls(API)) == mediawiki_module.RETRIES + 1


def test_one_failed_query_does_not_lose_the_others(server: FakeServer) -> None:
    def half_broken(request: Request) -> Response:
        if "broken" in params(request).get("gsrsearch", ""):
            return Response({"error": "bad request"}, status=400)
        return mediawiki(request)

    server.route("GET", API, half_broken)
    evidence = retrieve(source_for(server), "claim", "broken query", "Marie Curie")
    assert [e.title for e in evidence] == ["Marie Curie"]


# --- cache and usage ----------------------------------------------------------------------


@contextmanager
def in_context(cache: Cache | None, recorder: UsageRecorder) -> Iterator[None]:
    """Make ``cache`` and ``recorder`` the current ones, as a check does."""
    with using(cache=cache, usage=recorder):
        yield


def test_real_requests_count_as_search_calls(server: FakeServer) -> None:
    recorder = UsageRecorder()
    with in_context(None, recorder):
        retrieve(source_for(server), "claim", "Eiffel Tower height", "Who designed the Eiffel Tower?")
    assert recorder.search_calls == 2  # one request per query: search and lead sections together
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
    assert len(server.requests) == requests == 1
    assert first_usage.search_calls == 1 and dict(first_usage.cache_hits) == {}
    assert second_usage.search_calls == 0 and dict(second_usage.cache_hits) == {"wikipedia": 1}


def test_feeds_a_check(server: FakeServer, tmp_path: Path) -> None:
    checker = build_checker(agents=[Agent("wikipedia", source_for(server), ScriptedVerifier())])
    claims = [Claim("c1", "The Eiffel Tower is in Paris."), Claim("c2", "Zorblax quintuple fnord.")]
    cache = Cache(tmp_path / "c.sqlite")
    with using(cache=cache):
        verdict = checker.check("The Eiffel Tower is in Paris. Zorblax quintuple fnord.", claims)
        again = checker.check("The Eiffel Tower is in Paris. Zorblax quintuple fnord.", claims)
        cache.close()
    found, nothing = verdict.claims
    assert found.judgments[0].factuality is True
    assert found.judgments[0].evidence[0].url == EIFFEL_URL
    assert nothing.judgments[0].abstained and not nothing.verified  # no evidence: the verifier abstains
    assert verdict.usage.search_calls == 2  # one request per claim
    assert again.usage.search_calls == 0 and again.usage.cache_hits == {"wikipedia": 2}


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
        {"pages": 21},  # TextExtracts gives at most 20 lead sections a request
        {"pages": True},
        {"max_queries": 0},
        {"max_chars": 0},
        {"sections": -1},
        {"timeout_s": 0},
        {"timeout_s": -1.0},
        {"concurrency": 0},
        {"user_agent": ""},
        {"user_agent": "my-checker/1.0\r\nX-Injected: 1"},
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
    assert WikipediaSource().configure(user_agent="me/1.0 (me@example.org)").user_agent == "me/1.0 (me@example.org)"
    assert WikipediaSource().concurrency == 1  # Wikimedia asks for one request at a time


def test_registers_as_the_wikipedia_source() -> None:
    already = "wikipedia" in factcheck.get_sources()
    context: AbstractContextManager[None] = nullcontext() if already else registered(wikipedia_module)
    with context:
        assert isinstance(factcheck.get_sources()["wikipedia"], WikipediaSource)


# --- as of a date (issue 18) --------------------------------------------------------------------


def test_as_of_a_date_each_page_is_read_as_it_stood_then(server: FakeServer) -> None:
    [evidence] = retrieve(source_for(server, as_of="2012-06-30", sections=0), "The Eiffel Tower is 324 metres tall.")
    assert evidence.title == "Eiffel Tower"
    assert evidence.published_at == "2010-01-17T18:02:51Z"  # the revision current on 2012-06-30
    assert evidence.url == f"{server.url}/w/index.php?title=Eiffel_Tower&oldid=338421190"
    # The lead paragraphs only: no hidden short description, hatnote style, infobox, footnote marks or headings.
    assert evidence.text == (
        "The Eiffel Tower (Tour Eiffel) is a 19th-century iron lattice tower located on the Champ de Mars in Paris "
        "that has become both a global icon of France and one of the most recognizable structures in the world. "
        "The tower, which is the tallest building in Paris, is the single most visited paid monument in the world.\n"
        "The tower stands 324 metres (1,063 ft) tall, about the same height as an 81-storey building."
    )
    lookup, parse = [params(r) for r in server.calls(API)][1:]
    assert lookup["rvstart"] == "2012-06-30T23:59:59Z" and lookup["rvdir"] == "older" and lookup["rvlimit"] == "1"
    assert lookup["titles"] == "Eiffel Tower"
    assert parse["action"] == "parse" and parse["oldid"] == "338421190" and parse["section"] == "0"


def test_an_earlier_date_reads_an_earlier_revision_and_before_the_page_there_is_nothing(server: FakeServer) -> None:
    [old] = retrieve(source_for(server, as_of="2005-01-01"), "The Eiffel Tower is 300 metres tall.")
    assert old.published_at == "2004-06-14T09:12:44Z" and "oldid=4166311" in (old.url or "")
    assert old.text.endswith("The tower is 300 metres tall without its antenna.")
    assert "[1]" not in old.text and "Height" not in old.text
    assert retrieve(source_for(server, as_of="2001-01-01"), "The Eiffel Tower is 300 metres tall.") == []


def test_old_revisions_are_read_once_then_from_the_cache(server: FakeServer, tmp_path: Path) -> None:
    source = source_for(server, as_of="2012-06-30")
    cache = Cache(tmp_path / "c.sqlite")
    with in_context(cache, UsageRecorder()):
        first = retrieve(source, "The Eiffel Tower is 324 metres tall.")
    with in_context(cache, UsageRecorder()):
        second = retrieve(source, "The Eiffel Tower is 324 metres tall.")
    cache.close()
    assert second == first and len(server.calls(API)) == 3  # search, revision, lead: once


def test_a_page_that_did_not_exist_then_is_asked_about_once_then_from_the_cache(
    server: FakeServer, tmp_path: Path
) -> None:
    source = source_for(server, as_of="2001-01-01")
    cache = Cache(tmp_path / "c.sqlite")
    for _ in range(2):
        with in_context(cache, UsageRecorder()):
            assert retrieve(source, "The Eiffel Tower is 300 metres tall.") == []
    cache.close()
    assert len(server.calls(API)) == 2  # search, revision: once


def test_a_page_not_edited_since_the_date_is_read_as_it_is_with_no_more_requests(server: FakeServer) -> None:
    evidence, *_ = retrieve(source_for(server, as_of="2025-01-01"), "The Eiffel Tower is 330 metres tall.")
    assert len(server.calls(API)) == 1  # the search only: its latest revision (2024) already stood then
    assert evidence.published_at == "2024-06-04T03:18:52Z" and "&oldid=" in (evidence.url or "")


@pytest.mark.parametrize("value", ["yesterday", "2012-13-01", "", 2012])
def test_as_of_must_be_an_iso_date(value: object) -> None:
    with pytest.raises(ConfigError, match="as_of must be an ISO 8601 date"):
        WikipediaSource(as_of=value)  # type: ignore[arg-type]
