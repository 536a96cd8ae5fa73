"""The one checked way to parse JSON from a user file: every failure is a
:class:`~nlibias.errors.SourceError` with the file and line, never an internal error.

Python's ``json`` accepts what no JSON file should hold and fails on what it cannot read with
errors that name nothing: ``NaN`` / ``Infinity`` (not JSON; a number that would poison every mean),
nesting deep enough to exhaust the recursion limit (``RecursionError``), an integer longer than
the interpreter's digit limit (``ValueError``), a lone ``\\ud800`` escape (not a character).

>>> parse_json("x.jsonl", '{"id": "a", "p": NaN}', line=3)
Traceback (most recent call last):
nlibias.errors.SourceError: x.jsonl:3: field p: NaN is not a number JSON allows (write a finite number, or null where the field may be empty)
>>> parse_json("x.json", "[" * 100000 + "]" * 100000)
Traceback (most recent call last):
nlibias.errors.SourceError: x.json:1: invalid JSON: nested too deeply (more than 500 levels of arrays and objects) (nlibias reads records a few levels deep: check that this is the file meant)
>>> parse_json("x.json", '{"a": [1, 2.5, null]}')
{'a': [1, 2.5, None]}
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from nlibias.errors import SourceError
from nlibias.textio.text_files import check_json_text

MAX_DEPTH = 500
"""Deepest nesting of arrays and objects read: the records nlibias reads are a few levels deep, and
Python's parser recurses once a level, up to its recursion limit (1,000 frames by default)."""

_KEY_BEFORE = re.compile(r'"((?:[^"\\]|\\.)*)"\s*:\s*$')
_STRINGS = re.compile(r'"(?:[^"\\]|\\.)*"')
_BRACKETS = re.compile(r"[\[\]{}]")


class _NotANumber(Exception):
    def __init__(self, name: str) -> None:
        self.name = name


def _refuse_constant(name: str) -> Any:
    raise _NotANumber(name)


def parse_json(
    path: str | Path, text: str | bytes, *, line: int | None = None, allow_nan: bool = False
) -> Any:
    """The JSON value in ``text`` (read from ``path``; ``line``: the line ``text`` starts on).

    Refused with the file and line: invalid JSON, ``NaN`` / ``Infinity`` (with the field they
    are in; ``allow_nan=True`` lets a reader with its own per-field check see them), nesting
    deeper than :data:`MAX_DEPTH`, an integer past the interpreter's digit limit, a lone
    surrogate escape. A UTF-8 byte-order mark at the start is dropped.
    """
    if isinstance(text, bytes):
        data = text.removeprefix(b"\xef\xbb\xbf")
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError as exc:
            where = (line or 1) + data.count(b"\n", 0, exc.start)
            raise SourceError(
                path, None, "not UTF-8 text", line=where, fix="save the file as UTF-8"
            ) from None
    text = text.removeprefix("\ufeff")
    first = line or 1
    if _too_deep(text):
        raise SourceError(
            path,
            None,
            f"invalid JSON: nested too deeply (more than {MAX_DEPTH} levels of arrays and objects)",
            line=first,
            fix="nlibias reads records a few levels deep: check that this is the file meant",
        )
    try:
        value = json.loads(text, parse_constant=None if allow_nan else _refuse_constant)
    except json.JSONDecodeError as exc:
        raise SourceError(path, None, f"invalid JSON: {exc.msg}", line=first + exc.lineno - 1) from None
    except _NotANumber as exc:
        raise _not_a_number(path, text, exc.name, first) from None
    except RecursionError:  # not reached below MAX_DEPTH; kept so that no reader ends in one
        raise SourceError(path, None, "invalid JSON: nested too deeply", line=first) from None
    except ValueError as exc:  # "Exceeds the limit (4300 digits) for integer string conversion"
        if "digits" not in str(exc):
            raise
        raise SourceError(
            path,
            None,
            "a number with thousands of digits is not a count or a probability",
            line=first + _line_of_long_number(text),
            fix="write the number with fewer digits (or as a string)",
        ) from None
    if "\\u" in text:
        check_json_text(path, text, value, line=line)
    return value


def _too_deep(text: str) -> bool:
    """Whether arrays and objects nest deeper than :data:`MAX_DEPTH` (strings left out)."""
    if text.count("[") + text.count("{") <= MAX_DEPTH:
        return False
    depth = 0
    for bracket in _BRACKETS.findall(_STRINGS.sub("", text)):
        depth += 1 if bracket in "[{" else -1
        if depth > MAX_DEPTH:
            return True
    return False


def _not_a_number(path: str | Path, text: str, name: str, first: int) -> SourceError:
    """The error for a ``NaN`` / ``Infinity`` constant: the line and the key it is the value of."""
    match = re.search(r"(?<![\w\"])-?(NaN|Infinity)(?![\w\"])", text)
    start = match.start() if match else 0
    key = _KEY_BEFORE.search(text[max(0, start - 200) : start])
    return SourceError(
        path,
        key.group(1) if key else None,
        f"{name} is not a number JSON allows",
        line=first + text.count("\n", 0, start),
        fix="write a finite number, or null where the field may be empty",
    )


def _line_of_long_number(text: str) -> int:
    match = re.search(r"\d{4000,}", text)
    return text.count("\n", 0, match.start()) if match else 0
