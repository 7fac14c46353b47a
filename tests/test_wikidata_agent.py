"""The wikidata agent end to end: the real client, source and verifier against a fake Wikibase on 127.0.0.1
serving the probe's statements (bench/probes/wikidata/entities.json)."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from factcheck import Claim, Evidence, Judgment, TextVerdict, load_settings
from factcheck.build import build_checker
from factcheck.config import PROFILES
from factcheck.sources import mediawiki
from factcheck.sources.wikibase import MAX_IDS, Wikibase
from factcheck.testing.http import FakeServer, Response
from factcheck.testing.llm import chat_completion
from factcheck.testing.wikibase import FakeWikibase, maxlag_error, rate_limited

ENTITIES = Path(__file__).resolve().parent.parent / "bench" / "probes" / "wikidata" / "entities.json"


@pytest.fixture
def fake() -> Iterator[FakeWikibase]:
    wikibase = FakeWikibase.from_file(ENTITIES)
    with wikibase:
        yield wikibase


@pytest.fixture(autouse=True)
def quick_retries(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(mediawiki, "BACKOFF_S", 0.01)
    monkeypatch.setattr(mediawiki, "MAXLAG_WAIT_S", 0.05)
    mediawiki.LAGGING.clear()


def checked(fake: FakeWikibase, text: str, as_of: str | None = None, **options: str) -> TextVerdict:
    """``text`` checked as one claim by the wiki profile's wikidata agent alone, asking ``fake``, cache off."""
    settings = load_settings(
        env={},
        profile="wiki",
        only_agents=("wikidata",),
        source_options={"wikidata": {"api_url": fake.endpoint, **options}},
        cache={"enabled": False},
    )
    return build_checker(settings).check(text, claims=[Claim(id="c1", text=text)], as_of=as_of)


def judge(fake: FakeWikibase, text: str, as_of: str | None = None) -> Judgment:
    (claim,) = checked(fake, text, as_of).claims
    (judgment,) = claim.judgments
    return judgment


def test_a_place_is_found_along_the_located_in_chain_and_shown_as_a_statement(fake: FakeWikibase) -> None:
    judgment = judge(fake, "The Eiffel Tower is in Paris.")
    assert judgment.factuality is True and judgment.confidence >= 0.85
    first = judgment.evidence[0]
    assert first.source == "wikidata"
    assert first.text.startswith("Eiffel Tower — located in the administrative territorial entity — 7th arrondissement")
    assert "within Paris" in first.text
    assert first.url is not None and first.url.startswith(f"{fake.url}/wiki/Q243#Q243$")
    assert first.data is not None and first.data["kind"] == "statement" and first.data["property"] == "P131"


@pytest.mark.parametrize(
    ("claim", "why"),
    [
        ("The Eiffel Tower is in Berlin.", "another country"),  # a place in no country the tower lies in
        ("The Eiffel Tower is located in Lyon.", "another country"),  # a sibling of Paris within France
    ],
)
def test_a_place_elsewhere_is_false(fake: FakeWikibase, claim: str, why: str) -> None:
    judgment = judge(fake, claim)
    assert judgment.factuality is False and why in judgment.rationale


def test_born_in_the_city_is_born_in_its_country(fake: FakeWikibase) -> None:
    assert judge(fake, "Albert Einstein was born in Germany.").factuality is True


@pytest.mark.parametrize(
    ("claim", "factuality"),
    [
        ("The Eiffel Tower opened in 1889.", True),
        ("The Eiffel Tower opened in March 1889.", True),
        ("The Eiffel Tower opened in 1885.", False),
        ("Mount Everest is 8,849 metres high.", True),
        ("Mount Everest is about 29,032 feet tall.", True),
        ("Mount Everest is 6,000 metres high.", False),
        ("The capital of France is Paris.", True),
        ("Bonn is the capital of Germany.", False),
    ],
)
def test_times_quantities_and_single_valued_items_are_compared_by_type(
    fake: FakeWikibase, claim: str, factuality: bool
) -> None:
    assert judge(fake, claim).factuality is factuality


def test_a_claim_about_a_past_time_is_judged_by_the_statements_of_that_time(fake: FakeWikibase) -> None:
    assert judge(fake, "Rio de Janeiro was the capital of Brazil in 1950.").factuality is True
    then = judge(fake, "The capital of Brazil is Rio de Janeiro.", as_of="1950-06-30")
    now = judge(fake, "The capital of Brazil is Rio de Janeiro.")
    assert (then.factuality, now.factuality) == (True, False)


def test_another_value_of_a_property_with_many_values_proves_nothing(fake: FakeWikibase) -> None:
    judgment = judge(fake, "Pride and Prejudice was written by Charles Dickens.")
    assert judgment.factuality is None
    assert "neither confirm nor exclude" in judgment.rationale and "Jane Austen" in judgment.rationale


def test_an_ambiguous_name_is_no_judgment_and_names_the_items(fake: FakeWikibase) -> None:
    judgment = judge(fake, "Paris has a population of about 2.1 million.")
    assert judgment.factuality is None
    assert "names several Wikidata items" in judgment.rationale and "Texas" in judgment.rationale


def test_a_missing_property_is_no_judgment_with_its_reason(fake: FakeWikibase) -> None:
    judgment = judge(fake, "The Eiffel Tower is 2,000 square kilometres in area.")
    assert judgment.factuality is None and "no Wikidata statement on the area of Eiffel Tower" in judgment.rationale


def test_a_claim_about_no_entity_costs_no_request(fake: FakeWikibase) -> None:
    judgment = judge(fake, "Statins lower LDL cholesterol.")
    assert judgment.factuality is None and fake.calls() == []


def test_the_requests_name_the_project_and_ask_for_maxlag(fake: FakeWikibase) -> None:
    judge(fake, "The Eiffel Tower opened in 1889.")
    calls = fake.calls()
    assert calls and all(call.query.get("maxlag") == ["5"] for call in calls)
    assert all(call.headers.get("User-Agent", "").startswith("factcheck-agents/") for call in calls)
    assert {call.query["action"][0] for call in calls} == {"wbsearchentities", "wbgetentities"}


def test_a_lagging_wiki_and_a_429_are_waited_out(fake: FakeWikibase) -> None:
    fake.queue(maxlag_error(retry_after=0), rate_limited(retry_after=0))
    assert judge(fake, "The Eiffel Tower opened in 1889.").factuality is True


def test_an_api_error_makes_the_agent_abstain_with_it(fake: FakeWikibase) -> None:
    fake.queue(*[rate_limited(retry_after=0)] * 10)
    judgment = judge(fake, "The Eiffel Tower opened in 1889.")
    assert judgment.factuality is None and judgment.error is not None and "429" in judgment.error


def test_more_ids_than_one_request_takes_are_split(fake: FakeWikibase) -> None:
    ids = sorted(fake.entities)[: MAX_IDS + 10]
    base = Wikibase(mediawiki.MediaWiki(fake.endpoint, "factcheck-tests/1.0 (tests@example.org)", service="wikidata"))
    found = asyncio.run(base.entities(ids))
    assert set(found) == set(ids)
    sizes = sorted(len(call.query["ids"][0].split("|")) for call in fake.calls())
    assert sizes == [10, MAX_IDS]


def test_statement_evidence_keeps_its_data_in_json() -> None:
    evidence = Evidence(source="wikidata", text="Eiffel Tower — height — 330 metres", data={"property": "P2048"})
    again = Evidence.from_dict(json.loads(json.dumps(evidence.to_dict())))
    assert again.data == {"property": "P2048"} and "data" not in Evidence(source="s", text="t").to_dict()


def test_the_wiki_and_paper_profiles_have_the_agent_and_the_url_is_set_three_ways(tmp_path: Path) -> None:
    assert "wikidata" in {agent.name for agent in PROFILES["wiki"].agents}
    config = tmp_path / "factcheck.toml"
    config.write_text('profile = "wiki"\n[wikidata]\nurl = "http://127.0.0.1:9/w/api.php"\n')
    from_file = load_settings(config, env={})
    from_env = load_settings(env={"FACTCHECK_WIKIDATA_URL": "http://127.0.0.1:8/w/api.php"}, profile="wiki")
    assert from_file.source_options["wikidata"]["api_url"] == "http://127.0.0.1:9/w/api.php"
    assert from_env.source_options["wikidata"]["api_url"] == "http://127.0.0.1:8/w/api.php"
    config.write_text("[wikidata]\nendpoint = 1\n")
    with pytest.raises(Exception, match=r"unknown \[wikidata\] setting endpoint"):
        load_settings(config, env={})


def test_a_relation_the_table_lacks_is_matched_by_meaning_and_never_excludes(fake: FakeWikibase) -> None:
    orbits = judge(fake, "The planet Mercury orbits the Sun.")
    assert orbits.factuality is True and orbits.evidence[0].data is not None
    assert orbits.evidence[0].data["property"] == "P397" and orbits.evidence[0].data["single"] is False
    assert judge(fake, "The planet Mercury orbits Jupiter.").factuality is None


def _height(amount: str, rank: str, point: str | None = None) -> dict[str, object]:
    statement: dict[str, object] = {
        "mainsnak": {
            "snaktype": "value",
            "property": "P2048",
            "datatype": "quantity",
            "datavalue": {
                "type": "quantity",
                "value": {"amount": amount, "unit": "http://www.wikidata.org/entity/Q11573"},
            },
        },
        "type": "statement",
        "id": f"Q424242${amount}",
        "rank": rank,
    }
    if point is not None:
        time = {"time": point, "timezone": 0, "before": 0, "after": 0, "precision": 9, "calendarmodel": ""}
        statement["qualifiers"] = {
            "P585": [{"snaktype": "value", "property": "P585", "datavalue": {"type": "time", "value": time}}]
        }
    return statement


def test_a_value_wikidata_also_holds_at_normal_rank_is_never_false() -> None:
    tower = {
        "type": "item",
        "id": "Q424242",
        "labels": {"en": {"language": "en", "value": "Harbour Tower"}},
        "descriptions": {"en": {"language": "en", "value": "lattice tower"}},
        "claims": {"P2048": [_height("+330", "preferred"), _height("+300", "normal", "+1889-00-00T00:00:00Z")]},
    }
    small = FakeWikibase({"Q424242": tower})
    with small:
        dated = judge(small, "Harbour Tower is 300 metres tall.")
        wrong = judge(small, "Harbour Tower is 100 metres tall.")
    assert dated.factuality is None and "at normal rank" in dated.rationale
    assert wrong.factuality is False


def test_the_command_line_points_the_agent_at_any_wikibase(fake: FakeWikibase) -> None:
    from click.testing import CliRunner

    from factcheck.cli import cli

    args = ["check", "The Eiffel Tower opened in 1885.", "--profile", "wiki", "--agents", "wikidata"]
    result = CliRunner().invoke(cli, [*args, "--wikidata-url", fake.endpoint, "--no-cache", "--format", "json"])
    assert result.exit_code == 0, result.output
    [claim] = json.loads(result.output)["claims"]
    assert claim["label"] == "FALSE" and claim["judgments"][0]["evidence"][0]["data"]["property"] == "P1619"


def test_the_keyless_agent_alone_never_keeps_a_paper_run_without_keys_going() -> None:
    from factcheck.cli.keys import MissingKeysError, require_keys

    with pytest.raises(MissingKeysError, match="no agent of profile paper can run"):
        require_keys(build_checker(load_settings(env={}, profile="paper")))
    require_keys(build_checker(load_settings(env={}, profile="paper", only_agents=("wikidata",))))  # asked alone


def _model(server: FakeServer, content: str) -> str:
    """A chat server that answers every request with ``content`` (as an OpenAI-compatible server sends it)."""
    server.route("POST", "/v1/chat/completions", lambda request: Response(chat_completion(content, "fake-model")))
    return f"{server.url}/v1"


def _proposed(fake: FakeWikibase, llm_url: str, text: str) -> tuple[Judgment, list[str]]:
    verdict = checked(fake, text, propose="llm", base_url=llm_url, model="fake-model")
    (claim,) = verdict.claims
    return claim.judgments[0], list(verdict.usage.notes) if verdict.usage else []


def test_where_the_parse_reads_nothing_a_model_proposes_the_fact_and_the_comparison_stays_typed(
    fake: FakeWikibase,
) -> None:
    proposal = '{"subject": "2001: A Space Odyssey", "property": "P57", "value": "Stanley Kubrick"}'
    answer = f"Sure. The entity fact is:\n```json\n{proposal}\n```"
    with FakeServer() as llm:
        judgment, _ = _proposed(fake, _model(llm, answer), "2001: A Space Odyssey was directed by Stanley Kubrick.")
        (request,) = llm.calls("/v1/chat/completions")
    assert judgment.factuality is True and judgment.evidence[0].data is not None
    assert (
        judgment.evidence[0].data["property"] == "P57"
        and judgment.evidence[0].data["proposal"]["value"] == "Stanley Kubrick"
    )
    prompt = request.json()["messages"][0]["content"]
    assert "<<<CLAIM" in prompt and "2001: A Space Odyssey was directed by Stanley Kubrick." in prompt


def test_a_proposal_the_claim_does_not_write_is_not_followed(fake: FakeWikibase) -> None:
    answer = '{"subject": "2001: A Space Odyssey", "property": "P57", "value": "Steven Spielberg"}'
    with FakeServer() as llm:
        judgment, notes = _proposed(fake, _model(llm, answer), "2001: A Space Odyssey was directed by Stanley Kubrick.")
    assert judgment.factuality is None and fake.calls() == []
    assert any("not followed" in note for note in notes)


def test_a_figure_of_a_property_matched_by_meaning_confirms_but_never_excludes() -> None:
    mass = _height("+10", "normal")
    mass["mainsnak"] = {
        "snaktype": "value",
        "property": "P2067",
        "datatype": "quantity",
        "datavalue": {"type": "quantity", "value": {"amount": "+10", "unit": "http://www.wikidata.org/entity/Q11570"}},
    }
    rock = {
        "type": "item",
        "id": "Q515151",
        "labels": {"en": {"language": "en", "value": "Harbour Rock"}},
        "claims": {"P2067": [mass]},
    }
    prop = {
        "type": "property",
        "id": "P2067",
        "datatype": "quantity",
        "labels": {"en": {"language": "en", "value": "mass"}},
        "aliases": {"en": [{"language": "en", "value": "weight"}]},
    }
    small = FakeWikibase({"Q515151": rock, "P2067": prop})
    with small:
        right = judge(small, "Harbour Rock has a mass of 10 kilograms.")
        other = judge(small, "Harbour Rock has a mass of 50 kilograms.")
    assert right.factuality is True and right.evidence[0].data is not None
    assert right.evidence[0].data["property"] == "P2067"
    assert other.factuality is None


def test_the_batch_report_and_the_text_report_show_the_statement(fake: FakeWikibase) -> None:
    from rich.console import Console

    from factcheck.batch.html import document_row
    from factcheck.report import render

    verdict = checked(fake, "The Eiffel Tower opened in 1885.")
    row = document_row({"id": "doc-1", **verdict.to_dict()})
    assert "Eiffel Tower — date of official opening — 31 March 1889" in row
    assert f'href="{fake.url}/wiki/Q243#Q243$' in row.replace("&#x27;", "'")
    console = Console(record=True, width=200)
    render(verdict, console)
    assert "date of official opening — 31 March 1889" in console.export_text()


def test_an_error_body_makes_the_agent_abstain_naming_it(fake: FakeWikibase) -> None:
    from factcheck.testing.wikibase import api_error

    fake.queue(api_error("no-such-entity", 'Could not find an entity with the ID "Q0".', id="Q0"))
    judgment = judge(fake, "The Eiffel Tower opened in 1889.")
    assert judgment.factuality is None and judgment.error is not None
    assert "API error no-such-entity" in judgment.error
