"""The `probable` label rule: the most probable text label from claim probabilities."""

from factcheck import Label
from factcheck.scoring.labels import ProbableRule
from factcheck.types import Claim, ClaimVerdict


def claims(*scores: float | None) -> list[ClaimVerdict]:
    return [ClaimVerdict(Claim(f"c{i}", "x"), (), s) for i, s in enumerate(scores)]


def test_most_probable_label() -> None:
    rule = ProbableRule()
    assert rule.text_label(None, claims(0.99, 0.98, None)) is Label.TRUE  # 0.970 all true
    assert rule.text_label(None, claims(0.02, 0.01)) is Label.FALSE
    assert rule.text_label(None, claims(0.8, 0.8, 0.8, 0.8)) is Label.PARTLY_TRUE  # all true: only 0.41
    assert rule.text_label(None, claims(0.95, 0.05)) is Label.PARTLY_TRUE
    assert rule.text_label(None, claims(None)) is Label.UNVERIFIED
    assert rule.claim_label(0.6) is Label.TRUE
