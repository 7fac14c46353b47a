"""The batch's output file: one line per document, resumable.

Each line is the project's checked-text JSON (``schema: factcheck/1``) with the
document's ``id`` first and its input fields under ``meta``. A document that
could not be checked is a line too: an empty, UNVERIFIED verdict of its text
with ``"error": {"type": ..., "message": ...}``, so every line stays readable
by ``factcheck score`` and friends, and a rerun with ``--retry-failed`` knows
what to redo.

Beside ``OUT.jsonl`` lives ``OUT.jsonl.run.json``: the settings the results were
made with. A rerun with other settings is refused instead of mixing the two.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from factcheck.batch.inputs import Document
from factcheck.errors import InputError
from factcheck.jsonl import atomic_writer, read_records
from factcheck.resume import guard_settings, repair_tail
from factcheck.types import TextVerdict, Usage


def settings_path(out: Path) -> Path:
    """Where the settings of ``out`` are recorded."""
    return out.with_name(out.name + ".run.json")


def lock_path(out: Path) -> Path:
    """The file a run holds locked while it writes ``out`` (``OUT.jsonl.lock``; left in place, harmless)."""
    return out.with_name(out.name + ".lock")


def success_record(doc: Document, verdict: dict[str, Any]) -> dict[str, Any]:
    """The output line of a checked document (``verdict`` is ``TextVerdict.to_dict()``)."""
    return {"id": doc.id, **verdict, "meta": doc.meta}


def failure_record(doc: Document, error_type: str, message: str) -> dict[str, Any]:
    """The output line of a document that could not be checked."""
    empty = TextVerdict(text=doc.text, claims=()).to_dict()
    return {"id": doc.id, **empty, "meta": doc.meta, "error": {"type": error_type, "message": message}}


def duplicate_record(doc: Document, original: dict[str, Any]) -> dict[str, Any]:
    """``doc``'s line, copied from the line of a document with the same text checked at the same time.

    The copy costs nothing, so its usage is empty but for one cache hit (kind
    ``document``) and a note naming the original.
    """
    usage = Usage(cache_hits={"document": 1}, notes=(f"same text as document {original['id']!r}: checked once",))
    return {**original, "id": doc.id, "meta": doc.meta, "usage": usage.to_dict()}


def is_failure(record: dict[str, Any]) -> bool:
    """True for the line of a document that could not be checked."""
    return bool(record.get("error"))


def claim_output(out: Path, settings: dict[str, Any]) -> None:
    """Make sure ``out`` may take this run's lines: refuse a file this command did not write
    and one written with other settings; record the settings for the next run."""
    sidecar = settings_path(out)
    if out.exists() and out.stat().st_size and not sidecar.exists():
        raise InputError(
            f"{out} exists and was not written by factcheck batch (no {sidecar.name}); choose another --out"
        )
    guard_settings(sidecar, settings, out, "use another --out, or delete both files to start over")


def prepare_output(out: Path, *, retry_failed: bool) -> set[str]:
    """Get ``out`` ready to be appended to; the ids already done there.

    Cuts off a half-written last line; leaves one line per id (the last, which
    is the newest); with ``retry_failed``, drops failed documents' lines so they
    are checked again. Any rewrite is atomic.
    """
    if not out.exists():
        return set()
    repair_tail(out)
    keep: dict[str, int] = {}  # id -> number of the line kept for it
    failed: set[str] = set()
    lines = 0
    for number, record in read_records(out):
        lines += 1
        doc_id = str(record.get("id"))
        keep[doc_id] = number
        if is_failure(record):
            failed.add(doc_id)
        else:
            failed.discard(doc_id)
    drop = failed if retry_failed else set()
    if lines != len(keep) or drop:
        wanted = {number for doc_id, number in keep.items() if doc_id not in drop}
        records = ((n, r) for n, r in read_records(out) if n in wanted)
        with atomic_writer(out) as handle:
            handle.writelines(json.dumps(r, ensure_ascii=False) + "\n" for _, r in records)
    return set(keep) - drop
