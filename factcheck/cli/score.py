"""``factcheck score``: re-score recorded checks with another scorer or label rule, calling no source."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import click

from factcheck.cli.flags import (
    HelpOption,
    full_precision_flag,
    option_flag,
    registered,
    scoring_options,
    scoring_trust_flag,
)
from factcheck.errors import FactcheckError, InputError
from factcheck.jsonl import atomic_writer, read_documents, rounded


def keep_extra_fields(original: dict[str, Any], rescored: dict[str, Any]) -> dict[str, Any]:
    """``rescored`` over ``original``, keeping fields only the original has, inside claims,
    judgments and evidence too (a per-claim gold label, say)."""
    merged = {**original, **rescored}
    for key in ("claims", "judgments", "evidence"):
        old, new = original.get(key), rescored.get(key)
        if isinstance(old, list) and isinstance(new, list) and len(old) == len(new):
            merged[key] = [keep_extra_fields(o, n) if isinstance(o, dict) else n for o, n in zip(old, new, strict=True)]
    return merged


@click.command(short_help="Re-score recorded checks, calling no source.")
@click.argument("input_file", metavar="IN")
@click.option(
    "--out",
    cls=HelpOption,
    default_text="standard output",
    help="Where to write the re-scored checks, one per line (JSON Lines); may be IN itself.",
)
@click.option(
    "--scorer", cls=HelpOption, names=registered("scorers"), default="mafc", show_default=True, help="Scorer: {names}."
)
@click.option(
    "--labels",
    cls=HelpOption,
    names=registered("label_rules"),
    default="compose",  # as check labels texts; --labels threshold for the paper's rule
    show_default=True,
    help="Label rule: {names}.",
)
@option_flag
@scoring_trust_flag
@full_precision_flag
def score(
    input_file: str,
    out: str | None,
    scorer: str,
    labels: str,
    options: tuple[str, ...],
    trust_file: Path | None,
    full_precision: bool,
) -> None:
    """Re-score recorded checks without calling any source. IN (a file, .gz too, or - for standard
    input) holds checked-text JSON: one per line (JSON Lines, what check --format jsonl prints), one
    document (what check --format json prints), an array of them, or several documents in a row.

    The output is JSON Lines, one check per line in the order read, keeping every field the scorer
    does not set (ids, gold labels).
    """
    from factcheck.build import resolve_scoring
    from factcheck.scoring import rescore
    from factcheck.types import TextVerdict

    chosen_scorer, rule = resolve_scoring(scorer, labels, scoring_options(options, trust_file))
    # Read everything first: the output may replace the input.
    records = list(read_documents(input_file))
    verdicts = []
    for number, record in records:  # every record read before any is written: a bad one leaves no output
        try:
            verdicts.append(TextVerdict.from_dict(record))
        except FactcheckError as exc:
            raise InputError(f"{input_file}:{number}: {exc}") from None
    with atomic_writer(out) as handle:
        for (_, record), verdict in zip(records, verdicts, strict=True):
            rescored = rescore(verdict, chosen_scorer, rule).to_dict()
            merged = keep_extra_fields(record, rescored)
            handle.write(json.dumps(merged if full_precision else rounded(merged), ensure_ascii=False) + "\n")
