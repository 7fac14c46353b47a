"""What an entity claim says, read from its words: the entity, the relation, and the value it claims.

"The Eiffel Tower opened in 1889." reads as the *date of official opening* (P1619) of *the Eiffel Tower*
being *1889*; "Paris is the capital of France." as the *capital* (P36) of *France* being *Paris*; "J. K.
Rowling wrote Harry Potter." as the *author* (P50) of *Harry Potter* being *J. K. Rowling*. The reading
comes from the extractor's own spaCy parse (the subject, its objects, the relational noun of "the capital
of"), the dates and figures the claim states (:func:`factcheck.wikidata.values.times_in`,
:func:`~factcheck.wikidata.values.quantities_in`) and the table of relations
(:mod:`factcheck.wikidata.relations`). A claim may state two facts ("born on 14 March 1879 in Ulm"): each is
one :class:`Reading`. A claim about no entity (no proper noun in its subject) has none, and costs no request.

A time in a claim whose value is not a time ("Bonn was the capital of West Germany **in 1980**") is the time
the claim speaks of (:attr:`Reading.when`), judged against the statements' start and end times.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from factcheck.wikidata.relations import Kind, Relation, relations_for
from factcheck.wikidata.values import ClaimedQuantity, Time, quantities_in, time_spans, times_in

if TYPE_CHECKING:
    from spacy.tokens import Doc, Span, Token

# Named-entity types that are no entity to look up (dates and figures are values, read on their own).
_VALUE_ENTITIES = frozenset({"DATE", "TIME", "QUANTITY", "CARDINAL", "MONEY", "PERCENT", "ORDINAL"})
_SUBJECTS = frozenset({"nsubj", "nsubjpass"})
_OBJECTS = frozenset({"dobj", "pobj", "attr", "oprd", "appos", "conj"})


@dataclass(frozen=True)
class Reading:
    """One fact a claim states: the ``subject`` entity's property (one of ``relations``) has ``value``.

    ``value`` is a :class:`~factcheck.wikidata.values.Time`, a
    :class:`~factcheck.wikidata.values.ClaimedQuantity`, or an item's name as the claim writes it.
    ``when``: the time the claim speaks of, if it names one that is not the value. ``negated``: the
    claim says the fact does not hold ("is not the capital"). With no relation of the table (``relations``
    empty), ``phrase`` holds the claim's words for it ("orbits"), for the source to match with the
    entity's own properties by meaning (:mod:`factcheck.wikidata.properties`).
    """

    subject: str
    relations: tuple[Relation, ...]
    kind: Kind
    value: Time | ClaimedQuantity | str
    when: Time | None = None
    negated: bool = False
    phrase: str = ""  # the relation's words, when no relation of the table says it: matched by meaning

    def value_text(self) -> str:
        """The claimed value for a reader: "1889", "8,849", "Paris"."""
        if isinstance(self.value, str):
            return self.value
        if isinstance(self.value, Time):
            return self.value.text()
        return f"{self.value.amount:,.10g}"


def _clean(tokens: Sequence[Token]) -> str:
    """The words of ``tokens`` as the claim writes them, without a leading article or trailing punctuation."""
    words = list(tokens)
    while words and (words[0].dep_ == "det" or words[0].is_punct):
        words = words[1:]
    while words and ((words[-1].is_punct and words[-1].text not in {".", ")"}) or words[-1].dep_ == "case"):
        words = words[:-1]  # a trailing comma, the "'s" of "Nigeria's capital"
    if words and words[-1].text == "." and len(words) > 1 and not words[-2].text.endswith("."):
        words = words[:-1]
    if not words:
        return ""
    doc = words[0].doc
    return doc[words[0].i : words[-1].i + 1].text.strip(" .,;:")


def _subtree(token: Token) -> list[Token]:
    return sorted(token.subtree, key=lambda t: t.i)


def _named(tokens: Iterable[Token]) -> bool:
    """Whether the words name something: a proper noun, or an entity the recogniser found (not a date), or a
    capitalised word opening the claim ("Titanic was released", which the tagger may call an adjective)."""
    return any(
        t.pos_ == "PROPN"
        or (t.ent_type_ and t.ent_type_ not in _VALUE_ENTITIES)
        or (t.i == 0 and t.is_title and t.pos_ in {"ADJ", "NOUN"} and t.dep_ in _SUBJECTS)
        for t in tokens
    )


def _is_value(token: Token) -> bool:
    """A word of a date or figure the claim states (read by :func:`_value_words`), or a number."""
    digits = token.like_num and any(ch.isdigit() for ch in token.text)  # not "Four" of "Nineteen Eighty-Four"
    return digits or token.i in token.doc.user_data.get(_VALUE_WORDS, ())


_VALUE_WORDS = "factcheck_wikidata_values"


def _mark_values(doc: Doc | Span, spans: Iterable[tuple[int, int]]) -> None:
    """Remember which words are inside the claim's dates and figures (character ``spans``)."""
    words = {t.i for t in doc for start, end in spans if start <= t.idx - doc[0].idx < end}
    doc[0].doc.user_data[_VALUE_WORDS] = frozenset(words)


def _subject_tokens(root: Token) -> list[Token] | None:
    subjects = [child for child in root.children if child.dep_ in _SUBJECTS]
    if not subjects:
        # "On the Origin of Species was published ...": a title the parser did not take for the subject;
        # the named words before the verb are.
        before = [t for t in root.doc[: root.i] if t.dep_ not in {"aux", "auxpass", "neg"}]
        return before if before and _named(before) and before[0].i == 0 else None
    tokens = _subtree(subjects[0])
    # "Paris, Texas is ...": the parser hangs "Paris" on the verb; a name before the subject belongs to it.
    start = tokens[0].i
    doc = root.doc
    while start > 0 and doc[start - 1].pos_ in {"PROPN", "PUNCT"} and doc[start - 1].text != "'":
        start -= 1
    return [doc[i] for i in range(start, tokens[-1].i + 1)]


def _of_object(noun: Token) -> Token | None:
    """The object of "of" after a relational noun, or its possessor: "France" in "the capital of France" and
    in "France's capital"."""
    for child in noun.children:
        if child.dep_ == "poss" and child.pos_ == "PROPN":
            return child
    for child in noun.children:
        if child.dep_ == "prep" and child.lower_ == "of":
            objects = [g for g in child.children if g.dep_ == "pobj"]
            if objects:
                return objects[0]
    return None


def _objects(root: Token, skip: set[int]) -> list[Token]:
    """The heads of the root's objects (direct objects, prepositional objects, attributes), in order."""
    found: list[Token] = []

    def visit(token: Token) -> None:
        for child in token.children:
            if child.i in skip:
                continue
            if child.dep_ in {"prep", "agent"}:
                visit(child)
            elif child.dep_ in _OBJECTS or (child.dep_ == "acomp" and token is root):
                found.append(child)
                if child.dep_ in {"pobj", "dobj", "attr"}:
                    visit(child)  # "capital of France", "member of the European Union"

    visit(root)
    return sorted(found, key=lambda t: t.i)


def _relation_words(doc: Doc, taken: set[int]) -> list[str]:
    """The claim's words outside the entities and values, lower-cased, and the words inside its figures
    ("inhabitants" of "about 3.6 million inhabitants": a count says what it counts)."""
    return [
        t.lower_
        for t in doc
        if t.i not in taken and not t.is_punct and t.dep_ != "det" and (not _is_value(t) or t.is_alpha)
    ]


def read_doc(doc: Doc | Span) -> list[Reading]:
    """The facts the parsed claim states (:class:`Reading`), none when it names no entity."""
    sentence = doc if not hasattr(doc, "sents") else next(iter(doc.sents), None)
    if sentence is None:
        return []
    root = sentence.root
    subject = _subject_tokens(root)
    if not subject:
        return []
    text = sentence.text
    times = times_in(text)
    quantities = quantities_in(text)
    _mark_values(sentence, [*time_spans(text), *(q.span for q in quantities)])
    negated = any(child.dep_ == "neg" for child in root.children)
    passive = any(t.dep_ in {"auxpass", "nsubjpass", "agent"} for t in sentence)

    head = next((t for t in subject if t.dep_ in _SUBJECTS), subject[-1])
    taken = {t.i for t in subject}
    readings: list[Reading] = []
    value_objects = [o for o in _objects(root, taken) if not _is_value(o)]

    # "The capital of France is Paris." / "The height of Mount Everest is 8,849 m.": the subject is a
    # relational noun, the entity follows "of", the value is the complement.
    of_entity = _of_object(head) if head.pos_ == "NOUN" else None
    if of_entity is not None and _named(_subtree(of_entity)):
        entity = _clean(_subtree(of_entity))
        nouns = [head.lower_]
        words = _relation_words(sentence.doc, taken | {t.i for t in _subtree(of_entity)})
        for kind, value in _values(times, quantities, value_objects, exclude=taken):
            relations = relations_for(words, kind, nouns=nouns)
            if relations:
                readings.append(Reading(entity, tuple(relations), kind, value, negated=negated))
        return _with_when(readings, times)

    if not _named(subject):
        return []
    name = _clean(subject)
    for obj in value_objects:
        obj_tokens = _subtree(obj)
        if not _named(obj_tokens) and obj.pos_ != "NOUN":
            continue
        # "Paris is the capital of France.": a relational noun with "of" names the other entity's property.
        inner = _of_object(obj) if obj.pos_ == "NOUN" and obj.dep_ in {"attr", "dobj"} else None
        if inner is not None and _named(_subtree(inner)):
            other = _clean(_subtree(inner))
            nouns = [obj.lower_]
            words = _relation_words(sentence.doc, taken | {t.i for t in _subtree(inner)})
            inverse = relations_for((), "item", nouns=nouns, inverse=True)
            if inverse:
                readings.append(Reading(other, tuple(inverse), "item", name, negated=negated))
                break
            direct = relations_for([*words, obj.lower_], "item")
            if direct:
                readings.append(Reading(name, tuple(direct), "item", other, negated=negated))
                break
            continue
        if not _named(obj_tokens):
            continue
        mention = _clean(obj_tokens)
        words = _relation_words(sentence.doc, taken | {t.i for t in obj_tokens})
        relations = relations_for(words, "item")
        if not relations:
            if phrase := _phrase(sentence, taken | {t.i for t in obj_tokens}):
                readings.append(Reading(name, (), "item", mention, negated=negated, phrase=phrase))
            break
        if not passive and any(r.active_inverse for r in relations):
            # "J. K. Rowling wrote Harry Potter.": the book's author is the claim's subject.
            authored = tuple(r for r in relations if r.active_inverse)
            readings.append(Reading(mention, authored, "item", name, negated=negated))
        else:
            readings.append(Reading(name, tuple(relations), "item", mention, negated=negated))
        break  # one entity object a claim: the first

    words = _relation_words(sentence.doc, taken)
    for kind, value in _values(times, quantities, [], exclude=taken):
        relations = relations_for(words, kind)
        if relations:
            readings.append(Reading(name, tuple(relations), kind, value, negated=negated))
        elif not readings and (phrase := _phrase(sentence, taken)):
            readings.append(Reading(name, (), kind, value, negated=negated, phrase=phrase))
    return _with_when(readings, times)


# Words that say no relation on their own: "X is Y", "X has Y".
_EMPTY_VERBS = frozenset({"be", "is", "are", "was", "were", "been", "has", "have", "had", "do", "does", "did"})


def _phrase(sentence: Span, taken: set[int]) -> str:
    """The words that say the relation when the table has none for them ("orbits", "was married to"), or ""
    when they hold no verb, noun or adjective of their own."""
    words = [
        t for t in sentence if t.i not in taken and not t.is_punct and t.dep_ not in {"det", "neg"} and not _is_value(t)
    ]
    content = [t for t in words if t.pos_ in {"VERB", "NOUN", "ADJ"} and t.lower_ not in _EMPTY_VERBS]
    return " ".join(t.lower_ for t in words) if content else ""


def _values(
    times: Sequence[Time], quantities: Sequence[ClaimedQuantity], objects: Sequence[Token], exclude: set[int]
) -> Iterable[tuple[Kind, Time | ClaimedQuantity | str]]:
    """The claim's values, each with its kind: its figures, its dates, and its named objects."""
    for quantity in quantities:
        yield "quantity", quantity
    for time in times:
        yield "time", time
    for obj in objects:
        tokens = _subtree(obj)
        if _named(tokens) and not (exclude & {t.i for t in tokens}):
            yield "item", _clean(tokens)


def _with_when(readings: list[Reading], times: Sequence[Time]) -> list[Reading]:
    """The item and quantity readings with the claim's time as their ``when``, when no reading takes that
    time as its value ("Bonn was the capital of West Germany in 1980")."""
    if len(times) != 1 or any(r.kind == "time" for r in readings):
        return readings
    return [replace(r, when=times[0]) if r.kind != "time" else r for r in readings]


@functools.lru_cache(maxsize=256)
def _parsed(text: str) -> Doc:
    """``text`` parsed once by the extractor's pipeline, with its entity recogniser (the source and the
    verifier of one check each read the claim)."""
    from factcheck.extractors.sentence import load_pipeline, parse

    (doc,) = parse(load_pipeline("auto"), [text], ner=True)
    return doc


def names_an_entity(text: str) -> bool:
    """Whether ``text`` names something (a proper noun, or an entity the recogniser finds that is no date or
    figure): only such a claim is worth asking a model about."""
    return _named(_parsed(text))


@functools.lru_cache(maxsize=1024)
def read_claim(text: str) -> tuple[Reading, ...]:
    """:func:`read_doc` of ``text`` parsed by the extractor's pipeline (with its entity recogniser)."""
    return tuple(read_doc(_parsed(text)))
