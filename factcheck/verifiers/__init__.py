"""Verifiers. Built-ins: ``lexical`` (the transparent offline baseline)."""

from factcheck.verifiers.base import Verifier

__all__ = ["Verifier"]
