"""What the benchmark readers' row models share: non-blank text without a control character
(the text door's rule), a rule's refusal with its fix, and the one route from a row model's error
to a SourceError naming the file, line and field.

>>> from pydantic import BaseModel
>>> class Pair(BaseModel):
...     more: Text
>>> check_row(Pair, "p.csv", 3, {"more": " "})
Traceback (most recent call last):
...
nlibias.errors.SourceError: p.csv:3: field more: empty value
>>> check_row(Pair, "p.csv", 4, {"more": "a\\x00b"})
Traceback (most recent call last):
...
nlibias.errors.SourceError: p.csv:4: field more: holds the control character U+0000 (NUL) at character 2 (the file is damaged or not text: restore it, or remove the character)
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Annotated, Any, TypeVar

from pydantic import AfterValidator, BaseModel, ValidationError
from pydantic_core import PydanticCustomError

from nlibias.schema.problems import source_error
from nlibias.textio.text_door import CONTROL_FIX, control_character

M = TypeVar("M", bound=BaseModel)


def refuse(reason: str, fix: str | None = None, field: str | None = None) -> PydanticCustomError:
    """A row rule's error: its reason, the fix and (where not the field validated) the field."""
    context: dict[str, Any] = {"reason": reason, "fix": fix}
    return PydanticCustomError("nlibias_row", "{reason}", context | ({"field": field} if field else {}))


def text_problem(
    value: str, reason: str = "empty value", fix: str | None = None
) -> tuple[str, str | None] | None:
    """Why a text field is refused (and its fix): empty or only white space, or holding a control
    character (:func:`~nlibias.textio.text_door.control_character`); None when it is text."""
    if not value.strip():
        return reason, fix
    control = control_character(value)
    return None if control is None else (control, CONTROL_FIX)


def nonblank(reason: str = "empty value", fix: str | None = None) -> AfterValidator:
    """Refuse a text that :func:`text_problem` refuses (kept as written otherwise)."""

    def check(value: str) -> str:
        problem = text_problem(value, reason, fix)
        if problem is not None:
            raise refuse(*problem)
        return value

    return AfterValidator(check)


Text = Annotated[str, nonblank()]
"""A cell or field that is not blank."""


def check_row(
    model: type[M], path: str | Path, line: int | None, raw: Mapping[str, Any], *, fix: str | None = None
) -> M:
    """``raw`` validated as ``model``, or a SourceError naming the file, ``line`` and field."""
    try:
        return model.model_validate(raw)
    except ValidationError as error:
        raise source_error(error, path, line=line, fix=fix) from None
