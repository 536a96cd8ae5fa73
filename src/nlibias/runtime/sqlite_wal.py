"""SQLite in write-ahead logging, the switch retried while another connection holds a lock."""

from __future__ import annotations

import sqlite3
import time
from pathlib import Path

from nlibias.errors import DamagedFileError, FileAccessError, NlibiasError


def enable_wal(db: sqlite3.Connection, *, timeout_s: float = 30.0) -> None:
    deadline = time.monotonic() + timeout_s
    delay = 0.005
    while True:
        try:
            if db.execute("PRAGMA journal_mode").fetchone()[0] != "wal":
                db.execute("PRAGMA journal_mode=WAL")
            return
        except sqlite3.OperationalError as error:
            if "locked" not in str(error) and "busy" not in str(error):
                raise
            if time.monotonic() + delay > deadline:
                raise
            time.sleep(delay)
            delay = min(2 * delay, 0.25)


def database_fault(
    path: str | Path,
    error: sqlite3.Error,
    what: str,
    *,
    elsewhere: str,
    damaged_fix: str | None = None,
    parameter: str | None = None,
) -> NlibiasError:
    """The nlibias error for an SQLite error on ``path``: damaged or unwritable.

    >>> str(database_fault("c.sqlite", sqlite3.DatabaseError("file is not a database"), "the prediction cache",
    ...                    elsewhere="set NLIBIAS_CACHE"))[:60]
    'c.sqlite: the prediction cache is damaged (file is not a dat'
    """
    message = str(error)
    unwritable = ("readonly", "read-only", "unable to open", "disk i/o", "full", "permission", "locked")
    if any(word in message.lower() for word in unwritable):
        return FileAccessError(
            path,
            f"cannot use {what} ({message})",
            fix=f"make the file and its folder writable, free space, or {elsewhere}; nothing in your run "
            "directory was changed",
            parameter=parameter,
        )
    return DamagedFileError(
        path,
        f"{what} is damaged ({message})",
        fix=damaged_fix
        or f"move the file aside (it is rebuilt) or {elsewhere}; nothing in your run directory was changed",
        parameter=parameter,
    )
