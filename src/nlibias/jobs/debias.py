"""``nlibias debias``: paper 004's whole experiment in one call (steps and layout:
docs/debiasing.md); a rerun skips the steps whose recorded inputs match (:mod:`nlibias.io.stages`)."""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, fields, replace
from functools import partial
from pathlib import Path
from typing import Annotated, Any, cast

from annotated_types import MinLen, Predicate

from nlibias.debias.augment import SUMMARY_FILE, TRAIN_FILE, augment_gender_swap, check_selection
from nlibias.debias.finetune import (
    RECORD_FILE,
    TrainingOptions,
    finetune,
    finetune_inputs,
    finetune_settings,
)
from nlibias.debias.finetune_checks import (
    check_base_model,
    check_split_applies,
    check_splits,
    check_training_set,
    refuse_eval_is_train,
)
from nlibias.debias.finetune_record import read_record
from nlibias.debias.swap import check_her
from nlibias.debias.training_rows import TrainingSet
from nlibias.debias.wordlists import swap_list_named
from nlibias.errors import ConfigError, NlibiasError
from nlibias.io.jsonl import json_object_or_none
from nlibias.io.overwrites import refuse_other_run, refuse_overwrites, refuse_writing_into
from nlibias.io.run_manifest import read_manifest
from nlibias.io.stages import DONE, Stage, begin_stage, canonical, check_stages, finish_stage, model_identity
from nlibias.jobs.audit import audit_settings, run_audit
from nlibias.jobs.debias_compare import COMPARISON_JSON, MIN_EFFECT, DebiasComparison, compare_debiasing
from nlibias.jobs.expand import SUMMARY_JSON, expand_samples
from nlibias.schema.declared import (
    Allowed,
    Name,
    NonNegativeFloat,
    PathArg,
    PositiveInt,
    Resamples,
    Seed,
    declared,
    one_or_many,
)
from nlibias.version import __version__


def model_dir_name(model: str) -> str:
    """A model's folder name under ``OUT/models``.

    >>> model_dir_name("FacebookAI/roberta-base"), model_dir_name("/tmp/my model/")
    ('roberta-base', 'my_model')
    """
    return model.rstrip("/").rsplit("/", 1)[-1].replace(" ", "_")


_STEP_FOLDERS = ("augmented", "models", "occupations", "audit", "stages")
"""The folders of ``OUT`` the steps write (and a forced step replaces)."""


@dataclass(frozen=True)
class DebiasResult:
    """What :func:`run_debias` compared, and which steps it ran and which it reused."""

    comparison: DebiasComparison
    ran: list[str]
    reused: list[str]


@dataclass(frozen=True)
class _Tune:
    model: str
    seed: int
    data: str  # "base" or "aug"
    stage: Stage


def _file(path: str | Path | None) -> dict[str, Any] | None:
    """A plain file (premises, names) by absolute path and SHA-256."""
    if path is None:
        return None
    where = Path(path).expanduser().absolute()
    return {"path": str(where), "sha256": hashlib.sha256(where.read_bytes()).hexdigest()}


def _augment_split(augment: dict[str, Any], split: str, train: str | Path) -> dict[str, Any]:
    """The augment options reading the fine-tunes' ``split`` (both models learn from the same rows).

    >>> _augment_split({"select": "all"}, "validation", "nyu-mll/glue:mnli")
    {'select': 'all', 'split': 'validation'}
    >>> _augment_split({"split": "train"}, "validation", "nyu-mll/glue:mnli")
    Traceback (most recent call last):
    nlibias.errors.ConfigError: augment_options' split 'train' differs from finetune_options' split 'validation': the original model would learn from other rows than the augmented one; give the split once, in finetune_options
    """
    given = augment.get("split", split)
    if given != split:
        check_split_applies(train, given)  # a file has no splits: refused as such first
        raise ConfigError(
            f"augment_options' split {given!r} differs from finetune_options' split {split!r}: the original "
            "model would learn from other rows than the augmented one; give the split once, in finetune_options",
            parameter="augment_options",
        )
    return augment if split == "train" else {**augment, "split": split}


def _stages(
    out: Path,
    models: Sequence[str],
    seeds: list[int],
    train: TrainingSet,
    eval_set: TrainingSet | None,
    options: TrainingOptions,
    augment_options: dict[str, Any],
    premises: str | Path | None,
    audit_options: dict[str, Any] | None,
    bootstrap: int,
) -> tuple[Stage, list[_Tune], Stage, Stage, Stage]:
    """The augment stage, the fine-tunes (base and augmented, per model and seed), the later stages."""
    augment_inputs = {
        "train": train.record(),
        "options": canonical(augment_options),
        "word_list_sha256": swap_list_named(augment_options.get("word_list", "winobias")).digest(),
        "names": _file(augment_options.get("names")),
    }
    augment = Stage("augment", out / "augmented", out / "augmented" / SUMMARY_FILE, augment_inputs)
    tunes = []
    for model in models:
        identity = model_identity(model)
        for seed in seeds:
            settings = finetune_settings(model, replace(options, seed=seed))
            for data in ("base", "aug"):
                target = out / "models" / f"{model_dir_name(model)}-{data}-s{seed}"
                inputs = finetune_inputs(settings, train, eval_set, base_model=identity)
                if data == "aug":  # the augmented file is written later: its stage stands for it
                    inputs["train"] = {"augment_stage": augment.fingerprint}
                reads = ("augment",) if data == "aug" else ()
                # finished when its record reads (one cut short by a power cut is redone)
                intact = partial(lambda at: read_record(at)[0] is not None, target)
                stage = Stage(f"models/{target.name}", target, target / RECORD_FILE, inputs, reads, intact)
                tunes.append(_Tune(model, seed, data, stage))
    inputs = {"premises": _file(premises), "nlibias": __version__}
    occupations = Stage("occupations", out / "occupations", out / "occupations" / SUMMARY_JSON, inputs)
    audit = Stage(
        "audit",
        out / "audit",
        out / "audit" / "manifest.json",
        {
            "samples": occupations.fingerprint,
            "models": {str(t.stage.output): t.stage.fingerprint for t in tunes},
            "options": canonical(audit_options or {}),
            "bootstrap": bootstrap,
        },
        reads=("occupations", *(t.stage.name for t in tunes)),
        complete=lambda: _complete_run(out / "audit"),
    )
    pairs = [[str(b.stage.output), str(a.stage.output)] for b, a in zip(tunes[::2], tunes[1::2], strict=True)]
    compared: dict[str, Any] = {"audit": audit.fingerprint, "pairs": pairs, "bootstrap": bootstrap}
    comparison = Stage(
        "comparison", out / "audit" / COMPARISON_JSON, out / "audit" / COMPARISON_JSON, compared, ("audit",)
    )
    return augment, tunes, occupations, audit, comparison


def _finetune_options(options: Mapping[str, Any] | None) -> TrainingOptions:
    """``finetune_options`` as the options of every fine-tune (each gets its own seed)."""
    chosen = dict(options or {})
    known = [field.name for field in fields(TrainingOptions) if field.name != "seed"]
    unknown = sorted(set(chosen) - set(known))
    if unknown:
        seed = "; give the seed as seed (and seeds), not in finetune_options" if "seed" in unknown else ""
        raise ConfigError(
            f"finetune_options has unknown keys {', '.join(unknown)}; known: {', '.join(known)}{seed}",
            parameter="finetune_options",
        )
    return TrainingOptions(**chosen)


def _complete_run(directory: Path) -> bool:
    """Whether the run directory's manifest says its last write finished."""
    try:
        manifest = read_manifest(directory)
    except NlibiasError:  # damaged: not finished
        return False
    return manifest is not None and manifest["complete"]


def _stored_comparison(
    path: Path, pairs: list[list[str]], bootstrap: int, min_effect: float = MIN_EFFECT
) -> DebiasComparison | None:
    """The comparison a finished run wrote, if of the same pairs, resamples and minimum effect."""
    stored = json_object_or_none(path)
    if stored is None:
        return None
    same = stored.get("bootstrap") == bootstrap and stored.get("seed") == 0
    same = same and stored.get("min_effect") == min_effect
    same = same and [[p.get("before"), p.get("after")] for p in stored.get("pairs") or []] == pairs
    return cast(DebiasComparison, stored) if same and "seed_groups" in stored else None


Models = (
    Name
    | Annotated[
        Sequence[Name],
        MinLen(1),
        Predicate(lambda models: len({model_dir_name(m) for m in models}) == len(models)),
        Allowed("a non-empty list of models of distinct folder names"),
    ]
)
ExistingFile = Annotated[
    PathArg, Predicate(lambda path: Path(path).expanduser().is_file()), Allowed("an existing file")
]


@declared
def run_debias(
    models: Models,
    train: PathArg,
    out_dir: PathArg,
    *,
    eval_path: PathArg | None = None,
    premises: ExistingFile | None = None,
    augment_options: Mapping[str, Any] | None = None,
    finetune_options: Mapping[str, Any] | None = None,
    audit_options: Mapping[str, Any] | None = None,
    bootstrap: Resamples = 1000,
    seed: Seed = 42,
    seeds: PositiveInt = 1,
    force: bool = False,
    progress: bool = True,
    min_effect: NonNegativeFloat | None = None,
) -> DebiasResult:
    """``nlibias debias``: augment ``train`` (``augment_options``: ``nlibias.augment``'s), fine-tune
    each model on the original and the augmented set (``finetune_options``: ``nlibias.finetune``'s;
    seeds ``seed`` to ``seed + seeds - 1``), audit them on the occupation samples (``premises``)
    and compare before with after. A rerun resumes; ``force`` redoes steps whose inputs differ.

    >>> # nlibias.debias_models("bert-base-uncased", "snli_train.jsonl", "runs/debias").comparison"""
    models = one_or_many(models)
    augment = dict(augment_options or {})
    audit_options = None if audit_options is None else dict(audit_options)
    out = Path(out_dir).expanduser().absolute()
    read = {"models": models, "train": train, "eval_path": eval_path, "premises": premises}
    refuse_overwrites(
        {"out_dir": [out / step for step in _STEP_FOLDERS]}, {**read, "augment_options": augment.get("names")}
    )
    refuse_writing_into("out_dir", out, read)  # before any model loads: --out the --model folder, say
    refuse_other_run("out_dir", out_dir, {"stages"})  # an audit run or a model folder is not a debias run
    check_selection(augment.get("select", "occupation"), augment.get("match", "words"))
    check_her(augment.get("her", "rule"), augment.get("her_model"))
    # checked now, not hours later at the audit step
    audit_own, audit_run, audit_model_options = audit_settings(
        audit_options or {}, bootstrap=bootstrap, progress=progress
    )
    options = _finetune_options(finetune_options)
    augment = _augment_split(augment, options.split, train)
    # every option, model and input file checked before any step runs; the sets read (and hashed) once
    for first_or_last in {seed, seed + seeds - 1}:
        finetune_settings(models[0], replace(options, seed=first_or_last))
    swap_list_named(augment.get("word_list", "winobias"))
    for model in models:
        check_base_model(model, options.max_length, parameter="models")
    check_splits(train, options.split, eval_path, options.eval_split)
    train_set = check_training_set(train, options.split, "train")
    eval_set = None if eval_path is None else check_training_set(eval_path, options.eval_split, "eval_path")
    refuse_eval_is_train(train_set, eval_set)
    every_seed = [seed + i for i in range(seeds)]
    augment_stage, tunes, occupations, audit, comparison = _stages(
        out, models, every_seed, train_set, eval_set, options, augment, premises, audit_options, bootstrap
    )
    stages = [augment_stage, *(t.stage for t in tunes), occupations, audit, comparison]
    steps = _Steps(out, check_stages(out, stages, force))
    if steps.start(augment_stage):
        augment_gender_swap(train_set, augment_stage.output, progress=progress, **augment)
        written = [augment_stage.output / name for name in (TRAIN_FILE, SUMMARY_FILE)]
        finish_stage(out, augment_stage, [str(path.relative_to(out)) for path in written])  # reused if intact
    _fine_tune_all(steps, tunes, train_set, augment_stage.output, eval_set, options, progress)
    if steps.start(occupations):
        expand_samples("occupations", premises, out_dir=occupations.output)
    if steps.start(audit):
        audited = [str(t.stage.output) for t in tunes]
        run_audit(
            occupations.output, audited, options=audit_model_options, run=audit_run, out_dir=audit.output,
            **audit_own,
        )  # fmt: skip
    result = _compare(steps, audit, comparison, bootstrap, MIN_EFFECT if min_effect is None else min_effect)
    return DebiasResult(result, steps.ran, [s.name for s in stages if s.name not in steps.ran])


class _Steps:
    """Which stages run (from :func:`check_stages`), and the names of those begun, in order."""

    def __init__(self, out: Path, statuses: dict[str, str]) -> None:
        self.out, self.statuses = out, statuses
        self.ran: list[str] = []

    def start(self, stage: Stage) -> bool:
        """Begin ``stage`` (its record marked as started) unless it is done; whether it runs."""
        if self.statuses[stage.name] == DONE:
            return False
        begin_stage(self.out, stage, self.statuses[stage.name])
        self.ran.append(stage.name)
        return True


def _fine_tune_all(
    steps: _Steps,
    tunes: list[_Tune],
    train: TrainingSet,
    augmented: Path,
    eval_set: TrainingSet | None,
    options: TrainingOptions,
    progress: bool,
) -> None:
    """Run the fine-tunes not done yet (the augmented set read once, by the first that needs it)."""
    augmented_set: TrainingSet | None = None
    for tune in tunes:
        if not steps.start(tune.stage):
            continue
        data = train
        if tune.data == "aug":
            if augmented_set is None:
                augmented_set = check_training_set(augmented, options.split, "train")
            data = augmented_set
        chosen = asdict(replace(options, seed=tune.seed))
        finetune(tune.model, data, tune.stage.output, eval_path=eval_set, progress=progress, **chosen)


def _compare(
    steps: _Steps, audit: Stage, comparison: Stage, bootstrap: int, min_effect: float
) -> DebiasComparison:
    """The comparison a finished run wrote for these pairs and options, else computed again."""
    pairs = comparison.inputs["pairs"]
    result = (
        None
        if steps.start(comparison)
        else _stored_comparison(comparison.output, pairs, bootstrap, min_effect)
    )
    if result is None:  # not done, or rewritten since by `report --debias` with other options
        result = compare_debiasing(
            audit.output, [(b, a) for b, a in pairs], bootstrap=bootstrap, min_effect=min_effect
        )
        if comparison.name not in steps.ran:
            steps.ran.append(comparison.name)
    return result
