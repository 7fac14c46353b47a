"""WiCE: Wikipedia sentences checked against the web page they cite (``wice``)."""

from __future__ import annotations

from pathlib import Path

from factcheck.eval.datasets.core import GOLD, claim_item, data_file, gold_dataset, labelled_rows, register_readers
from factcheck.plugin import Dataset, DatasetReader
from factcheck.types import Evidence, Label

WICE_PASSAGE = 8  # sentences per WiCE passage: a page has ~120 lines, too many for one verifier call
_WICE_TITLE = "(meta data) TITLE:"
_WICE = {"supported": Label.TRUE, "partially_supported": Label.PARTLY_TRUE, "not_supported": Label.FALSE}


def _wice_evidence(sentences: list[str]) -> tuple[Evidence, ...]:
    """The cited page in passages of ``WICE_PASSAGE`` sentences.

    Every line is kept, meta-data lines too, so passage ``k`` holds sentences ``8k .. 8k+7`` and
    the dataset's ``supporting_sentences`` indices still point into it.
    """
    first = sentences[0] if sentences else ""
    title = first.removeprefix(_WICE_TITLE).strip() if first.startswith(_WICE_TITLE) else ""
    return tuple(
        Evidence(source=GOLD, text="\n".join(sentences[start : start + WICE_PASSAGE]), title=title)
        for start in range(0, len(sentences), WICE_PASSAGE)
    )


def read_wice(data_dir: Path) -> Dataset:
    """WiCE dev: Wikipedia sentences checked against the web page they cite.

    ``wice/claim_dev.jsonl``: supported -> TRUE, partially_supported -> PARTLY TRUE,
    not_supported -> FALSE. Evidence: the cited page, 8 sentences a passage.
    """
    items = []
    for _, row, label in labelled_rows(data_file(data_dir, "wice/claim_dev.jsonl"), _WICE):
        meta = row["meta"]
        items.append(
            claim_item(
                str(meta["id"]),
                row["claim"],
                label,
                _wice_evidence(row["evidence"]),
                meta={key: meta.get(key) for key in ("claim_title", "claim_section", "claim_context")},
                claim_label=False,
            )
        )
    return gold_dataset(
        "wice",
        3,
        items,
        "wice/claim_dev.jsonl: supported->TRUE, partially_supported->PARTLY TRUE, not_supported->FALSE; "
        f"cited page in passages of {WICE_PASSAGE} sentences",
    )


register_datasets = register_readers(DatasetReader("wice", read_wice))
