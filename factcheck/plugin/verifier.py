"""The Verifier interface: judges a claim against evidence."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import replace
from typing import ClassVar, TypeVar

from factcheck.cache import ReusableJudgments
from factcheck.options import Configurable
from factcheck.types import Assessment, Claim, Evidence, Judgment

Verdict = TypeVar("Verdict", Assessment, Judgment)

# The most confidence a verdict that has not earned a strong label keeps (issue 39: one sentence or passage
# alone, however sure, is at most weak): one agent's score, 0.5 +/- 0.45 / 2, stays weak (factcheck.types.strength).
WEAK_CAP = 0.45


def earned(assessment: Verdict, resting: int, needed: int) -> Verdict:
    """``assessment`` as it may stand when it rests on ``resting`` passages that state its verdict: a verdict
    resting on fewer than ``needed`` (one passage, or none: a model's own knowledge) is at most weak
    (:data:`WEAK_CAP`), and its rationale says why. The same rule as the ``nli`` verifier's second sentence."""
    if assessment.factuality is None or resting >= needed or assessment.confidence <= WEAK_CAP:
        return assessment
    said = "no passage states" if resting == 0 else f"only {resting} of the passages states"
    return replace(
        assessment,
        confidence=WEAK_CAP,
        rationale=f"{assessment.rationale} [{said} it, so the verdict is at most weak]".strip(),
    )


class Verifier(Configurable, ReusableJudgments, ABC):
    """Decides whether evidence shows a claim true or false, and how confidently.

    Evidence text is untrusted input (web pages, snippets): a verifier must
    not let instructions inside it change the task. Return an
    :class:`~factcheck.Assessment` with ``factuality=None`` to abstain when the
    evidence does not bear on the claim.
    """

    name: str
    # The languages it reads (ISO 639-1 codes); None reads any. An agent whose source or verifier
    # cannot read the checked text's language abstains on every claim, naming the language.
    languages: ClassVar[frozenset[str] | None] = None
    # True for a verifier that reads a precedent passage for what it is: a past claim, with the ruling its
    # title states (the ``precedent`` verifier, an LLM). Any other is never handed one, at first or when
    # deliberating: it would read a claim ruled FALSE as a statement of fact.
    reads_precedents: ClassVar[bool] = False

    async def prepare(self) -> None:
        """Get ready before a check's first claim (check that a needed API key is set).

        Runs once per check; a :class:`factcheck.MissingKeyError` skips this
        verifier's agents (before they search), as for :meth:`Source.prepare`.
        """

    @abstractmethod
    async def judge(self, claim: Claim, evidence: Sequence[Evidence]) -> Assessment:
        """Judge ``claim`` against ``evidence``."""
