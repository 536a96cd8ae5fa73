"""Score a predictions file without holding its rows or its samples (``nlibias score``).

A predictions file from nlibias or another tool is read in one pass into a few arrays per model
(the row's line, label code and probabilities, aligned with the samples: ~30 bytes a sample and
model) and the byte offset of each row; the samples are kept as
:class:`~nlibias.schema.columns.SampleColumns`. The measures run over the columns (the benchmark's
column scorer, given the file's labels), and the output's ``predictions.jsonl`` is written row by
row in that same pass. The files and numbers are those of :func:`nlibias.jobs.audit.score`, which
this falls back to for generative models' rows (their measures read the answers' texts) and for
benchmarks whose scorer has no columnar form taking ``labels``.
"""

from __future__ import annotations

import inspect
from contextlib import nullcontext
from pathlib import Path
from typing import Any

import numpy as np

from nlibias.benchmarks.base import ColumnScorer
from nlibias.benchmarks.registry import column_scorer_for
from nlibias.io.atomic import PendingFile
from nlibias.io.predictions import (
    PREDICTIONS_JSONL,
    PredictionArrays,
    read_prediction_arrays,
    read_predictions,
)
from nlibias.jobs.audit import (
    AuditResult,
    check_bootstrap,
    finish_run,
    metrics_document,
    read_samples_to_score,
    score,
    score_run_section,
)
from nlibias.jobs.streamed_audit import read_sample_columns_and_ids
from nlibias.metrics.bbnli_scorer import missing_predictions_error
from nlibias.schema.columns import SampleColumns


def score_files(
    samples_path: str | Path,
    predictions_path: str | Path,
    *,
    out_dir: str | Path | None,
    bootstrap: int = 1000,
    seed: int = 0,
    predictions_name: str | Path | None = None,
) -> AuditResult:
    """Score the predictions file at ``predictions_path`` against the samples at ``samples_path``
    (run directories or files), as :func:`nlibias.jobs.audit.score` does, and write ``out_dir``.

    Only the samples with a prediction (from any model) are scored; every model must have a row
    for each of them. Errors name the file and line (bad rows, unknown ids, duplicate rows).
    ``predictions_name``: the file recorded in ``metrics.json`` (default ``predictions_path``; the
    original log when ``predictions_path`` is its conversion).

    >>> import tempfile, pathlib
    >>> from nlibias.io.samples import write_samples
    >>> from nlibias.schema import Sample
    >>> pair = [Sample(id=f"x:{s}", source="bbnli", domain="d", subtopic="t", premise="P.",
    ...                hypothesis=f"{s} H.", gold="neutral", stereotype=s, pair_key="x")
    ...         for s in ("pro", "anti")]
    >>> run_dir = write_samples(tempfile.mkdtemp(), pair)["jsonl"].parent
    >>> rows = pathlib.Path(tempfile.mkdtemp()) / "m.jsonl"
    >>> _ = rows.write_text('{"id": "x:pro", "label": "entailment"}\\n{"id": "x:anti", "label": "neutral"}\\n')
    >>> result = score_files(run_dir, rows, out_dir=None, bootstrap=0)
    >>> overall = result.metrics["models"]["m"]["overall"]  # pro entailed, anti neutral: 1 of 2 points
    >>> overall["n_pairs"], overall["cf_pro"], len(result.predictions)
    (1, 50.0, 2)
    """
    check_bootstrap(bootstrap)

    def as_objects() -> AuditResult:
        return score_files_as_objects(
            samples_path,
            predictions_path,
            out_dir=out_dir,
            bootstrap=bootstrap,
            seed=seed,
            predictions_name=predictions_name,
        )

    columns, id_positions = read_sample_columns_and_ids(samples_path)
    scorer = column_scorer_for(columns.source)
    if scorer is None or not takes_labels(scorer):
        return as_objects()
    # predictions.jsonl is written in the same pass that reads the file, and replaces the run
    # directory's only once everything is scored (an error or a fallback discards it on leaving)
    copying = nullcontext() if out_dir is None else PendingFile(Path(out_dir) / PREDICTIONS_JSONL)
    with copying as copy:
        arrays = read_prediction_arrays(
            predictions_path, position_of=id_positions, n_samples=len(columns), copy_to=copy
        )
        del id_positions  # not needed while scoring (which is where the peak is)
        if any(kind == "generative" for kind in arrays.kinds.values()):
            return as_objects()
        metrics = _score_arrays(scorer, columns, arrays, bootstrap=bootstrap, seed=seed)
        metrics["run"] = score_run_section(
            samples_path,
            predictions_name or predictions_path,
            scored=metrics["n_samples"],
            given=len(columns),
        )
        if copy is not None:
            copy.commit()
    return finish_run(out_dir, arrays.rows, metrics, predictions_written=copy is not None)


def _score_arrays(
    scorer: ColumnScorer, columns: SampleColumns, arrays: PredictionArrays, *, bootstrap: int, seed: int
) -> dict[str, Any]:
    """``metrics.json`` (without ``run``) for the samples that some model predicted."""
    positions = _predicted_positions(arrays, len(columns))
    every_sample = len(positions) == len(columns)
    scored = columns if every_sample else columns.take(positions)

    def pick(values: np.ndarray) -> np.ndarray:
        return values if every_sample else values[positions]  # no copy in the usual case

    models = {}
    for model, rows in arrays.models.items():
        missing = np.flatnonzero(pick(rows.line) == 0)
        if len(missing):
            raise missing_predictions_error(len(missing), scored.ids[int(missing[0])])
        models[model] = scorer(
            scored, pick(rows.probs), labels=pick(rows.label), model=model, bootstrap=bootstrap, seed=seed
        )
    return metrics_document(scored.source, len(scored), models, arrays.kinds, bootstrap=bootstrap, seed=seed)


def takes_labels(scorer: ColumnScorer) -> bool:
    """Whether a column scorer accepts ``labels=`` (the built-in ones do; see :data:`ColumnScorer`)."""
    parameters = inspect.signature(scorer).parameters
    return "labels" in parameters or any(p.kind is inspect.Parameter.VAR_KEYWORD for p in parameters.values())


def _predicted_positions(arrays: PredictionArrays, n_samples: int) -> np.ndarray:
    """Positions of the samples that some model predicted, in sample order."""
    predicted = np.zeros(n_samples, dtype=bool)
    for rows in arrays.models.values():
        predicted |= rows.predicted()
    return np.flatnonzero(predicted)


def score_files_as_objects(
    samples_path: str | Path,
    predictions_path: str | Path,
    *,
    out_dir: str | Path | None,
    bootstrap: int = 1000,
    seed: int = 0,
    predictions_name: str | Path | None = None,
) -> AuditResult:
    """:func:`score_files` with the samples and predictions loaded as objects
    (:func:`nlibias.jobs.audit.score`): its fallback, and the reference it is tested and timed against."""
    samples = read_samples_to_score(samples_path)
    return score(
        samples,
        read_predictions(predictions_path, known_ids={s.id for s in samples}),
        out_dir=out_dir,
        bootstrap=bootstrap,
        seed=seed,
        samples_path=samples_path,
        predictions_path=predictions_name or predictions_path,
    )
