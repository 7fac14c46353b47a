"""Keeping secrets out of what is shown: :func:`redact` takes an API key out of a message.

Error bodies are quoted in errors, and some servers echo the key they were sent (SerpAPI's key
travels in the query string), so every message that may hold one is redacted before it is raised,
logged or answered (the web-search sources, the server's error answers).
"""

from __future__ import annotations

import logging
import re
from urllib.parse import quote, quote_plus

REDACTED = "[redacted]"
# A message cut short (the HTTP layer keeps 200 characters of an error body) may end in
# part of an echoed key; a tail this long or longer that starts the key is redacted too.
MIN_KEY_FRAGMENT = 4


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
