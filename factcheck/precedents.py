"""How a precedent passage is marked: the ``memory`` source and a ``factcheck-memory:<id>/<label>`` url.

A leaf module (it imports only the domain types). The source's name itself is
:data:`factcheck.types.PRECEDENT_SOURCE`, which the code that takes evidence from any source
(:func:`factcheck.calls.usable_evidence`) reads without importing the memory.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from factcheck.types import PRECEDENT_SOURCE, Evidence, Judgment

SOURCE = PRECEDENT_SOURCE
URL_PREFIX = "factcheck-memory:"
_URL = re.compile(r"factcheck-memory:(\d+)/(TRUE|FALSE)")


def precedent_url(case_id: int, label: str) -> str:
    return f"{URL_PREFIX}{case_id}/{label}"


def precedent_of(evidence: Evidence) -> tuple[int, bool] | None:
    """``(case id, the label is TRUE)`` of a precedent passage; ``None`` for any other passage."""
    match = _URL.fullmatch(evidence.url or "") if evidence.source == SOURCE else None
    return (int(match.group(1)), match.group(2) == "TRUE") if match else None


def ruled_by(reviewers: Sequence[str]) -> str:
    """``"a reviewer (key-1)"``, ``"2 reviewers (key-1, key-3)"``, ``"the gold labels of scifact"``."""
    if len(reviewers) == 1 and reviewers[0].startswith("gold:"):
        return f"the gold labels of {reviewers[0].removeprefix('gold:')}"
    who = ", ".join(reviewers[:3]) + (", ..." if len(reviewers) > 3 else "")
    return f"a reviewer ({who})" if len(reviewers) == 1 else f"{len(reviewers)} reviewers ({who})"


def lent_precedents(judgments: Sequence[Judgment]) -> list[Evidence]:
    """The precedents that lent a claim its memory verdict: the deciding passage of each judgment that gave a
    verdict from precedents (what the report shows under the claim)."""
    return [
        j.evidence[0]
        for j in judgments
        if j.factuality is not None and j.evidence and precedent_of(j.evidence[0]) is not None
    ]


__all__ = ["SOURCE", "URL_PREFIX", "lent_precedents", "precedent_of", "precedent_url", "ruled_by"]
