"""Registers the built-in scorers and label rules through the public hook."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from factcheck.plugin import hookimpl
from factcheck.scoring.baselines import AverageScorer, MajorityScorer, NormalisedSumScorer
from factcheck.scoring.labels import ComposeRule, ProbableRule, ThresholdRule
from factcheck.scoring.mafc import MAFCScorer
from factcheck.scoring.pamas import PAMASScorer


@hookimpl
def register_scorers(register: Callable[[Any], None]) -> None:
    for component in (
        MAFCScorer(),
        AverageScorer(),
        NormalisedSumScorer(),
        MajorityScorer(),
        PAMASScorer(),
        ThresholdRule(),
        ComposeRule(),
        ProbableRule(),
    ):
        register(component)
