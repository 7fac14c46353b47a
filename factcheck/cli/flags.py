"""The flags and helpers that every command reading settings shares (``check``, ``extract``, ``score``,
``batch``, ``eval``, ``calibrate``, ``serve``): one definition each, so a flag means the same everywhere.

Nothing heavy is imported here: commands import the pipeline when they run.
"""

from __future__ import annotations

import functools
import sys
from collections.abc import Callable
from dataclasses import dataclass, fields
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from factcheck.errors import ConfigError, InputError
from factcheck.options import parse_option_pairs

if TYPE_CHECKING:
    from factcheck.config import Settings

Decorator = Callable[[Callable[..., Any]], Callable[..., Any]]  # what click.option(...) returns


def registered(kind: str) -> Callable[[], list[str]]:
    """The names registered of ``kind`` (``scorers``, ``label_rules``, ...), read when called."""

    def names() -> list[str]:
        from factcheck.registry import get_registry

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
# check and batch: a key goes to the scorer, label rule or deliberation policy that declares it (build.route_options)
checker_option_flag = options_flag(
    "Option of the scorer, label rule or deliberation policy that has it, e.g. bounds=reference or max_steps=3; "
    "deliberation.KEY=VALUE is the policy's (repeatable)."
)


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
deliberation_flag = click.option(
    "--deliberation",
    cls=HelpOption,
    names=registered("deliberators"),
    default_text=settings_default("deliberation"),
    help="Deliberation policy: how the agents settle a claim their first answers left open ({names}; "
    "docs/deliberation.md).",
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


def memory_option(help: str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """``--memory FILE``, the experience memory (``[memory] path``), as every command that reads or writes it
    takes it; ``help`` says what the command does with it."""
    return click.option(
        "--memory",
        "memory_path",
        cls=HelpOption,
        type=click.Path(dir_okay=False, path_type=Path),
        default_text="settings ([memory] path, $FACTCHECK_MEMORY), else none",
        help=help,
    )


memory_flag = memory_option(
    "Experience memory (SQLite, made by factcheck feedback / memory import): the memory agent lends the past cases "
    "like each claim as precedents (docs/learning.md)."
)
agents_flag = click.option(
    "--agents",
    "agent_names",
    metavar="NAMES|recommended",
    help="Run only these agents, in this order (comma list), or recommended: the team factcheck calibrate "
    "recommended in the --trust file.",
)
trust_flag = click.option(
    "--trust",
    "trust_file",
    type=click.Path(path_type=Path),
    help="Trust file (factcheck calibrate): orders agents for --routing trust, weighs a trust-aware scorer "
    "(pamas) as -o trust=FILE does, and holds the team --agents recommended runs.",
)
independence_flag = click.option(
    "--independence",
    cls=HelpOption,
    type=click.Choice(["off", "merge"]),
    default_text="settings ([pipeline] independence), else off",
    help="merge: agreeing agents citing near-duplicate evidence count once.",
)
serper_url_flag = click.option(
    "--serper-url",
    cls=HelpOption,
    default_text="settings, else https://google.serper.dev",
    help="Base URL of the Serper API.",
)
serpapi_url_flag = click.option(
    "--serpapi-url",
    cls=HelpOption,
    default_text="settings, else https://serpapi.com",
    help="Base URL of the SerpAPI API (the web agent's search when only SERPAPI_API_KEY is set).",
)
wikipedia_url_flag = click.option(
    "--wikipedia-url",
    cls=HelpOption,
    default_text="settings, else https://en.wikipedia.org/w/api.php",
    help="MediaWiki API URL.",
)


wikidata_url_flag = click.option(
    "--wikidata-url",
    cls=HelpOption,
    default_text="settings ([wikidata] url), else https://www.wikidata.org/w/api.php",
    help="Wikibase API URL (the wikidata agent's).",
)


def endpoint_flags(command: Callable[..., Any]) -> Callable[..., Any]:
    """``--serper-url``, ``--serpapi-url``, ``--wikipedia-url`` and ``--wikidata-url``: where the search agents
    send their requests, the same flags in every command that checks (check, batch, eval, serve)."""
    return serper_url_flag(serpapi_url_flag(wikipedia_url_flag(wikidata_url_flag(command))))


def _as_of(ctx: click.Context, param: click.Parameter, value: str | None) -> str | None:
    if value is not None:
        from factcheck.claimtime import reference_time

        try:
            reference_time(value)
        except ValueError as exc:
            raise click.BadParameter(str(exc), ctx=ctx, param=param) from None
    return value


as_of_flag = click.option(
    "--as-of",
    metavar="DATE",
    callback=_as_of,
    help="When the text was written (ISO 8601, e.g. 2014-05-10; default now): claims' times are resolved "
    "against it, and Wikipedia is read as it stood then (docs/time.md).",
)


full_precision_flag = click.option(
    "--full-precision",
    is_flag=True,
    help="Write numbers as computed (0.09144999999999998); by default scores, confidences and seconds are "
    "rounded to 3 decimals and costs to 6.",
)


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


# Documents that are not text, by how their bytes start: a text-only PDF is valid UTF-8, and its
# syntax ("endobj", "/Type /Page") would be checked as claims.
NOT_TEXT = (
    (b"%PDF-", "a PDF"),
    (b"PK\x03\x04", "a ZIP archive (as a .docx, .odt or .epub is)"),
    (b"\xd0\xcf\x11\xe0", "an old Office document (.doc, .xls)"),
    (b"{\\rtf", "an RTF document"),
    (b"\xff\xfe", "UTF-16 or UTF-32 text (convert it to UTF-8)"),
    (b"\xfe\xff", "UTF-16 text (convert it to UTF-8)"),
    (b"\x00\x00\xfe\xff", "UTF-32 text (convert it to UTF-8)"),
)
BINARY_PROBE = 8192  # bytes looked at
# The share of them that are control bytes no text is made of (NUL and the like; not tab, newline, form feed):
# above it, a binary file. A stray NUL in a text ends a paragraph instead (docs/extraction.md).
BINARY_SHARE = 0.05
_CONTROL_BYTES = bytes(b for b in range(32) if b not in b"\t\n\r\x0b\x0c\x1b")


def not_text(data: bytes) -> str | None:
    """What ``data`` is when it is a document or binary file rather than text (``"a PDF"``); else None."""
    for magic, kind in NOT_TEXT:
        if data.startswith(magic):
            return kind
    probe = data[:BINARY_PROBE]
    controls = len(probe) - len(probe.translate(None, _CONTROL_BYTES))
    return "a binary file" if probe and controls / len(probe) > BINARY_SHARE else None


def _decoded(data: bytes, name: str) -> str:
    """``data`` as UTF-8 text; InputError naming ``name`` when it is a document, binary, or not UTF-8."""
    kind = not_text(data)
    if kind is not None:
        pdf = kind == "a PDF" and name.lower().endswith(".pdf")
        how = f" (pdftotext {name} {name[:-4]}.txt)" if pdf else ""
        raise InputError(f"{name} is {kind}, not text; convert it to text first{how}")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise InputError(f"{name} is not UTF-8 text") from None


def read_text(text: str | None, file: Path | None) -> str:
    """TEXT, the ``--file`` it names, or standard input for ``-``: the text a command was given, as UTF-8.
    A PDF, a .docx or any binary file is refused with one line saying what it is."""
    if text is not None and file is not None:
        raise InputError("give the text or --file, not both")
    if file is not None:
        try:
            return _decoded(file.read_bytes(), str(file))
        except OSError as exc:
            raise InputError(f"cannot read {file}: {exc.strerror}") from None
    if text is None:
        raise InputError("give a text to check, --file PATH, or - to read standard input")
    if text == "-":
        return _decoded(sys.stdin.buffer.read(), "standard input")
    return text


@dataclass(frozen=True)
class CheckerFlags:
    """What the flags that build a checker asked for (``check``, ``batch``, ``eval``): each field is one flag's
    value, ``None`` (or empty) when it was not given. :func:`checker_flags` builds it from the command line;
    :func:`settings_from_flags` reads it."""

    config: Path | None = None  # --config
    profile: str | None = None  # --profile
    scorer: str | None = None  # --scorer
    labels: str | None = None  # --labels
    options: tuple[str, ...] = ()  # -o/--option KEY=VALUE
    corpus: Path | None = None  # --corpus
    sources: tuple[str, ...] = ()  # --source
    llm_base_url: str | None = None  # --llm-base-url
    llm_model: str | None = None  # --llm-model
    cache_path: Path | None = None  # --cache
    no_cache: bool = False  # --no-cache
    refresh: bool = False  # --refresh
    independence: str | None = None  # --independence: off, merge, or None for the settings'
    independence_threshold: float = 0.5  # --independence-threshold
    serper_url: str | None = None  # --serper-url
    serpapi_url: str | None = None  # --serpapi-url
    wikipedia_url: str | None = None  # --wikipedia-url
    wikidata_url: str | None = None  # --wikidata-url
    routing: str | None = None  # --routing
    tau: str | None = None  # --tau
    trust_file: Path | None = None  # --trust
    deliberation: str | None = None  # --deliberation
    memory_path: Path | None = None  # --memory
    agent_names: str | None = None  # --agents


# The flags that build a checker, the same in check and batch, in the order --help lists them.
CHECKER_FLAGS: tuple[Decorator, ...] = (
    profile_flag,
    scorer_flag,
    labels_flag,
    deliberation_flag,
    memory_flag,
    agents_flag,
    trust_flag,
    checker_option_flag,
    corpus_flag,
    source_flag,
    config_flag,
    llm_base_url_flag,
    llm_model_flag,
    serper_url_flag,
    serpapi_url_flag,
    wikipedia_url_flag,
    wikidata_url_flag,
    cache_flag,
    no_cache_flag,
    refresh_flag,
    independence_flag,
)
_FLAG_FIELDS = frozenset(f.name for f in fields(CheckerFlags))


def checker_flags(*extra: Decorator) -> Decorator:
    """:data:`CHECKER_FLAGS`, then ``extra`` (a command's own flags of :class:`CheckerFlags`, e.g. ``--routing``),
    handed to the command as one keyword argument, ``flags``: a :class:`CheckerFlags`."""

    def decorate(command: Callable[..., Any]) -> Callable[..., Any]:
        @functools.wraps(command)
        def with_flags(*args: Any, **kwargs: Any) -> Any:
            given = {name: kwargs.pop(name) for name in _FLAG_FIELDS & kwargs.keys()}
            return command(*args, flags=CheckerFlags(**given), **kwargs)

        decorated: Callable[..., Any] = with_flags
        for flag in reversed((*CHECKER_FLAGS, *extra)):  # the last applied is listed first
            decorated = flag(decorated)
        return decorated

    return decorate


def settings_from_flags(flags: CheckerFlags) -> Settings:
    """The settings the shared command-line flags ask for (``check``, ``batch``, ``eval``): the config
    file and environment, then the flags. :func:`factcheck.build_checker` makes the checker.

    Each ``-o`` pair goes to the scorer, label rule or deliberation policy that declares it
    (:func:`factcheck.build.route_options`)."""
    from factcheck.build import route_options
    from factcheck.config import load_settings

    source_options: dict[str, dict[str, str]] = {}
    if flags.serper_url:
        source_options["serper"] = {"base_url": flags.serper_url}
    if flags.serpapi_url:
        source_options["serpapi"] = {"base_url": flags.serpapi_url}
    if flags.wikipedia_url:
        source_options["wikipedia"] = {"api_url": flags.wikipedia_url}
    if flags.wikidata_url:
        source_options["wikidata"] = {"api_url": flags.wikidata_url}
    cache: dict[str, Any] = {"path": str(flags.cache_path)} if flags.cache_path else {}
    if flags.no_cache:
        cache["enabled"] = False
    if flags.refresh:
        cache["refresh"] = True
    trust = flags.trust_file and str(flags.trust_file)
    # tau stays a string here so a bad value is reported by the routing policy as a ConfigError.
    routing_options = {k: v for k, v in (("tau", flags.tau), ("trust", trust)) if v}
    settings = load_settings(
        flags.config,
        profile=flags.profile,
        scorer=flags.scorer,
        labels=flags.labels,
        deliberation=flags.deliberation,
        corpus=flags.corpus,
        sources=flags.sources,
        source_options=source_options,
        llm=llm_overrides(flags.llm_base_url, flags.llm_model),
        cache=cache,
        routing=flags.routing,
        routing_options=routing_options,
        # Unset: the settings decide; off turns a [pipeline] independence of the file off.
        independence={"merge": flags.independence_threshold, "off": "off", None: None}[flags.independence],
        memory={"path": str(flags.memory_path)} if flags.memory_path else None,
        only_agents=chosen_agents(flags.agent_names, flags.trust_file),
    )
    return route_options(settings, parse_option_pairs(flags.options))


def chosen_agents(names: str | None, trust_file: Path | None) -> tuple[str, ...] | None:
    """``--agents``: the names given, or for ``recommended`` the team the ``--trust`` file recommends
    (``factcheck calibrate`` writes it); ``None`` when not given."""
    if names is None:
        return None
    if names.strip() == "recommended":
        if trust_file is None:
            raise InputError("--agents recommended reads the team factcheck calibrate recommended: give --trust FILE")
        from factcheck.trust import recommended_agents

        return tuple(recommended_agents(trust_file))
    chosen = tuple(n.strip() for n in names.split(",") if n.strip())
    if not chosen:
        raise InputError("--agents names at least one agent (a comma list), or recommended")
    return chosen


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
