"""The one adapter from pydantic's error about a document (a YAML file, a JSON line, a row) to its
problems, and to a :class:`~nlibias.errors.SourceError` naming the file, the line and the field."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

from nlibias.errors import SourceError, did_you_mean
from nlibias.textio.yaml_unique import yaml_line_of

if TYPE_CHECKING:
    from pydantic import ValidationError


class Problem(NamedTuple):
    """One rule a value broke: where (``field``, ``line``), why, the fix, and pydantic's ``kind``."""

    line: int | None
    field: str | None
    reason: str
    fix: str | None
    loc: tuple[Any, ...]
    kind: str


def problems(
    error: ValidationError,
    *,
    text: str | None = None,
    known_keys: Callable[[Sequence[Any]], Sequence[str]] | None = None,
    whole: str | None = None,
    drop: int = 0,
    words: Callable[[Any], str] | None = None,
) -> list[Problem]:
    """The one adapter from pydantic's error about a document to its problems. ``text``: the YAML
    (for lines); ``known_keys(loc)``: the keys allowed there; ``whole``: the field of a whole-document
    error; ``drop``: leading location parts that are no field; ``words``: a problem's reason."""
    found: list[Problem] = []
    for problem in error.errors(include_url=False):
        loc = [p for p in problem["loc"][drop:] if not (isinstance(p, str) and p.startswith("function-"))]
        context = problem.get("ctx", {})
        loc += getattr(context.get("error"), "at", ())
        field = context["field"] if "field" in context else ".".join(str(p) for p in loc) or whole
        line = yaml_line_of(text, loc) if text is not None else None
        if problem["type"] == "extra_forbidden" and known_keys is not None:
            known = list(known_keys(loc))
            hint = f"; {hint}" if (hint := did_you_mean(str(loc[-1]), known)) else ""
            field, reason = None, f"unknown key {field!r}{hint} (known here: {', '.join(known)})"
        else:
            reason = words(problem) if words else str(problem["msg"]).removeprefix("Value error, ")
        found.append(Problem(line, field, reason, context.get("fix"), tuple(loc), problem["type"]))
    return found


def source_error(
    error: ValidationError,
    path: str | Path,
    *,
    line: int | None = None,
    text: str | None = None,
    known_keys: Callable[[Sequence[Any]], Sequence[str]] | None = None,
    whole: str | None = None,
    fix: str | None = None,
    within: str | None = None,
) -> SourceError:
    """:func:`problems` as a SourceError naming ``path`` and line, the first problem, others below it;
    ``within``: where in the file the validated part sits (fields read ``within.FIELD``)."""
    found = problems(error, text=text, known_keys=known_keys, whole=whole)
    if within is not None:
        found = [p._replace(field=f"{within}.{p.field}" if p.field else within) for p in found]
    first, *others = found
    more = "".join(f"\n{SourceError(path, p.field, p.reason, line=p.line or line)}" for p in others)
    return SourceError(path, first.field, first.reason + more, line=first.line or line, fix=first.fix or fix)
