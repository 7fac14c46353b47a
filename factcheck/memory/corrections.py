"""Corrections in: what every entry point of the experience memory does with a reviewer's ruling.

``factcheck feedback`` (a reviewer at the command line), ``factcheck memory import`` (the gold labels of an
eval run) and ``POST /v1/feedback`` (a key holder, on the server) all build their corrections here and store
them through :func:`record`, so the three keep the same provenance and teach the trust file the same way:

- :func:`correction_from_result` reads a checked text (what ``check --format json`` printed, a batch output
  line, the server's answer), finds the claim by its id and keeps its label as ``verdict``, its judgments and
  the evidence they cite, and a ``check_ref`` naming the check (its document id, claim, ``as_of``, profile,
  and a digest of the text, since a checked text carries no id of its own);
- :func:`correction_from_text` is a claim corrected without a result;
- :func:`corrections_from_eval` reads an eval run's ``judgments.jsonl`` (each claim's gold label, as
  :func:`factcheck.trust.claim_cases` finds it);
- :func:`record` stores one, and with ``[memory] learn_trust`` also moves the trust file (PAMAS eq. 15, one
  correction at a time, written atomically).
"""

from __future__ import annotations

import hashlib
import json
import threading
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from factcheck.errors import ConfigError, FactcheckError, InputError
from factcheck.memory.settings import MemorySettings
from factcheck.memory.store import Correction, MemoryStore, agreed_label
from factcheck.types import ClaimVerdict, Evidence, Judgment, TextVerdict

if TYPE_CHECKING:
    from factcheck.trust import TrustUpdate

CORRECTION_SCHEMA = "factcheck-correction/1"  # the JSON of one stored correction (memory show, /v1/feedback)
MAX_REF_PART = 300  # characters of a document id or url kept in a check_ref
_write = threading.Lock()  # one process's corrections and trust updates, one at a time (the trust file is
# read, changed and replaced: two updates at once would lose one)


def correction_json(correction: Correction) -> dict[str, Any]:
    """A stored correction as JSON, versioned like the project's other documents."""
    return {"schema": CORRECTION_SCHEMA, **correction.to_dict()}


def _label(label: str) -> str:
    """A label as the store spells it (``false`` is ``FALSE``); the store refuses any other."""
    return label.strip().upper()


def _claim_of(verdict: TextVerdict, claim_id: str | None) -> ClaimVerdict:
    """The claim ``claim_id`` of ``verdict`` (its only claim when no id is given), or an InputError that
    lists the ids there are: a reviewer who mistyped one sees at once which to use."""
    ids = [c.claim.id for c in verdict.claims]
    if claim_id is None:
        if len(verdict.claims) == 1:
            return verdict.claims[0]
        if not ids:
            raise InputError("the result holds no claims to correct")
        raise InputError(f"the result holds {len(ids)} claims: name the one corrected (its claims: {_listed(ids)})")
    for claim in verdict.claims:
        if claim.claim.id == claim_id:
            return claim
    if not ids:
        raise InputError(f"no claim {claim_id!r} in the result: it holds no claims")
    raise InputError(f"no claim {claim_id!r} in the result (its claims: {_listed(ids)})")


def _listed(ids: Sequence[str], most: int = 20) -> str:
    shown = ", ".join(ids[:most])
    return shown + (f", ... ({len(ids)} in all)" if len(ids) > most else "")


def cited_evidence(judgments: Iterable[Judgment]) -> tuple[Evidence, ...]:
    """The passages the judgments cite, each once, in the order first cited."""
    return tuple(dict.fromkeys(e for j in judgments for e in j.evidence))


def check_ref(result: Mapping[str, Any], verdict: TextVerdict, claim_id: str) -> str:
    """What names the check a correction is of: ``id=d7; claim=c2; as_of=...; profile=offline;
    text=sha256:...``. A checked text has no id of its own; a batch line or an eval record adds the
    document's, the server's answer the page's ``url``, and the text's digest tells two texts apart."""
    parts = []
    document = result.get("id")
    if document is not None:
        parts.append(f"id={str(document)[:MAX_REF_PART]}")
    parts.append(f"claim={claim_id}")
    if verdict.as_of:
        parts.append(f"as_of={verdict.as_of}")
    if verdict.judged_by is not None and verdict.judged_by.profile:
        parts.append(f"profile={verdict.judged_by.profile}")
    url = result.get("url")
    if isinstance(url, str) and url:
        parts.append(f"url={url[:MAX_REF_PART]}")
    parts.append(f"text=sha256:{hashlib.sha256(verdict.text.encode('utf-8')).hexdigest()[:16]}")
    return "; ".join(parts)


def _verdict_of(result: Mapping[str, Any]) -> TextVerdict:
    if not isinstance(result, Mapping):
        raise InputError(f"the result must be a checked-text JSON object, got {type(result).__name__}")
    error = result.get("error")
    if isinstance(error, Mapping) and not result.get("claims"):  # a batch line of a document not checked
        raise InputError(f"the result is of a document that could not be checked ({error.get('message', error)})")
    try:
        return TextVerdict.from_dict(result)
    except FactcheckError as exc:
        raise InputError(f"the result is not a checked text (factcheck/1): {exc}") from None


def correction_from_result(
    result: Mapping[str, Any], claim_id: str | None, label: str, note: str, reviewer: str, origin: str
) -> Correction:
    """A reviewer's ruling on claim ``claim_id`` of ``result`` (a checked text's JSON, or a batch line or
    eval record that holds one), with the label the check gave, its judgments and the evidence they cite.
    ``claim_id`` may be ``None`` when the result holds one claim."""
    verdict = _verdict_of(result)
    claim = _claim_of(verdict, claim_id)
    return Correction(
        claim=claim.claim.text,
        label=_label(label),
        reviewer=reviewer,
        origin=origin,
        note=note,
        verdict=str(claim.label),
        check_ref=check_ref(result, verdict, claim.claim.id),
        judgments=claim.judgments,
        evidence=cited_evidence(claim.judgments),
    )


def correction_from_text(claim: str, label: str, note: str, reviewer: str, origin: str) -> Correction:
    """A ruling on a claim given by its text alone: no check, so no verdict, judgments or evidence (and
    nothing for ``learn_trust`` to learn from)."""
    return Correction(claim=claim.strip(), label=_label(label), reviewer=reviewer, origin=origin, note=note)


def _gold(raw: Mapping[str, Any], record: Mapping[str, Any], claims: int) -> str | None:
    """A claim's gold label: its own, else (for a one-claim text) the text's; as :func:`factcheck.trust.claim_cases`."""
    gold = raw.get("gold") or (record.get("gold") if claims == 1 else None)
    return str(gold).strip().upper() if gold is not None else None


def corrections_from_eval(records: Iterable[Mapping[str, Any]], reviewer: str) -> list[Correction]:
    """The gold labels of an eval run's ``judgments.jsonl`` as corrections by ``reviewer``
    (``gold:<dataset>``): one per claim whose gold label is TRUE or FALSE, with what the run's check said.

    A gold label that lends nothing (a text's PARTLY TRUE, a claim the evidence cannot decide) is not
    imported: only TRUE and FALSE rulings become precedents, as only they teach trust."""
    corrections = []
    for number, record in enumerate(records, start=1):
        try:
            verdict = _verdict_of(record)
            raw_claims = record.get("claims") or []
            for raw, claim in zip(raw_claims, verdict.claims, strict=True):
                gold = _gold(raw, record, len(raw_claims))
                if gold not in ("TRUE", "FALSE"):
                    continue
                corrections.append(
                    Correction(
                        claim=claim.claim.text,
                        label=gold,
                        reviewer=reviewer,
                        origin="import",
                        verdict=str(claim.label),
                        check_ref=check_ref(record, verdict, claim.claim.id),
                        judgments=claim.judgments,
                        evidence=cited_evidence(claim.judgments),
                    )
                )
        except FactcheckError as exc:
            raise InputError(f"judgments record {number}: {exc}") from None
    return corrections


def eval_reviewer(path: str | Path) -> str:
    """Who ruled an eval run's claims: ``gold:<dataset>``, the dataset named in the ``run.json`` the eval
    harness writes beside ``judgments.jsonl``, else ``gold:<the file's stem>`` (``gold:stdin`` for ``-``)."""
    if str(path) == "-":
        return "gold:stdin"
    file = Path(path)
    try:
        recorded = json.loads((file.parent / "run.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        recorded = None
    dataset = recorded.get("dataset") if isinstance(recorded, dict) else None
    stem = file.name.removesuffix(".gz").removesuffix(".jsonl")
    return f"gold:{dataset if isinstance(dataset, str) and dataset else stem}"


def lends(store: MemoryStore, correction: Correction, require: int) -> bool:
    """Whether checks now lend the correction's ruling as a precedent: its claim's agreed label
    (:func:`~factcheck.memory.store.agreed_label`, ``require`` reviewers) is TRUE or FALSE and is its label.
    False says the ruling waits for other reviewers to agree (or is outvoted)."""
    if correction.label not in ("TRUE", "FALSE"):
        return False
    return agreed_label(store.corrections(claim=correction.claim), require) == correction.label


@dataclass(frozen=True)
class Recorded:
    """A correction as stored, and what it did to the trust file (``None``: learn_trust is off, or the
    correction had no verdict of agents or no TRUE / FALSE label to learn from)."""

    correction: Correction
    trust: TrustUpdate | None = None


def recorded_json(store: MemoryStore, recorded: Recorded, require: int) -> dict[str, Any]:
    """What ``feedback --format json`` prints and ``POST /v1/feedback`` answers: the stored correction, whether
    checks now lend it (``lent``), and what it did to the trust file (``trust``: ``null`` when nothing)."""
    trust = recorded.trust
    return {
        **correction_json(recorded.correction),
        "lent": lends(store, recorded.correction, require),
        "trust": None if trust is None else {"team_right": trust.team_right, "updated": list(trust.updated)},
    }


def _trust_file(memory: MemorySettings) -> Path | None:
    """The trust file ``learn_trust`` updates (``None`` when it is off); checked before anything is
    stored, so a bad setting never leaves a correction recorded and its trust update lost."""
    if not memory.learn_trust:
        return None
    if not memory.trust:
        raise ConfigError(
            '[memory] learn_trust is on but no trust file is set: add [memory] trust = "trust.json" '
            "(the file the pamas scorer and trust routing read), or turn learn_trust off"
        )
    file = Path(memory.trust).expanduser()
    if file.exists():
        from factcheck.trust import Trust

        Trust.load(file)  # a file that is no trust file is an error now, not after the correction is stored
    return file


def record(
    store: MemoryStore,
    correction: Correction,
    memory: MemorySettings,
    *,
    learn_from: Sequence[Judgment] | None = None,
) -> Recorded:
    """Store ``correction``; with ``[memory] learn_trust``, also learn from it: the trust file's agents
    that judged the claim are updated by PAMAS eq. 15 against its label
    (:func:`factcheck.trust.update_trust_file`, written atomically), once the claim's label is agreed
    (``[memory] require`` reviewers: one reviewer alone moves no trust where two must agree).

    Trust is learned from ``learn_from`` when given, else from the correction's own judgments. The server
    passes the judgments of its own check of the claim: those a caller sends with a result are recorded as
    provenance, never trusted to move the weights (a key holder could make up any agent's answers).
    Corrections of this process are recorded one at a time; the trust file's update is locked across
    processes (:func:`factcheck.trust.update_trust_file`)."""
    trust_file = _trust_file(memory)
    judgments = tuple(correction.judgments if learn_from is None else learn_from)
    learn = trust_file is not None and bool(judgments) and correction.label in ("TRUE", "FALSE")
    with _write:
        stored = store.add(correction)
        if not learn or trust_file is None or not lends(store, stored, memory.require):
            return Recorded(stored)
        from factcheck.trust import update_trust_file

        updated = update_trust_file(trust_file, judgments, stored.label == "TRUE", rate=memory.rate)
    return Recorded(stored, updated)


__all__ = [
    "CORRECTION_SCHEMA",
    "Recorded",
    "check_ref",
    "cited_evidence",
    "correction_from_result",
    "correction_from_text",
    "correction_json",
    "corrections_from_eval",
    "eval_reviewer",
    "lends",
    "record",
    "recorded_json",
]
