"""A SQLite cache of LLM answers, search results and judgments.

Entries are keyed by a hash of the request and the component's version, so a
changed prompt or parser never serves stale answers. An entry that records an
absence (no search results, an empty page, a judgment made without evidence)
expires after ``absence_ttl_s`` (an hour by default), so a passing outage does
not become a lasting answer; other entries keep until evicted. ``refresh``
asks everything again and stores the new answers. The database is in WAL
mode with a busy time-out, so several processes can share one file; it is kept
under ``max_bytes`` by evicting the least recently used entries. A file found
corrupt (truncated, overwritten) is moved aside as ``cache.sqlite.corrupt-<time>``
with one warning, and a fresh cache is started in its place: a broken cache
must neither stop a check nor silently stop caching (paying for every call).
The other ways a cache breaks are said once too, and the checks go on:

- a damaged write-ahead log (``cache.sqlite-wal`` that is no SQLite WAL): what
  it held since the last checkpoint is lost (SQLite ignores such a file); one
  warning, a copy kept as ``cache.sqlite.corrupt-<time>-wal``;
- a read-only cache file: answers are still read from it, nothing new is
  stored; one warning;
- a cache that cannot be opened at all (a folder in the file's place, a
  read-only folder, a path under a file): nothing is read or stored; one
  warning.

Each of these is also a note in the ``usage.notes`` of the checks it affects
(a damaged log or a file set aside: the check that found it; a read-only or
unusable cache: every check while it lasts). A read-only or unusable cache is
tried again after ``REOPEN_S`` seconds, so a long-running server recovers once
it is fixed. The connection is closed when the process exits, so SQLite folds
the log into the main file and a finished run leaves no log behind.

Components reach the cache of the check they run in (:data:`cache_var`) through
:func:`cached`, which also counts hits in the check's ``usage``.
"""

from __future__ import annotations

import asyncio
import atexit
import hashlib
import json
import logging
import os
import shutil
import sqlite3
import struct
import threading
import time
import weakref
from collections.abc import Awaitable, Callable, Iterator, Mapping
from contextlib import contextmanager, suppress
from contextvars import ContextVar
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar, TypeVar

from factcheck.options import check_fields, coerce_section, env_values, setting
from factcheck.paths import cache_dir
from factcheck.sqlitewal import busy, use_wal
from factcheck.usage import record_cache_hit, usage_var

T = TypeVar("T")
log = logging.getLogger("factcheck.cache")

DEFAULT_MAX_BYTES = 512 * 1024 * 1024
DEFAULT_ABSENCE_TTL_S = 3600.0
REOPEN_S = 60.0  # a read-only or unusable cache is tried again after this long
_WAL_MAGIC = (0x377F0682, 0x377F0683)  # a SQLite WAL header's first word: checksums little- or big-endian
_SCHEMA = """
CREATE TABLE IF NOT EXISTS entries (
    key TEXT PRIMARY KEY,
    kind TEXT NOT NULL,
    value TEXT NOT NULL,
    size INTEGER NOT NULL,
    created REAL NOT NULL,
    accessed REAL NOT NULL,
    expires REAL
);
CREATE INDEX IF NOT EXISTS entries_accessed ON entries (accessed);
"""


def default_cache_path() -> Path:
    """``<cache folder>/cache.sqlite``."""
    return cache_dir() / "cache.sqlite"


def cache_key(kind: str, version: str, request: Mapping[str, Any]) -> str:
    """A stable hash of what was asked, of whom, and in which version of the component."""
    material = json.dumps({"kind": kind, "version": version, "request": request}, sort_keys=True, default=str)
    return hashlib.sha256(material.encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class CacheSettings:
    """The ``[cache]`` table: where the cache lives, how large it grows, and whether it is used."""

    SECTION: ClassVar[str] = "[cache]"

    path: str | None = setting(None, env="FACTCHECK_CACHE", help="SQLite cache file.")
    max_mb: float = setting(DEFAULT_MAX_BYTES / 1e6, minimum=0, help="least recently used entries go beyond this")
    absence_ttl_s: float = setting(DEFAULT_ABSENCE_TTL_S, minimum=0, unit="seconds", help="how long an absence keeps")
    refresh: bool = setting(False, help="ask everything again, storing the new answers")
    enabled: bool = setting(True, help="false: neither read nor write the cache")

    def __post_init__(self) -> None:
        check_fields(self)


def cache_env(env: Mapping[str, str]) -> dict[str, Any]:
    """``[cache]`` settings from ``FACTCHECK_CACHE`` (a path) and ``FACTCHECK_NO_CACHE`` (turns it off)."""
    values = env_values(CacheSettings, env, "bad FACTCHECK_* variable")
    if env.get("FACTCHECK_NO_CACHE", "").strip().lower() in {"1", "true", "yes", "on"}:
        values["enabled"] = False  # the inverse of a field: not one-to-one, so read here
    return values


def open_cache(options: Mapping[str, Any]) -> Cache | None:
    """The SQLite cache a ``[cache]`` table asks for (:class:`CacheSettings`), or ``None`` when off."""
    settings = coerce_section(CacheSettings, options)
    if not settings.enabled:
        return None
    return Cache(
        settings.path,
        max_bytes=int(settings.max_mb * 1e6),
        absence_ttl_s=settings.absence_ttl_s,
        refresh=settings.refresh,
    )


class Cache:
    """A size-bounded key-value store of JSON values in one SQLite file."""

    def __init__(
        self,
        path: str | Path | None = None,
        *,
        max_bytes: int = DEFAULT_MAX_BYTES,
        absence_ttl_s: float = DEFAULT_ABSENCE_TTL_S,
        refresh: bool = False,
    ) -> None:
        self.path = Path(path).expanduser() if path else default_cache_path()
        self.max_bytes = max_bytes
        self.absence_ttl_s = absence_ttl_s
        self.refresh = refresh
        self._lock = threading.Lock()
        self._connection: sqlite3.Connection | None = None
        # Why the cache is read-only, or cannot be used at all, and until when that holds (monotonic).
        self.read_only: str | None = None
        self.unusable: str | None = None
        self._broken_until = 0.0
        self._news: list[str] = []  # one-off warnings not yet noted in a check's usage
        self._news_lock = threading.Lock()  # not self._lock: a query may hold that for the busy time-out
        _OPEN.add(self)

    def _open(self) -> sqlite3.Connection:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        if self.path.is_dir():
            raise IsADirectoryError(f"{self.path} is a folder, not a cache file")
        self._check_wal()
        connection = sqlite3.connect(self.path, timeout=30, check_same_thread=False, isolation_level=None)
        try:
            connection.execute("PRAGMA busy_timeout=30000")
            use_wal(connection, 30)
            connection.executescript(_SCHEMA)
            columns = {row[1] for row in connection.execute("PRAGMA table_info(entries)")}
            if "expires" not in columns:  # a cache file written before entries could expire
                connection.execute("ALTER TABLE entries ADD COLUMN expires REAL")
        except BaseException:
            connection.close()
            raise
        return connection

    @contextmanager
    def _db(self) -> Iterator[sqlite3.Connection]:
        """The connection, under the lock; a corrupt file found meanwhile is set aside and the error re-raised
        (:meth:`_retry` then tries once more, on the fresh file)."""
        with self._lock:
            try:
                if self._connection is None:
                    self._connection = self._open()
                yield self._connection
            except sqlite3.DatabaseError as exc:
                if _corrupt(exc):
                    self._set_aside(exc)
                raise

    def _retry(self, operation: Callable[[], T]) -> T:
        try:
            return operation()
        except sqlite3.DatabaseError as exc:
            if not _corrupt(exc):
                raise
            return operation()  # on the fresh file

    def _set_aside(self, exc: sqlite3.DatabaseError) -> None:
        """Move a corrupt database file (and its WAL) aside, warn once, and start afresh on the next use."""
        if self._connection is not None:
            with suppress(sqlite3.Error):
                self._connection.close()
            self._connection = None
        stamp = time.strftime("%Y%m%d-%H%M%S")
        aside = self.path.with_name(f"{self.path.name}.corrupt-{stamp}")
        number = 1
        while aside.exists():  # never overwrite an earlier one: it may be wanted for a bug report
            number += 1
            aside = self.path.with_name(f"{self.path.name}.corrupt-{stamp}-{number}")
        try:
            os.replace(self.path, aside)
            for suffix in ("-wal", "-shm"):
                with suppress(FileNotFoundError):
                    os.replace(f"{self.path}{suffix}", f"{aside}{suffix}")
            where = f"moved to {aside}"
        except FileNotFoundError:
            where = "it is gone"
        except OSError as err:  # cannot move it: the error reaches the caller, which carries on uncached
            raise sqlite3.DatabaseError(f"corrupt cache {self.path} cannot be moved aside: {err}") from exc
        self._warn(f"the cache {self.path} is corrupt ({exc}): {where}; a fresh cache was started")

    def _warn(self, message: str, lasting: bool = False) -> None:
        """Log ``message`` once in this process (several checkers may open the same file); a one-off one
        also goes to the next check's usage notes."""
        with self._news_lock:
            if message in _WARNED:
                return
            _WARNED.add(message)
            if not lasting:
                self._news.append(message)
        log.warning("%s", message)

    def _check_wal(self) -> None:
        """Warn once (and keep a copy) when the write-ahead log is no SQLite WAL: SQLite ignores such a file,
        so what it held since the last checkpoint is lost without a word."""
        wal = Path(f"{self.path}-wal")
        try:
            with wal.open("rb") as file:
                head = file.read(32)
        except OSError:
            return  # none (the usual case after a clean close), or unreadable: SQLite will say
        if not head or _valid_wal_header(head):
            return
        stamp = time.strftime("%Y%m%d-%H%M%S")
        copy = self.path.with_name(f"{self.path.name}.corrupt-{stamp}-wal")
        try:
            shutil.copyfile(wal, copy)
            kept = f"a copy is at {copy}"
        except OSError as err:
            kept = f"no copy could be kept: {err}"
        self._warn(
            f"the cache's write-ahead log {wal} is damaged (not a SQLite WAL): anything written to it since the"
            f" last checkpoint is lost, and the cache goes on without it; {kept}"
        )
        # Left in place (another process may have the database open): SQLite starts it afresh on the next write.

    def _usable(self) -> bool:
        """False while the cache is known to be unusable (until ``REOPEN_S`` after it was found so)."""
        if (self.unusable or self.read_only) and time.monotonic() >= self._broken_until:
            self.unusable = self.read_only = None  # try again: it may have been fixed
        return self.unusable is None

    def _failed(self, exc: sqlite3.Error | OSError) -> None:
        """Record why the cache cannot be written (read-only, reads still work) or used at all, warn once."""
        self.close()
        message = str(exc).lower()
        cause = f"{type(exc).__name__}: {exc}"
        folder = self.path.is_dir()
        if folder:
            cause = "a folder is where the cache file should be"
        readonly = "readonly" in message or "read-only" in message
        if not folder and readonly and self.read_only is None and self._readable():
            self.read_only = cause
            said = f"is read-only ({cause}): answers are read from it, but nothing new is stored (make it writable"
        else:
            self.unusable = cause
            said = f"cannot be used ({cause}): checks go on without it, reading and storing nothing (fix it"
        self._broken_until = time.monotonic() + REOPEN_S
        self._warn(f"the cache {self.path} {said}, or point --cache or [cache] path elsewhere)", lasting=True)

    def _readable(self) -> bool:
        """Whether the cache file can at least be read (a read-only file in a writable folder can)."""
        try:
            connection = sqlite3.connect(self.path, timeout=5, check_same_thread=False, isolation_level=None)
            try:
                connection.execute("SELECT 1 FROM entries LIMIT 1").fetchall()
            finally:
                connection.close()
        except sqlite3.Error:
            return False
        return True

    def _guarded(self, operation: Callable[[], T], default: T) -> T:
        """``operation()``, or ``default`` when the cache is (found) unusable; a busy or locked database
        raises as before (the caller treats it as a miss), a corrupt one is set aside (:meth:`_retry`)."""
        for _ in range(2):  # a write found read-only is tried once more, as a read
            if not self._usable():
                return default
            try:
                return self._retry(operation)
            except (sqlite3.Error, OSError) as exc:
                if isinstance(exc, sqlite3.Error) and busy(exc):
                    raise
                self._failed(exc)
        return default

    def problem(self) -> str | None:
        """What a check should be told about this cache: why it is read-only or unusable, else ``None``."""
        if not self._usable():
            return f"cache not used: {self.unusable}"
        if self.read_only:
            return f"cache read-only, nothing new stored: {self.read_only}"
        return None

    def news(self) -> list[str]:
        """The one-off warnings (a damaged log, a file set aside) not yet passed on; each is passed on once."""
        with self._news_lock:
            news, self._news = self._news, []
        return news

    def get(self, key: str) -> Any | None:
        """The value stored under ``key``, or ``None`` (also when it expired, or with ``refresh`` on)."""
        if self.refresh:
            return None
        return self._guarded(lambda: self._get(key), None)

    def _get(self, key: str) -> Any | None:
        now = time.time()
        with self._db() as db:
            row = db.execute("SELECT value, expires FROM entries WHERE key = ?", (key,)).fetchone()
            if row is None:
                return None
            if row[1] is not None and row[1] <= now:
                if not self.read_only:
                    db.execute("DELETE FROM entries WHERE key = ?", (key,))
                return None
            if not self.read_only:
                db.execute("UPDATE entries SET accessed = ? WHERE key = ?", (now, key))
        return json.loads(row[0])

    def set(self, key: str, kind: str, value: Any, ttl_s: float | None = None) -> None:
        """Store ``value`` (JSON-serialisable), for ``ttl_s`` seconds if given, and evict old entries
        beyond ``max_bytes``."""
        text = json.dumps(value, ensure_ascii=False)
        if not self._usable() or self.read_only:
            return  # nothing can be stored (said once, and in each check's notes)
        self._guarded(lambda: self._set(key, kind, text, ttl_s), None)

    def _set(self, key: str, kind: str, text: str, ttl_s: float | None) -> None:
        now = time.time()
        expires = now + ttl_s if ttl_s is not None else None
        with self._db() as db:
            db.execute(
                "INSERT OR REPLACE INTO entries (key, kind, value, size, created, accessed, expires)"
                " VALUES (?, ?, ?, ?, ?, ?, ?)",
                (key, kind, text, len(text), now, now, expires),
            )
            total = db.execute("SELECT COALESCE(SUM(size), 0) FROM entries").fetchone()[0]
            if total > self.max_bytes:
                self._evict(db, total - self.max_bytes)

    @staticmethod
    def _evict(db: sqlite3.Connection, excess: int) -> None:
        freed = 0
        doomed = []
        for key, size in db.execute("SELECT key, size FROM entries ORDER BY accessed"):
            doomed.append((key,))
            freed += size
            if freed >= excess:
                break
        db.executemany("DELETE FROM entries WHERE key = ?", doomed)

    def stats(self) -> dict[str, int]:
        """Entries and bytes stored."""

        def count() -> tuple[int, int]:
            with self._db() as db:
                found = db.execute("SELECT COUNT(*), COALESCE(SUM(size), 0) FROM entries").fetchone()
            return int(found[0]), int(found[1])

        entries, size = self._guarded(count, (0, 0))
        return {"entries": entries, "bytes": size}

    def close(self) -> None:
        """Close the database connection (it reopens on next use)."""
        with self._lock:
            if self._connection is not None:
                self._connection.close()
                self._connection = None


_OPEN: weakref.WeakSet[Cache] = weakref.WeakSet()
_WARNED: set[str] = set()  # the warnings logged in this process


@atexit.register
def _close_all() -> None:
    """Close every cache at exit: SQLite then folds the write-ahead log into the main file."""
    for cache in list(_OPEN):
        if cache._lock.acquire(timeout=1):  # a query still running in a worker thread must not hold up the exit
            try:
                if cache._connection is not None:
                    with suppress(sqlite3.Error):
                        cache._connection.close()
                    cache._connection = None
            finally:
                cache._lock.release()


def _valid_wal_header(head: bytes) -> bool:
    """Whether ``head`` (a WAL file's first 32 bytes) is a SQLite WAL header whose checksum checks out."""
    if len(head) < 32:
        return False
    magic, version, _page, _seq, _salt1, _salt2, sum1, sum2 = struct.unpack(">8I", head)
    if magic not in _WAL_MAGIC or version != 3007000:
        return False
    order = ">" if magic & 1 else "<"
    s1 = s2 = 0
    for x1, x2 in struct.iter_unpack(f"{order}2I", head[:24]):
        s1 = (s1 + x1 + s2) & 0xFFFFFFFF
        s2 = (s2 + x2 + s1) & 0xFFFFFFFF
    return (s1, s2) == (sum1, sum2)


def _corrupt(exc: sqlite3.DatabaseError) -> bool:
    """True for an error that says the file is no (longer a) database, not for a busy or locked one."""
    message = str(exc).lower()
    if "malformed" in message or "not a database" in message or "corrupt" in message:
        return True
    return type(exc) is sqlite3.DatabaseError


class ReusableJudgments:
    """Mixin of sources and verifiers: may a judgment made with this component be reused?

    A checker with its cache on stores each agent's judgment of a claim and
    reuses it for the same claim (normalised), so a claim seen in an earlier
    text, request or batch document is not searched and judged again. That is
    only right when the judgment depends on nothing but the claim, the
    component's options and :meth:`cache_version`, so it is opt-in: a
    component sets ``reuse_judgments = True``, and an agent's judgments are
    reused only when its source and its verifier both allow it.
    """

    reuse_judgments: ClassVar[bool] = False
    # Options that change how a component talks to its service, never what it answers (time-outs,
    # concurrency, the User-Agent naming the operator): left out of reuse keys and batch fingerprints.
    transport_options: ClassVar[frozenset[str]] = frozenset()

    def cache_version(self) -> str:
        """What a reused judgment depends on besides the options (a corpus's or model's fingerprint)."""
        return ""


cache_var: ContextVar[Cache | None] = ContextVar("factcheck.cache", default=None)
"""The cache of the check running here, if any."""


async def cached(
    kind: str,
    version: str,
    request: Mapping[str, Any],
    compute: Callable[[], Awaitable[T]],
    validate: Callable[[T], object] | None = None,
    absent: Callable[[T], bool] | None = None,
) -> T:
    """``compute()``, or its stored result for the same ``kind``, ``version`` and ``request``.

    Outside a check, or with the cache off, it just computes. A hit is counted in
    ``usage.cache_hits[kind]``. Only JSON-serialisable results can be cached, and
    only once ``validate(result)`` has not raised: an unusable answer (a model's
    reply that is not the JSON asked for) is never stored, so a retry can do better.
    A result that records an absence (``absent(result)``; by default an empty
    list, mapping or string) is stored only for the cache's ``absence_ttl_s``.
    """
    cache = cache_var.get()
    if cache is None:
        value = await compute()
        if validate is not None:
            validate(value)
        return value
    key = cache_key(kind, version, request)
    try:
        # SQLite may wait on another process's lock: keep that off the event loop.
        stored = await asyncio.to_thread(cache.get, key)
    except (sqlite3.Error, OSError):
        stored = None  # a broken cache must not break a check
    _note(cache)
    if stored is not None:
        record_cache_hit(kind)
        return stored  # type: ignore[no-any-return]
    value = await compute()
    if validate is not None:
        validate(value)
    is_absence = absent(value) if absent is not None else _empty(value)
    ttl_s = cache.absence_ttl_s if is_absence else None
    with suppress(sqlite3.Error, OSError, TypeError, ValueError):
        await asyncio.to_thread(cache.set, key, kind, value, ttl_s)
    _note(cache)
    return value


def _note(cache: Cache) -> None:
    """Tell the current check, once, what is wrong with ``cache`` (see :meth:`Cache.problem`, :meth:`Cache.news`)."""
    recorder = usage_var.get()
    if recorder is None:
        return
    for note in (*cache.news(), cache.problem()):
        if note is not None and note not in recorder.notes:
            recorder.notes.append(note)


def _empty(value: object) -> bool:
    return isinstance(value, list | dict | str | tuple) and not value
