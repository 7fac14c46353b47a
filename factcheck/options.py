"""Component options: every source, extractor, verifier, scorer and label rule is a
dataclass whose init fields are its options, configured the same way everywhere.

Options arrive as Python values (library) or strings (``--option key=value``,
environment variables, TOML); strings are coerced to the type of the field's
current value, so ``thresholds=0.33,0.67`` becomes ``(0.33, 0.67)``.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping
from typing import Any, Self

from factcheck.errors import ConfigError

_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off"}


def _coerce(name: str, value: Any, current: Any) -> Any:
    """``value`` as the type of ``current`` (the field's default or present value)."""
    if isinstance(value, str) and not isinstance(current, str):
        return _parse(name, value.strip(), current)
    if current is None or value is None:
        return value
    if isinstance(current, bool):
        ok = isinstance(value, bool)
    elif isinstance(current, int):
        ok = (isinstance(value, int) and not isinstance(value, bool)) or (
            isinstance(value, float) and value.is_integer()
        )
        value = int(value) if ok else value
    elif isinstance(current, float):
        ok = isinstance(value, int | float) and not isinstance(value, bool)
        value = float(value) if ok else value
    elif isinstance(current, tuple):
        ok = isinstance(value, list | tuple)
        value = tuple(value) if ok else value
    else:
        ok = isinstance(value, type(current))
    if not ok:
        raise ConfigError(f"option {name}: expected {type(current).__name__}, got {value!r}")
    return value


def _parse(name: str, text: str, current: Any) -> Any:
    try:
        if isinstance(current, bool):
            if text.lower() in _TRUE:
                return True
            if text.lower() in _FALSE:
                return False
            raise ValueError(f"expected true or false, got {text!r}")
        if isinstance(current, int):
            return int(text)
        if isinstance(current, float):
            return float(text)
        if isinstance(current, tuple):
            item_type = type(current[0]) if current else str
            return tuple(item_type(part.strip()) for part in text.split(",") if part.strip())
    except ValueError as exc:
        raise ConfigError(f"option {name}: {exc}") from None
    if text.lower() in {"none", "null"}:
        return None
    return text


def parse_option_pairs(pairs: Iterable[str]) -> dict[str, str]:
    """Turn ``["key=value", ...]`` (the CLI's ``--option``) into a dict."""
    options: dict[str, str] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key.strip():
            raise ConfigError(f"option {pair!r} must look like key=value")
        options[key.strip().replace("-", "_")] = value
    return options


class Configurable:
    """Mixin for dataclass components: ``options()`` and ``configure(**options)``."""

    name: str

    def options(self) -> dict[str, Any]:
        """The component's current options (its dataclass init fields)."""
        return {f.name: getattr(self, f.name) for f in dataclasses.fields(self) if f.init}  # type: ignore[arg-type]

    def configure(self, **options: Any) -> Self:
        """A copy of this component with the given options changed (strings are coerced).

        Raises ConfigError for an option the component does not have or a value
        it rejects.
        """
        if not options:
            return self
        current = self.options()
        unknown = sorted(set(options) - set(current))
        if unknown:
            known = ", ".join(sorted(current)) or "none"
            raise ConfigError(f"{self.name}: unknown option {', '.join(unknown)} (options: {known})")
        coerced = {key: _coerce(key, value, current[key]) for key, value in options.items()}
        try:
            return dataclasses.replace(self, **coerced)  # type: ignore[type-var]
        except (TypeError, ValueError) as exc:
            raise ConfigError(f"{self.name}: {exc}") from None


def merge_options(*layers: Mapping[str, Any] | None) -> dict[str, Any]:
    """Merge option mappings; later layers win."""
    merged: dict[str, Any] = {}
    for layer in layers:
        if layer:
            merged.update(layer)
    return merged
