"""Reading JSON Lines with errors that name the file and line."""

from __future__ import annotations

import gzip
import json
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

from factcheck.errors import InputError


def iter_records(handle: IO[str], name: str) -> Iterator[tuple[int, dict[str, Any]]]:
    """``(line number, object)`` for each non-blank line; InputError on bad JSON or a non-object."""
    for number, line in enumerate(handle, 1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError as exc:
            raise InputError(f"{name}:{number}: not valid JSON ({exc.msg})") from None
        if not isinstance(record, dict):
            raise InputError(f"{name}:{number}: each line must be a JSON object")
        yield number, record


def read_records(path: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    """The records of a ``.jsonl`` or ``.jsonl.gz`` file."""
    opener = gzip.open if path.suffix == ".gz" else open
    try:
        with opener(path, "rt", encoding="utf-8") as handle:
            yield from iter_records(handle, str(path))
    except FileNotFoundError:
        raise InputError(f"missing data file {path}") from None
