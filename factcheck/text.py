"""Small text utilities shared by sources and verifiers, and the one place text is made valid Unicode."""

from __future__ import annotations

import re
from functools import cache
from typing import Any, TypeVar

T = TypeVar("T")

_SURROGATE = re.compile("[\ud800-\udfff]")


def plural(count: int, noun: str, many: str | None = None) -> str:
    """``1 claim``, ``2 claims``; ``many`` where the plural is not the noun and an s (``1 search``, ``2
    searches``). Every user-facing count goes through here."""
    return f"{count} {noun}" if count == 1 else f"{count} {many or noun + 's'}"


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


# Reference marks as pages print them after a word or a sentence: "[4]", "[4][5]", "[4]:12", "[a]",
# "[note 3]", "[citation needed]", "[edit]", a caret ("^"), and superscript figures after punctuation
# ("lung cancer.¹²"; "km²" and "10⁶" after a letter or digit are units, not marks).
_BRACKETED = (
    r"\d{1,4}(?:\s?[-\u2013,]\s?\d{1,4})*"  # [4], [4-6], [4, 7]
    r"|[a-zA-Z]"  # [a]: a lettered note
    r"|(?:note|nb|n|fn|ref)\s?\d{1,3}"  # [note 3]
    r"|edit|update|citation needed|clarification needed|dubious|failed verification|verification needed"
    r"|according to whom\?|by whom\?|when\?|which\?|who\?|where\?|why\?|better source needed|not in citation given"
)
CITATION_MARK = re.compile(
    # [4] and its page as Wikipedia writes it, "[4]:12" (not "[3]: 12 of 40 patients", a figure of the text).
    rf"\[(?:{_BRACKETED})\](?::\d{{1,4}}(?:[-\u2013]\d{{1,4}})?(?![\w,.]\d))?"
    r"|(?<=[.!?,;:)\]\"'\u201d])\^+|\^+(?=\s|$)"  # a footnote link's caret, copied ("cancer.^"; not "10^6")
    r"|(?<=[.!?,;:)\]\"'\u201d])[\u00b9\u00b2\u00b3\u2070\u2074-\u2079]+",  # "cancer.¹²"
    re.IGNORECASE,
)


def mask_citations(text: str) -> str:
    """``text`` with every reference mark (:data:`CITATION_MARK`) blanked out by as many spaces: the
    same length, so offsets into it are offsets into ``text``, and "cholesterol.[4] Side effects"
    ends a sentence where the reader sees one end."""
    return CITATION_MARK.sub(lambda match: " " * len(match.group()), text)


_SPACE_BEFORE_PUNCTUATION = re.compile(r"[^\S\n]+(?=[.,;:!?)])")
_SPACES = re.compile(r"[^\S\n]{2,}")


def tidy_masked(text: str) -> str:
    """``text`` from :func:`mask_citations` without the space its blanked-out marks left ("cholesterol   ." is
    "cholesterol.")."""
    return _SPACES.sub(" ", _SPACE_BEFORE_PUNCTUATION.sub("", text)).strip()


def strip_citations(text: str) -> str:
    """``text`` without its reference marks, the space they leave tidied ("cholesterol[4]." is
    "cholesterol."): what is checked, quoted and searched for."""
    if CITATION_MARK.search(text) is None:  # the common case: nothing to copy
        return text
    return tidy_masked(CITATION_MARK.sub(" ", text))


# A sentence ends at . ! or ? followed by space and an upper-case letter, digit or opening mark.
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9\"'(\[])")


def split_sentences(text: str) -> list[str]:
    """Sentences of ``text``: line breaks always end one, then a punctuation heuristic; reference
    marks ("[4]", "[citation needed]") end no sentence early and are left out of each.

    Cheap and dependency-free, for evidence passages; claims are split with spaCy.
    """
    sentences: list[str] = []
    for line in text.splitlines():
        if CITATION_MARK.search(line) is None:  # a sentence without marks stays exactly as written
            sentences.extend(s.strip() for s in _SENTENCE_END.split(line) if s.strip())
        else:
            sentences.extend(tidy_masked(s) for s in _SENTENCE_END.split(mask_citations(line)) if s.strip())
    return sentences


@cache
def english_stemmer() -> Any:
    """The Snowball English stemmer (PyStemmer), built once."""
    import Stemmer

    return Stemmer.Stemmer("english")
