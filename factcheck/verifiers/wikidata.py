"""The ``wikidata`` verifier: a claim judged against Wikidata statements, value type by value type.

It reads the statements the ``wikidata`` source found (each passage's ``data``; passages of other sources
are left alone) and compares each with what the claim states (:mod:`factcheck.wikidata.reading`):

- **which statements count**: deprecated ones never; of the rest, Wikidata's "best statements" (preferred
  over normal, and none that has ended), or, when the claim speaks of a time ("in 1980", ``--as-of``, the
  time of the text), those whose start and end times (P580/P582) or point in time (P585) cover it
  (:func:`factcheck.wikidata.values.best`);
- **items** by id, label or alias, and along the places a place lies within; **times** at the statement's
  precision; **quantities** with their units converted and the tolerance of
  :func:`factcheck.wikidata.values.compare_quantity`.

TRUE when a statement that counts matches. FALSE only when the property is present and its values exclude
the claimed one: every statement that counts clashes, and the property is single-valued (a capital, a date
or place of birth, a height) -- or, for a place, the claimed place lies in another country than every
place the entity lies in. Anything else -- no item, several items by that name, no statement of the
property, statements that neither match nor exclude -- is no judgment, with its reason. A claim stating
two facts ("born on 14 March 1879 in Ulm") is TRUE when both match and FALSE when either is excluded.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from factcheck.claimtime import reading_times
from factcheck.plugin import Verifier, hookimpl
from factcheck.types import Assessment, Claim, Evidence
from factcheck.wikidata.propose import checked
from factcheck.wikidata.reading import Reading, read_claim
from factcheck.wikidata.statements import datavalue
from factcheck.wikidata.values import (
    ItemRef,
    Outcome,
    Qualifiers,
    Quantity,
    Time,
    best,
    compare_item,
    compare_quantity,
    compare_time,
    holds_at,
)

# How sure a verdict read from a typed statement is: an exact comparison, not a reading of prose. A
# single statement is still one source's word: a claim's label rests on every agent (the scorer decides).
MATCH_CONFIDENCE = 0.9
EXCLUDED_CONFIDENCE = 0.85


@dataclass(frozen=True)
class Finding:
    """One reading's outcome: ``factuality`` (None: no judgment), why, and the passages it rests on."""

    factuality: bool | None
    reason: str
    resting: tuple[Evidence, ...] = ()


@dataclass(frozen=True)
class WikidataVerifier(Verifier):
    """Typed comparison of a claim with the statements of the ``wikidata`` source (see the module)."""

    reuse_judgments = True
    name = "wikidata"

    async def judge(self, claim: Claim, evidence: Sequence[Evidence]) -> Assessment:
        ours = [e for e in evidence if isinstance(e.data, Mapping) and "reading" in e.data and e.source == "wikidata"]
        readings = read_claim(claim.text)
        proposed = next((e.data["proposal"] for e in ours if e.data is not None and "proposal" in e.data), None)
        if not readings and isinstance(proposed, Mapping):  # read as the model proposed it, checked again
            reading = checked(claim.text, dict(proposed))
            readings = (reading,) if reading is not None else ()
        if not ours:
            named = " or ".join(repr(r.subject) for r in readings)
            reason = f"no Wikidata item is named {named}" if readings else "the claim states no fact about an entity"
            return Assessment(None, 0.0, reason)
        times = reading_times(claim)
        when_default = _time_of(times[0]) if times else None
        findings = []
        for n, reading in enumerate(readings):
            group = [e for e in ours if e.data is not None and e.data["reading"] == n]
            if not group:
                findings.append(Finding(None, f"no Wikidata item is named {reading.subject!r}"))
                continue
            when = reading.when or (when_default if reading.kind != "time" else None)
            finding = _judge_reading(reading, group, when)
            findings.append(_negated(finding) if reading.negated else finding)
        return _combined(findings, evidence)


def _time_of(day: str) -> Time | None:
    """A ``YYYY-MM-DD`` day as a day-precision time."""
    try:
        year, month, date = (int(part) for part in day[:10].split("-"))
    except ValueError:
        return None
    return Time(year=year, month=month, day=date, precision=11)


def _judge_reading(reading: Reading, group: Sequence[Evidence], when: Time | None) -> Finding:
    data = [e.data for e in group if e.data is not None]
    statements = [e for e in group if e.data is not None and e.data.get("kind") == "statement"]
    if not statements:
        if any(d.get("kind") == "candidate" for d in data):
            names = ", ".join(f"{d['item']['label']} ({d['item']['id']}: {d['item']['description']})" for d in data)
            return Finding(None, f"{reading.subject!r} names several Wikidata items: {names}")
        return Finding(None, str(data[0].get("reason") or "no Wikidata statement on it"))

    def qualifiers(e: Evidence) -> Qualifiers:
        assert e.data is not None
        return Qualifiers.from_statement(e.data["statement"])

    counted = best(statements, qualifiers, when)
    question = _question(statements)
    if not counted:
        at = f" at {when.text()}" if when is not None else " now"
        return Finding(None, f"no Wikidata statement on {question} holds{at}")
    outcomes = [(e, _compare(reading, e)) for e in counted]
    matched = [e for e, outcome in outcomes if outcome is Outcome.MATCH]
    said = f"{reading.value_text()!r}"
    if matched:
        return Finding(True, f"Wikidata states {question} as {said} would have it: {matched[0].text}", tuple(matched))
    # A value Wikidata also holds, at normal rank and not ended at the claim's time (the Eiffel Tower's first
    # height beside its preferred one), is no ground for FALSE: the claim may be dated, not wrong.
    others = [e for e in statements if e not in counted and qualifiers(e).rank != "deprecated"]
    held = [e for e in others if holds_at(qualifiers(e), when) is not False and _compare(reading, e) is Outcome.MATCH]
    clashing = [e for e, outcome in outcomes if outcome is Outcome.CLASH]
    if held and len(clashing) == len(counted):
        return Finding(
            None,
            f"Wikidata's best statement on {question} is another value ({counted[0].text}), and it also holds"
            f" {said} at normal rank ({held[0].text})",
        )
    # Single-valued: a property of the table that holds one value at a time (its quantities all do); never one
    # matched by meaning, nor a place (excluded by the place rule below).
    single = all(bool(e.data.get("single")) and not e.data.get("place") for e in counted if e.data is not None)
    if len(clashing) == len(counted) and single:
        return Finding(False, f"Wikidata states {question} otherwise than {said}: {clashing[0].text}", tuple(clashing))
    placed = any(e.data is not None and e.data.get("place") for e in statements)
    if reading.kind == "item" and placed and _elsewhere(statements):
        return Finding(
            False,
            f"Wikidata places {reading.subject} in another country than {said}: {statements[0].text}",
            tuple(counted),
        )
    values = "; ".join(e.text for e in counted[:3])
    return Finding(None, f"Wikidata's statements on {question} neither confirm nor exclude {said} ({values})")


def _question(statements: Sequence[Evidence]) -> str:
    """ "the height or elevation above sea level of Mount Everest": the properties the statements are of."""
    data = [e.data for e in statements if e.data is not None]
    labels = " or ".join(dict.fromkeys(str(d.get("property_label") or d.get("property")) for d in data))
    subject = data[0]["item"]
    return f"the {labels} of {subject.get('label') or subject.get('id')}"


def _ref(data: Mapping[str, Any]) -> ItemRef:
    return ItemRef(
        id=str(data.get("id", "")),
        label=str(data.get("label") or ""),
        aliases=tuple(data.get("aliases") or ()),
        description=str(data.get("description") or ""),
    )


def _compare(reading: Reading, evidence: Evidence) -> Outcome:
    """How the statement of ``evidence`` stands to the value the claim states."""
    assert evidence.data is not None
    value = datavalue(evidence.data["statement"])
    inner = value.get("value") if value is not None else None
    if not isinstance(inner, Mapping):
        return Outcome.UNKNOWN
    if reading.kind == "time" and isinstance(reading.value, Time):
        stated = Time.from_datavalue(inner)
        return compare_time(stated, reading.value) if stated is not None else Outcome.UNKNOWN
    if reading.kind == "quantity" and not isinstance(reading.value, str | Time):
        quantity = Quantity.from_datavalue(inner)
        return compare_quantity(quantity, reading.value) if quantity is not None else Outcome.UNKNOWN
    if reading.kind == "item" and isinstance(reading.value, str):
        values = evidence.data.get("values") or {}
        identifier = str(inner.get("id") or f"Q{inner.get('numeric-id')}")
        stated_ref = _ref(values.get(identifier) or {"id": identifier})
        within = [_ref(w) for w in evidence.data.get("within") or []]
        given = evidence.data.get("candidates") or []
        candidates = [_ref(c) for c in given]
        # The name the candidates were found by ("Île-de-France" for "the Île-de-France region").
        named = str(given[0].get("named") or reading.value) if given else reading.value
        outcome = compare_item(stated_ref, within, named, candidates)
        return outcome if outcome is not Outcome.UNKNOWN else compare_item(stated_ref, within, reading.value, [])
    return Outcome.UNKNOWN


def _elsewhere(statements: Sequence[Evidence]) -> bool:
    """The place rule: every item the claimed place's name names lies elsewhere than the entity.

    Places partition their country level by level (a city's districts, a country's regions), so a claimed
    place lies elsewhere when it lies within one of the entity's places (France) but neither is one of them
    nor lies within the entity's nearest place (Lyon, for the Eiffel Tower in the 7th arrondissement of
    Paris: FALSE; the Champ de Mars, within that arrondissement: no judgment), or when both lie in countries
    and none is shared (Berlin). A place in no country Wikidata names (a continent) is no judgment."""
    data = statements[0].data
    assert data is not None
    places = set(data.get("places") or ())
    nearest = set(data.get("nearest") or ())
    countries = set(data.get("countries") or ())
    candidates = data.get("candidates") or []
    if not places or not candidates:
        return False
    for candidate in candidates:
        within = set(candidate.get("within") or ())
        theirs = set(candidate.get("countries") or ())
        if candidate.get("id") in places or within & nearest:
            return False
        sibling = bool(within & places)
        abroad = bool(theirs) and bool(countries) and not (theirs & countries)
        if not (sibling or abroad):
            return False
    return True


def _combined(findings: Sequence[Finding], evidence: Sequence[Evidence]) -> Assessment:
    """One judgment of the claim from its readings: FALSE when one is excluded, TRUE when all match."""
    false = [f for f in findings if f.factuality is False]
    if false:
        shown = _shown(false[0].resting, evidence)
        return Assessment(False, EXCLUDED_CONFIDENCE, false[0].reason, evidence=shown)
    if findings and all(f.factuality is True for f in findings):
        resting = tuple(e for f in findings for e in f.resting)
        return Assessment(
            True, MATCH_CONFIDENCE, " ".join(f.reason for f in findings), evidence=_shown(resting, evidence)
        )
    undecided = [f.reason for f in findings if f.factuality is None]
    return Assessment(None, 0.0, "; ".join(undecided) or "no Wikidata statement decides this claim")


def _shown(first: Sequence[Evidence], evidence: Sequence[Evidence]) -> tuple[Evidence, ...]:
    """The evidence with the passages a verdict rests on first."""
    return (*first, *(e for e in evidence if e not in first))


def _negated(finding: Finding) -> Finding:
    if finding.factuality is None:
        return finding
    return Finding(not finding.factuality, f"the claim denies it: {finding.reason}", finding.resting)


@hookimpl
def register_verifiers(register: Callable[[Any], None]) -> None:
    register(WikidataVerifier())
