"""factcheck.testing.wikibase: the fake Wikidata API answers as the real one does (shapes, search order,
missing entities, errors, maxlag, rate limits, the User-Agent policy), driven with httpx over loopback."""

from __future__ import annotations

import ast
import inspect
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

import factcheck.testing.wikibase as wikibase_module
from factcheck.testing.http import FakeServer
from factcheck.testing.wikibase import USER_AGENT_REFUSAL, FakeWikibase, rate_limited, user_agent_refused

PROBE = Path(__file__).resolve().parents[1] / "bench" / "probes" / "wikidata" / "entities.json"
AGENT = {"User-Agent": "factcheck-tests/0.1 (https://example.org/factcheck; tests@example.org)"}


def term(value: str) -> dict[str, str]:
    return {"language": "en", "value": value}


def entity(entity_id: str, label: str, *aliases: str, claims: int = 0, **extra: Any) -> dict[str, Any]:
    statements = [
        {"mainsnak": {"snaktype": "novalue", "property": "P31", "datatype": "wikibase-item"}, "rank": "normal"}
    ]
    return {
        "type": "item",
        "id": entity_id,
        "labels": {"en": term(label), "fr": {"language": "fr", "value": label + " (fr)"}},
        "descriptions": {"en": term(f"description of {label}")},
        "aliases": {"en": [term(a) for a in aliases]} if aliases else {},
        "claims": {"P31": statements * claims} if claims else {},
        **extra,
    }


# Made up for the ordering rules: Q3's alias is exactly "Mercury"; Q2 is the most popular of the prefix matches.
SMALL = {
    "Q1": entity("Q1", "Mercury", claims=1),
    "Q2": entity("Q2", "Mercury Records", claims=1, popularity=1000),
    "Q3": entity("Q3", "Freddie", "Mercury", claims=9),
    "Q4": entity("Q4", "Mercurial", claims=5),
    "Q5": entity("Q5", "Mercury Prize", "Mercury Music Prize", claims=5),
}


@pytest.fixture(scope="module")
def probe() -> Iterator[tuple[FakeWikibase, httpx.Client]]:
    fake = FakeWikibase.from_file(PROBE)
    with fake as server, httpx.Client(base_url=server.url, headers=AGENT, timeout=5) as client:
        yield fake, client


def api(client: httpx.Client, **params: Any) -> httpx.Response:
    return client.get("/w/api.php", params={"format": "json", **params})


def search(client: httpx.Client, text: str, **params: Any) -> dict[str, Any]:
    answer = api(client, action="wbsearchentities", search=text, language="en", uselang="en", **params)
    assert answer.status_code == 200
    body: dict[str, Any] = answer.json()
    return body


def test_the_module_imports_nothing_of_factcheck_but_the_fake_server() -> None:
    tree = ast.parse(inspect.getsource(wikibase_module))
    imported = {n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and n.module}
    imported |= {a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
    assert {m for m in imported if m.startswith("factcheck")} == {"factcheck.testing.http"}


def test_a_search_answer_has_wikidatas_shape(probe: tuple[FakeWikibase, httpx.Client]) -> None:
    body = search(probe[1], "Eiffel Tower", type="item", limit=7)
    assert body["searchinfo"] == {"search": "Eiffel Tower"} and body["success"] == 1
    assert "search-continue" not in body
    [hit] = body["search"]
    assert hit == {
        "id": "Q243",
        "title": "Q243",
        "pageid": hit["pageid"],
        "repository": "wikidata",
        "url": "//www.wikidata.org/wiki/Q243",
        "concepturi": "http://www.wikidata.org/entity/Q243",
        "label": "Eiffel Tower",
        "description": "tower located on the Champ de Mars in Paris, France",
        "display": {
            "label": {"value": "Eiffel Tower", "language": "en"},
            "description": {"value": "tower located on the Champ de Mars in Paris, France", "language": "en"},
        },
        "match": {"type": "label", "language": "en", "text": "Eiffel Tower"},
    }
    assert isinstance(hit["pageid"], int)


def test_an_ambiguous_label_lists_the_more_popular_entity_first(probe: tuple[FakeWikibase, httpx.Client]) -> None:
    ids = [hit["id"] for hit in search(probe[1], "paris")["search"]]
    assert ids[:2] == ["Q90", "Q830149"]
    georgia = search(probe[1], "Georgia")["search"]
    assert [h["id"] for h in georgia] == ["Q230", "Q1428"]  # both exact labels; the country is the more popular
    assert [h["description"] for h in georgia] == ["country in the Caucasus", "state of the United States of America"]


def test_an_alias_match_names_the_alias_it_matched_case_and_accents_aside(
    probe: tuple[FakeWikibase, httpx.Client],
) -> None:
    [usa] = search(probe[1], "usa")["search"]
    assert (usa["id"], usa["label"], usa["aliases"]) == ("Q30", "United States", ["USA"])
    assert usa["match"] == {"type": "alias", "language": "en", "text": "USA"}
    assert [h["id"] for h in search(probe[1], "ile-de-fr")["search"]] == ["Q13917"]
    assert search(probe[1], "Cristo Redentor")["search"][0]["match"]["type"] == "alias"


def test_exact_matches_come_before_prefix_matches_and_labels_before_aliases() -> None:
    fake = FakeWikibase(SMALL)
    with fake as server, httpx.Client(base_url=server.url, headers=AGENT, timeout=5) as client:
        hits = search(client, "mercury")["search"]
        pages = [search(client, "merc", limit=2), search(client, "merc", limit=2, **{"continue": 2})]
    assert [(h["id"], h["match"]["type"]) for h in hits] == [
        ("Q1", "label"),  # exact label
        ("Q3", "alias"),  # exact alias
        ("Q2", "label"),  # prefix label, the popular one
        ("Q5", "label"),  # prefix label, more statements
    ]
    # "merc" is a prefix of every label: popularity, then statements, then the id decide; the alias comes last.
    assert [h["id"] for h in pages[0]["search"]] == ["Q2", "Q4"] and pages[0]["search-continue"] == 2
    assert [h["id"] for h in pages[1]["search"]] == ["Q5", "Q1"] and pages[1]["search-continue"] == 4


def test_a_property_search_finds_properties_by_alias(probe: tuple[FakeWikibase, httpx.Client]) -> None:
    body = search(probe[1], "located in", type="property")
    first = body["search"][0]
    assert (first["id"], first["title"], first["datatype"]) == ("P131", "Property:P131", "wikibase-item")
    assert first["url"] == "//www.wikidata.org/wiki/Property:P131"
    assert first["match"] == {"type": "alias", "language": "en", "text": "located in"}
    assert all(h["id"].startswith("P") for h in body["search"])
    assert search(probe[1], "Eiffel", type="property")["search"] == []


def test_a_limit_over_fifty_is_cut_with_mediawikis_warning() -> None:
    many = {f"Q{i}": entity(f"Q{i}", f"Station {i}") for i in range(1, 61)}
    with FakeWikibase(many) as server, httpx.Client(base_url=server.url, headers=AGENT, timeout=5) as client:
        body = search(client, "station", limit=80)
        default = search(client, "station")
    assert len(body["search"]) == 50 and body["search-continue"] == 50
    assert body["warnings"] == {
        "wbsearchentities": {"*": 'The value "80" for parameter "limit" must be between 1 and 50.'}
    }
    assert [h["id"] for h in default["search"]] == [f"Q{i}" for i in range(1, 8)] and default["search-continue"] == 7


def test_getentities_serves_the_statements_and_marks_an_unknown_id_missing(
    probe: tuple[FakeWikibase, httpx.Client],
) -> None:
    answer = api(
        probe[1],
        action="wbgetentities",
        ids="Q243|q999999999",
        props="labels|aliases|descriptions|claims",
        languages="en",
    )
    body = answer.json()
    assert answer.status_code == 200 and body["success"] == 1
    assert body["entities"]["Q999999999"] == {"id": "Q999999999", "missing": ""}
    tower = body["entities"]["Q243"]
    assert list(tower) == ["type", "id", "labels", "descriptions", "aliases", "claims"]  # no info keys, no popularity
    [located] = tower["claims"]["P131"]
    assert located["mainsnak"]["datavalue"]["value"] == {"entity-type": "item", "numeric-id": 259463, "id": "Q259463"}
    assert located["id"].startswith("Q243$") and located["rank"] == "normal"


def test_props_and_languages_filter_what_is_served(probe: tuple[FakeWikibase, httpx.Client]) -> None:
    labels = api(probe[1], action="wbgetentities", ids="P131", props="labels", languages="fr").json()
    assert labels["entities"]["P131"] == {"type": "property", "id": "P131", "labels": {}}
    full = api(probe[1], action="wbgetentities", ids="P131").json()["entities"]["P131"]
    assert full["datatype"] == "wikibase-item" and full["title"] == "Property:P131" and full["ns"] == 120
    assert "popularity" not in api(probe[1], action="wbgetentities", ids="Q90").json()["entities"]["Q90"]


def test_an_invalid_id_is_no_such_entity_and_fifty_one_ids_are_too_many(
    probe: tuple[FakeWikibase, httpx.Client],
) -> None:
    invalid = api(probe[1], action="wbgetentities", ids="Q243|XYZ")
    assert invalid.status_code == 200 and invalid.headers["MediaWiki-API-Error"] == "no-such-entity"
    error = invalid.json()["error"]
    assert (error["code"], error["info"], error["id"]) == (
        "no-such-entity",
        'Could not find an entity with the ID "XYZ".',
        "XYZ",
    )
    many = api(probe[1], action="wbgetentities", ids="|".join(f"Q{i}" for i in range(1, 52)))
    assert many.status_code == 200 and many.headers["MediaWiki-API-Error"] == "toomanyvalues"
    body = many.json()
    assert body["error"]["info"] == 'Too many values supplied for parameter "ids". The limit is 50.'
    assert (body["error"]["limit"], body["error"]["lowlimit"], body["error"]["highlimit"]) == (50, 50, 500)
    assert body["servedby"] and "entities" not in body
    fifty = api(probe[1], action="wbgetentities", ids="|".join(f"Q{i}" for i in range(1, 51)), props="labels")
    assert len(fifty.json()["entities"]) == 50


def test_maxlag_refuses_a_request_that_asks_for_less_lag_than_there_is() -> None:
    fake = FakeWikibase(SMALL)
    fake.lag = 6
    with fake as server, httpx.Client(base_url=server.url, headers=AGENT, timeout=5) as client:
        lagged = api(client, action="wbgetentities", ids="Q1", maxlag=5)
        patient = api(client, action="wbgetentities", ids="Q1", maxlag=10)
        careless = api(client, action="wbgetentities", ids="Q1")
    assert lagged.status_code == 200
    assert (lagged.headers["MediaWiki-API-Error"], lagged.headers["Retry-After"]) == ("maxlag", "1")
    error = lagged.json()["error"]
    assert (error["code"], error["info"], error["lag"]) == ("maxlag", "Waiting for 10.64.16.27: 6 seconds lagged.", 6)
    assert "Q1" in patient.json()["entities"] and "Q1" in careless.json()["entities"]
    assert len(fake.calls()) == 3


def test_a_queued_429_comes_once_with_retry_after() -> None:
    fake = FakeWikibase(SMALL)
    fake.queue(rate_limited(retry_after=2))
    with fake as server, httpx.Client(base_url=server.url, headers=AGENT, timeout=5) as client:
        refused = api(client, action="wbsearchentities", search="Mercury", language="en")
        served = api(client, action="wbsearchentities", search="Mercury", language="en")
    assert (refused.status_code, refused.headers["Retry-After"]) == (429, "2")
    assert refused.headers["Content-Type"].startswith("text/plain")
    assert served.status_code == 200 and served.json()["search"][0]["id"] == "Q1"


def test_the_user_agent_policy_refuses_a_bare_library_agent_in_wikimedias_words() -> None:
    fake = FakeWikibase(SMALL)
    fake.user_agent_policy = True
    with fake as server, httpx.Client(base_url=server.url, timeout=5) as client:
        bare = api(client, action="wbgetentities", ids="Q1")  # httpx's own "python-httpx/x.y"
        named = client.get(
            "/w/api.php", params={"action": "wbgetentities", "ids": "Q1", "format": "json"}, headers=AGENT
        )
    assert (bare.status_code, bare.text) == (403, USER_AGENT_REFUSAL)
    assert bare.headers["Content-Type"].startswith("text/plain")
    assert named.status_code == 200
    assert user_agent_refused().status == 403


def test_a_slow_answer_outlasts_a_short_timeout_and_every_request_is_recorded() -> None:
    fake = FakeWikibase(SMALL)
    fake.delay_s = 1.0
    with (
        fake as server,
        httpx.Client(base_url=server.url, headers=AGENT, timeout=0.2) as client,
        pytest.raises(httpx.TimeoutException),
    ):
        api(client, action="wbgetentities", ids="Q1")
    assert isinstance(fake.server, FakeServer)
    assert [r.query["ids"] for r in fake.calls()] == [["Q1"]]


def test_a_post_form_is_answered_like_a_get() -> None:
    with FakeWikibase(SMALL) as server, httpx.Client(base_url=server.url, headers=AGENT, timeout=5) as client:
        answer = client.post("/w/api.php", data={"action": "wbgetentities", "ids": "Q2|Q3", "format": "json"})
    assert sorted(answer.json()["entities"]) == ["Q2", "Q3"]
