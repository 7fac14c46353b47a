"""LIAR: PolitiFact statements with six labels mapped to three, and no evidence (``liar``)."""

from __future__ import annotations

from pathlib import Path

from factcheck.eval.datasets.core import claim_item, data_file, labelled_rows, register_readers, split_files
from factcheck.plugin import Dataset, DatasetReader
from factcheck.types import Label

_LIAR = {
    "true": Label.TRUE,
    "mostly-true": Label.TRUE,
    "half-true": Label.PARTLY_TRUE,
    "barely-true": Label.PARTLY_TRUE,
    "false": Label.FALSE,
    "pants-fire": Label.FALSE,
}
_LIAR_SPLITS = {name: (f"liar/{name}.jsonl",) for name in ("train", "valid", "test")}
# Not the *_counts fields: the speaker's credit history includes the statement itself.
_LIAR_META = ("subject", "speaker", "speaker_job_title", "state_info", "party_affiliation", "context")


def read_liar(data_dir: Path, split: str = "valid") -> Dataset:
    """LIAR (PolitiFact) statements, no evidence; ``split`` is train, valid or test.

    ``liar/{split}.jsonl``, six labels to three (our mapping, not the dataset's): true, mostly-true
    -> TRUE; half-true, barely-true -> PARTLY TRUE; false, pants-fire -> FALSE.
    """
    [relative] = split_files("liar", split, _LIAR_SPLITS)
    items = []
    for _, row, gold in labelled_rows(data_file(data_dir, relative), _LIAR):
        liar_id = str(row["id"]).removesuffix(".json")
        meta = {"original_label": row["label"], **{key: row.get(key) for key in _LIAR_META}}
        items.append(claim_item(f"liar-{liar_id}", row["statement"], gold, (), meta=meta, claim_label=False))
    return Dataset(
        name="liar",
        levels=3,
        items=tuple(items),
        has_evidence=False,
        description=f"liar/{split}.jsonl: true, mostly-true->TRUE; half-true, barely-true->PARTLY TRUE; "
        "false, pants-fire->FALSE; no evidence",
    )


register_datasets = register_readers(DatasetReader("liar", read_liar))
