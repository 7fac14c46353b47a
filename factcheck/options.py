"""Options and settings: declared once, as dataclass fields, and read the same way everywhere.

Component options: every source, extractor, verifier, scorer and label rule is a
dataclass whose init fields are its options, configured the same way everywhere.
Options arrive as Python values (library) or strings (``--option key=value``,
environment variables, TOML); strings are coerced to the type of the field's
current value, so ``thresholds=0.33,0.67`` becomes ``(0.33, 0.67)``.

Settings sections (``[pipeline]``, ``[cache]``, ``[llm]``, ``[server]``): each is a
frozen dataclass whose fields are declared with :func:`setting`, a default plus a
:class:`Constraint` (bounds, choices, help, environment variable, flag). From that
one declaration :func:`coerce_section` reads a TOML table or flag values,
:func:`env_values` reads the environment, :func:`check_fields` range-checks (from
``__post_init__``) and ``factcheck serve`` builds its flags. A component's field
declared with :func:`setting` is range-checked the same way by
:meth:`Configurable.configure`.
"""

from __future__ import annotations

import dataclasses
import functools
import math
import os
import types
import typing
from collections.abc import Callable, Iterable, Mapping
from typing import Any, Self, TypeVar

from factcheck.errors import ConfigError

T = TypeVar("T")

_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off"}


def coerce_option(name: str, value: Any, current: Any) -> Any:
    """``value`` as the type of ``current`` (the option's default or present value).

    The one coercion of component and dataset options: a string is parsed
    (``"3"``, ``"yes"``, ``"0.33,0.67"``), a whole float becomes an int, a list a
    tuple; anything else of the wrong type is a ConfigError naming ``name``.
    """
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
    """Mixin for dataclass components: ``options()`` and ``configure(**options)``.

    A field declared with :func:`setting` is range-checked when the component is
    built and when it is configured (a subclass with its own ``__post_init__``
    calls ``super().__post_init__()`` to keep that).
    """

    name: str

    def __post_init__(self) -> None:
        check_fields(self, getattr(self, "name", type(self).__name__))

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
        coerced = {key: coerce_option(key, value, current[key]) for key, value in options.items()}
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


# --- declared settings ---

CONSTRAINT = "factcheck.constraint"  # the field-metadata key a declaration lives under
MISSING: Any = dataclasses.MISSING


@dataclasses.dataclass(frozen=True)
class Constraint:
    """What one setting accepts and what it is called outside Python.

    ``minimum`` / ``maximum`` bound a number (``min_open`` / ``max_open``: the bound
    itself is refused); a bounded number is also finite. ``choices`` lists the
    accepted strings. ``zero`` names what 0 means ("off"), for messages and help.
    ``label`` is the name in messages (default: the field's). ``env`` names the
    environment variables that set it (later ones win), ``flag`` its command-line
    flag (``""``: ``--field-name``; ``None``: none); ``in_file`` is false for a setting a settings file may not set.
    """

    minimum: float | None = None
    maximum: float | None = None
    min_open: bool = False
    max_open: bool = False
    choices: tuple[str, ...] = ()
    unit: str = ""
    zero: str = ""
    label: str = ""
    help: str = ""
    env: tuple[str, ...] = ()
    flag: str | None = ""
    in_file: bool = True
    table: str = ""

    def bounds_text(self) -> str:
        """The bounds in words: ``of at least 1``, ``in (0, 1]``, ``positive``."""
        low, high = self.minimum, self.maximum
        if low is not None and high is not None:
            return f"in {'(' if self.min_open else '['}{low:g}, {high:g}{')' if self.max_open else ']'}"
        if low is not None:
            if low == 0 and self.min_open:
                return "positive"
            return f"{'above' if self.min_open else 'of at least'} {low:g}"
        if high is not None:
            return f"{'below' if self.max_open else 'of at most'} {high:g}"
        return ""

    def allows(self, number: float) -> bool:
        """True when ``number`` is inside the bounds (NaN never is; infinity only without bounds)."""
        if math.isnan(number):
            return False
        if self.minimum is None and self.maximum is None:
            return True
        if math.isinf(number):
            return False
        low_ok = self.minimum is None or (number > self.minimum if self.min_open else number >= self.minimum)
        high_ok = self.maximum is None or (number < self.maximum if self.max_open else number <= self.maximum)
        return low_ok and high_ok


def setting(
    default: Any = MISSING,
    *,
    default_factory: Callable[[], Any] | None = None,
    env: str | tuple[str, ...] = (),
    **constraint: Any,
) -> Any:
    """A dataclass field with its :class:`Constraint`: ``max_claims: int = setting(50, minimum=1, env="X")``."""
    declared = Constraint(env=(env,) if isinstance(env, str) else tuple(env), **constraint)
    metadata = {CONSTRAINT: declared}
    if default_factory is not None:
        return dataclasses.field(default_factory=default_factory, metadata=metadata)
    return dataclasses.field(default=default, metadata=metadata)


@dataclasses.dataclass(frozen=True)
class Declared:
    """One declared setting of a section: its field name, resolved type, default and constraint."""

    name: str
    kind: Any
    default: Any
    constraint: Constraint

    @property
    def label(self) -> str:
        """The name messages use."""
        return self.constraint.label or self.name

    @property
    def base(self) -> Any:
        """The type without ``| None``."""
        args = typing.get_args(self.kind)
        if _is_union(self.kind) and type(None) in args:
            rest = [a for a in args if a is not type(None)]
            return rest[0] if len(rest) == 1 else Any
        return self.kind

    @property
    def optional(self) -> bool:
        """True when ``None`` is a value of the setting."""
        return _is_union(self.kind) and type(None) in typing.get_args(self.kind)

    def requirement(self) -> str:
        """What the setting accepts, in words: ``a whole number of at least 1``."""
        c, base = self.constraint, self.base
        if c.choices:
            return f"one of {', '.join(c.choices)}"
        if base in (int, float):
            word = "whole number" if base is int else "number"
            bounds = c.bounds_text()
            if bounds == "positive":
                text = f"a positive {word}"
            elif c.zero and c.minimum == 0 and not c.min_open and c.maximum is None:
                text = f"0 ({c.zero}) or a positive {word}"
            else:
                text = f"a {word} {bounds}".rstrip()
            return f"{text} of {c.unit}" if c.unit else text
        return _type_word(base)


def _is_union(kind: Any) -> bool:
    return typing.get_origin(kind) in (typing.Union, types.UnionType)


def _type_word(kind: Any) -> str:
    if kind is bool:
        return "true or false"
    if kind is int:
        return "a whole number"
    if kind is float:
        return "a number"
    if kind is str:
        return "a string"
    if typing.get_origin(kind) is tuple:
        return "a list (or a comma-separated string)"
    if typing.get_origin(kind) is Mapping or kind is Mapping:
        return "a table"
    return getattr(kind, "__name__", str(kind))


_DECLARED: dict[type, tuple[Declared, ...]] = {}


def declared(cls: type) -> tuple[Declared, ...]:
    """The settings of dataclass ``cls`` declared with :func:`setting`, in field order."""
    if cls not in _DECLARED:
        fields = [f for f in dataclasses.fields(cls) if CONSTRAINT in f.metadata]
        _DECLARED[cls] = tuple(
            Declared(
                f.name,
                _field_type(cls, f.name),
                f.default_factory() if f.default_factory is not dataclasses.MISSING else f.default,
                f.metadata[CONSTRAINT],
            )
            for f in fields
        )
    return _DECLARED[cls]


def _field_type(cls: type, name: str) -> Any:
    """The resolved type of field ``name``, read on the class that declares it. A subclass (a plugin's
    component built on a built-in one) may annotate fields of its own with names imported for type
    checkers only: resolving the whole subclass would fail on them, so they are never read."""
    owner = next(c for c in cls.__mro__ if name in vars(c).get("__annotations__", {}))
    return _hints(owner)[name]


@functools.cache
def _hints(owner: type) -> dict[str, Any]:
    return typing.get_type_hints(owner)


def _prefix(where: str) -> str:
    return f"{where}: " if where else ""


def reject_unknown(given: Iterable[str], known: Iterable[str], where: str = "", what: str = "setting") -> None:
    """ConfigError naming the keys of ``given`` not in ``known``, and the known ones."""
    known = sorted(set(known))
    unknown = sorted(set(given) - set(known))
    if unknown:
        raise ConfigError(f"{_prefix(where)}unknown {what} {', '.join(unknown)} (known: {', '.join(known) or 'none'})")


def coerce_value(item: Declared, value: Any, where: str = "", label: str = "") -> Any:
    """``value`` (a string from a flag or variable, or a TOML value) as the setting's type.

    Only the type is checked here; bounds and choices are :func:`check_fields`' (the
    dataclass's ``__post_init__``), so a value set from Python is checked the same way.
    """
    label = label or item.label
    if value is None or (item.optional and isinstance(value, str) and value.strip().lower() in {"none", "null"}):
        return None
    base = item.base
    try:
        if base is bool:
            if isinstance(value, str):
                return _parse_bool(value)
            if isinstance(value, bool) or value in (0, 1):
                return bool(value)
        elif base is int:
            if isinstance(value, str):
                return int(value.strip())
            if isinstance(value, float) and value.is_integer():
                return int(value)
            if isinstance(value, int) and not isinstance(value, bool):
                return value
        elif base is float:
            if isinstance(value, str):
                return float(value.strip())
            if isinstance(value, int | float) and not isinstance(value, bool):
                return float(value)
        elif base is str:
            if isinstance(value, str | os.PathLike):
                return os.fspath(value)
        elif typing.get_origin(base) is tuple:
            parts = value.split(",") if isinstance(value, str) else value
            if isinstance(parts, list | tuple):
                return tuple(str(p).strip() for p in parts if str(p).strip())
        elif typing.get_origin(base) is Mapping:
            if isinstance(value, Mapping):
                return value
        else:
            return value  # a type this module does not know: the dataclass checks it
    except ValueError:
        pass
    raise ConfigError(f"{_prefix(where)}{label} must be {_type_word(base)}, got {value!r}")


def _parse_bool(text: str) -> bool:
    if text.strip().lower() in _TRUE:
        return True
    if text.strip().lower() in _FALSE:
        return False
    raise ValueError(text)


def coerce_values(
    cls: type, mapping: Mapping[str, Any], where: str = "", what: str = "setting", *, file: bool = False
) -> dict[str, Any]:
    """The declared settings of ``cls`` in ``mapping``, coerced to their types; unknown keys are a
    ConfigError listing the known ones. ``file``: keys a settings file may not set are unknown."""
    items = {d.name: d for d in declared(cls) if d.constraint.in_file or not file}
    reject_unknown(mapping, items, where, what)
    return {key: coerce_value(items[key], value, where) for key, value in mapping.items()}


def coerce_section(cls: type[T], mapping: Mapping[str, Any] | None = None, where: str | None = None) -> T:
    """An instance of section ``cls`` from a TOML table, flags or keyword values.

    Strings and TOML values are coerced to the declared field types; unknown keys,
    wrong types and values outside the declared bounds or choices are ConfigErrors
    prefixed with ``where`` (default: the section's ``SECTION``, e.g. ``[llm]``).
    """
    where = getattr(cls, "SECTION", "") if where is None else where
    return cls(**coerce_values(cls, mapping or {}, where))


def env_values(cls: type, env: Mapping[str, str], where: str = "") -> dict[str, Any]:
    """The declared settings of ``cls`` that ``env`` sets (empty variables are not set), coerced
    to their types; a value that does not parse is a ConfigError naming its variable."""
    values: dict[str, Any] = {}
    for item in declared(cls):
        for variable in item.constraint.env:
            if env.get(variable, "").strip():
                values[item.name] = coerce_value(item, env[variable], where, label=variable)
    return values


def check_fields(obj: Any, where: str | None = None) -> None:
    """Range-check the declared fields of dataclass instance ``obj`` (call it from ``__post_init__``).

    ``where`` prefixes the message (default: the class's ``SECTION``). A field that
    is ``None`` where the type allows it is not checked; choices are named as
    ``unknown profile 'x' (available: ...)``, other failures as ``max_claims must be
    a whole number of at least 1, got 0``.
    """
    where = getattr(obj, "SECTION", "") if where is None else where
    for item in declared(type(obj)):
        value = getattr(obj, item.name)
        if value is None and item.optional:
            continue
        c, base = item.constraint, item.base
        if c.choices:
            if value not in c.choices:
                raise ConfigError(f"{_prefix(where)}unknown {item.label} {value!r} (available: {', '.join(c.choices)})")
            continue
        if base is bool:
            ok = isinstance(value, bool)
        elif base is int:
            ok = isinstance(value, int) and not isinstance(value, bool) and c.allows(value)
        elif base is float:
            ok = isinstance(value, int | float) and not isinstance(value, bool) and c.allows(value)
        elif base is str:
            ok = isinstance(value, str)
        else:
            continue  # tuples, tables, objects: coerced on the way in, checked by the class itself
        if not ok:
            raise ConfigError(f"{_prefix(where)}{item.label} must be {item.requirement()}, got {value!r}")
