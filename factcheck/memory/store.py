"""The experience memory: a SQLite store of adjudicated claims (PAMAS's experience memory, papers/000 eq. 14).

A *correction* is one reviewer's ruling on one claim: the right label, a note, who ruled (an API key's id, a
user name, ``gold:<dataset>`` for an eval run's labels), when, from which check, and the judgments and
evidence it corrects. Several corrections of the same claim (the same :func:`~factcheck.agent.normalise_claim`
form) make one *case*. A case is lent as a precedent only when its label is agreed: the label the most distinct
reviewers give in their newest rulings, given by at least ``require`` of them (a deployment that fears poisoning
sets 2; then an even split lends nothing, and with one required the newest ruling breaks a tie).

The store is opt-in: nothing opens or creates it unless a path is configured, and a check only reads it (a
missing file holds no cases and is not created). It is in WAL mode with a busy time-out, so the server can take
corrections while checks read.
"""

from __future__ import annotations

import itertools
import json
import os
import sqlite3
import threading
from collections.abc import Iterator, Sequence
from contextlib import closing, contextmanager
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from factcheck.agent import normalise_claim
from factcheck.errors import ConfigError, InputError
from factcheck.sqlitewal import use_wal
from factcheck.types import Evidence, Judgment

MEMORY_SCHEMA = 1
LABELS = ("TRUE", "FALSE", "UNVERIFIED")  # a claim's rulings; UNVERIFIED (the evidence cannot decide) lends none
ORIGINS = ("feedback", "server", "import")
MAX_NOTE = 2000  # characters of a reviewer's note kept
MAX_CLAIM = 2000
_SCHEMA = """
CREATE TABLE IF NOT EXISTS corrections (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    claim TEXT NOT NULL,
    claim_key TEXT NOT NULL,
    label TEXT NOT NULL,
    verdict TEXT,
    note TEXT NOT NULL,
    reviewer TEXT NOT NULL,
    origin TEXT NOT NULL,
    created_at TEXT NOT NULL,
    check_ref TEXT,
    judgments TEXT NOT NULL,
    evidence TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS corrections_claim ON corrections (claim_key);
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
"""


def now_iso() -> str:
    """The current time, UTC, to the second, as ISO 8601."""
    return datetime.now(UTC).replace(microsecond=0).isoformat()


@dataclass(frozen=True)
class Correction:
    """One reviewer's ruling on one claim, with its provenance.

    ``verdict`` is the label the check had given (``None``: not known, as for an eval import); ``check_ref``
    says which check it corrects (the result's id or time, a dataset item); ``judgments`` and ``evidence`` are
    what that check's agents said and cited. ``id`` is 0 until the store gives it one."""

    claim: str
    label: str
    reviewer: str
    origin: str
    note: str = ""
    verdict: str | None = None
    check_ref: str | None = None
    created_at: str = ""
    judgments: tuple[Judgment, ...] = ()
    evidence: tuple[Evidence, ...] = ()
    id: int = 0

    def __post_init__(self) -> None:
        if not self.claim.strip():
            raise InputError("a correction needs the claim's text")
        if len(self.claim) > MAX_CLAIM:
            raise InputError(f"a correction's claim is at most {MAX_CLAIM} characters")
        if self.label not in LABELS:
            raise InputError(f"a correction's label must be one of {', '.join(LABELS)}, got {self.label!r}")
        if not self.reviewer.strip():
            raise InputError("a correction names its reviewer (a key's id, a user, gold:<dataset>)")
        if self.origin not in ORIGINS:
            raise InputError(f"a correction's origin must be one of {', '.join(ORIGINS)}, got {self.origin!r}")

    @property
    def changed(self) -> bool | None:
        """Whether the ruling changes the check's verdict (``None``: the verdict is not known)."""
        return None if self.verdict is None else self.verdict != self.label

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "claim": self.claim,
            "label": self.label,
            "verdict": self.verdict,
            "note": self.note,
            "reviewer": self.reviewer,
            "origin": self.origin,
            "created_at": self.created_at,
            "check_ref": self.check_ref,
            "judgments": [j.to_dict() for j in self.judgments],
            "evidence": [e.to_dict() for e in self.evidence],
        }


@dataclass(frozen=True)
class Case:
    """The corrections of one claim, as a precedent: the agreed ``label`` (``None``: not agreed), and
    the corrections that gave it, newest first."""

    key: str
    claim: str
    label: str | None
    corrections: tuple[Correction, ...] = field(default_factory=tuple)

    @property
    def id(self) -> int:
        """The case's id: its newest agreeing correction's."""
        return self.agreeing[0].id if self.agreeing else self.corrections[0].id

    @property
    def agreeing(self) -> tuple[Correction, ...]:
        """The current rulings (each reviewer's newest) that give the agreed label, newest first."""
        return tuple(c for c in current_rulings(self.corrections) if c.label == self.label)

    @property
    def reviewers(self) -> tuple[str, ...]:
        """The distinct reviewers who gave the agreed label, newest first."""
        return tuple(dict.fromkeys(c.reviewer for c in self.agreeing))

    @property
    def ruled_at(self) -> str:
        return self.agreeing[0].created_at if self.agreeing else self.corrections[0].created_at

    @property
    def note(self) -> str:
        return next((c.note for c in self.agreeing if c.note), "")


def current_rulings(corrections: Sequence[Correction]) -> list[Correction]:
    """Each reviewer's newest correction of a claim, newest first: a reviewer who changed their mind counts
    for their last ruling only. ``corrections`` are newest first."""
    latest: dict[str, Correction] = {}
    for correction in corrections:
        latest.setdefault(correction.reviewer, correction)
    return list(latest.values())


def agreed_label(corrections: Sequence[Correction], require: int) -> str | None:
    """The label of the claim's current rulings (each reviewer's newest, :func:`current_rulings`) that the
    most reviewers give, if at least ``require`` give it; else ``None``. A tie goes to the newest ruling when
    one reviewer suffices (``require`` 1: the latest word stands), and to none when agreement is asked for.
    ``corrections`` are newest first."""
    reviewers: dict[str, int] = {}
    for ruling in current_rulings(corrections):
        reviewers[ruling.label] = reviewers.get(ruling.label, 0) + 1
    if not reviewers:
        return None
    ranked = sorted(reviewers, key=lambda label: -reviewers[label])  # stable: the newest label first on ties
    best = ranked[0]
    if reviewers[best] < require:
        return None
    if require > 1 and len(ranked) > 1 and reviewers[ranked[1]] == reviewers[best]:
        return None  # reviewers split evenly: a deployment that asks for agreement gets none
    return best


def _row(row: sqlite3.Row) -> Correction:
    return Correction(
        id=int(row["id"]),
        claim=row["claim"],
        label=row["label"],
        verdict=row["verdict"],
        note=row["note"],
        reviewer=row["reviewer"],
        origin=row["origin"],
        created_at=row["created_at"],
        check_ref=row["check_ref"],
        judgments=tuple(Judgment.from_dict(j) for j in json.loads(row["judgments"])),
        evidence=tuple(Evidence.from_dict(e) for e in json.loads(row["evidence"])),
    )


class MemoryStore:
    """The corrections in the SQLite file at ``path``. Reading a missing file finds nothing and creates
    nothing; the first :meth:`add` creates it (and its folder)."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path).expanduser()
        if self.path.is_dir():
            raise ConfigError(f"memory: {self.path} is a folder; give the path of a file (memory.sqlite)")

    @contextmanager
    def _db(self, write: bool) -> Iterator[sqlite3.Connection]:
        if write:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            connection = sqlite3.connect(self.path, timeout=10)
        else:
            connection = sqlite3.connect(f"{self.path.resolve().as_uri()}?mode=ro", uri=True, timeout=10)
        with closing(connection):
            connection.row_factory = sqlite3.Row
            try:
                if write:
                    self._prepare(connection)
                else:
                    self._check_schema(connection)
            except sqlite3.DatabaseError as exc:
                raise InputError(f"memory: {self.path} is not a factcheck memory ({exc})") from None
            with connection:
                yield connection

    def _prepare(self, connection: sqlite3.Connection) -> None:
        """Make a new file a memory, or check that an existing one is: a database of something else, or of
        another schema, is refused before anything is written to it."""
        tables = {row[0] for row in connection.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        if tables:
            self._check_schema(connection)
        use_wal(connection, 10)
        connection.execute("PRAGMA secure_delete=ON")  # a forgotten correction's text is overwritten, not left
        connection.executescript(_SCHEMA)
        connection.execute("INSERT OR IGNORE INTO meta VALUES ('schema', ?)", (str(MEMORY_SCHEMA),))

    def _check_schema(self, connection: sqlite3.Connection) -> None:
        try:
            row = connection.execute("SELECT value FROM meta WHERE key = 'schema'").fetchone()
        except sqlite3.DatabaseError as exc:
            raise InputError(f"memory: {self.path} is not a factcheck memory ({exc})") from None
        if row is None or row[0] != str(MEMORY_SCHEMA):
            raise InputError(f"memory: {self.path} has schema {row and row[0]!r}, expected {MEMORY_SCHEMA}")

    def exists(self) -> bool:
        return self.path.is_file()

    def add(self, correction: Correction) -> Correction:
        """Store ``correction`` (stamped now unless it has a time); the stored correction, with its id."""
        stamped = replace(correction, created_at=correction.created_at or now_iso(), note=correction.note[:MAX_NOTE])
        with self._db(write=True) as db:
            number = int(db.execute(_INSERT, _values(stamped)).lastrowid or 0)
        return replace(stamped, id=number)

    def add_many(self, corrections: Sequence[Correction]) -> int:
        """Store ``corrections`` in one transaction (an eval import); how many were stored."""
        created = now_iso()
        stamped = [replace(c, created_at=c.created_at or created, note=c.note[:MAX_NOTE]) for c in corrections]
        with self._db(write=True) as db:
            db.executemany(_INSERT, [_values(c) for c in stamped])
        return len(stamped)

    def get(self, number: int) -> Correction | None:
        if not self.exists():
            return None
        with self._db(write=False) as db:
            row = db.execute("SELECT * FROM corrections WHERE id = ?", (number,)).fetchone()
        return _row(row) if row is not None else None

    def corrections(self, *, limit: int | None = None, claim: str | None = None) -> list[Correction]:
        """The stored corrections, newest first (of one claim, when ``claim`` is given)."""
        if not self.exists():
            return []
        query, args = "SELECT * FROM corrections", []
        if claim is not None:
            query += " WHERE claim_key = ?"
            args.append(normalise_claim(claim))
        query += " ORDER BY id DESC"
        if limit is not None:
            query += f" LIMIT {int(limit)}"
        with self._db(write=False) as db:
            return [_row(row) for row in db.execute(query, args)]

    def forget(self, number: int) -> bool:
        """Remove correction ``number`` for good (False: there was none)."""
        if not self.exists():
            return False
        with self._db(write=True) as db:
            removed = db.execute("DELETE FROM corrections WHERE id = ?", (number,)).rowcount > 0
        if removed:  # nor kept in the write-ahead log until a checkpoint someday
            with closing(sqlite3.connect(self.path, timeout=10)) as db:
                db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        return removed

    def cases(self, require: int = 1) -> list[Case]:
        """Every claim's corrections as a case, the newest first; only cases with an agreed label
        (:func:`agreed_label`) that lends a verdict (TRUE or FALSE)."""
        grouped: dict[str, list[Correction]] = {}
        for correction in self.corrections():
            grouped.setdefault(normalise_claim(correction.claim), []).append(correction)
        found = []
        for key, corrections in grouped.items():
            label = agreed_label(corrections, require)
            if label in ("TRUE", "FALSE"):
                agreeing = [c for c in corrections if c.label == label]
                found.append(Case(key, agreeing[0].claim, label, tuple(corrections)))
        return found

    def stamp(self) -> str:
        """What changes whenever the store does (its newest id, count and file time): a reader's index of
        the cases is rebuilt when it changes."""
        if not self.exists():
            return "absent"
        with self._db(write=False) as db:
            newest, count = db.execute("SELECT max(id), count(*) FROM corrections").fetchone()
        wal = self.path.with_name(self.path.name + "-wal")
        mtimes = [self.path.stat().st_mtime_ns, wal.stat().st_mtime_ns if wal.exists() else 0]
        return f"{newest}-{count}-{max(mtimes)}"


class StampWatch:
    """What changes whenever the store at ``path`` does, cheap enough to ask on every request: SQLite's
    ``PRAGMA data_version`` on one connection kept open (it moves whenever another connection, in this
    process or another, commits), and the file's identity (a file replaced or removed is another store).
    No query of the tables, no thread: about ten microseconds, and never a wait (a write under way leaves a
    reader of a WAL database the last commit). The stamp is not :meth:`MemoryStore.stamp`'s; two stamps are
    equal only when nothing was written between them. Where the file cannot be read (not a database, no
    permission), each call gives a stamp never given before, so nothing keyed by it is reused."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path).expanduser()
        self._lock = threading.Lock()
        self._db: sqlite3.Connection | None = None
        self._file: tuple[int, int] | None = None  # (device, inode) of the file the connection reads
        self._version: int | None = None
        self._changes = 0  # how many times the store was seen to change
        self._unread = itertools.count()

    def stamp(self) -> str:
        try:
            stat = os.stat(self.path)
        except FileNotFoundError:
            return "absent"
        except OSError:
            return f"unreadable-{next(self._unread)}"
        with self._lock:
            try:
                if self._db is None or self._file != (stat.st_dev, stat.st_ino):
                    self._close()
                    uri = f"{self.path.resolve().as_uri()}?mode=ro"
                    self._db = sqlite3.connect(uri, uri=True, timeout=0, check_same_thread=False)
                    self._file = (stat.st_dev, stat.st_ino)
                version = int(self._db.execute("PRAGMA data_version").fetchone()[0])
            except sqlite3.Error:
                self._close()
                return f"unreadable-{next(self._unread)}"
            if version != self._version:
                self._version = version
                self._changes += 1
            return f"{stat.st_dev}-{stat.st_ino}-{self._changes}"

    def _close(self) -> None:
        if self._db is not None:
            self._db.close()
        self._db, self._file, self._version = None, None, None
        self._changes += 1  # a new connection's data_version starts anew: never the old stamp again

    def close(self) -> None:
        with self._lock:
            self._close()


_INSERT = (
    "INSERT INTO corrections (claim, claim_key, label, verdict, note, reviewer, origin, created_at, check_ref,"
    " judgments, evidence) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
)


def _values(c: Correction) -> tuple[Any, ...]:
    return (
        c.claim,
        normalise_claim(c.claim),
        c.label,
        c.verdict,
        c.note,
        c.reviewer,
        c.origin,
        c.created_at,
        c.check_ref,
        json.dumps([j.to_dict() for j in c.judgments]),
        json.dumps([e.to_dict() for e in c.evidence]),
    )


__all__ = ["LABELS", "MEMORY_SCHEMA", "Case", "Correction", "MemoryStore", "agreed_label", "current_rulings", "now_iso"]
