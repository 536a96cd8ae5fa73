"""Integer options of a model spec after ``?`` (``NAME?beam=8``): part of its fingerprint."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Annotated

from annotated_types import Ge
from pydantic import TypeAdapter, ValidationError

from nlibias.errors import ConfigError


def int_option(
    options: Mapping[str, str], key: str, default: int, *, parameter: str, minimum: int = 1
) -> int:
    """An integer option (at least ``minimum``), or ``default`` when absent.

    >>> int_option({"beam": "8"}, "beam", 16, parameter="fill_model"), int_option({}, "beam", 16, parameter="m")
    (8, 16)
    >>> int_option({"beam": "0"}, "beam", 16, parameter="fill_model")
    Traceback (most recent call last):
    nlibias.errors.ConfigError: option beam='0': Input should be greater than or equal to 1
    """
    if key not in options:
        return default
    try:
        return TypeAdapter(Annotated[int, Ge(minimum)]).validate_python(options[key])
    except ValidationError as error:
        problem = error.errors()[0]["msg"]
        raise ConfigError(f"option {key}={options[key]!r}: {problem}", parameter=parameter) from None
