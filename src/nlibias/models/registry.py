"""NLI classifier backends by ``KIND:NAME`` (a bare name: Hugging Face); third-party ones register
under the entry-point group ``nlibias.nli_backends``, imported only when a spec asks for them, so a
broken one stops only the commands that name it, with a :class:`PluginError` naming it."""

from __future__ import annotations

import importlib
from importlib.metadata import entry_points
from typing import Any

from nlibias.errors import ConfigError, NlibiasError, PluginError, did_you_mean
from nlibias.models.base import NLIClassifier
from nlibias.schema.model_ref import ModelRef
from nlibias.schema.plugin_origin import PluginOrigin, duplicate_names, load_failure

ENTRY_POINT_GROUP = "nlibias.nli_backends"
_BACKENDS: dict[str, str] = {
    "hf": "nlibias.models.nli.hf:HFNLIClassifier",
    "fake": "nlibias.models.fake:FakeNLIClassifier",
    "prompt": "nlibias.models.nli.prompted:PromptedNLIClassifier",
}
_DEFAULT_KIND = "hf"


def known_kinds() -> list[str]:
    kinds = dict(_BACKENDS)
    for point in entry_points(group=ENTRY_POINT_GROUP):
        kinds.setdefault(point.name, point.value)
    return sorted(kinds)


def split_spec(spec: str, *, parameter: str = "spec") -> tuple[str, str]:
    """``"fake:x"`` → ``("fake", "x")``; a bare ``fake`` is the fake; no known prefix: Hugging Face.
    ``parameter``: where the spec was given (named when its kind is unknown).

    >>> split_spec("ynie/roberta-large-snli_mnli_fever_anli_R1_R2_R3-nli")
    ('hf', 'ynie/roberta-large-snli_mnli_fever_anli_R1_R2_R3-nli')
    >>> split_spec("fake:demo"), split_spec("fake")
    (('fake', 'demo'), ('fake', ''))
    """
    ref = ModelRef.unread(spec)
    if not ref.kind:
        return ("fake", "") if ref.is_fake else (_DEFAULT_KIND, spec)  # a bare fake, a bare name
    if ref.kind not in known_kinds():
        hint = did_you_mean(ref.kind, known_kinds())
        raise ConfigError(
            f"unknown backend kind {ref.kind!r} in {spec!r}{f' ({hint})' if hint else ''}. "
            f"Known: {', '.join(known_kinds())}",
            parameter=parameter,
        )
    return ref.kind, ref.name


def classifier_kind_problem(spec: str, use: str = "to filter with") -> str | None:
    """Why no classifier backend reads ``spec``'s kind, or the LM its ``config.json`` names (``None``:
    one does); ``use``: what the classifier is for.

    >>> classifier_kind_problem("openai:http://h/v1#m")
    "unknown backend kind 'openai' in 'openai:http://h/v1#m'. Known: fake, hf, prompt"
    >>> classifier_kind_problem("org/model") is None
    True
    """
    try:
        split_spec(spec)
    except ConfigError as error:
        return str(error)
    role = ModelRef.unread(spec).role
    if role in ("generative", "masked"):  # a kind that says so, an alias, its config.json's architecture
        return (
            f"{spec!r} is {'a causal' if role == 'generative' else 'a masked'} LM, not an NLI classifier "
            f"{use}: name a sequence-classification model, or prompt:NAME (a causal LM asked for "
            "NLI labels); an LM fills as mlm.model"
        )
    return None


def _target(kind: str) -> tuple[Any, PluginOrigin | None]:
    """The backend class of ``kind`` and, for a plug-in, who installed it."""
    target = _BACKENDS.get(kind)
    if target is None:
        points = [point for point in entry_points(group=ENTRY_POINT_GROUP) if point.name == kind]
        origin = PluginOrigin.of(points[0])
        clash = duplicate_names(points).get(kind)
        if clash is not None:  # whichever was found first would win silently
            raise PluginError(f"NLI backend {kind!r}", clash)
        try:
            return points[0].load(), origin
        except Exception as error:
            raise PluginError(origin.describe(), load_failure(origin, error)) from error
    module_name, _, attribute = target.partition(":")
    return getattr(importlib.import_module(module_name), attribute), None


def create_classifier(spec: str | ModelRef, **options: Any) -> NLIClassifier:
    """The classifier a spec or :class:`ModelRef` names; ``options`` go to the backend.

    >>> create_classifier(ModelRef.parse("fake:demo")).name
    'demo'
    """
    kind, name = split_spec(str(spec))
    cls, origin = _target(kind)
    if kind == "fake":
        return cls(name or "fake-nli")
    plugin = f"NLI backend {kind!r}" if origin is None else origin.describe()
    try:
        classifier = cls(name, **{k: v for k, v in options.items() if v is not None})
    except NlibiasError:  # said on purpose, naming what is wrong
        raise
    except Exception as error:
        if origin is None:  # ours: the boundary's fault handling applies
            raise
        raise PluginError(plugin, f"creating {name!r} raised {type(error).__name__}: {error}") from error
    if not isinstance(classifier, NLIClassifier):
        raise PluginError(
            f"{plugin} ({type(classifier).__name__})",
            "its object does not keep the NLIClassifier contract (name, identity(), predict_batches())",
        )
    return classifier
