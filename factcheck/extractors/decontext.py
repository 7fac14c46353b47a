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
# Nouns that name a person: who reports "she voted" can be "the senator".
PERSON_NOUNS = frozenset(
    {"president", "minister", "senator", "governor", "author", "scientist", "actor", "singer", "player"}
    | {"leader", "mayor", "chancellor", "king", "queen", "writer"}
)
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


@dataclass(frozen=True)
class _Mention:
    """Something an earlier sentence names: its kind ("person", "thing", "plural", "group"), its name,
    its head, its role ("subject", "object" or "other") and the common nouns it is called by."""

    kind: str
    text: str
    head: Token
    role: str
    nouns: frozenset[str]


def _called(token: Token) -> frozenset[str]:
    """The nouns a name is called by: its head and the nouns compounded with it ("The river Thames":
    river, thames), and what a copula says it is ("The Louvre is the most visited museum": museum)."""
    nouns = {token.lower_}
    nouns.update(c.lower_ for c in token.children if c.dep_ == "compound" and c.tag_ in ("NN", "NNS"))
    if token.dep_ == "nsubj" and token.head.lower_ in ("is", "was", "are", "were"):
        nouns.update(c.lower_ for c in token.head.children if c.dep_ == "attr" and c.tag_ in ("NN", "NNS"))
    return frozenset(nouns)


def _a_person(ent: Span) -> bool:
    """Whether ``ent`` names a person: the small model calls "the Danube" and "the Louvre" people too,
    but a person's name does not follow "the"."""
    return ent.label_ == "PERSON" and not (ent.start > 0 and ent.doc[ent.start - 1].lower_ == "the")


def _kind_of(token: Token, ent: Span | None) -> str:
    if (ent is not None and _a_person(ent)) or token.lower_ in PERSON_NOUNS:
        return "person"
    if _is_plural(token) or (ent is not None and ent.label_ == "NORP"):
        return "plural"
    return "thing"


def _mentions(sentence: Span) -> list[_Mention]:
    """What ``sentence`` names: its subject, its direct objects and its entities, one mention per head."""
    found: dict[int, _Mention] = {}
    subject = _subject(sentence.root)
    roles = [(subject, "subject")] if subject is not None else []
    roles += [(c, "object") for c in sentence.root.children if c.dep_ in ("dobj", "dative")]
    for token, role in roles:
        name = _name_of(token, sentence)
        if name is not None:
            ent = next((e for e in sentence.ents if e.start <= token.i < e.end), None)
            found[token.i] = _Mention(_kind_of(token, ent), name, token, role, _called(token))
    for ent in sentence.ents:
        if ent.root.i in found:
            continue
        if _a_person(ent):
            kind = "person"
        elif ent.label_ in THING_ENTITIES or ent.label_ == "PERSON":
            kind = "plural" if _is_plural(ent.root) else "thing"
        elif ent.label_ in GROUP_ENTITIES:
            kind = "group"
        else:
            continue
        found[ent.root.i] = _Mention(kind, ent.text, ent.root, "other", _called(ent.root))
    return list(found.values())


def _fits(pronoun: str, kind: str) -> bool:
    if pronoun in PERSON_PRONOUNS:
        return kind == "person"
    if pronoun in THING_PRONOUNS:
        return kind == "thing"
    return kind in ("plural", "group")


def _one(names: set[str]) -> str | None:
    return next(iter(names)) if len(names) == 1 else None


def antecedent(reference: Token, pronoun: str | None, previous: list[Span]) -> str | None:
    """The name ``reference`` (a pronoun, or the noun of "the tower") stands for in ``previous``
    (earlier sentences, nearest last), or None when it cannot be told with confidence.

    The nearest sentence that names anything that fits decides; the search never reaches past it.
    "The tower" needs a longer name called by the same noun there, and only one: that the WHO and a
    ministry are both organisations is not enough. A pronoun takes the sentence's subject unless a
    direct object fits too ("Google released a phone. It costs ...": either), else the one subject or
    object that fits; he and she need the only person the sentence names (no gender is guessed)."""
    for sentence in reversed(previous):
        mentions = _mentions(sentence)
        if pronoun is None:
            noun = reference.lower_
            called = {noun, noun + "s"}
            named = {
                m.text
                for m in mentions
                if called & m.nouns and not {w for w in m.text.lower().split() if w not in DETERMINERS} <= called
            }
            if named:
                return _one(named)
            continue
        fitting = [m for m in mentions if _fits(pronoun, m.kind)]
        if not fitting:
            continue
        if pronoun in PERSON_PRONOUNS:
            return _one({m.text for m in fitting})
        subjects = [m for m in fitting if m.role == "subject"]
        objects = [m for m in fitting if m.role == "object"]
        rivals = _rivals(sentence, pronoun)
        if subjects:
            return subjects[0].text if not rivals - {subjects[0].head} else None
        if len(objects) == 1:
            return objects[0].text if not rivals - {objects[0].head} else None
        groups = {m.text for m in fitting if m.kind == "group"}
        return _one(groups) if not objects and not rivals else None
    return None


NOT_RIVALS = frozenset({"DATE", "TIME", "MONEY", "PERCENT", "QUANTITY", "CARDINAL", "ORDINAL"})


def _rivals(sentence: Span, pronoun: str) -> set[Token]:
    """The heads of the noun phrases of ``sentence`` that "it" (singular) or "they" (plural) could also
    mean: nouns of that number outside its subject, its prepositional phrases ("in Paris" is where
    it is, not what it is) and what a copula says the subject is. "Google released a phone": Google,
    phone; "The agency fined the bank 2 million dollars": agency, bank."""
    subject = _subject(sentence.root)
    rivals = set()
    for token in sentence:
        if token.tag_ not in (("NNS", "NNPS") if pronoun in PLURAL_PRONOUNS else ("NN", "NNP")):
            continue
        if token.dep_ in ("compound", "amod", "poss", "attr", "appos", "npadvmod") or token.ent_type_ in NOT_RIVALS:
            continue
        if token.ent_type_ == "PERSON" and (token.i == 0 or token.doc[token.i - 1].lower_ != "the"):
            continue
        path = [token, *token.ancestors]
        tucked = any(t.dep_ in ("prep", "pobj", "agent", "attr") for t in path) or subject in path
        if tucked and token != subject:
            continue
        rivals.add(token)
    return rivals


def _definite_reference(subject: Token) -> bool:
    """``the tower`` / ``this company``: a determiner and a common noun, nothing that names it further."""
    if subject.tag_ not in ("NN", "NNS"):
        return False
    children = list(subject.children)
    return (
        len(children) == 1
        and children[0].dep_ == "det"
        and children[0].lower_ in DETERMINERS
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
    """Whether a pronoun in a reported clause can be who reports it: "Smith said he ...", "The ministry
    said it ...", "Researchers said they ..."."""
    person = any(e.label_ == "PERSON" for e in speaker.ents) or speaker.root.lower_ in PERSON_NOUNS
    if pronoun in PERSON_PRONOUNS:
        return person
    if pronoun in PLURAL_PRONOUNS:
        return _is_plural(speaker.root) or any(e.label_ in GROUP_ENTITIES for e in speaker.ents)
    if pronoun in THING_PRONOUNS:
        return not person and not _is_plural(speaker.root) and speaker.root.pos_ != "PRON"
    return False


# Verbs whose "it" stands for nothing: "it rained", "it takes ten years", "it seems that ...".
IMPERSONAL = frozenset(
    {"rain", "rains", "rained", "raining", "snow", "snows", "snowed", "snowing", "hail", "hailed", "pour", "poured"}
    | {"take", "takes", "took", "taking", "seem", "seems", "seemed", "appear", "appears", "appeared"}
    | {"happen", "happens", "happened", "matter", "matters", "mattered"}
)


def _impersonal(subject: Token, reported: bool) -> bool:
    """Whether ``subject`` is an "it" that stands for nothing: of a weather verb or one of time or seeming;
    in a reported clause also of a copula ("The ministry said it was raining", "NASA said it has been 50
    years"): there the reporter would be a guess."""
    verb = subject.head
    if verb.lower_ in IMPERSONAL:
        return True
    return reported and (verb.pos_ == "AUX" or verb.lower_ in ("been", "be"))


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
    if pronoun in THING_PRONOUNS and not possessive and _impersonal(subject, speaker is not None):
        return None
    if speaker is not None and not possessive and _speaker_matches(speaker, pronoun):
        return _rewrite(content, replaced, speaker.text, possessive, target)
    name = antecedent(subject, pronoun, previous)
    return None if name is None else _rewrite(content, replaced, name, possessive, target)


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
