"""The paper's baselines and the label rules."""

import pytest
from hypothesis import given
from hypothesis import strategies as st

from factcheck import ClaimVerdict, ConfigError, Judgment, Label
from factcheck.scoring.baselines import (
    AverageScorer,
    MajorityScorer,
    NormalisedSumScorer,
    average_score,
    normalised_sum_score,
)
from factcheck.scoring.labels import ComposeRule, ThresholdRule
from factcheck.types import Claim


def js(*signed: float) -> list[Judgment]:
    return [Judgment.from_signed(f"a{i}", w) for i, w in enumerate(signed)]


def test_average_without_remap_is_the_authors_mean() -> None:
    assert average_score([0.9, -0.5, 0.2], remap=False) == pytest.approx(0.2)
    assert AverageScorer(remap=False).score_claim(js(0.9, -0.5, 0.2)) == pytest.approx(0.2)


def test_average_remap_maps_into_unit_interval() -> None:
    assert AverageScorer().score_claim(js(0.9, -0.5, 0.2)) == pytest.approx(0.6)
    assert AverageScorer().score_claim(js(-1, -1)) == 0.0


def test_normalised_sum_uses_the_authors_bounds() -> None:
    # (0.9 + 0.9 - 0.9 + 4) / 8
    assert normalised_sum_score([0.9, 0.9, -0.9]) == pytest.approx(0.6125)
    assert NormalisedSumScorer().score_claim(js(1, 1, 1)) == pytest.approx(0.875)


def test_majority_ignores_confidence_and_ties_are_not_true() -> None:
    scorer = MajorityScorer()
    assert scorer.score_claim(js(0.1, 0.1, -1.0)) == pytest.approx(2 / 3)
    tie = scorer.score_claim(js(0.9, -0.1))
    assert tie == 0.5
    assert ThresholdRule().claim_label(tie) is Label.FALSE


signed_lists = st.lists(st.floats(min_value=-1, max_value=1, allow_nan=False), min_size=1, max_size=6)


@given(signed_lists)
def test_baseline_scores_lie_in_unit_interval(signed: list[float]) -> None:
    for scorer in (AverageScorer(), NormalisedSumScorer(), MajorityScorer()):
        score = scorer.score_claim(js(*signed))
        assert score is not None and 0.0 <= score <= 1.0


def verdict(score: float | None) -> ClaimVerdict:
    label = ThresholdRule().claim_label(score)
    return ClaimVerdict(Claim("c", "c"), (), score, label)


@pytest.mark.parametrize(
    ("score", "label"),
    [
        (0.33, Label.FALSE),
        (0.3301, Label.PARTLY_TRUE),
        (0.6699, Label.PARTLY_TRUE),
        (0.67, Label.TRUE),
        (None, Label.UNVERIFIED),
    ],
)
def test_three_level_thresholds(score: float | None, label: Label) -> None:
    assert ThresholdRule().text_label(score, []) is label


def test_binary_threshold() -> None:
    rule = ThresholdRule().configure(thresholds="0.5")
    assert rule.thresholds == (0.5,)
    assert rule.text_label(0.5, []) is Label.FALSE
    assert rule.text_label(0.5001, []) is Label.TRUE


def test_thresholds_must_ascend() -> None:
    with pytest.raises(ConfigError, match="ascending"):
        ThresholdRule(thresholds=(0.7, 0.3))


def test_each_threshold_is_range_checked_like_claim_threshold() -> None:
    assert ThresholdRule().configure(thresholds="-1,1").thresholds == (-1.0, 1.0)
    with pytest.raises(ConfigError, match=r"^threshold: thresholds must be a number in \[-1, 1\], got 1.5$"):
        ThresholdRule().configure(thresholds="0.3,1.5")
    with pytest.raises(ConfigError, match=r"^threshold: claim_threshold must be a number in \[-1, 1\], got 1.5$"):
        ThresholdRule(claim_threshold=1.5)


def test_compose_rule() -> None:
    rule = ComposeRule()
    assert rule.text_label(0.9, [verdict(0.9), verdict(0.8), verdict(None)]) is Label.TRUE
    assert rule.text_label(0.1, [verdict(0.1), verdict(0.2)]) is Label.FALSE
    assert rule.text_label(0.5, [verdict(0.9), verdict(0.2)]) is Label.PARTLY_TRUE
    assert rule.text_label(None, [verdict(None)]) is Label.UNVERIFIED


@given(signed_lists, st.data())
def test_raising_a_true_judgments_confidence_never_lowers_a_baseline_score(
    signed: list[float], data: st.DataObject
) -> None:
    i = data.draw(st.integers(0, len(signed) - 1))
    signed = [*signed[:i], abs(signed[i]), *signed[i + 1 :]]  # make judgment i a true one
    raised = [*signed[:i], data.draw(st.floats(min_value=signed[i], max_value=1.0)), *signed[i + 1 :]]
    for scorer in (AverageScorer(), NormalisedSumScorer(), MajorityScorer()):
        assert scorer.score_claim(js(*raised)) >= scorer.score_claim(js(*signed)) - 1e-12  # type: ignore[operator]
