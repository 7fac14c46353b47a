"""Import the MAFC authors' saved gpt-4o judgments as the project's JSON lines.

``ito_mafc/results_scifact/weighted_score_save_dir.csv`` holds, for each of
the 188 labelled SciFact dev claims (same order as
``ito_mafc/scifact_single_dev188.jsonl``), the signed scores of the authors'
three agents: ``Agent1`` Google, ``Agent2`` Wikipedia, ``Agent3`` LLM. The
SciFact-Mixed texts (``ito_mafc/scifact_mixed.jsonl``) are made of four of
those claims each, so the same judgments score them. Re-scoring these lines
replays the paper's SciFact rows without calling an LLM::

    factcheck import-mafc out/
    factcheck score out/scifact-binary.jsonl -o bounds=reference -o thresholds=0.5
    factcheck score out/scifact-mixed.jsonl -o bounds=reference

Each line carries ``id`` and ``gold`` (TRUE / FALSE / PARTLY TRUE) next to the
checked-text fields; binary lines also keep the authors' own score as
``authors_score``.
"""

from __future__ import annotations

import csv
import json
from pathlib import Path
from typing import Any

from factcheck.errors import InputError
from factcheck.eval.datasets import DATA_HINT, load_dataset
from factcheck.eval.evaluate import item_claims, record, replay_records
from factcheck.jsonl import read_records
from factcheck.text import plural
from factcheck.types import ClaimVerdict, Judgment, TextVerdict

AGENTS = ("Google", "Wikipedia", "LLM")  # Agent1..3 of the authors' CSV


def _judgments(row: dict[str, str]) -> tuple[Judgment, ...]:
    return tuple(Judgment.from_signed(agent, float(row[f"Agent{i}"])) for i, agent in enumerate(AGENTS, 1))


def scifact_binary(data_dir: Path) -> list[dict[str, Any]]:
    """One single-claim text per labelled SciFact dev claim (the ``scifact-binary`` items, in
    order), with the authors' three judgments and their own score as ``authors_score``."""
    items = load_dataset("scifact-binary", data_dir).items
    csv_path = data_dir / "ito_mafc" / "results_scifact" / "weighted_score_save_dir.csv"
    if not csv_path.is_file():
        raise InputError(f"missing data file {csv_path} (is {data_dir} the shared data folder? {DATA_HINT})")
    with csv_path.open(encoding="utf-8", newline="") as handle:
        rows = list(csv.DictReader(handle))
    if len(rows) != len(items):
        raise InputError(f"{csv_path} has {plural(len(rows), 'row')} for {plural(len(items), 'claim')}")
    records = []
    for item, row in zip(items, rows, strict=True):
        (claim,) = item_claims(item)
        data = record(item, TextVerdict(item.text, (ClaimVerdict(claim, _judgments(row)),)))
        records.append({**data, "authors_score": float(row["Normalized Confidence"])})
    return records


def judged_records(judgments: Path | None, data_dir: Path) -> tuple[list[dict[str, Any]], str]:
    """The recorded checks a replay reads, and what they are: ``judgments`` (JSON lines a check or
    ``factcheck eval`` wrote), else the MAFC authors' SciFact judgments (:func:`scifact_binary`)."""
    if judgments is not None:
        return [r for _, r in read_records(judgments)], str(judgments)
    return scifact_binary(data_dir), f"MAFC authors' SciFact judgments ({data_dir})"


def scifact_mixed(data_dir: Path) -> list[dict[str, Any]]:
    """The authors' 99 four-claim SciFact-Mixed texts, each claim with the same judgments
    (matched by claim text); ``gold`` is ``label_from_components``."""
    return replay_records(load_dataset("scifact-mixed", data_dir).items, scifact_binary(data_dir))


def write_all(data_dir: Path, out_dir: Path) -> list[tuple[Path, int]]:
    """Write ``scifact-binary.jsonl`` and ``scifact-mixed.jsonl`` to ``out_dir``; the files and their line counts."""
    out_dir.mkdir(parents=True, exist_ok=True)
    written = []
    for name, records in (("scifact-binary", scifact_binary(data_dir)), ("scifact-mixed", scifact_mixed(data_dir))):
        path = out_dir / f"{name}.jsonl"
        with path.open("w", encoding="utf-8") as handle:
            for data in records:
                handle.write(json.dumps(data, ensure_ascii=False) + "\n")
        written.append((path, len(records)))
    return written
