"""The MemoryRetriever interface: how the experience memory finds the past claims most like a new one."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence

from factcheck.options import Configurable


class MemoryRetriever(Configurable, ABC):
    """Ranks past claims against a new one. Subclasses are frozen dataclasses with a class attribute ``name``,
    registered through the ``register_memory_retrievers`` hook and chosen with the memory's ``retriever`` option."""

    name: str

    @abstractmethod
    def rank(self, past: Sequence[str], claim: str) -> list[int]:
        """The numbers of the ``past`` claims that may bear on ``claim``, best first (none that cannot)."""
