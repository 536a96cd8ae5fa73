"""Text files read one way: UTF-8 (a byte-order mark dropped; a bad byte named by line and column),
CSV strictly (a header naming a column twice, a short or long row, an open quote, an oversized
field refused with its line).

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
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from nlibias.errors import SourceError
from nlibias.textio.json_text import check_json_text as check_json_text  # re-exported
from nlibias.textio.json_text import decode_utf8 as decode_utf8  # re-exported

CSV_FIELD_LIMIT = 128 * 1024
"""Largest CSV field read (128 KiB, Python's default): a larger one is refused with its line."""


def read_text(path: str | Path) -> str:
    """The text of ``path`` decoded as UTF-8 (see :func:`decode_utf8`)."""
    return decode_utf8(path, Path(path).read_bytes())


def read_csv_records(
    path: str | Path, text: str | None = None, required: Iterable[str] = (), fix: str | None = None
) -> Iterator[tuple[int, dict[str, str]]]:
    """``(line, row)`` for each data row of a CSV file with a header, each row checked; blank lines
    skipped. ``text``: the file's text when already read (else it is streamed); ``required``: the
    columns the header must name.

    >>> import tempfile, pathlib
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "x.csv"
    >>> _ = path.write_text('a,b\\n1,"two, three"\\n\\n4,5\\n')
    >>> list(read_csv_records(path))
    [(2, {'a': '1', 'b': 'two, three'}), (4, {'a': '4', 'b': '5'})]
    >>> next(read_csv_records(path, required=("a", "b")))
    (2, {'a': '1', 'b': 'two, three'})
    """
    lines = io.StringIO(text, newline="") if text is not None else stream_lines(path)
    reader = csv.reader(lines, strict=True)
    header = check_header(path, _next_row(path, reader, 1))
    require_csv_columns(path, header, required, fix=fix)
    if header is None:
        return
    for line, row in _rest(path, reader):
        check_row_width(path, line, row, header)
        yield line, dict(zip(header, row, strict=True))


def require_csv_columns(
    path: str | Path, header: list[str] | None, required: Iterable[str], *, fix: str | None = None
) -> None:
    """Refuse a CSV ``header`` (``None``: an empty file) without every ``required`` column.

    >>> require_csv_columns("x.csv", ["a", " b"], ("a", "b", "c"))
    Traceback (most recent call last):
    nlibias.errors.SourceError: x.csv:1: field b, c: missing column(s); the header is ['a', ' b'] (the first line must name the columns a,b,c)
    """
    required = tuple(required)
    missing = [column for column in required if column not in (header or [])]
    if not missing:
        return
    if header is None:
        found = "the file is empty"
    elif not header:
        found = "the first line is blank"
    else:
        found = f"the header is {header}"
    fix = fix or f"the first line must name the columns {','.join(required)}"
    raise SourceError(path, ", ".join(missing), f"missing column(s); {found}", line=1, fix=fix)


def check_header(
    path: str | Path, header: list[str] | None, *, line: int | None = 1, within: str = "the header"
) -> list[str] | None:
    """``header`` (a CSV or TSV file's first row; a Parquet file's columns, ``line=None``), refused
    when it names a column twice: a row would keep only the last of the two values (blank names, a
    spreadsheet's empty columns, may repeat).

    >>> check_header("x.csv", ["premise", "label", "hypothesis", "label"])
    Traceback (most recent call last):
    nlibias.errors.SourceError: x.csv:1: field label: column 'label' appears twice in the header (keep one of them)
    >>> check_header("x.parquet", ["label", "label"], line=None, within="the file's columns")
    Traceback (most recent call last):
    nlibias.errors.SourceError: x.parquet: field label: column 'label' appears twice in the file's columns (keep one of them)
    """
    seen: set[str] = set()
    for name in header or ():
        if name in seen and name:
            reason = f"column {name!r} appears twice in {within}"
            raise SourceError(path, name, reason, line=line, fix="keep one of them")
        seen.add(name)
    return header


def check_parquet_columns(path: str | Path, names: list[str]) -> None:
    """A Parquet file's column ``names`` (its schema), refused when one is there twice: pyarrow
    allows it, and a row read as a dict would keep only the last of the two values."""
    check_header(path, names, line=None, within="the file's columns")


def check_row_width(
    path: str | Path,
    line: int,
    fields: list[str],
    header: list[str],
    *,
    separators: str = "commas and quotes",
) -> None:
    """Refuse a row whose number of fields is not the header's.

    >>> check_row_width("x.tsv", 3, ["1"], ["a", "b"], separators="tabs")
    Traceback (most recent call last):
    nlibias.errors.SourceError: x.tsv:3: row has 1 field, the header has 2 (a,b) (check the row's tabs)
    """
    if len(fields) != len(header):
        count = f"{len(fields)} field{'' if len(fields) == 1 else 's'}"
        raise SourceError(
            path,
            None,
            f"row has {count}, the header has {len(header)} ({','.join(header)})",
            line=line,
            fix=f"check the row's {separators}",
        )


def csv_header(path: str | Path, text: str) -> list[str] | None:
    """The header row of a CSV text (``None`` for an empty file), checked by :func:`check_header`."""
    return check_header(path, _next_row(path, csv.reader(io.StringIO(text, newline=""), strict=True), 1))


def stream_lines(path: str | Path) -> Iterator[str]:
    """The lines of a UTF-8 text file, read as needed (endings kept, a byte-order mark dropped).

    >>> import tempfile, pathlib
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "x.tsv"
    >>> _ = path.write_bytes(b"\\xef\\xbb\\xbfa\\tb\\r\\n1\\t\\xff\\n")
    >>> list(stream_lines(path))
    Traceback (most recent call last):
    nlibias.errors.SourceError: ...x.tsv:2: not UTF-8 text: byte 0xff at column 3 (save the file as UTF-8)
    """
    with Path(path).open(encoding="utf-8-sig", newline="") as handle:
        try:
            yield from handle
        except UnicodeDecodeError:
            raise _first_bad_byte(path) from None


def _first_bad_byte(path: str | Path) -> SourceError:
    """:func:`decode_utf8`'s error for the first line of ``path`` that is not UTF-8."""
    with Path(path).open("rb") as handle:
        for number, line in enumerate(handle, start=1):
            try:
                decode_utf8(path, line, line=number)
            except SourceError as error:
                return error
    return SourceError(path, None, "not UTF-8 text", fix="save the file as UTF-8")  # changed meanwhile


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
