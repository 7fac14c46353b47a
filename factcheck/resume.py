"""Resumable JSON Lines output: what ``factcheck eval`` and ``factcheck batch`` share.

A long run writes one complete JSON line per finished item, so killing it
(Ctrl-C, ``kill -9``, a lost machine) loses at most the items in flight. On
restart, :func:`read_done` cuts off a half-written last line and returns the
ids already written, and :func:`guard_settings` refuses to mix results made
with other settings into the same file.
"""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from factcheck.errors import ConfigError, InputError
from factcheck.jsonl import atomic_writer, read_records
from factcheck.text import valid_unicode_data

if TYPE_CHECKING:
    pass


def repair_tail(path: Path) -> None:
    """Cut off a half-written last line (a run killed in the middle of a write)."""
    if not path.exists():
        return
    size = path.stat().st_size
    if size == 0:
        return
    with path.open("r+b") as handle:
        # Scan back from the end for the last newline, a block at a time: the file may be large.
        end = size
        while end > 0:
            start = max(0, end - 65536)
            handle.seek(start)
            block = handle.read(end - start)
            cut = block.rfind(b"\n")
            if cut >= 0:
                keep = start + cut + 1
                break
            end = start
        else:
            keep = 0
        if keep < size:
            handle.truncate(keep)


def read_done(path: Path) -> set[str]:
    """Ids already written to ``path``; a half-written last line (a killed run) is cut off."""
    if not path.exists():
        return set()
    repair_tail(path)
    return {str(r.get("id")) for _, r in read_records(path)}


class AppendLog:
    """Appends JSON records to a file, one whole line per ``write`` call, flushed to disk.

    The file is opened with ``O_APPEND`` and each record goes out in a single
    ``write`` followed by ``fsync``, so a crash leaves every earlier line intact
    and at worst a partial last line, which :func:`read_done` removes.
    """

    def __init__(
        self, path: Path, *, sync: bool = True, prepare: Callable[[dict[str, Any]], Any] | None = None
    ) -> None:
        self.path = path
        self.sync = sync
        self.prepare = prepare  # what each record goes through before it is written (numbers rounded, say)
        self._lock = threading.Lock()
        self.written = 0  # lines this log appended (counted once each is whole in the file)
        try:
            self._fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        except OSError as exc:
            raise InputError(f"cannot write {path}: {exc.strerror or exc}") from None

    def write(self, record: dict[str, Any]) -> None:
        """Append ``record`` as one line and, with ``sync``, wait until it is on disk."""
        if self.prepare is not None:
            record = self.prepare(record)
        try:
            data = (json.dumps(record, ensure_ascii=False) + "\n").encode("utf-8")
        except UnicodeEncodeError:  # a lone surrogate that came in some other way: one line must not stop a run
            data = (json.dumps(valid_unicode_data(record), ensure_ascii=False) + "\n").encode("utf-8")
        with self._lock:
            try:
                written = os.write(self._fd, data)
                while written < len(data):  # a regular file takes it whole; a short write is finished, never dropped
                    written += os.write(self._fd, data[written:])
                if self.sync:
                    os.fsync(self._fd)
                self.written += 1
            except OSError as exc:  # a full disk, a file made read-only: one line, not a traceback
                raise InputError(f"cannot write {self.path}: {exc.strerror or exc}") from None

    def close(self) -> None:
        """Close the file."""
        with self._lock:
            if self._fd >= 0:
                os.close(self._fd)
                self._fd = -1

    def __enter__(self) -> AppendLog:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


@contextmanager
def exclusive(path: Path, what: Path) -> Iterator[None]:
    """Hold an advisory lock on ``path`` (created if missing) for the block, so that two runs
    never write ``what`` at once; InputError when another run holds it."""
    try:
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    except OSError as exc:
        raise InputError(f"cannot open {path}: {exc.strerror or exc}") from None
    try:
        try:
            import fcntl
        except ImportError:  # not POSIX: no advisory locks; run unguarded
            yield
            return
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            raise InputError(f"{what} is being written by another run; wait for it or choose another output") from None
        yield
    finally:
        os.close(fd)


def guard_settings(path: Path, settings: dict[str, Any], results: Path, hint: str) -> None:
    """Refuse to resume ``results`` recorded with other settings (stored in ``path``); else record them.

    ``settings`` should hold only what changes the results (agents, models,
    scoring), not how fast or how far a run goes. ``hint`` says what to do instead.
    """
    normal = json.loads(json.dumps(settings, default=str))
    if path.exists():
        try:
            recorded = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise InputError(f"cannot read {path}: {exc}") from None
        if recorded != normal:
            changed = sorted(k for k in normal.keys() | recorded.keys() if normal.get(k) != recorded.get(k))
            raise ConfigError(
                f"{results} was recorded with other settings (changed: {', '.join(changed)}; see {path}); {hint}"
            )
        return
    # A temporary name of its own (two runs starting at once must not share one), renamed into place.
    with atomic_writer(path) as handle:
        handle.write(json.dumps(normal, indent=2, ensure_ascii=False) + "\n")
