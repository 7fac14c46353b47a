"""Stand-in components for tests: a source with fixed passages and a verifier that answers by script."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from factcheck.errors import SourceError
from factcheck.plugin import Source, Verifier
from factcheck.types import Assessment, Claim, Evidence


@dataclass(frozen=True)
class StaticSource(Source):
    """Returns ``passages`` (as Evidence) for every claim; ``fail`` makes it raise,
    ``delay_s`` makes it slow, to exercise abstentions and time-outs."""

    name: str = "static"
    passages: tuple[str, ...] = ("Static evidence passage.",)
    title: str = "Static passage"
    url: str | None = "https://example.org/static"
    fail: str | None = None
    delay_s: float = 0.0

    async def retrieve(self, claim: Claim) -> list[Evidence]:
        if self.delay_s:
            await asyncio.sleep(self.delay_s)
        if self.fail:
            raise SourceError(self.fail)
        return [Evidence(source=self.name, text=p, title=self.title, url=self.url) for p in self.passages]


@dataclass(frozen=True)
class ScriptedVerifier(Verifier):
    """Judges by script: ``rules`` maps a substring of the claim to ``(factuality, confidence)``;
    the first match wins, else ``default``. Without evidence it abstains."""

    name: str = "scripted"
    rules: Mapping[str, tuple[bool | None, float]] = field(default_factory=dict)
    default: tuple[bool | None, float] = (True, 0.8)

    async def judge(self, claim: Claim, evidence: Sequence[Evidence]) -> Assessment:
        if not evidence:
            return Assessment(None, 0.0, "no evidence")
        factuality, confidence = next(
            (verdict for text, verdict in self.rules.items() if text in claim.text), self.default
        )
        return Assessment(factuality, confidence if factuality is not None else 0.0, "scripted")
