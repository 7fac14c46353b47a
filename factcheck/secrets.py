"""Secrets: looking them up, and keeping them out of what is shown.

Settings travel as data (:func:`factcheck.load_settings`, ``factcheck serve``'s settings); a secret
does not. A component finds its key in the environment variable its options name (``api_key_env``),
when it needs it, through :func:`secret`: the one place a component reads the environment.
:func:`environment_secrets` lists every provider key there, for the server to scrub from its answers.

Error bodies are quoted in errors, and some servers echo the key they were sent (SerpAPI's key
travels in the query string), so every message that may hold one is redacted before it is raised,
logged or answered (the web-search sources, the server's error answers): :func:`redact`.
"""

from __future__ import annotations

import logging
import os
import re
from collections.abc import Mapping
from urllib.parse import quote, quote_plus

REDACTED = "[redacted]"
# A message cut short (the HTTP layer keeps 200 characters of an error body) may end in
# part of an echoed key; a tail this long or longer that starts the key is redacted too.
MIN_KEY_FRAGMENT = 4
# The variables whose values are secrets: a provider's key, token or password, by the name's ending.
_SECRET_NAME = re.compile(r"(^|_)(API_KEY|KEY|TOKEN|SECRET|PASSWORD)S?$")
# Named like secrets, and no secret: the server's caller keys (scrubbed as such) and key ids.
_NOT_PROVIDER_KEYS = frozenset({"FACTCHECK_API_KEYS", "FACTCHECK_FEEDBACK_KEYS"})


def secret(variable: str) -> str:
    """The value of the environment variable ``variable`` ("" when unset), read when a component needs it.

    The one way a component reads the environment: for what an operator keeps out of settings files,
    an API key (the variable its ``api_key_env`` option names) or the contact a Wikipedia User-Agent
    carries (``FACTCHECK_WIKIPEDIA_USER_AGENT``). Everything else is a setting, passed down as data.
    """
    return os.environ.get(variable, "")


def environment_secrets(env: Mapping[str, str] | None = None) -> tuple[str, ...]:
    """The value of every provider key, token or password in ``env`` (default: the environment)."""
    env = os.environ if env is None else env
    return tuple(
        value
        for name, value in env.items()
        if value and _SECRET_NAME.search(name.upper()) and name.upper() not in _NOT_PROVIDER_KEYS
    )


def redact(message: str, secret: str) -> str:
    """``message`` with ``secret`` (plain or URL-encoded) replaced, including a fragment of it
    left at the end of a message that was cut short."""
    if len(secret) < 2 * MIN_KEY_FRAGMENT:
        return message  # not a real key; replacing it would mangle ordinary words
    for form in {secret, quote(secret, safe=""), quote_plus(secret)}:
        message = message.replace(form, REDACTED)
    for n in range(len(secret) - 1, MIN_KEY_FRAGMENT - 1, -1):
        if message.endswith(secret[:n]):
            return message[:-n] + REDACTED
    return message


# Query parameters that carry a key (SerpAPI's ``api_key``) in a URL that httpx logs at INFO.
_KEY_PARAMETER = re.compile(r"(?i)([?&](?:api_key|apikey|key|access_token|token)=)[^&\s\"']+")


class KeysOutOfLogs(logging.Filter):
    """Rewrites a log record so that no key in a URL's query string reaches a log (httpx logs each request,
    full URL included, at INFO: the level ``factcheck serve`` logs at)."""

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        cleaned = _KEY_PARAMETER.sub(rf"\1{REDACTED}", message)
        if cleaned != message:
            record.msg, record.args = cleaned, ()
        return True


def keep_keys_out_of_logs(*loggers: str) -> None:
    """Add :class:`KeysOutOfLogs` to each named logger, once."""
    for name in loggers:
        target = logging.getLogger(name)
        if not any(isinstance(f, KeysOutOfLogs) for f in target.filters):
            target.addFilter(KeysOutOfLogs())
