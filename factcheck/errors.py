"""Errors raised by factcheck.

Every error the library raises on purpose derives from :class:`FactcheckError`,
so a caller can catch one type; the CLI prints those as a single line::

    FactcheckError
    ├── ConfigError              bad settings, profile or option
    │   └── UnknownComponentError  a source / verifier / scorer name nobody registered
    ├── InputError               the text or file handed in cannot be checked
    ├── PluginError              a plugin registered something unusable
    ├── SourceError              a source failed to retrieve evidence (its agent abstains)
    │   ├── MissingKeyError        a source needs an API key that is not set (its agent is skipped)
    │   ├── ServiceHTTPError       a service answered with an HTTP error (status and its own words)
    │   └── SourceRefusedError     a service refused a source for good (also a ServiceRefusedError)
    │       └── ServiceUnreachableError  its host cannot be reached
    ├── VerifierError            a verifier failed to judge (its agent abstains)
    ├── LLMError                 a model call failed or its answer was unusable
    │   └── LLMRefusedError        the model server refused for good (also a ServiceRefusedError)
    │       └── LLMUnreachableError  the model server cannot be reached
    ├── ServiceRefusedError      a service refused for a reason that lasts (bad key, unknown model):
    │                            the rest of the check stops asking it (with LLMError or SourceError)
    └── BudgetReachedError       a spending limit (--max-llm-calls, --max-cost) stopped a paid call before it was made
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any


class FactcheckError(Exception):
    """Base class of every error factcheck raises on purpose."""


class ConfigError(FactcheckError):
    """Settings, a profile or a component option is invalid."""


class UnknownComponentError(ConfigError):
    """A component name was asked for that no plugin registered."""

    def __init__(self, kind: str, name: str, available: Iterable[str]) -> None:
        self.kind = kind
        self.name = name
        self.available = sorted(available)
        choices = ", ".join(self.available) or "none"
        super().__init__(f"unknown {kind} {name!r} (available: {choices})")


class InputError(FactcheckError):
    """The text, file or JSON handed in cannot be processed."""


class PluginError(FactcheckError):
    """A plugin registered an object of the wrong type or a clashing name."""


class SourceError(FactcheckError):
    """A source could not retrieve evidence."""


class MissingKeyError(SourceError):
    """A source or model needs an API key that is not set: its agent is skipped, the check goes on.
    ``variable`` names the environment variable to set, where the raiser knows it."""

    def __init__(self, message: str, variable: str | None = None) -> None:
        super().__init__(message)
        self.variable = variable


class VerifierError(FactcheckError):
    """A verifier could not judge a claim."""


class LLMError(FactcheckError):
    """A call to a language model failed (time-out, HTTP error) or its answer was unusable (not JSON)."""


class ServiceRefusedError(FactcheckError):
    """A service refused in a way no retry within this check will fix: a rejected key, an unknown model.

    Raised together with :class:`LLMError` or :class:`SourceError` (``LLMRefusedError``,
    a source's own subclass). The pipeline stops asking agents that depend on the
    service for the rest of the check, so a misconfiguration is not paid for per claim.
    """


class BudgetReachedError(FactcheckError):
    """A spending limit was reached: the paid call was not made (see :class:`factcheck.usage.Spending`)."""


class LLMRefusedError(LLMError, ServiceRefusedError):
    """The model server refused the request for good (HTTP 401, 403, 404 or an unknown model)."""


class LLMUnreachableError(LLMRefusedError):
    """The model server could not be reached (connection refused, a failed DNS lookup, no connection in
    time): not retried, and not asked again for a minute (``factcheck.net.UNREACHABLE_TTL_S``)."""


class ServiceHTTPError(SourceError):
    """A service answered with an HTTP error that was not retried (or still failed after retries).

    ``status`` is the HTTP status, ``message`` the server's own words (at most
    :data:`factcheck.net.MESSAGE_CHARS` characters), ``content_type`` its media type and ``body``
    its JSON (``None`` when it sent none), so a source can recognise a particular refusal.
    """

    def __init__(self, service: str, status: int, message: str, content_type: str, body: Any = None) -> None:
        super().__init__(f"{service}: HTTP {status}: {message}".rstrip(": "))
        self.status = status
        self.message = message
        self.content_type = content_type
        self.body = body  # the answer's JSON, or None: a source that reads its API's error objects itself


class SourceRefusedError(SourceError, ServiceRefusedError):
    """A service refused a source for a reason that lasts (a rejected key, a refused User-Agent):
    asking again in this check would be refused the same way."""


class ServiceUnreachableError(SourceRefusedError):
    """A service's host could not be reached (connection refused, a failed DNS lookup, no connection in
    time). A refusal that lasts for this check: its agent abstains with it and is not asked again."""
