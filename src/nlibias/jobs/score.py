"""Score a predictions file without holding its rows or its samples (``nlibias score``).

A predictions file from nlibias or another tool is read in one pass into a few arrays per model
(the row's line, label code and probabilities, aligned with the samples: ~30 bytes a sample and
model) and the byte offset of each row; the samples are kept as
:class:`~nlibias.schema.columns.SampleColumns`. The measures run over the columns (the benchmark's
column scorer, given the file's labels), and the output's ``predictions.jsonl`` is written row by
row in that same pass. Generative models' rows on a pair benchmark are also
read as objects (their measures read the answers' words and probabilities). The numbers are
those an audit of the same predictions gives (:func:`nlibias.jobs.audit.score_outputs`).
"""

from __future__ import annotations

from collections.abc import Mapping
from contextlib import nullcontext
from pathlib import Path

import numpy as np

from nlibias.benchmarks.registry import column_scorer_for, pair_measures_for_generative
from nlibias.errors import ConfigError
from nlibias.io.atomic import PendingFile
from nlibias.io.predictions import (
    PREDICTIONS_JSONL,
    PredictionArrays,
    read_prediction_arrays,
    read_predictions,
)
from nlibias.io.results import MetricsDocument
from nlibias.io.run_manifest import check_run_file
from nlibias.jobs.audit import (
    AuditResult,
    ModelOutputs,
    check_bootstrap,
    finish_run,
    metrics_document,
    score_outputs,
    score_run_section,
)
from nlibias.jobs.streamed_audit import read_sample_columns_and_ids
from nlibias.metrics.bbnli_scorer import missing_predictions_error
from nlibias.schema import Prediction
from nlibias.schema.columns import IdPositions, SampleColumns
from nlibias.schema.model_keys import PredictorKind


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
    check_bootstrap(bootstrap, seed)
    check_run_file(predictions_path)  # a run directory's predictions.jsonl: the one its manifest lists
    columns, id_positions = read_sample_columns_and_ids(samples_path)
    column_scorer_for(columns.source)  # a benchmark that cannot be scored stops here
    # predictions.jsonl is written in the same pass that reads the file, and replaces the run
    # directory's only once everything is scored (an error or a fallback discards it on leaving)
    copying = nullcontext() if out_dir is None else PendingFile(Path(out_dir) / PREDICTIONS_JSONL)
    with copying as copy:
        arrays = read_prediction_arrays(
            predictions_path, position_of=id_positions, n_samples=len(columns), copy_to=copy
        )
        answers = _generative_rows(predictions_path, arrays, id_positions, columns.source)
        del id_positions  # not needed while scoring (which is where the peak is)
        metrics = _score_arrays(columns, arrays, answers, bootstrap=bootstrap, seed=seed)
        metrics["run"] = score_run_section(
            samples_path,
            predictions_name or predictions_path,
            scored=metrics["n_samples"],
            given=len(columns),
        )
        return finish_run(out_dir, arrays.rows, metrics, predictions_file=copy)


def _generative_rows(
    path: str | Path, arrays: PredictionArrays, id_positions: IdPositions, source: str
) -> dict[str, list[Prediction | None]]:
    """The rows of each generative model whose measures read its answers (yes/no answers on a
    pair benchmark), one per sample position (None: no row); read from the file only then."""
    wanted = {m for m, kind in arrays.kinds.items() if kind == "generative"}
    if not wanted or not pair_measures_for_generative(source):
        return {}
    rows: dict[str, list[Prediction | None]] = {m: [None] * len(arrays.models[m].line) for m in wanted}
    for prediction in read_predictions(path):
        if prediction.model in rows:
            rows[prediction.model][id_positions(prediction.sample_id)] = prediction
    return rows


def _score_arrays(
    columns: SampleColumns,
    arrays: PredictionArrays,
    answers: Mapping[str, list[Prediction | None]],
    *,
    bootstrap: int,
    seed: int,
) -> MetricsDocument:
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
        if arrays.kinds[model] == "sentence-logprob":
            raise ConfigError(
                f"{model}: sentence scores (token-probability rows) are scored by the audit that made "
                "them; scoring such a predictions file again is not supported yet (rerun the audit: its "
                "scores come from the cache)",
                parameter="predictions_path",
            )
        kind: PredictorKind = "generative" if arrays.kinds[model] == "generative" else "classifier"
        answered = answers.get(model)
        outputs = ModelOutputs(
            kind=kind,
            probs=pick(rows.probs),
            labels=pick(rows.label),
            predictions=None if answered is None else [answered[i] for i in positions.tolist()],
        )
        models[model] = score_outputs(scored, outputs, model=model, bootstrap=bootstrap, seed=seed)
    return metrics_document(
        scored.source,
        len(scored),
        models,
        arrays.kinds,
        bootstrap=bootstrap,
        seed=seed,
        domain_of=scored.domain_of_subtopic(),
    )


def _predicted_positions(arrays: PredictionArrays, n_samples: int) -> np.ndarray:
    """Positions of the samples that some model predicted, in sample order."""
    predicted = np.zeros(n_samples, dtype=bool)
    for rows in arrays.models.values():
        predicted |= rows.predicted()
    return np.flatnonzero(predicted)
