"""JSON Lines read with each record's line number.

>>> import tempfile, pathlib
>>> path = pathlib.Path(tempfile.mkdtemp()) / "x.jsonl"
>>> _ = path.write_text('{"a": 1}\\n\\n# note\\n[2]\\n')
>>> list(iter_jsonl(path, comments=True))
[(1, {'a': 1}), (4, [2])]
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from nlibias.errors import DataError, NlibiasError
from nlibias.io.json_schema import not_finite
from nlibias.textio.json_text import parse_json
from nlibias.textio.text_files import read_text


def read_json_file(path: str | Path, *, allow_nan: bool = False) -> Any:
    """The JSON value of a whole file, refused with its line when it is not UTF-8 JSON.

    >>> import tempfile, pathlib
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "x.json"
    >>> _ = path.write_text('{"a":\\n  [1,}')
    >>> read_json_file(path)
    Traceback (most recent call last):
    nlibias.errors.SourceError: ...x.json:2: invalid JSON: Expecting value (column 6)
    """
    return parse_json(path, read_text(path), allow_nan=allow_nan)


def json_object_or_none(path: str | Path) -> dict[str, Any] | None:
    """The JSON object in ``path``; None when it is missing, unreadable, damaged (not UTF-8 JSON, a
    key given twice in one object) or no object (a record that is read again or done without).

    >>> json_object_or_none("no/such/file.json") is None
    True
    >>> import tempfile, pathlib
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "x.json"
    >>> _ = path.write_text('{"n": 1, "n": 2}')
    >>> json_object_or_none(path) is None
    True
    """
    try:
        value = read_json_file(path, allow_nan=True)
    except (OSError, NlibiasError):  # not UTF-8, not JSON, a key twice
        return None
    return value if isinstance(value, dict) else None


def dumps_finite(value: Any, **options: Any) -> str:
    """``json.dumps(value, allow_nan=False, **options)``, a NaN refused naming its field.

    >>> dumps_finite({"id": "a", "probs": {"entailment": float("nan")}})
    Traceback (most recent call last):
    nlibias.errors.DataError: probs.entailment is nan, which JSON cannot hold (write a finite number, or leave the field out)
    """
    try:
        return json.dumps(value, allow_nan=False, **options)
    except ValueError as error:
        where = next(not_finite(value), None)
        if where is None:
            raise
        field, number = ".".join(map(str, where[0])) or "value", where[1]
        raise DataError(
            f"{field} is {number!r}, which JSON cannot hold",
            field=field,
            fix="write a finite number, or leave the field out",
        ) from error


def iter_jsonl(path: str | Path, *, comments: bool = False) -> Iterator[tuple[int, Any]]:
    """``(line, value)`` of each non-blank line (``comments``: skipping ``#`` lines)."""
    for line_number, _, value in iter_jsonl_offsets(path, comments=comments):
        yield line_number, value


def iter_jsonl_offsets(path: str | Path, *, comments: bool = False) -> Iterator[tuple[int, int, Any]]:
    """:func:`iter_jsonl` with each line's byte offset (for :func:`read_jsonl_record`).

    >>> import tempfile, pathlib
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "x.jsonl"
    >>> _ = path.write_text('{"a": "é"}\\n\\n[2]\\n', encoding="utf-8")
    >>> [(line, offset) for line, offset, _ in iter_jsonl_offsets(path)], read_jsonl_record(path, 13)
    ([(1, 0), (3, 13)], [2])
    """
    path = Path(path)
    offset = 0
    with path.open("rb") as handle:
        for line_number, line in enumerate(handle, start=1):
            start, offset = offset, offset + len(line)
            stripped = line.strip()
            if not stripped or (comments and stripped.startswith(b"#")):
                continue
            yield line_number, start, parse_json(path, line, line=line_number)


def read_jsonl_record(path: str | Path, offset: int) -> Any:
    path = Path(path)
    with path.open("rb") as handle:
        handle.seek(offset)
        return parse_json(path, handle.readline())
