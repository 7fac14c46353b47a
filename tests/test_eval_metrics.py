"""Metrics against hand-computed values and scikit-learn's."""

import random

import pytest

from factcheck.eval.metrics import (
    accuracy,
    bootstrap_ci,
    confusion_matrix,
    expected_calibration_error,
    macro_f1,
    per_class,
    reliability,
)
from factcheck.types import Label

T, F, P, U = Label.TRUE, Label.FALSE, Label.PARTLY_TRUE, Label.UNVERIFIED
CLASSES = [T, P, F]
GOLD = [T, T, T, P, P, F, F, F]
PRED = [T, T, P, P, F, F, F, U]


def test_hand_computed_values() -> None:
    assert accuracy(GOLD, PRED) == pytest.approx(5 / 8)
    scores = per_class(GOLD, PRED, CLASSES)
    # TRUE: tp 2, predicted 2, support 3; PARTLY: tp 1, predicted 2, support 2; FALSE: tp 2, predicted 3, support 3
    assert (scores[T].precision, scores[T].recall) == (pytest.approx(1.0), pytest.approx(2 / 3))
    assert (scores[P].precision, scores[P].recall) == (pytest.approx(0.5), pytest.approx(0.5))
    assert (scores[F].precision, scores[F].recall) == (pytest.approx(2 / 3), pytest.approx(2 / 3))
    assert macro_f1(GOLD, PRED, CLASSES) == pytest.approx((0.8 + 0.5 + 2 / 3) / 3)


def test_confusion_matrix_adds_an_unverified_column_only_when_predicted() -> None:
    columns, matrix = confusion_matrix(GOLD, PRED, CLASSES)
    assert columns == (T, P, F, U)
    assert matrix == [[2, 1, 0, 0], [0, 1, 1, 0], [0, 0, 2, 1]]
    assert confusion_matrix([T, F], [T, F], [T, F])[0] == (T, F)


def test_agrees_with_scikit_learn() -> None:
    metrics = pytest.importorskip("sklearn.metrics")
    rng = random.Random(1)
    gold = [rng.choice(CLASSES) for _ in range(300)]
    pred = [rng.choice([*CLASSES, U]) for _ in range(300)]
    names = [str(c) for c in CLASSES]
    g, p = [str(x) for x in gold], [str(x) for x in pred]
    assert accuracy(gold, pred) == pytest.approx(metrics.accuracy_score(g, p))
    assert macro_f1(gold, pred, CLASSES) == pytest.approx(
        metrics.f1_score(g, p, labels=names, average="macro", zero_division=0)
    )
    ours = per_class(gold, pred, CLASSES)
    precision, recall, f1, support = metrics.precision_recall_fscore_support(g, p, labels=names, zero_division=0)
    for i, cls in enumerate(CLASSES):
        assert (ours[cls].precision, ours[cls].recall, ours[cls].f1, ours[cls].support) == pytest.approx(
            (precision[i], recall[i], f1[i], support[i])
        )
    expected = metrics.confusion_matrix(g, p, labels=[*names, str(U)])[:3].tolist()
    assert confusion_matrix(gold, pred, CLASSES)[1] == expected


def test_bootstrap_ci_brackets_the_estimate_and_is_seeded() -> None:
    low, high = bootstrap_ci(GOLD * 10, PRED * 10, accuracy)
    assert low < accuracy(GOLD, PRED) < high
    assert (low, high) == bootstrap_ci(GOLD * 10, PRED * 10, accuracy)
    assert bootstrap_ci([T] * 20, [T] * 20, accuracy) == (1.0, 1.0)


def test_expected_calibration_error() -> None:
    # two bins: 0.2 with 1/4 true (gap 0.05), 0.9 with 3/4 true (gap 0.15); weights 1/2 each
    scores = [0.2] * 4 + [0.9] * 4
    outcomes = [True, False, False, False, True, True, True, False]
    assert expected_calibration_error(scores, outcomes) == pytest.approx(0.1)
    assert expected_calibration_error([1.0, 0.0], [True, False]) == pytest.approx(0.0)
    assert reliability([1.0, 0.95], [True, True]) == [(pytest.approx(0.975), 1.0, 2)]  # 1.0 joins the top bin
