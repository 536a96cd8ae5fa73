"""``nlibias explain``: label the explanations of an audit's generated answers with NLI judges
(:mod:`nlibias.explanations`; the labels and rates of :mod:`nlibias.metrics.explanations`).

The job is one stage of the debias stage engine (:mod:`nlibias.jobs.debias_stages`): its inputs
(the run's predictions and samples by SHA-256, each judge's identity, the threshold, the sentence
splitter, the bootstrap) are recorded in ``RUN/stages/explain.json`` before it starts, and
``RUN/explanations/explanations.json`` is written last. A rerun with the same inputs reuses the
finished outputs; a rerun with other inputs (another judge, a new audit in the directory)
recomputes them, the old outputs removed first as a unit, and the prediction cache spares the
judge passes already made. A killed run leaves no ``explanations.json`` and runs again.

>>> # result = run_explain("runs/G", ["fake:j"])
>>> # result.summary["models"]["smollm2|prompt=true|generated"]["j"]["overall"]["invalid_rate"]
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from nlibias.errors import ConfigError
from nlibias.jobs.debias_stages import DONE, Stage, begin_stage, stage_status

if TYPE_CHECKING:
    from nlibias.jobs.audit import CacheOption
    from nlibias.models.base import NLIClassifier

STAGE_NAME = "explain"


@dataclass(frozen=True)
class ExplainResult:
    """What :func:`run_explain` wrote (or found finished)."""

    out_dir: Path
    """``RUN/explanations``."""
    summary: Mapping[str, Any] = field(repr=False)
    """``explanations.json``."""
    reused: bool
    """True when the outputs of an earlier run with the same inputs were kept."""
    stats: Mapping[str, Any] = field(default_factory=dict, repr=False)
    """Per judge: the classifier runtime's counts (pairs, cached, computed); empty when reused."""

    def rows(self) -> list[dict[str, Any]]:
        """The rows of ``explanations.jsonl``."""
        from nlibias.explanations.run_files import read_rows

        return read_rows(self.out_dir)


def run_explain(
    run_dir: str | Path,
    judges: str | NLIClassifier | Sequence[str | NLIClassifier],
    *,
    threshold: float | None = None,
    samples: str | Path | None = None,
    cache: CacheOption = True,
    bootstrap: int = 1000,
    seed: int = 0,
    progress: bool = True,
    **model_options: Any,
) -> ExplainResult:
    """Label every generated answer of the audit run ``run_dir`` with each NLI judge in
    ``judges`` (specs as for an audit's models: Hugging Face names, ``prompt:MODEL``,
    ``fake:NAME``; or :class:`~nlibias.models.base.NLIClassifier` objects) and write
    ``run_dir/explanations/`` (module docstring). ``threshold``: the grounded share below which
    an explanation is invalid (default 0.5). ``samples``: the samples file the audit answered
    (default: the one the run records). ``model_options`` (``device``, ``dtype``, ``max_tokens``,
    ...) go to the judges as to an audit's classifiers."""
    from nlibias.explanations.run_files import EXPLANATIONS_DIR, EXPLANATIONS_JSON, generated_answers
    from nlibias.explanations.split import splitter_identity
    from nlibias.io.fingerprint import sha256_file
    from nlibias.metrics.explanations import DEFAULT_GROUNDED_THRESHOLD
    from nlibias.runtime.build import close_predictors

    threshold = DEFAULT_GROUNDED_THRESHOLD if threshold is None else float(threshold)
    if not 0.0 <= threshold <= 1.0:
        raise ConfigError(f"threshold is {threshold}; pass a share between 0 and 1", parameter="threshold")
    if bootstrap < 0:
        raise ConfigError(f"bootstrap is {bootstrap}; pass 0 or more resamples", parameter="bootstrap")
    run_dir = Path(run_dir)
    answers, samples_path = generated_answers(run_dir, samples)
    built, closing = _judges(judges, model_options)
    try:
        settings = {"threshold": threshold, "splitter": splitter_identity(),
                    "judges": [classifier.name for classifier in built]}  # fmt: skip
        inputs = {
            "predictions_sha256": sha256_file(run_dir / "predictions.jsonl"),
            "samples_sha256": sha256_file(_samples_file(samples_path)),
            "judges": {classifier.name: dict(classifier.identity()) for classifier in built},
            "settings": settings,
            "bootstrap": {"resamples": bootstrap, "seed": seed},
        }
        out_dir = run_dir / EXPLANATIONS_DIR
        stage = Stage(STAGE_NAME, out_dir, out_dir / EXPLANATIONS_JSON, inputs)
        status, _ = stage_status(run_dir, stage)
        if status == DONE:
            import json

            summary = json.loads(stage.finished.read_text(encoding="utf-8"))
            return ExplainResult(out_dir, summary, reused=True)
        begin_stage(run_dir, stage, status)
        return _explain(answers, built, stage, settings, cache, bootstrap, seed, progress)
    finally:
        close_predictors(closing)


def _explain(
    answers: Sequence[Any],
    judges: Sequence[NLIClassifier],
    stage: Stage,
    settings: Mapping[str, Any],
    cache: CacheOption,
    bootstrap: int,
    seed: int,
    progress: bool,
) -> ExplainResult:
    """Judge, summarise and write (the stage's work)."""
    from contextlib import ExitStack

    from nlibias.explanations.judge import judge_answers
    from nlibias.explanations.run_files import summarise, write_outputs
    from nlibias.jobs.audit import _open_cache

    rows: list[dict[str, Any]] = []
    stats: dict[str, Any] = {}
    with ExitStack() as stack:
        opened = _open_cache(cache, stack)
        for judge in judges:
            judged = judge_answers(
                answers, judge, opened, threshold=float(settings["threshold"]), progress=progress
            )
            rows += judged.rows
            stats[judge.name] = dict(judged.stats)
    summary = summarise(rows, settings=settings, resamples=bootstrap, seed=seed)
    stage.output.mkdir(parents=True, exist_ok=True)
    write_outputs(stage.output, rows, summary)
    return ExplainResult(stage.output, summary, reused=False, stats=stats)


def _samples_file(path: Path) -> Path:
    from nlibias.io.samples import resolve_samples_path

    return resolve_samples_path(path)


def _judges(
    judges: str | NLIClassifier | Sequence[str | NLIClassifier], options: Mapping[str, Any]
) -> tuple[list[NLIClassifier], list[Any]]:
    """The judges as classifiers (specs built as an audit builds its classifiers), and the
    predictors to close afterwards."""
    from nlibias.runtime.build import build_predictors

    given = [judges] if isinstance(judges, str) or not isinstance(judges, Sequence) else list(judges)
    if not given:
        raise ConfigError("judges is empty; name at least one NLI judge (e.g. 'fake:j')", parameter="judges")
    specs = [judge for judge in given if isinstance(judge, str)]
    built = build_predictors(specs, **options) if specs else []
    by_spec = iter(built)
    classifiers: list[NLIClassifier] = [
        cast(Any, next(by_spec)).classifier if isinstance(judge, str) else judge for judge in given
    ]
    names = [classifier.name for classifier in classifiers]
    repeated = sorted({name for name in names if names.count(name) > 1})
    if repeated:
        raise ConfigError(
            f"judges {', '.join(map(repr, repeated))} appear twice; name each judge once", parameter="judges"
        )
    return classifiers, built
