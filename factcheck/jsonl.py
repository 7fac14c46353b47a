"""Reading and writing JSON Lines, with errors that name the file and line."""

from __future__ import annotations

import gzip
import io
import json
import os
import re
import secrets
import stat
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO, Any

from factcheck.errors import InputError
from factcheck.text import valid_unicode_data

_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")


# Scores, confidences, similarities and seconds are shown to 3 decimals (0.091, not 0.09144999999999998);
# a cost in dollars to 6, since one call may cost $0.000150.
DECIMALS = 3
COST_DECIMALS = 6
OWN_FIELDS = frozenset({"meta"})  # fields :func:`rounded` leaves as they are


def rounded(data: Any, key: str = "") -> Any:
    """``data`` (a JSON value) with every number that is not whole rounded for readers: to
    :data:`DECIMALS` places, or :data:`COST_DECIMALS` under a key naming a cost. What every output
    writes (``check --format json``, ``batch``, ``score``, the server); the Python API's ``to_dict()``
    keeps full precision, and so do ``check`` and ``batch`` with ``--full-precision``. What is the user's
    own is left as it is: a document's ``meta`` and the settings (``scorer_options``) a replay reads."""
    if key in OWN_FIELDS or key.endswith("_options"):
        return data
    if isinstance(data, float):
        return round(data, COST_DECIMALS if "cost" in key else DECIMALS)
    if isinstance(data, dict):
        return {k: rounded(v, k) for k, v in data.items()}
    if isinstance(data, list | tuple):
        return [rounded(v, key) for v in data]
    return data


def iter_records(handle: IO[str], name: str) -> Iterator[tuple[int, dict[str, Any]]]:
    """``(line number, object)`` for each non-blank line; InputError on bad JSON, a non-object or non-UTF-8 bytes."""
    try:
        for number, line in enumerate(handle, 1):
            if not line.strip():
                continue
            try:
                record = json.loads(line)
                if _SURROGATE_ESCAPE.search(line):  # "\\ud800" is valid JSON but no valid Unicode
                    record = valid_unicode_data(record)
            except json.JSONDecodeError as exc:
                raise InputError(f"{name}:{number}: not valid JSON ({exc.msg})") from None
            if not isinstance(record, dict):
                raise InputError(f"{name}:{number}: each line must be a JSON object")
            yield number, record
    except UnicodeDecodeError:
        raise InputError(f"{name}: not UTF-8 text") from None  # decoded in blocks: no reliable line number
    except (OSError, EOFError) as exc:  # a truncated or corrupt .gz
        raise InputError(f"{name}: cannot read: {exc}") from None


def read_records(path: str | Path) -> Iterator[tuple[int, dict[str, Any]]]:
    """The records of a ``.jsonl`` or ``.jsonl.gz`` file, or of standard input for ``-``."""
    if str(path) == "-":
        yield from iter_records(sys.stdin, "<stdin>")
        return
    path = Path(path)
    opener = gzip.open if path.suffix == ".gz" else open
    try:
        handle = opener(path, "rt", encoding="utf-8")
    except FileNotFoundError:
        raise InputError(f"no such file: {path}") from None
    except OSError as exc:
        raise InputError(f"cannot read {path}: {exc.strerror or exc}") from None
    with handle:
        yield from iter_records(handle, str(path))


_NOT_SPACE = re.compile(r"\S")


def _json_error(name: str, exc: json.JSONDecodeError) -> InputError:
    return InputError(f"{name}:{exc.lineno}: not valid JSON ({exc.msg}, column {exc.colno})")


def iter_documents(text: str, name: str) -> Iterator[tuple[int, dict[str, Any]]]:
    """``(line number, object)`` for each JSON object of ``text``, which may be JSON Lines, one JSON
    document (an object, indented or not, or an array of objects), or several documents one after
    another (what ``factcheck check --format json`` appends). The line is where the object starts.
    InputError names the line of bad JSON or of a value that is no object."""
    decoder = json.JSONDecoder()
    line, counted = 1, 0

    def line_of(position: int) -> int:
        nonlocal line, counted
        line += text.count("\n", counted, position)
        counted = position
        return line

    def decode(position: int) -> tuple[Any, int]:
        try:
            value, end = decoder.raw_decode(text, position)
        except json.JSONDecodeError as exc:
            raise _json_error(name, exc) from None
        if _SURROGATE_ESCAPE.search(text, position, end):  # "\\ud800" is valid JSON but no valid Unicode
            value = valid_unicode_data(value)
        return value, end

    def next_value(position: int) -> int | None:
        found = _NOT_SPACE.search(text, position)
        return found.start() if found else None

    position = next_value(0)
    while position is not None:
        if text[position] != "[":
            record, end = decode(position)
            if not isinstance(record, dict):
                raise InputError(
                    f"{name}:{line_of(position)}: expected a JSON object (a checked text) or an array of them, "
                    f"got {type(record).__name__}"
                )
            yield line_of(position), record
            position = next_value(end)
            continue
        # An array: its items one by one, so each keeps its own line number.
        item = next_value(position + 1)
        number = 0
        while item is not None and text[item] != "]":
            record, end = decode(item)
            number += 1
            if not isinstance(record, dict):
                raise InputError(f"{name}:{line_of(item)}: item {number} of the array is not a JSON object")
            yield line_of(item), record
            after = next_value(end)
            if after is not None and text[after] == ",":
                item = next_value(after + 1)
                if item is not None and text[item] == "]":
                    raise InputError(f"{name}:{line_of(item)}: not valid JSON (a ',' before the array's ']')")
            elif after is not None and text[after] != "]":
                raise InputError(f"{name}:{line_of(after)}: not valid JSON (expected ',' or ']' in the array)")
            else:
                item = after
        if item is None:
            raise InputError(f"{name}:{line_of(len(text))}: not valid JSON (the array is not closed)")
        position = next_value(item + 1)


def read_documents(path: str | Path) -> Iterator[tuple[int, dict[str, Any]]]:
    """The objects of a JSON or JSON Lines file (``.gz`` too), or of standard input for ``-``, with the
    line each starts on (:func:`iter_documents`). Read whole: for files a command reads all of anyway."""
    if str(path) == "-":
        name, data = "<stdin>", sys.stdin.buffer.read()
    else:
        path = Path(path)
        name = str(path)
        try:
            if path.suffix == ".gz":
                with gzip.open(path, "rb") as handle:
                    data = handle.read()
            else:
                data = path.read_bytes()
        except FileNotFoundError:
            raise InputError(f"no such file: {path}") from None
        except (OSError, EOFError) as exc:  # unreadable, or a truncated or corrupt .gz
            raise InputError(f"cannot read {path}: {getattr(exc, 'strerror', None) or exc}") from None
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise InputError(f"{name}:{line}: not UTF-8 text") from None
    if _json_lines(text):  # read line by line: a bad line is named by its own number, never the next one's
        yield from iter_records(io.StringIO(text), name)
    else:
        yield from iter_documents(text, name)


def _json_lines(text: str) -> bool:
    """Whether ``text`` is JSON Lines: its first non-blank line is a whole JSON object by itself (an
    indented document's first line, "{", is not)."""
    first = next((line for line in text.splitlines() if line.strip()), "")
    try:
        return isinstance(json.loads(first), dict)
    except json.JSONDecodeError:
        return False


def _create_beside(path: Path) -> tuple[int, str]:
    """A new, empty temporary file in ``path``'s folder: its descriptor and name.

    Created with mode 0o666 so the kernel applies the umask, as for any file a program
    writes (``tempfile.mkstemp`` would make it 0o600, and the rename keeps that); a file
    being replaced keeps its own mode.
    """
    mode = stat.S_IMODE(path.stat().st_mode) if path.is_file() else None
    while True:
        tmp = str(path.parent / f".{path.name}.{secrets.token_hex(4)}")
        try:
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
        except FileExistsError:
            continue
        if mode is not None and hasattr(os, "fchmod"):  # not on Windows before 3.13
            os.fchmod(fd, mode)
        return fd, tmp


@contextmanager
def atomic_writer(path: str | Path | None) -> Iterator[IO[str]]:
    """Write to ``path`` through a temporary file renamed into place on success, so
    a failed run never leaves half a file and the input may safely be the output.
    ``None`` or ``-`` writes to standard output."""
    if path is None or str(path) == "-":
        yield sys.stdout
        return
    path = Path(path)
    try:
        fd, tmp = _create_beside(path)
    except OSError as exc:
        raise InputError(f"cannot write {path}: {exc.strerror or exc}") from None
    try:
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as handle:
                yield handle
            os.replace(tmp, path)
        except OSError as exc:  # a full disk, a read-only folder: one line, not a traceback
            raise InputError(f"cannot write {path}: {exc.strerror or exc}") from None
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)
