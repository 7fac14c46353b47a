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
from factcheck.jsonl import read_records
from factcheck.types import Claim, ClaimVerdict, Judgment, Label, TextVerdict

AGENTS = ("Google", "Wikipedia", "LLM")  # Agent1..3 of the authors' CSV
_GOLD_BINARY = {"SUPPORTS": Label.TRUE, "REFUTES": Label.FALSE}


def _read_jsonl(path: Path) -> list[dict[str, Any]]:
    return [record for _, record in read_records(path)]


def _judgments(row: dict[str, str]) -> tuple[Judgment, ...]:
    return tuple(Judgment.from_signed(agent, float(row[f"Agent{i}"])) for i, agent in enumerate(AGENTS, 1))


def _record(verdict: TextVerdict, **extra: Any) -> dict[str, Any]:
    data = verdict.to_dict()
    for key in ("label", "score", "scorer", "scorer_options", "labels"):
        data.pop(key)  # not scored yet: `factcheck score` fills these in
    return {**extra, **data}


def scifact_binary(data_dir: Path) -> list[dict[str, Any]]:
    """One single-claim text per labelled SciFact dev claim, with the authors' three judgments."""
    folder = data_dir / "ito_mafc"
    claims = _read_jsonl(folder / "scifact_single_dev188.jsonl")
    csv_path = folder / "results_scifact" / "weighted_score_save_dir.csv"
    if not csv_path.is_file():
        raise InputError(f"missing data file {csv_path}")
    with csv_path.open(encoding="utf-8", newline="") as handle:
        rows = list(csv.DictReader(handle))
    if len(rows) != len(claims):
        raise InputError(f"{csv_path} has {len(rows)} rows for {len(claims)} claims")
    records = []
    for item, row in zip(claims, rows, strict=True):
        text = item["claim"]
        claim = Claim(id="c1", text=text, span=(0, len(text)))
        verdict = TextVerdict(text=text, claims=(ClaimVerdict(claim, _judgments(row)),))
        data = _record(
            verdict,
            id=f"scifact-dev-{item['scifact_dev_id']}",
            scifact_dev_id=item["scifact_dev_id"],
            gold=str(_GOLD_BINARY[item["label"]]),
            authors_score=float(row["Normalized Confidence"]),
        )
        data["claims"][0]["gold"] = data["gold"]  # claim-level gold, for calibration
        records.append(data)
    return records


def scifact_mixed(data_dir: Path) -> list[dict[str, Any]]:
    """The authors' 99 four-claim SciFact-Mixed texts, each claim with its SciFact judgments;
    ``gold`` is ``label_from_components`` (two source labels disagree with their components)."""
    by_dev_id = {r["scifact_dev_id"]: r for r in scifact_binary(data_dir)}
    records = []
    for item in _read_jsonl(data_dir / "ito_mafc" / "scifact_mixed.jsonl"):
        text = item["text"]
        verdicts = []
        for number, component in enumerate(item["components"], 1):
            claim_text = component["scifact_dev_claim"]
            start = text.find(claim_text)
            span = (start, start + len(claim_text)) if start >= 0 else None
            source = by_dev_id[component["scifact_dev_id"]]["claims"][0]
            judgments = tuple(Judgment.from_dict(j) for j in source["judgments"])
            verdicts.append(ClaimVerdict(Claim(f"c{number}", claim_text, span), judgments))
        verdict = TextVerdict(text=text, claims=tuple(verdicts))
        data = _record(verdict, id=f"scifact-mixed-{item['row']}", gold=str(Label.parse(item["label_from_components"])))
        for claim, component in zip(data["claims"], item["components"], strict=True):
            claim["gold"] = "TRUE" if component["scifact_label"] == "SUPPORT" else "FALSE"
        records.append(data)
    return records


def write_all(data_dir: Path, out_dir: Path) -> list[tuple[Path, int]]:
    """Write ``scifact-binary.jsonl`` and ``scifact-mixed.jsonl`` to ``out_dir``; the files and their line counts."""
    out_dir.mkdir(parents=True, exist_ok=True)
    written = []
    for name, records in (("scifact-binary", scifact_binary(data_dir)), ("scifact-mixed", scifact_mixed(data_dir))):
        path = out_dir / f"{name}.jsonl"
        with path.open("w", encoding="utf-8") as handle:
            for record in records:
                handle.write(json.dumps(record, ensure_ascii=False) + "\n")
        written.append((path, len(records)))
    return written
