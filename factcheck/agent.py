"""An evidence agent: a source paired with a verifier, and what its judgment of a claim depends on."""

from __future__ import annotations

import json
import unicodedata
from dataclasses import dataclass
from typing import Any

from factcheck.claimtime import reading_times
from factcheck.errors import ConfigError
from factcheck.plugin import Source, Verifier
from factcheck.types import Claim


def normalise_claim(text: str) -> str:
    """The form under which a claim's judgments are reused: Unicode-normalised, case and spacing folded.

    "Vitamin C  cures colds." and "vitamin c cures colds" are the same question
    to every agent; the final full stop and surrounding quotes do not change it.
    """
    folded = " ".join(unicodedata.normalize("NFKC", text).casefold().split())
    return folded.strip(" \"'\u201c\u201d\u2018\u2019").rstrip(".!").strip()


def answer_options(component: Source | Verifier) -> dict[str, Any]:
    """The component's options that can change its answers (its ``transport_options`` left out)."""
    return {k: v for k, v in component.options().items() if k not in component.transport_options}


@dataclass(frozen=True)
class Agent:
    """A named evidence agent: a source paired with a verifier."""

    name: str
    source: Source
    verifier: Verifier

    def __post_init__(self) -> None:
        if self.source.gives_precedents and not self.verifier.reads_precedents:
            raise ConfigError(
                f"agent {self.name!r}: the {self.source.name} source gives precedents (past claims and their "
                f"rulings), which the {self.verifier.name} verifier would read as statements of fact; pair it "
                "with a verifier that reads precedents (precedent, llm)"
            )

    def judgment_request(self, claim: Claim, llm: Any) -> dict[str, Any] | None:
        """What this agent's judgment of ``claim`` depends on, as a cache request (None: never reuse it).

        The agent's name is left out: two agents with the same source, verifier
        and options give the same judgment whatever they are called.
        """
        if not (self.source.reuse_judgments and self.verifier.reuse_judgments):
            return None
        request = {
            "claim": normalise_claim(claim.text),
            "queries": [normalise_claim(q) for q in claim.queries],
            "source": [self.source.name, answer_options(self.source), self.source.cache_version()],
            "verifier": [self.verifier.name, answer_options(self.verifier), self.verifier.cache_version()],
            "llm": [llm.base_url, llm.model],
        }
        if times := reading_times(claim):  # judged against pages of another time: not today's judgment
            request["as_of"] = times
        try:
            json.dumps(request)
        except (TypeError, ValueError):
            return None  # options that are no JSON (objects handed in by a library user): do not guess
        return request


__all__ = ["Agent", "answer_options", "normalise_claim"]
