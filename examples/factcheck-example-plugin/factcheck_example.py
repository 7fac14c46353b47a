"""An example factcheck plugin: a tiny glossary source and a cautious scorer.

Install it with ``pip install ./examples/factcheck-example-plugin``; then
``factcheck plugins`` lists it and ``factcheck check TEXT --source glossary``
adds a ``glossary`` agent to the check.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import factcheck
from factcheck.plugin import Scorer, Source, hookimpl

GLOSSARY = {
    "Eiffel Tower": "The Eiffel Tower is a wrought-iron lattice tower in Paris, France, completed in 1889.",
    "Great Wall": "The Great Wall of China is a series of fortifications in northern China.",
    "Mount Everest": "Mount Everest, on the border of Nepal and China, is Earth's highest mountain above sea level.",
}


@dataclass(frozen=True)
class GlossarySource(Source):
    """Returns the glossary entries whose term appears in the claim."""

    name = "glossary"
    case_sensitive: bool = False

    async def retrieve(self, claim: factcheck.Claim) -> list[factcheck.Evidence]:
        text = claim.text if self.case_sensitive else claim.text.lower()
        return [
            factcheck.Evidence(source=self.name, title=term, text=entry, url=None)
            for term, entry in GLOSSARY.items()
            if (term if self.case_sensitive else term.lower()) in text
        ]


@dataclass(frozen=True)
class CautiousScorer(Scorer):
    """A claim is only as credible as its least convinced agent: min of (w + 1) / 2."""

    name = "cautious"

    def score_votes(self, votes: Sequence[factcheck.Judgment]) -> float:
        return min((j.signed_score + 1) / 2 for j in votes)


@hookimpl
def register_sources(register):
    register(GlossarySource())


@hookimpl
def register_scorers(register):
    register(CautiousScorer())
