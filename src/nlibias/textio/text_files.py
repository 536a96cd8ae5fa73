"""The one way nlibias reads a text file (CSV, TXT, YAML, JSON): UTF-8, an optional byte-order
mark dropped, and an error that names the file, the line and the column of the first byte that
is not UTF-8. CSV files are read strictly: a short or long row, an unterminated quote or a field
over the size limit is refused with its line, never dropped or padded.

>>> import tempfile, pathlib
>>> path = pathlib.Path(tempfile.mkdtemp()) / "x.csv"
>>> _ = path.write_bytes(b"a,b\\n1,2\\n3,\\xff\\n")
>>> read_text(path)
Traceback (most recent call last):
nlibias.errors.SourceError: ...x.csv:3: not UTF-8 text: byte 0xff at column 3 (save the file as UTF-8)
>>> _ = path.write_text("a,b\\n1,2\\n3\\n")
>>> list(read_csv_records(path))
Traceback (most recent call last):
nlibias.errors.SourceError: ...x.csv:3: row has 1 field, the header has 2 (a,b) (check the row's commas and quotes)
"""

from __future__ import annotations

import csv
import io
import re
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from nlibias.errors import SourceError

CSV_FIELD_LIMIT = 128 * 1024
"""Largest CSV field read (128 KiB, Python's default): a larger one is refused with its line."""


def decode_utf8(path: str | Path, data: bytes) -> str:
    """``data`` (the bytes of ``path``) as text; a byte-order mark is dropped.

    >>> decode_utf8("x.txt", "\\ufeffé".encode())
    'é'
    """
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        start = exc.start
        line = data.count(b"\n", 0, start) + 1
        column = start - (data.rfind(b"\n", 0, start) + 1) + 1
        raise SourceError(
            path,
            None,
            f"not UTF-8 text: byte 0x{data[start]:02x} at column {column}",
            line=line,
            fix="save the file as UTF-8",
        ) from None


def read_text(path: str | Path) -> str:
    """The text of ``path`` decoded as UTF-8 (see :func:`decode_utf8`)."""
    return decode_utf8(path, Path(path).read_bytes())


_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F][0-9a-fA-F]{2}")


def check_json_text(path: str | Path, text: str, value: Any, *, line: int | None = None) -> Any:
    r"""``value`` (parsed from the JSON ``text`` of ``path``) unless a ``\ud800``-``\udfff``
    escape in it is not half of a surrogate pair: such a string is not text and would fail
    later, when written; it is refused here with its line (``line``: the text's own line number).

    >>> import json
    >>> pair = '{"a":\n "\\ud83d\\ude00"}'
    >>> check_json_text("x.json", pair, json.loads(pair))
    {'a': '😀'}
    >>> lone = '{"a":\n "\\ud800"}'
    >>> check_json_text("x.json", lone, json.loads(lone))
    Traceback (most recent call last):
    nlibias.errors.SourceError: x.json:2: a \ud800-\udfff escape that is not half of a surrogate pair is not a character (remove it or write the character itself)
    """
    if not _SURROGATE_ESCAPE.search(text):
        return value
    import json

    try:
        json.dumps(value, ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError:
        where = line
        for match in _SURROGATE_ESCAPE.finditer(text):
            high = match.group()[2].lower() in "89ab"
            after = text[match.end() : match.end() + 6]
            before = text[max(0, match.start() - 6) : match.start()]
            paired = (
                _SURROGATE_ESCAPE.fullmatch(after) and after[2].lower() in "cdef"
                if high
                else _SURROGATE_ESCAPE.fullmatch(before) and before[2].lower() in "89ab"
            )
            if not paired:
                where = (line or 1) + text.count("\n", 0, match.start())
                break
        raise SourceError(
            path,
            None,
            "a \\ud800-\\udfff escape that is not half of a surrogate pair is not a character",
            line=where,
            fix="remove it or write the character itself",
        ) from None
    return value


def read_csv_records(path: str | Path, text: str | None = None) -> Iterator[tuple[int, dict[str, str]]]:
    """``(line number, row)`` for each data row of a CSV file with a header, every row checked:
    its number of fields matches the header, quotes are closed, no field exceeds
    :data:`CSV_FIELD_LIMIT`. ``text``: the file's text when already read. Blank lines are skipped.

    >>> import tempfile, pathlib
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "x.csv"
    >>> _ = path.write_text('a,b\\n1,"two, three"\\n\\n4,5\\n')
    >>> list(read_csv_records(path))
    [(2, {'a': '1', 'b': 'two, three'}), (4, {'a': '4', 'b': '5'})]
    """
    if text is None:
        text = read_text(path)
    header, rows = _csv_rows(path, text)
    if header is None:
        return
    for line, row in rows:
        if len(row) != len(header):
            count = f"{len(row)} field{'' if len(row) == 1 else 's'}"
            raise SourceError(
                path,
                None,
                f"row has {count}, the header has {len(header)} ({','.join(header)})",
                line=line,
                fix="check the row's commas and quotes",
            )
        yield line, dict(zip(header, row, strict=True))


def read_csv_with_columns(
    path: str | Path, required: Iterable[str], *, fix: str | None = None
) -> Iterator[tuple[int, dict[str, str]]]:
    """:func:`read_csv_records` of ``path`` once its header is found to hold every ``required``
    column; the missing ones are refused at line 1, naming the first (``fix``: how to mend it).

    >>> import tempfile, pathlib
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "x.csv"
    >>> _ = path.write_text("a,b\\n1,2\\n")
    >>> list(read_csv_with_columns(path, ("a", "b")))
    [(2, {'a': '1', 'b': '2'})]
    >>> list(read_csv_with_columns(path, ("a", "c", "d")))
    Traceback (most recent call last):
    nlibias.errors.SourceError: ...x.csv:1: field c: missing column(s) c, d
    """
    text = read_text(path)
    header = csv_header(path, text) or []
    missing = [c for c in required if c not in header]
    if missing:
        raise SourceError(path, missing[0], f"missing column(s) {', '.join(missing)}", line=1, fix=fix)
    yield from read_csv_records(path, text)


def csv_header(path: str | Path, text: str) -> list[str] | None:
    """The header row of a CSV text (``None`` for an empty file)."""
    return _csv_rows(path, text)[0]


def _csv_rows(path: str | Path, text: str) -> tuple[list[str] | None, Iterator[tuple[int, list[str]]]]:
    reader = csv.reader(io.StringIO(text, newline=""), strict=True)
    return _next_row(path, reader, 1), _rest(path, reader)


def _rest(path: str | Path, reader: Any) -> Iterator[tuple[int, list[str]]]:
    while True:
        start = reader.line_num + 1
        row = _next_row(path, reader, start)
        if row is None:
            return
        if row:  # a blank line
            yield start, row


def _next_row(path: str | Path, reader: Any, start: int) -> list[str] | None:
    previous = csv.field_size_limit(CSV_FIELD_LIMIT)
    try:
        return next(reader)
    except StopIteration:
        return None
    except csv.Error as exc:
        line = reader.line_num
        reason = str(exc)
        if "field larger than field limit" in reason:
            reason = f"a field is larger than {CSV_FIELD_LIMIT // 1024} KiB"
            fix = "check for an unclosed quote; texts that long are not sentences"
        elif "unexpected end of data" in reason or "EOF" in reason:
            line, reason = start, "a quote opened in this row is not closed before the end of the file"
            fix = "close the quote"
        else:
            fix = "check the quoting of this row"
        raise SourceError(path, None, f"malformed CSV: {reason}", line=line, fix=fix) from None
    finally:
        csv.field_size_limit(previous)
