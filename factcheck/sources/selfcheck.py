"""The ``selfcheck`` source: the model answers the claim's question from its own knowledge.

The answer is the evidence the claim is then judged against (the MAFC paper's
LLM agent: one answer at temperature 0). With ``samples=N`` the model answers N
times at temperature ~1, SelfCheckGPT-style; pair it with the ``llm`` verifier's
``per_passage`` option so confidence reflects how far the samples agree.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from factcheck.errors import ConfigError
from factcheck.llm.client import chat, resolve
from factcheck.plugins.hookspecs import hookimpl
from factcheck.sources.base import Source
from factcheck.types import Claim, Evidence

PROMPT = """Answer from your own knowledge, factually and in two to four sentences. If you do not know, say so \
plainly rather than guessing.

{query}"""


@dataclass(frozen=True)
class SelfCheckSource(Source):
    """The model's own answers as evidence. Options: ``samples``, ``temperature``
    (default 0 for one sample, 1 for several), ``model``, ``base_url``."""

    reuse_judgments = True

    name = "selfcheck"
    samples: int = 1
    temperature: float | None = None
    model: str | None = None
    base_url: str | None = None

    def __post_init__(self) -> None:
        if not 1 <= self.samples <= 20:
            raise ConfigError("selfcheck: samples must be between 1 and 20")

    async def prepare(self) -> None:
        resolve(self.model, self.base_url).api_key()  # MissingKeyError: the agent is skipped

    async def retrieve(self, claim: Claim) -> list[Evidence]:
        temperature = self.temperature if self.temperature is not None else (0.0 if self.samples == 1 else 1.0)
        query = claim.search_queries()[0]
        messages = [{"role": "user", "content": PROMPT.format(query=query)}]
        model = resolve(self.model, self.base_url).model
        answers = await asyncio.gather(
            *(
                chat(messages, temperature=temperature, model=self.model, base_url=self.base_url, sample=sample)
                for sample in range(self.samples)
            )
        )
        return [
            Evidence(source=self.name, text=answer.text, title=f"{model} answer {number}")
            for number, answer in enumerate(answers, 1)
        ]


@hookimpl
def register_sources(register: Callable[[Any], None]) -> None:
    register(SelfCheckSource())
