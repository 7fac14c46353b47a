"""The core of the dataset readers: the types, the loader and what every reader shares.

A reader is a :class:`DatasetReader`: a name and a function ``read(data_dir,
**options) -> Dataset``, registered through the ``register_datasets`` plugin
hook like any source or verifier (the built-in ones by the family modules
beside this one). ``load_dataset`` looks the name up in the plugin registry and
coerces the options with :mod:`factcheck.options`, as every component's are.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, MutableMapping
from pathlib import Path
from typing import Any

from factcheck.errors import ConfigError, InputError
from factcheck.jsonl import read_records
from factcheck.paths import SHARED_DATA_ENV
from factcheck.plugin import Dataset, DatasetReader, EvalItem, GoldClaim, hookimpl
from factcheck.plugin.dataset import Reader
from factcheck.types import Evidence, Label


def register_readers(*readers: DatasetReader) -> Callable[[Callable[[Any], None]], None]:
    """A ``register_datasets`` hook implementation registering ``readers``: all a module of readers needs,
    ``register_datasets = register_readers(DatasetReader("name", read_name), ...)``."""

    @hookimpl
    def register_datasets(register: Callable[[Any], None]) -> None:
        for reader in readers:
            register(reader)

    return register_datasets


def load_dataset(name: str, data_dir: Path, **options: Any) -> Dataset:
    """Read dataset ``name`` from ``data_dir`` (``../shared/data``); options go to its reader.

    The name is looked up among the readers plugins registered (ConfigError lists them).
    """
    from factcheck.registry import get_registry

    found: DatasetReader = get_registry().get("datasets", name)
    return found.load(data_dir, **options)


class _ReaderTable(MutableMapping[str, Reader]):
    """``READERS``, kept for older callers: each registered reader's function by name, read live from the
    plugin registry. Setting a name registers that function through the ``register_datasets`` hook for
    this process, as a plugin would; deleting a name takes back only what was set here."""

    _PREFIX = "factcheck-readers-"

    def _readers(self) -> dict[str, DatasetReader]:
        from factcheck.registry import get_registry

        return get_registry().components["datasets"]

    def __getitem__(self, name: str) -> Reader:
        return self._readers()[name].read

    def __iter__(self) -> Iterator[str]:
        return iter(list(self._readers()))

    def __len__(self) -> int:
        return len(self._readers())

    def __setitem__(self, name: str, read: Reader) -> None:
        from factcheck.registry import get_plugin_manager, reset_plugins

        if get_plugin_manager().has_plugin(self._PREFIX + name):
            del self[name]  # set twice: the later function wins, as in a dict
        get_plugin_manager().register(_OneReader(DatasetReader(name, read)), name=self._PREFIX + name)
        reset_plugins()

    def __delitem__(self, name: str) -> None:
        from factcheck.registry import get_plugin_manager, reset_plugins

        if not get_plugin_manager().has_plugin(self._PREFIX + name):
            raise KeyError(name)  # a reader a plugin registered is the plugin's to take back
        get_plugin_manager().unregister(name=self._PREFIX + name)
        reset_plugins()


class _OneReader:
    """The plugin ``READERS[name] = read`` registers."""

    def __init__(self, reader: DatasetReader) -> None:
        self.reader = reader

    @hookimpl
    def register_datasets(self, register: Callable[[Any], None]) -> None:
        register(self.reader)


READERS: MutableMapping[str, Reader] = _ReaderTable()


# --- what the readers share ----------------------------------------------------------------------------------------

GOLD = "gold"  # Evidence.source of every gold passage, so reports can tell it from retrieved evidence
WIKIPEDIA = "https://en.wikipedia.org/wiki/"
DATA_HINT = f"give it with --data-dir or {SHARED_DATA_ENV}"


def data_file(data_dir: Path, relative: str) -> Path:
    """``data_dir / relative``, or InputError naming it: a reader fails at once, not part-way through."""
    path = data_dir / relative
    if not path.is_file():
        raise InputError(f"missing data file {path} (is {data_dir} the shared data folder? {DATA_HINT})")
    return path


def rows(data_dir: Path, relative: str) -> list[dict[str, Any]]:
    """Every record of the JSON lines file ``data_dir / relative``."""
    return [record for _, record in read_records(data_file(data_dir, relative))]


def map_label(mapping: Mapping[str, Label], value: object, where: str) -> Label:
    """The dataset label ``value`` as ours, or InputError naming the line."""
    try:
        return mapping[str(value)]
    except KeyError:
        raise InputError(f"{where}: unexpected label {value!r} (expected one of {', '.join(mapping)})") from None


def labelled_rows(
    path: Path, mapping: Mapping[str, Label], *, skip: str | None = None, key: str = "label"
) -> Iterator[tuple[int, dict[str, Any], Label]]:
    """``(line, row, gold)`` for each row of a JSON lines file; rows labelled ``skip`` (no such class here)
    are left out, and a label ``mapping`` lacks is an InputError naming the line."""
    for line, row in read_records(path):
        if skip is not None and row[key] == skip:
            continue
        yield line, row, map_label(mapping, row[key], f"{path}:{line}")


def claim_item(
    item_id: str,
    text: str,
    gold: Label,
    evidence: tuple[Evidence, ...] = (),
    *,
    meta: Mapping[str, Any],
    claim_label: bool = True,
    as_of: str | None = None,
) -> EvalItem:
    """An item whose text is one claim, judged against ``evidence``. ``claim_label``: the claim's gold
    is the text's (two-level sets); False where the dataset labels the text only (PARTLY TRUE, ...)."""
    claim = GoldClaim(text=text, label=gold if claim_label else None, evidence=evidence)
    return EvalItem(item_id, text, gold, (claim,), meta, as_of)


def gold_dataset(name: str, levels: int, items: list[EvalItem], description: str) -> Dataset:
    """A dataset whose claims carry gold evidence (every built-in one but LIAR)."""
    return Dataset(name=name, levels=levels, items=tuple(items), has_evidence=True, description=description)


def split_files(name: str, split: str, files: Mapping[str, tuple[str, ...]], option: str = "split") -> tuple[str, ...]:
    """The files of ``split``, or ConfigError naming the splits there are."""
    if split not in files:
        raise ConfigError(f"dataset {name!r}: {option} must be one of {', '.join(files)}, got {split!r}")
    return files[split]


def wikipedia_url(page: str) -> str:
    """The English Wikipedia address of the page titled ``page``."""
    return WIKIPEDIA + page.replace(" ", "_")
