"""SQLite in write-ahead logging, the switch retried while another connection holds a lock."""

from __future__ import annotations

import os
import sqlite3
import time
from collections.abc import Collection
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


def refuse_foreign_tables(
    db: sqlite3.Connection,
    path: str | Path,
    ours: Collection[str],
    what: str,
    *,
    fix: str,
    parameter: str | None = None,
) -> None:
    """Refuse, before anything is written into it, a database that holds tables other than ``ours``
    (another tool's database named as ``what``); SQLite's own tables (``sqlite_*``) are nobody's.

    >>> db = sqlite3.connect(":memory:")
    >>> _ = db.execute("CREATE TABLE notes (text TEXT)")
    >>> refuse_foreign_tables(db, "o.sqlite", {"outputs"}, "a prediction cache", fix="name another file")
    Traceback (most recent call last):
    nlibias.errors.DamagedFileError: o.sqlite: the database is not a prediction cache: it holds the table notes, which is not a prediction cache's; nothing was written into it (name another file)
    """
    rows = db.execute("SELECT name FROM sqlite_master WHERE type IN ('table', 'view')").fetchall()
    foreign = sorted(
        str(name) for (name,) in rows if name not in ours and not str(name).startswith("sqlite_")
    )
    if foreign:
        shown = ", ".join(foreign[:5]) + (f" and {len(foreign) - 5} more" if len(foreign) > 5 else "")
        tables = f"the table {shown}, which is" if len(foreign) == 1 else f"the tables {shown}, which are"
        raise DamagedFileError(
            path,
            f"the database is not {what}: it holds {tables} not {what}'s; nothing was written into it",
            fix=fix,
            parameter=parameter,
        )


_FULL = 1 << 20
"""Free bytes below which a failed write of a database is put down to a full disk: SQLite says
"disk I/O error" when its shared-memory index cannot grow (32 KiB at a time)."""


def _space_left(path: str | Path) -> int:
    """Bytes free to this user on the device of ``path``'s folder (very many where unknown)."""
    try:
        found = os.statvfs(Path(path).parent)
    except (OSError, AttributeError):  # no statvfs (Windows), or the folder is gone
        return 1 << 62
    return found.f_bavail * found.f_frsize


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
        full = "full" in message.lower() or _space_left(path) < _FULL
        return FileAccessError(
            path,
            f"cannot use {what} ({message}{': no space left on the device' if full else ''})",
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
