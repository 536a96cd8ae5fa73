"""Turn command-line model specs into predictors (NLI classifiers, generative LMs, sentence
scorers), after checking that the samples' benchmark can score each kind asked for."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from nlibias.errors import ConfigError
from nlibias.runtime.base import Predictor
from nlibias.schema.model_keys import DEFAULT_MAX_NEW_TOKENS, PredictorKind

SPEC_KINDS: dict[str, PredictorKind] = {
    "models": "classifier",
    "generative": "generative",
    "mlm": "sentence-logprob",
    "causal": "sentence-logprob",
}
"""The predictor kind of the specs given in each parameter of :func:`build_predictors` (and
:func:`nlibias.jobs.run.run_audit`)."""


def check_specs_for_source(source: str, **specs: Sequence[str]) -> None:
    """Refuse model specs whose predictor kind the samples' benchmark cannot score, before any
    model is loaded (a classifier on sentence pairs, a sentence scorer on samples without them):
    ``specs`` are the spec lists by parameter (``models``, ``generative``, ``mlm``, ``causal``).

    >>> check_specs_for_source("wq-nli", models=["fake:a"], mlm=["bert-base-uncased"])  # both kinds
    >>> check_specs_for_source("occupations", models=["fake:a"], causal=["gpt2"])  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    nlibias.errors.ConfigError: occupations samples hold no sentence pairs: ...; causal= takes language ...
    """
    from nlibias.benchmarks.registry import check_predictor_kind

    for parameter, given in specs.items():
        if given:
            check_predictor_kind(source, SPEC_KINDS[parameter], parameter=parameter)


def build_predictors(
    models: Sequence[str],
    *,
    generative: Sequence[str] = (),
    prompts: Sequence[str] = (),
    mlm: Sequence[str] = (),
    causal: Sequence[str] = (),
    tp_variants: Sequence[str] = ("shared",),
    mode: str = "scored",
    max_new_tokens: int = DEFAULT_MAX_NEW_TOKENS,
    label_map: str | None = None,
    revision: str | None = None,
    device: str | None = None,
    max_tokens: int = 8192,
    quantize: str | None = None,
    compile: bool = False,
    threads: int | None = None,
    devices: Sequence[str] = (),
    ray_address: str | None = None,
    ray_workers: int = 2,
    ray_gpus_per_worker: float = 0.0,
    concurrency: int | None = None,
) -> list[Predictor]:
    """One predictor per ``--model`` and one per (``--generative``, ``--prompt``) combination.

    ``quantize``, ``compile`` and ``threads`` go to the NLI classifiers (see
    :class:`~nlibias.models.nli.hf.HFNLIClassifier`); unset, they are not passed at all.

    ``devices`` (``["cuda:0", "cuda:1"]``) shards each NLI classifier over one worker process per
    device (:class:`~nlibias.models.nli.sharded.ShardedNLIClassifier`); ``ray_address`` (``"local"``
    or a cluster address such as ``"auto"`` / ``"ray://host:10001"``) runs it on ``ray_workers``
    Ray Data actors (:class:`~nlibias.models.nli.ray_data.RayNLIClassifier`). Both give the results
    of one process and share its cache entries. Call :func:`close_predictors` when done.

    ``mlm`` and ``causal`` add sentence scorers (token-probability bias; one predictor per model
    and ``tp_variants`` entry, :mod:`nlibias.runtime.sentence_logprob`).

    ``concurrency``: requests in flight to each generative model behind a server
    (``openai:URL#MODEL``; default 4): a server that batches concurrent requests, such as vLLM,
    answers that many at once.

    >>> build_predictors(["fake:a"], devices=["cpu"], device="cpu")
    Traceback (most recent call last):
    ...
    nlibias.errors.ConfigError: device and devices exclude each other: devices lists every device to use
    """
    from nlibias.models.hf_common import check_speed_values, set_torch_threads
    from nlibias.models.registry import create_classifier
    from nlibias.runtime.predict import ClassifierPredictor

    check_speed_values(quantize=quantize, compile=compile, threads=threads)
    if (quantize or compile) and not models:
        raise ConfigError(
            "quantize and compile apply to NLI classifiers; name one in models",
            parameter="quantize" if quantize else "compile",
        )
    set_torch_threads(threads)  # process-wide: the generative LMs run with it too

    for parameter, specs in (
        ("models", models),
        ("generative", generative),
        ("mlm", mlm),
        ("causal", causal),
    ):
        if any(not spec.strip() for spec in specs):  # "" would load the current directory as a model
            raise ConfigError(f"{parameter} holds an empty model name; name a model", parameter=parameter)
    parsed_map: Any = None
    if label_map is not None:
        from nlibias.models.nli.labels import check_label_map_applies, parse_label_map

        parsed_map = parse_label_map(label_map)
        check_label_map_applies(models)  # a map no classifier reads would be ignored without a word
    devices = [d.strip() for d in devices if d.strip()]
    if devices and device is not None:
        raise ConfigError(
            "device and devices exclude each other: devices lists every device to use", parameter="device"
        )
    if devices and ray_address is not None:
        raise ConfigError(
            "devices and ray_address exclude each other: shard on one machine or on a Ray cluster",
            parameter="ray_address",
        )
    if ray_address is not None and device is not None:
        raise ConfigError(
            "device does not apply with ray_address: Ray places each worker (ray_gpus_per_worker)",
            parameter="device",
        )
    options: dict[str, Any] = dict(
        label_map=parsed_map,
        revision=revision,
        max_tokens=max_tokens,
        quantize=quantize,
        compile=compile or None,  # None is not passed: backends without the option still work
        threads=threads,
    )
    predictors: list[Predictor] = []
    for spec in models:
        classifier: Any
        if devices:
            from nlibias.models.nli.sharded import ShardedNLIClassifier

            classifier = ShardedNLIClassifier(spec, devices, **options)
        elif ray_address is not None:
            from nlibias.models.nli.ray_data import RayNLIClassifier

            classifier = RayNLIClassifier(
                spec,
                num_workers=ray_workers,
                address=None if ray_address == "local" else ray_address,
                num_gpus=ray_gpus_per_worker,
                **options,
            )
        else:
            classifier = create_classifier(spec, device=device, **options)
        predictors.append(ClassifierPredictor(classifier))
    from nlibias.models.generative.backend import is_server_spec
    from nlibias.runtime.generative import build_generative_predictors

    if concurrency is not None and not any(is_server_spec(spec) for spec in [*generative, *causal]):
        raise ConfigError(
            "concurrency applies to generative models behind a server; add openai:URL#MODEL to generative",
            parameter="concurrency",
        )
    if generative:
        for spec in generative:
            local = not is_server_spec(spec)  # servers batch and place the model themselves
            predictors.extend(
                build_generative_predictors(
                    spec,
                    list(prompts),  # empty: both of the paper's prompt styles
                    mode=mode,
                    max_new_tokens=max_new_tokens,
                    device=device if local else None,
                    max_batch_tokens=max_tokens if local else None,
                    concurrency=None if local else concurrency,
                )
            )
    elif prompts:
        raise ConfigError("prompts apply to generative models; name one in generative", parameter="prompts")
    if mlm or causal:
        from nlibias.runtime.sentence_logprob import build_sentence_predictors

        predictors.extend(
            build_sentence_predictors(
                list(mlm),
                list(causal),
                variants=list(tp_variants),
                device=device,
                revision=revision,
                concurrency=concurrency,
            )
        )
    return predictors


def close_predictors(predictors: Sequence[Predictor]) -> None:
    """Stop what predictors hold open (worker processes, Ray actors); safe to call twice."""
    for predictor in predictors:
        close = getattr(predictor, "close", None)
        if callable(close):
            close()
