"""What the HTTP server is configured with: caller keys, allowed origins and limits.

Read from the ``[server]`` table of ``factcheck.toml``, then ``FACTCHECK_*``
environment variables, then ``factcheck serve`` flags (later wins). Each field is
declared once (:func:`~factcheck.options.setting`): its bounds, help, variable
and flag; the environment table and the command's flags are derived from it.
The checkers themselves are configured as everywhere else (``factcheck.toml``,
``FACTCHECK_*`` variables, provider keys in the environment), with ``factcheck serve``'s
flags for them (``--corpus``, ``--memory``, ``--serper-url``...) passed as data
(:class:`~factcheck.server.pool.CheckerPool`); these settings only decide who may call the
server and how much.
"""

from __future__ import annotations

import ipaddress
import json
import os
import re
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field, replace
from typing import Any

from factcheck.errors import ConfigError
from factcheck.options import check_fields, coerce_values, declared, env_values, setting
from factcheck.secrets import environment_secrets

# An extension's origin is its scheme and id; a web origin is scheme, host and optional port, no path.
_ORIGIN = re.compile(r"^(?:https?://[^/\s]+|chrome-extension://[a-p]{32}|moz-extension://[0-9a-fA-F-]{36})$")

_KEY_ID = re.compile(r"key-[1-9][0-9]*")  # a caller key's id (KeyChecker.identify), as feedback_keys names it

STRONG_KEY_CHARS = 16
STRONG_KEY_DISTINCT = 8


def is_weak_key(key: str) -> bool:
    """True for a key short or repetitive enough to guess (``12345678``, ``aaaaaaaaaaaaaaaa``)."""
    return len(key) < STRONG_KEY_CHARS or len(set(key)) < STRONG_KEY_DISTINCT


def is_loopback(host: str) -> bool:
    """True when ``host`` only accepts connections from this machine (``0.0.0.0`` accepts any)."""
    if host.strip("[]").lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False  # a host name: it may resolve to any interface


@dataclass(frozen=True)
class ServerSettings:
    """Who may call the server and how much.

    - ``api_keys``: bearer keys a caller must present (``FACTCHECK_API_KEYS``, comma-separated);
      none means no authentication, allowed only on a loopback host or with ``insecure_no_auth``.
    - ``feedback_keys``: the ids (``key-1``: the first of ``api_keys``) of the keys whose callers may send
      corrections to ``POST /v1/feedback`` (``FACTCHECK_FEEDBACK_KEYS``); none: the server takes no
      corrections (who may correct is chosen, never assumed). Without ``api_keys`` it takes none at all.
    - ``cors_origins``: origins whose pages may read the answers (``FACTCHECK_CORS_ORIGINS``),
      e.g. ``chrome-extension://<id>``; ``*`` allows any.
    - ``max_text_chars``: longer texts get 413 (``FACTCHECK_MAX_TEXT_CHARS``).
    - ``rate_per_minute`` / ``rate_burst``: each caller's token bucket (``FACTCHECK_RATE_PER_MINUTE``,
      ``FACTCHECK_RATE_BURST``); a rate of 0 turns limiting off.
    - ``deadline_s``: a check still running then returns what is done, marked partial (``FACTCHECK_DEADLINE_S``).
    - ``profile`` / ``config``: the default profile and the ``factcheck.toml`` checkers are built from.
    - ``deliberation``: the default deliberation policy (``FACTCHECK_DELIBERATION``; unset: the settings
      file's, else off); a request may name another, never its options.
    - ``max_checkers``: how many (profile, scorer, labels, deliberation) checkers are kept built.
    - ``max_claims``: claims checked per request; the rest are left out, with a note (``FACTCHECK_MAX_CLAIMS``
      sets the checker's own per-text cap, which also applies).
    - ``claims_per_minute`` / ``claims_burst``: a second token bucket per caller, charged one token per
      claim once the text is split (``FACTCHECK_CLAIMS_PER_MINUTE``, ``FACTCHECK_CLAIMS_BURST``); 0 = off.
    - ``auth_failures_per_minute``: wrong keys allowed per client address (a burst of 10, then this rate;
      ``FACTCHECK_AUTH_FAILURES_PER_MINUTE``); over it, every request from that address gets 429.
    - ``max_connections``: open connections at once (more are closed at once; ``FACTCHECK_MAX_CONNECTIONS``).
    - ``max_pending_per_address``: connections one client address may hold before it has shown a key
      (waiting for its headers, or sending the body of a request without one); its next one closes its
      oldest (``FACTCHECK_MAX_PENDING_PER_ADDRESS``).
    - ``header_timeout_s`` / ``body_timeout_s``: time a client has to send its request headers, and then
      its whole body (``FACTCHECK_HEADER_TIMEOUT_S``, ``FACTCHECK_BODY_TIMEOUT_S``); the body must also
      arrive at ``min_body_rate`` bytes a second or more after its first 2 s (``FACTCHECK_MIN_BODY_RATE``; 0 = off).
    - ``answer_cache_size``: whole answers kept in memory, keyed by the text exactly as sent, its
      date and the checker's settings, for ``answer_cache_ttl_s`` seconds (``FACTCHECK_ANSWER_CACHE_SIZE``; 0 = off).
    """

    api_keys: tuple[str, ...] = setting(
        (),
        env="FACTCHECK_API_KEYS",
        flag=None,  # none: a key on the command line is visible to every user of the machine (ps)
        help="Bearer keys a caller must present (comma-separated).",
    )
    feedback_keys: tuple[str, ...] = setting(
        (),
        env="FACTCHECK_FEEDBACK_KEYS",
        flag="--feedback-key",
        help="Key id (key-1, key-2: the place of the key in api_keys) whose callers may send corrections to "
        "POST /v1/feedback (repeatable; default: none, and the server takes no corrections).",
    )
    cors_origins: tuple[str, ...] = setting(
        (),
        env="FACTCHECK_CORS_ORIGINS",
        flag="--cors-origin",
        help="Origin allowed to read answers, e.g. chrome-extension://<id> (repeatable; adds to the variable's).",
    )
    max_text_chars: int = setting(
        20_000, minimum=1, env="FACTCHECK_MAX_TEXT_CHARS", help="Longest text accepted (413 above)."
    )
    rate_per_minute: float = setting(
        60.0, minimum=0, zero="off", env="FACTCHECK_RATE_PER_MINUTE", help="Requests per minute per caller; 0 = off."
    )
    rate_burst: int = setting(10, minimum=1, env="FACTCHECK_RATE_BURST", help="Requests a caller may send at once.")
    deadline_s: float = setting(
        30.0,
        minimum=0,
        min_open=True,
        unit="seconds",
        env="FACTCHECK_DEADLINE_S",
        flag="--deadline",
        help="Seconds per check; then what is done is answered, marked partial.",
    )
    profile: str | None = setting(
        None, env="FACTCHECK_PROFILE", help="Default agent profile ({names}); a request may name another."
    )
    config: str | None = setting(
        None, flag="--config", in_file=False, help="Settings file (the checkers' and this [server] table)."
    )
    deliberation: str | None = setting(
        None,
        env="FACTCHECK_DELIBERATION",
        help="Default deliberation policy ({names}); a request may name another.",
    )
    max_checkers: int = setting(
        8, minimum=1, env="FACTCHECK_MAX_CHECKERS", help="(profile, scorer, labels, deliberation) checkers kept built."
    )
    insecure_no_auth: bool = setting(
        False,
        env="FACTCHECK_INSECURE_NO_AUTH",
        help="Serve without API keys on a non-loopback address (anyone who reaches it spends your provider keys).",
    )
    max_claims: int = setting(
        50, minimum=1, env="FACTCHECK_SERVER_MAX_CLAIMS", help="Claims checked per request; the rest are left out."
    )
    claims_per_minute: float = setting(
        600.0, minimum=0, zero="off", env="FACTCHECK_CLAIMS_PER_MINUTE", help="Claims per minute per caller; 0 = off."
    )
    claims_burst: int = setting(100, minimum=1, env="FACTCHECK_CLAIMS_BURST", help="Claims a caller may send at once.")
    auth_failures_per_minute: float = setting(
        10.0,
        minimum=0,
        zero="off",
        env="FACTCHECK_AUTH_FAILURES_PER_MINUTE",
        help="Wrong keys per minute per client address (after a burst of 10).",
    )
    max_connections: int = setting(
        1000, minimum=1, env="FACTCHECK_MAX_CONNECTIONS", help="Open connections at once; more are closed."
    )
    header_timeout_s: float = setting(
        10.0,
        minimum=0,
        min_open=True,
        unit="seconds",
        env="FACTCHECK_HEADER_TIMEOUT_S",
        help="Seconds a connection has to send its request headers.",
    )
    body_timeout_s: float = setting(
        10.0,
        minimum=0,
        min_open=True,
        unit="seconds",
        env="FACTCHECK_BODY_TIMEOUT_S",
        help="Seconds a request has, after its headers, to send its whole body.",
    )
    min_body_rate: float = setting(
        1000.0,
        minimum=0,
        zero="off",
        env="FACTCHECK_MIN_BODY_RATE",
        help="Bytes a second a body must average after its first 2 s; 0 = off.",
    )
    max_pending_per_address: int = setting(
        64,
        minimum=1,
        env="FACTCHECK_MAX_PENDING_PER_ADDRESS",
        help="Connections one address may hold before it has shown a key.",
    )
    answer_cache_size: int = setting(
        10_000, minimum=0, zero="off", env="FACTCHECK_ANSWER_CACHE_SIZE", help="Whole answers kept in memory; 0 = off."
    )
    answer_cache_ttl_s: float = setting(
        600.0,
        minimum=0,
        min_open=True,
        unit="seconds",
        env="FACTCHECK_ANSWER_CACHE_TTL_S",
        help="Seconds a kept answer is served.",
    )
    extra_secrets: tuple[str, ...] = field(default=(), repr=False)  # not a setting: what the app adds itself

    def __post_init__(self) -> None:
        for origin in self.cors_origins:
            if origin != "*" and not _ORIGIN.match(origin):
                raise ConfigError(
                    f"CORS origin {origin!r} must look like https://host[:port], chrome-extension://<32-letter id> "
                    "or moz-extension://<uuid> (no path, no trailing slash)"
                )
        if any(not key or key != key.strip() or len(key) < 8 for key in self.api_keys):
            raise ConfigError("each API key must be at least 8 characters, without spaces around it")
        self._check_feedback_keys()
        check_fields(self)

    def _check_feedback_keys(self) -> None:
        """Each of ``feedback_keys`` is a key's id, never a key: ``key-N``, N at most the number of keys
        (when the keys are known: a settings file may name the ids of keys the environment holds)."""
        for name in self.feedback_keys:
            if not _KEY_ID.fullmatch(name):  # not echoed: it may be a key put there by mistake
                raise ConfigError(
                    "each feedback key must be a key's id, key-1 for the first of FACTCHECK_API_KEYS "
                    "(never the key itself)"
                )
            if self.api_keys and int(name.removeprefix("key-")) > len(self.api_keys):
                raise ConfigError(f"feedback key {name} names no key: there are {len(self.api_keys)} API keys")

    @property
    def auth(self) -> bool:
        """True when callers must present one of ``api_keys``."""
        return bool(self.api_keys)

    @property
    def max_body_bytes(self) -> int:
        """The largest request body read: the text at its worst JSON escaping plus fields. A character
        outside the Basic Multilingual Plane (an emoji) is one character but 12 bytes escaped (two ``\\uXXXX``)."""
        return 12 * self.max_text_chars + 16_384

    def check_exposure(self, host: str) -> None:
        """Refuse to serve without keys, or with guessable keys, on an address other machines can reach."""
        if is_loopback(host):
            return
        if not self.auth and not self.insecure_no_auth:
            raise ConfigError(
                f"refusing to listen on {host} without API keys: set FACTCHECK_API_KEYS, "
                "listen on 127.0.0.1, or pass --insecure-no-auth to accept every caller"
            )
        weak = [number for number, key in enumerate(self.api_keys, start=1) if is_weak_key(key)]
        if weak:
            raise ConfigError(
                f"refusing to listen on {host} with a guessable API key (key {', '.join(map(str, weak))} of "
                f"FACTCHECK_API_KEYS): use at least {STRONG_KEY_CHARS} characters with at least "
                f"{STRONG_KEY_DISTINCT} different ones (python -c 'import secrets; print(secrets.token_urlsafe(32))')"
            )

    def secrets(self, env: Mapping[str, str] | None = None) -> tuple[str, ...]:
        """Values no answer may contain: caller keys and every provider key in the environment."""
        return tuple(dict.fromkeys((*self.api_keys, *self.extra_secrets, *environment_secrets(env))))

    def to_json(self) -> str:
        """These settings as JSON (for worker processes; it holds the caller keys: keep it in memory)."""
        return json.dumps(asdict(self))

    @classmethod
    def from_json(cls, text: str) -> ServerSettings:
        """Settings written by :meth:`to_json`."""
        values: dict[str, Any] = {k: tuple(v) if isinstance(v, list) else v for k, v in json.loads(text).items()}
        return cls(**values)

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None, **overrides: Any) -> ServerSettings:
        """Settings from ``FACTCHECK_*`` variables, then ``overrides`` (``None`` values leave a setting alone)."""
        env = os.environ if env is None else env
        settings = cls(**env_values(cls, env))
        return replace(settings, **{k: v for k, v in overrides.items() if v is not None})

    @classmethod
    def load(
        cls, config: str | os.PathLike[str] | None = None, env: Mapping[str, str] | None = None, **flags: Any
    ) -> ServerSettings:
        """Settings from the ``[server]`` table of ``config`` (else ``./factcheck.toml`` if there is one),
        then the environment, then ``flags`` (``factcheck serve``'s; ``None`` leaves a setting alone).

        A list from the environment replaces the file's; a list flag (``--cors-origin``) adds to them.
        """
        from factcheck.config import CONFIG_FILE, read_config

        env = os.environ if env is None else env
        table = read_config(config).get("server", {})
        where = f"{os.fspath(config) if config else CONFIG_FILE}: [server]"
        if not isinstance(table, dict):
            raise ConfigError(f"{where} must be a table, got {type(table).__name__}")
        from_file = coerce_values(cls, table, where, file=True)
        try:
            cls(**from_file)  # range-checked on its own first, so an error names the file
        except ConfigError as exc:
            raise ConfigError(f"{where}: {exc}") from None
        values = {**from_file, **env_values(cls, env)}
        for item in declared(cls):
            given = flags.get(item.name)
            if given is None:
                continue
            if isinstance(given, tuple):
                earlier = values.get(item.name, ())
                given = (*earlier, *(value for value in given if value not in earlier))
            values[item.name] = given
        unknown = set(flags) - {item.name for item in declared(cls)}
        if unknown:
            raise TypeError(f"ServerSettings.load() got unknown settings {', '.join(sorted(unknown))}")
        return cls(**values, config=os.fspath(config) if config else None)
