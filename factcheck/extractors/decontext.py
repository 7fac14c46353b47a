"""Decontextualisation: a claim whose subject is a pronoun or a bare definite reference gets its antecedent.

"It was completed in 1889" cannot be checked alone; after "The Eiffel Tower is
in Paris." it becomes "The Eiffel Tower was completed in 1889". The antecedent
is looked for in the preceding sentences of the same paragraph with spaCy's
parse and entities, nearest first:

- ``he`` / ``she``: the nearest person named (an entity labelled PERSON);
- ``it``: the nearest singular subject that is not a person or a pronoun, else the
  nearest named organisation, place, work or event;
- ``they``: the nearest plural subject, else the nearest named organisation or group;
- ``the tower`` / ``this company``: the nearest longer name or noun phrase with the
  same head noun ("The Eiffel Tower"), else the nearest entity of the kind the noun
  names (a company is an organisation, a city a place).

Nothing is guessed when none is found: the claim stays as written.

:func:`needs_antecedent` is the same test without a parse, for text read in bulk (the ``nli``
verifier's evidence sentences): a sentence that opens with a pronoun, a possessive or a bare
determiner and common noun cannot stand alone, and is read after the sentence before it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from spacy.tokens import Span, Token

PERSON_PRONOUNS = frozenset({"he", "she"})
THING_PRONOUNS = frozenset({"it"})
PLURAL_PRONOUNS = frozenset({"they"})
POSSESSIVES = {"his": "he", "her": "she", "its": "it", "their": "they"}
THING_ENTITIES = frozenset({"ORG", "GPE", "LOC", "FAC", "PRODUCT", "WORK_OF_ART", "EVENT", "LAW"})
GROUP_ENTITIES = frozenset({"ORG", "NORP", "GPE"})
# Nouns that name a kind of entity: "the company" can be the organisation named before.
NOUN_KINDS = {
    **dict.fromkeys(("company", "firm", "agency", "organisation", "organization", "group", "party"), "ORG"),
    **dict.fromkeys(("university", "bank", "ministry", "department", "union", "court", "committee"), "ORG"),
    **dict.fromkeys(("city", "country", "state", "nation", "town", "region", "province", "capital"), "GPE"),
    **dict.fromkeys(("president", "minister", "senator", "governor", "author", "scientist", "actor"), "PERSON"),
    **dict.fromkeys(("singer", "player", "leader", "mayor", "chancellor", "king", "queen", "writer"), "PERSON"),
}
PERSON_NOUNS = frozenset(noun for noun, kind in NOUN_KINDS.items() if kind == "PERSON")
DETERMINERS = frozenset({"the", "this", "that", "these", "those"})
# Openers that point back: the pronouns above, their possessives, and demonstratives used alone.
REFERRING_OPENERS = frozenset(
    {*PERSON_PRONOUNS, *THING_PRONOUNS, *PLURAL_PRONOUNS, *POSSESSIVES, "this", "these", "those", "such", "both"}
)
# Contractions that read oddly after a name: "It's tall" -> "The tower is tall".
EXPANDED = {"'s": "is", "'re": "are", "\u2019s": "is", "\u2019re": "are"}


@dataclass(frozen=True)
class Resolution:
    """The claim with its reference replaced, and the antecedent that replaced it."""

    text: str
    antecedent: str


def _subject(root: Token) -> Token | None:
    return next((c for c in root.children if c.dep_ in ("nsubj", "nsubjpass")), None)


def _is_plural(token: Token) -> bool:
    return token.tag_ in ("NNS", "NNPS")


def _name_of(token: Token, sentence: Span) -> str | None:
    """A self-contained name for the subject ``token`` of an earlier sentence: its noun phrase, or None."""
    if token.pos_ == "PRON" or token.tag_ in ("PRP", "PRP$", "WP", "DT", "EX"):
        return None
    doc = token.doc
    phrase = doc[max(token.left_edge.i, sentence.start) : min(token.right_edge.i + 1, sentence.end)]
    # A long phrase (with a relative clause) would not read as a name: keep up to the head noun.
    if len(phrase) > 6:
        phrase = token.doc[phrase.start : token.i + 1]
    if len(phrase) > 6 or any(t.tag_ in ("PRP", "PRP$") for t in phrase):
        return None
    return phrase.text


def _candidates(sentence: Span) -> list[tuple[str, str, Token]]:
    """``(kind, text, head)`` of the things ``sentence`` mentions, its subject first, then its entities."""
    found: list[tuple[str, str, Token]] = []
    subject = _subject(sentence.root)
    if subject is not None:
        name = _name_of(subject, sentence)
        ent = next((e for e in sentence.ents if e.start <= subject.i < e.end), None)
        if name is not None:
            if ent is not None and ent.label_ == "PERSON":
                found.append(("person", name, subject))
            elif _is_plural(subject) or (ent is not None and ent.label_ in ("NORP",)):
                found.append(("plural", name, subject))
            else:
                found.append(("thing", name, subject))
    for ent in sentence.ents:  # in order: a sentence names its topic first
        if ent.label_ == "PERSON":
            found.append(("person", ent.text, ent.root))
        elif ent.label_ in THING_ENTITIES:
            found.append(("thing" if not _is_plural(ent.root) else "plural", ent.text, ent.root))
        if ent.label_ in GROUP_ENTITIES:
            found.append(("group", ent.text, ent.root))
    return found


def _matches(reference: Token, kind: str, text: str, head: Token, pronoun: str | None, ent_label: str | None) -> bool:
    if pronoun in PERSON_PRONOUNS:
        return kind == "person"
    if pronoun in THING_PRONOUNS:
        return kind == "thing"
    if pronoun in PLURAL_PRONOUNS:
        return kind in ("plural", "group")
    # A definite noun phrase: the same head noun in a longer name, or an entity of the kind it names.
    noun = reference.lower_
    if head.lower_ == noun or head.lower_ == noun + "s":
        return len(text.split()) > 2 or text.split()[0].lower() not in ("the", "this", "that")
    if ent_label is not None:
        return any(e.label_ == ent_label and e.text == text for e in head.doc.ents)
    return False


def _definite_reference(subject: Token) -> bool:
    """``the tower`` / ``this company``: a determiner and a common noun, nothing that names it further."""
    if subject.tag_ not in ("NN", "NNS"):
        return False
    children = list(subject.children)
    return (
        len(children) == 1
        and children[0].dep_ == "det"
        and children[0].lower_ in ("the", "this", "that", "these", "those")
        and children[0].i == subject.i - 1
    )


def needs_antecedent(sentence: str) -> bool:
    """Whether ``sentence`` opens with a reference to something named before it: a pronoun ("It was
    completed ..."), a possessive ("Its height ..."), a demonstrative ("This suggests ...") or a bare
    determiner and a lower-case noun ("The tower was ...", "These mice ..."). A cheap test on the words,
    no parse: "The Eiffel Tower ..." (a name follows) and "The 2019 study ..." stand alone."""
    words = sentence.lstrip("\"'\u201c(").split(maxsplit=2)
    if not words:
        return False
    first = words[0].rstrip(",;:").lower()
    if first in DETERMINERS and len(words) > 1:
        following = words[1].strip(",;:()")
        return following.isalpha() and following.islower()
    return first in REFERRING_OPENERS


def _speaker_matches(speaker: Span, pronoun: str | None) -> bool:
    """Whether "he" / "she" / "they" in a reported clause can be who reports it ("Smith said he ...")."""
    if pronoun in PERSON_PRONOUNS:
        return any(e.label_ == "PERSON" for e in speaker.ents) or speaker.root.lower_ in PERSON_NOUNS
    if pronoun in PLURAL_PRONOUNS:
        return _is_plural(speaker.root) or any(e.label_ in GROUP_ENTITIES for e in speaker.ents)
    return False


def resolve(content: Span, previous: list[Span], speaker: Span | None = None) -> Resolution | None:
    """``content`` with the pronoun or bare definite subject it starts with replaced by its antecedent
    from ``previous`` (earlier sentences, nearest last), or None when there is none to replace or find.

    ``speaker``, who reports ``content`` ("Smith" in "Smith said he voted"), is the antecedent of a
    personal pronoun that fits it."""
    subject = _subject(content.root)
    if subject is None:
        return None
    # Only a reference at the start of the claim: "It was completed", "And he signed", "Its height is".
    lead = [t for t in content if t.i < subject.left_edge.i and not (t.is_punct or t.is_space)]
    if any(t.pos_ not in ("CCONJ", "ADV", "INTJ") for t in lead):
        return None
    pronoun: str | None = None
    target = subject
    possessive = False
    if subject.lower_ in PERSON_PRONOUNS | THING_PRONOUNS | PLURAL_PRONOUNS:
        pronoun, replaced = subject.lower_, content.doc[subject.i : subject.i + 1]
    else:
        poss = next((c for c in subject.children if c.dep_ == "poss" and c.lower_ in POSSESSIVES), None)
        if poss is not None and poss.i == subject.left_edge.i:
            pronoun, target, possessive = POSSESSIVES[poss.lower_], poss, True
            replaced = content.doc[poss.i : poss.i + 1]
        elif _definite_reference(subject):
            replaced = content.doc[subject.i - 1 : subject.i + 1]
        else:
            return None
    ent_label = NOUN_KINDS.get(subject.lower_) if pronoun is None else None
    if speaker is not None and not possessive and _speaker_matches(speaker, pronoun):
        return _rewrite(content, replaced, speaker.text, possessive, target)
    for sentence in reversed(previous):
        for kind, text, head in _candidates(sentence):
            if _matches(subject, kind, text, head, pronoun, ent_label):
                return _rewrite(content, replaced, text, possessive, target)
    return None


def _rewrite(content: Span, replaced: Span, antecedent: str, possessive: bool, target: Token) -> Resolution:
    doc = content.doc
    name = antecedent + ("'s" if possessive else "")
    if replaced.start == content.start or all(t.is_punct for t in doc[content.start : replaced.start]):
        name = name[0].upper() + name[1:]
    before = doc[content.start : replaced.start].text_with_ws if replaced.start > content.start else ""
    rest = doc[replaced.end : content.end]
    after = rest.text_with_ws
    if len(rest) and rest[0].lower_ in EXPANDED and not possessive:
        after = EXPANDED[rest[0].lower_] + rest[0].whitespace_ + doc[rest.start + 1 : content.end].text_with_ws
    sep = replaced[-1].whitespace_ or ("" if after[:1] in ("'", "\u2019", ",", ".") else " ")
    if len(rest) and rest[0].lower_ in EXPANDED and not possessive:
        sep = " "
    text = (before + name + sep + after).strip()
    return Resolution(text, antecedent)
