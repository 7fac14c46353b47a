"""The ``wikidata`` source: the statements Wikidata holds on what an entity claim says.

For each fact a claim states (:func:`factcheck.wikidata.reading.read_claim`: "the height of Mount Everest
is 8,849 m") the source finds the entity and reads its statements of the matching properties
(:mod:`factcheck.wikidata.relations`):

1. the entity's name is searched (``wbsearchentities``, a prefix search on labels and aliases); the items
   whose label or alias *is* the name are the candidates, read with one ``wbgetentities`` request;
2. of those, the ones with a statement of the property; several left are told apart by the claim's other
   words against their descriptions ("Paris, Texas"); still several, and the source gives them all as
   candidates, and the verifier abstains, naming them;
3. an item value is read with its labels and aliases, and a place with the places it lies within (its
   P131 chain and countries, one request a level), so "in Paris" is found for a tower in the 7th
   arrondissement; the claimed item's name is searched too (its candidates, with their countries);
4. each statement becomes one passage: a sentence a reader can follow ("Eiffel Tower — located in the
   administrative territorial entity — 7th arrondissement of Paris"), with its rank and time qualifiers,
   linked to the statement on the item's page, and the statement itself as ``data`` for the ``wikidata``
   verifier (:mod:`factcheck.verifiers.wikidata`), which compares it with the claim by its type.

An entity found with no statement of the property gives one passage that says so (its description), and
the verifier abstains with that reason. A claim that names no entity costs no request at all.

Every request goes through :class:`factcheck.sources.mediawiki.MediaWiki` (User-Agent, ``maxlag``,
retries, the check's cache). ``api_url`` points it at any Wikibase (default Wikidata's); the options
``language`` (labels and search), ``user_agent`` (else ``FACTCHECK_WIKIDATA_USER_AGENT``, else
``FACTCHECK_WIKIPEDIA_USER_AGENT``), ``timeout_s``, ``concurrency`` and ``candidates`` (search hits read).
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any
from urllib.parse import urlsplit

from factcheck.errors import ConfigError, FactcheckError
from factcheck.options import setting
from factcheck.plugin import Source, hookimpl
from factcheck.sources.mediawiki import USER_AGENT_ENV, MediaWiki, check_user_agent, chosen_user_agent, now_stamp
from factcheck.sources.wikibase import DEFAULT_URL, SERVICE, VERSION, Wikibase
from factcheck.types import Claim, Evidence
from factcheck.usage import record_note
from factcheck.wikidata.properties import best_property
from factcheck.wikidata.propose import checked, propose
from factcheck.wikidata.reading import Reading, names_an_entity, read_claim
from factcheck.wikidata.relations import BY_PROPERTY, CHAIN, COARSE, Relation
from factcheck.wikidata.statements import describe_statement, item_ref, statement_values, value_ids
from factcheck.wikidata.values import ItemRef, names, normalise_name

WIKIDATA_USER_AGENT_ENV = "FACTCHECK_WIKIDATA_USER_AGENT"
USER_AGENT_SETTING = (
    f"the wikidata agent's user_agent option ([agents.wikidata] user_agent = ...) or {WIKIDATA_USER_AGENT_ENV}"
)
# Instances of these are countries themselves (P31): country, sovereign state.
COUNTRY_CLASSES = frozenset({"Q6256", "Q3624078"})
# Words a name may carry that Wikidata's labels do not: "the Île-de-France region", "the city of Paris".
_GENERIC_AFTER = re.compile(r"\s+(?:region|state|province|county|city|district|country|river|mountain|island)$", re.I)
_GENERIC_BEFORE = re.compile(r"^(?:the\s+)?(?:city|state|province|county|republic|kingdom)\s+of\s+", re.I)
MAX_DEPTH = 6  # levels of the "located in" chain followed (tower, district, city, region, country ...)
_LANGUAGE = re.compile(r"[a-z]{2,3}(?:-[a-z0-9]+)*")
_WORD = re.compile(r"[^\W\d_]+")


@dataclass(frozen=True)
class WikidataSource(Source):
    """Wikidata's statements on the facts an entity claim states (see the module's description)."""

    reuse_judgments = True
    supplementary = True  # entity claims only: never the one agent that lets a keyless paper run go on

    name = "wikidata"
    api_url: str = DEFAULT_URL
    language: str = "en"
    candidates: int = setting(7, minimum=1, maximum=50)
    timeout_s: float = setting(20.0, minimum=0, min_open=True, unit="seconds")
    concurrency: int = setting(1, minimum=1)
    user_agent: str | None = None
    # "llm": where the parse reads no entity fact in a claim that names something, the model proposes one
    # (factcheck.wikidata.propose), checked against the claim's words; the comparison stays typed.
    propose: str = setting("off", choices=("off", "llm"))
    model: str | None = None
    base_url: str | None = None
    transport_options = frozenset({"timeout_s", "concurrency", "user_agent"})

    def __post_init__(self) -> None:
        super().__post_init__()
        parts = urlsplit(self.api_url) if isinstance(self.api_url, str) else None
        if parts is None or parts.scheme not in {"http", "https"} or not parts.netloc:
            raise ConfigError(f"wikidata: api_url must be an http(s) URL of a Wikibase api.php, got {self.api_url!r}")
        if not isinstance(self.language, str) or not _LANGUAGE.fullmatch(self.language):
            raise ConfigError(f"wikidata: language must be a language code like 'en', got {self.language!r}")
        if self.user_agent is not None:
            check_user_agent(self.user_agent, "user_agent", "wikidata")

    def cache_version(self) -> str:
        return f"{super().cache_version()}:{VERSION}"

    async def prepare(self) -> None:
        """Fail once, before the first claim, when the User-Agent set in the environment cannot be a header."""
        self.user_agent_header()

    def user_agent_header(self) -> str:
        return chosen_user_agent(self.user_agent, "wikidata", (WIKIDATA_USER_AGENT_ENV, USER_AGENT_ENV))

    def base(self) -> Wikibase:
        wiki = MediaWiki(
            endpoint=self.api_url,
            user_agent=self.user_agent_header(),
            timeout_s=self.timeout_s,
            concurrency=self.concurrency,
            user_agent_setting=USER_AGENT_SETTING,
            service=SERVICE,
            version=VERSION,
        )
        return Wikibase(wiki, self.language)

    def item_url(self, identifier: str, anchor: str = "") -> str:
        """The item's page on the wiki the API belongs to (``.../wiki/Q243``), at ``anchor`` if given."""
        parts = urlsplit(self.api_url)
        path = parts.path.rsplit("/", 2)[0] if parts.path.endswith("/w/api.php") else parts.path.rsplit("/", 1)[0]
        return f"{parts.scheme}://{parts.netloc}{path}/wiki/{identifier}" + (f"#{anchor}" if anchor else "")

    async def retrieve(self, claim: Claim) -> list[Evidence]:
        readings = await asyncio.to_thread(read_claim, claim.text)
        proposal: dict[str, Any] | None = None
        if not readings and self.propose == "llm" and await asyncio.to_thread(names_an_entity, claim.text):
            proposal = await self._proposal(claim.text)
            reading = checked(claim.text, proposal) if proposal is not None else None
            readings = (reading,) if reading is not None else ()
        if not readings:
            return []
        base = self.base()
        found = await asyncio.gather(
            *(self._read(base, n, reading, claim.text, proposal) for n, reading in enumerate(readings))
        )
        return [evidence for part in found for evidence in part]

    async def _proposal(self, claim: str) -> dict[str, Any] | None:
        """The model's proposal (its JSON), or None when it has none or cannot be asked (said in the notes)."""
        try:
            return await propose(claim, self.model, self.base_url)
        except FactcheckError as exc:
            record_note(f"wikidata: no model's proposal ({exc}); claims the parse cannot read get no judgment")
            return None

    async def _read(
        self, base: Wikibase, n: int, reading: Reading, claim: str, proposal: dict[str, Any] | None = None
    ) -> list[Evidence]:
        retrieved = now_stamp()
        about = _reading_data(n, reading)
        if proposal is not None:
            about["proposal"] = proposal  # the verifier reads the claim as the checked proposal did
        subjects = await self._subjects(base, reading.subject, reading, claim)
        if not subjects:
            return []  # nothing to show: the verifier says no item is named so
        if not reading.relations:  # no relation of the table: the entity's own properties, by meaning
            matched = [(s, r) for s in subjects if (r := await self._by_meaning(base, s, reading)) is not None]
            if len(matched) == 1:
                subjects, reading = [matched[0][0]], replace(reading, relations=(matched[0][1],))
            elif not matched:
                reason = f"no Wikidata statement on what {reading.phrase!r} says"
                return [self._note(about, retrieved, reason, subjects[0])]
            else:
                return [self._note(about, retrieved, "ambiguous", s, kind="candidate") for s, _ in matched]
        relation_of = {r.property: r for r in reading.relations}
        with_property = [s for s in subjects if _statements(s, reading)]
        if not with_property:
            subject = subjects[0]
            return [self._note(about, retrieved, f"no Wikidata statement on {_question(reading, subject)}", subject)]
        if len(with_property) > 1:
            return [
                self._note(about, retrieved, "ambiguous", s, kind="candidate") for s in with_property[: self.candidates]
            ]
        subject = with_property[0]
        statements = _statements(subject, reading)
        values = await self._value_items(base, statements, chain=any(r.place for r in reading.relations))
        located = any(r.place for r in reading.relations)
        claimed = await self._claimed_items(base, reading, located) if reading.kind == "item" else []
        # The places the subject lies in: its place statements' values and all they lie within.
        placed = [(p, s) for p, s in statements if relation_of[p].place and s.get("rank") != "deprecated"]
        # The finest places it is said to lie in: its P131 or P276 values, else its countries.
        nearest = value_ids([s for p, s in placed if p not in COARSE]) or value_ids([s for _, s in placed])
        places = [*nearest, *(i for i in _within(nearest, values) if i not in nearest)]
        countries = _countries([subject, *(values[i] for i in places if i in values)])
        evidence = []
        for prop, statement in statements:
            data = {
                **about,
                "kind": "statement",
                "item": item_ref(subject),
                "property": prop,
                "property_label": relation_of[prop].label,
                "single": relation_of[prop].single,
                "place": relation_of[prop].place,
                "statement": statement,
                "values": {i: item_ref(values[i]) for i in value_ids([statement]) if i in values},
                "within": [item_ref(values[i]) for i in _within(value_ids([statement]), values)],
                "countries": countries,
                "nearest": nearest if located else [],
                "places": places if located else [],
                "candidates": claimed,
            }
            text = describe_statement(subject, relation_of[prop].label, statement, values)
            evidence.append(
                Evidence(
                    source=self.name,
                    text=text,
                    title=f"Wikidata: {subject['label'] or subject['id']} ({subject['id']})",
                    url=self.item_url(subject["id"], statement.get("id") or prop),
                    retrieved_at=retrieved,
                    data=data,
                )
            )
        return evidence

    def _note(
        self, about: dict[str, Any], retrieved: str, reason: str, subject: Mapping[str, Any], kind: str = "item"
    ) -> Evidence:
        """A passage that says what was found: an item without the statement, or one of several candidates."""
        label = subject.get("label") or subject["id"]
        text = f"{label} ({subject['id']}): {subject.get('description') or 'no description'}."
        if kind == "item":
            text += f" It has {reason}."
        data = {**about, "kind": kind, "reason": reason, "item": item_ref(subject)}
        title, url = f"Wikidata: {label} ({subject['id']})", self.item_url(subject["id"])
        return Evidence(source=self.name, text=text, title=title, url=url, retrieved_at=retrieved, data=data)

    async def _subjects(self, base: Wikibase, mention: str, reading: Reading, claim: str) -> list[dict[str, Any]]:
        """The items named exactly ``mention`` (by label or alias), those with the property first and, among
        several, those whose description shares the most of the claim's other words."""
        _, exact = await self._named(base, mention)
        if not exact:
            return []
        entities = await base.entities(exact)
        items = [entities[i] for i in exact if i in entities and not entities[i].get("missing")]
        return _best_described(items, reading, claim)

    async def _by_meaning(self, base: Wikibase, subject: Mapping[str, Any], reading: Reading) -> Relation | None:
        """The subject's property that the reading's words say, by meaning (:mod:`factcheck.wikidata.properties`),
        among those holding a value of the reading's kind: one request for their labels and aliases."""
        claims = subject.get("claims") or {}
        props = [p for p, found in claims.items() if any(statement_values(s, reading.kind) for s in found)]
        if not props:
            return None
        entities = await base.entities(props)
        names = [
            (p, name)
            for p in props
            if p in entities and not entities[p].get("missing")
            for name in (entities[p].get("label"), *(entities[p].get("aliases") or ()))
            if name
        ]
        found = await asyncio.to_thread(best_property, reading.phrase, names)
        if found is None:
            return None
        prop = found[0]
        known = BY_PROPERTY.get(prop)
        label = (known.label if known else "") or entities[prop].get("label") or prop
        # Found by meaning, never single-valued: it may confirm a claim, not exclude one.
        return Relation(prop, label, reading.kind, place=known.place if known else False)

    async def _named(self, base: Wikibase, mention: str) -> tuple[str, list[str]]:
        """The ids of the items whose label or alias is ``mention`` (a prefix search, then its exact hits); when
        none is, the same for the name without its generic words ("the Île-de-France region", "Paris, Texas"
        read as "Paris"), one more search each, until one finds some."""
        for name in _variants(mention):
            hits = await base.search(name, limit=self.candidates)
            exact = [hit["id"] for hit in hits if normalise_name(hit["matched"]) == normalise_name(name)]
            if exact:
                return name, list(dict.fromkeys(exact))
        return mention, []

    async def _value_items(
        self, base: Wikibase, statements: Sequence[tuple[str, dict[str, Any]]], chain: bool
    ) -> dict[str, dict[str, Any]]:
        """The items the statements name, and for places the items they lie within."""
        return await _with_chains(base, value_ids([s for _, s in statements]), chain)

    async def _claimed_items(self, base: Wikibase, reading: Reading, located: bool) -> list[dict[str, Any]]:
        """The items the claimed value's name names exactly; for a place, with the places it lies within and
        their countries (the place rule of the verifier)."""
        assert isinstance(reading.value, str)
        named, exact = await self._named(base, reading.value)
        if not exact:
            return []
        entities = await base.entities(exact)
        found = [entities[i] for i in exact if i in entities and not entities[i].get("missing")]
        if not located:
            return [{**item_ref(item), "named": named} for item in found]
        parents = value_ids([s for item in found for s in _values_of(item, CHAIN)])
        known = await _with_chains(base, parents, True, {item["id"]: item for item in found})
        return [
            {
                **item_ref(item),
                "named": named,
                "within": (within := _within([item["id"]], known)),
                "countries": _countries([item, *(known[i] for i in within)]),
            }
            for item in found
        ]


async def _with_chains(
    base: Wikibase, ids: Iterable[str], chain: bool, known: Mapping[str, dict[str, Any]] | None = None
) -> dict[str, dict[str, Any]]:
    """``known`` with the entities of ``ids`` and, with ``chain``, of every place they lie within (P131 and
    country), one request a level, at most :data:`MAX_DEPTH` levels."""
    found_all = dict(known or {})
    wanted = set(ids)
    for _ in range(MAX_DEPTH if chain else 1):
        wanted -= set(found_all)
        if not wanted:
            break
        found = await base.entities(wanted)
        found_all.update({i: e for i, e in found.items() if not e.get("missing")})
        wanted = {v for e in found.values() for v in value_ids(_values_of(e, CHAIN))}
    return found_all


def _variants(mention: str) -> list[str]:
    """``mention``, then the forms of it a label is more likely to have, each once."""
    forms = [mention, _GENERIC_BEFORE.sub("", _GENERIC_AFTER.sub("", mention)).strip()]
    words = mention.split()
    if len(words) > 1 and words[0].islower():  # "planet Mercury", "element mercury": the name after the kind
        forms.append(" ".join(words[1:]))
    if "," in mention:
        forms.append(mention.split(",")[0].strip())
    return [form for form in dict.fromkeys(forms) if form]


def _reading_data(n: int, reading: Reading) -> dict[str, Any]:
    return {
        "reading": n,
        "subject": reading.subject,
        "relations": [r.property for r in reading.relations],
        "value_kind": reading.kind,
        "value": reading.value_text(),
    }


def _question(reading: Reading, subject: Mapping[str, Any]) -> str:
    labels = " or ".join(dict.fromkeys(r.label for r in reading.relations))
    return f"the {labels} of {subject.get('label') or subject['id']}"


def _statements(entity: Mapping[str, Any], reading: Reading) -> list[tuple[str, dict[str, Any]]]:
    """The entity's statements of the reading's properties that hold a value of the reading's kind."""
    claims = entity.get("claims") or {}
    return [
        (r.property, statement)
        for r in reading.relations
        for statement in claims.get(r.property, [])
        if statement_values(statement, r.kind)
    ]


def _values_of(entity: Mapping[str, Any], properties: Iterable[str]) -> list[dict[str, Any]]:
    """The entity's non-deprecated statements of ``properties``."""
    claims = entity.get("claims") or {}
    return [s for p in properties for s in claims.get(p, []) if s.get("rank") != "deprecated"]


def _countries(items: Iterable[Mapping[str, Any]]) -> list[str]:
    """The countries of the given items: their P17 values, and those of them that are countries themselves
    (an instance of country or sovereign state), sorted."""
    found: set[str] = set()
    for item in items:
        found.update(value_ids(_values_of(item, ("P17",))))
        if COUNTRY_CLASSES & set(value_ids(_values_of(item, ("P31",)))):
            found.add(item["id"])
    return sorted(found)


def _within(ids: Iterable[str], known: Mapping[str, Mapping[str, Any]]) -> list[str]:
    """The items the given ones lie within, nearest first (their P131 chain and countries, as far as known)."""
    order: list[str] = []
    frontier = [i for i in ids if i in known]
    while frontier:
        step = []
        for i in frontier:
            for parent in value_ids(_values_of(known[i], CHAIN)):
                if parent not in order and parent in known:
                    order.append(parent)
                    step.append(parent)
        frontier = step
    return order


def _best_described(items: list[dict[str, Any]], reading: Reading, claim: str) -> list[dict[str, Any]]:
    """``items`` with the property first; among those, only the ones whose description and names share the most
    of the claim's words that are not the entity's own name (all of them when none shares any)."""
    having = [item for item in items if _statements(item, reading)]
    if len(having) <= 1:
        return having + [item for item in items if item not in having]
    own = set(_WORD.findall(reading.subject.split(",")[0].lower()))  # "Georgia, the country": "country" counts
    words = {w for w in _WORD.findall(claim.lower()) if len(w) > 2} - own
    scores = [len(words & set(_WORD.findall(_described(item).lower()))) for item in having]
    top = max(scores)
    return [item for item, score in zip(having, scores, strict=True) if score == top] if top else having


def _described(item: Mapping[str, Any]) -> str:
    return " ".join([item.get("description") or "", *sorted(names_of(item))])


def names_of(item: Mapping[str, Any]) -> set[str]:
    return set(names(ItemRef(id=item["id"], label=item.get("label") or "", aliases=tuple(item.get("aliases") or ()))))


@hookimpl
def register_sources(register: Callable[[Any], None]) -> None:
    register(WikidataSource())
