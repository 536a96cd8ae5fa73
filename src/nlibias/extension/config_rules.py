"""Rules the extend configuration's models share: names that must not be blank, a backend's own
check in pydantic's words, and the refusal of an option no model here would read."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Annotated, Any, TypeVar

from pydantic import AfterValidator, BaseModel

from nlibias.errors import ConfigError
from nlibias.schema.applies import option_applies_to_nothing
from nlibias.schema.model_ref import ModelRef, split_kind

LOADING = "models that load their weights here"
T = TypeVar("T")


def _not_blank(message: str) -> AfterValidator:
    """Refuse a blank string (``""`` loads from, or writes into, the current directory)."""

    def check(value: str) -> str:
        if not value.strip():
            raise ValueError(message)
        return value

    return AfterValidator(check)


ModelName = Annotated[str, _not_blank("the model name is empty; name a model (a hub id or a local path)")]
RunDir = Annotated[str, _not_blank("the path is empty; name the run directory")]


def in_their_words(check: Callable[..., T], **values: Any) -> T:
    """A backend's own check of a value, as the ``ValueError`` pydantic names with file, line and key."""
    try:
        return check(**values)
    except ConfigError as error:
        raise ValueError(str(error)) from None


class Inapplicable(ValueError):
    """An option nothing reads: ``at``, its key under the refusing model (for the YAML line);
    ``models``, the keys of the models that leave it nothing to apply to (for overrides)."""

    def __init__(self, error: ConfigError, at: tuple[str | int, ...], models: tuple[str, ...] = ()) -> None:
        super().__init__(str(error))
        self.at, self.models = at, models


def fill_loads_weights(spec: str) -> bool:
    """Whether a fill model takes ``mlm.device``, ``mlm.dtype`` and ``mlm.revision``: neither the
    fake nor a server (also behind ``causal:``/``gguf:``)."""
    kind, rest = split_kind(spec)
    served = kind in ("causal", "gguf") and ModelRef.unread(rest).is_server
    return ModelRef.unread(spec).loads_weights_here and not served


def not_loaded(spec: str) -> str:
    return f"{spec!r} (a fake)" if ModelRef.unread(spec).is_fake else f"{spec!r} (behind a server)"


def refuse_set(
    section: BaseModel,
    options: Sequence[str],
    text: tuple[str, str],
    at: tuple[str, ...],
    models: tuple[str, ...],
) -> None:
    """Refuse the first of ``options`` set in ``section`` (``text``: what it applies to, and what is
    given; ``at``: the section's key; ``models``: the keys naming the models it does not apply to)."""
    for option in options:
        value = getattr(section, option)
        if value is not None and not (option == "dtype" and str(value).lower() == "auto"):
            refusal = option_applies_to_nothing(option, text[0], value=value, given=text[1])
            raise Inapplicable(refusal, (*at, option), models)
