"""How the experience memory finds the past cases most like a new claim: pluggable retrievers.

A retriever ranks the stored claims against the new one. ``bm25`` (the default) ranks by shared words, stemmed,
English stop words dropped; ``hybrid`` fuses that with the ranking by meaning (the shipped sentence encoder), as
the ``corpus`` source does (:func:`factcheck.ranking.rank_passages`). A plugin adds another through the
``register_memory_retrievers`` hook and names it with the memory's ``retriever`` option.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from factcheck.plugin import MemoryRetriever, hookimpl
from factcheck.ranking import by_words, rank_passages


@dataclass(frozen=True)
class BM25Retriever(MemoryRetriever):
    """Past claims that share a word with the new one, by BM25."""

    name = "bm25"

    def rank(self, past: Sequence[str], claim: str) -> list[int]:
        return [i for i, _ in by_words(past, claim)]


@dataclass(frozen=True)
class HybridRetriever(MemoryRetriever):
    """BM25 fused with the ranking by meaning (reciprocal rank)."""

    name = "hybrid"

    def rank(self, past: Sequence[str], claim: str) -> list[int]:
        return rank_passages(past, [claim])


@hookimpl
def register_memory_retrievers(register: Callable[[Any], None]) -> None:
    register(BM25Retriever())
    register(HybridRetriever())
