"""Label rules: from scores to TRUE / PARTLY TRUE / FALSE / UNVERIFIED."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from factcheck.errors import ConfigError
from factcheck.options import setting
from factcheck.plugin import LabelRule
from factcheck.types import ClaimVerdict, Label

# Scores live in [0, 1]; [-1, 1] also admits the authors' unmapped average.
LOWEST_THRESHOLD, HIGHEST_THRESHOLD = -1.0, 1.0


def threshold_claim_label(score: float | None, threshold: float) -> Label:
    """A claim is TRUE when its score is above ``threshold`` (binary, as in the paper)."""
    if score is None:
        return Label.UNVERIFIED
    return Label.TRUE if score > threshold else Label.FALSE


@dataclass(frozen=True)
class ThresholdRule(LabelRule):
    """The paper's rule: threshold the scores.

    A claim is TRUE when its score is above ``claim_threshold``. A text is
    labelled from its score: with one threshold ``t``, TRUE above ``t`` and
    FALSE otherwise (binary); with two ``(lo, hi)``, FALSE at or below ``lo``,
    TRUE at or above ``hi``, PARTLY TRUE between (paper: 0.33 / 0.67). ``earned``
    (off: the paper's rule as published) calls a text FALSE only on a strong FALSE claim.
    """

    name = "threshold"
    claim_threshold: float = setting(0.5, minimum=LOWEST_THRESHOLD, maximum=HIGHEST_THRESHOLD)
    thresholds: tuple[float, ...] = (0.33, 0.67)
    earned: bool = False  # the paper's rule as published; true: FALSE only on a strong FALSE claim

    def __post_init__(self) -> None:
        super().__post_init__()  # the declared ranges
        # A tuple's items are not range-checked by the declarations, so by hand, in the same words.
        for value in self.thresholds:
            if not (isinstance(value, int | float) and LOWEST_THRESHOLD <= value <= HIGHEST_THRESHOLD):
                raise ConfigError(f"threshold: thresholds must be a number in [-1, 1], got {value!r}")
        if len(self.thresholds) not in (1, 2) or list(self.thresholds) != sorted(self.thresholds):
            raise ConfigError(
                f"threshold: thresholds must be one value (binary) or two ascending values, got {self.thresholds!r}"
            )

    def claim_label(self, score: float | None) -> Label:
        return threshold_claim_label(score, self.claim_threshold)

    def text_label(self, score: float | None, claims: Sequence[ClaimVerdict]) -> Label:
        if score is None:
            return Label.UNVERIFIED
        if len(self.thresholds) == 1:
            return Label.TRUE if score > self.thresholds[0] else Label.FALSE
        low, high = self.thresholds
        if score <= low:
            return Label.FALSE
        if score >= high:
            return Label.TRUE
        return Label.PARTLY_TRUE


@dataclass(frozen=True)
class ClaimThresholdRule(LabelRule):
    """Base of rules that label a claim TRUE above ``claim_threshold`` and differ in how they label texts."""

    claim_threshold: float = setting(0.5, minimum=LOWEST_THRESHOLD, maximum=HIGHEST_THRESHOLD)
    earned: bool = True  # a text is FALSE only on a strong FALSE claim (earned_text_label)

    def claim_label(self, score: float | None) -> Label:
        return threshold_claim_label(score, self.claim_threshold)


@dataclass(frozen=True)
class ComposeRule(ClaimThresholdRule):
    """Compose claim labels: TRUE if every verified claim is TRUE, FALSE if every one
    is FALSE, PARTLY TRUE otherwise. Unverified claims are left out."""

    name = "compose"

    def text_label(self, score: float | None, claims: Sequence[ClaimVerdict]) -> Label:
        labels = {c.label for c in claims if c.verified}
        if not labels:
            return Label.UNVERIFIED
        if labels == {Label.TRUE}:
            return Label.TRUE
        if labels == {Label.FALSE}:
            return Label.FALSE
        return Label.PARTLY_TRUE


@dataclass(frozen=True)
class ProbableRule(ClaimThresholdRule):
    """The most probable text label, reading claim scores as independent probabilities of TRUE.

    With ``p_i`` the verified claims' scores: P(TRUE) = prod p_i, P(FALSE) =
    prod (1 - p_i), P(PARTLY TRUE) = 1 - both; the label is the largest. Unlike
    thresholding the mean, one confident refutation among confident
    confirmations makes a text PARTLY TRUE, whatever the other claims' number.
    Claims are labelled as by ``threshold``.
    """

    name = "probable"

    def text_label(self, score: float | None, claims: Sequence[ClaimVerdict]) -> Label:
        probabilities = [min(1.0, max(0.0, c.score)) for c in claims if c.score is not None]
        if not probabilities:
            return Label.UNVERIFIED
        all_true = math.prod(probabilities)
        all_false = math.prod(1 - p for p in probabilities)
        partly = 1 - all_true - all_false
        best = max(all_true, all_false, partly)
        if best == all_true:
            return Label.TRUE
        return Label.FALSE if best == all_false else Label.PARTLY_TRUE
