"""JSON Schema from TypedDicts, and a validator that names the field at fault.

:func:`json_schema` turns a TypedDict (and the types it nests: ``dict[str, X]``, ``list[X]``,
``tuple[X, X]``, ``X | None``, ``Literal``, ``Annotated[float, Range(lo, hi)]``) into a JSON
Schema (draft 2020-12) document, so the published schema is made from the types the code is
checked against and cannot drift from them. :func:`schema_issues` checks a parsed JSON value
against such a schema (the subset it emits) and returns each problem with its field path, e.g.
``models.a.overall.accuracy: -5000.0 is outside [0, 100]``. Numbers must be finite (JSON has no
NaN); ``bool`` is never a number.

>>> import typing
>>> class Point(typing.TypedDict):
...     x: typing.Annotated[float, Range(0, 1)]
...     label: typing.NotRequired[str | None]
>>> schema = json_schema(Point)
>>> schema["$defs"]["Point"]["required"]
['x']
>>> schema_issues({"x": 2.5, "label": 3}, schema)
['x: 2.5 is outside [0, 1]', 'label: expected a string or null, got 3']
"""

from __future__ import annotations

import math
import re
import types
import typing
from collections.abc import Collection, Mapping
from dataclasses import dataclass
from typing import Any, Literal, Union, get_args, get_origin, is_typeddict

DRAFT = "https://json-schema.org/draft/2020-12/schema"
FieldPath = tuple[str | int, ...]
"""Keys and list positions from the document's root to a value."""
_SIMPLE_KEY = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


@dataclass(frozen=True)
class Range:
    """The smallest and largest value a number may take (``None``: unbounded), for ``Annotated``."""

    low: float | None = None
    high: float | None = None


def json_schema(
    root: type, *, title: str | None = None, open_types: Collection[type] = (), schema_id: str | None = None
) -> dict[str, Any]:
    """The JSON Schema of the TypedDict ``root``: every TypedDict it nests goes under ``$defs``.

    A TypedDict in ``open_types`` gets ``"additionalProperties": true`` (keys beyond its own are
    part of its contract, e.g. backend-specific descriptions); the others say nothing, so readers
    accept fields added by a later version, and :func:`schema_issues` with ``strict=True`` refuses
    them (how the tests check that the types declare every field the writers emit).
    """
    defs: dict[str, Any] = {}
    opened = set(open_types)

    def convert(tp: Any) -> dict[str, Any]:
        if tp is Any:
            return {}
        if is_typeddict(tp):
            name = tp.__name__
            if name not in defs:
                defs[name] = {}  # a placeholder while its own fields are converted
                hints = typing.get_type_hints(tp, include_extras=True)
                entry: dict[str, Any] = {"type": "object"}
                if tp.__doc__:
                    entry["description"] = " ".join(tp.__doc__.split())
                entry["properties"] = {key: convert(_strip_required(hint)) for key, hint in hints.items()}
                entry["required"] = sorted(k for k, hint in hints.items() if _required(tp, hint))
                if tp in opened:
                    entry["additionalProperties"] = True
                defs[name] = entry
            return {"$ref": f"#/$defs/{name}"}
        origin, args = get_origin(tp), get_args(tp)
        if origin is typing.Annotated:
            schema = convert(args[0])
            for meta in args[1:]:
                if isinstance(meta, Range):
                    if meta.low is not None:
                        schema["minimum"] = meta.low
                    if meta.high is not None:
                        schema["maximum"] = meta.high
            return schema
        if origin in (Union, types.UnionType):
            return {"anyOf": [convert(arg) for arg in args]}
        if origin is Literal:
            return {"enum": list(args)}
        if origin in (dict, Mapping):
            return {"type": "object", "additionalProperties": convert(args[1])}
        if origin is list:
            return {"type": "array", "items": convert(args[0])}
        if origin is tuple:
            return {"type": "array", "items": convert(args[0]), "minItems": len(args), "maxItems": len(args)}
        return {"type": _SCALARS[tp]}

    body = convert(root)
    schema: dict[str, Any] = {"$schema": DRAFT}
    if schema_id:
        schema["$id"] = schema_id
    if title:
        schema["title"] = title
    return {**schema, **body, "$defs": dict(sorted(defs.items()))}


_JSON_TYPES: tuple[tuple[type, str], ...] = (
    (type(None), "null"),
    (bool, "boolean"),
    (int, "integer"),
    (float, "number"),
    (str, "string"),
    (list, "array"),
    (dict, "object"),
)
_SCALARS: dict[Any, str] = dict(_JSON_TYPES[:5])


def _required(typed_dict: Any, hint: Any) -> bool:
    """Whether a TypedDict key is required (read from the hint: ``__required_keys__`` misses
    ``NotRequired`` written as a string annotation)."""
    origin = get_origin(hint)
    if origin is typing.NotRequired:
        return False
    return origin is typing.Required or bool(typed_dict.__total__)


def _strip_required(hint: Any) -> Any:
    while get_origin(hint) in (typing.NotRequired, typing.Required):
        hint = get_args(hint)[0]
    return hint


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
            text += f"[{_quote(part)}]"
    return text or "(the document)"


def _quote(key: str) -> str:
    import json

    return json.dumps(key, ensure_ascii=False)


def _json_type(value: Any) -> str:
    """The JSON type of a parsed value (``bool`` before ``int``: True is not a number here)."""
    for python_type, name in _JSON_TYPES:
        if isinstance(value, python_type):
            return name
    return type(value).__name__


_NAMES = {
    "string": "a string",
    "integer": "an integer",
    "number": "a number",
    "boolean": "true or false",
    "null": "null",
    "array": "a list",
    "object": "an object",
}


def _shown(value: Any) -> str:
    if isinstance(value, dict):
        return "an object"
    if isinstance(value, list):
        return "a list"
    text = repr(value) if not isinstance(value, str) else _quote(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _bound(value: float | None) -> str:
    if value is None:
        return "..."
    return str(int(value)) if float(value).is_integer() else str(value)


def schema_issues(
    value: Any, schema: Mapping[str, Any], *, strict: bool = False, limit: int = 20
) -> list[str]:
    """Every way ``value`` breaks ``schema`` (up to ``limit``), each as ``path: reason``.

    ``strict``: an object whose schema does not say ``additionalProperties`` accepts only its
    declared keys.
    """
    return _Checker(schema, strict=strict, limit=limit).problems(schema, value, ())[:limit]


class _Checker:
    """One check of a value against a schema (the subset :func:`json_schema` emits)."""

    def __init__(self, schema: Mapping[str, Any], *, strict: bool, limit: int) -> None:
        self.defs: Mapping[str, Any] = schema.get("$defs", {})
        self.strict = strict
        self.limit = limit

    def resolve(self, node: Mapping[str, Any]) -> Mapping[str, Any]:
        while "$ref" in node:
            node = self.defs[node["$ref"].rsplit("/", 1)[-1]]
        return node

    def problems(self, node: Mapping[str, Any], item: Any, path: FieldPath) -> list[str]:
        """This node's problems with ``item`` (recursing into containers)."""
        node = self.resolve(node)
        if "anyOf" in node:
            return self.any_of([self.resolve(b) for b in node["anyOf"]], item, path)
        if "enum" in node:
            if item not in node["enum"]:
                allowed = ", ".join(_quote(v) if isinstance(v, str) else repr(v) for v in node["enum"])
                return [f"{field_path(path)}: {_shown(item)} is not one of {allowed}"]
            return []
        expected_type = node.get("type")
        kind = _json_type(item)
        if expected_type is not None and not _accepts_type(expected_type, kind, item):
            expected = _NAMES.get(expected_type, expected_type)
            return [f"{field_path(path)}: expected {expected}, got {_shown(item)}"]
        if kind in ("number", "integer"):
            return self.number(node, item, path)
        if kind == "array":
            return self.array(node, item, path)
        if kind == "object":
            return self.object(node, item, path)
        return []

    def any_of(self, branches: list[Mapping[str, Any]], item: Any, path: FieldPath) -> list[str]:
        found = [self.problems(b, item, path) for b in branches]
        if any(not f for f in found):
            return []
        kind = _json_type(item)
        for branch, branch_found in zip(branches, found, strict=True):
            if _accepts_type(branch.get("type"), kind):
                return branch_found  # the branch of the value's own type says what is wrong
        expected = " or ".join(_NAMES.get(str(b.get("type")), str(b.get("type"))) for b in branches)
        return [f"{field_path(path)}: expected {expected}, got {_shown(item)}"]

    def number(self, node: Mapping[str, Any], item: float, path: FieldPath) -> list[str]:
        if not math.isfinite(item):
            return [f"{field_path(path)}: {item} is not a finite number"]
        low, high = node.get("minimum"), node.get("maximum")
        if (low is not None and item < low) or (high is not None and item > high):
            return [f"{field_path(path)}: {item!r} is outside [{_bound(low)}, {_bound(high)}]"]
        return []

    def array(self, node: Mapping[str, Any], item: list[Any], path: FieldPath) -> list[str]:
        found: list[str] = []
        if ("minItems" in node and len(item) < node["minItems"]) or (
            "maxItems" in node and len(item) > node["maxItems"]
        ):
            found.append(f"{field_path(path)}: expected {node.get('minItems')} items, got {len(item)}")
        if "items" in node:
            for i, element in enumerate(item):
                found += self.problems(node["items"], element, (*path, i))
                if len(found) >= self.limit:
                    break
        return found

    def object(self, node: Mapping[str, Any], item: dict[str, Any], path: FieldPath) -> list[str]:
        found = [
            f"{field_path((*path, key))}: missing" for key in node.get("required", ()) if key not in item
        ]
        properties = node.get("properties", {})
        extra = node.get("additionalProperties", not (self.strict and "properties" in node))
        for key, element in item.items():
            if key in properties:
                found += self.problems(properties[key], element, (*path, key))
            elif extra is False:
                found.append(f"{field_path((*path, key))}: not a field of this schema")
            else:  # any value is allowed here, but a number must still be finite (JSON has no NaN)
                found += self.problems(extra if isinstance(extra, Mapping) else {}, element, (*path, key))
            if len(found) >= self.limit:
                break
        return found


def _accepts_type(expected: Any, kind: str, item: Any = None) -> bool:
    if expected is None or expected == kind:
        return True
    if expected == "number" and kind == "integer":
        return True
    if expected == "integer" and kind == "number":
        return isinstance(item, float) and item.is_integer()
    return False
