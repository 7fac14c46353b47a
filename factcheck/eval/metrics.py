"""Classification metrics, bootstrap confidence intervals and calibration error.

Predictions may include UNVERIFIED (the check abstained): it is never a gold
class, so it counts as wrong for accuracy and recall and appears as its own
column of the confusion matrix.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from itertools import combinations

from factcheck.independence import evidence_overlap
from factcheck.types import Judgment, Label


@dataclass(frozen=True)
class ClassScores:
    """Precision, recall, F1 and support of one gold class."""

    precision: float
    recall: float
    f1: float
    support: int


def _ratio(numerator: float, denominator: float) -> float:
    return numerator / denominator if denominator else 0.0


def accuracy(gold: Sequence[Label], predicted: Sequence[Label]) -> float:
    """Share of texts whose predicted label is the gold label."""
    return _ratio(sum(g == p for g, p in zip(gold, predicted, strict=True)), len(gold))


def per_class(gold: Sequence[Label], predicted: Sequence[Label], classes: Sequence[Label]) -> dict[Label, ClassScores]:
    """Precision, recall and F1 of each gold class (0 where undefined, as scikit-learn's zero_division=0)."""
    scores = {}
    for cls in classes:
        tp = sum(g == cls and p == cls for g, p in zip(gold, predicted, strict=True))
        predicted_cls = sum(p == cls for p in predicted)
        support = sum(g == cls for g in gold)
        precision, recall = _ratio(tp, predicted_cls), _ratio(tp, support)
        scores[cls] = ClassScores(precision, recall, _ratio(2 * precision * recall, precision + recall), support)
    return scores


def macro_f1(gold: Sequence[Label], predicted: Sequence[Label], classes: Sequence[Label]) -> float:
    """Unweighted mean of the classes' F1."""
    return sum(s.f1 for s in per_class(gold, predicted, classes).values()) / len(classes)


def confusion_matrix(
    gold: Sequence[Label], predicted: Sequence[Label], classes: Sequence[Label]
) -> tuple[tuple[Label, ...], list[list[int]]]:
    """Counts with gold classes as rows and predictions as columns (UNVERIFIED added as a column if predicted)."""
    columns = tuple(classes) + ((Label.UNVERIFIED,) if Label.UNVERIFIED in predicted else ())
    matrix = [[0] * len(columns) for _ in classes]
    for g, p in zip(gold, predicted, strict=True):
        if g in classes and p in columns:
            matrix[classes.index(g)][columns.index(p)] += 1
    return columns, matrix


def bootstrap_ci(
    gold: Sequence[Label],
    predicted: Sequence[Label],
    metric: Callable[[Sequence[Label], Sequence[Label]], float],
    *,
    resamples: int = 1000,
    seed: int = 0,
    level: float = 0.95,
) -> tuple[float, float]:
    """Percentile bootstrap interval of ``metric``, resampling texts with replacement."""
    rng = random.Random(seed)
    n = len(gold)
    values = []
    for _ in range(resamples):
        idx = [rng.randrange(n) for _ in range(n)]
        values.append(metric([gold[i] for i in idx], [predicted[i] for i in idx]))
    values.sort()
    tail = (1 - level) / 2
    return values[int(tail * resamples)], values[min(resamples - 1, int((1 - tail) * resamples))]


def reliability(scores: Sequence[float], outcomes: Sequence[bool], bins: int = 10) -> list[tuple[float, float, int]]:
    """``(mean score, share of TRUE outcomes, count)`` for each non-empty equal-width bin of the score."""
    members: list[list[int]] = [[] for _ in range(bins)]
    for i, score in enumerate(scores):
        members[min(bins - 1, max(0, int(score * bins)))].append(i)  # a score of 1.0 joins the top bin
    return [(sum(scores[i] for i in m) / len(m), sum(outcomes[i] for i in m) / len(m), len(m)) for m in members if m]


def expected_calibration_error(scores: Sequence[float], outcomes: Sequence[bool], bins: int = 10) -> float:
    """ECE of scores read as P(TRUE): over the bins of :func:`reliability`, the count-weighted
    mean of |mean score - share of TRUE outcomes|."""
    if not scores:
        return 0.0
    return sum(count * abs(mean - share) for mean, share, count in reliability(scores, outcomes, bins)) / len(scores)


def confident_consensus(judgments: Sequence[Judgment], min_confidence: float = 0.7) -> bool | None:
    """The verdict a claim's agents reached unanimously and confidently, else ``None``.

    Unanimous and confident: at least two agents voted (abstentions are left
    out), all with the same factuality, each with confidence >= ``min_confidence``.
    """
    votes = [j for j in judgments if not j.abstained]
    if len(votes) < 2 or any(j.confidence < min_confidence for j in votes):
        return None
    verdicts = {j.factuality for j in votes}
    return votes[0].factuality if len(verdicts) == 1 else None


def false_consensus_rate(claims: Sequence[tuple[Sequence[Judgment], bool]], min_confidence: float = 0.7) -> float:
    """ECMR's false-consensus rate: of the claims on which the agents reached a confident
    consensus (:func:`confident_consensus`), the share whose consensus contradicts the gold
    truth (the ``bool`` of each pair). 0 when no claim reached one."""
    reached = [
        (agreed, gold)
        for judgments, gold in claims
        if (agreed := confident_consensus(judgments, min_confidence)) is not None
    ]
    return _ratio(sum(agreed != gold for agreed, gold in reached), len(reached))


def evidence_independence_rate(claims: Sequence[Sequence[Judgment]], threshold: float = 0.5) -> float:
    """Share of agreeing agent pairs (same factuality, both with evidence) whose evidence is not
    near-duplicate nor the same URL (:mod:`factcheck.independence`). Pairs where an agent has no
    evidence cannot be assessed and are left out; 0 when no pair is left."""
    independent = total = 0
    for judgments in claims:
        votes = [j for j in judgments if not j.abstained and j.evidence]
        for a, b in combinations(votes, 2):
            if a.factuality == b.factuality:
                total += 1
                independent += not evidence_overlap(a.evidence, b.evidence).dependent(threshold)
    return _ratio(independent, total)
