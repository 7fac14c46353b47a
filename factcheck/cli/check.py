"""``factcheck check``: check a text and show the verdict, with ``--fail-on`` exit statuses for scripts."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Collection
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click
from rich.console import Console

from factcheck.cli.flags import (
    CheckerFlags,
    HelpOption,
    as_of_flag,
    budget_flags,
    checker_flags,
    full_precision_flag,
    read_text,
    settings_from_flags,
    text_input,
)
from factcheck.cli.interrupted import keeps
from factcheck.cli.keys import require_keys
from factcheck.jsonl import rounded
from factcheck.routing import ROUTINGS

if TYPE_CHECKING:
    from factcheck.types import TextVerdict


# Exit statuses of ``check --fail-on``, beside 0 (done), 1 (an error you can fix) and 2 (a usage error).
# When several conditions asked for hold, the first here decides: an error explains an UNVERIFIED claim.
FAIL_STATUS = {"error": 3, "unverified": 4, "false": 5}

EXIT_STATUSES = (
    "Exit status: 0 checked; 1 an error you can fix (bad input or settings); 2 a usage error, or no agent has "
    "its API key; 130 interrupted (Ctrl-C); with --fail-on: "
    "3 an agent could not judge (error), 4 a claim or the text is UNVERIFIED (unverified), 5 a claim is FALSE "
    "or the text FALSE or PARTLY TRUE (false)."
)


def failure(verdict: TextVerdict, conditions: Collection[str]) -> tuple[int, str] | None:
    """The exit status and why, for the first of ``conditions`` (``--fail-on``) that ``verdict`` meets; else None.

    - ``error``: an agent could not judge a claim (its source or verifier failed, it timed out, it was
      skipped for a missing key or a language it cannot read), or a component failed (``usage.errors``:
      the claim extractor fell back);
    - ``unverified``: a claim is UNVERIFIED, or the text is (no claim found, none verified);
    - ``false``: a claim is FALSE, or the text FALSE or PARTLY TRUE.
    """
    for condition, status in FAIL_STATUS.items():
        if condition in conditions and (reason := _unmet(condition, verdict)):
            return status, f"--fail-on {condition}: {reason}"
    return None


def _unmet(condition: str, verdict: TextVerdict) -> str | None:
    """Why ``verdict`` meets the ``--fail-on`` ``condition``, in words; None when it does not."""
    from factcheck.text import plural
    from factcheck.types import Label

    claims = verdict.claims
    if condition == "error":
        failed = [(number, j) for number, c in enumerate(claims) for j in c.judgments if j.error]
        if failed:
            agents = list(dict.fromkeys(j.agent for _, j in failed))
            first = failed[0][1]
            return (
                f"{'agent' if len(agents) == 1 else 'agents'} {', '.join(agents)} could not judge "
                f"{len({n for n, _ in failed})} of {plural(len(claims), 'claim')} ({first.agent}: {first.error})"
            )
        return "a component failed: " + ", ".join(sorted(verdict.usage.errors)) if verdict.usage.errors else None
    if condition == "unverified":
        if unverified := sum(c.label is Label.UNVERIFIED for c in claims):
            return f"{unverified} of {plural(len(claims), 'claim')} UNVERIFIED"
        if verdict.label is Label.UNVERIFIED:
            return "the text is UNVERIFIED" + ("" if claims else " (no claim found)")
        return None
    if false := sum(c.label is Label.FALSE for c in claims):
        return f"{false} of {plural(len(claims), 'claim')} FALSE"
    return f"the text is {verdict.label}" if verdict.label in (Label.FALSE, Label.PARTLY_TRUE) else None


def fail_on_flag(what: str, after: str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """``--fail-on`` for ``what`` ("the text", "a re-scored text"); ``after`` says when the reason is given."""
    return click.option(
        "--fail-on",
        "fail_on",
        multiple=True,
        type=click.Choice(list(FAIL_STATUS)),
        help=f"For scripts: exit 3 when an agent could not judge a claim (error), 4 when a claim or {what} is "
        f"UNVERIFIED (unverified), 5 when a claim is FALSE or {what} FALSE or PARTLY TRUE (false); repeatable, "
        f"the first that holds in that order decides. {after}",
    )


# The flags of check alone that build its checker: how the agents are asked.
independence_threshold_flag = click.option(
    "--independence-threshold",
    type=click.FloatRange(0, 1, min_open=True),
    default=0.5,
    show_default=True,
    help="With --independence merge: how similar two agents' evidence must be to count once.",
)
routing_flag = click.option(
    "--routing",
    cls=HelpOption,
    type=click.Choice(ROUTINGS),
    default_text="settings, else all",
    help="Which agents answer each claim: all, trust (PAMAS: the most trusted first) or gated (cheapest first).",
)
tau_flag = click.option(
    "--tau",
    cls=HelpOption,
    default_text="settings, else 0.8",
    help="Confidence a gated check needs to stop asking more agents.",
)


@click.command(short_help="Check a text and show the verdict with its evidence.", epilog=EXIT_STATUSES)
@text_input(
    "text: a readable report; json: the factcheck/1 JSON format, indented; jsonl: the same on one line.",
    ("text", "json", "jsonl"),
)
@fail_on_flag("the text", "The verdict is printed first, the reason on standard error.")
@checker_flags(independence_threshold_flag, routing_flag, tau_flag)
@as_of_flag
@full_precision_flag
@budget_flags
def check(
    text: str | None,
    file: Path | None,
    fmt: str,
    fail_on: tuple[str, ...],
    as_of: str | None,
    full_precision: bool,
    max_cost: float | None,
    max_llm_calls: int | None,
    max_searches: int | None,
    flags: CheckerFlags,
) -> None:
    """Check TEXT (or --file F, or - for standard input) and report the verdict.

    With a budget (--max-cost, --max-llm-calls, --max-searches), a request the budget does not allow is not
    sent: its agent abstains, and what was sent is said on standard error."""
    content = read_text(text, file)
    from factcheck.build import build_checker

    checker = build_checker(settings_from_flags(flags))
    require_keys(checker)
    stored = f"; the cache {checker.cache.path} keeps the judgments made so far" if checker.cache is not None else ""
    keeps(f"nothing was printed{stored}")
    from factcheck.context import using
    from factcheck.usage import Spending

    budgeted = any(limit is not None for limit in (max_cost, max_llm_calls, max_searches))
    spending = Spending(max_llm_calls, max_cost, max_searches) if budgeted else None
    with using(spending=spending):
        verdict = checker.check(content, as_of=as_of)
    record = verdict.to_dict() if full_precision else rounded(verdict.to_dict())
    if fmt == "json":
        click.echo(json.dumps(record, ensure_ascii=False, indent=2))
    elif fmt == "jsonl":  # one line per text: what `factcheck score` and other JSON Lines readers take
        click.echo(json.dumps(record, ensure_ascii=False))
    else:
        from factcheck.report import render

        # Piped output keeps long lines (URLs) whole instead of wrapping them at 80 columns.
        render(verdict, Console(soft_wrap=not sys.stdout.isatty()))
    if spending is not None and (reached := spending.reached()) is not None:
        click.echo(f"budget: {reached}; sent {spending.sent()}", err=True)
    failed = failure(verdict, fail_on)
    if failed is not None:
        status, reason = failed
        click.echo(f"{reason} (exit status {status})", err=True)
        sys.exit(status)
