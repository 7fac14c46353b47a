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
from typing import TYPE_CHECKING, Any

import click
from rich.console import Console

from factcheck.errors import FactcheckError, InputError, raise_errors_requested
from factcheck.jsonl import atomic_writer, read_records
from factcheck.options import parse_option_pairs
from factcheck.plugins.hookspecs import hookimpl

if TYPE_CHECKING:
    from factcheck.pipeline import Checker


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
llm_base_url_flag = click.option(
    "--llm-base-url", help="OpenAI-compatible endpoint, e.g. http://localhost:11434/v1 (Ollama)."
)
llm_model_flag = click.option("--llm-model", help="Model name for the LLM components.")
no_cache_flag = click.option("--no-cache", is_flag=True, help="Neither read nor write the cache.")
independence_flag = click.option(
    "--independence",
    type=click.Choice(["off", "merge"]),
    default="off",
    show_default=True,
    help="merge: agreeing agents citing near-duplicate evidence count once.",
)


def llm_overrides(base_url: str | None, model: str | None) -> dict[str, str]:
    """The ``[llm]`` settings the LLM flags set."""
    return {k: v for k, v in (("base_url", base_url), ("model", model)) if v}


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
        try:
            return sys.stdin.buffer.read().decode("utf-8")
        except UnicodeDecodeError:
            raise InputError("standard input is not UTF-8 text") from None
    return text


def build_checker(
    *,
    config: Path | None,
    profile: str | None,
    scorer: str | None,
    labels: str | None,
    options: tuple[str, ...],
    corpus: Path | None,
    sources: tuple[str, ...],
    llm_base_url: str | None,
    llm_model: str | None,
    cache_path: Path | None,
    no_cache: bool,
    independence: str,
    independence_threshold: float = 0.5,
    serper_url: str | None = None,
    wikipedia_url: str | None = None,
    routing: str | None = None,
    tau: str | None = None,
    trust_file: Path | None = None,
) -> Checker:
    """The Checker the shared command-line flags ask for (``check``, ``batch``)."""
    from factcheck.pipeline import Checker

    source_options: dict[str, dict[str, str]] = {}
    if serper_url:
        source_options["serper"] = {"base_url": serper_url}
    if wikipedia_url:
        source_options["wikipedia"] = {"api_url": wikipedia_url}
    cache: dict[str, Any] = {"path": str(cache_path)} if cache_path else {}
    if no_cache:
        cache["enabled"] = False
    # tau stays a string here so a bad value is reported by the routing policy as a ConfigError.
    routing_options = {k: v for k, v in (("tau", tau), ("trust", trust_file and str(trust_file))) if v}
    return Checker(
        config=config,
        profile=profile,
        scorer=scorer,
        labels=labels,
        scoring_options=parse_option_pairs(options),
        corpus=corpus,
        sources=sources,
        source_options=source_options,
        llm=llm_overrides(llm_base_url, llm_model),
        cache=cache,
        routing=routing,
        routing_options=routing_options,
        independence=independence_threshold if independence == "merge" else None,
    )


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
@llm_base_url_flag
@llm_model_flag
@click.option("--serper-url", help="Base URL of the Serper API (default https://google.serper.dev).")
@click.option("--wikipedia-url", help="MediaWiki API URL (default https://en.wikipedia.org/w/api.php).")
@click.option("--cache", "cache_path", type=click.Path(path_type=Path), help="SQLite cache file.")
@no_cache_flag
@click.option(
    "--routing",
    type=click.Choice(["all", "trust", "gated"]),
    help="Which agents answer each claim: all (default), trust (PAMAS) or gated (cheapest first).",
)
@click.option("--tau", help="Confidence a gated check needs to stop escalating (default 0.8).")
@click.option("--trust", "trust_file", type=click.Path(path_type=Path), help="Trust file (factcheck calibrate).")
@independence_flag
@click.option("--independence-threshold", type=click.FloatRange(0, 1, min_open=True), default=0.5, show_default=True)
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
    llm_base_url: str | None,
    llm_model: str | None,
    serper_url: str | None,
    wikipedia_url: str | None,
    cache_path: Path | None,
    no_cache: bool,
    routing: str | None,
    tau: str | None,
    trust_file: Path | None,
    independence: str,
    independence_threshold: float,
) -> None:
    """Check TEXT (or --file F, or - for standard input) and report the verdict."""
    content = _read_text(text, file)
    checker = build_checker(
        config=config,
        profile=profile,
        scorer=scorer,
        labels=labels,
        options=options,
        corpus=corpus,
        sources=sources,
        llm_base_url=llm_base_url,
        llm_model=llm_model,
        cache_path=cache_path,
        no_cache=no_cache,
        independence=independence,
        independence_threshold=independence_threshold,
        serper_url=serper_url,
        wikipedia_url=wikipedia_url,
        routing=routing,
        tau=tau,
        trust_file=trust_file,
    )
    verdict = checker.check(content)
    if fmt == "json":
        click.echo(json.dumps(verdict.to_dict(), ensure_ascii=False, indent=2))
    else:
        from factcheck.report import render

        # Piped output keeps long lines (URLs) whole instead of wrapping them at 80 columns.
        render(verdict, Console(soft_wrap=not sys.stdout.isatty()))


def keep_extra_fields(original: dict[str, Any], rescored: dict[str, Any]) -> dict[str, Any]:
    """``rescored`` over ``original``, keeping fields only the original has, inside claims,
    judgments and evidence too (a per-claim gold label, say)."""
    merged = {**original, **rescored}
    for key in ("claims", "judgments", "evidence"):
        old, new = original.get(key), rescored.get(key)
        if isinstance(old, list) and isinstance(new, list) and len(old) == len(new):
            merged[key] = [keep_extra_fields(o, n) if isinstance(o, dict) else n for o, n in zip(old, new, strict=True)]
    return merged


@click.command()
@click.argument("input_file", metavar="IN.jsonl")
@click.option("--out", help="Where to write (default: standard output); may be IN.jsonl itself.")
@scorer_flag
@labels_flag
@option_flag
def score(input_file: str, out: str | None, scorer: str | None, labels: str | None, options: tuple[str, ...]) -> None:
    """Re-score recorded checks (one checked-text JSON per line, .jsonl or .jsonl.gz, - for
    standard input) without calling any source.

    Lines keep their order and every field the scorer does not set (ids, gold labels).
    """
    from factcheck.pipeline import resolve_scoring
    from factcheck.scoring import rescore
    from factcheck.types import TextVerdict

    chosen_scorer, rule = resolve_scoring(scorer or "mafc", labels or "threshold", parse_option_pairs(options))
    # Read everything first: the output may replace the input.
    records = list(read_records(input_file))
    with atomic_writer(out) as handle:
        for number, record in records:
            try:
                verdict = TextVerdict.from_dict(record)
            except FactcheckError as exc:
                raise InputError(f"{input_file}:{number}: {exc}") from None
            rescored = rescore(verdict, chosen_scorer, rule).to_dict()
            handle.write(json.dumps(keep_extra_fields(record, rescored), ensure_ascii=False) + "\n")


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
