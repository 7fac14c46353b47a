"""Time-aware checking (issue 18): a text's reference time, claims' times, and what sources read as of then."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime

import pytest
from click.testing import CliRunner

from factcheck import Agent, Checker, Claim, ClaimTime, Evidence, InputError, Source, TextVerdict
from factcheck.build import build_checker
from factcheck.claimtime import reading_times, reference_time, resolve, time_span, with_times
from factcheck.cli import cli
from factcheck.context import using
from factcheck.extractors.sentence import SentenceExtractor
from factcheck.llm.client import LLMSettings
from factcheck.report import time_phrase
from factcheck.testing import ScriptedVerifier, StaticSource
from factcheck.verifiers.lexical import LexicalVerifier
from tests.fakes import FakeServer
from tests.test_sources_wikipedia import API, mediawiki, source_for

MAY_2014 = reference_time("2014-05-10")


@pytest.mark.parametrize(
    ("text", "start", "end", "kind"),
    [
        ("The Eiffel Tower was completed in 1889.", "1889-01-01", "1889-12-31", "year"),
        ("The vaccine was approved on 3 March 2021.", "2021-03-03", "2021-03-03", "instant"),
        ("Prices rose in March 2021.", "2021-03-01", "2021-03-31", "month"),
        ("Unemployment fell last year.", "2013-01-01", "2013-12-31", "year"),
        ("Two years ago, the bridge collapsed.", "2012-01-01", "2012-12-31", "year"),
        ("The bridge closed yesterday.", "2014-05-09", "2014-05-09", "instant"),
        ("Crime fell in the 1990s.", "1990-01-01", "1999-12-31", "decade"),
        ("From 2019 to 2020 sales doubled.", "2019-01-01", "2020-12-31", "range"),
        ("Obama is currently the president.", "2014-05-10", "2014-05-10", "present"),
        ("Obama is the president of the United States.", "2014-05-10", "2014-05-10", "present"),
        ("Growth has stalled for eight years.", "2006-01-01", "2014-12-31", "range"),
        ("Heart failure decreased in women since 1979.", "1979-01-01", "2014-05-10", "range"),
        # Day-month-year, month-day-year, ordinal days and ISO dates all name one day.
        ("The law passed on 12 March 2024.", "2024-03-12", "2024-03-12", "instant"),
        ("The law passed on March 12, 2024.", "2024-03-12", "2024-03-12", "instant"),
        ("The law passed on the 12th of March 2024.", "2024-03-12", "2024-03-12", "instant"),
        ("The law passed on March 12th, 2024.", "2024-03-12", "2024-03-12", "instant"),
        ("The law passed on 2024-03-12.", "2024-03-12", "2024-03-12", "instant"),
        ("The strike began in January.", "2014-01-01", "2014-01-31", "month"),
        # Years of any era, three digits too: 44 BC is ISO 8601's -0043 (it counts a year 0).
        ("Rome fell in 476 AD.", "0476-01-01", "0476-12-31", "year"),
        ("Rome fell in AD 476.", "0476-01-01", "0476-12-31", "year"),
        ("Rome fell in the year 476.", "0476-01-01", "0476-12-31", "year"),
        ("Charlemagne was crowned emperor in 800.", "0800-01-01", "0800-12-31", "year"),
        ("The temple was built in 960 CE.", "0960-01-01", "0960-12-31", "year"),
        ("Julius Caesar was killed in 44 BC.", "-0043-01-01", "-0043-12-31", "year"),
        ("Julius Caesar was killed in 44 BCE.", "-0043-01-01", "-0043-12-31", "year"),
    ],
)
def test_a_claims_time_is_resolved_against_the_texts(text: str, start: str, end: str, kind: str) -> None:
    [claim] = with_times([Claim("c1", text)], MAY_2014)
    assert claim.time is not None
    assert (claim.time.start, claim.time.end, claim.time.kind) == (start, end, kind)
    assert claim.time.phrase and claim.time.phrase.lower() in text.lower()


@pytest.mark.parametrize(
    "text",
    [
        "Varenicline with nicotine patches raises abstinence over 52 weeks.",  # how long, not when
        "The genome consists of 7489 nucleotides.",  # no year
        "Statins lower LDL cholesterol.",
        "The trial enrolled 476 patients in 12 centres.",  # a three-digit number that closes no phrase of time
        "The village has around 500.",  # a number after "around" or "by" is a count
    ],
)
def test_lengths_of_time_and_numbers_that_are_no_years_give_no_time(text: str) -> None:
    assert with_times([Claim("c1", text)], MAY_2014)[0].time is None


def test_a_claim_with_no_date_or_present_marker_has_no_time_and_a_given_time_is_kept() -> None:
    given = ClaimTime("2000-01-01", "2000-12-31", "in 2000", "year")
    plain, kept = with_times([Claim("a", "Statins lower LDL cholesterol."), Claim("b", "x", time=given)], MAY_2014)
    assert plain.time is None and kept.time == given
    assert resolve("It happened in 1850.", MAY_2014) == ClaimTime("1850-01-01", "1850-12-31", "1850", "year")


def test_the_reference_time_is_a_date_or_a_time_and_nothing_else() -> None:
    assert reference_time("2014-05-10") == datetime(2014, 5, 10, 23, 59, 59, tzinfo=UTC)
    assert reference_time("2014-05-10T08:00:00Z") == datetime(2014, 5, 10, 8, tzinfo=UTC)
    assert abs((reference_time(None) - datetime.now(UTC)).total_seconds()) < 5
    with pytest.raises(ValueError, match="as_of must be an ISO 8601 date"):
        reference_time("last Tuesday")


def test_what_a_source_of_the_past_reads_as_of() -> None:
    now = datetime(2026, 12, 1, tzinfo=UTC)
    old_text = reference_time("2012-06-30")
    past = Claim("a", "x", time=ClaimTime("1889-01-01", "1889-12-31", "1889", "year"))
    present = Claim("b", "x", time=ClaimTime("2012-06-30", "2012-06-30", "currently", "present"))
    timeless = Claim("c", "x")
    # The claim's own time first, then the text's; a present-tense claim is the text's time.
    assert reading_times(past, old_text, now) == ["1889-12-31", "2012-06-30"]
    assert reading_times(present, old_text, now) == ["2012-06-30"]
    assert reading_times(timeless, old_text, now) == ["2012-06-30"]
    # Nothing older than a month: today's pages.
    assert reading_times(timeless, reference_time("2026-11-20"), now) == []
    assert reading_times(timeless, None, now) == []


def checker(*agents: Agent) -> Checker:
    return build_checker(agents=list(agents), extractor=SentenceExtractor(), cache={"enabled": False})


def test_a_check_records_its_reference_time_and_each_claims_time_in_the_json() -> None:
    verdict = checker(Agent("static", StaticSource(), ScriptedVerifier())).check(
        "The tower was completed in 1889. It is currently painted brown.", as_of="2014-05-10"
    )
    data = verdict.to_dict()
    assert data["as_of"] == "2014-05-10T23:59:59+00:00"
    times = [claim["time"] for claim in data["claims"]]
    assert times[0] == {"start": "1889-01-01", "end": "1889-12-31", "phrase": "1889", "kind": "year"}
    assert times[1]["kind"] == "present" and times[1]["start"] == "2014-05-10"
    again = TextVerdict.from_dict(json.loads(json.dumps(data)))
    assert again.as_of == verdict.as_of and again.claims[0].claim.time == verdict.claims[0].claim.time
    old = {k: v for k, v in data.items() if k != "as_of"}
    old["claims"] = [{k: v for k, v in c.items() if k != "time"} for c in data["claims"]]
    assert TextVerdict.from_dict(old).as_of is None  # JSON written before these fields still reads


def test_a_check_without_a_time_is_dated_now_and_a_bad_time_is_refused() -> None:
    verdict = checker(Agent("static", StaticSource(), ScriptedVerifier())).check("Statins lower LDL cholesterol.")
    assert verdict.as_of is not None
    assert abs((datetime.fromisoformat(verdict.as_of) - datetime.now(UTC)).total_seconds()) < 60
    with pytest.raises(InputError, match="as_of must be an ISO 8601 date"):
        checker(Agent("static", StaticSource(), ScriptedVerifier())).check("Statins work.", as_of="soon")


def test_the_cli_takes_as_of_and_refuses_a_bad_one(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FACTCHECK_NO_CACHE", "1")
    runner = CliRunner()
    bad = runner.invoke(cli, ["check", "--as-of", "yesterday", "Statins lower LDL cholesterol."])
    assert bad.exit_code == 2 and "--as-of" in bad.output
    good = runner.invoke(cli, ["check", "--as-of", "2014-05-10", "--format", "json", "Unemployment fell last year."])
    assert good.exit_code == 0, good.output
    data = json.loads(good.output)
    assert data["as_of"].startswith("2014-05-10") and data["claims"][0]["time"]["start"] == "2013-01-01"


@pytest.fixture
def wiki() -> Iterator[FakeServer]:
    with FakeServer() as server:
        server.route("GET", API, mediawiki)
        yield server


def test_a_check_of_an_old_text_reads_wikipedia_as_it_stood_when_the_text_was_written(wiki: FakeServer) -> None:
    agent = Agent("wikipedia", source_for(wiki), ScriptedVerifier())
    verdict = checker(agent).check("The Eiffel Tower is 324 metres tall.", as_of="2012-06-30")
    passages = verdict.claims[0].judgments[0].evidence
    [evidence] = [e for e in passages if e.title == "Eiffel Tower"]  # the lead; the others are its sections
    assert evidence.published_at == "2010-01-17T18:02:51Z" and "oldid=338421190" in (evidence.url or "")
    assert all(e.published_at == evidence.published_at and "oldid=338421190" in (e.url or "") for e in passages)
    [revision_lookup] = [r for r in wiki.calls(API) if r.query.get("prop") == ["revisions"]]
    assert revision_lookup.query["rvstart"] == ["2012-06-30T23:59:59Z"]


def test_a_claim_older_than_the_page_falls_back_to_the_texts_time_then_to_today(wiki: FakeServer) -> None:
    agent = Agent("wikipedia", source_for(wiki), ScriptedVerifier())
    # Written in 2012, about 1889: no revision in 1889, so the page as of 2012.
    [then] = checker(agent).check("The Eiffel Tower was completed in 1889.", as_of="2012-06-30").claims
    assert then.judgments[0].evidence[0].published_at == "2010-01-17T18:02:51Z"
    # Checked now, about 1889: today's page (no old revision asked for after 1889 gave none).
    [today] = checker(agent).check("The Eiffel Tower was completed in 1889.").claims
    assert today.judgments[0].evidence[0].url == "https://en.wikipedia.org/wiki/Eiffel_Tower"


def test_a_judgment_read_as_of_another_time_is_not_reused_for_today(wiki: FakeServer) -> None:
    agent = Agent("wikipedia", source_for(wiki), LexicalVerifier())  # both reuse judgments
    claim = Claim("c1", "The Eiffel Tower is 324 metres tall.")
    today = agent.judgment_request(claim, LLMSettings())
    with using(reference=reference_time("2012-06-30")):
        then = agent.judgment_request(claim, LLMSettings())
    assert today is not None and then is not None
    assert "as_of" not in today and then["as_of"] == ["2012-06-30"]


@dataclass(frozen=True)
class DatedSource(Source):
    """Passages with the dates a search API gives them."""

    name: str = "dated"
    dates: tuple[str, ...] = ("2024-03-01",)

    async def retrieve(self, claim: Claim) -> list[Evidence]:
        return [Evidence(self.name, f"Passage {i}.", f"doc{i}", published_at=d) for i, d in enumerate(self.dates)]


def test_evidence_dated_long_after_a_claim_about_its_own_present_is_marked_and_noted() -> None:
    agent = Agent("dated", DatedSource(dates=("2024-03-01", "2014-02-01")), ScriptedVerifier())
    [claim] = checker(agent).check("Obama is currently the president.", as_of="2014-05-10").claims
    late, fitting = claim.judgments[0].evidence
    assert late.time_note == "dated 2024-03-01, more than a year after the time the claim speaks of (2014-05-10)"
    assert fitting.time_note is None and claim.notes == ()  # one passage of its time: not only another time's
    [alone] = (
        checker(Agent("dated", DatedSource(), ScriptedVerifier()))
        .check("Obama is currently the president.", as_of="2014-05-10")
        .claims
    )
    assert alone.notes and alone.notes[0].startswith("every passage behind this verdict is dated far from")
    assert alone.to_dict()["notes"] == list(alone.notes)
    assert alone.to_dict()["judgments"][0]["evidence"][0]["time_note"].startswith("dated 2024-03-01")


def test_a_claim_about_the_past_may_be_told_by_later_evidence_and_a_prediction_not() -> None:
    past = checker(Agent("dated", DatedSource(), ScriptedVerifier())).check("The tower was completed in 1889.")
    assert past.claims[0].judgments[0].evidence[0].time_note is None and past.claims[0].notes == ()
    prediction = "Unemployment will fall next year."  # given: the extractor skips predictions
    future = checker(Agent("dated", DatedSource(), ScriptedVerifier())).check(
        prediction, claims=[Claim("c1", prediction)], as_of="2014-05-10"
    )
    [item] = future.claims[0].judgments[0].evidence
    assert item.time_note == "dated 2024-03-01, after the claim was made (2014-05-10) about a later time"


def test_rescoring_keeps_the_reference_time_and_the_notes() -> None:
    from factcheck import rescore
    from factcheck.scoring.baselines import AverageScorer
    from factcheck.scoring.labels import ThresholdRule

    verdict = checker(Agent("dated", DatedSource(), ScriptedVerifier())).check(
        "Obama is currently the president.", as_of="2014-05-10"
    )
    again = rescore(TextVerdict.from_dict(verdict.to_dict()), AverageScorer(), ThresholdRule())
    assert again.as_of == verdict.as_of and again.claims[0].notes == verdict.claims[0].notes != ()


def test_the_llm_is_told_the_claims_time_and_each_passages_date() -> None:
    from factcheck.verifiers.llm import LLMVerifier
    from tests.fake_llm import fake_model

    with FakeServer() as server:
        server.route("POST", "/v1/chat/completions", fake_model)
        llm = {"base_url": server.url + "/v1", "model": "fake-model", "max_retries": 0, "timeout_s": 5.0}
        agent = Agent("web", DatedSource(name="web"), LLMVerifier())
        checked = build_checker(agents=[agent], extractor=SentenceExtractor(), llm=llm, cache={"enabled": False})
        verdict = checked.check("Obama is currently the president.", as_of="2014-05-10")
        checked.check("Statins lower LDL cholesterol.")
        system, user = (m["content"] for m in server.calls("/v1/chat/completions")[0].json()["messages"])
        plain = server.calls("/v1/chat/completions")[1].json()["messages"][1]["content"]
    assert verdict.claims[0].judgments[0].factuality is not None
    assert "judge it as of that time, not as of today" in system
    assert "written on 2014-05-10" in user
    assert 'TIME THE CLAIM SPEAKS OF: 2014-05-10 ("currently"). Judge it as of that time.' in user
    evidence = user[user.index("EVIDENCE:") :]
    assert "date: 2024-03-01" in evidence  # inside the passage's fence, with its source and title
    assert "TIME THE CLAIM" not in plain and "written on" not in plain  # a claim of no time, checked today


def test_the_llm_extractor_quotes_when_a_claim_holds_and_the_date_is_resolved_here() -> None:
    from factcheck.extractors.llm import LLMExtractor
    from tests.fake_llm import completion
    from tests.fakes import Request, Response

    answer = {
        "claims": [
            {"claim": "Unemployment fell last year.", "sentence": "Unemployment fell last year.", "time": "last year"},
            {"claim": "Statins lower LDL cholesterol.", "time": None},
            {"claim": "Prices rose.", "sentence": "Prices rose in the spring.", "time": "sometime or other"},
        ]
    }

    def reply(request: Request) -> Response:
        return Response(completion(json.dumps(answer)))

    with FakeServer() as server:
        server.route("POST", "/v1/chat/completions", reply)
        llm = {"base_url": server.url + "/v1", "model": "fake-model", "max_retries": 0, "timeout_s": 5.0}
        agent = Agent("static", StaticSource(), ScriptedVerifier())
        text = "Unemployment fell last year. Statins lower LDL cholesterol. Prices rose in the spring."
        verdict = build_checker(agents=[agent], extractor=LLMExtractor(), llm=llm, cache={"enabled": False}).check(
            text, as_of="2014-05-10"
        )
        prompt = server.calls("/v1/chat/completions")[0].json()["messages"][0]["content"]
    fell, statins, prices = (c.claim.time for c in verdict.claims)
    assert fell == ClaimTime("2013-01-01", "2013-12-31", "last year", "year")
    assert statins is None and prices is None  # a phrase that names no date resolves to nothing
    assert '"time"' in prompt and "when the claim holds" in prompt


def test_a_page_of_today_behind_a_claim_about_an_earlier_present_is_marked_and_noted(wiki: FakeServer) -> None:
    agent = Agent("wikipedia", source_for(wiki), ScriptedVerifier())
    # Written in 2003, about then: the page has no revision that old, so today's (2024) is read, and said so.
    [claim] = checker(agent).check("The Eiffel Tower is currently 324 metres tall.", as_of="2003-01-01").claims
    [evidence] = [e for e in claim.judgments[0].evidence if e.title == "Eiffel Tower"]  # the lead
    assert (
        evidence.published_at == "2024-06-04T03:18:52Z" and evidence.url == "https://en.wikipedia.org/wiki/Eiffel_Tower"
    )
    assert evidence.time_note == "dated 2024-06-04, more than a year after the time the claim speaks of (2003-01-01)"
    assert claim.notes and "dated far from the time the claim speaks of (currently)" in claim.notes[0]


@pytest.mark.parametrize(
    ("text", "start"),
    [
        ("On 12 March 2020, the index fell by 300.", "2020-03-12"),
        ("Unemployment rose in 2019 to 5%, up by 120.", "2019-01-01"),
    ],
)
def test_a_date_wins_over_a_number_that_could_be_a_short_year(text: str, start: str) -> None:
    [claim] = with_times([Claim("c1", text)], MAY_2014)
    assert claim.time is not None and claim.time.start == start


def test_a_year_before_christ_reads_as_such_and_asks_for_no_old_page() -> None:
    [claim] = with_times([Claim("c1", "Julius Caesar was killed in 44 BC.")], MAY_2014)
    assert claim.time is not None and time_phrase(claim.time) == '44 BC ("44 BC")'
    assert time_span(claim.time) == "44 BC to 44 BC"  # as the LLM verifier is told it: never "-0043"
    assert time_phrase(ClaimTime("", "", "a hand-edited file", "year")) == ' ("a hand-edited file")'
    # No revision of a page goes back to 44 BC: the old page asked for is the text's own date only.
    assert reading_times(claim, MAY_2014, now=datetime(2026, 1, 1, tzinfo=UTC)) == ["2014-05-10"]


def test_extract_shows_each_claims_time_resolved_as_of_the_given_date() -> None:
    text = "The strike began in January. Rome fell in 476 AD."
    result = CliRunner().invoke(cli, ["extract", text, "--as-of", "2024-06-15", "--format", "json"])
    assert result.exit_code == 0, result.output
    times = [claim["time"] for claim in json.loads(result.output)["claims"]]
    assert [(t["start"], t["end"], t["phrase"]) for t in times] == [
        ("2024-01-01", "2024-01-31", "January"),
        ("0476-01-01", "0476-12-31", "476 AD"),
    ]
    shown = CliRunner().invoke(cli, ["extract", text, "--as-of", "2024-06-15"])
    assert 'time: 2024-01-01 to 2024-01-31 ("January")' in shown.output and 'time: 476 ("476 AD")' in shown.output
    refused = CliRunner().invoke(cli, ["extract", text, "--as-of", "2024-13-01"])
    assert refused.exit_code == 2 and "--as-of" in refused.output


@pytest.mark.parametrize("phrase", ["yesterday", "last week", "March 5", "6 December", "two days ago", "this month"])
def test_a_date_phrase_resolves_alike_at_any_hour_with_one_parser_a_day(phrase: str) -> None:
    """A server checks each text at its own second: the date parser is built once a day, not once a check, and a
    date phrase means the same day from any hour of it."""
    from factcheck import claimtime

    hours = [datetime(2026, 12, 6, hour, 37, 12, 123456, tzinfo=UTC) for hour in (0, 3, 12, 23)]
    claimtime.resolve(phrase, hours[0], [phrase])  # this day's parser built
    built = claimtime._parser.cache_info().misses
    found = {claimtime.resolve(phrase, when, [phrase]) for when in hours}
    assert claimtime._parser.cache_info().misses == built  # no parser built for the later hours
    assert len(found) == 1 and None not in found
