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

Components reach the cache of the check they run in through :func:`cached`,
which also counts hits in the check's ``usage``.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import logging
import os
import sqlite3
import threading
import time
from collections.abc import Awaitable, Callable, Iterator, Mapping
from contextlib import contextmanager, suppress
from contextvars import ContextVar
from pathlib import Path
from typing import Any, ClassVar, TypeVar

from factcheck.paths import cache_dir
from factcheck.usage import record_cache_hit

T = TypeVar("T")
log = logging.getLogger("factcheck.cache")

DEFAULT_MAX_BYTES = 512 * 1024 * 1024
DEFAULT_ABSENCE_TTL_S = 3600.0
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

    def _open(self) -> sqlite3.Connection:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        connection = sqlite3.connect(self.path, timeout=30, check_same_thread=False, isolation_level=None)
        try:
            connection.execute("PRAGMA journal_mode=WAL")
            connection.execute("PRAGMA busy_timeout=30000")
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
        log.warning("the cache %s is corrupt (%s): %s; a fresh cache was started", self.path, exc, where)

    def get(self, key: str) -> Any | None:
        """The value stored under ``key``, or ``None`` (also when it expired, or with ``refresh`` on)."""
        if self.refresh:
            return None
        return self._retry(lambda: self._get(key))

    def _get(self, key: str) -> Any | None:
        now = time.time()
        with self._db() as db:
            row = db.execute("SELECT value, expires FROM entries WHERE key = ?", (key,)).fetchone()
            if row is None:
                return None
            if row[1] is not None and row[1] <= now:
                db.execute("DELETE FROM entries WHERE key = ?", (key,))
                return None
            db.execute("UPDATE entries SET accessed = ? WHERE key = ?", (now, key))
        return json.loads(row[0])

    def set(self, key: str, kind: str, value: Any, ttl_s: float | None = None) -> None:
        """Store ``value`` (JSON-serialisable), for ``ttl_s`` seconds if given, and evict old entries
        beyond ``max_bytes``."""
        text = json.dumps(value, ensure_ascii=False)
        self._retry(lambda: self._set(key, kind, text, ttl_s))

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

        entries, size = self._retry(count)
        return {"entries": entries, "bytes": size}

    def close(self) -> None:
        """Close the database connection (it reopens on next use)."""
        with self._lock:
            if self._connection is not None:
                self._connection.close()
                self._connection = None


def _corrupt(exc: sqlite3.DatabaseError) -> bool:
    """True for an error that says the file is no (longer a) database, not for a busy or locked one."""
    message = str(exc).lower()
    if "malformed" in message or "not a database" in message or "corrupt" in message:
        return True
    return type(exc) is sqlite3.DatabaseError


current_cache: ContextVar[Cache | None] = ContextVar("factcheck_cache", default=None)


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
    cache = current_cache.get()
    if cache is None:
        value = await compute()
        if validate is not None:
            validate(value)
        return value
    key = cache_key(kind, version, request)
    try:
        # SQLite may wait on another process's lock: keep that off the event loop.
        stored = await asyncio.to_thread(cache.get, key)
    except sqlite3.Error:
        stored = None  # a broken cache must not break a check
    if stored is not None:
        record_cache_hit(kind)
        return stored  # type: ignore[no-any-return]
    value = await compute()
    if validate is not None:
        validate(value)
    is_absence = absent(value) if absent is not None else _empty(value)
    ttl_s = cache.absence_ttl_s if is_absence else None
    with suppress(sqlite3.Error, TypeError, ValueError):
        await asyncio.to_thread(cache.set, key, kind, value, ttl_s)
    return value


def _empty(value: object) -> bool:
    return isinstance(value, list | dict | str | tuple) and not value
