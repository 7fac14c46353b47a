"""The Wikibase Action API (Wikidata's, or any Wikibase's ``api.php``): entity search and entity data.

Two modules of the API are used, each through :class:`factcheck.sources.mediawiki.MediaWiki` (so every
request has the project's User-Agent, ``maxlag``, retries honouring ``Retry-After``, the per-host limit, the
remembered User-Agent refusal and the check's cache):

- ``action=wbsearchentities``: items (or properties) whose label or alias **starts with** the text, in one
  language (a prefix search: it is given an entity's name, never a whole claim);
- ``action=wbgetentities``: labels, aliases, descriptions and statements of at most :data:`MAX_IDS` entities
  a request (more are split into several requests, sent together).

What is cached is the parsed answer, smaller than the API's: statements keep their main value, rank,
qualifiers and id, not their references.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from factcheck.errors import SourceError
from factcheck.sources.mediawiki import MAXLAG_S, MediaWiki

SERVICE = "wikidata"
VERSION = "1"  # bump when the requests or the parsing of answers change, to invalidate cached entries
DEFAULT_URL = "https://www.wikidata.org/w/api.php"
MAX_IDS = 50  # wbgetentities' limit for a client without the apihighlimits right ("toomanyvalues")
SEARCH_LIMIT = 7  # wbsearchentities' own default
ENTITY_PROPS = ("labels", "aliases", "descriptions", "claims")


def _answer(data: Any) -> Mapping[str, Any]:
    """``data`` as an answer object; SourceError for an API error (HTTP 200 with an ``error`` object) or junk."""
    if not isinstance(data, Mapping):
        raise SourceError(f"{SERVICE}: unexpected answer (a JSON {type(data).__name__}, not an object)")
    error = data.get("error")
    if isinstance(error, Mapping):
        raise SourceError(f"{SERVICE}: API error {error.get('code', '?')}: {error.get('info', '')}".rstrip(": "))
    return data


def _text(value: Any) -> str:
    return value if isinstance(value, str) else ""


def _mapping(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def parse_search(data: Any) -> list[dict[str, Any]]:
    """The hits of a ``wbsearchentities`` answer, best first, as ``{"id", "label", "description", "match"}``
    (``match``: ``"label"`` or ``"alias"``, and the text that matched, ``"matched"``)."""
    hits = _answer(data).get("search", [])
    if not isinstance(hits, list):
        raise SourceError(f"{SERVICE}: unexpected answer: 'search' is not a list")
    found = []
    for hit in hits:
        if not isinstance(hit, Mapping) or not _text(hit.get("id")):
            continue
        match = _mapping(hit.get("match"))
        label = _text(hit.get("label")) or _text(_mapping(_mapping(hit.get("display")).get("label")).get("value"))
        found.append(
            {
                "id": hit["id"],
                "label": label,
                "description": _text(hit.get("description")),
                "match": _text(match.get("type")),
                "matched": _text(match.get("text")) or label,
            }
        )
    return found


def _statement(statement: Mapping[str, Any]) -> dict[str, Any] | None:
    """A statement without its references: ``mainsnak``, ``rank``, ``qualifiers``, ``id``."""
    mainsnak = statement.get("mainsnak")
    if not isinstance(mainsnak, Mapping):
        return None
    kept: dict[str, Any] = {"mainsnak": dict(mainsnak), "rank": _text(statement.get("rank")) or "normal"}
    if isinstance(statement.get("qualifiers"), Mapping):
        kept["qualifiers"] = dict(statement["qualifiers"])
    if _text(statement.get("id")):
        kept["id"] = statement["id"]
    return kept


def _entity(entity: Mapping[str, Any], language: str) -> dict[str, Any]:
    """One entity of a ``wbgetentities`` answer: ``{"id", "label", "aliases", "description", "claims"}``, or
    ``{"id", "missing": True}`` for an id with no entity."""
    identifier = _text(entity.get("id"))
    if "missing" in entity:
        return {"id": identifier, "missing": True}

    def in_language(field: str) -> Any:
        values = entity.get(field)
        return values.get(language) if isinstance(values, Mapping) else None

    aliases = in_language("aliases")
    claims = _mapping(entity.get("claims"))
    return {
        "id": identifier,
        "label": _text((in_language("labels") or {}).get("value")),
        "aliases": [a["value"] for a in aliases or [] if isinstance(a, Mapping) and _text(a.get("value"))],
        "description": _text((in_language("descriptions") or {}).get("value")),
        "claims": {
            prop: [kept for s in statements if isinstance(s, Mapping) and (kept := _statement(s)) is not None]
            for prop, statements in claims.items()
            if isinstance(statements, list)
        },
    }


def parse_entities(data: Any, language: str) -> dict[str, dict[str, Any]]:
    """The entities of a ``wbgetentities`` answer by id (:func:`_entity`)."""
    entities = _answer(data).get("entities", {})
    if not isinstance(entities, Mapping):
        raise SourceError(f"{SERVICE}: unexpected answer: 'entities' is not an object")
    parsed = {}
    for key, entity in entities.items():
        if isinstance(entity, Mapping):
            item = _entity(entity, language)
            parsed[item["id"] or str(key)] = item
    return parsed


@dataclass(frozen=True)
class Wikibase:
    """One Wikibase's API, read in ``language`` (labels, aliases and descriptions in it)."""

    wiki: MediaWiki
    language: str = "en"

    async def search(self, text: str, kind: str = "item", limit: int = SEARCH_LIMIT) -> list[dict[str, Any]]:
        """Entities of ``kind`` (item, property) whose label or alias starts with ``text``, best first."""
        params: dict[str, str | int] = {
            "action": "wbsearchentities",
            "format": "json",
            "search": text,
            "language": self.language,
            "uselang": self.language,
            "type": kind,
            "limit": limit,
            "maxlag": MAXLAG_S,
        }
        hits: list[dict[str, Any]] = await self.wiki.get(params, parse_search)
        return hits

    async def entities(self, ids: Iterable[str]) -> dict[str, dict[str, Any]]:
        """The entities of ``ids`` by id (labels, aliases, descriptions, statements), :data:`MAX_IDS` a request;
        an id with no entity is ``{"id", "missing": True}``."""
        wanted = sorted(dict.fromkeys(ids), key=_id_order)
        batches = [wanted[i : i + MAX_IDS] for i in range(0, len(wanted), MAX_IDS)]
        answers = await asyncio.gather(*(self._batch(batch) for batch in batches))
        found: dict[str, dict[str, Any]] = {}
        for answer in answers:
            found.update(answer)
        return found

    async def _batch(self, ids: Sequence[str]) -> dict[str, dict[str, Any]]:
        params: dict[str, str | int] = {
            "action": "wbgetentities",
            "format": "json",
            "ids": "|".join(ids),
            "props": "|".join(ENTITY_PROPS),
            "languages": self.language,
            "maxlag": MAXLAG_S,
        }
        language = self.language
        entities: dict[str, dict[str, Any]] = await self.wiki.get(params, lambda data: parse_entities(data, language))
        return entities


def _id_order(identifier: str) -> tuple[str, int]:
    """Q42 before Q142: ids sorted by kind and number, so the same set is always the same requests (and cache keys)."""
    digits = identifier[1:]
    return identifier[:1], int(digits) if digits.isdigit() else -1
