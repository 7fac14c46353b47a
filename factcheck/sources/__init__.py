"""Evidence sources. Built-ins: ``corpus`` (BM25 over a local collection)."""

from factcheck.sources.base import Source

__all__ = ["Source"]
