"""Score a predictions file without holding its rows or its samples (``nlibias score``).

A predictions file from nlibias or another tool is read in one pass into a few arrays per model
(the row's line, label code and probabilities, aligned with the samples: ~30 bytes a sample and
model) and the byte offset of each row; the samples are kept as
:class:`~nlibias.schema.columns.SampleColumns`. The measures run over the columns (the benchmark's
column scorer, given the file's labels), and the output's ``predictions.jsonl`` is written row by
row in that same pass. Rows whose measures read more than a label and probabilities are also read
as objects, only when the file has them: generative models' answers on a pair benchmark, and
sentence scorers' rows (token-probability bias, kind ``sentence-logprob``: each row's
``score_more``, ``score_less``, ``tokens_more`` and ``tokens_less``, or ``no_pair``, checked
with the file and line), whose measures also read the samples as objects (the pair each sample
stands for); with NLI classifiers beside them on WinoQueer-NLI, their item-level agreement
(``tp_nli_agreement``) is computed too. A kind of rows the samples' benchmark cannot score (NLI
rows on sentence pairs, sentence scores on NLI samples) is refused with the first such line. The
numbers are those an audit of the same predictions gives (:func:`nlibias.jobs.audit.score_outputs`).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from contextlib import nullcontext
from pathlib import Path
from typing import cast

import numpy as np

from nlibias.benchmarks.registry import (
    column_scorer_for,
    kind_refusal,
    pair_measures_for_generative,
    scorable_kinds,
)
from nlibias.errors import SourceError
from nlibias.io.atomic import PendingFile
from nlibias.io.predictions import (
    PREDICTIONS_JSONL,
    PredictionArrays,
    read_prediction_arrays,
    read_predictions,
)
from nlibias.io.results import MetricsDocument
from nlibias.io.run_manifest import check_run_file
from nlibias.io.samples import resolve_samples_path
from nlibias.jobs.audit import (
    AuditResult,
    ModelOutputs,
    check_bootstrap,
    finish_run,
    metrics_document,
    read_samples_to_score,
    score_outputs,
    score_run_section,
    tp_nli_agreement,
)
from nlibias.jobs.streamed_audit import read_sample_columns_and_ids
from nlibias.metrics.bbnli_scorer import missing_predictions_error
from nlibias.schema import LABELS, Prediction, Sample
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
    if not scorable_kinds(columns.source):
        column_scorer_for(columns.source)  # a benchmark that cannot be scored stops here
    # predictions.jsonl is written in the same pass that reads the file, and replaces the run
    # directory's only once everything is scored (an error or a fallback discards it on leaving)
    copying = nullcontext() if out_dir is None else PendingFile(Path(out_dir) / PREDICTIONS_JSONL)
    with copying as copy:
        arrays = read_prediction_arrays(
            predictions_path, position_of=id_positions, n_samples=len(columns), copy_to=copy
        )
        _check_kinds(predictions_path, arrays, columns.source)
        records = _rows_as_records(predictions_path, arrays, id_positions, columns.source)
        del id_positions  # not needed while scoring (which is where the peak is)
        samples = None
        if "sentence-logprob" in arrays.kinds.values():  # their measures read the samples' pairs
            samples = _sample_objects(samples_path, columns)
        metrics = _score_arrays(columns, arrays, records, samples, bootstrap=bootstrap, seed=seed)
        metrics["run"] = score_run_section(
            samples_path,
            predictions_name or predictions_path,
            scored=metrics["n_samples"],
            given=len(columns),
        )
        return finish_run(out_dir, arrays.rows, metrics, predictions_file=copy)


def _predictions_file(path: str | Path) -> Path:
    """The file of ``path`` (a run directory's ``predictions.jsonl``), as errors name it."""
    path = Path(path)
    return path / PREDICTIONS_JSONL if path.is_dir() else path


def _check_kinds(path: str | Path, arrays: PredictionArrays, source: str) -> None:
    """Refuse a model whose kind of rows the samples' benchmark cannot score (NLI rows on
    sentence pairs, sentence scores on NLI samples), naming its first line."""
    for model, kind in arrays.kinds.items():
        reason = kind_refusal(
            source, cast(PredictorKind, kind), given=f"model {model!r} of this file holds outputs of"
        )
        if reason is not None:
            lines = arrays.models[model].line
            first = int(lines[lines > 0].min())
            raise SourceError(_predictions_file(path), None, reason, line=first)


def _rows_as_records(
    path: str | Path, arrays: PredictionArrays, id_positions: IdPositions, source: str
) -> dict[str, list[Prediction | None]]:
    """The rows of each model whose measures read them as records, one per sample position
    (None: no row), read from the file only when there are such models: a generative model's
    yes/no answers on a pair benchmark, a sentence scorer's sentence scores (each row checked:
    :func:`_check_sentence_scores`)."""
    generative_pairs = pair_measures_for_generative(source)
    wanted = {
        m
        for m, kind in arrays.kinds.items()
        if kind == "sentence-logprob" or (kind == "generative" and generative_pairs)
    }
    if not wanted:
        return {}
    rows: dict[str, list[Prediction | None]] = {m: [None] * len(arrays.models[m].line) for m in wanted}
    for prediction in read_predictions(path):
        if prediction.model in rows:
            rows[prediction.model][id_positions(prediction.sample_id)] = prediction
    for model in wanted:
        if arrays.kinds[model] == "sentence-logprob":
            lines = arrays.models[model].line
            for position, row in enumerate(rows[model]):
                if row is not None:
                    _check_sentence_scores(_predictions_file(path), int(lines[position]), row)
    return rows


_SCORE_FIELDS = ("score_more", "score_less")
_TOKEN_FIELDS = ("tokens_more", "tokens_less")


def _check_sentence_scores(path: Path, line: int, prediction: Prediction) -> None:
    """Refuse a sentence scorer's row that its measures cannot read (a hand-edited file): another
    kind of row, or a score or token count missing or not a number (``no_pair: true`` rows carry
    none)."""
    fix = (
        "a sentence-logprob row carries score_more, score_less, tokens_more and tokens_less, or "
        "no_pair: true; audit the samples again to write the model's rows, its scores read from the cache"
    )

    def fail(field: str, reason: str) -> SourceError:
        return SourceError(path, field, reason, line=line, fix=fix)

    if prediction.kind != "sentence-logprob":
        raise fail("kind", f"a {prediction.kind} row among model {prediction.model!r}'s sentence scores")
    extra = prediction.extra
    if extra.get("no_pair") is True and not any(f in extra for f in (*_SCORE_FIELDS, *_TOKEN_FIELDS)):
        return
    for field in _SCORE_FIELDS:
        value = extra.get(field)
        if field not in extra:
            raise fail(field, "missing")
        if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
            raise fail(field, f"{value!r} is not a finite number (a log-likelihood)")
    for field in _TOKEN_FIELDS:
        value = extra.get(field)
        if field not in extra:
            raise fail(field, "missing")
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            raise fail(field, f"{value!r} is not a number of tokens (a whole number, 0 or more)")


def _sample_objects(samples_path: str | Path, columns: SampleColumns) -> list[Sample]:
    """The samples as objects (sentence scores' measures read the pair each stands for), read
    once, with the provenance keys their measures read, as the audit reads them."""
    samples = read_samples_to_score(samples_path)
    if [s.id for s in samples] != list(columns.ids):
        raise SourceError(
            resolve_samples_path(samples_path), None, "the file changed while it was being scored",
            fix="score it again",
        )  # fmt: skip
    return samples


def _score_arrays(
    columns: SampleColumns,
    arrays: PredictionArrays,
    records: Mapping[str, list[Prediction | None]],
    samples: Sequence[Sample] | None,
    *,
    bootstrap: int,
    seed: int,
) -> MetricsDocument:
    """``metrics.json`` (without ``run``) for the samples that some model predicted."""
    positions = _predicted_positions(arrays, len(columns))
    every_sample = len(positions) == len(columns)
    scored = columns if every_sample else columns.take(positions)
    at = positions.tolist()
    scored_samples = None if samples is None else (samples if every_sample else [samples[i] for i in at])

    def pick(values: np.ndarray) -> np.ndarray:
        return values if every_sample else values[positions]  # no copy in the usual case

    models = {}
    picked: dict[str, list[Prediction]] = {}  # each model's rows as records, for the TP vs NLI agreement
    for model, rows in arrays.models.items():
        missing = np.flatnonzero(pick(rows.line) == 0)
        if len(missing):
            raise missing_predictions_error(len(missing), scored.ids[int(missing[0])])
        kind = cast(PredictorKind, arrays.kinds[model])
        read = records.get(model)
        if read is not None:
            picked[model] = [cast(Prediction, read[i]) for i in at]  # every position has a row
        outputs = ModelOutputs(
            kind=kind,
            probs=pick(rows.probs),
            labels=pick(rows.label),
            predictions=picked.get(model),
        )
        models[model] = score_outputs(
            scored, outputs, model=model, bootstrap=bootstrap, seed=seed, samples=scored_samples
        )
    metrics = metrics_document(
        scored.source,
        len(scored),
        models,
        arrays.kinds,
        bootstrap=bootstrap,
        seed=seed,
        domain_of=scored.domain_of_subtopic(),
    )
    if scored_samples is not None and "classifier" in arrays.kinds.values():
        paired = {
            model: picked[model]
            if kind == "sentence-logprob"
            else _probability_records(scored.ids, model, pick(arrays.models[model].probs),
                                      pick(arrays.models[model].label))
            for model, kind in arrays.kinds.items()
            if kind in ("sentence-logprob", "classifier")
        }  # fmt: skip
        agreement = tp_nli_agreement(scored_samples, paired, arrays.kinds)
        if agreement:
            metrics["tp_nli_agreement"] = agreement
    return metrics


def _probability_records(
    ids: Sequence[str], model: str, probs: np.ndarray, labels: np.ndarray
) -> list[Prediction]:
    """A classifier's rows as records from its arrays (no probabilities: None), one per sample."""
    return [
        Prediction(
            sample_id,
            model,
            None if code < 0 else LABELS[code],
            None if not np.isfinite(row).all() else (float(row[0]), float(row[1]), float(row[2])),
        )
        for sample_id, code, row in zip(ids, labels.tolist(), probs, strict=True)
    ]


def _predicted_positions(arrays: PredictionArrays, n_samples: int) -> np.ndarray:
    """Positions of the samples that some model predicted, in sample order."""
    predicted = np.zeros(n_samples, dtype=bool)
    for rows in arrays.models.values():
        predicted |= rows.predicted()
    return np.flatnonzero(predicted)
