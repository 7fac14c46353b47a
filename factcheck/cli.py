"""The ``factcheck`` command line.

Built-in commands register through the ``register_commands`` hook like any
plugin's. Errors raised on purpose (:class:`FactcheckError`) print as one line
and exit 1; ``FACTCHECK_RAISE_ERRORS=1`` shows the traceback instead.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import IO, Any

import click
from rich.console import Console

from factcheck.errors import FactcheckError, InputError, raise_errors_requested
from factcheck.jsonl import iter_records
from factcheck.options import parse_option_pairs
from factcheck.plugins.hookspecs import hookimpl


class FactcheckGroup(click.Group):
    """A group whose commands come from the plugin registry, and that prints domain errors as one line."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        from factcheck.plugins import get_commands

        return sorted(get_commands())

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        from factcheck.plugins import get_commands

        return get_commands().get(cmd_name)

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except FactcheckError as exc:
            if raise_errors_requested():
                raise
            raise click.ClickException(str(exc)) from None


@click.group(cls=FactcheckGroup)
@click.version_option(package_name="factcheck-agents")
def cli() -> None:
    """Evidence-based, multi-agent fact-checking."""


option_flag = click.option(
    "--option",
    "-o",
    "options",
    multiple=True,
    metavar="KEY=VALUE",
    help="Scorer or label-rule option, e.g. bounds=reference or thresholds=0.5 (repeatable).",
)
scorer_flag = click.option("--scorer", help="Scorer: mafc, average, normsum, majority, or a plugin's.")
labels_flag = click.option("--labels", help="Label rule: threshold or compose, or a plugin's.")


def _read_text(text: str | None, file: Path | None) -> str:
    if text is not None and file is not None:
        raise InputError("give the text or --file, not both")
    if file is not None:
        try:
            return file.read_text(encoding="utf-8")
        except OSError as exc:
            raise InputError(f"cannot read {file}: {exc.strerror}") from None
        except UnicodeDecodeError:
            raise InputError(f"{file} is not UTF-8 text") from None
    if text is None:
        raise InputError("give a text to check, --file PATH, or - to read standard input")
    if text == "-":
        return sys.stdin.read()
    return text


@click.command()
@click.argument("text", required=False)
@click.option("--file", "-f", type=click.Path(path_type=Path), help="Read the text from a file.")
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True)
@click.option("--profile", help="Agent profile: offline (default) or paper.")
@scorer_flag
@labels_flag
@option_flag
@click.option("--corpus", type=click.Path(path_type=Path), help="JSONL file or folder searched by the corpus agent.")
@click.option("--source", "sources", multiple=True, help="Add an agent with this source (repeatable).")
@click.option("--config", type=click.Path(path_type=Path), help="Settings file (default: ./factcheck.toml).")
def check(
    text: str | None,
    file: Path | None,
    fmt: str,
    profile: str | None,
    scorer: str | None,
    labels: str | None,
    options: tuple[str, ...],
    corpus: Path | None,
    sources: tuple[str, ...],
    config: Path | None,
) -> None:
    """Check TEXT (or --file F, or - for standard input) and report the verdict."""
    from factcheck.pipeline import Checker

    content = _read_text(text, file)
    checker = Checker(
        config=config,
        profile=profile,
        scorer=scorer,
        labels=labels,
        scoring_options=parse_option_pairs(options),
        corpus=corpus,
        sources=sources,
    )
    verdict = checker.check(content)
    if fmt == "json":
        click.echo(json.dumps(verdict.to_dict(), ensure_ascii=False, indent=2))
    else:
        from factcheck.report import render

        render(verdict, Console())


@click.command()
@click.argument("input_file", metavar="IN.jsonl", type=click.File("r", encoding="utf-8"))
@click.option("--out", type=click.File("w", encoding="utf-8"), default="-", help="Where to write (default: stdout).")
@scorer_flag
@labels_flag
@option_flag
def score(input_file: IO[str], out: IO[str], scorer: str | None, labels: str | None, options: tuple[str, ...]) -> None:
    """Re-score recorded checks (one checked-text JSON per line) without calling any source.

    Lines keep their order and any extra fields (ids, gold labels).
    """
    from factcheck.pipeline import resolve_scoring
    from factcheck.scoring import rescore
    from factcheck.types import TextVerdict

    chosen_scorer, rule = resolve_scoring(scorer or "mafc", labels or "threshold", parse_option_pairs(options))
    for number, record in iter_records(input_file, input_file.name):
        try:
            verdict = TextVerdict.from_dict(record)
        except FactcheckError as exc:
            raise InputError(f"{input_file.name}:{number}: {exc}") from None
        record.update(rescore(verdict, chosen_scorer, rule).to_dict())
        out.write(json.dumps(record, ensure_ascii=False) + "\n")


@click.command()
@click.option("--all", "show_all", is_flag=True, help="Include the built-in plugins.")
def plugins(show_all: bool) -> None:
    """List installed plugins and what each registered, as JSON."""
    from factcheck.plugins import list_plugins

    click.echo(json.dumps(list_plugins(include_builtins=show_all), indent=2))


@hookimpl
def register_commands(register: Callable[[Any], None]) -> None:
    for command in (check, score, plugins):
        register(command)


def main() -> None:
    """Console-script entry point."""
    cli()
