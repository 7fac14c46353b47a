"""The MAFC paper's baselines: average, normalised sum and majority vote."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from statistics import fmean

from factcheck.plugin import Scorer
from factcheck.types import Judgment


def average_score(signed: Sequence[float], remap: bool = True) -> float:
    """``mean(w)`` in [-1, 1]; with ``remap``, ``(mean(w) + 1) / 2`` in [0, 1]."""
    mean = fmean(signed)
    return (mean + 1) / 2 if remap else mean


def normalised_sum_score(signed: Sequence[float]) -> float:
    """``(sum(w) + (n + 1)) / (2 (n + 1))``: the authors' fixed bounds, so scores stay inside (0, 1)."""
    n = len(signed)
    return (sum(signed) + (n + 1)) / (2 * (n + 1))


def majority_score(votes: Sequence[bool]) -> float:
    """The share of agents judging true: above 0.5 exactly when more say true than false."""
    return sum(votes) / len(votes)


@dataclass(frozen=True)
class AverageScorer(Scorer):
    """Mean signed score. ``remap=False`` reproduces the authors' baseline, scored in [-1, 1]."""

    name = "average"
    remap: bool = True

    def score_votes(self, votes: Sequence[Judgment]) -> float:
        return average_score([j.signed_score for j in votes], self.remap)


@dataclass(frozen=True)
class NormalisedSumScorer(Scorer):
    """Sum of signed scores mapped to [0, 1] with the authors' bounds ``n + 1``."""

    name = "normsum"

    def score_votes(self, votes: Sequence[Judgment]) -> float:
        return normalised_sum_score([j.signed_score for j in votes])


@dataclass(frozen=True)
class MajorityScorer(Scorer):
    """Majority vote, ignoring confidences: the share of agents that judged the claim true."""

    name = "majority"

    def score_votes(self, votes: Sequence[Judgment]) -> float:
        return majority_score([bool(j.factuality) for j in votes])
