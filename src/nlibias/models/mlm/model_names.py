"""Model names checked before anything loads: one that can only be a local path and does not
exist is refused, naming the parameter that named it.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

from nlibias.errors import ConfigError
from nlibias.schema.model_ref import ModelRef

#: The parameters the loaders name (each its own): renamed to the one the user gave.
LOADER_PARAMETERS = frozenset({"name_or_path", "mlm", "causal", "generative", "model", "models", "spec"})


def check_model_path(spec: str, *, parameter: str) -> None:
    """Refuse a model name that can only be a local path and names nothing.

    >>> check_model_path("/no/such/model", parameter="fill_model")
    Traceback (most recent call last):
    nlibias.errors.ConfigError: fill_model '/no/such/model': the local path /no/such/model does not exist ...
    """
    problem = ModelRef.named(spec).missing_path
    if problem is not None:
        raise ConfigError(f"{{{parameter}}} {spec!r}: {problem}", parameter=parameter)


@contextlib.contextmanager
def loading_as(parameter: str, spec: str) -> Iterator[None]:
    """Load a model the user named under ``parameter``: its path checked first, a loader's error
    renamed after ``parameter``."""
    check_model_path(spec, parameter=parameter)
    try:
        yield
    except ConfigError as error:
        generic = error.parameter is None or error.parameter in LOADER_PARAMETERS | {"fill_model"}
        if generic and error.parameter != parameter:
            raise ConfigError(str(error), parameter=parameter) from error
        raise
