"""Prediction cache: an embedded SQLite file keyed by everything that determines a model output.

Each batch is committed as soon as it is computed, in WAL mode, so a process killed with SIGKILL
loses at most the batch in flight, and a rerun recomputes only what was not written. Look-ups are
batched (one query per chunk of keys), never one query per sample.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
import zlib
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from platformdirs import user_cache_dir

from nlibias.runtime.sqlite_wal import database_fault, enable_wal

_LOOKUP_CHUNK = 500  # SQLite's default limit on bound variables is 999 on old builds


def default_cache_path() -> Path:
    """``$NLIBIAS_CACHE`` if set, else ``predictions.sqlite`` in the user cache directory."""
    import os

    override = os.environ.get("NLIBIAS_CACHE")
    if override:
        return Path(override)
    return Path(user_cache_dir("nlibias")) / "predictions.sqlite"


def identity_fingerprint(identity: Mapping[str, Any]) -> str:
    """A short, stable hash of a backend identity (sorted-key JSON)."""
    canonical = json.dumps(identity, sort_keys=True, ensure_ascii=False, default=str)
    return hashlib.sha256(canonical.encode()).hexdigest()[:32]


def cache_key(fingerprint: str, *inputs: str) -> str:
    """Key of one model output: the identity fingerprint plus the exact input texts.

    >>> cache_key("abc", "P.", "H.") == cache_key("abc", "P.", "H.")
    True
    >>> cache_key("abc", "P.", "H.") == cache_key("abd", "P.", "H.")
    False
    """
    digest = hashlib.sha256(fingerprint.encode())
    for text in inputs:
        digest.update(b"\x00")
        digest.update(text.encode())
    return digest.hexdigest()


class PredictionCache:
    """Key → JSON value store on SQLite.

    A value that cannot be decoded, or that the reader's ``check`` refuses, is never returned:
    :meth:`get_checked` counts it as rejected, and the caller recomputes it (the new value
    replaces it). An SQLite error names the file and the fix (:func:`database_fault`).

    >>> import tempfile, pathlib
    >>> cache = PredictionCache(pathlib.Path(tempfile.mkdtemp()) / "c.sqlite")
    >>> cache.put_many([("k", [0.1, 0.2, 0.7]), ("bad", [0.9, 0.9, 0.1])])
    >>> cache.get_many(["k", "missing"])
    {'k': [0.1, 0.2, 0.7]}
    >>> cache.get_checked(["k", "bad"], check=lambda v: abs(sum(v) - 1) < 1e-3)
    ({'k': [0.1, 0.2, 0.7]}, 1)
    """

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        with self._guard():
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._conn = sqlite3.connect(str(self.path), timeout=60)
            enable_wal(self._conn, timeout_s=60.0)
            self._conn.execute("PRAGMA synchronous=NORMAL")
            self._conn.execute(
                "CREATE TABLE IF NOT EXISTS outputs (key TEXT PRIMARY KEY, fingerprint TEXT, value TEXT NOT NULL)"
            )
            self._conn.execute(
                "CREATE TABLE IF NOT EXISTS identities (fingerprint TEXT PRIMARY KEY, identity TEXT NOT NULL)"
            )
            self._conn.commit()

    @contextmanager
    def _guard(self) -> Iterator[None]:
        try:
            yield
        except sqlite3.Error as exc:
            raise database_fault(
                self.path,
                exc,
                "the prediction cache",
                elsewhere="use another cache file (parameter cache, or NLIBIAS_CACHE)",
            ) from exc

    def register_identity(self, fingerprint: str, identity: Mapping[str, Any]) -> None:
        """Record which backend identity a fingerprint stands for (for humans inspecting the file)."""
        with self._guard():
            self._conn.execute(
                "INSERT OR IGNORE INTO identities VALUES (?, ?)",
                (fingerprint, json.dumps(identity, sort_keys=True, default=str)),
            )
            self._conn.commit()

    def get_many(self, keys: Sequence[str]) -> dict[str, Any]:
        """The decodable values stored under ``keys`` (see :meth:`get_checked`)."""
        return self.get_checked(keys)[0]

    def get_checked(
        self, keys: Sequence[str], check: Callable[[Any], bool] | None = None
    ) -> tuple[dict[str, Any], int]:
        """The values stored under ``keys`` that decode as JSON and pass ``check``, and how many
        stored values were rejected (damaged: to be recomputed, never used)."""
        found: dict[str, Any] = {}
        rejected = 0
        unique = list(dict.fromkeys(keys))
        with self._guard():
            for start in range(0, len(unique), _LOOKUP_CHUNK):
                chunk = unique[start : start + _LOOKUP_CHUNK]
                marks = ",".join("?" * len(chunk))
                rows = self._conn.execute(f"SELECT key, value FROM outputs WHERE key IN ({marks})", chunk)
                for key, text in rows:
                    try:
                        value = decode_value(text)
                        usable = check is None or bool(check(value))
                    except (ValueError, TypeError, KeyError, AttributeError, IndexError):
                        usable = False
                    if usable:
                        found[key] = value
                    else:
                        rejected += 1
        return found, rejected

    def put_many(self, items: Iterable[tuple[str, Any]], *, fingerprint: str = "") -> None:
        """Write and commit in one transaction (the unit a crash can lose)."""
        rows = [(key, fingerprint, encode_value(value)) for key, value in items]
        with self._guard(), self._conn:
            self._conn.executemany("INSERT OR REPLACE INTO outputs VALUES (?, ?, ?)", rows)

    def __len__(self) -> int:
        with self._guard():
            return int(self._conn.execute("SELECT COUNT(*) FROM outputs").fetchone()[0])

    def close(self) -> None:
        self._conn.close()

    def __enter__(self) -> PredictionCache:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def encode_value(value: Any) -> str:
    """A value as the cache stores it: its JSON and a CRC-32 of that JSON (``#`` + 8 hex digits),
    so that a flipped bit in a stored value is found on reading even where the value still looks
    plausible (SQLite checks its pages' structure, not the bytes of a value).

    >>> encode_value([0.5, 0.5, 0.0])
    '[0.5, 0.5, 0.0]#abfc45f5'
    >>> decode_value(encode_value([0.5, 0.5, 0.0])), decode_value("[0.5, 0.5, 0.0]")  # legacy: no CRC
    ([0.5, 0.5, 0.0], [0.5, 0.5, 0.0])
    >>> decode_value("[0.5, 0.4, 0.0]#abfc45f5")
    Traceback (most recent call last):
    ValueError: the stored value does not match its checksum
    """
    text = json.dumps(value)
    return f"{text}#{zlib.crc32(text.encode()):08x}"


def decode_value(stored: str) -> Any:
    """The value of :func:`encode_value`'s text (or of a value stored before checksums: plain
    JSON); ``ValueError`` when the checksum does not match or the JSON is damaged."""
    text, mark, checksum = stored.rpartition("#")
    if mark and len(checksum) == 8:
        try:
            expected = int(checksum, 16)
        except ValueError:  # not a checksum: a '#' inside a legacy value's string
            return json.loads(stored)
        if zlib.crc32(text.encode()) != expected:
            raise ValueError("the stored value does not match its checksum")
        return json.loads(text)
    return json.loads(stored)


def is_probability_row(value: Any, *, size: int = 3, tolerance: float = 1e-3) -> bool:
    """True for ``size`` finite numbers in [0, 1] that sum to 1 within ``tolerance`` (what a
    cached classifier output must be).

    >>> is_probability_row([0.2, 0.3, 0.5]), is_probability_row([0.9, 0.9, 0.1]), is_probability_row([1, None, 0])
    (True, False, False)
    >>> is_probability_row([float("nan"), 0.5, 0.5]), is_probability_row([0.5, 0.5])
    (False, False)
    """
    if type(value) is not list or len(value) != size:
        return False
    total = 0.0
    for x in value:
        if type(x) is not float and type(x) is not int:  # bool, None, str: no
            return False
        if not 0.0 <= x <= 1.0:  # NaN fails too
            return False
        total += x
    return abs(total - 1.0) <= tolerance
