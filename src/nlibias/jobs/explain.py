"""``nlibias explain``: label the explanations of an audit's generated answers with NLI judges;
one stage (:mod:`nlibias.io.stages`): a rerun with the same inputs reuses the outputs."""

from __future__ import annotations

import inspect
import warnings
from collections.abc import Mapping, Sequence
from contextlib import ExitStack
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, cast

from nlibias.errors import ConfigError
from nlibias.explanations.judge import GROUNDED_RULE_VERSION, GeneratedAnswer, judge_answers, judge_reference
from nlibias.explanations.lm_judge import LM_JUDGE_MAX_NEW_TOKENS, lm_judge_labels
from nlibias.explanations.run_files import (
    EXPLANATIONS_DIR,
    OUTPUTS,
    STAGE_NAME,
    generated_answers,
    read_rows,
    summarise,
    write_outputs,
)
from nlibias.explanations.split import splitter_identity
from nlibias.io.atomic import locked_folder
from nlibias.io.fingerprint import sha256_file
from nlibias.io.jsonl import json_object_or_none
from nlibias.io.overwrites import refuse_overwrites, run_files
from nlibias.io.stages import DONE, REDO, RecomputedWarning, Stage, begin_stage, finish_stage, stage_status
from nlibias.metrics.agreement import cohen_kappa
from nlibias.metrics.explanations import DEFAULT_GROUNDED_THRESHOLD, LABELS
from nlibias.models.registry import split_spec
from nlibias.runtime.build import build_predictors, check_label_map_applies, close_predictors
from nlibias.runtime.model_set import ModelSet
from nlibias.runtime.options import CacheOption, ModelOptions, cache_file, open_cache
from nlibias.schema.applies import AppliesTo
from nlibias.schema.declared import (
    DrawSeed,
    Name,
    PathArg,
    PositiveInt,
    Refuse,
    Resamples,
    ShareAbove0,
    declared,
)
from nlibias.schema.measure_info import EXPLANATIONS_FILE
from nlibias.schema.model_keys import check_model_spec
from nlibias.schema.model_ref import ModelRef

if TYPE_CHECKING:
    from nlibias.models.base import NLIClassifier
    from nlibias.models.generative.backend import GenerativeBackend


@dataclass(frozen=True)
class ExplainResult:
    """What :func:`run_explain` wrote (or found finished)."""

    out_dir: Path
    """``RUN/explanations``."""
    summary: Mapping[str, Any] = field(repr=False)
    """``explanations.json``."""
    reused: bool
    """True when the outputs of an earlier run with the same inputs were kept."""
    redone: tuple[str, ...] = ()
    """Why an earlier run's outputs were recomputed (each damaged or replaced since)."""
    stats: Mapping[str, Any] = field(default_factory=dict, repr=False)
    """Per judge: the runtime's counts (pairs, cached, computed); empty when reused."""

    def rows(self) -> list[dict[str, Any]]:
        """The rows of ``explanations.jsonl``."""
        return read_rows(self.out_dir)


LM_JUDGE_APPLIES = AppliesTo(
    "the LM judge's answers",
    lambda settings: settings.get("lm_judge") is not None,
    "",
    fix="name one in {{lm_judge}}, or leave {{{name}}} out",
    names=("lm_judge",),
)


NO_JUDGE = Refuse(
    lambda judges: isinstance(judges, list | tuple) and not judges,
    "is empty; name at least one NLI judge (e.g. 'fake:j')",
)
"""The judges of :func:`run_explain`: at least one."""


@declared(
    lazy={"NLIClassifier": "nlibias.models.base", "GenerativeBackend": "nlibias.models.generative.backend"}
)
def run_explain(
    run_dir: PathArg,
    judges: Annotated[Name | NLIClassifier | Sequence[Name | NLIClassifier], NO_JUDGE],
    *,
    threshold: ShareAbove0 | None = None,
    samples: PathArg | None = None,
    lm_judge: Name | GenerativeBackend | None = None,
    lm_judge_max_new_tokens: Annotated[PositiveInt, LM_JUDGE_APPLIES] = LM_JUDGE_MAX_NEW_TOKENS,
    cache: CacheOption = True,
    bootstrap: Resamples = 1000,
    seed: DrawSeed = 0,
    progress: bool = True,
    **model_options: Any,
) -> ExplainResult:
    """Label every generated answer of ``run_dir`` with each NLI judge (model specs or
    :class:`~nlibias.models.base.NLIClassifier` objects) into ``run_dir/explanations/``.
    ``threshold``: the grounded share below which an explanation is invalid (default 0.5);
    ``lm_judge``: a generative LM asked for each label as a second opinion (``lm_label``, and its
    Cohen's kappa with each judge); ``model_options`` go to the judges as to an audit's models."""
    threshold = DEFAULT_GROUNDED_THRESHOLD if threshold is None else threshold
    run_dir = Path(run_dir)
    run_read = [*run_files(run_dir), *(run_dir / name for name in OUTPUTS)]  # outputs: read when reused
    refuse_overwrites({"cache": cache_file(cache)}, {"run": run_read, "samples": samples})
    own = list(inspect.signature(run_explain).parameters)[:-1]  # named in a "did you mean", never split off
    options = ModelOptions.split(model_options, caller="explain", also=own)[1]  # before any file is read
    lm_ref = ModelRef.unread(lm_judge) if isinstance(lm_judge, str) else lm_judge  # an empty name refused
    if isinstance(lm_ref, ModelRef):
        lm_ref.check_role(
            "generative", parameter="lm_judge", fix="NLI classifiers judge in {judges}", names=("judges",)
        )
    _given_judges(judges)
    answers, samples_path = generated_answers(run_dir, samples)
    lm_loads_here = isinstance(lm_ref, ModelRef) and lm_ref.loads_weights_here
    built, closing = _judges(judges, options, lm_loads_here=lm_loads_here)
    try:
        backend = _lm_backend(lm_ref, options)
        settings = {
            "threshold": threshold,
            "splitter": splitter_identity(),
            "grounded_rule": GROUNDED_RULE_VERSION,
            "judges": [judge_reference(classifier) for classifier in built],
            "fake_judges": [judge_reference(c) for c in built if dict(c.identity()).get("backend") == "fake"],
            "lm_judge": None if backend is None else backend.name,
            "lm_judge_max_new_tokens": None if backend is None else lm_judge_max_new_tokens,
        }
        inputs = {
            "predictions_sha256": sha256_file(run_dir / "predictions.jsonl"),
            "samples_sha256": sha256_file(samples_path),
            "judges": {judge_reference(classifier): dict(classifier.identity()) for classifier in built},
            "lm_judge": None if backend is None else dict(backend.identity()),
            "settings": settings,
            "bootstrap": {"resamples": bootstrap, "seed": seed},
        }
        out_dir = run_dir / EXPLANATIONS_DIR
        stage = Stage(STAGE_NAME, out_dir, out_dir / EXPLANATIONS_FILE, inputs)
        status, problems = stage_status(run_dir, stage)  # problems: outputs damaged or replaced since
        summary = _finished_summary(stage) if status == DONE else None
        if summary is not None:
            return ExplainResult(out_dir, summary, reused=True)
        if status == DONE:
            problems = [f"{out_dir.name}/{stage.finished.name} cannot be read"]
        _warn_recomputed(out_dir, status, problems)
        begin_stage(run_dir, stage, REDO if problems else status)  # what cannot be trusted goes first
        work = _Work(answers, built, backend, stage, settings, bootstrap, seed, progress)
        return _explain(work, cache, tuple(problems))
    finally:
        close_predictors(closing)


def _warn_recomputed(out_dir: Path, status: str, problems: Sequence[str]) -> None:
    """Say why a finished run's outputs are recomputed, not reused (the command line prints it)."""
    if problems:
        why = "were written with other inputs" if status == REDO else "do not check out"
        warning = f"{out_dir}: the finished run's outputs {why} (recomputed: {'; '.join(problems)})"
        warnings.warn(warning, RecomputedWarning, stacklevel=4)


def _finished_summary(stage: Stage) -> dict[str, Any] | None:
    """The finished stage's ``explanations.json``; None when it or the rows cannot be read."""
    summary = json_object_or_none(stage.finished)
    return summary if summary is not None and (stage.output / "explanations.jsonl").is_file() else None


@dataclass(frozen=True)
class _Work:
    answers: Sequence[GeneratedAnswer]
    judges: Sequence[NLIClassifier]
    lm_judge: GenerativeBackend | None
    stage: Stage
    settings: Mapping[str, Any]
    bootstrap: int
    seed: int
    progress: bool


def _explain(work: _Work, cache: CacheOption, redone: tuple[str, ...]) -> ExplainResult:
    """Judge, summarise and write (the stage's work), and record the outputs' hashes."""
    rows: list[dict[str, Any]] = []
    stats: dict[str, Any] = {}
    lm_labels: list[str | None] = []
    with ExitStack() as stack:
        opened = open_cache(cache, stack)
        for judge in work.judges:
            threshold = float(work.settings["threshold"])
            judged = judge_answers(work.answers, judge, opened, threshold=threshold, progress=work.progress)
            rows += judged.rows
            stats[judge_reference(judge)] = dict(judged.stats)
        if work.lm_judge is not None:
            asked = lm_judge_labels(
                work.answers, work.lm_judge, opened,
                max_new_tokens=int(work.settings["lm_judge_max_new_tokens"]), progress=work.progress,
            )  # fmt: skip
            stats[f"lm:{asked.name}"] = asked.stats
            lm_labels = asked.labels
            for at, row in enumerate(rows):
                row["lm_label"] = asked.labels[at % len(work.answers)]
                row["lm_text"] = asked.texts[at % len(work.answers)]
    summary = summarise(rows, settings=work.settings, resamples=work.bootstrap, seed=work.seed)
    if work.lm_judge is not None:
        summary["lm_agreement"] = lm_agreement(rows, lm_labels)
    with locked_folder(work.stage.output):  # another explain of this run at once: one's files, not a mix
        write_outputs(work.stage.output, rows, summary)
        finish_stage(work.stage.output.parent, work.stage, OUTPUTS)
    return ExplainResult(work.stage.output, summary, reused=False, redone=redone, stats=stats)


def lm_agreement(rows: Sequence[Mapping[str, Any]], lm_labels: Sequence[str | None]) -> dict[str, Any]:
    """Per model and NLI judge: Cohen's kappa and percent agreement with the LM judge over the
    answers both labelled, and how often the LM gave each label.

    >>> rows = [{"model": "m", "judge": "j", "label": a, "lm_label": b}
    ...         for a, b in [("biased", "biased"), ("balanced", "balanced"), ("invalid", "balanced")]]
    >>> lm_agreement(rows, [])["m"]["j"]["agreement"], lm_agreement(rows, [])["m"]["j"]["n"]
    (66.666667, 3)
    """
    groups: dict[tuple[str, str], list[Mapping[str, Any]]] = {}
    for row in rows:
        groups.setdefault((str(row["model"]), str(row["judge"])), []).append(row)
    out: dict[str, Any] = {}
    for (model, judge), group in groups.items():
        both = [(r["label"], r["lm_label"]) for r in group if r.get("label") and r.get("lm_label")]
        kappa = cohen_kappa([a for a, _ in both], [b for _, b in both]) if both else None
        agree = 100.0 * sum(a == b for a, b in both) / len(both) if both else None
        out.setdefault(model, {})[judge] = {
            "n": len(both),
            "kappa": None if kappa is None else round(kappa, 6),
            "agreement": None if agree is None else round(agree, 6),
            "lm_labels": {label: sum(r.get("lm_label") == label for r in group) for label in LABELS},
            "lm_unlabelled": sum(bool(r.get("label")) and not r.get("lm_label") for r in group),
        }
    return out


def _lm_backend(
    lm_judge: ModelRef | GenerativeBackend | None, options: ModelOptions
) -> GenerativeBackend | None:
    """The LM judge's backend (a name built as an audit builds its generative models)."""
    if not isinstance(lm_judge, ModelRef):
        return lm_judge
    from nlibias.models.generative.backend import build_backend

    local = {"device": options.device, "dtype": options.dtype} if not lm_judge.is_server else {}
    return build_backend(lm_judge, **local)


def _given_judges(judges: str | NLIClassifier | Sequence[str | NLIClassifier]) -> list[str | NLIClassifier]:
    """The judges as a list (:data:`NO_JUDGE`: not empty), each name checked to be an NLI
    classifier's (before any file is read)."""
    given = [judges] if isinstance(judges, str) or not isinstance(judges, Sequence) else list(judges)
    fix = "a generative LM judges in {lm_judge}"
    for name in [judge for judge in given if isinstance(judge, str)]:
        check_model_spec(name, "judges", classifier=True)  # as ModelSet checks them, named as judges
        ModelRef.unread(name).check_role("classifier", parameter="judges", fix=fix, names=("lm_judge",))
        split_spec(name, parameter="judges")
    _refuse_repeated([judge for judge in given if isinstance(judge, str)])  # before any judge loads
    return given


def _refuse_repeated(names: Sequence[str]) -> None:
    repeated = sorted({name for name in names if names.count(name) > 1})
    if repeated:
        raise ConfigError(
            f"{{judges}} {', '.join(map(repr, repeated))} appear twice; name each judge once",
            parameter="judges",
        )


def _judges(
    judges: str | NLIClassifier | Sequence[str | NLIClassifier],
    options: ModelOptions,
    *,
    lm_loads_here: bool = False,
) -> tuple[list[NLIClassifier], list[Any]]:
    """The judges as classifiers and the predictors to close; a dtype or device only the LM judge
    reads (``lm_loads_here``) is not refused."""
    given = _given_judges(judges)
    specs = ModelSet.of([judge for judge in given if isinstance(judge, str)])
    if options.label_map is not None and not specs.models:  # judges given as objects only
        check_label_map_applies([], objects=len(given), named_in="judges")
    if lm_loads_here and not specs.loading_weights_here():  # the LM judge reads them (_lm_backend)
        options = options.model_copy(update={"dtype": None, "device": None})
    built = build_predictors(specs, options=options)
    by_spec = iter(built)
    classifiers: list[NLIClassifier] = [
        cast(Any, next(by_spec)).classifier if isinstance(judge, str) else judge for judge in given
    ]
    _refuse_repeated([classifier.name for classifier in classifiers])  # objects, and two names of one key
    return classifiers, built
