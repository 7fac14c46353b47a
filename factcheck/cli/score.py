"""``factcheck score``: re-score recorded checks with another scorer or label rule, calling no source."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import click

from factcheck.cli.check import fail_on_flag, failure
from factcheck.cli.flags import (
    HelpOption,
    full_precision_flag,
    option_flag,
    registered,
    scoring_options,
    scoring_trust_flag,
)
from factcheck.cli.interrupted import keeps
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
@fail_on_flag("a re-scored text", "Every check is written first, the reason on standard error.")
def score(
    input_file: str,
    out: str | None,
    scorer: str,
    labels: str,
    options: tuple[str, ...],
    trust_file: Path | None,
    full_precision: bool,
    fail_on: tuple[str, ...],
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
    if not records:
        raise InputError(f"{input_file} holds no recorded check: there is nothing to score")
    verdicts = []
    for number, record in records:  # every record read before any is written: a bad one leaves no output
        try:
            verdicts.append(TextVerdict.from_dict(record))
        except FactcheckError as exc:
            raise InputError(f"{input_file}:{number}: {exc}") from None
    keeps(
        f"nothing was written ({out} is unchanged)"
        if out not in (None, "-")
        else "the re-scored lines already printed, nothing else"
    )
    failed: list[tuple[int, str, int]] = []  # (status, reason, line) of each re-scored check --fail-on meets
    with atomic_writer(out) as handle:
        for (number, record), verdict in zip(records, verdicts, strict=True):
            rescored = rescore(verdict, chosen_scorer, rule)
            # Only what the scorer wrote is rounded: the fields kept from the input are the user's own.
            merged = keep_extra_fields(record, rescored.to_dict() if full_precision else rounded(rescored.to_dict()))
            handle.write(json.dumps(merged, ensure_ascii=False) + "\n")
            if (met := failure(rescored, fail_on)) is not None:
                failed.append((*met, number))
    if failed:
        status, reason, number = min(failed, key=lambda f: f[0])  # error (3) before unverified (4) before false (5)
        which = [n for s, _, n in failed if s == status]
        where = f"{input_file}:{number}" + (f" and {len(which) - 1} more of {len(records)}" if len(which) > 1 else "")
        click.echo(f"{reason} ({where}; exit status {status})", err=True)
        sys.exit(status)
