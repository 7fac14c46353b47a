"""Reported speech: "X said Y", "Y, X claims", "according to X, Y".

A sentence that reports what someone said is true when they said it, which is
rarely what a reader wants checked: "A post claims that the measles vaccine
causes autism" is about the vaccine. The claim checked is then Y, and X is kept
on the claim as ``attributed_to``; a verdict says whether Y is true, not
whether X said it (docs/extraction.md).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from spacy.tokens import Span, Token

# Verbs that report a statement or a belief, in the forms a sentence uses them (no lemmatizer is loaded).
REPORTING_VERBS = frozenset(
    {"say", "says", "said", "claim", "claims", "claimed", "state", "states", "stated", "argue", "argues", "argued"}
    | {"insist", "insists", "insisted", "allege", "alleges", "alleged", "report", "reports", "reported", "write"}
    | {"writes", "wrote", "tweet", "tweets", "tweeted", "announce", "announces", "announced", "assert", "asserts"}
    | {"asserted", "contend", "contends", "contended", "maintain", "maintains", "maintained", "suggest", "suggests"}
    | {"suggested", "believe", "believes", "believed", "think", "thinks", "thought", "warn", "warns", "warned"}
    | {"add", "adds", "added", "note", "notes", "noted", "explain", "explains", "explained", "admit", "admits"}
    | {"admitted", "acknowledge", "acknowledges", "acknowledged", "complain", "complains", "complained", "charge"}
    | {"charges", "charged", "testify", "testifies", "testified", "post", "posts", "posted", "show", "shows"}
    | {"showed", "shown", "find", "finds", "found", "conclude", "concludes", "concluded", "tell", "tells", "told"}
    | {"declare", "declares", "declared", "boast", "boasts", "boasted", "swear", "swears", "swore", "confirm"}
    | {"confirms", "confirmed", "agree", "agrees", "agreed", "understand", "hear", "heard", "read", "know", "knows"}
    | {"knew", "remember", "remembers", "remembered", "recall", "recalls", "recalled", "learn", "learned", "learnt"}
    | {"realize", "realized", "realise", "realised", "point", "mention", "mentioned", "recognize", "recognized"}
)
# A subject that names nobody ("it is said that ...") records no attribution but still reports.
NOBODY = frozenset({"it", "there"})
EDGE_PUNCT = frozenset({",", ";", ":", "-", "--", "\u2014", "\u2013", '"', "'", "\u201c", "\u201d"})


@dataclass(frozen=True)
class Attribution:
    """What a sentence reports (``content``) and who it says claims it (``source``, None for nobody named)."""

    content: Span
    source: str | None
    cue: str
    speaker: Span | None = None
    past: bool = False  # reported in the past tense ("said"): that it was said is on record


def _trim(span: Span) -> Span:
    """``span`` without the connecting words and punctuation at its edges ("that", commas, quotes)."""
    start, end = span.start, span.end
    while start < end and (span.doc[start].lower_ in EDGE_PUNCT or _connective(span.doc[start])):
        start += 1
    while end > start and (span.doc[end - 1].lower_ in EDGE_PUNCT or span.doc[end - 1].is_space):
        end -= 1
    return span.doc[start:end]


def _connective(token: Token) -> bool:
    """A word that joins the clause to its reporting verb: "that", "whether" (the small model sometimes
    parses "that statins ..." as a determiner: its tag still says it is a conjunction)."""
    return token.dep_ == "mark" or (token.lower_ in ("that", "whether") and token.tag_ == "IN")


def _subtree_span(token: Token) -> Span:
    return token.doc[token.left_edge.i : token.right_edge.i + 1]


def _source(subject: Token, verb: Token) -> Span:
    """Who reports: the subject's phrase, or, when it comes first, everything up to the reporting verb
    (a mis-parsed "A post on social media claims" keeps its prepositional phrase)."""
    doc = subject.doc
    if subject.i < verb.i and subject.left_edge.i < verb.i:
        end = verb.i
        while end > subject.i + 1 and (doc[end - 1].dep_ in ("aux", "neg", "advmod", "punct") or doc[end - 1].is_space):
            end -= 1
        span = doc[subject.left_edge.i : end]
        if not any(t.pos_ == "VERB" for t in span):
            return span
    return _subtree_span(subject)


def _inside_a_sentence(speaker: Span) -> str:
    """The speaker as it reads inside another sentence: a common noun that opened the sentence loses its
    capital ("Researchers say ..." is attributed to "researchers"); a name ("Google", "WHO") keeps it."""
    first = speaker[0]
    if first.is_sent_start and first.pos_ != "PROPN" and first.is_title and not (first.is_upper and len(first) > 1):
        return first.text.lower() + speaker.text[len(first.text) :]
    return speaker.text


def find_attribution(sentence: Span) -> Attribution | None:
    """The reported statement of ``sentence`` and its source, or None when it reports nobody's words."""
    root = sentence.root
    verb: Token | None = root
    # "I would like to point out that ...": follow the open complements down to the verb that reports.
    while verb is not None and verb.lower_ not in REPORTING_VERBS:
        verb = next((c for c in verb.children if c.dep_ == "xcomp"), None)
    if verb is not None:
        content = next((c for c in verb.children if c.dep_ == "ccomp"), None)
        subject = next((c for c in root.children if c.dep_ in ("nsubj", "nsubjpass")), None)
        negated = any(c.dep_ == "neg" for c in (root, verb) for c in c.children)
        if content is not None and subject is not None and not negated:
            clause = _trim(_subtree_span(content))
            # The content must be a clause of its own, something before its verb, not "said so".
            if len(clause) >= 3 and content.left_edge.i < content.i:
                speaker = _source(subject, verb)
                named = speaker.text.lower() not in NOBODY
                past = verb.tag_ in ("VBD", "VBN") or any(c.tag_ == "VBD" for c in root.children if c.dep_ == "aux")
                source = _inside_a_sentence(speaker) if named else None
                return Attribution(clause, source, verb.text, speaker if named else None, past)
    for token in sentence:
        if token.lower_ == "according" and token.dep_ == "prep":
            to = next((c for c in token.children if c.lower_ == "to"), None)
            if to is None or not any(c.dep_ == "pobj" for c in to.children):
                continue
            pobj = next(c for c in to.children if c.dep_ == "pobj")
            phrase = _subtree_span(token)
            if phrase.start == sentence.start or all(t.is_punct for t in sentence.doc[sentence.start : phrase.start]):
                rest = sentence.doc[phrase.end : sentence.end]
            elif all(t.is_punct or t.is_space for t in sentence.doc[phrase.end : sentence.end]):
                rest = sentence.doc[sentence.start : phrase.start]
            else:
                continue  # "according to" in the middle: the sentence stays whole
            rest = _trim(rest)
            if len(rest) >= 3:
                return Attribution(rest, _subtree_span(pobj).text, "according to", _subtree_span(pobj))
    return None


def claim_text(span: Span) -> str:
    """The reported clause as a sentence of its own: first letter capitalised, final full stop."""
    text = span.text.strip()
    if text and text[0].islower() and span[0].pos_ != "PROPN":
        text = text[0].upper() + text[1:]
    if text and text[-1] not in ".!?":
        text = text.rstrip(",;:") + "."
    return text
