"""bench/probes/wikidata: the entity-claim probe is whole, balanced, in Wikidata's real shapes, and each
item claim is decided by its statements (no network)."""

from __future__ import annotations

import json
import re
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

PROBE = Path(__file__).resolve().parents[1] / "bench" / "probes" / "wikidata"
ENTITIES: dict[str, dict[str, Any]] = json.loads((PROBE / "entities.json").read_text(encoding="utf-8"))
CLAIMS = [json.loads(line) for line in (PROBE / "claims.jsonl").read_text(encoding="utf-8").splitlines()]
NO_ENTITY = [json.loads(line) for line in (PROBE / "no-entity.jsonl").read_text(encoding="utf-8").splitlines()]

ENTITY_URI = "http://www.wikidata.org/entity/"
CALENDARS = {ENTITY_URI + "Q1985727", ENTITY_URI + "Q1985786"}
VALUE_TYPE = {
    "wikibase-item": "wikibase-entityid",
    "time": "time",
    "quantity": "quantity",
    "url": "string",
    "string": "string",
}
TIME = re.compile(r"^[+-]\d{4,}-\d\d-\d\dT00:00:00Z$")
AMOUNT = re.compile(r"^[+-]\d+(\.\d+)?$")
FIELDS = ["id", "claim", "label", "kind", "property", "subject", "object", "as_of", "note"]
# Properties whose values are places: a claim naming a larger place holds when the value lies in it.
PLACES = {"P131", "P276", "P19", "P20", "P17"}


def statements() -> list[tuple[str, dict[str, Any]]]:
    return [(entity_id, s) for entity_id, e in ENTITIES.items() for ss in e.get("claims", {}).values() for s in ss]


def snaks(statement: dict[str, Any]) -> list[dict[str, Any]]:
    found = [statement["mainsnak"]]
    found += [q for qs in statement.get("qualifiers", {}).values() for q in qs]
    found += [s for ref in statement.get("references", []) for ss in ref["snaks"].values() for s in ss]
    return found


def year(snak: dict[str, Any]) -> int:
    return int(snak["datavalue"]["value"]["time"][:5])


def holds(statement: dict[str, Any], as_of: str | None) -> bool:
    """Whether a statement is current (no as_of) or valid in the year as_of, by its P580/P582."""
    if statement["rank"] == "deprecated" or statement["mainsnak"]["snaktype"] != "value":
        return False
    qualifiers = statement.get("qualifiers", {})
    start = min((year(q) for q in qualifiers.get("P580", [])), default=None)
    end = max((year(q) for q in qualifiers.get("P582", [])), default=None)
    if as_of is None:
        return end is None
    return (start is None or start <= int(as_of)) and (end is None or int(as_of) <= end)


def values(entity_id: str, prop: str, as_of: str | None = None) -> set[str]:
    found = ENTITIES[entity_id]["claims"].get(prop, [])
    return {s["mainsnak"]["datavalue"]["value"]["id"] for s in found if holds(s, as_of)}


def enclosing(place: str) -> set[str]:
    """The place, and every entity it lies in by P131 and P17, followed to the end."""
    seen, todo = set(), [place]
    while todo:
        current = todo.pop()
        if current not in seen:
            seen.add(current)
            todo += sorted(values(current, "P131") | values(current, "P17"))
    return seen


def test_the_claims_are_many_balanced_and_of_each_kind() -> None:
    kinds = Counter(c["kind"] for c in CLAIMS)
    labels = Counter(c["label"] for c in CLAIMS)
    assert len(CLAIMS) >= 160
    assert labels[True] == labels[False] == len(CLAIMS) // 2
    assert kinds["item"] >= 70 and kinds["time"] >= 45 and kinds["quantity"] >= 35
    assert set(kinds) == {"item", "time", "quantity"}
    assert sum(c["as_of"] is not None for c in CLAIMS) >= 10
    assert sum(c["property"] == "P131" for c in CLAIMS) >= 20
    assert sum(c["property"] in ("P36", "P1376") and c["as_of"] is None for c in CLAIMS) >= 15
    assert sum("deprecated" in c["note"] for c in CLAIMS) >= 3
    assert sum("ambiguous label" in c["note"] for c in CLAIMS) >= 5


def test_each_claim_has_the_fields_in_order_a_unique_id_and_known_subject_property_and_object() -> None:
    assert [c["id"] for c in CLAIMS] == [f"wd-{i:03d}" for i in range(1, len(CLAIMS) + 1)]
    assert len({c["claim"] for c in CLAIMS}) == len(CLAIMS)
    for claim in CLAIMS:
        assert list(claim) == FIELDS, claim["id"]
        assert isinstance(claim["label"], bool) and claim["claim"].endswith("."), claim["id"]
        assert ENTITIES[claim["subject"]]["type"] == "item", claim["id"]
        assert ENTITIES[claim["property"]]["type"] == "property", claim["id"]
        assert claim["property"] in ENTITIES[claim["subject"]]["claims"], claim["id"]
        assert claim["object"] is None or ENTITIES[claim["object"]]["type"] == "item", claim["id"]
        assert claim["as_of"] is None or re.fullmatch(r"\d{4}", claim["as_of"]), claim["id"]


def test_the_no_entity_claims_are_ten_and_name_no_entity_of_the_probe() -> None:
    labels = {e["labels"]["en"]["value"].casefold() for e in ENTITIES.values()}
    assert len(NO_ENTITY) == 10 and NO_ENTITY[0]["claim"] == "Statins lower LDL cholesterol."
    for row in NO_ENTITY:
        words = set(re.findall(r"[\w-]+", row["claim"].casefold()))
        assert not words & {label for label in labels if " " not in label and len(label) > 3}, row["id"]


@pytest.mark.parametrize("claim", [c for c in CLAIMS if c["kind"] == "item" and c["object"]], ids=lambda c: c["id"])
def test_each_item_claim_is_decided_by_the_statements(claim: dict[str, Any]) -> None:
    found = values(claim["subject"], claim["property"], claim["as_of"])
    if claim["property"] in PLACES:
        found = set().union(*(enclosing(place) for place in found)) if found else set()
    assert (claim["object"] in found) is claim["label"], (claim["claim"], sorted(found))


def test_every_statement_has_wikidatas_shape() -> None:
    guid = re.compile(r"^(?P<subject>[QP]\d+)\$[0-9A-F]{8}-[0-9A-F]{4}-[0-9A-F]{4}-[0-9A-F]{4}-[0-9A-F]{12}$")
    ranks: Counter[str] = Counter()
    for subject, statement in statements():
        match = guid.match(statement["id"])
        assert match and match["subject"] == subject, statement["id"]
        assert statement["type"] == "statement"
        assert statement["rank"] in ("preferred", "normal", "deprecated")
        ranks[statement["rank"]] += 1
        assert statement.get("qualifiers-order", []) == list(statement.get("qualifiers", {}))
        if statement["rank"] == "deprecated":
            assert "P2241" in statement["qualifiers"], statement["id"]
        for snak in snaks(statement):
            prop = ENTITIES[snak["property"]]
            assert snak["datatype"] == prop["datatype"], statement["id"]
            assert re.fullmatch(r"[0-9a-f]{40}", snak["hash"])
            assert snak["snaktype"] in ("value", "somevalue", "novalue")
            if snak["snaktype"] != "value":
                assert "datavalue" not in snak
                continue
            value = snak["datavalue"]
            assert value["type"] == VALUE_TYPE[prop["datatype"]], statement["id"]
            check_value(value["type"], value["value"], statement["id"])
    assert ranks["preferred"] >= 10 and ranks["deprecated"] >= 3 and ranks["normal"] > ranks["preferred"]
    snaktypes = Counter(s["mainsnak"]["snaktype"] for _, s in statements())
    assert snaktypes["somevalue"] >= 2 and snaktypes["novalue"] >= 2


def check_value(kind: str, value: Any, where: str) -> None:
    if kind == "wikibase-entityid":
        assert value["id"] in ENTITIES, where  # every value can be followed
        assert value["numeric-id"] == int(value["id"][1:]) and value["entity-type"] == "item", where
    elif kind == "time":
        assert TIME.match(value["time"]), where
        assert value["precision"] in (7, 8, 9, 10, 11) and value["calendarmodel"] in CALENDARS, where
        assert (value["timezone"], value["before"], value["after"]) == (0, 0, 0), where
        month, day = value["time"].split("T")[0][-5:].split("-")
        assert (month == "00") == (value["precision"] < 10) and (day == "00") == (value["precision"] < 11), where
    elif kind == "quantity":
        assert AMOUNT.match(value["amount"]), where
        assert value["unit"] == "1" or value["unit"].removeprefix(ENTITY_URI) in ENTITIES, where
        if "upperBound" in value:
            assert AMOUNT.match(value["upperBound"]) and AMOUNT.match(value["lowerBound"]), where
            assert float(value["lowerBound"]) <= float(value["amount"]) <= float(value["upperBound"]), where


def test_the_values_cover_the_types_precisions_and_units_the_probe_promises() -> None:
    mains = [s["mainsnak"]["datavalue"] for _, s in statements() if s["mainsnak"]["snaktype"] == "value"]
    precisions = Counter(v["value"]["precision"] for v in mains if v["type"] == "time")
    units = {v["value"]["unit"].removeprefix(ENTITY_URI) for v in mains if v["type"] == "quantity"}
    assert all(precisions[p] >= 2 for p in (8, 9, 10, 11))
    assert {"Q11573", "Q828224", "Q3710", "Q253276", "Q712226", "1"} <= units
    populations = ENTITIES["Q90"]["claims"]["P1082"]
    assert [s["rank"] for s in populations].count("preferred") == 1
    assert all("P585" in s["qualifiers"] for s in populations)


def test_properties_have_labels_aliases_and_datatypes_and_items_their_terms() -> None:
    for entity_id, entity in ENTITIES.items():
        assert entity["id"] == entity_id
        assert entity["labels"]["en"] == {"language": "en", "value": entity["labels"]["en"]["value"]}
        assert entity["descriptions"]["en"]["value"], entity_id
        if entity["type"] == "property":
            assert entity["datatype"] in VALUE_TYPE and len(entity["aliases"]["en"]) >= 2, entity_id
    used = {s["mainsnak"]["property"] for _, s in statements()} | {c["property"] for c in CLAIMS}
    assert used <= {e for e in ENTITIES if e.startswith("P")}
    paris = [e["id"] for e in ENTITIES.values() if e["labels"]["en"]["value"] == "Paris"]
    assert sorted(paris) == ["Q830149", "Q90"]
    assert {"USA", "U.S.", "United States of America"} <= {a["value"] for a in ENTITIES["Q30"]["aliases"]["en"]}
