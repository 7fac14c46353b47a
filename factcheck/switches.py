"""The process's own switches, read from the environment in this one place.

They are not settings of a check (:class:`factcheck.Settings`): they say how this process reports
failures and which plugins it loads, for debugging.

- ``FACTCHECK_RAISE_ERRORS=1`` (``true``, ``yes``, ``on``): raise with a traceback instead of an
  agent abstaining or the CLI printing one line;
- ``FACTCHECK_TRACE_PLUGINS=1``: write each hook call to standard error;
- ``FACTCHECK_LOAD_PLUGINS=a,b`` / ``FACTCHECK_DISABLED_PLUGINS=a``: the entry points loaded.

A front door reads them as it starts: each CLI command (:func:`switched`, for the command) and the
plugin registry as it loads (:func:`read_switches`); otherwise they are read once, when first needed.
The code below asks :func:`switches`, never the environment.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass

RAISE_ERRORS = "FACTCHECK_RAISE_ERRORS"
TRACE_PLUGINS = "FACTCHECK_TRACE_PLUGINS"
LOAD_PLUGINS = "FACTCHECK_LOAD_PLUGINS"
DISABLED_PLUGINS = "FACTCHECK_DISABLED_PLUGINS"


def _names(value: str | None) -> frozenset[str] | None:
    """A comma list of names; ``None`` for a variable not set (set but empty: no names)."""
    if value is None:
        return None
    return frozenset(part.strip() for part in value.split(",") if part.strip())


@dataclass(frozen=True)
class Switches:
    """The debugging and plugin-loading switches of this process."""

    raise_errors: bool = False
    trace_plugins: bool = False
    load_plugins: frozenset[str] | None = None  # None: every installed plugin
    disabled_plugins: frozenset[str] = frozenset()

    @classmethod
    def from_env(cls, env: Mapping[str, str]) -> Switches:
        """The switches ``env`` sets."""
        return cls(
            raise_errors=env.get(RAISE_ERRORS, "").strip().lower() in {"1", "true", "yes", "on"},
            trace_plugins=env.get(TRACE_PLUGINS, "").strip().lower() not in ("", "0", "false", "no", "off"),
            load_plugins=_names(env.get(LOAD_PLUGINS)),
            disabled_plugins=_names(env.get(DISABLED_PLUGINS)) or frozenset(),
        )


_lock = threading.Lock()
_switches: Switches | None = None


def read_switches(env: Mapping[str, str] | None = None) -> Switches:
    """Read the switches from ``env`` (default: the process environment); they are in force from now on."""
    global _switches
    read = Switches.from_env(os.environ if env is None else env)
    with _lock:
        _switches = read
    return read


def switches() -> Switches:
    """The switches in force: those the last front door read, else the environment's, read now."""
    current = _switches
    return current if current is not None else read_switches()


def raise_errors_requested() -> bool:
    """``FACTCHECK_RAISE_ERRORS`` is on: show tracebacks, raise instead of abstaining."""
    return switches().raise_errors


@contextmanager
def switched(env: Mapping[str, str] | None = None) -> Iterator[Switches]:
    """The switches of ``env`` (default: the process environment) in force for the block, then those before."""
    global _switches
    before = _switches
    try:
        yield read_switches(env)
    finally:
        with _lock:
            _switches = before
