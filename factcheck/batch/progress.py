"""What a batch shows: a live progress bar while it runs and a summary when it ends.

The bar (on standard error, only on a terminal) shows documents per second,
the time left, the cache hit rate and the money spent so far. The summary is
read back from the whole output file, so it covers earlier, resumed runs too.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TaskID, TextColumn, TimeRemainingColumn
from rich.table import Table

from factcheck.batch.engine import Tally, lookups
from factcheck.batch.output import is_failure
from factcheck.jsonl import read_records
from factcheck.text import plural
from factcheck.types import Label, Usage


def spending(tally: Tally) -> str:
    """``12.3 docs/s | cache 40% | 57 LLM calls | $0.0123``: the live part of the progress line."""
    rate = tally.cache_hit_rate
    cache = "cache -" if rate is None else f"cache {rate:.0%}"
    return f"{tally.rate:.1f} docs/s | {cache} | {tally.llm_calls} LLM calls | ${tally.cost_usd:.4f}"


class BatchProgress:
    """A rich progress bar over the documents still to check; inert when ``enabled`` is false."""

    def __init__(self, total: int, console: Console, *, enabled: bool) -> None:
        columns = (
            TextColumn("checking"),
            BarColumn(),
            MofNCompleteColumn(),
            TimeRemainingColumn(),
            TextColumn("{task.fields[spending]}"),
        )
        self._progress = Progress(*columns, console=console, disable=not enabled, transient=False)
        self._task: TaskID = self._progress.add_task("batch", total=total, spending=spending(Tally()))

    def __enter__(self) -> BatchProgress:
        self._progress.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._progress.stop()

    def advance(self, record: dict[str, Any], tally: Tally) -> None:
        """Count one finished document."""
        self._progress.update(self._task, advance=1, spending=spending(tally))


@dataclass
class Summary:
    """Totals over every line of an output file."""

    documents: int = 0
    failed: int = 0
    ids: set[str] = field(default_factory=set)
    labels: Counter[str] = field(default_factory=Counter)
    claims: int = 0
    claim_labels: Counter[str] = field(default_factory=Counter)
    abstentions: Counter[str] = field(default_factory=Counter)  # agent -> judgments it gave no verdict in
    failures: Counter[str] = field(default_factory=Counter)  # error type -> failed documents
    component_errors: Counter[str] = field(default_factory=Counter)  # "source:wikipedia" -> errors
    llm_calls: int = 0
    search_calls: int = 0
    cache_hits: int = 0
    cost_usd: float = 0.0

    def add(self, record: dict[str, Any]) -> None:
        """Count one output line."""
        self.documents += 1
        self.ids.add(str(record.get("id")))
        if is_failure(record):
            self.failed += 1
            error = record.get("error")
            self.failures[str(error.get("type") if isinstance(error, dict) else error)] += 1
        else:
            self.labels[str(record.get("label"))] += 1
        for claim in record.get("claims") or []:
            self.claims += 1
            self.claim_labels[str(claim.get("label"))] += 1
            for judgment in claim.get("judgments") or []:
                if judgment.get("factuality") is None:
                    self.abstentions[str(judgment.get("agent"))] += 1
        usage = Usage.from_dict(record.get("usage"))
        self.component_errors.update(usage.errors)
        self.llm_calls += usage.llm_calls
        self.search_calls += usage.search_calls
        self.cache_hits += lookups(usage)[0]
        self.cost_usd += usage.cost_usd


def summarise(path: Path) -> Summary:
    """The summary of the output file at ``path``."""
    summary = Summary()
    if path.exists():
        for _, record in read_records(path):
            summary.add(record)
    return summary


def _counts(counter: Counter[str], order: list[str] | None = None) -> str:
    keys = [k for k in order or [] if counter.get(k)] + sorted(k for k in counter if k not in (order or []))
    return ", ".join(f"{key} {counter[key]}" for key in keys) or "none"


IGNORED_NAMED = 10  # ignored files named in full; more are counted


def ignored_files(names: Sequence[str]) -> str:
    """``3 files not .txt, .md or .html: a.pdf, b.docx, c.bin``, the first :data:`IGNORED_NAMED` named."""
    more = len(names) - IGNORED_NAMED
    shown = ", ".join(names[:IGNORED_NAMED]) + (f" and {more} more" if more > 0 else "")
    return f"{plural(len(names), 'file')} not .txt, .md or .html: {shown}"


def render_summary(
    summary: Summary,
    tally: Tally,
    *,
    total: int,
    left: int,
    console: Console,
    sent: str | None = None,
    ignored: Sequence[str] = (),
) -> None:
    """Print what the output file holds, and what this run did (``sent``: what its requests spent, counted
    as each was sent, documents cut short by a budget included; ``ignored``: the input's files not read)."""
    labels = [str(label) for label in Label]
    table = Table(title="factcheck batch", show_header=False, title_justify="left")
    table.add_column("what", style="bold")
    table.add_column("count")
    table.add_row("documents", f"{summary.documents} in the output of {total} in the input; {left} left")
    if ignored:
        table.add_row("ignored files", ignored_files(ignored))
    table.add_row("this run", f"{tally.documents} checked ({tally.failed} failed), {tally.rate:.2f} docs/s")
    table.add_row("text labels", _counts(summary.labels, labels))
    claim_share = summary.claim_labels.get(str(Label.UNVERIFIED), 0) / summary.claims if summary.claims else 0.0
    table.add_row("claims", f"{summary.claims}: {_counts(summary.claim_labels, labels)}")
    table.add_row("abstentions", f"claims no agent judged {claim_share:.1%}; by agent: {_counts(summary.abstentions)}")
    table.add_row("failed documents", f"{summary.failed}: {_counts(summary.failures)}")
    table.add_row("failures by source/agent", _counts(summary.component_errors))
    table.add_row(
        "spent",
        f"{summary.llm_calls} LLM calls, {summary.search_calls} search calls, "
        f"{summary.cache_hits} cache hits, ${summary.cost_usd:.4f}",
    )
    if sent is not None:
        table.add_row("sent by this run", sent)
    console.print(table)
