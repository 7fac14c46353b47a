"""What a dataset is, and what reads one: the types the plugin registry knows datasets by.

A reader is a :class:`DatasetReader`: a name and a function ``read(data_dir, **options) -> Dataset``,
registered through the ``register_datasets`` hook. The loader and the helpers every reader shares
are in :mod:`factcheck.eval.datasets.core`.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from factcheck.errors import ConfigError
from factcheck.options import coerce_option
from factcheck.types import Evidence, Label


@dataclass(frozen=True)
class GoldClaim:
    """One claim of a dataset text: its gold label (TRUE / FALSE) and gold evidence, where known."""

    text: str
    label: Label | None = None
    evidence: tuple[Evidence, ...] = ()


@dataclass(frozen=True)
class EvalItem:
    """One text to check, with its gold label and the dataset's claims."""

    id: str
    text: str
    gold: Label
    claims: tuple[GoldClaim, ...]
    meta: Mapping[str, Any] = field(default_factory=dict)
    as_of: str | None = None  # when the claim was made (ISO 8601), where the dataset says: it is checked as of then


@dataclass(frozen=True)
class Dataset:
    """A labelled evaluation set: ``levels`` is 2 (TRUE / FALSE) or 3 (with PARTLY TRUE)."""

    name: str
    levels: int
    items: tuple[EvalItem, ...]
    has_evidence: bool
    description: str

    @property
    def labels(self) -> tuple[Label, ...]:
        """The gold classes, in report order."""
        if self.levels == 2:
            return (Label.TRUE, Label.FALSE)
        return (Label.TRUE, Label.PARTLY_TRUE, Label.FALSE)


Reader = Callable[..., Dataset]

# What a wrong option value was expected to be, in the words the readers' errors always used.
_EXPECTED = {bool: "true or false", int: "an integer", float: "a number"}


@dataclass(frozen=True)
class DatasetReader:
    """A dataset ``name`` and the function reading it, ``read(data_dir, **options) -> Dataset``.

    The options are ``read``'s keyword parameters after ``data_dir``; strings (from
    ``--dataset-option``) become the default's type. A ``read`` taking ``**options``
    checks them itself. Register one through the ``register_datasets`` hook.
    """

    name: str
    read: Reader

    def options(self) -> dict[str, Any]:
        """The reader's options and their defaults (``inspect.Parameter.empty`` where it has none)."""
        parameters = dict(inspect.signature(self.read).parameters)
        parameters.pop("data_dir", None)
        return {key: p.default for key, p in parameters.items() if p.kind is not inspect.Parameter.VAR_KEYWORD}

    def load(self, data_dir: Path, **options: Any) -> Dataset:
        """Read the dataset from ``data_dir`` with ``options`` checked and coerced."""
        return self.read(Path(data_dir), **self._checked(options))

    def _checked(self, options: Mapping[str, Any]) -> dict[str, Any]:
        takes_any = any(
            p.kind is inspect.Parameter.VAR_KEYWORD for p in inspect.signature(self.read).parameters.values()
        )
        if takes_any:
            return dict(options)
        defaults = self.options()
        unknown = sorted(set(options) - set(defaults))
        if unknown:
            known = ", ".join(defaults) or "none"
            raise ConfigError(f"dataset {self.name!r}: unknown option {', '.join(unknown)} (options: {known})")
        checked = {}
        for key, value in options.items():
            default = defaults[key]
            if default is inspect.Parameter.empty:
                checked[key] = value
                continue
            try:
                checked[key] = coerce_option(key, value, default)  # the one coercion every component's options get
            except ConfigError:
                expected = _EXPECTED.get(type(default), type(default).__name__)
                raise ConfigError(f"dataset {self.name!r}: option {key} must be {expected}, got {value!r}") from None
        return checked
