"""ANLI dev (adversarial NLI) read as claims against evidence (``anli``): evaluation only,
its licence (CC BY-NC 4.0) is non-commercial."""

from __future__ import annotations

import csv
from pathlib import Path

from factcheck.errors import ConfigError
from factcheck.eval.datasets.core import GOLD, claim_item, data_file, gold_dataset, map_label, register_readers
from factcheck.plugin import Dataset, DatasetReader
from factcheck.types import Evidence, Label

_ANLI = {"e": Label.TRUE, "c": Label.FALSE}
_ANLI_NEUTRAL = "n"
_ANLI_ROUNDS = ("1", "2", "3")
_ANLI_FILE = "anli_dev_annotated/anlizinganli/anli_annot_v0.2/ANLI_analysis_r{round}_dev.csv"


def read_anli(data_dir: Path, rounds: str = "1,2,3") -> Dataset:
    """ANLI dev (adversarial NLI) as claims and evidence: evaluation only (CC BY-NC 4.0).

    ``anli_dev_annotated/.../ANLI_analysis_r{1,2,3}_dev.csv``: the statement is the claim and the
    context its one evidence passage; entailment (e) -> TRUE, contradiction (c) -> FALSE, neutral
    rows are left out. ``rounds`` picks rounds, a comma list (``rounds=3``). Never train shipped
    weights on it: the licence is non-commercial.
    """
    wanted = [part.strip() for part in rounds.replace(";", ",").split(",") if part.strip()]
    if not wanted or any(part not in _ANLI_ROUNDS for part in wanted):
        raise ConfigError(f"dataset 'anli': rounds must be a comma list of 1, 2, 3, got {rounds!r}")
    items = []
    for number in dict.fromkeys(wanted):
        path = data_file(data_dir, _ANLI_FILE.format(round=number))
        with path.open(encoding="utf-8", newline="") as handle:
            for line, row in enumerate(csv.DictReader(handle), 2):  # line 1 is the header
                if row["gold_label"] == _ANLI_NEUTRAL:
                    continue
                label = map_label(_ANLI, row["gold_label"], f"{path}:{line}")
                items.append(
                    claim_item(
                        f"anli-r{number}-{row['uid']}",
                        row["statement"].strip(),
                        label,
                        (Evidence(source=GOLD, text=row["context"].strip()),),
                        meta={"round": int(number), "tags": row.get("tags")},
                    )
                )
    return gold_dataset(
        "anli",
        2,
        items,
        f"ANLI dev rounds {','.join(dict.fromkeys(wanted))} (CC BY-NC 4.0, evaluation only): "
        "e->TRUE, c->FALSE, neutral left out; evidence = the context",
    )


register_datasets = register_readers(DatasetReader("anli", read_anli))
