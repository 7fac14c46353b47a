"""Harm: how often a check accuses a true claim or accepts a false one, and how thresholds bound it.

The figures a harm report prints per set (``bench/harm.py``, ``docs/harm.md``), over claims with a gold
TRUE or FALSE label:

- **coverage**: the share of claims given a verdict (TRUE or FALSE, not UNVERIFIED);
- **selective accuracy**: the share of those verdicts that are right;
- **false accusation**: gold TRUE claims labelled FALSE, over the gold TRUE claims;
- **myth acceptance**: gold FALSE claims labelled TRUE, over the gold FALSE claims;
- **strong wrong**: wrong verdicts that were strong (:func:`factcheck.types.strength`).

:func:`conformal_threshold` picks a verdict threshold by **conformal risk control** (Angelopoulos, Bates, Fisch,
Lei and Schuster, ICLR 2024): for a loss that can only fall as the threshold rises (a gold TRUE claim labelled
FALSE when its refutation score reaches the threshold), the smallest threshold ``lambda`` with
``n / (n + 1) · R̂(lambda) + B / (n + 1) ≤ alpha`` has an expected loss on a new claim of at most ``alpha``, for claims
exchangeable with the ``n`` it was fitted on (``B = 1``, the largest a loss can be).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from factcheck.types import Label


@dataclass(frozen=True)
class Outcome:
    """One claim checked: its gold truth, the label given and how strong it was."""

    gold: bool
    label: Label
    strength: str | None = None


@dataclass(frozen=True)
class HarmFigures:
    """The harm report's figures for one set of claims (the module docstring defines each)."""

    claims: int
    gold_true: int
    gold_false: int
    answered: int
    right: int
    accused: int  # gold TRUE labelled FALSE
    accepted: int  # gold FALSE labelled TRUE
    strong_wrong: int

    @property
    def coverage(self) -> float:
        return _ratio(self.answered, self.claims)

    @property
    def selective_accuracy(self) -> float:
        """Right verdicts over verdicts given; NaN when none was given."""
        return self.right / self.answered if self.answered else math.nan

    @property
    def false_accusation(self) -> float:
        return _ratio(self.accused, self.gold_true)

    @property
    def myth_acceptance(self) -> float:
        return _ratio(self.accepted, self.gold_false)

    def to_dict(self) -> dict[str, float | int]:
        return {
            "claims": self.claims,
            "gold_true": self.gold_true,
            "gold_false": self.gold_false,
            "coverage": self.coverage,
            "selective_accuracy": self.selective_accuracy,
            "false_accusation": self.false_accusation,
            "myth_acceptance": self.myth_acceptance,
            "strong_wrong": self.strong_wrong,
        }


def _ratio(numerator: int, denominator: int) -> float:
    return numerator / denominator if denominator else 0.0


def harm_figures(outcomes: Iterable[Outcome]) -> HarmFigures:
    """The harm figures of ``outcomes``; a label other than TRUE or FALSE counts as no verdict."""
    rows = list(outcomes)
    answered = [o for o in rows if o.label in (Label.TRUE, Label.FALSE)]
    wrong = [o for o in answered if (o.label == Label.TRUE) != o.gold]
    return HarmFigures(
        claims=len(rows),
        gold_true=sum(o.gold for o in rows),
        gold_false=sum(not o.gold for o in rows),
        answered=len(answered),
        right=len(answered) - len(wrong),
        accused=sum(o.gold and o.label == Label.FALSE for o in rows),
        accepted=sum(not o.gold and o.label == Label.TRUE for o in rows),
        strong_wrong=sum(o.strength == "strong" for o in wrong),
    )


def risk_coverage(verdicts: Sequence[tuple[bool, bool, float]], total: int) -> list[tuple[float, float]]:
    """The risk-coverage curve of ``(gold, verdict, confidence)`` triples, one per claim answered at the
    loosest setting, over ``total`` claims: answering only the ``k`` surest, for each ``k``, the share of
    all claims answered and the share of those answers that are wrong. Ties in confidence enter together."""
    ranked = sorted(verdicts, key=lambda v: -v[2])
    points: list[tuple[float, float]] = []
    wrong = 0
    for k, (gold, verdict, confidence) in enumerate(ranked, 1):
        wrong += gold != verdict
        if k < len(ranked) and ranked[k][2] == confidence:
            continue
        points.append((k / total, wrong / k))
    return points


def conformal_threshold(scores: Sequence[float], alpha: float, grid: Sequence[float]) -> float | None:
    """The smallest threshold of ``grid`` whose conformal risk bound is at most ``alpha``.

    ``scores`` holds one value per calibration claim of the class that can be harmed (the gold TRUE claims,
    for a FALSE threshold): the score the rule would act on (its refutation probability, or ``-inf`` where
    the rule would never label it so). A claim is harmed at threshold ``λ`` when its score reaches ``λ``;
    that loss only falls as ``λ`` rises. ``None`` when no threshold of the grid is safe enough (too few
    calibration claims: ``1 / (n + 1)`` alone must stay below ``alpha``)."""
    n = len(scores)
    for threshold in sorted(grid):
        empirical = sum(score >= threshold for score in scores) / n if n else 1.0
        if n / (n + 1) * empirical + 1 / (n + 1) <= alpha:
            return float(threshold)
    return None
