"""Claim extractors. Built-ins: ``sentence`` (spaCy sentence split)."""

from factcheck.extractors.base import ClaimExtractor

__all__ = ["ClaimExtractor"]
