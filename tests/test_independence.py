"""Evidence independence: near-duplicate detection, merging, MAFC after merging, false-consensus rate."""

from __future__ import annotations

import math

import pytest

from factcheck.eval.metrics import confident_consensus, evidence_independence_rate, false_consensus_rate
from factcheck.independence import (
    apply_independence,
    dependent_groups,
    evidence_overlap,
    merge_dependent,
    merge_map,
    normalise_url,
    passage_similarity,
    shingles,
)
from factcheck.scoring import rescore, score_text
from factcheck.scoring.labels import ThresholdRule
from factcheck.scoring.mafc import MAFCScorer
from factcheck.types import Claim, Evidence, Judgment, Label

# A realistic multi-agent record for one claim: the Wikipedia lead, a Google (Serper) snippet
# cut from that lead, an independent page that says the same thing in its own words, and
# a self-check LLM answer.
WIKI_LEAD = (
    "The Eiffel Tower is a wrought-iron lattice tower on the Champ de Mars in Paris, France. "
    "It is named after the engineer Gustave Eiffel, whose company designed and built the tower "
    'from 1887 to 1889. Locally nicknamed "La dame de fer" (French for "Iron Lady"), it was '
    "constructed as the centrepiece of the 1889 World's Fair, and to crown the centennial "
    "anniversary of the French Revolution. Although initially criticised by some of France's "
    "leading artists and intellectuals for its design, it has since become a global cultural "
    "icon of France and one of the most recognisable structures in the world."
)
WIKI_URL = "https://en.wikipedia.org/wiki/Eiffel_Tower"
SNIPPET = (
    "It is named after the engineer Gustave Eiffel, whose company designed and built the tower "
    "from 1887 to 1889. Locally nicknamed La dame de fer ..."
)
PARAPHRASE = (
    "Gustave Eiffel's engineering firm put up the iron landmark between 1887 and 1889 for the "
    "Exposition Universelle, which marked a hundred years since the Revolution."
)
UNRELATED = "The Statue of Liberty was a gift from the people of France to the United States, dedicated in 1886."
LLM_ANSWER = "Yes. The tower was completed in 1889, built by Eiffel's company for the World's Fair in Paris."

CLAIM = Claim("c1", "The Eiffel Tower was built by Gustave Eiffel's company between 1887 and 1889.")


def wiki(factuality: bool | None = True, confidence: float = 0.9) -> Judgment:
    evidence = (Evidence("wikipedia", WIKI_LEAD, "Eiffel Tower", WIKI_URL),)
    return Judgment("wikipedia", factuality, confidence, evidence=evidence)


def google(factuality: bool | None = True, confidence: float = 0.8, url: str | None = None) -> Judgment:
    evidence = (
        Evidence("google", UNRELATED, "Statue of Liberty", "https://www.nps.gov/stli/"),
        Evidence("google", SNIPPET, "Eiffel Tower - Wikipedia", url or "https://www.toureiffel.example/history"),
    )
    return Judgment("google", factuality, confidence, evidence=evidence)


def travel(factuality: bool | None = True, confidence: float = 0.7) -> Judgment:
    evidence = (Evidence("corpus", PARAPHRASE, "Paris landmarks", "https://travel.example/paris/eiffel"),)
    return Judgment("travel", factuality, confidence, evidence=evidence)


def selfcheck(factuality: bool | None = True, confidence: float = 0.6) -> Judgment:
    return Judgment("llm", factuality, confidence, evidence=(Evidence("selfcheck", LLM_ANSWER, "answer 1"),))


def test_shingles_lowercase_strip_punctuation() -> None:
    assert shingles("The tower, in PARIS! was built in 1889.") == shingles("the tower in paris was built in 1889")
    assert shingles("two words") == frozenset({("two", "words")})
    assert shingles(" ... ") == frozenset()


def test_copied_snippet_vs_paraphrase_vs_unrelated() -> None:
    copied = passage_similarity(SNIPPET, WIKI_LEAD)
    assert copied > 0.9
    # Plain Jaccard misses a snippet cut from a longer lead: the reason containment is the default.
    assert passage_similarity(SNIPPET, WIKI_LEAD, "jaccard") < 0.25
    assert passage_similarity(PARAPHRASE, WIKI_LEAD) < 0.1
    assert passage_similarity(UNRELATED, WIKI_LEAD) == 0.0
    assert passage_similarity(LLM_ANSWER, WIKI_LEAD) < 0.2
    assert passage_similarity(WIKI_LEAD, WIKI_LEAD, "jaccard") == 1.0


def test_best_pair_and_url_match() -> None:
    overlap = evidence_overlap(google().evidence, wiki().evidence)
    assert overlap.similarity > 0.9 and overlap.shared_url is None  # the snippet, not the unrelated first result
    assert not evidence_overlap(travel().evidence, wiki().evidence).dependent(0.5)
    # Same page, different texts: a URL match makes them dependent whatever the similarity.
    same_page = (Evidence("google", UNRELATED, url="http://en.wikipedia.org/wiki/Eiffel_Tower/#History"),)
    url_overlap = evidence_overlap(same_page, wiki().evidence)
    assert url_overlap.similarity == 0.0 and url_overlap.dependent(0.5)
    assert normalise_url("HTTPS://www.Example.org/a/") == normalise_url("http://example.org/a#x") == "example.org/a"
    assert normalise_url(None) is None and normalise_url("  ") is None


def test_dependent_groups() -> None:
    judgments = [wiki(), travel(), google(), selfcheck()]
    assert dependent_groups(judgments, 0.5) == [[0, 2]]
    # Dependence is about evidence, not verdicts: a disagreeing copier is still in the group.
    assert dependent_groups([wiki(), travel(), google(False)], 0.5) == [[0, 2]]
    assert dependent_groups([travel(), selfcheck()], 0.5) == []
    with pytest.raises(ValueError):
        dependent_groups(judgments, 0.0)


@pytest.mark.parametrize("threshold", [0.0, -0.5, 1.01, math.nan, math.inf])
def test_a_threshold_outside_0_to_1_is_refused_in_the_pinned_words(threshold: float) -> None:
    with pytest.raises(ValueError, match=r"^independence threshold must be in \(0, 1\], got "):
        dependent_groups([wiki(), google()], threshold)
    assert dependent_groups([wiki(), google()], 1.0) == dependent_groups([wiki(), google()], 1)


def test_merge_keeps_most_confident_of_agreeing_duplicates() -> None:
    judgments = (google(confidence=0.8), wiki(confidence=0.9), travel(), selfcheck())
    merged = merge_dependent(judgments, 0.5)
    assert [j.agent for j in merged] == ["wikipedia", "travel", "llm"]
    assert merged[0] is judgments[1]  # kept unchanged
    assert merge_map(judgments, 0.5) == {1: (0,)}
    assert merge_dependent(merged, 0.5) == merged  # idempotent


def test_merge_never_merges_disagreeing_or_abstaining_agents() -> None:
    disagree = (wiki(True), google(False), travel())
    assert merge_dependent(disagree, 0.5) == disagree
    abstained = (wiki(None, 0.0), google(None, 0.0))
    assert merge_dependent(abstained, 0.5) == abstained
    # A disagreeing agent that overlaps both agreeing ones must not chain them together.
    bridge = Judgment("bridge", False, 0.5, evidence=(Evidence("x", WIKI_LEAD), Evidence("x", PARAPHRASE)))
    assert [j.agent for j in merge_dependent((wiki(), bridge, travel()), 0.5)] == ["wikipedia", "bridge", "travel"]


def test_mafc_counts_duplicated_agents_once() -> None:
    scorer, rule = MAFCScorer(), ThresholdRule(thresholds=(0.5,))
    verdict = score_text(CLAIM.text, [(CLAIM, (wiki(True, 0.9), google(True, 0.9), travel(False, 0.9)))], scorer, rule)
    # Before: two true votes of 0.9 against one false: V = 0.9 (log2 3 - 1), U = log2 4 = 2.
    before = (0.9 * (math.log2(3) - 1) + 2) / 4
    assert verdict.claims[0].score == pytest.approx(before)

    merged = apply_independence(verdict, 0.5)
    assert merged.score is None and merged.claims[0].score is None  # the caller re-scores
    assert [j.agent for j in merged.claims[0].judgments] == ["wikipedia", "travel"]
    assert merged.usage.notes == (
        "independence: claim c1: google merged into wikipedia (near-duplicate evidence, 1.00)",
    )
    rescored = rescore(merged, scorer, rule)
    # After: one true, one false, both 0.9: V = 0, score 0.5 -> FALSE at the binary threshold.
    assert rescored.claims[0].score == pytest.approx(0.5)
    assert rescored.label is Label.FALSE and verdict.label is Label.TRUE
    # Without evidence (the authors' replayed scores) nothing is merged, even when agents agree.
    replay = [Judgment.from_signed(a, 0.9) for a in ("Google", "Wikipedia", "LLM")]
    bare = score_text(CLAIM.text, [(CLAIM, replay)], scorer, rule)
    assert apply_independence(bare, 0.5).claims[0].judgments == tuple(replay)


def test_false_consensus_rate_hand_computed() -> None:
    t = [Judgment.from_signed(a, w) for a, w in (("g", 0.9), ("w", 0.8), ("l", 0.95))]
    f = [Judgment.from_signed(a, w) for a, w in (("g", -0.9), ("w", -0.7))]
    claims = [
        (t, True),  # confident consensus TRUE, right
        (t, False),  # confident consensus TRUE, wrong
        (f, True),  # confident consensus FALSE, wrong
        ([*t[:2], Judgment("l", None)], True),  # abstention ignored: consensus, right
        ([Judgment.from_signed("g", 0.9), Judgment.from_signed("w", 0.6)], False),  # 0.6 < 0.7: no consensus
        ([Judgment.from_signed("g", 0.9), Judgment.from_signed("w", -0.9)], False),  # disagreement
        ([Judgment.from_signed("g", 0.9), Judgment("w", None)], False),  # one vote only
    ]
    # Four confident consensuses, two wrong.
    assert false_consensus_rate(claims) == pytest.approx(2 / 4)
    # With min_confidence 0.5 the 0.6 claim joins (consensus TRUE, gold FALSE: wrong): 3 / 5.
    assert false_consensus_rate(claims, min_confidence=0.5) == pytest.approx(3 / 5)
    assert confident_consensus(f) is False and confident_consensus(t[:1]) is None
    assert false_consensus_rate([]) == 0.0


def test_evidence_independence_rate() -> None:
    # Agreeing pairs with evidence: (wiki, google) dependent, (wiki, travel) and (google, travel) independent.
    # The disagreeing llm is left out of every pair.
    claim = [wiki(), google(), travel(), selfcheck(False)]
    assert evidence_independence_rate([claim]) == pytest.approx(2 / 3)
    assert evidence_independence_rate([[Judgment.from_signed("g", 0.9), Judgment.from_signed("w", 0.9)]]) == 0.0
