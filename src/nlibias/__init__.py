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

The package imports nothing heavy at import time; torch, transformers and pandas are imported by
the functions that need them. Every public function checks its arguments against its type hints
(:func:`nlibias.schema.arguments.checked`): a wrong type is a ConfigError naming the argument.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from nlibias.schema.arguments import checked
from nlibias.version import __version__

if TYPE_CHECKING:
    from nlibias.benchmarks.base import Benchmark, BenchmarkSamples, Extra, Measures
    from nlibias.catalog.registry import register_benchmark
    from nlibias.debias.augment import AugmentSummary
    from nlibias.debias.finetune_record import FinetuneRecord
    from nlibias.extension.config import ExtendConfig
    from nlibias.extension.pipeline import PipelineResult
    from nlibias.integrations.lm_eval import LmEvalExport
    from nlibias.jobs.audit import CacheOption
    from nlibias.jobs.debias import DebiasResult
    from nlibias.jobs.doctor import EnvironmentReport
    from nlibias.jobs.expand import Samples
    from nlibias.jobs.explain import ExplainResult
    from nlibias.jobs.gate import GateResult
    from nlibias.jobs.report import ReportResult
    from nlibias.jobs.results import AuditResult
    from nlibias.jobs.validation import ExportResult, ImportResult
    from nlibias.models.base import NLIClassifier
    from nlibias.runtime.contract import Predictor, PredictorRun
    from nlibias.schema import Prediction, Sample
    from nlibias.schema.columns import SampleColumns
    from nlibias.schema.measure_info import MeasureInfo
    from nlibias.schema.outputs import ModelOutputs

_PUBLIC_TYPES = {
    "AuditResult": "nlibias.jobs.results",
    "GateResult": "nlibias.jobs.gate",
    "Samples": "nlibias.jobs.expand",
    "Sample": "nlibias.schema",
    "Prediction": "nlibias.schema",
    "Benchmark": "nlibias.benchmarks.base",
    "BenchmarkSamples": "nlibias.benchmarks.base",
    "Measures": "nlibias.benchmarks.base",
    "Extra": "nlibias.benchmarks.base",
    "MeasureInfo": "nlibias.schema.measure_info",
    "SampleColumns": "nlibias.schema.columns",
    "ModelOutputs": "nlibias.schema.outputs",
    "register_benchmark": "nlibias.catalog.registry",
    "Predictor": "nlibias.runtime.contract",
    "PredictorRun": "nlibias.runtime.contract",
    "NLIClassifier": "nlibias.models.base",
}
"""The public types, imported when first used (the package itself imports nothing heavy)."""

__all__ = [
    "AuditResult",
    "Benchmark",
    "BenchmarkSamples",
    "Extra",
    "GateResult",
    "MeasureInfo",
    "Measures",
    "ModelOutputs",
    "NLIClassifier",
    "Prediction",
    "Predictor",
    "PredictorRun",
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
    module = _PUBLIC_TYPES.get(name)
    if module is None:
        raise AttributeError(f"module 'nlibias' has no attribute {name!r}")
    import importlib

    return getattr(importlib.import_module(module), name)


@checked
def expand(
    name: str, source: str | Path | None = None, *, out_dir: str | Path | None = None, **options: Any
) -> Samples:
    """Expand a registered benchmark (``bbnli``, ``wq-nli``, ``occupations``, ...) from ``source``
    (default: its file in the data dir) into samples written to ``out_dir`` (default: a new
    temporary directory). ``options``: the benchmark's own (occupations: ``balance``); as
    ``nlibias expand``."""
    from nlibias.jobs.expand import expand_samples

    return expand_samples(name, source, out_dir=out_dir, **options)


@checked(
    lazy={
        "Samples": "nlibias.jobs.expand",
        "Sample": "nlibias.schema",
        "Predictor": "nlibias.runtime.contract",
        "CacheOption": "nlibias.jobs.audit",
    }
)
def audit(
    samples: Samples | str | Path | Sequence[Sample],
    models: str | Predictor | Sequence[str | Predictor] = (),
    generative: str | Sequence[str] = (),
    prompts: str | Sequence[str] = (),
    *,
    cache: CacheOption = True,
    out_dir: str | Path | None = None,
    bootstrap: int = 1000,
    seed: int = 0,
    progress: bool = True,
    limit: int | None = None,
    **model_options: Any,
) -> AuditResult:
    """Audit NLI classifiers (``models``: hub names, local directories, ``fake:NAME``, or your
    own model as an object keeping the :class:`Predictor` contract) and
    generative LMs (``generative``: ``smollm2``, ``hf:NAME``, ``gguf:PATH``,
    ``openai:URL#MODEL``, asked with each of ``prompts``: ``true``, ``entailed`` or prompt files)
    on ``samples``; as ``nlibias audit``. ``mlm=`` / ``causal=`` add language models scoring the
    samples' sentence pairs (token-probability bias; ``tp_variants=["shared", "whole"]``).
    ``cache``: True (the user prediction cache), False, or a file. ``limit``: audit a stratified
    subset of about that many samples (pairs whole, every subtopic, drawn with ``seed``).
    Returns an :class:`AuditResult` with its predictions in memory."""
    from nlibias.jobs.audit import run_audit

    return run_audit(
        samples,
        models,
        generative,
        prompts,
        cache=cache,
        out_dir=out_dir,
        bootstrap=bootstrap,
        seed=seed,
        progress=progress,
        limit=limit,
        **model_options,
    ).materialised()


@checked(lazy={"Samples": "nlibias.jobs.expand", "Sample": "nlibias.schema"})
def score(
    samples: Samples | str | Path | Sequence[Sample],
    predictions: str | Path,
    *,
    out_dir: str | Path | None = None,
    bootstrap: int = 1000,
    seed: int = 0,
) -> AuditResult:
    """Score a predictions file (from nlibias or any tool: JSONL with ``id``, ``label``, optional
    ``model`` and ``probs``) with the samples' measures; as ``nlibias score``."""
    from nlibias.jobs.score import run_score

    return run_score(samples, predictions, out_dir=out_dir, bootstrap=bootstrap, seed=seed).materialised()


@checked(lazy={"NLIClassifier": "nlibias.models.base"})
def explain(
    run_dir: str | Path, judges: str | NLIClassifier | Sequence[str | NLIClassifier], **options: Any
) -> ExplainResult:
    """Label the explanations of an audit's generated answers (``mode="generated"``) with NLI
    judges (``fake:NAME``, Hugging Face names, ``prompt:MODEL`` or classifier objects): writes
    ``run_dir/explanations/``; as ``nlibias explain``. ``options``: ``threshold``, ``samples``,
    ``cache``, ``bootstrap``, ``seed``, ``progress`` and the judges' ``device``/``dtype``/...

    >>> # nlibias.explain("runs/G", ["fake:j"]).summary["models"]"""
    from nlibias.jobs.explain import run_explain

    return run_explain(run_dir, judges, **options)


@checked
def load_run(directory: str | Path) -> AuditResult:
    """The result of an earlier audit or scoring, from its run directory."""
    from nlibias.jobs.results import load_run as load

    return load(directory)


@checked
def gate(
    candidate: str | Path,
    baseline: str | Path | None = None,
    rules: str | Path | None = None,
    pairs: dict[str, str] | None = None,
    margin: float | None = None,
    **options: Any,
) -> GateResult:
    """Is the candidate run's model more biased than the baseline's (the same samples)? A paired
    bootstrap per headline measure and slice, Holm-adjusted; as ``nlibias gate``. ``rules``: a
    rules file (margins, ``max_abs`` limits, slices, confidence); ``options``: ``samples``.

    >>> # nlibias.gate("runs/candidate", "runs/shipped").passed"""
    from nlibias.jobs.gate import gate as run_gate

    return run_gate(candidate, baseline, rules=rules, pairs=pairs, margin=margin, **options)


@checked
def model_index(run: str | Path, model: str | None = None) -> list[dict[str, Any]]:
    """A run's headline measures and accuracy as the ``model-index`` metadata of a Hugging Face
    model card (one entry per model, ``verified: false``); as ``nlibias export model-index``.

    >>> # nlibias.model_index("runs/audit")[0]["results"][0]["metrics"]"""
    from nlibias.jobs.model_index import model_index as build

    return build(run, model=model)


@checked
def list_benchmarks() -> list[dict[str, Any]]:
    """The registered benchmarks: name, description, sample sources, whether they expand; as
    ``nlibias benchmarks``."""
    from nlibias.catalog.registry import describe_benchmarks

    return describe_benchmarks()


def _names(value: str | Sequence[str]) -> list[str]:
    """One name or several, as a list."""
    return [value] if isinstance(value, str) else list(value)


@checked(lazy={"ExtendConfig": "nlibias.extension.config"})
def extend(
    config: ExtendConfig | str | Path | None = None,
    *,
    out_dir: str | Path | None = None,
    source: str | Path | None = None,
    fill_model: str | None = None,
    top_k: int | None = None,
    classifiers: str | Sequence[str] = (),
    compare_fill: str | Sequence[str] = (),
    holdout: str | Sequence[str] = (),
    policy: str | None = None,
    subtopics: str | Sequence[str] = (),
    unvalidated: bool = False,
    judgements: str | Path | None = None,
    templates: str | Path | None = None,
    derive: bool | None = None,
    cache: str | Path | None = None,
    device: str | None = None,
    from_stage: str | None = None,
    until: str | None = None,
    force: bool = False,
    progress: bool = True,
) -> PipelineResult:
    """Extend BBNLI the BBNLI-next way (masks → masked → fill → filter → validate →
    counterfactual → export) into ``out_dir``; as ``nlibias extend``. ``config``: an
    ``ExtendConfig``, a YAML file or None (the defaults); the other settings go on top of it
    (``fill_model``: a masked or causal LM, ``fake`` for a dry run; ``classifiers`` and ``holdout``:
    filter and held-out NLI models). A rerun resumes; the result's ``status`` is ``complete``,
    ``stopped`` (``until``) or ``awaiting_judgements``.

    >>> # nlibias.extend(out_dir="runs/next", fill_model="fake", classifiers=["fake:a"],
    >>> #                unvalidated=True).status"""
    from nlibias.jobs.extend import run_extend

    return run_extend(
        config,
        out_dir=out_dir,
        source=source,
        fill_model=fill_model,
        top_k=top_k,
        classifiers=_names(classifiers),
        compare_fill=_names(compare_fill),
        holdout=_names(holdout),
        policy=policy,
        subtopics=_names(subtopics),
        unvalidated=unvalidated,
        judgements=judgements,
        templates=templates,
        derive=derive,
        cache=cache,
        device=device,
        from_stage=from_stage,
        until=until,
        force=force,
        progress=progress,
    )


@checked
def augment(
    train: str | Path,
    out_dir: str | Path,
    *,
    select: str = "occupation",
    match: str = "words",
    word_list: str | Path = "winobias",
    names: str | Path | None = None,
    split: str = "train",
    her: str = "rule",
    her_model: str | None = None,
    progress: bool = True,
) -> AugmentSummary:
    """Gender-swap augmentation of an NLI training set (paper 004 §4): ``out_dir/train.jsonl``
    holds the rows, then swapped copies of the selected ones (``select``: ``occupation`` or
    ``all``); as ``nlibias augment gender-swap``. Returns the summary (rows read, swapped, ...).

    >>> # nlibias.augment("snli_train.jsonl", "runs/aug")["swapped"]"""
    from nlibias.debias.augment import augment_gender_swap

    return augment_gender_swap(
        train,
        out_dir,
        select=select,
        match=match,
        word_list=word_list,
        names=names,
        split=split,
        her=her,
        her_model=her_model,
        progress=progress,
    )


@checked
def finetune(
    model: str,
    train: str | Path,
    out_dir: str | Path,
    *,
    eval_path: str | Path | None = None,
    learning_rate: float | None = None,
    epochs: float = 3.0,
    batch_size: int = 32,
    max_length: int = 128,
    max_steps: int = -1,
    save_steps: int = 500,
    seed: int = 42,
    lr_scheduler: str = "linear",
    warmup_steps: int = 0,
    warmup_ratio: float = 0.0,
    split: str = "train",
    eval_split: str = "validation",
    force: bool = False,
    progress: bool = True,
) -> FinetuneRecord:
    """Fine-tune a Hugging Face sequence classifier (hub name or directory) on an NLI training set
    into ``out_dir`` (paper 004's defaults; a killed run resumes); as ``nlibias finetune``.
    Returns the record also written as ``out_dir/finetune.json``.

    >>> # nlibias.finetune("bert-base-uncased", "runs/aug", "runs/bert-aug")["eval_accuracy"]"""
    from nlibias.debias.finetune import finetune as train_model

    return train_model(
        model,
        train,
        out_dir,
        eval_path=eval_path,
        learning_rate=learning_rate,
        epochs=epochs,
        batch_size=batch_size,
        max_length=max_length,
        max_steps=max_steps,
        save_steps=save_steps,
        seed=seed,
        lr_scheduler=lr_scheduler,
        warmup_steps=warmup_steps,
        warmup_ratio=warmup_ratio,
        split=split,
        eval_split=eval_split,
        force=force,
        progress=progress,
    )


@checked
def debias_models(
    models: str | Sequence[str],
    train: str | Path,
    out_dir: str | Path,
    *,
    eval_path: str | Path | None = None,
    premises: str | Path | None = None,
    augment_options: Mapping[str, Any] | None = None,
    finetune_options: Mapping[str, Any] | None = None,
    audit_options: Mapping[str, Any] | None = None,
    bootstrap: int = 1000,
    seed: int = 42,
    seeds: int = 1,
    force: bool = False,
    progress: bool = True,
    min_effect: float | None = None,
) -> DebiasResult:
    """Paper 004's debiasing experiment: augment ``train`` (``augment_options``: those of
    :func:`augment`), fine-tune each model on the original and on the augmented set
    (``finetune_options``: those of :func:`finetune`; ``seeds`` times), audit them on the
    occupation set and compare before with after; as ``nlibias debias``. Every step is kept in
    ``out_dir`` (a rerun resumes). Named ``debias_models`` because ``nlibias.debias`` is the package.

    >>> # nlibias.debias_models("bert-base-uncased", "snli_train.jsonl", "runs/debias").comparison"""
    from nlibias.jobs.debias import run_debias

    options: dict[str, Any] = {} if min_effect is None else {"min_effect": min_effect}
    return run_debias(
        _names(models),
        train,
        out_dir,
        eval_path=eval_path,
        premises=premises,
        augment_options=None if augment_options is None else dict(augment_options),
        finetune_options=None if finetune_options is None else dict(finetune_options),
        audit_options=None if audit_options is None else dict(audit_options),
        bootstrap=bootstrap,
        seed=seed,
        seeds=seeds,
        force=force,
        progress=progress,
        **options,
    )


@checked
def make_report(
    runs: str | Path | Sequence[str | Path],
    out: str | Path | None = None,
    *,
    fmt: str | None = None,
    compare: bool = False,
    plots: bool = True,
    debias: bool = False,
    pairs: Sequence[str | tuple[str, str]] = (),
    min_effect: float | None = None,
) -> ReportResult:
    """The report of run directories (audit, score, extend); as ``nlibias report``. By default the
    HTML report (``out``, default ``<first run>/report.html``); ``fmt`` (``md``, ``latex``,
    ``csv``): the paper tables as ``text`` (written to ``out`` when given); ``compare``: side by
    side; ``debias`` (or ``pairs`` of ``BEFORE=AFTER`` model keys): the before/after tables of one
    occupation audit. Named ``make_report`` because ``nlibias.report`` is the package.

    >>> # print(nlibias.make_report("runs/audit", fmt="md").text)"""
    from nlibias.jobs.report import make_report as make

    paths = [runs] if isinstance(runs, str | Path) else list(runs)
    return make(
        paths,
        out,
        fmt=fmt,
        compare=compare,
        plots=plots,
        debias=debias,
        pairs=pairs,
        min_effect=min_effect,
    )


@checked
def validation_status(
    run_dir: str | Path,
    *,
    rule: str = "drop",
    min_annotators: int = 1,
    exclude: str | Sequence[str] = (),
) -> dict[str, Any]:
    """How far the human validation of an ``extend`` run is: progress per annotator, agreement
    (percent, Cohen's/Fleiss' kappa) per round, label and subtopic, and a preview of the
    resolution with ``rule`` (``drop``, ``majority``, ``adjudicator:NAME``); as
    ``nlibias validate status``.

    >>> # nlibias.validation_status("runs/next")["progress"]"""
    from nlibias.jobs.validation import status

    return status(run_dir, rule=rule, min_annotators=min_annotators, exclude=_names(exclude))


@checked
def validation_resolve(run_dir: str | Path, *, rule: str = "drop", min_annotators: int = 1) -> dict[str, Any]:
    """Write the final labels of an ``extend`` run's queue to ``validation/judgements.csv`` (then
    ``extend(..., from_stage="validate")``); as ``nlibias validate resolve``.

    >>> # nlibias.validation_resolve("runs/next", rule="majority")["status"]"""
    from nlibias.jobs.validation import resolve

    return resolve(run_dir, rule=rule, min_annotators=min_annotators)


@checked
def validation_export(
    run_dir: str | Path, *, fmt: str = "csv", out: str | Path | None = None
) -> ExportResult:
    """An ``extend`` run's queue with every annotator's current answers as ``fmt`` (``csv``,
    ``label-studio``, ``argilla``), written to ``out`` when given; as ``nlibias validate export``.

    >>> # nlibias.validation_export("runs/next", fmt="label-studio").text"""
    from nlibias.jobs.validation import export

    return export(run_dir, fmt=fmt, out=out)


@checked
def validation_import(
    run_dir: str | Path, file: str | Path, *, fmt: str = "auto", annotator: str | None = None
) -> ImportResult:
    """Add judgements made elsewhere (CSV, Label Studio JSON export, Argilla records) to an
    ``extend`` run's annotation database; unknown or duplicate rows are refused naming the file
    and line; as ``nlibias validate import``.

    >>> # nlibias.validation_import("runs/next", "judged.csv", annotator="ana").answers"""
    from nlibias.jobs.validation import import_judgements

    return import_judgements(run_dir, file, fmt=fmt, annotator=annotator)


@checked
def validation_prescreen(
    run_dir: str | Path,
    *,
    judge: str | None = None,
    lm_judge: str | None = None,
    cache: str | Path | None = None,
    threshold: float = 0.5,
    progress: bool = True,
) -> dict[str, Any]:
    """Store model suggestions for an ``extend`` run's queue (an NLI ``judge`` and/or a
    generative ``lm_judge``), shown as hints in the annotation app and measured by
    :func:`validation_status`; as ``nlibias validate prescreen``. Returns the counts per judge.

    >>> # nlibias.validation_prescreen("runs/next", judge="fake:j")["judges"]"""
    from nlibias.validation.prescreen import run_prescreen

    return run_prescreen(
        run_dir, nli_judge=judge, lm_judge=lm_judge, cache_path=cache, threshold=threshold, progress=progress
    )


@checked
def export_lm_eval(
    samples: str | Path,
    out_dir: str | Path,
    *,
    prompt: str = "true",
    model: str = "smollm2",
    task: str | None = None,
    device: str = "cpu",
) -> LmEvalExport:
    """Write an lm-evaluation-harness task that asks ``model`` what nlibias asks it (yes/no
    log-likelihoods) on ``samples`` (a run directory or samples file) into ``out_dir``; as
    ``nlibias export lm-eval``.

    >>> # nlibias.export_lm_eval("runs/bbnli", "tasks/bbnli").command"""
    from nlibias.integrations.lm_eval import export_lm_eval as export

    return export(samples, out_dir, prompt=prompt, model=model, task=task, device=device)


@checked
def doctor(*, device: bool = True) -> EnvironmentReport:
    """What nlibias runs with: versions, device, caches and their sizes, benchmark data found,
    extras; as ``nlibias doctor``. ``device=False`` skips importing torch.

    >>> # nlibias.doctor()["extras"]"""
    from nlibias.jobs.doctor import environment_report

    return environment_report(device=device)


@checked
def demo(
    out_dir: str | Path = "runs/demo",
    *,
    full: bool = False,
    pairs: int | None = None,
    seed: int = 0,
    cache: str | Path | None = None,
    bootstrap: int = 1000,
    progress: bool = True,
) -> dict[str, Any]:
    """Audit the embedded SmolLM2-135M-Instruct with both paper prompts on a sample of BBNLI
    pairs (``full``: every bias-audit sample) and write the run, its tables and its HTML report
    into ``out_dir``; as ``nlibias demo``. Offline. Returns what the command prints.

    >>> # nlibias.demo("runs/demo", pairs=20)["tables"]"""
    from nlibias.jobs.demo import DEFAULT_SAMPLE_PAIRS, run_demo

    return run_demo(
        out_dir,
        full=full,
        sample_pairs=pairs or DEFAULT_SAMPLE_PAIRS,
        seed=seed,
        cache_path=cache,
        bootstrap=bootstrap,
        progress=progress,
    )
