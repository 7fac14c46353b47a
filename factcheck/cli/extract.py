"""``factcheck extract``: the claims a check would send, and the sentences it would skip, with why."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

import click

from factcheck.cli.flags import (
    HelpOption,
    as_of_flag,
    cache_flag,
    config_flag,
    llm_base_url_flag,
    llm_model_flag,
    llm_overrides,
    no_cache_flag,
    options_flag,
    profile_flag,
    read_text,
    registered,
    text_input,
)
from factcheck.cli.interrupted import keeps
from factcheck.errors import InputError
from factcheck.options import parse_option_pairs


@click.command(short_help="Show the claims a check would send, and the sentences it would skip, and why.")
@text_input("text: a readable list; json: the claims and skipped sentences (docs/extraction.md).")
@click.option(
    "--extractor",
    cls=HelpOption,
    names=registered("extractors"),
    default_text="settings, else the profile's",
    help="Claim extractor: {names}.",
)
@options_flag("Option of the extractor, e.g. disable=opinion or decontextualise=false (repeatable).")
@as_of_flag
@profile_flag
@config_flag
@llm_base_url_flag
@llm_model_flag
@cache_flag
@no_cache_flag
def extract(
    text: str | None,
    file: Path | None,
    fmt: str,
    extractor: str | None,
    options: tuple[str, ...],
    as_of: str | None,
    profile: str | None,
    config: Path | None,
    llm_base_url: str | None,
    llm_model: str | None,
    cache_path: Path | None,
    no_cache: bool,
) -> None:
    """Show what a check of TEXT (or --file F, or - for standard input) would send to the agents:
    each claim with its span and what was done to it, and each skipped sentence with why.
    Blank lines separate paragraphs, as in ``check``. No agent runs."""
    import asyncio

    from factcheck.build import build_checker
    from factcheck.config import load_settings
    from factcheck.types import SCHEMA
    from factcheck.usage import UsageRecorder

    content = read_text(text, file)
    if not content.strip():
        raise InputError("empty text: there is nothing to extract")
    cache: dict[str, Any] = {"path": str(cache_path)} if cache_path else {}
    if no_cache:
        cache["enabled"] = False
    settings = load_settings(
        config, profile=profile, extractor=extractor, llm=llm_overrides(llm_base_url, llm_model), cache=cache
    )
    settings = dataclasses.replace(
        settings, extractor_options={**settings.extractor_options, **parse_option_pairs(options)}
    )
    checker = build_checker(settings)
    keeps("nothing was printed")
    chosen = checker.extractor
    recorder = UsageRecorder()
    found = asyncio.run(checker.extraction(content, recorder, as_of))
    if fmt == "json":
        record = {"schema": SCHEMA, "text": content, "extractor": chosen.name, **found.to_dict()}
        record["notes"] = list(recorder.notes)
        click.echo(json.dumps(record, ensure_ascii=False, indent=2))
        return
    from factcheck.report import SKIPPED_CHARS, clip, time_phrase
    from factcheck.text import plural

    for note in recorder.notes:
        click.echo(f"note: {note}")
    click.echo(f"{plural(len(found.claims), 'claim')} to check (extractor {chosen.name}):")
    for claim in found.claims:
        click.echo(f"  [{claim.id}] {_where(claim.span)}  {claim.text}")
        if claim.attributed_to:
            click.echo(f"       attributed to: {claim.attributed_to}")
        if claim.original:
            click.echo(f"       as written ({', '.join(claim.edits) or 'rewritten'}): {claim.original}")
        if claim.time is not None:
            click.echo(f"       time: {time_phrase(claim.time)}")
    if found.skipped:  # none skipped: nothing to say
        click.echo(f"{plural(len(found.skipped), 'sentence')} skipped:")
    for skipped in found.skipped:
        click.echo(f"  {_where(skipped.span)}  [{skipped.rule}] {clip(skipped.text, SKIPPED_CHARS)}")
        if skipped.reason:
            click.echo(f"       {skipped.reason}")


def _where(span: tuple[int, int] | None) -> str:
    """``12-40``: a span of the input, for people; ``?`` where it cannot be mapped back."""
    return f"{span[0]}-{span[1]}" if span else "?"
