"""The Source interface: where an agent's evidence comes from."""

from __future__ import annotations

from abc import ABC, abstractmethod

from factcheck.options import Configurable
from factcheck.types import Claim, Evidence


class Source(Configurable, ABC):
    """Retrieves evidence for a claim.

    Subclasses are dataclasses whose fields are their options and set a class
    attribute ``name``. ``retrieve`` is async: network sources await their
    HTTP calls, CPU-bound ones hand work to a thread. Raise
    :class:`factcheck.SourceError` (or anything) on failure: the pipeline turns
    it into an abstention of the agent, recorded with the error.
    """

    name: str

    @abstractmethod
    async def retrieve(self, claim: Claim) -> list[Evidence]:
        """Evidence passages for ``claim`` (searching ``claim.search_queries()``), best first."""
