"""The relations a claim can state about an entity, and the Wikidata properties that record them.

A reviewed table of the common ones: each :class:`Relation` names its property, the kind of value it takes
(an item, a time, a quantity), the words that say it in a claim, and whether the property is **single-valued**
(at any one time an entity has one capital, one date of birth, one place of birth: another value excludes the
claimed one). Only a single-valued property, or a quantity, or a place in another country (the location rule
of :mod:`factcheck.verifiers.wikidata`) may make a claim FALSE; for the others (authors, founders,
memberships) a value that is not the claimed one proves nothing, and the agent abstains.

Words are matched as the claim writes them, lower-cased (the extractor's pipeline has no lemmatiser):
"born" finds P19 for a place and P569 for a date. Relations not in the table are matched by meaning
(:mod:`factcheck.wikidata.properties`).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Literal

Kind = Literal["item", "time", "quantity"]


@dataclass(frozen=True)
class Relation:
    """A property, the kind of value it takes, and how a claim says it.

    ``words``: any one of them in the claim's relation words selects it. ``nouns``: relational nouns
    ("the capital of France", "the height of Everest") that name it, with the entity after "of" as its
    subject. ``inverse_nouns``: nouns that name the *inverse* when the claim's subject is the value
    ("Paris is the capital of France": France's capital is Paris). ``active_inverse``: an active verb
    whose subject is the value ("Rowling wrote Harry Potter": the book's author is Rowling), where the
    passive ("was written by") is direct. ``place``: its values are places, judged along the places they lie
    within (born in Ulm is born in Germany), and excluded only by the place rule, never for being another
    value (a place of birth in Ulm does not exclude "born in Württemberg").
    """

    property: str
    label: str
    kind: Kind
    words: frozenset[str] = frozenset()
    nouns: frozenset[str] = frozenset()
    inverse_nouns: frozenset[str] = frozenset()
    single: bool = False
    active_inverse: bool = False
    place: bool = False


def _w(*words: str) -> frozenset[str]:
    return frozenset(words)


RELATIONS: tuple[Relation, ...] = (
    # Places: judged together, along the "located in" chain (Eiffel Tower -> 7th arrondissement -> Paris -> France).
    Relation(
        "P131",
        "located in the administrative territorial entity",
        "item",
        _w("located", "lies", "lie", "situated", "sits", "stands", "in", "based"),
        place=True,
    ),
    Relation("P276", "location", "item", _w("located", "lies", "situated", "in", "housed", "kept"), place=True),
    Relation("P17", "country", "item", _w("located", "lies", "situated", "in", "country"), place=True),
    Relation("P30", "continent", "item", _w("continent"), place=True),
    Relation("P36", "capital", "item", nouns=_w("capital"), inverse_nouns=_w("capital"), single=True),
    Relation("P19", "place of birth", "item", _w("born", "birthplace"), nouns=_w("birthplace"), place=True),
    Relation("P20", "place of death", "item", _w("died"), place=True),
    Relation("P569", "date of birth", "time", _w("born", "birth"), single=True),
    Relation("P570", "date of death", "time", _w("died", "death"), single=True),
    Relation(
        "P571",
        "inception",
        "time",
        _w(
            "founded",
            "established",
            "formed",
            "created",
            "built",
            "completed",
            "constructed",
            "incorporated",
            "launched",
            "painted",
            "dates",
            "construction",
            "began",
        ),
        single=True,
    ),
    Relation(
        "P1619", "date of official opening", "time", _w("opened", "inaugurated", "opening", "dedicated"), single=True
    ),
    Relation("P577", "publication date", "time", _w("published", "released", "premiered", "publication", "came")),
    Relation(
        "P50",
        "author",
        "item",
        _w("wrote", "written", "writes", "authored"),
        nouns=_w("author", "writer"),
        inverse_nouns=_w("author", "writer"),
        active_inverse=True,
    ),
    Relation(
        "P112",
        "founded by",
        "item",
        _w("founded", "cofounded", "co-founded", "established", "started"),
        nouns=_w("founder", "co-founder", "cofounder"),
        inverse_nouns=_w("founder", "co-founder", "cofounder"),
        active_inverse=True,
    ),
    Relation(
        "P57",
        "director",
        "item",
        _w("directed"),
        nouns=_w("director"),
        inverse_nouns=_w("director"),
        active_inverse=True,
    ),
    Relation(
        "P170",
        "creator",
        "item",
        _w("painted", "sculpted", "created", "designed", "drew"),
        nouns=_w("creator", "painter", "sculptor", "designer"),
        inverse_nouns=_w("creator", "painter", "sculptor", "designer"),
        active_inverse=True,
    ),
    Relation("P86", "composer", "item", _w("composed"), nouns=_w("composer"), active_inverse=True),
    Relation("P463", "member of", "item", _w("member", "joined", "belongs")),
    Relation("P27", "country of citizenship", "item", _w("citizen", "citizenship", "national", "nationality")),
    Relation("P69", "educated at", "item", _w("studied", "educated", "attended", "graduated", "alumnus")),
    Relation("P38", "currency", "item", _w("currency"), nouns=_w("currency")),
    Relation("P37", "official language", "item", _w("language", "spoken"), nouns=_w("language")),
    Relation(
        "P6",
        "head of government",
        "item",
        nouns=_w("mayor", "chancellor", "minister", "premier"),
        inverse_nouns=_w("mayor", "chancellor", "minister", "premier"),
        single=True,
    ),
    Relation(
        "P35",
        "head of state",
        "item",
        nouns=_w("president", "king", "queen", "monarch"),
        inverse_nouns=_w("president", "king", "queen", "monarch"),
        single=True,
    ),
    Relation("P2048", "height", "quantity", _w("tall", "high", "height"), nouns=_w("height"), single=True),
    Relation(
        "P2044",
        "elevation above sea level",
        "quantity",
        _w("high", "tall", "height", "elevation", "altitude", "rises", "sea"),
        nouns=_w("elevation", "altitude", "height"),
        single=True,
    ),
    Relation("P2120", "radius", "quantity", _w("radius"), nouns=_w("radius"), single=True),
    Relation("P1086", "atomic number", "quantity", _w("atomic"), nouns=_w("atomic"), single=True),
    Relation("P2043", "length", "quantity", _w("long", "length"), nouns=_w("length"), single=True),
    Relation("P2046", "area", "quantity", _w("area", "covers", "square"), nouns=_w("area"), single=True),
    Relation(
        "P1082",
        "population",
        "quantity",
        _w("population", "inhabitants", "residents", "people", "populated"),
        nouns=_w("population"),
        single=True,
    ),
)

BY_PROPERTY = {relation.property: relation for relation in RELATIONS}
# The properties whose values are followed up the "located in" chain (their own P131 and country).
CHAIN = ("P131", "P17")
# Place properties too coarse to be where an entity is (a country, a continent): not its nearest place.
COARSE = frozenset({"P17", "P30"})
# Words too general to select a relation on their own: "in" selects a place only when nothing else does.
WEAK_WORDS = frozenset({"in", "based"})


def relations_for(
    words: Iterable[str], kind: Kind, *, nouns: Iterable[str] = (), inverse: bool = False
) -> list[Relation]:
    """The relations of ``kind`` the claim's ``words`` (lower-cased) or relational ``nouns`` select, strongest
    first: a noun, then a word that is not :data:`WEAK_WORDS`, then a weak word (places only).

    ``inverse``: the nouns are read with the claim's subject as the value ("X is the capital of Y").
    """
    said = {word.lower() for word in words}
    named = {noun.lower() for noun in nouns}
    by_noun, by_word, by_weak = [], [], []
    for relation in RELATIONS:
        if relation.kind != kind:
            continue
        if named & (relation.inverse_nouns if inverse else relation.nouns):
            by_noun.append(relation)
        elif said & (relation.words - WEAK_WORDS):
            by_word.append(relation)
        elif said & relation.words & WEAK_WORDS:
            by_weak.append(relation)
    return by_noun or by_word or by_weak
