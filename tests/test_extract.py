"""``factcheck extract``, skipped sentences in a check's result, and the LLM extractor's claim policy."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner

from factcheck import Checker, Claim, Extraction, SkippedSentence, TextVerdict
from factcheck.build import build_checker
from factcheck.cli import cli
from factcheck.extractors.llm import LLMExtractor
from factcheck.scoring import rescore
from factcheck.testing import StaticSource
from factcheck.verifiers.lexical import LexicalVerifier
from tests.fake_llm import completion
from tests.fakes import FakeServer, Request, Response

ARTICLE = (
    "Cycling and Your Heart: What the Studies Show\n\n"
    "The Eiffel Tower is in Paris. It was completed in 1889. Is it worth a visit?\n\n"
    "Supporters say regular cycling lowers the risk of heart disease. Pizza is the best food."
)


def run(*args: str, stdin: str | None = None) -> tuple[int, str]:
    result = CliRunner().invoke(cli, list(args), input=stdin)
    return result.exit_code, result.output


def test_extract_json_lists_claims_and_skipped_sentences_with_spans() -> None:
    code, out = run("extract", "--format", "json", ARTICLE)
    assert code == 0, out
    record = json.loads(out)
    assert record["schema"] == "factcheck/1" and record["extractor"] == "sentence"
    texts = [c["text"] for c in record["claims"]]
    assert texts == [
        "The Eiffel Tower is in Paris.",
        "The Eiffel Tower was completed in 1889.",
        "Regular cycling lowers the risk of heart disease.",
    ]
    _, completed, cycling = record["claims"]
    assert completed["original"] == "It was completed in 1889." and completed["edits"] == ["decontextualised"]
    assert cycling["attributed_to"] == "supporters" and cycling["edits"] == ["attribution"]
    for claim in record["claims"]:  # the span points at the sentence as written
        start, end = claim["span"]
        assert ARTICLE[start:end] == (claim["original"] or claim["text"])
    rules = {s["text"]: s["rule"] for s in record["skipped"]}
    assert rules == {
        "Cycling and Your Heart: What the Studies Show": "heading",
        "Is it worth a visit?": "question",
        "Pizza is the best food.": "opinion",
    }
    for skipped in record["skipped"]:
        assert ARTICLE[skipped["span"][0] : skipped["span"][1]] == skipped["text"] and skipped["reason"]


def test_extract_text_from_stdin_and_a_filter_turned_off() -> None:
    code, out = run("extract", "-o", "disable=opinion", "-", stdin="Pizza is the best food. Is it really that good?")
    assert code == 0, out
    assert "[c1]" in out and "Pizza is the best food." in out
    assert "[question]" in out and "[opinion]" not in out


def test_extract_refuses_an_unknown_filter_in_one_line() -> None:
    code, out = run("extract", "-o", "disable=sarcasm", "Water boils at 100 degrees.")
    assert code == 1 and "unknown filter sarcasm" in out


def test_extract_reads_a_file(tmp_path: Path) -> None:
    path = tmp_path / "article.txt"
    path.write_text("Thank you for reading.\n\nWater boils at 100 degrees Celsius at sea level.", encoding="utf-8")
    code, out = run("extract", "--file", str(path))
    assert code == 0 and "[boilerplate]" in out and "Water boils" in out


def offline_checker() -> Checker:
    agent_source = StaticSource(name="static", passages=("Water boils at 100 degrees Celsius at sea level.",))
    from factcheck import Agent

    return build_checker(agents=[Agent("static", agent_source, LexicalVerifier())], cache={"enabled": False})


def test_a_check_records_what_it_skipped_and_json_round_trips() -> None:
    verdict = offline_checker().check("Water boils at 100 degrees Celsius at sea level. Will it rain tomorrow?")
    assert [c.claim.text for c in verdict.claims] == ["Water boils at 100 degrees Celsius at sea level."]
    assert [(s.text, s.rule) for s in verdict.skipped] == [("Will it rain tomorrow?", "question")]
    data = verdict.to_dict()
    assert data["skipped"][0]["rule"] == "question"
    again = TextVerdict.from_dict(json.loads(json.dumps(data)))
    assert again.skipped == verdict.skipped
    assert rescore(again, offline_checker().scorer, offline_checker().labels).skipped == verdict.skipped
    # JSON recorded before these fields existed still reads.
    old = {k: v for k, v in data.items() if k != "skipped"}
    old["claims"] = [
        {k: v for k, v in c.items() if k not in ("attributed_to", "original", "edits")} for c in old["claims"]
    ]
    assert TextVerdict.from_dict(old).skipped == ()


def test_claim_fields_round_trip() -> None:
    claim = Claim("c1", "The vaccine causes autism.", (0, 40), (), "A post", "A post claims ...", ("attribution",))
    assert Claim.from_dict(claim.to_dict()) == claim
    skipped = SkippedSentence("Is it?", (3, 9), "question", "a question")
    assert SkippedSentence.from_dict(skipped.to_dict()) == skipped


def test_an_extractor_without_extraction_still_works() -> None:
    from factcheck.plugin import ClaimExtractor

    class Lines(ClaimExtractor):
        name = "lines"

        def extract(self, text: str) -> list[Claim]:
            return [Claim(f"c{i}", line) for i, line in enumerate(text.splitlines(), 1)]

    assert Lines().extraction("a\nb") == Extraction((Claim("c1", "a"), Claim("c2", "b")))


# --- the LLM extractor against a scripted fake model ---------------------------------------------

LLM_TEXT = "A post claims that the measles vaccine causes autism. Is it safe? It was licensed in 1963."
# What a model might answer: attribution, a decontextualised claim, skips written three ways.
ANSWER = {
    "claims": [
        {
            "claim": "The measles vaccine causes autism.",
            "attributed_to": "A post",
            "sentence": "A post claims that the measles vaccine causes autism.",
            "queries": ["measles vaccine autism"],
        },
        {"claim": "The measles vaccine was licensed in 1963.", "attributed_to": "null", "queries": []},
    ],
    "skipped": [{"sentence": "Is it safe?", "reason": "Question"}, "Thanks for reading.", {"text": 3}],
}


@pytest.fixture
def scripted_model() -> Iterator[FakeServer]:
    def answer(request: Request) -> Response:
        return Response(completion("Sure! Here it is:\n```json\n" + json.dumps(ANSWER) + "\n```"))

    with FakeServer() as server:
        server.route("POST", "/v1/chat/completions", answer)
        yield server


def test_llm_extractor_keeps_attribution_rewrites_and_skips(scripted_model: FakeServer) -> None:
    checker = build_checker(
        agents=offline_checker().agents,
        extractor=LLMExtractor(),
        llm={"base_url": scripted_model.url + "/v1", "model": "fake-model", "max_retries": 0},
        cache={"enabled": False},
    )
    import asyncio

    found = asyncio.run(checker.extraction(LLM_TEXT))
    first, second = found.claims
    assert first.attributed_to == "A post" and first.edits == ("attribution", "rewritten")
    assert first.span == (0, 53) and first.original == LLM_TEXT[:53]
    assert second.attributed_to is None and second.span is not None
    assert LLM_TEXT[second.span[0] : second.span[1]] == "It was licensed in 1963."
    assert [(s.text, s.rule, s.reason) for s in found.skipped][:1] == [("Is it safe?", "question", "Question")]
    assert found.skipped[1].rule == "llm" and found.skipped[1].span is None
    assert len(found.skipped) == 2  # an item with no sentence is dropped
    prompt = scripted_model.calls("/v1/chat/completions")[0].json()["messages"][0]["content"]
    assert "attributed_to" in prompt and "skipped" in prompt and "opinion" in prompt


def test_fence_lines_a_weak_model_echoes_are_no_claims_and_no_queries() -> None:
    """A weak local model copies the lines around the text it was given into its answer."""

    def echoing(request: Request) -> Response:
        lines = request.json()["messages"][-1]["content"].splitlines()
        first, last = lines[0], lines[-1]  # whatever delimits the text, as the model saw it
        claims = [
            {"claim": first, "queries": [first]},
            {"claim": f"{first} The Eiffel Tower is in Paris.", "queries": [last, "Eiffel Tower Paris"]},
            {"claim": last},
        ]
        return Response(completion(json.dumps({"claims": claims, "skipped": [last]})))

    with FakeServer() as server:
        server.route("POST", "/v1/chat/completions", echoing)
        checker = build_checker(
            agents=offline_checker().agents,
            extractor=LLMExtractor(),
            llm={"base_url": server.url + "/v1", "model": "fake-model", "max_retries": 0},
            cache={"enabled": False},
        )
        import asyncio

        found = asyncio.run(checker.extraction("The Eiffel Tower is in Paris."))
    assert [(c.text, c.queries) for c in found.claims] == [("The Eiffel Tower is in Paris.", ("Eiffel Tower Paris",))]
    assert found.claims[0].span == (0, 29)
    assert found.skipped == ()


def test_the_servers_event_stream_records_skipped_sentences_too() -> None:
    import asyncio

    from factcheck.server.stream import check_events

    async def events() -> list[dict[str, object]]:
        text = "Water boils at 100 degrees Celsius at sea level. Pizza is the best food."
        return [event.data async for event in check_events(offline_checker(), text, 30.0)]

    *_, verdict = asyncio.run(events())
    assert [(s["text"], s["rule"]) for s in verdict["skipped"]] == [("Pizza is the best food.", "opinion")]  # type: ignore[index, union-attr]


NEWS = """City Council Approves New Tram Line

The city council approved a 12-kilometre tram line on Tuesday. It will connect the airport with the central station.

Critics argue that buses are cheaper to run. According to the transport authority, 80,000 passengers a day used \
the old bus route in 2023. Will the trams run at night?

I loved the old buses. Share this article. Thank you for reading."""


def test_a_news_article_end_to_end() -> None:
    found = offline_checker().extractor.extraction(NEWS)
    assert [(c.text, c.attributed_to) for c in found.claims] == [
        ("The city council approved a 12-kilometre tram line on Tuesday.", None),
        ("Buses are cheaper to run.", "critics"),
        ("80,000 passengers a day used the old bus route in 2023.", "the transport authority"),
    ]
    assert [s.rule for s in found.skipped] == [
        "heading",
        "prediction",
        "question",
        "first_person",
        "boilerplate",
        "boilerplate",
    ]
    assert all(NEWS[s.span[0] : s.span[1]] == s.text for s in found.skipped if s.span)


# ---- a run-on text is not a claim (issue 40 item 16) ------------------------------------------------------

RUN_ON = "The trial " + "and the follow-up " * 2500 + "showed that statins lower LDL cholesterol"


def test_a_claim_far_too_long_is_skipped_saying_so() -> None:
    text = RUN_ON + ". Aspirin thins the blood."
    code, output = run("extract", text, "--format", "json")
    assert code == 0, output
    data = json.loads(output)
    assert [c["text"] for c in data["claims"]] == ["Aspirin thins the blood."]
    (skipped,) = data["skipped"]
    assert skipped["rule"] == "too_long" and skipped["span"] == [0, len(RUN_ON) + 1]
    assert skipped["reason"] == f"too long for a claim ({len(RUN_ON) + 1:,} characters; at most 1,000)"
    code, output = run("extract", text)
    assert "[too_long] The trial and the follow-up" in output and "too long for a claim (45,052 characters" in output
    assert max(map(len, output.splitlines())) < 400  # the sentence is cut in the list, kept whole in the JSON


def test_check_does_not_judge_a_claim_far_too_long() -> None:
    result = CliRunner().invoke(cli, ["check", RUN_ON + ".", "--format", "json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    assert data["claims"] == [] and data["label"] == "UNVERIFIED"
    assert data["skipped"][0]["rule"] == "too_long"
    text = CliRunner().invoke(cli, ["check", RUN_ON + "."]).output
    assert "[too_long]" in text and "too long for a claim (45,052 characters; at most 1,000)" in text


def test_extract_says_nothing_of_skipped_sentences_when_none_were() -> None:
    code, output = run("extract", "Statins lower LDL cholesterol.")
    assert code == 0 and "skipped" not in output
    assert output == "1 claim to check (extractor sentence):\n  [c1] 0-30  Statins lower LDL cholesterol.\n"
