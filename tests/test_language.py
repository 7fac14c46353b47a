"""Language detection: an agent that cannot read the text's language abstains, naming it; English is never refused."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass

import pytest
from click.testing import CliRunner

from factcheck import Agent, Checker, Label, TextVerdict
from factcheck.build import build_checker
from factcheck.cli import cli
from factcheck.extractors.sentence import SentenceExtractor
from factcheck.language import Detection, detect, refusal
from factcheck.scoring import rescore
from factcheck.scoring.labels import ThresholdRule
from factcheck.scoring.mafc import MAFCScorer
from factcheck.testing import ScriptedVerifier, StaticSource
from factcheck.verifiers.lexical import LexicalVerifier
from factcheck.verifiers.llm import LLMVerifier
from factcheck.verifiers.nli import NLIVerifier
from tests.fake_llm import fake_model
from tests.fakes import FakeServer

GERMAN = "Der Eiffelturm steht in Berlin. Er wurde 1925 fertiggestellt."
FRENCH = "La tour Eiffel est à Berlin. Elle a été achevée en 1925."
# Short English claims full of names and numbers: the detector is unsure of them, so they must be checked.
SHORT_ENGLISH = (
    "Statins lower LDL cholesterol.",
    "Aspirin helps.",
    "Einstein was born in Ulm.",
    "Ludwig van Beethoven was born in Bonn.",
    "Dan O'Bannon was born on September 20th, 1955.",
    "Paris is in France.",
    "IL-6 and TNF-alpha levels rise in sepsis.",
)


@dataclass(frozen=True)
class EnglishVerifier(ScriptedVerifier):
    """A scripted verifier that, like nli and lexical, reads English only."""

    name: str = "english"
    languages = frozenset({"en"})


def checker(*agents: Agent) -> Checker:
    return build_checker(agents=list(agents), extractor=SentenceExtractor(), cache={"enabled": False})


def english_agent(name: str = "english") -> Agent:
    return Agent(name, StaticSource(), EnglishVerifier())


def test_the_offline_verifiers_read_english_and_the_llm_any_language() -> None:
    assert NLIVerifier.languages == frozenset({"en"})
    assert LexicalVerifier.languages == frozenset({"en"})
    assert LLMVerifier.languages is None
    assert StaticSource.languages is None


@pytest.mark.parametrize(("text", "code", "name"), [(GERMAN, "de", "German"), (FRENCH, "fr", "French")])
def test_every_claim_of_a_text_in_another_language_is_unverified_with_the_language_named(
    text: str, code: str, name: str
) -> None:
    verdict = checker(english_agent()).check(text)
    assert len(verdict.claims) == 2
    assert verdict.language == code
    assert verdict.label is Label.UNVERIFIED and verdict.score is None
    expected = f"the text is {name} ({code}); the english verifier reads English only"
    for claim in verdict.claims:
        assert claim.label is Label.UNVERIFIED
        [judgment] = claim.judgments
        assert judgment.abstained and judgment.error == expected
        assert not judgment.evidence  # nothing was searched
    assert verdict.usage.calls.get("source:static", 0) == 0
    assert any(f"{name} ({code}," in note and "english" in note for note in verdict.usage.notes)


def test_the_one_line_text_of_the_issue_is_refused() -> None:
    verdict = checker(english_agent()).check("Der Eiffelturm steht in Berlin.")
    assert verdict.claims[0].label is Label.UNVERIFIED
    assert "German (de)" in (verdict.claims[0].judgments[0].error or "")


def test_english_texts_are_checked_and_recorded_as_english() -> None:
    verdict = checker(english_agent()).check("Obesity does not increase the risk of type 2 diabetes.")
    assert verdict.language == "en"
    assert verdict.claims[0].label is Label.TRUE and verdict.claims[0].judgments[0].error is None
    assert not verdict.usage.notes


@pytest.mark.parametrize("text", SHORT_ENGLISH)
def test_short_english_claims_are_never_refused(text: str) -> None:
    verdict = checker(english_agent()).check(text)
    [claim] = verdict.claims
    assert claim.label is Label.TRUE, claim.judgments[0].error
    assert verdict.language in {"en", None}


def test_a_verifier_that_reads_any_language_still_judges_and_only_the_english_one_abstains() -> None:
    verdict = checker(english_agent(), Agent("any", StaticSource(), ScriptedVerifier())).check(GERMAN)
    for claim in verdict.claims:
        by_agent = {j.agent: j for j in claim.judgments}
        assert by_agent["english"].abstained and "German" in (by_agent["english"].error or "")
        assert by_agent["any"].factuality is True and by_agent["any"].error is None
        assert claim.label is Label.TRUE


def test_a_source_that_reads_english_only_is_named_too() -> None:
    @dataclass(frozen=True)
    class EnglishSource(StaticSource):
        name: str = "english-corpus"
        languages = frozenset({"en"})

    verdict = checker(Agent("corpus", EnglishSource(), ScriptedVerifier())).check(FRENCH)
    error = verdict.claims[0].judgments[0].error
    assert error == "the text is French (fr); the english-corpus source reads English only"


@pytest.fixture
def llm_server() -> Iterator[FakeServer]:
    with FakeServer() as server:
        server.route("POST", "/v1/chat/completions", fake_model)
        yield server


def test_the_llm_verifier_answers_a_german_text(llm_server: FakeServer) -> None:
    llm = {"base_url": llm_server.url + "/v1", "model": "fake-model", "max_retries": 0, "timeout_s": 5.0}
    agents = [Agent("web", StaticSource(name="web", passages=("Der Eiffelturm steht in Paris.",)), LLMVerifier())]
    verdict = build_checker(agents=agents, extractor=SentenceExtractor(), llm=llm, cache={"enabled": False}).check(
        GERMAN
    )
    assert verdict.language == "de"
    assert all(c.judgments[0].factuality is not None and c.judgments[0].error is None for c in verdict.claims)
    assert verdict.usage.llm_calls == 2 and not verdict.usage.notes


def test_the_language_is_in_the_json_and_survives_rescoring_and_old_json_reads_without_it() -> None:
    verdict = checker(english_agent()).check(GERMAN)
    data = verdict.to_dict()
    assert data["language"] == "de" and data["schema"] == "factcheck/1"
    assert TextVerdict.from_dict(json.loads(json.dumps(data))) == verdict
    assert rescore(verdict, MAFCScorer(), ThresholdRule()).language == "de"
    old = {key: value for key, value in data.items() if key != "language"}  # written before detection existed
    assert TextVerdict.from_dict(old).language is None


def test_the_cli_names_the_language_in_the_text_report(monkeypatch: pytest.MonkeyPatch) -> None:
    result = CliRunner().invoke(cli, ["check", "Die Erde ist eine Scheibe. Der Mond besteht aus Käse.", "--no-cache"])
    assert result.exit_code == 0, result.output
    assert "German (de" in result.output and "UNVERIFIED" in result.output
    assert "TRUE" not in result.output.replace("UNVERIFIED", "")


def test_detection_needs_letters_and_confidence() -> None:
    assert detect("1889, 1925, 330 m") is None  # too few letters to tell
    sure = detect(GERMAN)
    assert sure is not None and sure.code == "de" and sure.sure and sure.confidence > 0.9
    assert sure.unreadable_by(frozenset({"en"})) and not sure.unreadable_by(frozenset({"en", "de"}))
    assert not sure.unreadable_by(None)
    unsure = Detection("nl", 0.78, {"nl": 0.78, "en": 0.05})  # English with Dutch names: too much English left
    assert not unsure.unreadable_by(frozenset({"en"}))
    assert refusal(unsure, "nli verifier", frozenset({"en"})) is None
    assert refusal(None, "nli verifier", frozenset({"en"})) is None
    assert refusal(sure, "x verifier", frozenset({"en", "fr"})) == (
        "the text is German (de); the x verifier reads English or French"
    )


# One-sentence texts the detector alone is unsure of (top language under 0.6, or a rare neighbour
# such as Frisian ahead of German): their own function words settle them.
UNSURE_FOREIGN = (
    ("Wasser kocht bei 100 Grad.", "de"),
    ("Goethe wurde in Frankfurt geboren.", "de"),
    ("Statine senken das LDL-Cholesterin.", "de"),
    ("La Terre est ronde.", "fr"),
    ("Les vaccins provoquent l'autisme.", "fr"),
    ("Victor Hugo est né à Besançon.", "fr"),
)


@pytest.mark.parametrize(("text", "code"), UNSURE_FOREIGN)
def test_a_short_sentence_in_another_language_is_refused_by_its_function_words(text: str, code: str) -> None:
    detection = detect(text)
    assert detection is not None and detection.code == code
    assert detection.unreadable_by(frozenset({"en"}))
    verdict = checker(english_agent()).check(text)
    assert verdict.claims and all(claim.label is Label.UNVERIFIED for claim in verdict.claims)


def test_english_function_words_outweigh_an_unsure_foreign_guess() -> None:
    # A guess of 0.5 for German stands only with a German function word, and never against more English ones.
    words_de = Detection("de", 0.5, {"de": 0.5, "en": 0.01}, words=("die", "erde", "ist", "rund"))
    assert words_de.unreadable_by(frozenset({"en"}))
    no_words = Detection("de", 0.5, {"de": 0.5, "en": 0.01}, words=("zugspitze", "garmisch"))
    assert not no_words.unreadable_by(frozenset({"en"}))
    english_words = Detection("de", 0.7, {"de": 0.7, "en": 0.01}, words=("the", "was", "born", "in", "mannheim"))
    assert not english_words.unreadable_by(frozenset({"en"}))
