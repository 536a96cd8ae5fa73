"""Options written into a model spec after ``?``: ``NAME?key=value&key=value``.

Used where a spec is the only thing that travels (a filter model in a YAML list, ``--model`` of
``nlibias audit``, a fill model), so that every option that changes outputs is part of the spec
string and therefore of every fingerprint built from it.

>>> split_spec_options("smollm2?prompt=my.txt", {"prompt"}, parameter="model")
('smollm2', {'prompt': 'my.txt'})
>>> split_spec_options("smollm2", {"prompt"}, parameter="model")
('smollm2', {})
"""

from __future__ import annotations

from collections.abc import Collection, Mapping

from nlibias.errors import ConfigError
from nlibias.schema.model_ref import ModelRef


def split_spec_options(spec: str, allowed: Collection[str], *, parameter: str) -> tuple[str, dict[str, str]]:
    """``(spec without options, {key: value})``; an unknown, repeated or empty option is refused."""
    ref = ModelRef.parse(spec, parameter=parameter, allowed=allowed)
    return ref.base, dict(ref.options)


def int_option(
    options: Mapping[str, str], key: str, default: int, *, parameter: str, minimum: int = 1
) -> int:
    """An integer option (at least ``minimum``), or ``default`` when absent.

    >>> int_option({"beam": "8"}, "beam", 16, parameter="fill_model"), int_option({}, "beam", 16, parameter="m")
    (8, 16)
    """
    if key not in options:
        return default
    try:
        value = int(options[key])
    except ValueError:
        raise ConfigError(f"option {key}={options[key]!r} is not an integer", parameter=parameter) from None
    if value < minimum:
        raise ConfigError(f"option {key}={value} must be at least {minimum}", parameter=parameter)
    return value
