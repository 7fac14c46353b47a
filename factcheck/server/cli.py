"""``factcheck serve``: the HTTP API for browser extensions.

Registered with the other built-in commands; FastAPI and uvicorn are imported
only when the command runs, so the CLI works without the ``server`` extra.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable
from pathlib import Path
from typing import IO, Any

import click

from factcheck.cli import HelpOption, config_flag, corpus_flag, endpoint_flags, profiles
from factcheck.errors import ConfigError
from factcheck.plugins.hookspecs import hookimpl

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


def _server_default(field: str, variable: str) -> Callable[[], str]:
    """The help's default of a server limit: its variable, else ServerSettings' own default."""

    def text() -> str:
        from factcheck.server.settings import ServerSettings

        return f"${variable}, else {getattr(ServerSettings, field):g}"

    return text


@click.command(short_help="Serve the HTTP API for browser extensions.")
@click.option("--host", default="127.0.0.1", show_default=True, help="Address to listen on.")
@click.option(
    "--port",
    type=click.IntRange(0, 65535),
    default=8000,
    show_default=True,
    help="Port to listen on (0: any free one).",
)
@click.option(
    "--profile",
    cls=HelpOption,
    names=profiles,
    default_text="as factcheck check",
    help="Default agent profile ({names}); a request may name another.",
)
@config_flag
@corpus_flag
@endpoint_flags
@click.option(
    "--cors-origin",
    "cors_origins",
    multiple=True,
    help="Origin allowed to read answers, e.g. chrome-extension://<id> (repeatable; adds to FACTCHECK_CORS_ORIGINS).",
)
@click.option(
    "--insecure-no-auth",
    is_flag=True,
    help="Serve without API keys on a non-loopback address (anyone who reaches it spends your provider keys).",
)
@click.option(
    "--max-text-chars",
    cls=HelpOption,
    type=click.IntRange(min=1),
    default_text=_server_default("max_text_chars", "FACTCHECK_MAX_TEXT_CHARS"),
    help="Longest text accepted (413 above).",
)
@click.option(
    "--rate-per-minute",
    cls=HelpOption,
    type=click.FloatRange(min=0),
    default_text=_server_default("rate_per_minute", "FACTCHECK_RATE_PER_MINUTE"),
    help="Requests per minute per caller; 0 = off.",
)
@click.option(
    "--rate-burst",
    cls=HelpOption,
    type=click.IntRange(min=1),
    default_text=_server_default("rate_burst", "FACTCHECK_RATE_BURST"),
    help="Requests a caller may send at once.",
)
@click.option(
    "--deadline",
    "deadline_s",
    cls=HelpOption,
    type=click.FloatRange(min=0, min_open=True),
    default_text=_server_default("deadline_s", "FACTCHECK_DEADLINE_S"),
    help="Seconds per check; then what is done is answered, marked partial.",
)
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
    profile: str | None,
    config: Path | None,
    corpus: Path | None,
    serper_url: str | None,
    wikipedia_url: str | None,
    cors_origins: tuple[str, ...],
    insecure_no_auth: bool,
    max_text_chars: int | None,
    rate_per_minute: float | None,
    rate_burst: int | None,
    deadline_s: float | None,
    forwarded_allow_ips: str | None,
    workers: int,
    log_level: str,
) -> None:
    """Serve the fact-checking API (POST /v1/check, /v1/check/stream) for browser extensions.

    Callers present a key from FACTCHECK_API_KEYS as "Authorization: Bearer KEY".
    Provider keys (OPENAI_API_KEY, SERPER_API_KEY, ...) stay on this server.
    """
    try:
        from factcheck.server.app import create_app
        from factcheck.server.runner import serve as run
        from factcheck.server.settings import ServerSettings
    except ImportError as exc:
        raise ConfigError(
            f"factcheck serve needs the server extra ({exc.name} is missing): pip install '.[server]' in a checkout"
        ) from None

    if corpus is not None:
        # Checkers are built per profile from the settings file and FACTCHECK_* variables: the flag is the variable.
        os.environ["FACTCHECK_CORPUS"] = str(corpus)
    for variable, url in (("FACTCHECK_SERPER_URL", serper_url), ("FACTCHECK_WIKIPEDIA_URL", wikipedia_url)):
        if url:  # read by every checker built (factcheck.config), in worker processes too
            os.environ[variable] = url
    base = ServerSettings.from_env()
    settings = ServerSettings.from_env(
        cors_origins=(*base.cors_origins, *(o for o in cors_origins if o not in base.cors_origins)),
        insecure_no_auth=insecure_no_auth,
        max_text_chars=max_text_chars,
        rate_per_minute=rate_per_minute,
        rate_burst=rate_burst,
        deadline_s=deadline_s,
        profile=profile,
        config=str(config) if config else None,
    )
    settings.check_exposure(host)
    configure_logging(log_level)
    if not settings.auth:
        log.warning(
            "no API keys configured (FACTCHECK_API_KEYS): every caller that reaches %s is accepted%s",
            host,
            " (--insecure-no-auth)" if insecure_no_auth else "",
        )
    if not settings.cors_origins:
        log.info("no CORS origin allowed: web pages cannot read answers (extensions with host permission can)")
    if workers > 1:
        from factcheck.server.runner import serve_workers

        serve_workers(
            settings.to_json(),
            host,
            port,
            workers,
            forwarded_allow_ips=forwarded_allow_ips,
            max_connections=settings.max_connections,
            header_timeout_s=settings.header_timeout_s,
            max_pending_per_address=settings.max_pending_per_address,
            log_level=log_level,
        )
        return
    run(
        create_app(settings),
        host,
        port,
        forwarded_allow_ips=forwarded_allow_ips,
        log_level=log_level,
        max_connections=settings.max_connections,
        header_timeout_s=settings.header_timeout_s,
        max_pending_per_address=settings.max_pending_per_address,
    )


@hookimpl
def register_commands(register: Callable[[Any], None]) -> None:
    register(serve)
