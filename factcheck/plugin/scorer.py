"""The Scorer and LabelRule interfaces.

A scorer turns the judgments of one claim into a credibility score and the
claim scores of a text into a text score; a label rule turns scores into
labels. Abstentions never reach a scorer: ``score_claim`` drops them, and a
claim on which every agent abstained has no score (UNVERIFIED).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from statistics import fmean

from factcheck.options import Configurable
from factcheck.types import ClaimVerdict, Judgment, Label


class Scorer(Configurable, ABC):
    """Scores claims from agents' judgments, and texts from claim scores."""

    name: str

    def score_claim(self, judgments: Sequence[Judgment]) -> float | None:
        """The claim's score, or ``None`` when every agent abstained."""
        votes = [j for j in judgments if not j.abstained]
        if not votes:
            return None
        return self.score_votes(votes)

    @abstractmethod
    def score_votes(self, votes: Sequence[Judgment]) -> float:
        """Score a claim from the judgments of the agents that did not abstain (at least one)."""

    def score_text(self, claim_scores: Sequence[float]) -> float | None:
        """The text's score from its verified claims' scores: their mean (MAFC), ``None`` if none."""
        return fmean(claim_scores) if claim_scores else None


def earned_text_label(label: Label, claims: Sequence[ClaimVerdict]) -> Label:
    """A text is FALSE only when one of its claims is a strong FALSE: FALSE must be earned. A text some rule
    would call FALSE on weak FALSE claims alone is PARTLY TRUE beside a TRUE claim, else UNVERIFIED. Applied
    by :meth:`LabelRule.settle` to every rule's text label whose ``earned`` option is on (a plugin's too)."""
    if label != Label.FALSE or any(c.label == Label.FALSE and c.strength == "strong" for c in claims):
        return label
    return Label.PARTLY_TRUE if any(c.label == Label.TRUE for c in claims) else Label.UNVERIFIED


class LabelRule(Configurable, ABC):
    """Turns claim and text scores into labels."""

    name: str

    @abstractmethod
    def claim_label(self, score: float | None) -> Label:
        """TRUE / FALSE for a scored claim, UNVERIFIED for ``None``."""

    @abstractmethod
    def text_label(self, score: float | None, claims: Sequence[ClaimVerdict]) -> Label:
        """TRUE / PARTLY TRUE / FALSE for a text, UNVERIFIED when no claim was verified."""

    def settle(self, label: Label, claims: Sequence[ClaimVerdict]) -> Label:
        """The text's label as shown: FALSE only on a strong FALSE claim
        (:func:`earned_text_label`), unless the rule's ``earned`` option is false (the
        paper's ``threshold`` rule, reproduced as published). A plugin's rule is settled so too."""
        return earned_text_label(label, claims) if getattr(self, "earned", True) else label
