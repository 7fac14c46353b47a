"""The Source interface: where an agent's evidence comes from."""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import ClassVar

from factcheck.cache import ReusableJudgments
from factcheck.options import Configurable
from factcheck.types import Claim, Evidence


class Source(Configurable, ReusableJudgments, ABC):
    """Retrieves evidence for a claim.

    Subclasses are dataclasses whose fields are their options and set a class
    attribute ``name``. ``retrieve`` is async: network sources await their
    HTTP calls, CPU-bound ones hand work to a thread. Raise
    :class:`factcheck.SourceError` (or anything) on failure: the pipeline turns
    it into an abstention of the agent, recorded with the error.
    """

    name: str
    # The languages it reads (ISO 639-1 codes); None reads any. An agent whose source or verifier
    # cannot read the checked text's language abstains on every claim, naming the language.
    languages: ClassVar[frozenset[str] | None] = None
    # True for a source of precedents (the ``memory`` source: past claims, each titled with a reviewer's
    # ruling): only a verifier that ``reads_precedents`` may judge its passages (:class:`factcheck.Agent`).
    gives_precedents: ClassVar[bool] = False
    # True for a source that speaks to only some claims and needs no key (the ``wikidata`` source: claims about
    # entities). A check in which no other agent can run for want of API keys stops with the missing keys named,
    # as if none could: such an agent alone would leave most claims UNVERIFIED without saying why.
    supplementary: ClassVar[bool] = False

    async def prepare(self) -> None:
        """Get ready before a check's first claim (open an index, check a key).

        Runs once per check, outside the per-agent time-out. Raise a
        :class:`factcheck.FactcheckError` for a problem the user must fix (it
        stops the check with that message); any other exception makes this
        agent abstain on every claim of the check.
        """

    @abstractmethod
    async def retrieve(self, claim: Claim) -> list[Evidence]:
        """Evidence passages for ``claim`` (searching ``claim.search_queries()``), best first."""
