"""What the HTTP server is configured with: caller keys, allowed origins and limits.

Read from ``FACTCHECK_*`` environment variables, then overridden by
``factcheck serve`` flags. The checkers themselves are configured as
everywhere else (``factcheck.toml``, provider keys in the environment); these
settings only decide who may call the server and how much.
"""

from __future__ import annotations

import ipaddress
import json
import math
import os
import re
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field, replace
from typing import Any

from factcheck.errors import ConfigError

# An extension's origin is its scheme and id; a web origin is scheme, host and optional port, no path.
_ORIGIN = re.compile(r"^(?:https?://[^/\s]+|chrome-extension://[a-p]{32}|moz-extension://[0-9a-fA-F-]{36})$")


def _split(value: str | None) -> tuple[str, ...]:
    return tuple(part.strip() for part in (value or "").split(",") if part.strip())


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
    - ``cors_origins``: origins whose pages may read the answers (``FACTCHECK_CORS_ORIGINS``),
      e.g. ``chrome-extension://<id>``; ``*`` allows any.
    - ``max_text_chars``: longer texts get 413 (``FACTCHECK_MAX_TEXT_CHARS``).
    - ``rate_per_minute`` / ``rate_burst``: each caller's token bucket (``FACTCHECK_RATE_PER_MINUTE``,
      ``FACTCHECK_RATE_BURST``); a rate of 0 turns limiting off.
    - ``deadline_s``: a check still running then returns what is done, marked partial (``FACTCHECK_DEADLINE_S``).
    - ``profile`` / ``config``: the default profile and the ``factcheck.toml`` checkers are built from.
    - ``max_checkers``: how many (profile, scorer, labels) checkers are kept built.
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

    api_keys: tuple[str, ...] = ()
    cors_origins: tuple[str, ...] = ()
    max_text_chars: int = 20_000
    rate_per_minute: float = 60.0
    rate_burst: int = 10
    deadline_s: float = 30.0
    profile: str | None = None
    config: str | None = None
    max_checkers: int = 8
    insecure_no_auth: bool = False
    max_claims: int = 50
    claims_per_minute: float = 600.0
    claims_burst: int = 100
    auth_failures_per_minute: float = 10.0
    max_connections: int = 1000
    header_timeout_s: float = 10.0
    body_timeout_s: float = 10.0
    min_body_rate: float = 1000.0
    max_pending_per_address: int = 64
    answer_cache_size: int = 10_000
    answer_cache_ttl_s: float = 600.0
    extra_secrets: tuple[str, ...] = field(default=(), repr=False)

    def __post_init__(self) -> None:
        for origin in self.cors_origins:
            if origin != "*" and not _ORIGIN.match(origin):
                raise ConfigError(
                    f"CORS origin {origin!r} must look like https://host[:port], chrome-extension://<32-letter id> "
                    "or moz-extension://<uuid> (no path, no trailing slash)"
                )
        if any(not key or key != key.strip() or len(key) < 8 for key in self.api_keys):
            raise ConfigError("each API key must be at least 8 characters, without spaces around it")
        if not isinstance(self.max_text_chars, int) or self.max_text_chars < 1:
            raise ConfigError(f"max_text_chars must be a whole number of at least 1, got {self.max_text_chars!r}")
        if not 0 <= self.rate_per_minute < math.inf or self.rate_burst < 1:
            raise ConfigError("rate_per_minute must be 0 (off) or positive, and rate_burst at least 1")
        if not 0 < self.deadline_s < math.inf:
            raise ConfigError(f"deadline_s must be a positive number of seconds, got {self.deadline_s!r}")
        if self.max_checkers < 1:
            raise ConfigError(f"max_checkers must be at least 1, got {self.max_checkers!r}")
        for name in ("max_claims", "claims_burst", "max_connections", "max_pending_per_address"):
            if not isinstance(getattr(self, name), int) or getattr(self, name) < 1:
                raise ConfigError(f"{name} must be a whole number of at least 1, got {getattr(self, name)!r}")
        for name in ("claims_per_minute", "auth_failures_per_minute", "answer_cache_size", "min_body_rate"):
            if not 0 <= getattr(self, name) < math.inf:
                raise ConfigError(f"{name} must be 0 (off) or positive, got {getattr(self, name)!r}")
        for name in ("header_timeout_s", "body_timeout_s", "answer_cache_ttl_s"):
            if not 0 < getattr(self, name) < math.inf:
                raise ConfigError(f"{name} must be a positive number of seconds, got {getattr(self, name)!r}")

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
        env = os.environ if env is None else env
        provider = (
            value
            for name, value in env.items()
            if value
            and re.search(r"(^|_)(API_KEY|KEY|TOKEN|SECRET|PASSWORD)S?$", name.upper())
            and name.upper() not in {"FACTCHECK_API_KEYS"}
        )
        return tuple(dict.fromkeys((*self.api_keys, *self.extra_secrets, *provider)))

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
        values: dict[str, Any] = {
            "api_keys": _split(env.get("FACTCHECK_API_KEYS")),
            "cors_origins": _split(env.get("FACTCHECK_CORS_ORIGINS")),
        }
        numbers = {
            "max_text_chars": ("FACTCHECK_MAX_TEXT_CHARS", int),
            "rate_per_minute": ("FACTCHECK_RATE_PER_MINUTE", float),
            "rate_burst": ("FACTCHECK_RATE_BURST", int),
            "deadline_s": ("FACTCHECK_DEADLINE_S", float),
            "max_claims": ("FACTCHECK_SERVER_MAX_CLAIMS", int),
            "claims_per_minute": ("FACTCHECK_CLAIMS_PER_MINUTE", float),
            "claims_burst": ("FACTCHECK_CLAIMS_BURST", int),
            "auth_failures_per_minute": ("FACTCHECK_AUTH_FAILURES_PER_MINUTE", float),
            "max_connections": ("FACTCHECK_MAX_CONNECTIONS", int),
            "header_timeout_s": ("FACTCHECK_HEADER_TIMEOUT_S", float),
            "body_timeout_s": ("FACTCHECK_BODY_TIMEOUT_S", float),
            "min_body_rate": ("FACTCHECK_MIN_BODY_RATE", float),
            "max_pending_per_address": ("FACTCHECK_MAX_PENDING_PER_ADDRESS", int),
            "answer_cache_size": ("FACTCHECK_ANSWER_CACHE_SIZE", int),
        }
        for key, (variable, kind) in numbers.items():
            if env.get(variable):
                try:
                    values[key] = kind(env[variable])
                except ValueError:
                    raise ConfigError(f"{variable} must be a number, got {env[variable]!r}") from None
        settings = cls(**values)
        return replace(settings, **{k: v for k, v in overrides.items() if v is not None})
