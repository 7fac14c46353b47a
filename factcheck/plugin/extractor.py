"""The ClaimExtractor interface: text in, atomic claims out."""

from __future__ import annotations

from abc import ABC, abstractmethod

from factcheck.options import Configurable
from factcheck.types import Claim, Extraction


class ClaimExtractor(Configurable, ABC):
    """Splits a text into checkable claims.

    ``extract`` is synchronous (the pipeline runs it in a worker thread). Give
    each claim a stable id (``c1``, ``c2``, ...) and, where possible, its
    character span in the input so a UI can highlight it.
    """

    name: str

    @abstractmethod
    def extract(self, text: str) -> list[Claim]:
        """The claims of ``text``, in reading order."""

    def extraction(self, text: str) -> Extraction:
        """The claims of ``text`` and the sentences it skipped, with why (what ``factcheck extract``
        shows and a check records). Extractors that do not say what they skip need not override it."""
        return Extraction(tuple(self.extract(text)))
