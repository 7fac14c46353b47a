"""``factcheck feedback`` and ``factcheck memory``: corrections into the experience memory, and the audit.

``feedback`` records a reviewer's ruling on one claim of a recorded check; ``memory import`` takes an eval
run's gold labels; ``memory list`` / ``show`` / ``forget`` let an operator see who ruled what, from which
check, and remove an entry for good (the next check no longer lends it). Every command works on the memory
``--memory`` names, else the settings' ``[memory] path`` (``FACTCHECK_MEMORY``); with neither there is no
memory, and nothing is created. The rules they share (provenance, the trust update) are in
:mod:`factcheck.memory.corrections`, which the server's ``POST /v1/feedback`` uses too.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import click
from rich.console import Console
from rich.table import Table
from rich.text import Text

from factcheck.cli import SuggestingGroup
from factcheck.cli.flags import HelpOption, config_flag, memory_option
from factcheck.errors import ConfigError, InputError
from factcheck.memory.settings import MemorySettings
from factcheck.memory.store import LABELS, Correction, MemoryStore
from factcheck.report import shown
from factcheck.text import plural

NO_MEMORY = (
    "no experience memory configured: pass --memory PATH, set FACTCHECK_MEMORY, "
    'or set [memory] path = "memory.sqlite" in factcheck.toml'
)
CLAIM_SHOWN = 60  # characters of a claim in memory list
NOTE_SHOWN = 40

memory_file = memory_option("Experience memory (SQLite file of corrections).")
format_option = click.option(
    "--format",
    "fmt",
    type=click.Choice(["text", "json"]),
    default="text",
    show_default=True,
    help="text: a readable table; json: the corrections' JSON (factcheck-correction/1).",
)


def memory_of(memory_path: Path | None, config: Path | None) -> MemorySettings:
    """The ``[memory]`` settings, its path ``--memory`` when given; ConfigError when no memory is set."""
    from factcheck.config import load_settings
    from factcheck.memory.settings import memory_settings

    settings = load_settings(config, memory={"path": str(memory_path)} if memory_path else None)
    memory = memory_settings(settings.memory)
    if not memory.path:
        raise ConfigError(NO_MEMORY)
    return memory


def _store(memory: MemorySettings) -> MemoryStore:
    assert memory.path  # memory_of refuses settings without a memory
    return MemoryStore(memory.path)


def short(text: str | None, most: int) -> str:
    """``text`` on one line, cut to ``most`` characters."""
    flat = " ".join((text or "").split())
    return flat if len(flat) <= most else flat[: most - 3].rstrip() + "..."


def _select(documents: Sequence[tuple[int, dict[str, Any]]], document_id: str | None, name: str) -> dict[str, Any]:
    """The one document of RESULT a correction is of: its only one, or the one ``--document`` names."""
    if not documents:
        raise InputError(f"{name} holds no checked text")
    ids = [str(d.get("id")) for _, d in documents]
    if document_id is None:
        if len(documents) == 1:
            return documents[0][1]
        shown = ", ".join(ids[:10]) + (", ..." if len(ids) > 10 else "")
        raise InputError(f"{name} holds {len(documents)} checked texts: pick one with --document ID ({shown})")
    for (_, document), found in zip(documents, ids, strict=True):
        if found == document_id:
            return document
    shown = ", ".join(ids[:10]) + (", ..." if len(ids) > 10 else "")
    raise InputError(f"no document {document_id!r} in {name} (its ids: {shown})")


@click.command(short_help="Record a reviewer's correction of a claim's verdict.")
@click.argument("result", metavar="RESULT")
@click.option(
    "--claim",
    "claim_id",
    metavar="ID",
    cls=HelpOption,
    default_text="the result's only claim",
    help="Id of the claim corrected (c1, c2, ... as in the result).",
)
@click.option(
    "--label",
    type=click.Choice(LABELS, case_sensitive=False),
    metavar="TRUE|FALSE|UNVERIFIED",
    required=True,
    help="The claim's right label.",
)
@click.option("--note", default="", help="Why: kept with the correction and shown with the precedent it lends.")
@click.option(
    "--reviewer",
    metavar="NAME",
    envvar="USER",  # read by click as the command starts, as every flag is
    default="cli",
    cls=HelpOption,
    default_text="$USER, else cli",
    help="Who rules (the correction's provenance).",
)
@click.option(
    "--document",
    "document_id",
    metavar="ID",
    help="The checked text's id, when RESULT holds several (a batch output file).",
)
@memory_file
@config_flag
@format_option
def feedback(
    result: str,
    claim_id: str | None,
    label: str,
    note: str,
    reviewer: str,
    document_id: str | None,
    memory_path: Path | None,
    config: Path | None,
    fmt: str,
) -> None:
    """Record that a claim's verdict was wrong (or right): its right label, a note and who says so.

    RESULT (a file, or - for standard input) is what check --format json printed, or a batch output
    file's line (--document ID picks one). The correction keeps the claim's judgments, the evidence they
    cite and which check it corrects; with [memory] learn_trust it also updates the trust file.
    """
    from factcheck.jsonl import read_documents
    from factcheck.memory.corrections import correction_from_result, record, recorded_json

    memory = memory_of(memory_path, config)
    name = "standard input" if result == "-" else result
    document = _select(list(read_documents(result)), document_id, name)
    correction = correction_from_result(document, claim_id, label, note, reviewer or "cli", origin="feedback")
    store = _store(memory)
    recorded = record(store, correction, memory)
    stored = recorded.correction
    if fmt == "json":
        click.echo(json.dumps(recorded_json(store, recorded, memory.require), indent=2, ensure_ascii=False))
        return
    lines = [
        f"correction {stored.id} recorded in {store.path}: {stored.verdict} -> {stored.label} "
        f'for "{short(stored.claim, 80)}" (reviewer {stored.reviewer})',
        _lent_line(store, stored, memory.require),
    ]
    if recorded.trust is not None:
        moved = ", ".join(recorded.trust.updated) or "none (the team's vote was right)"
        lines.append(f"trust file {memory.trust} updated: weights moved for {moved}")
    console = Console()
    for line in lines:
        console.print(line, highlight=False, markup=False)


def _lent_line(store: MemoryStore, correction: Correction, require: int) -> str:
    from factcheck.memory.corrections import lends

    if correction.label == "UNVERIFIED":
        return "an UNVERIFIED ruling is kept but lends no precedent"
    if lends(store, correction, require):
        return "checks now lend this ruling as a precedent"
    if require == 1:
        return "not lent: more reviewers gave the claim another label"
    return f"not lent yet: {require} reviewers must agree on the claim's label ([memory] require)"


@click.group(cls=SuggestingGroup, short_help="Audit the experience memory: list, show, forget, import.")
def memory() -> None:
    """The experience memory of corrections: list and show its entries with their provenance, forget one
    for good, or import the gold labels of an eval run."""


@memory.command("list", short_help="List the corrections, newest first.")
@click.option("--limit", type=click.IntRange(min=1), default=50, show_default=True, help="Corrections shown.")
@click.option("--claim", "claim_text", help="Only the corrections of this claim (case and spacing folded).")
@memory_file
@config_flag
@format_option
def list_corrections(
    limit: int, claim_text: str | None, memory_path: Path | None, config: Path | None, fmt: str
) -> None:
    """List the corrections, newest first: who ruled what, when, from where, and the verdict it corrected."""
    from factcheck.memory.corrections import correction_json

    store = _store(memory_of(memory_path, config))
    found = store.corrections(limit=limit, claim=claim_text)
    if fmt == "json":
        click.echo(json.dumps([correction_json(c) for c in found], indent=2, ensure_ascii=False))
        return
    console = Console()
    if not found:
        console.print(f"no corrections in {store.path}", highlight=False, markup=False)
        return
    table = Table(title=f"{plural(len(found), 'correction')} in {store.path}, newest first")
    for column in ("id", "date", "reviewer", "origin", "label", "was"):
        table.add_column(column, no_wrap=True)
    table.add_column("claim", ratio=3, overflow="fold")
    table.add_column("note", ratio=2, overflow="fold")
    for c in found:
        values = (
            str(c.id),
            c.created_at[:10],
            c.reviewer,
            c.origin,
            c.label,
            c.verdict or "-",
            short(c.claim, CLAIM_SHOWN),
            short(c.note, NOTE_SHOWN),
        )
        table.add_row(*map(cell, values))
    console.print(table)


@memory.command("show", short_help="Show one correction, with its judgments.")
@click.argument("number", metavar="ID", type=int)
@memory_file
@config_flag
@format_option
def show(number: int, memory_path: Path | None, config: Path | None, fmt: str) -> None:
    """Show correction ID: the ruling, its provenance, whether checks lend it, and the judgments it corrects."""
    settings = memory_of(memory_path, config)
    store = _store(settings)
    correction = _get(store, number)
    if fmt == "json":
        from factcheck.memory.corrections import correction_json

        click.echo(json.dumps(correction_json(correction), indent=2, ensure_ascii=False))
        return
    console = Console()
    fields = Table.grid(padding=(0, 2))
    fields.add_column(style="bold")
    fields.add_column(overflow="fold")
    for name, value in (
        ("id", str(correction.id)),
        ("claim", correction.claim),
        ("label", correction.label),
        ("verdict corrected", correction.verdict or "-"),
        ("note", correction.note or "-"),
        ("reviewer", correction.reviewer),
        ("origin", correction.origin),
        ("recorded", correction.created_at),
        ("check", correction.check_ref or "-"),
        ("lent", _lent_line(store, correction, settings.require)),
        ("evidence", f"{plural(len(correction.evidence), 'passage')} cited"),
    ):
        fields.add_row(name, cell(value))
    console.print(fields)
    if correction.judgments:
        table = Table(title="the judgments it corrects")
        for column in ("agent", "verdict", "confidence", "rationale"):
            table.add_column(column, overflow="fold")
        for j in correction.judgments:
            verdict = "abstained" if j.factuality is None else ("TRUE" if j.factuality else "FALSE")
            table.add_row(*map(cell, (j.agent, verdict, f"{j.confidence:.2f}", short(j.error or j.rationale, 120))))
        console.print(table)


def cell(value: str) -> Text:
    """A table cell of untrusted text (a claim, a note, a key holder's words): shown as written, never read
    as rich markup (``[link=...]`` would make a link in the operator's terminal), without control characters."""
    return Text(shown(value))


def _get(store: MemoryStore, number: int) -> Correction:
    correction = store.get(number)
    if correction is None:
        raise InputError(f"no correction {number} in {store.path} (factcheck memory list shows the ids)")
    return correction


@memory.command("forget", short_help="Remove a correction for good.")
@click.argument("number", metavar="ID", type=int)
@click.option("--yes", "-y", is_flag=True, help="Do not ask (needed where no terminal can answer: a script, a pipe).")
@memory_file
@config_flag
def forget(number: int, yes: bool, memory_path: Path | None, config: Path | None) -> None:
    """Remove correction ID for good: no listing shows it and no check lends it again."""
    store = _store(memory_of(memory_path, config))
    correction = _get(store, number)
    if not yes and not (sys.stdin is not None and sys.stdin.isatty()):
        # A script or a pipe cannot answer the question: refuse rather than wait on, or read, a stream.
        raise InputError(f"forget asks before it removes correction {number}, and no terminal can answer: add --yes")
    if not yes:
        click.confirm(
            f'Forget correction {number} ({correction.label} for "{short(correction.claim, 60)}" '
            f"by {correction.reviewer})?",
            abort=True,
        )
    if not store.forget(number):  # removed meanwhile by someone else: it is gone all the same
        raise InputError(f"no correction {number} in {store.path} (it was removed meanwhile)")
    click.echo(f"forgot correction {number}")
    others = store.corrections(claim=correction.claim)
    if others:
        ids = ", ".join(str(c.id) for c in others)
        click.echo(
            f"the claim still has {len(others)} other corrections ({ids}): forget them too to stop it being lent"
        )


@memory.command("import", short_help="Import the gold labels of an eval run.")
@click.argument("judgments", metavar="JUDGMENTS.jsonl")
@click.option(
    "--reviewer",
    metavar="NAME",
    cls=HelpOption,
    default_text="gold:<the dataset of the run.json beside the file, else the file's name>",
    help="Who ruled (the precedents name it).",
)
@memory_file
@config_flag
def import_judgments(judgments: str, reviewer: str | None, memory_path: Path | None, config: Path | None) -> None:
    """Import the gold labels of JUDGMENTS.jsonl (what factcheck eval recorded; - for standard input): one
    correction per claim with a TRUE or FALSE gold label, with the judgments the run gave it. A claim already
    imported from the same check by the same reviewer is not imported again."""
    from factcheck.jsonl import read_records
    from factcheck.memory.corrections import corrections_from_eval, eval_reviewer

    store = _store(memory_of(memory_path, config))
    who = reviewer or eval_reviewer(judgments)
    found = corrections_from_eval((r for _, r in read_records(judgments)), who)
    if not found:
        raise InputError(f"{judgments}: no claims with a TRUE or FALSE gold label")
    known = {(c.reviewer, c.check_ref, c.label) for c in store.corrections() if c.origin == "import"}
    new = [c for c in found if (c.reviewer, c.check_ref, c.label) not in known]
    stored = store.add_many(new) if new else 0
    kept = len(found) - len(new)
    already = f" ({kept} already there)" if kept else ""
    click.echo(f"imported {plural(stored, 'correction')} by {who} into {store.path}{already}")
