"""``factcheck serve``: the HTTP API for browser extensions.

Registered with the other built-in commands; FastAPI and uvicorn are imported
only when the command runs, so the CLI works without the ``server`` extra.
"""

from __future__ import annotations

import logging
import typing
from collections.abc import Callable
from pathlib import Path
from typing import IO, Any

import click

from factcheck.cli.flags import (
    HelpOption,
    config_flag,
    corpus_flag,
    endpoint_flags,
    memory_option,
    profiles,
    registered,
)
from factcheck.cli.interrupted import keeps
from factcheck.config import ENDPOINT_VARIABLES
from factcheck.errors import ConfigError
from factcheck.options import Declared, declared
from factcheck.plugin import hookimpl

log = logging.getLogger("factcheck.server")
LOG_LEVELS = ("debug", "info", "warning", "error")


def configure_logging(level: str, stream: IO[str] | None = None) -> logging.Handler:
    """Log to standard error (or ``stream``) at ``level``; the handler added.

    The level is set on the handler too, not only on the root logger: a library that
    sets its own logger to DEBUG (bm25s does) would otherwise print every debug line.
    """
    handler = logging.StreamHandler(stream)
    handler.setLevel(level.upper())
    handler.setFormatter(logging.Formatter("%(levelname)s:     %(name)s: %(message)s"))
    root = logging.getLogger()
    root.setLevel(level.upper())
    root.addHandler(handler)
    return handler


def _server_default(item: Declared) -> Callable[[], str]:
    """The help's default of a server setting: its variable, else ServerSettings' own default."""

    def text() -> str:
        default = f"{item.default:g}" if isinstance(item.default, int | float) else "none"
        return f"${item.constraint.env[0]}, else {default}" if item.constraint.env else default

    return text


def _click_type(item: Declared) -> Any:
    """The click type of a setting: a range for a bounded number (refused while parsing, exit 2)."""
    c, base = item.constraint, item.base
    if base is int:
        return click.IntRange(c.minimum, c.maximum, min_open=c.min_open, max_open=c.max_open)  # type: ignore[arg-type]
    if base is float:
        return click.FloatRange(c.minimum, c.maximum, min_open=c.min_open, max_open=c.max_open)
    return str


def settings_flag(item: Declared) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """The ``factcheck serve`` flag of one ServerSettings field, from its declaration.

    ``None`` (not given) leaves the setting to the file and the environment: a switch
    is ``None`` unless given, a list flag is repeatable and adds to theirs.
    """
    flag = item.constraint.flag or "--" + item.name.replace("_", "-")
    help_text = item.constraint.help
    if item.name == "profile":  # the registered profiles, named when help is shown
        return click.option(
            flag, item.name, cls=HelpOption, names=profiles, default_text="as factcheck check", help=help_text
        )
    if item.name == "deliberation":  # the registered policies, named when help is shown
        return click.option(
            flag,
            item.name,
            cls=HelpOption,
            names=registered("deliberators"),
            default_text="$FACTCHECK_DELIBERATION, else as factcheck check",
            help=help_text,
        )
    if item.name == "config":  # the flag every checking command has
        return config_flag
    if item.base is bool:
        return click.option(flag, item.name, is_flag=True, default=None, help=help_text)
    if typing.get_origin(item.base) is tuple:
        return click.option(flag, item.name, multiple=True, help=help_text)
    return click.option(
        flag, item.name, cls=HelpOption, type=_click_type(item), default_text=_server_default(item), help=help_text
    )


def settings_flags(command: Callable[..., Any]) -> Callable[..., Any]:
    """A flag for every ServerSettings field that has one, in field order."""
    from factcheck.server.settings import ServerSettings

    items = [d for d in declared(ServerSettings) if d.constraint.flag is not None]
    for item in reversed(items):
        command = settings_flag(item)(command)
    return command


@click.command(short_help="Serve the HTTP API for browser extensions.")
@click.option("--host", default="127.0.0.1", show_default=True, help="Address to listen on.")
@click.option(
    "--port",
    type=click.IntRange(0, 65535),
    default=8000,
    show_default=True,
    help="Port to listen on (0: any free one).",
)
@corpus_flag
@memory_option(
    "Experience memory (SQLite): checks lend its precedents, and POST /v1/feedback stores key holders' corrections "
    "in it."
)
@endpoint_flags
@settings_flags
@click.option(
    "--forwarded-allow-ips",
    envvar="FORWARDED_ALLOW_IPS",
    default=None,
    help="Proxies whose X-Forwarded-For / -Proto are trusted (comma list, or * behind a private proxy); "
    "default: none, not even loopback.",
)
@click.option(
    "--workers",
    type=click.IntRange(min=1),
    default=1,
    show_default=True,
    help="Worker processes (each with its own answer cache and rate buckets; the SQLite cache is shared).",
)
@click.option(
    "--log-level",
    type=click.Choice(LOG_LEVELS),
    default="info",
    show_default=True,
    help="Least severe log messages shown, from this server and the libraries it uses.",
)
def serve(
    host: str,
    port: int,
    config: Path | None,
    corpus: Path | None,
    memory_path: Path | None,
    serper_url: str | None,
    serpapi_url: str | None,
    wikipedia_url: str | None,
    wikidata_url: str | None,
    forwarded_allow_ips: str | None,
    workers: int,
    log_level: str,
    **flags: Any,
) -> None:
    """Serve the fact-checking API (POST /v1/check, /v1/check/stream) for browser extensions.

    Callers present a key from FACTCHECK_API_KEYS as "Authorization: Bearer KEY".
    Provider keys (OPENAI_API_KEY, SERPER_API_KEY, ...) stay on this server.
    Settings: the [server] table of the settings file, then FACTCHECK_* variables, then these flags.
    """
    try:
        from factcheck.server.app import create_app
        from factcheck.server.runner import check_port
        from factcheck.server.runner import serve as run
        from factcheck.server.settings import ServerSettings
    except ImportError as exc:
        raise ConfigError(
            f"factcheck serve needs the server extra ({exc.name} is missing): pip install '.[server]' in a checkout"
        ) from None

    # The server's front door: the [server] table, the environment and these flags, read once; the flags for
    # every checker it builds go to them as data (to worker processes too), never through the environment.
    settings = ServerSettings.load(config, **flags)
    overrides = checker_overrides(
        corpus, memory_path, serper=serper_url, serpapi=serpapi_url, wikipedia=wikipedia_url, wikidata=wikidata_url
    )
    if settings.deliberation is not None:  # an unknown policy stops the server now, not each request
        from factcheck.registry import get_registry

        get_registry().get("deliberators", settings.deliberation)
    settings.check_exposure(host)
    check_port(host, port)  # a busy port is one line, before any start-up line or warm-up
    configure_logging(log_level)
    if not settings.auth:
        log.warning(
            "no API keys configured (FACTCHECK_API_KEYS): every caller that reaches %s is accepted%s",
            host,
            " (--insecure-no-auth)" if settings.insecure_no_auth else "",
        )
    if not settings.cors_origins:
        log.info("no CORS origin allowed: web pages cannot read answers (extensions with host permission can)")
    keeps("the server stopped; what it stored (cached judgments, corrections sent to it) is kept")
    if workers > 1:
        from factcheck.server.workers import serve_workers

        serve_workers(
            settings,
            host,
            port,
            workers,
            checker_overrides=overrides,
            forwarded_allow_ips=forwarded_allow_ips,
            log_level=log_level,
        )
        return
    run(
        create_app(settings, checker_overrides=overrides),
        host,
        port,
        forwarded_allow_ips=forwarded_allow_ips,
        log_level=log_level,
        max_connections=settings.max_connections,
        header_timeout_s=settings.header_timeout_s,
        max_pending_per_address=settings.max_pending_per_address,
    )


def checker_overrides(corpus: Path | None, memory_path: Path | None, **urls: str | None) -> dict[str, Any]:
    """``factcheck serve``'s flags for every checker it builds, as :func:`~factcheck.load_settings` overrides:
    ``--corpus``, ``--memory`` and each search endpoint (``urls`` by source: ``serper=``, ``serpapi=``,
    ``wikipedia=``, ``wikidata=``), as ``check`` and ``batch`` take them. Flags not given are left out."""
    overrides: dict[str, Any] = {}
    if corpus is not None:
        overrides["corpus"] = str(corpus)
    if memory_path is not None:  # every checker's memory agent, and where corrections go
        overrides["memory"] = {"path": str(memory_path)}
    endpoints = {source: {option: urls[source]} for source, option, _ in ENDPOINT_VARIABLES if urls.get(source)}
    if endpoints:
        overrides["source_options"] = endpoints
    return overrides


@hookimpl
def register_commands(register: Callable[[Any], None]) -> None:
    register(serve)
