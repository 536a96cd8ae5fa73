"""JSON from user files, every failure a SourceError naming file and line: ``NaN``/``Infinity``,
deep nesting, a huge integer, a lone ``\\ud800`` escape and a key given twice in one object are
refused.

>>> parse_json("x.jsonl", '{"id": "a", "p": NaN}', line=3)
Traceback (most recent call last):
nlibias.errors.SourceError: x.jsonl:3: field p: NaN is not a number JSON allows (write a finite number, or null where the field may be empty)
>>> parse_json("x.json", "[" * 100000 + "]" * 100000)
Traceback (most recent call last):
nlibias.errors.SourceError: x.json:1: invalid JSON: nested too deeply (hundreds of levels of arrays and objects) (nlibias reads records a few levels deep: check that this is the file meant)
>>> parse_json("x.json", '{"a": [1, 2.5, null]}')
{'a': [1, 2.5, None]}
>>> parse_json("s.json", '[{"id": 1},\\n {"id": 2,\\n  "id": 3}]')
Traceback (most recent call last):
nlibias.errors.SourceError: s.json:3: field id: the key appears twice in one object; JSON keeps only the last (keep one)
"""

from __future__ import annotations

import json
import re
from collections.abc import Collection
from pathlib import Path
from typing import Any

from nlibias.errors import SourceError
from nlibias.textio.text_door import enter_text, is_plain

_KEY_BEFORE = re.compile(r'"((?:[^"\\]|\\.)*)"\s*:\s*$')
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F][0-9a-fA-F]{2}")


class _NotANumber(Exception):
    def __init__(self, name: str) -> None:
        self.name = name


def _refuse_constant(name: str) -> Any:
    raise _NotANumber(name)


class _DuplicateKey(Exception):
    def __init__(self, key: str) -> None:
        self.key = key


def _unique_object(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    found = dict(pairs)  # the usual case, fast
    if len(found) < len(pairs):
        seen: set[str] = set()
        for key, _ in pairs:
            if key in seen:
                raise _DuplicateKey(key)
            seen.add(key)
    return found


_DECODER = json.JSONDecoder(parse_constant=_refuse_constant, object_pairs_hook=_unique_object)
_NAN_DECODER = json.JSONDecoder(object_pairs_hook=_unique_object)


def parse_json(
    path: str | Path,
    text: str | bytes,
    *,
    line: int | None = None,
    allow_nan: bool = False,
    texts: Collection[str] = (),
) -> Any:
    """The JSON value in ``text`` (of ``path`` from ``line``; a byte-order mark dropped); the
    ``texts`` fields of an object go through the text door.

    >>> parse_json("s.jsonl", '{"premise": "Zoe\\u0308"}', line=2, texts=("premise",))
    {'premise': 'Zoë'}
    """
    constant = None if allow_nan else _refuse_constant
    try:  # the usual case first
        decoded = text.decode("utf-8") if isinstance(text, bytes) else text
        value = (_DECODER if constant is not None else _NAN_DECODER).decode(decoded)
    except (ValueError, RecursionError, _NotANumber, _DuplicateKey):
        decoded, value = _parse_slowly(path, text, line, constant)  # says why, with the line
    if "\\u" in decoded and _SURROGATE_ESCAPE.search(decoded):
        check_json_text(path, decoded, value, line=line)
    for name in texts if type(value) is dict else ():
        field = value.get(name)
        if type(field) is str and not is_plain(field):
            value[name] = enter_text(field, f"{path}:{line or 1} ({name})", stacklevel=3)
    return value


def _parse_slowly(path: str | Path, text: str | bytes, line: int | None, constant: Any) -> tuple[str, Any]:
    if isinstance(text, bytes):
        text = decode_utf8(path, text, line=line or 1)
    text = text.removeprefix("\ufeff")
    first = line or 1
    try:
        return text, json.loads(text, parse_constant=constant, object_pairs_hook=_unique_object)
    except _DuplicateKey as exc:
        reason = "the key appears twice in one object; JSON keeps only the last"
        raise SourceError(
            path, exc.key, reason, line=first + _line_of_twice(text, exc.key), fix="keep one"
        ) from None
    except json.JSONDecodeError as exc:
        at = min(exc.pos, len(text.rstrip()))
        line_start = text.rfind("\n", 0, at) + 1
        reason = f"invalid JSON: {exc.msg} (column {at - line_start + 1})"
        raise SourceError(path, None, reason, line=first + text.count("\n", 0, at)) from None
    except _NotANumber as exc:
        raise _not_a_number(path, text, exc.name, first) from None
    except RecursionError:
        raise SourceError(
            path,
            None,
            "invalid JSON: nested too deeply (hundreds of levels of arrays and objects)",
            line=first,
            fix="nlibias reads records a few levels deep: check that this is the file meant",
        ) from None
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


def decode_utf8(path: str | Path, data: bytes, *, line: int = 1) -> str:
    """``data`` (the bytes of ``path`` from line ``line``) as text, a byte-order mark dropped.

    >>> decode_utf8("x.txt", "\\ufeffé".encode())
    'é'
    >>> decode_utf8("x.txt", b"\\xef\\xbb\\xbfa\\n\\xff")
    Traceback (most recent call last):
    nlibias.errors.SourceError: x.txt:2: not UTF-8 text: byte 0xff at column 1 (save the file as UTF-8)
    """
    body = data.removeprefix(b"\xef\xbb\xbf")
    try:
        return body.decode("utf-8")
    except UnicodeDecodeError as exc:
        start = exc.start + len(data) - len(body)  # the error's offset counts from after the mark
        line += data.count(b"\n", 0, start)
        column = start - (data.rfind(b"\n", 0, start) + 1) + 1
        raise SourceError(
            path,
            None,
            f"not UTF-8 text: byte 0x{data[start]:02x} at column {column}",
            line=line,
            fix="save the file as UTF-8",
        ) from None


def check_json_text(path: str | Path, text: str, value: Any, *, line: int | None = None) -> Any:
    r"""``value`` (parsed from ``text``) unless a ``\ud800``-``\udfff`` escape in it is unpaired.

    >>> lone = '{"a":\n "\\ud800"}'
    >>> check_json_text("x.json", lone, json.loads(lone))
    Traceback (most recent call last):
    nlibias.errors.SourceError: x.json:2: a \ud800-\udfff escape that is not half of a surrogate pair is not a character (remove it or write the character itself)
    """
    if not _SURROGATE_ESCAPE.search(text):
        return value
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


def _not_a_number(path: str | Path, text: str, name: str, first: int) -> SourceError:
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


_KEY_OR_BRACE = re.compile(r'"((?:[^"\\]|\\.)*)"\s*:|"(?:[^"\\]|\\.)*"|[{}]')


def _line_of_twice(text: str, key: str) -> int:
    """The line (from 0) where ``key`` is given a second time in one object of ``text``."""
    objects: list[set[str]] = []
    for match in _KEY_OR_BRACE.finditer(text):
        token = match.group()
        if token == "{":
            objects.append(set())
        elif token == "}":
            objects.pop()
        elif match.group(1) is not None and objects:
            name = json.loads(f'"{match.group(1)}"')
            if name == key and name in objects[-1]:
                return text.count("\n", 0, match.start())
            objects[-1].add(name)
    return 0
