"""Small text utilities shared by sources and verifiers, and the one place text is made valid Unicode."""

from __future__ import annotations

import re
from functools import cache
from typing import Any, TypeVar

T = TypeVar("T")

_SURROGATE = re.compile("[\ud800-\udfff]")


def valid_unicode(text: str) -> str:
    """``text`` with every lone surrogate replaced by U+FFFD (a split pair is joined again).

    JSON allows ``"\\ud800"``, Python keeps it in a ``str``, and UTF-8 cannot
    encode it: one such character in a document, a passage or a model's answer
    would make every later write fail. Everything that enters factcheck from
    outside (inputs, requests, evidence, model answers) goes through here once.
    """
    if _SURROGATE.search(text) is None:  # the common case: nothing to copy
        return text
    return text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")


def valid_unicode_data(value: T) -> T:
    """``value`` (JSON-like: dicts, lists, strings, numbers) with :func:`valid_unicode` applied to
    every string in it, keys included."""
    if isinstance(value, str):
        return valid_unicode(value)  # type: ignore[return-value]
    if isinstance(value, dict):
        return {valid_unicode_data(k): valid_unicode_data(v) for k, v in value.items()}  # type: ignore[return-value]
    if isinstance(value, list | tuple):
        return type(value)(valid_unicode_data(v) for v in value)
    return value


# A sentence ends at . ! or ? followed by space and an upper-case letter, digit or opening mark.
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9\"'(\[])")


def split_sentences(text: str) -> list[str]:
    """Sentences of ``text``: line breaks always end one, then a punctuation heuristic.

    Cheap and dependency-free, for evidence passages; claims are split with spaCy.
    """
    sentences: list[str] = []
    for line in text.splitlines():
        sentences.extend(s.strip() for s in _SENTENCE_END.split(line) if s.strip())
    return sentences


@cache
def english_stemmer() -> Any:
    """The Snowball English stemmer (PyStemmer), built once."""
    import Stemmer

    return Stemmer.Stemmer("english")
