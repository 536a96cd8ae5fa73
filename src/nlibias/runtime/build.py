"""Turn a :class:`~nlibias.runtime.model_set.ModelSet` into predictors."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from nlibias.errors import ConfigError
from nlibias.models.generative.option_scoring import echoes_options
from nlibias.models.hf_common import dtype_choice, set_torch_threads
from nlibias.models.nli.labels import KINDS_WITHOUT_LABEL_IDS, parse_label_map
from nlibias.models.nli.ray_data import RayNLIClassifier
from nlibias.models.nli.sharded import ShardedNLIClassifier
from nlibias.models.registry import create_classifier
from nlibias.runtime.classifier import ClassifierPredictor
from nlibias.runtime.contract import Predictor
from nlibias.runtime.generative import GenerativePredictor, build_generative_predictors
from nlibias.runtime.model_set import ModelSet, ModelSpec
from nlibias.runtime.options import DEFAULT_MODEL_OPTIONS, ModelOptions
from nlibias.runtime.sentence_logprob import build_sentence_predictors
from nlibias.schema.applies import option_applies_to_nothing
from nlibias.schema.model_ref import ModelRef
from nlibias.schema.placement import env_device

if TYPE_CHECKING:
    from nlibias.models.generative.prompts import PromptStyle


def build_predictors(
    models: ModelSet | Sequence[ModelSpec], *, options: ModelOptions = DEFAULT_MODEL_OPTIONS
) -> list[Predictor]:
    """One predictor per classifier, (generative LM, prompt style) and (sentence scorer, variant);
    an option no model reads is refused first. Call :func:`close_predictors` when done.

    >>> build_predictors(["roberta-large-mnli"], options=ModelOptions(devices=("cpu",), device="cpu"))
    Traceback (most recent call last):
    ...
    nlibias.errors.ConfigError: device and devices exclude each other: devices lists every device to use
    """
    models = ModelSet.of(models)
    env_device()  # its value is held to the device rule whether or not a model reads it
    placed = list(options.devices)
    _check_placement(options.device, placed, options.ray_address)
    _check_options(models, options)
    set_torch_threads(options.threads)  # process-wide: the generative LMs run with it too
    loading: dict[str, Any] = dict(
        label_map=None if options.label_map is None else parse_label_map(options.label_map), revision=options.revision,
        dtype=options.dtype, max_tokens=options.max_tokens, quantize=options.quantize, threads=options.threads,
        compile=options.compile or None,  # None is not passed: backends without the option still work
    )  # fmt: skip
    predictors: list[Predictor] = []
    try:
        for m in models.models:
            predictors.append(m if isinstance(m, Predictor) else _classifier(m, loading, placed, options))
        predictors += _generative(models.generative, models.prompts, options)
        if models.mlm or models.causal:
            predictors += build_sentence_predictors(
                models.mlm, models.causal, variants=list(models.tp_variants), device=options.device,
                dtype=options.dtype, revision=options.revision, concurrency=options.concurrency,
            )  # fmt: skip
    except BaseException:  # a later model failed: stop the worker processes and Ray actors started
        close_predictors([p for p in predictors if all(p is not m for m in models.models)])
        raise  # (the caller's own predictor objects are the caller's to close)
    return predictors


def _check_options(models: ModelSet, options: ModelOptions) -> None:
    """Refuse every option no model given reads."""
    _check_loading_applies(models, options)
    if options.label_map is not None:  # a map no classifier reads
        check_label_map_applies(
            models.classifier_refs, objects=len(models.models) - len(models.classifier_refs)
        )
    quantize, compile = options.quantize, options.compile
    if (quantize or compile) and all(ref.is_fake for ref in models.classifier_refs):  # the fake takes neither
        raise option_applies_to_nothing(
            "quantize" if quantize else "compile",
            "NLI classifiers that load their weights here (a Hugging Face model, prompt:MODEL), not to the fake",
            fix="name one in {models}",
            names=("models",),
        )
    if not models.generative:  # how generative LMs answer: changed for none, it would be ignored
        for name in ("mode", "max_new_tokens", "option_score"):
            value = getattr(options, name)
            if value != getattr(DEFAULT_MODEL_OPTIONS, name):
                raise option_applies_to_nothing(
                    name,
                    "generative models",
                    value=value,
                    fix="name one in {generative}",
                    names=("generative",),
                )
    if options.option_score != DEFAULT_MODEL_OPTIONS.option_score and not any(
        s.choices for s in models.prompts
    ):
        raise option_applies_to_nothing(  # yes/no answers are words of one token: nothing to normalise
            "option_score", "multiple-choice prompt styles (BBQ's race, arc)", value=options.option_score,
            fix="leave option_score out, or ask BBQ samples", names=("prompts",),
        )  # fmt: skip
    scored_here = models.generative and options.mode == "scored" and not models.servers()
    if scored_here and options.max_new_tokens != DEFAULT_MODEL_OPTIONS.max_new_tokens:
        raise option_applies_to_nothing(  # a scored answer is read in one forward pass, no text generated
            "max_new_tokens", "generated answers and servers (whose scored answers may fall back to text)",
            value=options.max_new_tokens, fix="leave {max_new_tokens} out, or give 'generated' as {mode}", names=("mode",),
        )  # fmt: skip
    _check_placement_applies(models, options)
    hub_pinned = [ref for ref in models.classifier_refs if not ref.is_fake] + list(models.mlm)
    if options.revision is not None and not hub_pinned:
        raise option_applies_to_nothing(
            "revision", "NLI classifiers ({models}) and masked LMs ({mlm}) loaded here", value=options.revision,
            fix="pin a generative or causal LM's revision in its name (NAME@REVISION), or leave {revision} out",
            names=("models", "mlm"),
        )  # fmt: skip
    if options.concurrency is not None and not models.servers():
        raise option_applies_to_nothing(
            "concurrency", "generative models behind a server", fix="add openai:URL#MODEL to {generative}",
            names=("generative",),
        )  # fmt: skip


def _check_loading_applies(models: ModelSet, options: ModelOptions) -> None:
    """Refuse a dtype (but ``auto``) or a device when no model given loads its weights here.

    >>> _check_loading_applies(ModelSet.of(["fake:a", "roberta-large-mnli"]), ModelOptions(dtype="float32"))
    >>> _check_loading_applies(ModelSet.of(["fake:a"], ["openai:http://h/v1#m"]), ModelOptions(dtype="float32"))
    Traceback (most recent call last):
    ...
    nlibias.schema.applies.InapplicableOption: dtype 'float32' applies to models that load their weights here (NLI classifiers such as a Hugging Face model or prompt:MODEL, local generative LMs and sentence scorers), and none of those given does: 'fake:a' (a fake), 'openai:http://h/v1#m' (behind a server, which loads its own weights); leave dtype out
    """
    if models.loading_weights_here():
        return
    dtype = options.dtype if dtype_choice(options.dtype) is not None else None  # None: the devices' defaults
    for name, value in (("dtype", dtype), ("device", options.device)):
        if value is not None:
            given = [_why_not_loaded(spec) for spec in [*models.models, *models.generative, *models.causal]]
            raise option_applies_to_nothing(
                name,
                "models that load their weights here (NLI classifiers such as a Hugging Face model or "
                "prompt:MODEL, local generative LMs and sentence scorers)",
                value=value,
                given=f"none of those given does: {', '.join(given) or 'no model'}",
            )


def _why_not_loaded(model: ModelRef | Predictor) -> str:
    if isinstance(model, Predictor):
        return f"{model.name!r} (a predictor object, used as it is)"
    if model.is_server:
        return f"{str(model)!r} (behind a server, which loads its own weights)"
    return f"{str(model)!r} (a fake)"


def check_label_map_applies(
    models: Sequence[ModelRef],
    *,
    fix: str = "leave {label_map} out, or audit that model on its own",
    objects: int = 0,
    named_in: str = "models",
) -> None:
    """Refuse a label map no classifier among ``models`` reads (``objects``: classifiers given as
    objects; ``named_in``: the parameter naming them).

    >>> check_label_map_applies([ModelRef.unread("ynie/roberta-large-snli_mnli_fever_anli_R1_R2_R3-nli")])
    >>> check_label_map_applies([ModelRef.unread("fake:m")])
    Traceback (most recent call last):
    nlibias.schema.applies.InapplicableOption: label_map applies to NLI classifiers' output ids, not to 'fake:m': a fake or prompted classifier has no output ids to map; leave label_map out, or audit that model on its own
    """
    if not models:
        given = (
            "every classifier given is an object, used as it is (a label map is read when a classifier "
            "is loaded by name)"
            if objects
            else f"no NLI classifier is named in {{{named_in}}}: generative and sentence-scoring models have no label ids"
        )
        raise option_applies_to_nothing(
            "label_map", "NLI classifiers' output ids", given=given, names=(named_in,)
        )
    for ref in models:
        if ref.is_fake or ref.kind in KINDS_WITHOUT_LABEL_IDS:
            raise option_applies_to_nothing(
                "label_map",
                f"NLI classifiers' output ids, not to {str(ref)!r}: a fake or prompted classifier has no "
                "output ids to map",
                fix=fix,
            )


def _check_placement_applies(models: ModelSet, options: ModelOptions) -> None:
    placement = "devices" if options.devices else "ray_address" if options.ray_address is not None else None
    if placement is not None and not models.classifier_refs:
        raise option_applies_to_nothing(
            placement, "NLI classifiers", fix="name one in {models}", names=("models",)
        )


_EXCLUSIVE_PLACEMENTS: dict[tuple[str, str], tuple[str, str]] = {
    ("device", "devices"): (
        "device",
        "{device} and devices exclude each other: devices lists every device to use",
    ),
    ("devices", "ray_address"): (
        "ray_address",
        "devices and {ray_address} exclude each other: shard on one machine or on a Ray cluster",
    ),
    ("device", "ray_address"): (
        "device",
        "{device} does not apply with ray_address: Ray places each worker (ray_gpus_per_worker)",
    ),
}


def _check_placement(device: str | None, devices: Sequence[str], ray_address: str | None) -> None:
    given = {name for name, value in (("device", device), ("ray_address", ray_address)) if value is not None}
    given |= {"devices"} if devices else set()
    for pair, (parameter, why) in _EXCLUSIVE_PLACEMENTS.items():
        if set(pair) <= given:
            raise ConfigError(why, parameter=parameter)


def _classifier(
    ref: ModelRef, loading: dict[str, Any], devices: Sequence[str], options: ModelOptions
) -> Predictor:
    classifier: Any
    if devices:
        classifier = ShardedNLIClassifier(str(ref), devices, **loading)
    elif options.ray_address is not None:
        classifier = RayNLIClassifier(
            str(ref),
            num_workers=options.ray_workers,
            address=None if options.ray_address == "local" else options.ray_address,
            num_gpus=options.ray_gpus_per_worker,
            **loading,
        )
    else:
        classifier = create_classifier(ref, device=options.device, **loading)
    return ClassifierPredictor(classifier)


def _generative(
    generative: Sequence[ModelRef], styles: Sequence[PromptStyle], options: ModelOptions
) -> list[Predictor]:
    predictors: list[GenerativePredictor] = []
    for ref in generative:
        local = not ref.is_server
        predictors += build_generative_predictors(
            ref,
            styles,
            mode=options.mode,
            max_new_tokens=options.max_new_tokens,
            option_score=options.option_score,
            device=options.device if local else None,
            dtype=options.dtype if local else None,
            max_batch_tokens=options.max_tokens if local else None,
            concurrency=None if local else options.concurrency,
        )
    for predictor in predictors:  # a backend that cannot score options is refused before any runs
        if predictor.mode == "scored" and predictor.prompt.choices:
            echoes_options(predictor.backend)
    return list(predictors)


def close_predictors(predictors: Sequence[Predictor]) -> None:
    """Stop what predictors hold open (worker processes, Ray actors)."""
    for predictor in predictors:
        close = getattr(predictor, "close", None)
        if callable(close):
            close()
