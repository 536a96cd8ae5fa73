"""``ModelSet``: the models one audit asks for, read and checked once where the audit starts.

An audit may ask several kinds of model at once: NLI classifiers (``models``: names, paths,
``fake:NAME``, ``prompt:MODEL``, or objects that keep the predictor contract), generative LMs
(``generative``, each asked with every style in ``prompts``) and language models that score
sentence pairs (``mlm``: masked; ``causal``: causal LMs or servers; each under every
``tp_variants`` entry). The set is what :func:`nlibias.jobs.audit.run_audit` and
:func:`nlibias.runtime.build.build_predictors` take; it says which predictor kinds it asks for
(so a benchmark can refuse a kind before any model loads) and which of its models load their
weights here (so an option none of them takes is refused).

>>> models = ModelSet.of(["fake:a"], generative="fake:g", prompts=["true"], causal="openai:http://h/v1#m")
>>> models.kinds()
[('models', 'classifier'), ('generative', 'generative'), ('causal', 'sentence-logprob')]
>>> models.servers()
['openai:http://h/v1#m']
>>> ModelSet.of("fake:a").models  # one name is one model, not its letters
('fake:a',)
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from nlibias.errors import ConfigError
from nlibias.models.tp.base import check_variant
from nlibias.runtime.contract import Predictor
from nlibias.schema.model_keys import check_model_spec
from nlibias.schema.model_ref import ModelRef
from nlibias.schema.predictor_kinds import PredictorKind

ModelSpec = str | Predictor
"""A model's name or path, or an object that keeps the predictor contract."""

SPEC_KINDS: dict[str, PredictorKind] = {
    "models": "classifier",
    "generative": "generative",
    "mlm": "sentence-logprob",
    "causal": "sentence-logprob",
}
"""The predictor kind of the models named in each field of :class:`ModelSet`."""


@dataclass(frozen=True)
class ModelSet:
    """The models of one audit, by how they are asked (module docstring); build it with
    :meth:`of`, which checks every name."""

    models: tuple[ModelSpec, ...] = ()
    """NLI classifiers: specs, or predictor objects used as they are."""
    generative: tuple[str, ...] = ()
    """Generative LMs, asked yes/no questions."""
    prompts: tuple[str, ...] = ()
    """The generative LMs' prompt styles (``true``, ``entailed``, files); none: both of the paper's."""
    mlm: tuple[str, ...] = ()
    """Masked LMs scoring sentence pairs."""
    causal: tuple[str, ...] = ()
    """Causal LMs (or servers) scoring sentence pairs."""
    tp_variants: tuple[str, ...] = ("shared",)
    """The sentence scorers' variants: ``shared`` tokens, ``whole`` sentences."""

    @classmethod
    def of(
        cls,
        models: ModelSpec | Sequence[ModelSpec] | ModelSet = (),
        generative: str | Sequence[str] = (),
        prompts: str | Sequence[str] = (),
        *,
        mlm: str | Sequence[str] = (),
        causal: str | Sequence[str] = (),
        tp_variants: str | Sequence[str] = ("shared",),
    ) -> ModelSet:
        """The set from one name or several per field (a bare string is one name), each name
        checked (:func:`~nlibias.schema.model_keys.check_model_spec`); a set given as ``models``
        is returned as it is.

        >>> ModelSet.of(["fake:a", 3])
        Traceback (most recent call last):
        nlibias.errors.ConfigError: models must be names (strings) or predictors, got 3
        """
        if isinstance(models, ModelSet):
            return models
        given: dict[str, Any] = {
            "models": models, "generative": generative, "prompts": prompts, "mlm": mlm, "causal": causal,
            "tp_variants": tp_variants,
        }  # fmt: skip
        checked = cls(**{name: _names(value, name) for name, value in given.items()})
        for variant in checked.tp_variants:  # before any model loads, not when the scorers are built
            check_variant(variant)
        return checked

    def kinds(self) -> list[tuple[str, str]]:
        """The (field, predictor kind) pairs asked for, each once (a predictor object: its own kind)."""
        kinds: dict[tuple[str, str], None] = {}
        for field in SPEC_KINDS:
            for spec in getattr(self, field):
                kinds[(field, spec.kind if isinstance(spec, Predictor) else SPEC_KINDS[field])] = None
        return list(kinds)

    @property
    def classifier_specs(self) -> list[str]:
        """The NLI classifiers given by name (not as objects)."""
        return [m for m in self.models if not isinstance(m, Predictor)]

    def servers(self) -> list[str]:
        """The generative LMs and causal scorers behind an OpenAI-compatible server."""
        return [spec for spec in (*self.generative, *self.causal) if ModelRef.unread(spec).is_server]

    def loading_weights_here(self) -> list[str]:
        """The models given that load their weights in this process (which a dtype applies to):
        classifiers but fakes, generative LMs but fakes and servers, masked LMs, causal LMs but
        servers."""
        refs = [ModelRef.unread(spec) for spec in (*self.classifier_specs, *self.generative, *self.causal)]
        return [str(ref) for ref in refs if not ref.is_fake and not ref.is_server] + list(self.mlm)

    def __bool__(self) -> bool:
        """Whether any model is asked for."""
        return any(getattr(self, field) for field in SPEC_KINDS)


def _names(value: Any, parameter: str) -> tuple[Any, ...]:
    """A tuple of names from one or several (a bare string is one name, not its letters); a
    model may be an object keeping the predictor contract only in ``models``."""
    if isinstance(value, str | Predictor):
        value = [value]
    names = tuple(value)
    for name in names:
        if isinstance(name, str):
            check_model_spec(name, parameter, classifier=parameter == "models")
    allowed = (str, Predictor) if parameter == "models" else (str,)
    wrong = [n for n in names if not isinstance(n, allowed)]
    if wrong:
        what = "names (strings) or predictors" if parameter == "models" else "names (strings)"
        raise ConfigError(f"{parameter} must be {what}, got {wrong[0]!r}", parameter=parameter)
    return names
