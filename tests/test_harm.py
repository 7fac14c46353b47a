"""Issue 39: verdicts that do no harm. The harm figures, the conformal threshold, what makes a sentence about a
claim, and how a text's label and strength say what was decided."""

from __future__ import annotations

import math

import pytest

from factcheck import Claim, ClaimVerdict, Judgment, Label
from factcheck.eval.harm import Outcome, conformal_threshold, harm_figures, risk_coverage
from factcheck.scoring import text_verdict
from factcheck.scoring.labels import ComposeRule, ThresholdRule
from factcheck.scoring.mafc import MAFCScorer
from factcheck.verifiers.about import claim_parts

# --- the figures ------------------------------------------------------------------------------


def test_harm_figures_count_accusations_accepted_myths_and_strong_wrong_verdicts() -> None:
    outcomes = [
        Outcome(True, Label.TRUE, "strong"),
        Outcome(True, Label.FALSE, "weak"),  # a false accusation
        Outcome(True, Label.UNVERIFIED),
        Outcome(True, Label.UNVERIFIED),
        Outcome(False, Label.TRUE, "strong"),  # a myth accepted, strongly
        Outcome(False, Label.FALSE, "weak"),
    ]
    figures = harm_figures(outcomes)
    assert (figures.claims, figures.gold_true, figures.gold_false, figures.answered) == (6, 4, 2, 4)
    assert figures.coverage == pytest.approx(4 / 6)
    assert figures.selective_accuracy == pytest.approx(2 / 4)
    assert figures.false_accusation == pytest.approx(1 / 4)
    assert figures.myth_acceptance == pytest.approx(1 / 2)
    assert figures.strong_wrong == 1


def test_no_verdict_at_all_has_no_selective_accuracy_and_no_harm() -> None:
    figures = harm_figures([Outcome(True, Label.UNVERIFIED), Outcome(False, Label.UNVERIFIED)])
    assert figures.coverage == 0.0 and math.isnan(figures.selective_accuracy)
    assert figures.false_accusation == 0.0 and figures.myth_acceptance == 0.0


def test_the_risk_coverage_curve_answers_the_surest_first() -> None:
    # (gold, verdict, confidence): the surest two are right, the least sure is wrong; 4 claims in all.
    points = risk_coverage([(True, True, 0.9), (False, False, 0.8), (True, False, 0.2)], total=4)
    assert points == [(0.25, 0.0), (0.5, 0.0), (0.75, pytest.approx(1 / 3))]
    tied = risk_coverage([(True, True, 0.5), (True, False, 0.5)], total=2)
    assert tied == [(1.0, 0.5)]  # ties enter together


# --- conformal risk control ------------------------------------------------------------------


def test_the_conformal_threshold_is_the_smallest_whose_bound_holds() -> None:
    # 19 gold TRUE claims: one would be labelled FALSE from 0.5 up, another from 0.7 up, the rest never.
    scores = [0.5, 0.7] + [-math.inf] * 17
    grid = [0.3, 0.4, 0.5, 0.6, 0.7, 0.8]
    # At 0.6 one claim is harmed: 19/20 * 1/19 + 1/20 = 0.10; at 0.8 none: 0.05.
    assert conformal_threshold(scores, 0.10, grid) == 0.6
    assert conformal_threshold(scores, 0.05, grid) == 0.8
    # Too few claims to promise 0.04: even no harm at all bounds it by 1/20.
    assert conformal_threshold(scores, 0.04, grid) is None


def test_on_claims_it_is_exchangeable_with_the_threshold_keeps_the_rate_below_alpha() -> None:
    import random

    rng = random.Random(7)
    alpha, rates = 0.1, []
    for _ in range(200):
        calibration = [rng.random() for _ in range(60)]  # refutation scores of gold TRUE claims
        threshold = conformal_threshold(calibration, alpha, [i / 100 for i in range(101)])
        assert threshold is not None
        rates.append(sum(rng.random() >= threshold for _ in range(200)) / 200)
    assert sum(rates) / len(rates) <= alpha


# --- about the claim --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("claim", "sentence", "about"),
    [
        ("Aspirin lowers the risk of heart attacks.", "Low-dose aspirin reduced the number of heart attacks.", True),
        # Names aspirin and a risk, not heart attacks: on the topic, not about the claim.
        (
            "Aspirin lowers the risk of heart attacks.",
            "Aspirin use was associated with an increase in the risk of macular degeneration.",
            False,
        ),
        ("The Eiffel Tower is in Paris.", "The tower was completed on 31 March 1889.", False),
        ("The Eiffel Tower is in Paris.", "The Eiffel Tower is a lattice tower in Paris, France.", True),
        ("Insulin is produced by the liver.", "The pancreas secretes glucagon.", False),
    ],
)
def test_a_sentence_is_about_a_claim_when_it_names_its_subject_and_what_it_says(
    claim: str, sentence: str, about: bool
) -> None:
    missing = claim_parts(claim).missing(sentence)
    assert (missing is None) is about, missing


def test_an_antecedent_may_name_the_subject_but_the_sentence_must_say_the_relation() -> None:
    parts = claim_parts("The Eiffel Tower is in Paris.")
    in_context = "The Eiffel Tower is a lattice tower in Paris. It was completed in 1889."
    assert parts.missing(in_context) is None  # read whole, the antecedent says Paris
    assert parts.missing(in_context, own="It was completed in 1889.") is not None  # the sentence does not
    assert parts.missing("The tower stands in Paris.", own="It stands in Paris.") is None


def test_what_a_sentence_lacks_is_said_in_the_claims_own_words() -> None:
    missing = claim_parts("Insulin is produced by the liver.").missing("The pancreas secretes glucagon.")
    assert missing == "the claim's subject (Insulin)"


# --- what a text's label stands on -------------------------------------------------------------


def claim(number: int, text: str, *votes: tuple[bool, float]) -> tuple[Claim, list[Judgment]]:
    judgments = [Judgment(f"a{i}", v, c) for i, (v, c) in enumerate(votes)] or [Judgment("a0", None)]
    return Claim(f"c{number}", text), judgments


def verdict_of(rule: object, *claims: tuple[Claim, list[Judgment]]):  # type: ignore[no-untyped-def]
    from factcheck.scoring import score_claim

    scorer = MAFCScorer()
    scored: list[ClaimVerdict] = [score_claim(c, j, scorer, rule) for c, j in claims]  # type: ignore[arg-type]
    return text_verdict("text", scored, scorer, rule)  # type: ignore[arg-type]


def test_a_text_with_an_unverified_claim_is_never_a_strong_true_and_says_how_much_was_verified() -> None:
    # "Smoking causes lung cancer. Vaccines cause autism.": the second claim UNVERIFIED.
    verdict = verdict_of(
        ComposeRule(),
        claim(1, "Smoking causes lung cancer.", (True, 0.95)),
        claim(2, "Vaccines cause autism."),
    )
    assert verdict.label == Label.TRUE and verdict.strength == "weak"
    assert verdict.decided == "1 of 2 claims verified"
    assert verdict.to_dict()["claims_verified"] == 1
    whole = verdict_of(ComposeRule(), claim(1, "Smoking causes lung cancer.", (True, 0.95)))
    assert whole.strength == "strong" and whole.decided == "1 of 1 claim verified"


@pytest.mark.parametrize("rule", [ComposeRule(), ThresholdRule(earned=True)])
def test_a_text_is_never_false_on_weak_false_claims_alone(rule: object) -> None:
    weak = verdict_of(rule, claim(1, "X lowers Y.", (False, 0.4)))
    assert weak.label == Label.UNVERIFIED
    beside_true = verdict_of(rule, claim(1, "X lowers Y.", (False, 0.45)), claim(2, "Z is W.", (True, 0.45)))
    assert beside_true.label != Label.FALSE
    strong = verdict_of(rule, claim(1, "X lowers Y.", (False, 0.9)))
    assert strong.label == Label.FALSE and strong.strength == "strong"
