"""Atomic file writes: write to a temporary file in the same folder, then rename over the target.

A reader (or a resumed run) therefore sees either the old file or the complete new one, never a
half-written file.
"""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from types import TracebackType
from typing import Any


@contextmanager
def atomic_path(path: str | Path) -> Iterator[Path]:
    """Yield a temporary path next to ``path``; on success it replaces ``path``.

    >>> import tempfile, pathlib
    >>> target = pathlib.Path(tempfile.mkdtemp()) / "out.txt"
    >>> with atomic_path(target) as tmp:
    ...     _ = tmp.write_text("done")
    >>> target.read_text()
    'done'
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp_name = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".part")
    os.close(fd)
    tmp = Path(tmp_name)
    try:
        yield tmp
        os.replace(tmp, path)
    finally:
        if tmp.exists():
            tmp.unlink()


class PendingFile:
    """A file written under a temporary name next to ``path`` that replaces ``path`` only on
    :meth:`commit`; leaving the ``with`` block without a commit (an error, a change of plan)
    deletes it. For a file whose writing starts before the run knows it will succeed.

    >>> import tempfile, pathlib
    >>> target = pathlib.Path(tempfile.mkdtemp()) / "rows.jsonl"
    >>> with PendingFile(target) as pending:
    ...     _ = pending.handle.write(b"{}\\n")
    ...     before = target.exists()
    ...     pending.commit()
    >>> before, target.read_bytes()
    (False, b'{}\\n')
    """

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp_name = tempfile.mkstemp(dir=self.path.parent, prefix=f".{self.path.name}.", suffix=".part")
        self._tmp = Path(tmp_name)
        self.handle = os.fdopen(fd, "wb")
        """Binary: write UTF-8 bytes."""
        self.committed = False

    @property
    def temporary_path(self) -> Path:
        """Where the file is written until :meth:`commit`."""
        return self._tmp

    def commit(self) -> None:
        """Close the file and rename it over :attr:`path`."""
        self.handle.close()
        os.replace(self._tmp, self.path)
        self.committed = True

    def discard(self) -> None:
        if not self.committed:
            self.handle.close()
            self._tmp.unlink(missing_ok=True)

    def __enter__(self) -> PendingFile:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None
    ) -> None:
        self.discard()


def atomic_write_text(path: str | Path, text: str) -> None:
    with atomic_path(path) as tmp:
        tmp.write_text(text, encoding="utf-8")


def write_json(path: str | Path, data: Any) -> None:
    """Pretty JSON, atomically; ``NaN`` is refused (JSON has no NaN)."""
    atomic_write_text(path, json.dumps(data, indent=2, ensure_ascii=False, allow_nan=False) + "\n")


def json_line(record: Any) -> str:
    """One JSON Lines record as every JSONL file of nlibias writes it (``NaN`` refused).

    >>> json_line({"id": "é", "p": 0.5})
    '{"id": "é", "p": 0.5}\\n'
    """
    return json.dumps(record, ensure_ascii=False, allow_nan=False) + "\n"


def write_lines(path: str | Path, lines: Iterable[str]) -> None:
    """Text lines (each ending in a newline), atomically; ``lines`` may be a generator."""
    with atomic_path(path) as tmp, tmp.open("w", encoding="utf-8") as handle:
        handle.writelines(lines)


def write_jsonl(path: str | Path, records: Iterable[dict[str, Any]]) -> None:
    write_lines(path, (json_line(record) for record in records))
