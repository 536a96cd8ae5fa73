"""The public functions of the commands that make and check data sets and models: ``extend``,
the human validation of its hypotheses, reports, debiasing (augment, fine-tune, the experiment),
the lm-eval export, ``doctor`` and ``demo``. Each is the function its command calls, returns data
and prints nothing; :mod:`nlibias` exports them (import them from there). Nothing heavy is
imported here: each function imports what it needs.

>>> import nlibias
>>> nlibias.extend is extend and nlibias.make_report is make_report
True
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from nlibias.schema.arguments import checked

if TYPE_CHECKING:
    from nlibias.debias.augment import AugmentSummary
    from nlibias.debias.finetune_record import FinetuneRecord
    from nlibias.extension.config import ExtendConfig
    from nlibias.extension.pipeline import PipelineResult, StageReport
    from nlibias.integrations.lm_eval import LmEvalExport
    from nlibias.jobs.debias import DebiasResult
    from nlibias.jobs.doctor import EnvironmentReport
    from nlibias.jobs.report import ReportResult
    from nlibias.jobs.validation import ExportResult, ImportResult

__all__ = [
    "augment",
    "debias_models",
    "demo",
    "doctor",
    "export_lm_eval",
    "extend",
    "finetune",
    "make_report",
    "validation_export",
    "validation_import",
    "validation_prescreen",
    "validation_resolve",
    "validation_status",
]


def _names(value: str | Sequence[str]) -> list[str]:
    """One name or several, as a list."""
    return [value] if isinstance(value, str) else list(value)


@checked(lazy={"ExtendConfig": "nlibias.extension.config", "StageReport": "nlibias.extension.pipeline"})
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
    on_stage: Callable[[StageReport], None] | None = None,
) -> PipelineResult:
    """Extend BBNLI the BBNLI-next way (masks → masked → fill → filter → validate →
    counterfactual → export) into ``out_dir``; as ``nlibias extend``. ``config``: an
    ``ExtendConfig``, a YAML file or None (the defaults); the other settings go on top of it
    (``fill_model``: a masked or causal LM, ``fake`` for a dry run; ``classifiers`` and ``holdout``:
    filter and held-out NLI models). A rerun resumes; the result's ``status`` is ``complete``,
    ``stopped`` (``until``) or ``awaiting_judgements``. ``on_stage`` is called with each stage's
    report as the stage finishes.

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
        on_stage=on_stage,
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
