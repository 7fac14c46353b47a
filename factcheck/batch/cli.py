"""``factcheck batch INPUT --out OUT.jsonl``: check a corpus, resumably, within a budget.

See docs/batch.md. Exit status: 0 when every document has a line in OUT, 3
when a budget stopped the run with documents left, 130 when interrupted; a
rerun of the same command continues where the last one stopped.
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import click
from rich.console import Console

from factcheck.batch.engine import BatchResult, Budget, LocalEngine, Tally, run_batch
from factcheck.batch.inputs import open_input
from factcheck.batch.output import claim_output, lock_path, prepare_output
from factcheck.batch.progress import BatchProgress, ignored_files, render_summary, summarise
from factcheck.build import build_checker, fingerprint
from factcheck.cli.flags import (
    CheckerFlags,
    HelpOption,
    budget_flags,
    checker_flags,
    full_precision_flag,
    settings_from_flags,
)
from factcheck.cli.interrupted import keeps
from factcheck.cli.keys import require_keys
from factcheck.config import Settings
from factcheck.errors import ConfigError, InputError
from factcheck.jsonl import rounded
from factcheck.net import service
from factcheck.pipeline import Checker
from factcheck.plugin import hookimpl
from factcheck.resume import AppendLog, exclusive
from factcheck.text import plural

EXIT_BUDGET = 3


async def _run(
    checker: Checker,
    settings: Settings,
    documents: Any,
    log: AppendLog,
    *,
    engine: str,
    ray_address: str | None,
    ray_workers: int | None,
    concurrency: int,
    budget: Budget,
    on_record: Callable[[dict[str, Any], Tally], None],
) -> BatchResult:
    if engine == "ray":
        from factcheck.batch.ray_engine import RayEngine

        ray_engine = RayEngine(settings, concurrency, address=ray_address, workers=ray_workers)
        async with ray_engine:
            return await run_batch(
                documents, log, ray_engine, concurrency=concurrency, budget=budget, on_record=on_record
            )
    return await run_batch(
        documents, log, LocalEngine(checker), concurrency=concurrency, budget=budget, on_record=on_record
    )


@click.command(short_help="Check a corpus into one JSON line per document, resumably.")
@click.argument("input_path", metavar="INPUT", type=click.Path(path_type=Path))
# No -o: that is --option KEY=VALUE in every command.
@click.option("--out", type=click.Path(path_type=Path), required=True, help="Output JSON Lines file.")
@click.option(
    "--text-column", cls=HelpOption, default_text="text", help="CSV column (or JSON Lines field) holding the text."
)
@click.option(
    "--id-column",
    cls=HelpOption,
    default_text="id, else the row number",
    help="CSV column (or JSON Lines field) holding the id.",
)
@click.option("--concurrency", type=click.IntRange(min=1), default=4, show_default=True, help="Documents in flight.")
@budget_flags
@click.option("--retry-failed", is_flag=True, help="Check again the documents whose line in OUT has an error.")
@click.option("--report", type=click.Path(path_type=Path), help="Also write a self-contained HTML report here.")
@click.option("--quiet", "-q", is_flag=True, help="No progress bar and no summary.")
@full_precision_flag
@click.option(
    "--engine",
    type=click.Choice(["local", "ray"]),
    default="local",
    show_default=True,
    help="local: this process; ray: workers of a Ray cluster (the ray extra).",
)
@click.option(
    "--ray-address",
    cls=HelpOption,
    default_text="start a local Ray instance",
    help="Ray cluster to join, e.g. auto or ray://head:10001.",
)
@click.option(
    "--ray-workers",
    cls=HelpOption,
    type=click.IntRange(min=1),
    default_text="one per CPU of the cluster",
    help="Ray workers.",
)
@checker_flags()
def batch(
    input_path: Path,
    out: Path,
    text_column: str | None,
    id_column: str | None,
    concurrency: int,
    max_cost: float | None,
    max_llm_calls: int | None,
    max_searches: int | None,
    retry_failed: bool,
    report: Path | None,
    quiet: bool,
    full_precision: bool,
    engine: str,
    ray_address: str | None,
    ray_workers: int | None,
    flags: CheckerFlags,
) -> None:
    """Check every document of INPUT (a .jsonl or .csv file, or a folder of .txt / .md / .html
    files) into OUT, one checked-text JSON line per document.

    A killed run resumes where it stopped when run again with the same command. Once a budget
    (--max-cost, --max-llm-calls, --max-searches) is reached, no paid request is sent and no document
    starts; the documents cut short get no line, so a rerun with a larger budget checks them.
    """
    if engine == "ray":
        from factcheck.batch.ray_engine import import_ray

        import_ray()  # the missing extra is reported before any work
    elif ray_address or ray_workers:
        raise ConfigError("--ray-address and --ray-workers need --engine ray")
    if not out.parent.is_dir():
        raise InputError(f"no such folder for the output: {out.parent}")
    source = open_input(input_path, text_column=text_column, id_column=id_column)
    ids = source.scan()
    ignored = source.ignored()
    settings = settings_from_flags(flags)
    checker = build_checker(settings)
    require_keys(checker)
    err = Console(stderr=True)
    if ignored:  # said before the run as well as in the summary: a quiet run says it too
        err.print(f"warning: ignored {ignored_files(ignored)}", markup=False, highlight=False, soft_wrap=True)
    if max_cost is not None and checker.llm.model not in checker.llm.prices:
        err.print(
            f"warning: model {checker.llm.model!r} has no price in [llm] prices, so --max-cost counts its calls as $0; "
            "use --max-llm-calls, or set its price"
        )
    # The lock comes first, on a file nothing replaces: two runs starting at once cannot both
    # write the settings, or each lock a different copy of them.
    with exclusive(lock_path(out), out):
        # Rounded and full-precision lines are not mixed in one output (recorded only when asked for).
        precision = {"full_precision": True} if full_precision else {}
        claim_output(out, {"input": source.settings(), **fingerprint(settings), **precision})
        done = prepare_output(out, retry_failed=retry_failed)
        todo = sum(1 for doc_id in ids if doc_id not in done)
        log: AppendLog | None = None  # counts the lines this run added, as they reach the file

        def kept() -> str:
            written = log.written if log is not None else 0
            return (
                f"{out} keeps {len(ids) - todo + written} of {plural(len(ids), 'document')} "
                f"({written} from this run); run the same command again to continue"
            )

        keeps(kept)
        if not todo:  # nothing to do: start no engine (a Ray cluster takes seconds)
            result = BatchResult(Tally())
        else:
            progress = BatchProgress(todo, err, enabled=not quiet and err.is_terminal)
            # The current service's memory of refusals: a custom service (use_service) keeps its own.
            noted = set(service().refusals.met())

            def advance(record: dict[str, Any], tally: Tally) -> None:
                progress.advance(record, tally)
                for reason in service().refusals.met():  # said once, not once per document
                    if reason not in noted:
                        noted.add(reason)
                        err.print(
                            f"warning: {reason}: its agent abstains on the documents checked while it "
                            "cannot be reached (tried again after a minute); check the URL or the service",
                            markup=False,
                            highlight=False,
                            soft_wrap=True,
                        )

            log = AppendLog(out, prepare=None if full_precision else rounded)
            with log, progress:
                result = asyncio.run(
                    _run(
                        checker,
                        settings,
                        source.documents(skip=done),
                        log,
                        engine=engine,
                        ray_address=ray_address,
                        ray_workers=ray_workers,
                        concurrency=concurrency,
                        budget=Budget(max_cost, max_llm_calls, max_searches),
                        on_record=advance,
                    )
                )
    summary = summarise(out)
    left = sum(1 for doc_id in ids if doc_id not in summary.ids)
    if not quiet:
        # Counted where the requests are sent: in this process (Ray workers count in their own, unseen here).
        sent = result.spending.sent() if result.spending is not None and engine == "local" else None
        render_summary(
            summary,
            result.tally,
            total=len(ids),
            left=left,
            console=Console(file=sys.stdout),
            sent=sent,
            ignored=ignored,
        )
    if report is not None:
        from factcheck.batch.html import write_report

        write_report(out, report, summary)
        if not quiet:
            err.print(f"wrote {report}")
    if result.stopped:
        sent = f" This run sent {result.spending.sent()}." if result.spending is not None and engine == "local" else ""
        err.print(
            f"stopped: {result.stopped}; {left} documents left.{sent} Raise the budget and rerun to continue.",
            markup=False,
            highlight=False,
            soft_wrap=True,
        )
        raise click.exceptions.Exit(EXIT_BUDGET)


@hookimpl
def register_commands(register: Callable[[Any], None]) -> None:
    register(batch)
