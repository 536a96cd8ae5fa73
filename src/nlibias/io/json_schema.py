"""JSON documents as TypedDicts with :data:`JSON_CONFIG`: pydantic's schema (:func:`json_schema`)
and check (:func:`document_issues`, by field path), plus :class:`Range`, :data:`Integer`, :data:`Pair`.

>>> from pydantic import TypeAdapter, with_config
>>> from typing_extensions import TypedDict
>>> @with_config(JSON_CONFIG)
... class Point(TypedDict):
...     x: Annotated[float, Range(0, 1)]
...     label: str | None
>>> document_issues(TypeAdapter(Point), {"x": 2.5, "label": 3})
[('x', '2.5 is outside [0, 1]'), ('label', 'expected a string, got 3')]
>>> document_issues(TypeAdapter(Point), {"x": float("nan"), "label": None, "y": 1}, strict=True)
[('x', 'nan is not a finite number'), ('y', 'not a field of this schema')]
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Annotated, Any

from pydantic import BeforeValidator, ConfigDict, TypeAdapter, ValidationError
from pydantic_core import PydanticCustomError, core_schema

from nlibias.schema.problems import problems

DRAFT = "https://json-schema.org/draft/2020-12/schema"
JSON_CONFIG = ConfigDict(strict=True, use_attribute_docstrings=True)  # undeclared fields left out
OPEN_CONFIG = ConfigDict(strict=True, use_attribute_docstrings=True, extra="allow")  # ... kept
FieldPath = tuple[str | int, ...]
Issue = tuple[str, str]  # (field path, reason)
_SIMPLE_KEY = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


@dataclass(frozen=True)
class Range:
    """A number's bounds (``None``: unbounded) for ``Annotated``: checked, and written as the
    schema's ``minimum``/``maximum``."""

    low: float | None = None
    high: float | None = None

    def __get_pydantic_core_schema__(self, source: Any, handler: Any) -> core_schema.CoreSchema:
        return core_schema.no_info_after_validator_function(self._check, handler(source))

    def __get_pydantic_json_schema__(self, schema: Any, handler: Any) -> dict[str, Any]:
        found: dict[str, Any] = handler(schema)
        if self.low is not None:
            found["minimum"] = self.low
        if self.high is not None:
            found["maximum"] = self.high
        return found

    def _check(self, value: float) -> float:
        if math.isfinite(value) and (
            (self.low is not None and value < self.low) or (self.high is not None and value > self.high)
        ):
            bounds = f"[{_bound(self.low)}, {_bound(self.high)}]"
            raise PydanticCustomError(
                "outside_range", "{value} is outside {bounds}", {"value": repr(value), "bounds": bounds}
            )
        return value


def _bound(value: float | None) -> str:
    if value is None:
        return "..."
    return str(int(value)) if float(value).is_integer() else str(value)


def _whole(value: Any) -> Any:
    return int(value) if isinstance(value, float) and value.is_integer() else value


def _pair(value: Any) -> Any:
    if isinstance(value, list | tuple) and len(value) != 2:
        raise PydanticCustomError("pair_length", "expected 2 items, got {n}", {"n": len(value)})
    return tuple(value) if isinstance(value, list) else value


Integer = Annotated[int, BeforeValidator(_whole)]  # 4.0 is 4 (4.5, "4" and true are not)
Pair = Annotated[tuple[float, float], BeforeValidator(_pair)]  # an interval


def json_schema(adapter: TypeAdapter[Any], *, title: str) -> dict[str, Any]:
    return {"$schema": DRAFT, **adapter.json_schema(), "title": title}


def document_issues(
    adapter: TypeAdapter[Any], value: Any, *, strict: bool = False, limit: int = 20
) -> list[Issue]:
    """Every way ``value`` breaks ``adapter``'s type (up to ``limit``), as ``(path, reason)``;
    ``strict``: also keys the types do not declare."""
    found: list[Issue] = []
    named: set[FieldPath] = set()
    validated: Any = None
    try:
        validated = adapter.validate_python(value)
    except ValidationError as error:
        for problem in problems(error, words=_reason):
            named.add(problem.loc)
            found.append((field_path(problem.loc), problem.reason))
    found += [(field_path(p), f"{v} is not a finite number") for p, v in not_finite(value) if p not in named]
    if strict and validated is not None:
        found += [(field_path(p), "not a field of this schema") for p in _undeclared(value, validated, ())]
    return found[:limit]


_EXPECTED = {
    "string_type": "a string",
    "int_type": "an integer",
    "float_type": "a number",
    "bool_type": "true or false",
    "none_required": "null",
    "list_type": "a list",
    "tuple_type": "a list",
    "dict_type": "an object",
}


def _reason(error: Any) -> str:
    kind = error["type"]
    if kind == "missing":
        return "missing"
    if kind in _EXPECTED:
        return f"expected {_EXPECTED[kind]}, got {_shown(error['input'])}"
    if kind == "literal_error":
        return f"{_shown(error['input'])} is not one of {error['ctx']['expected']}"
    return str(error["msg"])


def not_finite(value: Any, path: FieldPath = ()) -> Iterator[tuple[FieldPath, float]]:
    """The path and value of each NaN or infinity in ``value`` (nested dicts, lists and tuples)."""
    if isinstance(value, float):
        if not math.isfinite(value):
            yield path, value
    elif isinstance(value, dict):
        for key, item in value.items():
            yield from not_finite(item, (*path, key))
    elif isinstance(value, list | tuple):
        for i, item in enumerate(value):
            yield from not_finite(item, (*path, i))


def _undeclared(given: Any, kept: Any, path: FieldPath) -> Iterator[FieldPath]:
    if isinstance(given, dict) and isinstance(kept, dict):
        for key, item in given.items():
            if key not in kept:
                yield (*path, key)
            else:
                yield from _undeclared(item, kept[key], (*path, key))
    elif isinstance(given, list) and isinstance(kept, list | tuple):
        for i, (item, kept_item) in enumerate(zip(given, kept, strict=False)):
            yield from _undeclared(item, kept_item, (*path, i))


def field_path(parts: FieldPath) -> str:
    """``models.a.overall.accuracy``; list positions as ``[0]``, odd keys quoted.

    >>> field_path(("models", "gpt-2|x", "by_domain", 0))
    'models["gpt-2|x"].by_domain[0]'
    """
    text = ""
    for part in parts:
        if isinstance(part, int):
            text += f"[{part}]"
        elif _SIMPLE_KEY.fullmatch(part):
            text += f".{part}" if text else part
        else:
            text += f"[{json.dumps(part, ensure_ascii=False)}]"
    return text or "(the document)"


def _shown(value: Any) -> str:
    if isinstance(value, dict):
        return "an object"
    if isinstance(value, list):
        return "a list"
    text = json.dumps(value, ensure_ascii=False) if isinstance(value, str | None) else repr(value)
    return text if len(text) <= 60 else text[:57] + "..."
