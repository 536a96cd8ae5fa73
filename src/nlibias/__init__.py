"""nlibias: audit social bias in NLI models and LLMs, and extend bias benchmarks (BBNLI-next).

The Python API is the command line's, function for function (both call :mod:`nlibias.jobs`):

>>> import nlibias
>>> samples = nlibias.expand("occupations")
>>> result = nlibias.audit(samples, models=["fake:a"], cache=False, bootstrap=0, progress=False)
>>> frame = result.to_frame()
>>> list(frame.columns)
['model', 'slicing', 'slice', 'measure', 'value', 'ci_low', 'ci_high', 'n']
>>> frame.query("slicing == 'overall' and measure == 'S'")["value"].round(2).tolist()
[49.91]

Nothing heavy is imported at import time. Every public function holds its arguments to its type
hints (:func:`nlibias.schema.declared.declared`): a wrong type is a ConfigError naming the argument.
"""

from __future__ import annotations

import importlib
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from nlibias.schema.declared import (
    DrawSeed,
    Name,
    NonNegativeFloat,
    PathArg,
    PositiveInt,
    Resamples,
    declared,
)
from nlibias.version import __version__

if TYPE_CHECKING:
    from nlibias.benchmarks.base import Benchmark, BenchmarkSamples, Extra, Measures
    from nlibias.catalog.registry import register_benchmark
    from nlibias.debias.augment import augment_gender_swap as augment
    from nlibias.debias.finetune import finetune
    from nlibias.integrations.lm_eval import export_lm_eval
    from nlibias.jobs.debias import run_debias as debias_models
    from nlibias.jobs.demo import demo
    from nlibias.jobs.doctor import environment_report as doctor
    from nlibias.jobs.expand import Samples
    from nlibias.jobs.explain import ExplainResult
    from nlibias.jobs.extend import extend
    from nlibias.jobs.gate import GateResult
    from nlibias.jobs.gate_rules import GateRules
    from nlibias.jobs.report import make_report
    from nlibias.jobs.results import AuditResult
    from nlibias.jobs.validation import export as validation_export
    from nlibias.jobs.validation import import_judgements as validation_import
    from nlibias.jobs.validation import resolve as validation_resolve
    from nlibias.jobs.validation import status as validation_status
    from nlibias.models.base import NLIClassifier
    from nlibias.models.generative.prompts import PromptStyle
    from nlibias.runtime.contract import Predictor, PredictorRun
    from nlibias.runtime.model_set import ModelSet
    from nlibias.runtime.options import CacheOption, ModelOptions, RunOptions
    from nlibias.schema import Prediction, Sample
    from nlibias.schema.columns import SampleColumns
    from nlibias.schema.measure_info import MeasureInfo
    from nlibias.schema.outputs import ModelOutputs, RunUnits
    from nlibias.validation.prescreen import run_prescreen as validation_prescreen

_LAZY = {
    **dict.fromkeys(("Benchmark", "BenchmarkSamples", "Extra", "Measures"), "nlibias.benchmarks.base"),
    **dict.fromkeys(("Sample", "Prediction"), "nlibias.schema"),
    **dict.fromkeys(("ModelOptions", "RunOptions"), "nlibias.runtime.options"),
    **dict.fromkeys(("Predictor", "PredictorRun"), "nlibias.runtime.contract"),
    "AuditResult": "nlibias.jobs.results",
    "GateResult": "nlibias.jobs.gate",
    "Samples": "nlibias.jobs.expand",
    "MeasureInfo": "nlibias.schema.measure_info",
    "ModelSet": "nlibias.runtime.model_set",
    "SampleColumns": "nlibias.schema.columns",
    "ModelOutputs": "nlibias.schema.outputs",
    "RunUnits": "nlibias.schema.outputs",
    "register_benchmark": "nlibias.catalog.registry",
    "NLIClassifier": "nlibias.models.base",
    "extend": "nlibias.jobs.extend",
    "augment": "nlibias.debias.augment:augment_gender_swap",
    "finetune": "nlibias.debias.finetune",
    "debias_models": "nlibias.jobs.debias:run_debias",
    "make_report": "nlibias.jobs.report",
    "validation_status": "nlibias.jobs.validation:status",
    "validation_resolve": "nlibias.jobs.validation:resolve",
    "validation_export": "nlibias.jobs.validation:export",
    "validation_import": "nlibias.jobs.validation:import_judgements",
    "validation_prescreen": "nlibias.validation.prescreen:run_prescreen",
    "export_lm_eval": "nlibias.integrations.lm_eval",
    "doctor": "nlibias.jobs.doctor:environment_report",
    "demo": "nlibias.jobs.demo",
}
"""The public types, and the very functions the commands call, imported when first used
(``module:attribute``; the attribute is the name where none is given)."""

__all__ = [
    "AuditResult",
    "Benchmark",
    "BenchmarkSamples",
    "Extra",
    "GateResult",
    "MeasureInfo",
    "Measures",
    "ModelOptions",
    "ModelOutputs",
    "ModelSet",
    "NLIClassifier",
    "Prediction",
    "Predictor",
    "PredictorRun",
    "RunOptions",
    "RunUnits",
    "Sample",
    "SampleColumns",
    "Samples",
    "__version__",
    "audit",
    "augment",
    "debias_models",
    "demo",
    "doctor",
    "expand",
    "explain",
    "export_lm_eval",
    "extend",
    "finetune",
    "gate",
    "list_benchmarks",
    "load_run",
    "make_report",
    "model_index",
    "register_benchmark",
    "score",
    "validation_export",
    "validation_import",
    "validation_prescreen",
    "validation_resolve",
    "validation_status",
]


def __getattr__(name: str) -> Any:
    if name not in _LAZY:
        raise AttributeError(f"module 'nlibias' has no attribute {name!r}")
    module, _, attribute = _LAZY[name].partition(":")
    return getattr(importlib.import_module(module), attribute or name)


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))


@declared
def expand(
    name: str, source: PathArg | None = None, *, out_dir: PathArg | None = None, **options: Any
) -> Samples:
    """Expand a registered benchmark (``bbnli``, ``wq-nli``, ``occupations``, ...) from ``source``
    (default: its file in the data dir) into samples written to ``out_dir`` (default: a new
    temporary directory). ``options``: the benchmark's own (occupations: ``balance``); as
    ``nlibias expand``."""
    from nlibias.jobs.expand import expand_samples

    return expand_samples(name, source, out_dir=out_dir, **options)


@declared(
    lazy={
        "Samples": "nlibias.jobs.expand",
        "Sample": "nlibias.schema",
        "Predictor": "nlibias.runtime.contract",
        "CacheOption": "nlibias.runtime.options",
        "PromptStyle": "nlibias.models.generative.prompts",
    }
)
def audit(
    samples: Samples | PathArg | Sequence[Sample],
    models: str | Predictor | Sequence[str | Predictor] = (),
    generative: str | Sequence[str] = (),
    prompts: str | PromptStyle | Sequence[str | PromptStyle] = (),
    *,
    mlm: str | Sequence[str] = (),
    causal: str | Sequence[str] = (),
    tp_variants: str | Sequence[str] = ("shared",),
    cache: CacheOption = True,
    out_dir: PathArg | None = None,
    bootstrap: Resamples = 1000,
    seed: DrawSeed = 0,
    progress: bool = True,
    limit: PositiveInt | None = None,
    **model_options: Any,
) -> AuditResult:
    """Audit NLI classifiers (``models``: hub names, local directories, ``fake:NAME``, or objects
    keeping the :class:`Predictor` contract) and generative LMs (``generative``: ``smollm2``,
    ``hf:NAME``, ``gguf:PATH``, ``openai:URL#MODEL``, asked with each of ``prompts``: ``true``,
    ``entailed``, prompt files or :class:`~nlibias.models.generative.prompts.PromptStyle` objects)
    on ``samples``; as ``nlibias audit``. ``mlm=`` / ``causal=`` add language models scoring the
    samples' sentence pairs (token-probability bias; ``tp_variants=["shared", "whole"]``).
    ``cache``: True (the user prediction cache), False, or a file. ``limit``: audit a stratified
    subset of about that many samples (pairs whole, every subtopic, drawn with ``seed``).
    ``model_options`` say how the models run (:class:`ModelOptions`: ``device``, ``dtype``,
    ``mode``, ``max_new_tokens``, ...). Returns an :class:`AuditResult` with its predictions in
    memory."""
    from nlibias.jobs.audit import audit_settings, run_audit
    from nlibias.runtime.model_set import ModelSet

    own, run, options = audit_settings(
        model_options, cache=cache, bootstrap=bootstrap, seed=seed, progress=progress, limit=limit
    )
    asked = ModelSet.of(models, generative, prompts, mlm=mlm, causal=causal, tp_variants=tp_variants)
    return run_audit(samples, asked, options=options, run=run, out_dir=out_dir, **own)


@declared(lazy={"Samples": "nlibias.jobs.expand", "Sample": "nlibias.schema"})
def score(
    samples: Samples | PathArg | Sequence[Sample],
    predictions: PathArg | Sequence[PathArg],
    *,
    out_dir: PathArg | None = None,
    bootstrap: Resamples = 1000,
    seed: DrawSeed = 0,
    answer_column: Name | None = None,
) -> AuditResult:
    """Score a predictions file or several (from nlibias or any tool: JSONL with ``id``, ``label``,
    optional ``model`` and ``probs``; with ``answer_column``, answer strings in that column, as BBQ's
    published results) with the samples' measures; as ``nlibias score``."""
    from nlibias.jobs.score import run_score

    scored = run_score(
        samples, predictions, out_dir=out_dir, bootstrap=bootstrap, seed=seed, answer_column=answer_column
    )
    return scored.materialised()


@declared(lazy={"NLIClassifier": "nlibias.models.base"})
def explain(
    run_dir: PathArg, judges: str | NLIClassifier | Sequence[str | NLIClassifier], **options: Any
) -> ExplainResult:
    """Label the explanations of an audit's generated answers (``mode="generated"``) with NLI
    judges (``fake:NAME``, Hugging Face names, ``prompt:MODEL`` or classifier objects): writes
    ``run_dir/explanations/``; as ``nlibias explain``. ``options``: ``threshold``, ``samples``,
    ``cache``, ``bootstrap``, ``seed``, ``progress`` and the judges' ``device``/``dtype``/...

    >>> # nlibias.explain("runs/G", ["fake:j"]).summary["models"]"""
    from nlibias.jobs.explain import run_explain

    return run_explain(run_dir, judges, **options)


@declared
def load_run(directory: PathArg) -> AuditResult:
    """The result of an earlier audit or scoring, from its run directory."""
    from nlibias.jobs.results import load_run as load

    return load(directory)


@declared(lazy={"GateRules": "nlibias.jobs.gate_rules"})
def gate(
    candidate: PathArg,
    baseline: PathArg | None = None,
    rules: PathArg | GateRules | None = None,
    pairs: dict[str, str] | None = None,
    margin: NonNegativeFloat | None = None,
    *,
    samples: PathArg | None = None,
) -> GateResult:
    """Is the candidate run's model more biased than the baseline's (the same samples)? A paired
    bootstrap per headline measure and slice, Holm-adjusted; as ``nlibias gate``. ``rules``: a
    rules file (margins, ``max_abs`` limits, slices, confidence) or a ``GateRules`` object;
    ``samples``: the samples file, where a run's recorded one has moved.

    >>> # nlibias.gate("runs/candidate", "runs/shipped").passed"""
    from nlibias.jobs.gate import gate as run_gate

    return run_gate(candidate, baseline, rules=rules, pairs=pairs, margin=margin, samples=samples)


@declared
def model_index(run: PathArg, model: str | None = None, name: str | None = None) -> list[dict[str, Any]]:
    """A run's headline measures and accuracy as the ``model-index`` metadata of a Hugging Face
    model card (one entry per model, ``verified: false``), as ``nlibias export model-index``
    writes it for one: a card describes one model, so pass ``model`` for a run of several (the
    command refuses such a run without it). ``name``: the model's name (one model's index).

    >>> # nlibias.model_index("runs/audit")[0]["results"][0]["metrics"]"""
    from nlibias.jobs.model_index import model_index as build

    return build(run, model=model, name=name)


@declared
def list_benchmarks() -> list[dict[str, Any]]:
    """The registered benchmarks: name, description, sample sources, whether they expand; as
    ``nlibias benchmarks``."""
    from nlibias.catalog.registry import describe_benchmarks

    return describe_benchmarks()
