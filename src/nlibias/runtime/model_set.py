"""The models one audit asks for, read and checked once before any model loads.

>>> models = ModelSet.of(["fake:a"], generative="fake:g", prompts=["true"], causal="openai:http://h/v1#m")
>>> models.kinds(), [style.name for style in models.prompts]
([('models', 'classifier'), ('generative', 'generative'), ('causal', 'sentence-logprob')], ['true'])
>>> [str(ref) for ref in models.servers()]
['openai:http://h/v1#m']
>>> ModelSet.of("fake:a").models  # one name is one model (read once), not its letters
(ModelRef(kind='fake', name='a', option_items=()),)
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

from nlibias.errors import ConfigError
from nlibias.models.generative.prompts import PromptStyle, resolve_prompt_styles
from nlibias.models.mlm.model_names import check_model_path
from nlibias.models.registry import split_spec
from nlibias.models.tp.base import check_variant
from nlibias.runtime.contract import Predictor
from nlibias.schema.applies import option_applies_to_nothing
from nlibias.schema.model_keys import PredictorKind, check_model_spec
from nlibias.schema.model_ref import ModelRef, Role

ModelSpec = str | ModelRef | Predictor
"""A model's name or path (or its :class:`ModelRef`), or a predictor object."""

SPEC_KINDS: dict[str, PredictorKind] = {
    "models": "classifier",
    "generative": "generative",
    "mlm": "sentence-logprob",
    "causal": "sentence-logprob",
}

ASKED_AS: dict[str, Role] = {
    "models": "classifier", "generative": "generative", "mlm": "masked", "causal": "generative",
}  # fmt: skip
"""The role each field asks its models in; a reference naming another role (by its kind, an alias or
its ``config.json``) is refused, naming the field where it belongs (:data:`_HOMES`)."""
_HOMES: dict[bool, dict[Role, str]] = {
    False: {"classifier": "models", "generative": "generative", "masked": "mlm"},
    True: {"classifier": "models", "generative": "causal", "masked": "mlm"},  # asked by a sentence scorer
}


@dataclass(frozen=True)
class ModelSet:
    """The models of one audit, by how they are asked; build it with :meth:`of`."""

    models: tuple[ModelRef | Predictor, ...] = ()
    """NLI classifiers: references, or predictor objects."""
    generative: tuple[ModelRef, ...] = ()
    prompts: tuple[PromptStyle, ...] = ()
    """The generative LMs' prompt styles (none named: the paper's two)."""
    mlm: tuple[ModelRef, ...] = ()
    causal: tuple[ModelRef, ...] = ()
    """Causal LMs (or servers) scoring sentence pairs."""
    tp_variants: tuple[str, ...] = ("shared",)
    prompts_named: bool = False

    @classmethod
    def of(
        cls,
        models: ModelSpec | Sequence[ModelSpec] | ModelSet = (),
        generative: str | ModelRef | Sequence[str | ModelRef] = (),
        prompts: str | PromptStyle | Sequence[str | PromptStyle] = (),
        *,
        mlm: str | ModelRef | Sequence[str | ModelRef] = (),
        causal: str | ModelRef | Sequence[str | ModelRef] = (),
        tp_variants: str | Sequence[str] = ("shared",),
    ) -> ModelSet:
        """The set from one name or several per field, each checked.

        >>> ModelSet.of(["fake:a", 3])
        Traceback (most recent call last):
        nlibias.errors.ConfigError: models must be names (strings) or predictors, got 3
        >>> ModelSet.of(["fake:a"], mlm="./no/such/dir")  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        nlibias.errors.ConfigError: mlm './no/such/dir': the local path ./no/such/dir does not exist ...
        """
        if isinstance(models, ModelSet):  # one made directly holds prompts unread
            return cls.of(
                models.models, models.generative, models.prompts if models.prompts_named else (),
                mlm=models.mlm, causal=models.causal, tp_variants=models.tp_variants,
            )  # fmt: skip
        given: dict[str, Any] = {
            "models": models, "generative": generative, "mlm": mlm, "causal": causal, "tp_variants": tp_variants,
        }  # fmt: skip
        named = {name: _names(value, name) for name, value in given.items()}
        asked = _prompts_asked(prompts, bool(named["generative"]))
        if not named["tp_variants"]:
            raise ConfigError(
                "{tp_variants} is empty: name at least one token-probability variant (shared, whole)",
                parameter="tp_variants",
            )
        for variant in named["tp_variants"]:
            check_variant(variant)
        for field in ("tp_variants", *SPEC_KINDS):
            _each_once(named[field], field)
        if named["tp_variants"] != ("shared",) and not (named["mlm"] or named["causal"]):
            raise option_applies_to_nothing(
                "tp_variants", "sentence scorers", value=list(named["tp_variants"]), plural=True,
                fix="name one in {mlm} or {causal}", names=("mlm", "causal"),
            )  # fmt: skip
        for field in SPEC_KINDS:
            for ref in named[field]:
                if isinstance(ref, ModelRef):
                    check_model_path(str(ref), parameter=field)
        for field, role in ASKED_AS.items():
            for ref in named[field]:
                if isinstance(ref, ModelRef):
                    found = ref.other_role(role) or role  # where the model it names belongs:
                    other = _HOMES[SPEC_KINDS[field] == "sentence-logprob"][found]  # a scorer's, if one asks
                    ref.check_role(role, parameter=field, fix=f"name it in {{{other}}}", names=(other,))
                    if field == "models":  # a kind no classifier backend reads, named with its field
                        split_spec(str(ref), parameter=field)
        prompts = tuple(resolve_prompt_styles(asked)) if named["generative"] else ()
        return cls(**named, prompts=prompts, prompts_named=bool(asked))

    def with_default_prompts(self, names: Sequence[str]) -> ModelSet:
        """The set with the prompt styles ``names`` in place of unnamed defaults (BBQ's own).

        >>> [s.name for s in ModelSet.of(generative="fake:g").with_default_prompts(["race", "arc"]).prompts]
        ['race', 'arc']
        >>> [s.name for s in ModelSet.of(generative="fake:g", prompts="arc").with_default_prompts(["race"]).prompts]
        ['arc']
        """
        if not names or not self.generative or self.prompts_named:
            return self
        return replace(self, prompts=tuple(resolve_prompt_styles(list(names))), prompts_named=True)

    def kinds(self) -> list[tuple[str, str]]:
        kinds: dict[tuple[str, str], None] = {}
        for field in SPEC_KINDS:
            for spec in getattr(self, field):
                kinds[(field, spec.kind if isinstance(spec, Predictor) else SPEC_KINDS[field])] = None
        return list(kinds)

    @property
    def classifier_refs(self) -> list[ModelRef]:
        return [m for m in self.models if isinstance(m, ModelRef)]

    def servers(self) -> list[ModelRef]:
        return [ref for ref in (*self.generative, *self.causal) if ref.is_server]

    def loading_weights_here(self) -> list[ModelRef]:
        refs = (*self.classifier_refs, *self.generative, *self.causal)
        return [ref for ref in refs if ref.loads_weights_here] + list(self.mlm)

    def __bool__(self) -> bool:
        return any(getattr(self, field) for field in SPEC_KINDS)


def _prompts_asked(prompts: Any, generative: bool) -> tuple[str | PromptStyle, ...]:
    asked = _names(prompts, "prompts")
    if asked and not generative:
        raise option_applies_to_nothing(
            "prompts",
            "generative models",
            subject="a prompt style",
            fix="name one in {generative}, or leave {prompts} out",
            names=("generative",),
        )
    return asked


def _each_once(values: Sequence[Any], parameter: str) -> None:
    """Refuse a name given twice in one field (a predictor object is its own; the audit refuses two
    under one key once they are built).

    >>> _each_once(["shared", "shared"], "tp_variants")
    Traceback (most recent call last):
    nlibias.errors.ConfigError: 'shared' given twice in tp_variants; each runs once, so name it once
    """
    names = [str(value) for value in values if isinstance(value, str | ModelRef)]
    twice = next((name for name in names if names.count(name) > 1), None)
    if twice is not None:
        raise ConfigError(
            f"{twice!r} given twice in {{{parameter}}}; each runs once, so name it once", parameter=parameter
        )


_OBJECTS: dict[str, tuple[type, str]] = {
    "models": (Predictor, "predictors"),
    "prompts": (PromptStyle, "prompt styles"),
}


def _names(value: Any, parameter: str) -> tuple[Any, ...]:
    """A tuple of checked names (objects only where :data:`_OBJECTS` allows)."""
    kind, called = _OBJECTS.get(parameter, (str, ""))
    if isinstance(value, (str, ModelRef, kind)):
        value = [value]
    model_field = parameter in SPEC_KINDS
    names = tuple(str(n) if model_field and isinstance(n, ModelRef) else n for n in value)
    wrong = [n for n in names if not isinstance(n, (str, kind))]
    if wrong:
        what = f"names (strings) or {called}" if called else "names (strings)"
        raise ConfigError(f"{{{parameter}}} must be {what}, got {wrong[0]!r}", parameter=parameter)
    for name in names:
        if isinstance(name, str):
            check_model_spec(name, parameter, classifier=parameter == "models")
    if not model_field:
        return names
    return tuple(ModelRef.unread(n) if isinstance(n, str) else n for n in names)
