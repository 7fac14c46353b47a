"""Small text utilities shared by sources and verifiers."""

from __future__ import annotations

import re
from functools import cache
from typing import Any

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
