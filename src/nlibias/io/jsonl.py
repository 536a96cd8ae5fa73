"""Reading JSON Lines files with the line number of every record (for errors that name it).

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

from nlibias.errors import SourceError
from nlibias.textio.text_files import check_json_text, read_text


def read_json_file(path: str | Path) -> Any:
    """The JSON value of a whole file, read as UTF-8; a file that is not UTF-8 or not JSON is
    refused with its line.

    >>> import tempfile, pathlib
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "x.json"
    >>> _ = path.write_text('{"a":\\n  [1,}')
    >>> read_json_file(path)
    Traceback (most recent call last):
    nlibias.errors.SourceError: ...x.json:2: invalid JSON: Expecting value
    """
    text = read_text(path)
    try:
        return check_json_text(path, text, json.loads(text))
    except json.JSONDecodeError as exc:
        raise SourceError(path, None, f"invalid JSON: {exc.msg}", line=exc.lineno) from None


def iter_jsonl(path: str | Path, *, comments: bool = False) -> Iterator[tuple[int, Any]]:
    """``(line number, parsed value)`` for each non-blank line (and, with ``comments``, each line
    not starting with ``#``); a line that is not JSON raises :class:`SourceError` naming it."""
    for line_number, _, value in iter_jsonl_offsets(path, comments=comments):
        yield line_number, value


def iter_jsonl_offsets(path: str | Path, *, comments: bool = False) -> Iterator[tuple[int, int, Any]]:
    """:func:`iter_jsonl` with the byte offset where each record's line starts (to read one
    record again later: :func:`read_jsonl_record`).

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
            yield line_number, start, _parse(path, line, line_number)


def read_jsonl_record(path: str | Path, offset: int) -> Any:
    """The JSON value on the line that starts at byte ``offset``."""
    path = Path(path)
    with path.open("rb") as handle:
        handle.seek(offset)
        return _parse(path, handle.readline(), None)


def _parse(path: Path, line: bytes, line_number: int | None) -> Any:
    try:
        value = json.loads(line)
    except json.JSONDecodeError as exc:
        raise SourceError(path, None, f"invalid JSON: {exc.msg}", line=line_number) from None
    except UnicodeDecodeError:
        raise SourceError(
            path, None, "not UTF-8 text", line=line_number, fix="save the file as UTF-8"
        ) from None
    if b"\\u" in line:  # a lone surrogate escape is refused now, not when the text is written
        check_json_text(path, line.decode("utf-8"), value, line=line_number)
    return value
