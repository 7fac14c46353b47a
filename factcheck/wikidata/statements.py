"""Statements as the API gives them (their main value, rank and qualifiers), read and said as sentences."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from factcheck.wikidata.values import Qualifiers, Quantity, Time

# The datavalue type of each kind of value a relation takes.
DATAVALUE_TYPES = {"item": "wikibase-entityid", "time": "time", "quantity": "quantity"}
RANK_WORDS = {"preferred": "preferred rank", "deprecated": "deprecated rank"}


def datavalue(statement: Mapping[str, Any]) -> Mapping[str, Any] | None:
    """The statement's main value (``mainsnak.datavalue``), or ``None`` for "no value", "unknown value" or junk."""
    snak = statement.get("mainsnak")
    if not isinstance(snak, Mapping) or snak.get("snaktype", "value") != "value":
        return None
    value = snak.get("datavalue")
    return value if isinstance(value, Mapping) and isinstance(value.get("value"), Mapping | str) else None


def statement_values(statement: Mapping[str, Any], kind: str) -> bool:
    """Whether the statement holds a value of ``kind`` (item, time, quantity)."""
    value = datavalue(statement)
    return value is not None and value.get("type") == DATAVALUE_TYPES.get(kind)


def item_id(statement: Mapping[str, Any]) -> str | None:
    """The id of the item the statement names, if it names one."""
    value = datavalue(statement)
    inner = value.get("value") if value is not None and value.get("type") == "wikibase-entityid" else None
    if not isinstance(inner, Mapping):
        return None
    identifier = inner.get("id")
    if isinstance(identifier, str) and identifier:
        return identifier
    number = inner.get("numeric-id")
    return f"Q{number}" if isinstance(number, int) and not isinstance(number, bool) else None


def value_ids(statements: Iterable[Mapping[str, Any]]) -> list[str]:
    """The ids of the items the statements name, in order, once each."""
    return list(dict.fromkeys(i for s in statements if (i := item_id(s)) is not None))


def item_ref(entity: Mapping[str, Any]) -> dict[str, Any]:
    """An item's id, label, aliases and description (what evidence keeps of it)."""
    return {
        "id": entity.get("id", ""),
        "label": entity.get("label") or "",
        "aliases": list(entity.get("aliases") or []),
        "description": entity.get("description") or "",
    }


def value_text(statement: Mapping[str, Any], items: Mapping[str, Mapping[str, Any]]) -> str:
    """The statement's value for a reader: an item's label, a date at its precision, a quantity with its unit."""
    value = datavalue(statement)
    given = statement.get("mainsnak")
    snak: Mapping[str, Any] = given if isinstance(given, Mapping) else {}
    if value is None:
        return "no value" if snak.get("snaktype") == "novalue" else "an unknown value"
    inner = value.get("value")
    if value.get("type") == "wikibase-entityid":
        identifier = item_id(statement) or "?"
        label = (items.get(identifier) or {}).get("label")
        return f"{label} ({identifier})" if label else identifier
    if value.get("type") == "time" and isinstance(inner, Mapping) and (time := Time.from_datavalue(inner)):
        return time.text()
    if value.get("type") == "quantity" and isinstance(inner, Mapping) and (quantity := Quantity.from_datavalue(inner)):
        return quantity.text()
    return str(inner)[:200]


def qualifier_text(statement: Mapping[str, Any]) -> str:
    """Its rank (when not normal) and its time qualifiers, for a reader: "preferred rank; from 1990"."""
    qualifiers = Qualifiers.from_statement(statement)
    parts = [RANK_WORDS[qualifiers.rank]] if qualifiers.rank in RANK_WORDS else []
    if qualifiers.start is not None and qualifiers.end is not None:
        parts.append(f"from {qualifiers.start.text()} to {qualifiers.end.text()}")
    elif qualifiers.start is not None:
        parts.append(f"from {qualifiers.start.text()}")
    elif qualifiers.end is not None:
        parts.append(f"until {qualifiers.end.text()}")
    if qualifiers.point is not None:
        parts.append(f"as of {qualifiers.point.text()}")
    return "; ".join(parts)


def describe_statement(
    subject: Mapping[str, Any],
    property_label: str,
    statement: Mapping[str, Any],
    items: Mapping[str, Mapping[str, Any]],
) -> str:
    """The statement as a sentence: "Eiffel Tower — located in the administrative territorial entity — 7th
    arrondissement of Paris (within Paris, France) [preferred rank; from 1990]"."""
    text = f"{subject.get('label') or subject.get('id')} — {property_label} — {value_text(statement, items)}"
    identifier = item_id(statement)
    chain = _chain_labels(identifier, items) if identifier else []
    if chain:
        text += f" (within {', '.join(chain)})"
    if qualified := qualifier_text(statement):
        text += f" [{qualified}]"
    return text


def _chain_labels(identifier: str, items: Mapping[str, Mapping[str, Any]]) -> list[str]:
    """The labels of the places ``identifier`` lies within (P131, then P17), nearest first, as far as known."""
    labels: list[str] = []
    seen = {identifier}
    current = items.get(identifier)
    while current is not None:
        claims = current.get("claims") or {}
        parents = [
            i
            for p in ("P131", "P17")
            for s in claims.get(p, [])
            if s.get("rank") != "deprecated" and (i := item_id(s)) is not None and i not in seen and i in items
        ]
        if not parents:
            break
        seen.add(parents[0])
        current = items[parents[0]]
        labels.append(current.get("label") or parents[0])
    return labels
