"""Refusals of extension settings that no model would read (:mod:`nlibias.extension.config`'s
validators): a held-out or fake filter model's loading options, a prompted one's label map, the
stages' device and dtype with nothing loading weights. Each is raised as a ``ValueError`` that
carries where it points, so the configuration's reader names the YAML line and key.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from nlibias.errors import ConfigError
from nlibias.schema.applies import option_applies_to_nothing
from nlibias.schema.model_ref import ModelRef, split_kind

if TYPE_CHECKING:
    from pydantic import BaseModel

    from nlibias.extension.config import FilterModelConfig


class Inapplicable(ValueError):
    """An option nothing reads: ``at``, its key under the refusing model (the configuration reader names its
    line); ``models``, the keys of the models that leave it nothing to apply to (for overrides)."""

    def __init__(self, error: ConfigError, at: tuple[str | int, ...], models: tuple[str, ...] = ()) -> None:
        super().__init__(str(error))  # a ValueError is what pydantic names with its file, line and key
        self.at, self.models = at, models


MODEL_OPTIONS = ("revision", "label_map", "quantize", "compile")
"""The options of one filter model that load it (every one but ``name``)."""
LOADING = "models that load their weights here"


def fill_loads_weights(spec: str) -> bool:
    """Whether a fill model takes ``mlm.device``, ``mlm.dtype`` and ``mlm.revision``: neither the
    fake (a FakeMaskFiller) nor a server (``openai:URL#MODEL``, also behind ``causal:``/``gguf:``)."""
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


def model_refusal(spec: FilterModelConfig, held_out: bool) -> tuple[str, ConfigError] | None:
    """The first loading option of a filter model that nothing reads, and its refusal: any of a held-out
    model (never loaded; the card records its name) or a fake's; a prompted LM's label map, quantize
    and compile (no output ids, no classification head: it refused them when built, after the fill)."""
    ref, model = ModelRef.unread(spec.model), spec.model
    options = MODEL_OPTIONS if held_out or ref.is_fake else MODEL_OPTIONS[1:] if ref.kind == "prompt" else ()
    why = "a fake loads no weights" if ref.is_fake else "a prompted LM scores label words"
    for option in (o for o in options if getattr(spec, o) not in (None, False)):
        if held_out:
            pin = " (the card records its name: to record the version to evaluate, name it MODEL@REVISION)"
            fix = f"leave {{{option}}} out{pin if option == 'revision' else ''}"
            held = f"models the pipeline loads, and the held-out {model!r} never is (the card names it)"
            return option, option_applies_to_nothing(option, held, fix=fix)
        if option == "label_map":  # the audit's rule and words
            from nlibias.runtime.build import check_label_map_applies

            try:
                check_label_map_applies([ref], fix="leave {label_map} out")
            except ConfigError as refusal:
                return option, refusal
        if option == "revision":
            loaded = (
                f"models loaded from the hub or a local directory, not to {model!r}: a fake loads nothing"
            )
            return option, option_applies_to_nothing(
                option, loaded, subject=f"{{revision}} {spec.revision!r}"
            )
        applies_to = f"sequence-classification models (a Hugging Face model), not to {model!r}: {why}"
        return option, option_applies_to_nothing(option, applies_to)
    return None
