"""The ``factcheck`` command line.

Built-in commands register through the ``register_commands`` hook like any
plugin's. Errors raised on purpose (:class:`FactcheckError`) print as one line
and exit 1; ``FACTCHECK_RAISE_ERRORS=1`` shows the traceback instead. Click's
usage errors exit 2; ``check --fail-on`` adds 3, 4 and 5 (:data:`FAIL_STATUS`).
Warnings of factcheck's own (a plugin refused) print as one ``warning: ...`` line.
"""

from __future__ import annotations

import dataclasses
import json
import sys
import warnings
from collections.abc import Callable, Collection
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click
from rich.console import Console

from factcheck.claimtime import reference_time
from factcheck.errors import ConfigError, FactcheckError, InputError, raise_errors_requested
from factcheck.jsonl import atomic_writer, read_documents
from factcheck.options import parse_option_pairs
from factcheck.plugins.hookspecs import hookimpl

if TYPE_CHECKING:
    from factcheck.config import Settings
    from factcheck.types import TextVerdict


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


def registered(kind: str) -> Callable[[], list[str]]:
    """The names registered of ``kind`` (``scorers``, ``label_rules``, ...), read when called."""

    def names() -> list[str]:
        from factcheck.plugins import get_registry

        return sorted(get_registry().components[kind])

    return names


def profiles() -> list[str]:
    """The agent profiles' names."""
    from factcheck.config import PROFILES

    return sorted(PROFILES)


class HelpOption(click.Option):
    """An option whose help names what is registered and the default that settings decide.

    ``names`` fills ``{names}`` in the help, read from the plugin registry only when help
    is shown (the registry is built from the plugins, this module among them), so a
    plugin's scorer is listed beside the built-ins. ``default_text`` is shown as click
    shows a default, for options whose click default is ``None`` because ``factcheck.toml``
    or the environment may set them.
    """

    def __init__(
        self,
        *args: Any,
        names: Callable[[], list[str]] | None = None,
        default_text: str | Callable[[], str] | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(*args, **kwargs)
        self.names = names
        self.default_text = default_text
        self.help_template = self.help

    def get_help_record(self, ctx: click.Context) -> tuple[str, str] | None:
        if self.names is not None and self.help_template:
            self.help = self.help_template.format(names=", ".join(self.names()))
        return super().get_help_record(ctx)

    def get_help_extra(self, ctx: click.Context) -> click.types.OptionHelpExtra:
        extra = super().get_help_extra(ctx)
        if self.default_text is not None:
            extra["default"] = self.default_text() if callable(self.default_text) else self.default_text
        return extra


def key_value_pairs(ctx: click.Context, param: click.Parameter, values: tuple[str, ...]) -> tuple[str, ...]:
    """Refuse a ``-o`` value that is not KEY=VALUE while parsing, before any work, with a hint
    for the likely slip: ``-o`` meant as an output file."""
    for value in values:
        try:
            parse_option_pairs([value])
        except ConfigError:
            hint = ""
            if "=" not in value and any(p.name == "out" for p in ctx.command.params):
                hint = f"; to write to {value}, use --out {value}"
            raise click.BadParameter(
                f"{value!r} is not KEY=VALUE (-o is --option in every factcheck command{hint})", ctx, param
            ) from None
    return values


def options_flag(help_text: str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """``-o/--option KEY=VALUE`` (repeatable), read into ``options``; ``help_text`` says whose options."""
    return click.option(
        "--option", "-o", "options", multiple=True, metavar="KEY=VALUE", callback=key_value_pairs, help=help_text
    )


option_flag = options_flag("Option of the scorer or label rule, e.g. bounds=reference or thresholds=0.5 (repeatable).")


def settings_default(name: str) -> Callable[[], str]:
    """``settings, else X``: the help's default for a flag whose value settings decide, X read from
    :class:`~factcheck.config.Settings` when the help is shown."""

    def text() -> str:
        from factcheck.config import Settings

        return f"settings, else {getattr(Settings, name)}"

    return text


scorer_flag = click.option(
    "--scorer",
    cls=HelpOption,
    names=registered("scorers"),
    default_text=settings_default("scorer"),
    help="Scorer: {names}.",
)
labels_flag = click.option(
    "--labels",
    cls=HelpOption,
    names=registered("label_rules"),
    default_text=settings_default("labels"),
    help="Label rule: {names}.",
)
profile_flag = click.option(
    "--profile",
    cls=HelpOption,
    names=profiles,
    default_text="settings, else paper when LLM and web-search keys are set, else offline",
    help="Agent profile: {names}.",
)
config_flag = click.option(
    "--config",
    cls=HelpOption,
    type=click.Path(path_type=Path),
    default_text="./factcheck.toml if there is one",
    help="Settings file.",
)
corpus_flag = click.option(
    "--corpus",
    cls=HelpOption,
    type=click.Path(path_type=Path),
    default_text="settings, else the shipped SciFact abstracts",
    help="JSONL file, text file or folder searched by the corpus agent.",
)
source_flag = click.option(
    "--source",
    "sources",
    cls=HelpOption,
    multiple=True,
    names=registered("sources"),
    help="Add an agent with this source and the profile's verifier (repeatable): {names}.",
)
llm_base_url_flag = click.option(
    "--llm-base-url", help="OpenAI-compatible endpoint, e.g. http://localhost:11434/v1 (Ollama)."
)
llm_model_flag = click.option("--llm-model", help="Model name for the LLM components.")
cache_flag = click.option(
    "--cache",
    "cache_path",
    cls=HelpOption,
    type=click.Path(path_type=Path),
    default_text="settings, else cache.sqlite in $FACTCHECK_CACHE_DIR or ~/.cache/factcheck",
    help="SQLite cache file.",
)
no_cache_flag = click.option("--no-cache", is_flag=True, help="Neither read nor write the cache.")
refresh_flag = click.option(
    "--refresh", is_flag=True, help="Ask every source and model again instead of reading the cache; store the answers."
)
independence_flag = click.option(
    "--independence",
    type=click.Choice(["off", "merge"]),
    default="off",
    show_default=True,
    help="merge: agreeing agents citing near-duplicate evidence count once.",
)
serper_url_flag = click.option(
    "--serper-url",
    cls=HelpOption,
    default_text="settings, else https://google.serper.dev",
    help="Base URL of the Serper API.",
)
wikipedia_url_flag = click.option(
    "--wikipedia-url",
    cls=HelpOption,
    default_text="settings, else https://en.wikipedia.org/w/api.php",
    help="MediaWiki API URL.",
)


def endpoint_flags(command: Callable[..., Any]) -> Callable[..., Any]:
    """``--serper-url`` and ``--wikipedia-url``: where the search agents send their requests, the same
    flags in every command that checks (check, batch, eval, serve)."""
    return serper_url_flag(wikipedia_url_flag(command))


def budget_flags(command: Callable[..., Any]) -> Callable[..., Any]:
    """``--max-cost``, ``--max-llm-calls`` and ``--max-searches``: limits checked before each paid request
    (:class:`~factcheck.usage.Spending`), the same in ``check`` and ``batch``."""
    command = click.option(
        "--max-searches",
        type=click.IntRange(min=0),
        help="Send no search request (Serper, SerpAPI, MediaWiki; each retry counts) once this many are sent.",
    )(command)
    command = click.option(
        "--max-llm-calls", type=click.IntRange(min=0), help="Make no LLM call once this many are made."
    )(command)
    return click.option(
        "--max-cost", type=click.FloatRange(min=0), help="Make no paid call once this many US dollars are spent."
    )(command)


scoring_trust_flag = click.option(
    "--trust",
    "trust_file",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    help="Trust file (factcheck calibrate) for a trust-aware scorer (pamas): the same as -o trust=FILE.",
)


def scoring_options(options: tuple[str, ...], trust_file: Path | None) -> dict[str, str]:
    """The ``-o`` pairs, with ``--trust FILE`` as ``trust=FILE`` unless ``-o trust=...`` names one."""
    parsed = parse_option_pairs(options)
    if trust_file is not None:
        parsed.setdefault("trust", str(trust_file))
    return parsed


def llm_overrides(base_url: str | None, model: str | None) -> dict[str, str]:
    """The ``[llm]`` settings the LLM flags set."""
    return {k: v for k, v in (("base_url", base_url), ("model", model)) if v}


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


def settings_from_flags(
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
    refresh: bool = False,
    serper_url: str | None = None,
    wikipedia_url: str | None = None,
    routing: str | None = None,
    tau: str | None = None,
    trust_file: Path | None = None,
) -> Settings:
    """The settings the shared command-line flags ask for (``check``, ``batch``, ``eval``): the config
    file and environment, then the flags. :func:`factcheck.build_checker` makes the checker."""
    from factcheck.config import load_settings

    source_options: dict[str, dict[str, str]] = {}
    if serper_url:
        source_options["serper"] = {"base_url": serper_url}
    if wikipedia_url:
        source_options["wikipedia"] = {"api_url": wikipedia_url}
    cache: dict[str, Any] = {"path": str(cache_path)} if cache_path else {}
    if no_cache:
        cache["enabled"] = False
    if refresh:
        cache["refresh"] = True
    # tau stays a string here so a bad value is reported by the routing policy as a ConfigError.
    routing_options = {k: v for k, v in (("tau", tau), ("trust", trust_file and str(trust_file))) if v}
    return load_settings(
        config,
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


def text_input(
    formats: str, choices: tuple[str, ...] = ("text", "json")
) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """TEXT, ``--file`` and ``--format`` (one of ``choices``; ``formats`` says what each gives): how a command
    reads a text."""

    def decorate(command: Callable[..., Any]) -> Callable[..., Any]:
        command = click.option(
            "--format", "fmt", type=click.Choice(list(choices)), default="text", show_default=True, help=formats
        )(command)
        command = click.option("--file", "-f", type=click.Path(path_type=Path), help="Read the text from a file.")(
            command
        )
        return click.argument("text", required=False)(command)

    return decorate


# Exit statuses of ``check --fail-on``, beside 0 (done), 1 (an error you can fix) and 2 (a usage error).
# When several conditions asked for hold, the first here decides: an error explains an UNVERIFIED claim.
FAIL_STATUS = {"error": 3, "unverified": 4, "false": 5}

EXIT_STATUSES = (
    "Exit status: 0 checked; 1 an error you can fix (bad input or settings); 2 a usage error; with --fail-on: "
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
    from factcheck.report import plural
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


@click.command(short_help="Check a text and show the verdict with its evidence.", epilog=EXIT_STATUSES)
@text_input(
    "text: a readable report; json: the factcheck/1 JSON format, indented; jsonl: the same on one line.",
    ("text", "json", "jsonl"),
)
@click.option(
    "--fail-on",
    "fail_on",
    multiple=True,
    type=click.Choice(list(FAIL_STATUS)),
    help="For scripts: exit 3 when an agent could not judge a claim (error), 4 when a claim or the text is "
    "UNVERIFIED (unverified), 5 when a claim is FALSE or the text FALSE or PARTLY TRUE (false); repeatable, "
    "the first that holds in that order decides. The verdict is printed first, the reason on standard error.",
)
@profile_flag
@scorer_flag
@labels_flag
@option_flag
@corpus_flag
@source_flag
@config_flag
@llm_base_url_flag
@llm_model_flag
@endpoint_flags
@cache_flag
@no_cache_flag
@refresh_flag
@click.option(
    "--routing",
    cls=HelpOption,
    type=click.Choice(["all", "trust", "gated"]),
    default_text="settings, else all",
    help="Which agents answer each claim: all, trust (PAMAS: the most trusted first) or gated (cheapest first).",
)
@click.option(
    "--tau",
    cls=HelpOption,
    default_text="settings, else 0.8",
    help="Confidence a gated check needs to stop asking more agents.",
)
@click.option(
    "--as-of",
    metavar="DATE",
    help="When the text was written (ISO 8601, e.g. 2014-05-10; default now): claims' times are resolved "
    "against it, and Wikipedia is read as it stood then (docs/time.md).",
)
@click.option(
    "--trust",
    "trust_file",
    type=click.Path(path_type=Path),
    help="Trust file (factcheck calibrate): orders agents for --routing trust, and weighs a trust-aware scorer "
    "(pamas) as -o trust=FILE does.",
)
@independence_flag
@click.option(
    "--independence-threshold",
    type=click.FloatRange(0, 1, min_open=True),
    default=0.5,
    show_default=True,
    help="With --independence merge: how similar two agents' evidence must be to count once.",
)
@budget_flags
def check(
    text: str | None,
    file: Path | None,
    fmt: str,
    fail_on: tuple[str, ...],
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
    refresh: bool,
    routing: str | None,
    tau: str | None,
    as_of: str | None,
    trust_file: Path | None,
    independence: str,
    independence_threshold: float,
    max_cost: float | None,
    max_llm_calls: int | None,
    max_searches: int | None,
) -> None:
    """Check TEXT (or --file F, or - for standard input) and report the verdict.

    With a budget (--max-cost, --max-llm-calls, --max-searches), a request the budget does not allow is not
    sent: its agent abstains, and what was sent is said on standard error."""
    content = _read_text(text, file)
    if as_of is not None:
        try:
            reference_time(as_of)
        except ValueError as exc:
            raise click.BadParameter(str(exc), param_hint="--as-of") from None
    from factcheck.build import build_checker

    checker = build_checker(
        settings_from_flags(
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
            refresh=refresh,
            independence=independence,
            independence_threshold=independence_threshold,
            serper_url=serper_url,
            wikipedia_url=wikipedia_url,
            routing=routing,
            tau=tau,
            trust_file=trust_file,
        )
    )
    from factcheck.context import using
    from factcheck.usage import Spending

    budgeted = any(limit is not None for limit in (max_cost, max_llm_calls, max_searches))
    spending = Spending(max_llm_calls, max_cost, max_searches) if budgeted else None
    with using(spending=spending):
        verdict = checker.check(content, as_of=as_of)
    if fmt == "json":
        click.echo(json.dumps(verdict.to_dict(), ensure_ascii=False, indent=2))
    elif fmt == "jsonl":  # one line per text: what `factcheck score` and other JSON Lines readers take
        click.echo(json.dumps(verdict.to_dict(), ensure_ascii=False))
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
def score(
    input_file: str, out: str | None, scorer: str, labels: str, options: tuple[str, ...], trust_file: Path | None
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
            handle.write(json.dumps(keep_extra_fields(record, rescored), ensure_ascii=False) + "\n")


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

    content = _read_text(text, file)
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
    chosen = checker.extractor
    recorder = UsageRecorder()
    found = asyncio.run(checker.extraction(content, recorder))
    if fmt == "json":
        record = {"schema": SCHEMA, "text": content, "extractor": chosen.name, **found.to_dict()}
        record["notes"] = list(recorder.notes)
        click.echo(json.dumps(record, ensure_ascii=False, indent=2))
        return
    from factcheck.report import plural

    for note in recorder.notes:
        click.echo(f"note: {note}")
    click.echo(f"{plural(len(found.claims), 'claim')} to check (extractor {chosen.name}):")
    for claim in found.claims:
        click.echo(f"  [{claim.id}] {_where(claim.span)}  {claim.text}")
        if claim.attributed_to:
            click.echo(f"       attributed to: {claim.attributed_to}")
        if claim.original:
            click.echo(f"       as written ({', '.join(claim.edits) or 'rewritten'}): {claim.original}")
    click.echo(f"{plural(len(found.skipped), 'sentence')} skipped:")
    for skipped in found.skipped:
        click.echo(f"  {_where(skipped.span)}  [{skipped.rule}] {skipped.text}")
        if skipped.reason:
            click.echo(f"       {skipped.reason}")


def _where(span: tuple[int, int] | None) -> str:
    """``12-40``: a span of the input, for people; ``?`` where it cannot be mapped back."""
    return f"{span[0]}-{span[1]}" if span else "?"


@click.command(short_help="List installed plugins and what each registered, as JSON.")
@click.option("--all", "show_all", is_flag=True, help="Include the built-in plugins.")
def plugins(show_all: bool) -> None:
    """List installed plugins and what each registered, as JSON."""
    from factcheck.plugins import list_plugins

    click.echo(json.dumps(list_plugins(include_builtins=show_all), indent=2))


@hookimpl
def register_commands(register: Callable[[Any], None]) -> None:
    for command in (check, extract, score, plugins):
        register(command)


ShowWarning = Callable[..., None]  # the signature of warnings.showwarning


def one_line_warnings(python_way: ShowWarning) -> ShowWarning:
    """A ``warnings.showwarning`` that shows factcheck's own warnings (a refused plugin, an unwritable
    cache) as one ``warning: ...`` line on standard error, with no source path, and any other warning
    ``python_way``."""
    from factcheck.plugins.manager import PluginWarning

    def show(
        message: Warning | str,
        category: type[Warning],
        filename: str,
        lineno: int,
        file: Any = None,
        line: str | None = None,
    ) -> None:
        text = str(message)
        if issubclass(category, PluginWarning) or text.startswith("factcheck: "):
            click.echo(f"warning: {text.removeprefix('factcheck: ')}", err=True)
        else:
            python_way(message, category, filename, lineno, file, line)

    return show


def main() -> None:
    """Console-script entry point."""
    warnings.showwarning = one_line_warnings(warnings.showwarning)
    cli()
