"""Health and biomedical claims against the papers behind them: ``healthver`` (COVID-19
claims per evidence sentence), ``check-covid`` (news claims, CORD-19 abstracts) and
``citation-integrity`` (citation sentences, the articles they cite)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from factcheck.errors import InputError
from factcheck.eval.datasets.core import (
    GOLD,
    claim_item,
    data_file,
    gold_dataset,
    labelled_rows,
    map_label,
    register_readers,
    rows,
    split_files,
)
from factcheck.jsonl import read_records
from factcheck.plugin import Dataset, DatasetReader
from factcheck.types import Evidence, Label


def read_healthver(data_dir: Path) -> Dataset:
    """HealthVer dev claims, their claim-evidence pairs aggregated to one verdict per claim.

    ``healthver/dev.jsonl`` (1,917 pairs, 230 claims). Mapping (ours, not the dataset's):
    Supports pairs and no Refutes -> TRUE; Refutes and no Supports -> FALSE; both -> PARTLY TRUE.
    Claims with only Neutral pairs (70 of 230) have no verdict and are left out. The evidence is
    every distinct evidence text of the claim, Neutral ones included, in file order.
    """
    path = data_file(data_dir, "healthver/dev.jsonl")
    pairs: dict[str, list[dict[str, Any]]] = {}
    for line, row in read_records(path):
        if row["label"] not in ("Supports", "Refutes", "Neutral"):
            raise InputError(f"{path}:{line}: unexpected label {row['label']!r}")
        pairs.setdefault(row["claim"], []).append(row)  # dicts keep first-seen order
    items = []
    for claim, claim_rows in pairs.items():
        labels = {row["label"] for row in claim_rows}
        supports, refutes = "Supports" in labels, "Refutes" in labels
        if not (supports or refutes):
            continue
        gold = Label.PARTLY_TRUE if supports and refutes else Label.TRUE if supports else Label.FALSE
        texts = dict.fromkeys(row["evidence"] for row in claim_rows)  # the same sentence is paired twice at times
        items.append(
            claim_item(
                f"healthver-{claim_rows[0]['id']}",
                claim,
                gold,
                tuple(Evidence(source=GOLD, text=text) for text in texts),
                meta={"topic_ip": claim_rows[0]["topic_ip"], "question": claim_rows[0]["question"]},
                claim_label=False,
            )
        )
    return gold_dataset(
        "healthver",
        3,
        items,
        "healthver/dev.jsonl per claim: Supports only->TRUE, Refutes only->FALSE, both->PARTLY TRUE, "
        "Neutral only left out; evidence = the claim's evidence sentences",
    )


_CHECK_COVID = {"SUPPORT": Label.TRUE, "REFUTE": Label.FALSE}
_CHECK_COVID_NEI = "NOTENOUGHINFO"
_CHECK_COVID_FILES = {
    "dev": ("dev/covidCheck_dev_composed+extracted.json",),
    "test": ("test/covidCheck_test_composed.json", "test/covidCheck_test_extracted.json"),
}


def _abstracts(documents: list[dict[str, Any]], key: str) -> dict[Any, Evidence]:
    """Each document of a SciFact-format corpus as one gold passage (its sentences a line each), by ``key``."""
    return {
        doc[key]: Evidence(source=GOLD, text="\n".join(doc["abstract"]), title=doc.get("title") or "")
        for doc in documents
    }


def read_check_covid(data_dir: Path, split: str = "dev") -> Dataset:
    """Check-COVID news claims, each with the CORD-19 abstract its evidence sentences come from.

    ``check_covid/Check-COVID/{split}/*.json`` (JSON lines; dev is composed+extracted, 207 claims):
    SUPPORT -> TRUE, REFUTE -> FALSE; NOTENOUGHINFO claims (68 in dev) are left out, as there is no
    such class here. The evidence is the whole cited abstract, as for SciFact, so the verifier must
    find the sentence; composed claims are minimal edits of one another, judged against one abstract.
    """
    base = "check_covid/Check-COVID/"
    abstracts = _abstracts(rows(data_dir, base + "corpus.json"), "cord_id")
    items = []
    for relative in split_files("check-covid", split, _CHECK_COVID_FILES):
        path = data_file(data_dir, base + relative)
        for line, row, label in labelled_rows(path, _CHECK_COVID, skip=_CHECK_COVID_NEI):
            if row["cord_id"] not in abstracts:
                raise InputError(f"{path}:{line}: abstract {row['cord_id']!r} is not in corpus.json")
            evidence = (abstracts[row["cord_id"]],)
            meta = {"cord_id": row["cord_id"], "is_auth": row.get("is_auth")}
            items.append(claim_item(f"check-covid-{row['id']}", row["claim"], label, evidence, meta=meta))
    return gold_dataset(
        "check-covid",
        2,
        items,
        f"check_covid {split} (composed+extracted): SUPPORT->TRUE, REFUTE->FALSE, NOTENOUGHINFO left out; "
        "evidence = the cited CORD-19 abstract",
    )


_CITATION_INTEGRITY = {"SUPPORT": Label.TRUE, "REFUTE": Label.FALSE}
_CITATION_SPLITS = {name: (f"claims_{name}.jsonl",) for name in ("dev", "train", "test")}
_CITATION_MARKER = re.compile(r"\s*\[?<\|[a-z_]+\|>\]?")


def read_citation_integrity(data_dir: Path, split: str = "dev") -> Dataset:
    """Citation-Integrity: biomedical citation sentences checked against the article they cite.

    ``citation_integrity/data/citint/claims_{split}.jsonl`` (SciFact format; dev 316 claims):
    an evidence set labelled SUPPORT -> TRUE, REFUTE -> FALSE; claims with no evidence set (NEI,
    24 in dev) or with both labels are left out. Citation markers (``[<|cit|>]``) are cut from the
    claim. The evidence is each cited article's candidate sentences, one passage an article.
    """
    [relative] = split_files("citation-integrity", split, _CITATION_SPLITS)
    base = "citation_integrity/data/citint/"
    path = data_file(data_dir, base + relative)
    claims = list(read_records(path))
    cited = {int(doc_id) for _, row in claims for doc_id in row["cited_doc_ids"]}
    corpus = [doc for doc in rows(data_dir, base + "corpus.jsonl") if int(doc["doc_id"]) in cited]
    articles = {int(doc_id): passage for doc_id, passage in _abstracts(corpus, "doc_id").items()}
    items = []
    for line, row in claims:
        labels = {evidence["label"] for sets in row["evidence"].values() for evidence in sets}
        if len(labels) != 1:
            continue
        label = map_label(_CITATION_INTEGRITY, labels.pop(), f"{path}:{line}")
        claim = _CITATION_MARKER.sub("", row["claim"]).strip()
        missing = [doc_id for doc_id in row["cited_doc_ids"] if int(doc_id) not in articles]
        if missing:
            raise InputError(f"{path}:{line}: cited documents {missing} are not in corpus.jsonl")
        evidence = tuple(articles[int(doc_id)] for doc_id in row["cited_doc_ids"])
        meta = {"cited_doc_ids": tuple(row["cited_doc_ids"])}
        items.append(claim_item(f"citation-integrity-{split}-{row['id']}", claim, label, evidence, meta=meta))
    return gold_dataset(
        "citation-integrity",
        2,
        items,
        f"citation_integrity {relative}: SUPPORT->TRUE, REFUTE->FALSE, no evidence (NEI) left out; "
        "evidence = the cited article's candidate sentences",
    )


register_datasets = register_readers(
    DatasetReader("healthver", read_healthver),
    DatasetReader("check-covid", read_check_covid),
    DatasetReader("citation-integrity", read_citation_integrity),
)
