"""What the steps of a check read of their checker: its resolved components, settings and limits, and
the few things it works out once. :class:`~factcheck.pipeline.Checker` is one; the steps name this
protocol, not the Checker, so they sit below it."""

from __future__ import annotations

from typing import Protocol

from factcheck.agent import Agent
from factcheck.cache import Cache
from factcheck.limits import Limits
from factcheck.llm.client import LLMSettings
from factcheck.plugin import ClaimExtractor, Deliberator, LabelRule, Scorer, Source, Verifier
from factcheck.routing import RoutingPolicy
from factcheck.types import JudgedBy


class Components(Protocol):
    """A checker as its check's steps see it (:class:`~factcheck.pipeline.Checker`)."""

    agents: tuple[Agent, ...]
    extractor: ClaimExtractor
    fallback_extractor: ClaimExtractor | None
    scorer: Scorer
    labels: LabelRule
    routing: RoutingPolicy
    deliberation: Deliberator
    independence: float | None
    llm: LLMSettings
    cache: Cache | None
    limits: Limits

    def trust_weights(self) -> dict[str, float]: ...

    def judged_by(self) -> JudgedBy: ...

    async def prepare_component(self, component: Source | Verifier, wait_s: float | None = None) -> str | None: ...
