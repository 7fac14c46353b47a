"""The steps of one check, as :meth:`factcheck.Checker.stream` yields them.

Every check is this sequence: one :class:`ClaimsFound` (before any claim is
judged), one :class:`ClaimChecked` per claim as soon as it is done (in
completion order), then one :class:`TextChecked`, always last. Where a
deliberation policy sends a claim on past its first round, one
:class:`ClaimDeliberated` per recorded step comes before that claim's
:class:`ClaimChecked` (steps of different claims may interleave; ``index``
says whose). ``acheck`` keeps only the last; the server sends each as a
Server-Sent Event (``name`` and ``data`` are the event's name and JSON there).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

from factcheck.types import Claim, ClaimVerdict, DeliberationStep, SkippedSentence, TextVerdict


@dataclass(frozen=True)
class ClaimsFound:
    """The claims the check will judge (as extracted, before their times are read), and the sentences left out."""

    claims: tuple[Claim, ...]
    skipped: tuple[SkippedSentence, ...] = ()
    name: ClassVar[str] = "claims"

    @property
    def data(self) -> dict[str, Any]:
        return {"claims": [claim.to_dict() for claim in self.claims]}


@dataclass(frozen=True)
class ClaimChecked:
    """One claim judged and scored; ``index`` is its place among :attr:`ClaimsFound.claims`."""

    index: int
    verdict: ClaimVerdict
    name: ClassVar[str] = "claim"

    @property
    def data(self) -> dict[str, Any]:
        return {"index": self.index, "claim": self.verdict.to_dict()}


@dataclass(frozen=True)
class ClaimDeliberated:
    """One step of a claim's deliberation, as soon as it is taken (before the claim's :class:`ClaimChecked`);
    ``index`` is the claim's place among :attr:`ClaimsFound.claims`, ``policy`` the deliberation policy.

    Its data has no ``notes``: what a reader should know of the deliberation comes with the claim."""

    index: int
    policy: str
    step: DeliberationStep
    name: ClassVar[str] = "deliberation"

    @property
    def data(self) -> dict[str, Any]:
        return {"index": self.index, "policy": self.policy, "step": self.step.to_dict()}


@dataclass(frozen=True)
class TextChecked:
    """The checked text. ``partial``: a deadline cut the check short (the claims not reached abstain, saying so).
    ``not_reached``: the places of those claims, which the data marks ``"checked": false``: a reader tells a
    claim nobody checked from one the agents could not verify (both UNVERIFIED)."""

    verdict: TextVerdict
    partial: bool = False
    not_reached: tuple[int, ...] = ()
    name: ClassVar[str] = "verdict"

    @property
    def data(self) -> dict[str, Any]:
        data = {**self.verdict.to_dict(), "partial": self.partial}
        if self.not_reached:
            claims = data["claims"]
            for index in self.not_reached:
                claims[index] = {**claims[index], "checked": False}
        return data


CheckEvent = ClaimsFound | ClaimDeliberated | ClaimChecked | TextChecked

__all__ = ["CheckEvent", "ClaimChecked", "ClaimDeliberated", "ClaimsFound", "TextChecked"]
