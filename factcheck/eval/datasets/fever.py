"""FEVER-style sets: claims against Wikipedia sentences. ``fever-binary`` (SufficientFacts),
``fm2`` (Fool Me Twice) and ``vitaminc`` (contrastive revisions of FEVER pages)."""

from __future__ import annotations

import re
from pathlib import Path

from factcheck.eval.datasets.core import (
    GOLD,
    claim_item,
    data_file,
    gold_dataset,
    labelled_rows,
    register_readers,
    split_files,
    wikipedia_url,
)
from factcheck.plugin import Dataset, DatasetReader
from factcheck.types import Evidence, Label

_FEVER = {"SUPPORTS": Label.TRUE, "REFUTES": Label.FALSE}  # FEVER's labels, which FM2 and VitaminC keep
_SPAN_TAG = re.compile(r"</?span\b[^>]*>")
_PAGE_MARKER = re.compile(r"\[\[(.+?)\]\]")


def _fever_evidence(text_orig: str) -> tuple[Evidence, ...]:
    """The original gold evidence of a SufficientFacts row: one passage per ``[[Page title]]`` marker.

    The tags come off first, since a removed span may start before a marker and cover whole sentences.
    """
    text = _SPAN_TAG.sub("", text_orig)
    parts = _PAGE_MARKER.split(text)  # [before, title, sentence, title, sentence, ...]
    return tuple(
        Evidence(source=GOLD, text=sentence.strip(), title=title, url=wikipedia_url(title))
        for title, sentence in zip(parts[1::2], parts[2::2], strict=True)
    )


def read_fever_binary(data_dir: Path) -> Dataset:
    """FEVER claims with their original gold evidence text, from SufficientFacts.

    ``fever/fever_sufficient_facts.jsonl``: one item per unique claim (the first row of the
    4 repeated claims), gold ``label_before`` (SUPPORTS -> TRUE, REFUTES -> FALSE). The
    evidence is ``text_orig`` with the removed span put back, one passage per Wikipedia
    sentence. The id counts rows of the file (0-based), so it skips the 4 repeats.
    """
    path = data_file(data_dir, "fever/fever_sufficient_facts.jsonl")
    items = []
    seen = set()
    for row_number, (_, row, label) in enumerate(labelled_rows(path, _FEVER, key="label_before")):
        claim = row["claim"]
        if claim in seen:
            continue
        seen.add(claim)
        evidence = _fever_evidence(row["text_orig"])
        items.append(claim_item(f"fever-sf-{row_number}", claim, label, evidence, meta={"row": row_number}))
    return gold_dataset(
        "fever-binary",
        2,
        items,
        "fever/fever_sufficient_facts.jsonl (unique claims): label_before SUPPORTS->TRUE, "
        "REFUTES->FALSE; gold Wikipedia sentences from text_orig",
    )


_FM2_SPLITS = {"dev": ("dataset/dev.jsonl",), "test": ("dataset/test.jsonl",)}


def read_fm2(data_dir: Path, split: str = "dev") -> Dataset:
    """Fool Me Twice: adversarial claims written against a Wikipedia page, with its gold sentences.

    ``fm2/dataset/{split}.jsonl`` (dev 1,169, test 1,380): SUPPORTS -> TRUE, REFUTES -> FALSE.
    The evidence is each ``gold_evidence`` sentence (about 1.3 a claim), titled with the page;
    ``retrieved_evidence`` is not read.
    """
    [relative] = split_files("fm2", split, _FM2_SPLITS)
    items = []
    for _, row, label in labelled_rows(data_file(data_dir, "fm2/" + relative), _FEVER):
        page = row["wikipedia_page"]
        evidence = tuple(
            Evidence(source=GOLD, text=gold["text"], title=page, url=wikipedia_url(page))
            for gold in row["gold_evidence"]
        )
        meta = {"wikipedia_page": page, "category": row.get("category")}
        items.append(claim_item(f"fm2-{row['id']}", row["text"], label, evidence, meta=meta))
    return gold_dataset(
        "fm2",
        2,
        items,
        f"fm2/dataset/{split}.jsonl: SUPPORTS->TRUE, REFUTES->FALSE; evidence = gold Wikipedia sentences",
    )


_VITAMINC_NEI = "NOT ENOUGH INFO"
_VITAMINC_PARTS = {"real": ("vitaminc_real/test.jsonl",), "synthetic": ("vitaminc_synthetic/test.jsonl",)}
_FEVER_ESCAPES = {"-LRB-": "(", "-RRB-": ")", "-LSB-": "[", "-RSB-": "]", "-COLON-": ":", "_": " "}


def _fever_title(page: str) -> str:
    """A FEVER page name (``2 Hearts -LRB-Kylie Minogue song-RRB-``) as Wikipedia spells it."""
    for escaped, plain in _FEVER_ESCAPES.items():
        page = page.replace(escaped, plain)
    return re.sub(r"\s+\(", " (", page)


def read_vitaminc(data_dir: Path, part: str = "real") -> Dataset:
    """VitaminC contrastive pairs: one claim with the Wikipedia sentence before and after a revision.

    ``vitaminc/vitaminc_{part}/test.jsonl`` (real 31,673 rows, synthetic 19,390; the folder's
    held-out pages already removed): SUPPORTS -> TRUE, REFUTES -> FALSE; NOT ENOUGH INFO rows are
    left out. One item per row, its evidence the row's sentence; rows of one ``case_id`` share a
    claim or an evidence sentence and flip the verdict, so a verifier must read the evidence.
    """
    [relative] = split_files("vitaminc", part, _VITAMINC_PARTS, option="part")
    items = []
    for _, row, label in labelled_rows(data_file(data_dir, "vitaminc/" + relative), _FEVER, skip=_VITAMINC_NEI):
        title = _fever_title(row["page"])
        evidence = (Evidence(source=GOLD, text=row["evidence"], title=title, url=wikipedia_url(title)),)
        meta = {"case_id": row["case_id"], "page": title}
        items.append(claim_item(f"vitaminc-{row['unique_id']}", row["claim"], label, evidence, meta=meta))
    return gold_dataset(
        "vitaminc",
        2,
        items,
        f"vitaminc/{relative}: SUPPORTS->TRUE, REFUTES->FALSE, NOT ENOUGH INFO left out; "
        "evidence = the row's Wikipedia sentence",
    )


register_datasets = register_readers(
    DatasetReader("fever-binary", read_fever_binary),
    DatasetReader("fm2", read_fm2),
    DatasetReader("vitaminc", read_vitaminc),
)
