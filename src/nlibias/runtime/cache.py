"""Prediction cache: an SQLite file (WAL) keyed by everything that determines a model output."""

from __future__ import annotations

import hashlib
import json
import sqlite3
import zlib
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import closing, contextmanager
from pathlib import Path
from typing import Any

from platformdirs import user_cache_dir

from nlibias.errors import DamagedFileError
from nlibias.runtime.sqlite_wal import database_fault, enable_wal, refuse_foreign_tables
from nlibias.textio.env_paths import env_path

_LOOKUP_CHUNK = 500  # old SQLite builds bind at most 999 variables
_TABLES = {
    "outputs": "CREATE TABLE IF NOT EXISTS outputs (key TEXT PRIMARY KEY, fingerprint TEXT, value TEXT NOT NULL)",
    "identities": "CREATE TABLE IF NOT EXISTS identities (fingerprint TEXT PRIMARY KEY, identity TEXT NOT NULL)",
}


def default_cache_path() -> Path:
    """``$NLIBIAS_CACHE``, else ``predictions.sqlite`` in the user cache directory."""
    return env_path("NLIBIAS_CACHE") or Path(user_cache_dir("nlibias")) / "predictions.sqlite"


def identity_fingerprint(identity: Mapping[str, Any]) -> str:
    canonical = json.dumps(identity, sort_keys=True, ensure_ascii=False, default=str)
    return hashlib.sha256(canonical.encode()).hexdigest()[:32]


def cache_key(fingerprint: str, *inputs: str) -> str:
    """Key of one model output: the identity fingerprint and the exact input texts.

    >>> cache_key("abc", "P.", "H.") == cache_key("abc", "P.", "H."), cache_key("abc", "P.") == cache_key("abd", "P.")
    (True, False)
    """
    digest = hashlib.sha256(fingerprint.encode())
    for text in inputs:
        digest.update(b"\x00")
        digest.update(text.encode())
    return digest.hexdigest()


class PredictionCache:
    """Key → JSON value store; a value that does not decode or pass ``check`` is never returned.

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
        self.unkeyed = 0  # values without a checksum of their key (also counted as rejected)
        _refuse_other_file(self.path)
        with self._guard():
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._conn = sqlite3.connect(str(self.path), timeout=60)
            try:
                refuse_foreign_tables(
                    self._conn,
                    self.path,
                    _TABLES,
                    "a prediction cache",
                    fix="name a prediction cache or a new file as {cache}, or set NLIBIAS_CACHE",
                    parameter="cache",
                )
            except DamagedFileError:
                self._conn.close()
                raise
            enable_wal(self._conn, timeout_s=60.0)
            self._conn.execute("PRAGMA synchronous=NORMAL")
            for create in _TABLES.values():
                self._conn.execute(create)
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
                elsewhere="use another cache file ({parameter cache}, or NLIBIAS_CACHE)",
                parameter="cache",
            ) from exc

    def register_identity(self, fingerprint: str, identity: Mapping[str, Any]) -> None:
        with self._guard():
            self._conn.execute(
                "INSERT OR IGNORE INTO identities VALUES (?, ?)",
                (fingerprint, json.dumps(identity, sort_keys=True, default=str)),
            )
            self._conn.commit()

    def get_many(self, keys: Sequence[str]) -> dict[str, Any]:
        return self.get_checked(keys)[0]

    def get_checked(
        self, keys: Sequence[str], check: Callable[[Any], bool] | None = None
    ) -> tuple[dict[str, Any], int]:
        """The values under ``keys`` that decode and pass ``check``, and how many were rejected."""
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
                        value = decode_value(text, key)
                        usable = check is None or bool(check(value))
                    except UnkeyedValue:
                        usable = False
                        self.unkeyed += 1
                    except (ValueError, TypeError, KeyError, AttributeError, IndexError):
                        usable = False
                    if usable:
                        found[key] = value
                    else:
                        rejected += 1
        return found, rejected

    def put_many(self, items: Iterable[tuple[str, Any]], *, fingerprint: str = "") -> None:
        rows = [(key, fingerprint, encode_value(value, key)) for key, value in items]
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


def cache_problem(path: Path) -> str | None:
    """Why every audit fails to open ``path`` as the prediction cache (a folder, a file of another
    kind: :class:`PredictionCache`'s own check), or None."""
    if path.is_dir():
        return "a folder, not a file: every audit fails to open it"
    try:
        _refuse_other_file(path)
        if path.is_file() and path.stat().st_size:
            with closing(sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True)) as db:
                refuse_foreign_tables(db, path, _TABLES, "a prediction cache", fix="")
    except DamagedFileError as error:
        return f"{error.reason}: every audit refuses it"
    except sqlite3.Error:  # damaged or locked: the audit's own error says which
        return None
    return None


def _refuse_other_file(path: Path) -> None:
    """Refuse, before SQLite writes into it, a file that is not an SQLite database (an empty one is new)."""
    try:
        with path.open("rb") as file:
            head = file.read(16)
    except OSError:  # absent (created) or unusable (SQLite's error says why)
        return
    if head and head != b"SQLite format 3\x00":
        raise DamagedFileError(
            path,
            "the file is not a prediction cache (not an SQLite database)",
            fix="name a prediction cache or a new file in {cache}, or, if it was a prediction cache, move "
            "the file aside (it is rebuilt); nothing in your run directory was changed",
            parameter="cache",
        )


class UnkeyedValue(ValueError):
    """A stored value without a checksum of its key (it could be another key's)."""


def encode_value(value: Any, key: str = "") -> str:
    """A value as stored under ``key``: its JSON, ``#K`` and a CRC-32 of the key and that JSON.

    >>> encode_value([0.5, 0.5, 0.0], "k1")
    '[0.5, 0.5, 0.0]#Kbf7c52a5'
    >>> decode_value(encode_value([0.5, 0.5, 0.0], "k1"), "k2")
    Traceback (most recent call last):
    ValueError: the stored value does not match its checksum (damaged, or moved from another key)
    """
    text = json.dumps(value)
    return f"{text}#K{_checksum(key, text):08x}"


def _checksum(key: str, text: str) -> int:
    return zlib.crc32(text.encode(), zlib.crc32(key.encode() + b"\x00"))  # the CRC of key, NUL, text


def decode_value(stored: str, key: str = "") -> Any:
    """The value of :func:`encode_value`'s text under ``key``; ValueError when damaged or moved."""
    text, mark, checksum = stored.rpartition("#K")
    if not mark or len(checksum) != 8 or not all(c in "0123456789abcdefABCDEF" for c in checksum):
        raise UnkeyedValue(
            "the stored value has no checksum of its key (written by an older nlibias, or by hand)"
        )
    if _checksum(key, text) != int(checksum, 16):
        raise ValueError("the stored value does not match its checksum (damaged, or moved from another key)")
    return json.loads(text)


def is_probability_row(value: Any, *, size: int = 3, tolerance: float = 1e-3) -> bool:
    """True for ``size`` finite numbers in [0, 1] that sum to 1 within ``tolerance``.

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
