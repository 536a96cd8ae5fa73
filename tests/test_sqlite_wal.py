"""Switching to WAL while another connection holds a lock: SQLite refuses at once ("database is
locked", no busy handler), so a second annotation server or audit worker opening the same fresh
file used to fail now and then (seen in CI). ``enable_wal`` waits for the lock instead."""

from __future__ import annotations

import sqlite3
import threading
import time
from pathlib import Path

import pytest

from nlibias.runtime.cache import PredictionCache
from nlibias.runtime.sqlite_wal import enable_wal
from nlibias.validation.store import AnnotationStore


def _hold_a_write_lock(path: Path, table: str = "t") -> sqlite3.Connection:
    holder = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    holder.execute(f"CREATE TABLE IF NOT EXISTS {table} (a)")
    holder.execute("BEGIN IMMEDIATE")
    holder.execute(f"INSERT INTO {table} VALUES (1)")
    return holder


def _release_after(holder: sqlite3.Connection, seconds: float) -> threading.Thread:
    def release() -> None:
        time.sleep(seconds)
        holder.execute("COMMIT")

    thread = threading.Thread(target=release)
    thread.start()
    return thread


def test_the_plain_pragma_fails_at_once_while_a_lock_is_held(tmp_path: Path) -> None:
    """The SQLite behaviour the helper exists for (if this stops failing, the helper is moot)."""
    holder = _hold_a_write_lock(tmp_path / "x.sqlite")
    other = sqlite3.connect(tmp_path / "x.sqlite", timeout=5, isolation_level=None)
    with pytest.raises(sqlite3.OperationalError, match="locked"):
        other.execute("PRAGMA journal_mode=WAL")
    holder.execute("COMMIT")


def test_enable_wal_waits_for_the_lock(tmp_path: Path) -> None:
    holder = _hold_a_write_lock(tmp_path / "x.sqlite")
    release = _release_after(holder, 0.3)
    other = sqlite3.connect(tmp_path / "x.sqlite", timeout=5, isolation_level=None)
    started = time.monotonic()
    enable_wal(other, timeout_s=5)
    release.join()
    assert time.monotonic() - started >= 0.25  # it waited for the commit rather than failing
    assert other.execute("PRAGMA journal_mode").fetchone()[0] == "wal"


def test_enable_wal_gives_up_after_its_timeout(tmp_path: Path) -> None:
    holder = _hold_a_write_lock(tmp_path / "x.sqlite")
    other = sqlite3.connect(tmp_path / "x.sqlite", timeout=5, isolation_level=None)
    with pytest.raises(sqlite3.OperationalError, match="locked"):
        enable_wal(other, timeout_s=0.2)
    holder.execute("COMMIT")


@pytest.mark.parametrize(
    ("opener", "table"), [(AnnotationStore, "suggestions"), (PredictionCache, "outputs")]
)
def test_stores_open_while_another_connection_holds_a_lock(tmp_path: Path, opener: type, table: str) -> None:
    path = tmp_path / "db.sqlite"
    holder = _hold_a_write_lock(path, table)  # a table of the store's own (another tool's is refused)
    release = _release_after(holder, 0.3)
    opener(path)  # used to raise "database is locked" at once
    release.join()
