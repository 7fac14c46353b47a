"""Switching a SQLite file to write-ahead logging when several processes open it at once.

``PRAGMA journal_mode=WAL`` on a file still in rollback mode needs the file to itself, and SQLite answers
"database is locked" at once, without calling the busy handler, when another connection holds it meanwhile (two
processes opening a new cache together do). The switch is retried here, a little later each time, until
``timeout_s``; once any connection has made the switch it is kept in the file, and the pragma costs nothing.
"""

from __future__ import annotations

import sqlite3
import time


def busy(exc: sqlite3.Error) -> bool:
    """True for a database another connection holds (busy, locked): a passing state, not a broken file."""
    message = str(exc).lower()
    return "locked" in message or "busy" in message


def use_wal(connection: sqlite3.Connection, timeout_s: float = 30.0) -> None:
    """Put the connection's file in WAL mode, waiting out (up to ``timeout_s``) another process that holds it."""
    deadline = time.monotonic() + timeout_s
    delay = 0.005
    while True:
        try:
            connection.execute("PRAGMA journal_mode=WAL")
            return
        except sqlite3.OperationalError as exc:
            if not busy(exc) or time.monotonic() + delay > deadline:
                raise
        time.sleep(delay)
        delay = min(delay * 2, 0.25)
