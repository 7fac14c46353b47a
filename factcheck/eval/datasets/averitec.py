"""AVeriTeC: real-world claims with question-answer evidence, judged as of the day they were
made (``averitec``); the verdict article never reaches the dataset."""

from __future__ import annotations

import re
from collections.abc import Mapping
from datetime import date
from pathlib import Path
from typing import Any

from factcheck.eval.datasets.core import GOLD, claim_item, data_file, gold_dataset, labelled_rows, register_readers
from factcheck.plugin import Dataset, DatasetReader
from factcheck.types import Evidence, Label

_AVERITEC = {
    "Supported": Label.TRUE,
    "Refuted": Label.FALSE,
    "Conflicting Evidence/Cherrypicking": Label.PARTLY_TRUE,
}
_AVERITEC_NEE = "Not Enough Evidence"
_URL = re.compile(r"https?://\S+")


def _day_month_year(value: object) -> str | None:
    """AVeriTeC's ``claim_date`` ("31-10-2020", day first) as ISO 8601, or None."""
    parts = value.split("-") if isinstance(value, str) else []
    if len(parts) != 3 or not all(p.isdigit() for p in parts):
        return None
    try:
        return date(int(parts[2]), int(parts[1]), int(parts[0])).isoformat()
    except ValueError:
        return None


def _page_key(url: str) -> str:
    """A URL without its archive.org prefix, scheme, ``www.``, query and trailing slash, to compare pages."""
    url = re.sub(r"^https?://web\.archive\.org/web/[^/]+/", "", url.strip())
    url = re.split(r"[?#]", url, maxsplit=1)[0]
    return re.sub(r"^https?://(www\.)?", "", url).rstrip("/").lower()


def _without_page(text: str, page: str) -> str:
    """``text`` without its links to ``page`` (one answer quotes the verdict article's link)."""
    return _URL.sub(lambda match: "" if _page_key(match.group()) == page else match.group(), text).strip()


def _averitec_evidence(row: Mapping[str, Any]) -> tuple[Evidence, ...]:
    """One passage per question-answer pair.

    An answer sourced from the claim's own fact-checking article (4 in dev) keeps its text but
    loses its URL, and links to that article are cut from the text: the article's address
    alone often gives the verdict away ("no-an-adani-food-silo-has-not-come-up...").
    """
    verdict_page = _page_key(row.get("fact_checking_article") or "")
    evidence = []
    for question in row.get("questions") or ():
        for answer in question.get("answers") or ():
            text = f"Q: {question['question']}\nA: {answer['answer']}"
            if answer.get("boolean_explanation"):
                text += f"\n{answer['boolean_explanation']}"
            if verdict_page:
                text = _without_page(text, verdict_page)
            url = answer.get("source_url") or None
            if url is not None and verdict_page and _page_key(url) == verdict_page:
                url = None
            evidence.append(Evidence(source=GOLD, text=text, url=url))
    return tuple(evidence)


def read_averitec(data_dir: Path) -> Dataset:
    """AVeriTeC dev: real-world claims with question-answer evidence.

    ``averitec/dev.jsonl``: Supported -> TRUE, Refuted -> FALSE, Conflicting Evidence/Cherrypicking
    -> PARTLY TRUE; the 35 Not Enough Evidence claims are left out. ``fact_checking_article``
    (and ``justification``) are never read into the dataset: both reveal the verdict.
    """
    items = []
    for _, row, gold in labelled_rows(data_file(data_dir, "averitec/dev.jsonl"), _AVERITEC, skip=_AVERITEC_NEE):
        items.append(
            claim_item(
                f"averitec-{row['row']}",
                row["claim"],
                gold,
                _averitec_evidence(row),
                meta={
                    "row": row["row"],
                    "original_label": row["label"],
                    "claim_date": row.get("claim_date"),
                    "speaker": row.get("speaker"),
                    "reporting_source": row.get("reporting_source"),
                    "location_ISO_code": row.get("location_ISO_code"),
                },
                claim_label=False,
                as_of=_day_month_year(row.get("claim_date")),  # judged as of when the claim was made
            )
        )
    return gold_dataset(
        "averitec",
        3,
        items,
        "averitec/dev.jsonl: Supported->TRUE, Refuted->FALSE, Conflicting Evidence/Cherrypicking->"
        "PARTLY TRUE, Not Enough Evidence left out; evidence = QA pairs",
    )


register_datasets = register_readers(DatasetReader("averitec", read_averitec))
