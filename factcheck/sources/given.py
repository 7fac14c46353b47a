"""The ``given`` source: evidence supplied with the claim instead of retrieved.

Evaluation uses it to judge claims against their gold evidence (the verifier
alone, separating judging from retrieval); a library user can hand a checker
passages they already have.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from factcheck.plugin import Source, hookimpl
from factcheck.types import Claim, Evidence


@dataclass(frozen=True)
class GivenSource(Source):
    """Returns the passages given for the claim's text (none for a claim it does not know)."""

    name = "given"
    evidence: Mapping[str, tuple[Evidence, ...]] = field(default_factory=dict)

    async def retrieve(self, claim: Claim) -> list[Evidence]:
        return list(self.evidence.get(claim.text, ()))


@hookimpl
def register_sources(register: Callable[[Any], None]) -> None:
    register(GivenSource())
