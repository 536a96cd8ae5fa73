"""``nlibias score``: any predictions file (nlibias' own, another tool's JSONL, an lm-eval or
Inspect log) read in one pass into per-model arrays aligned with the samples, scored as an audit is.

>>> import tempfile, pathlib
>>> folder = pathlib.Path(tempfile.mkdtemp())
>>> for name in ("b.jsonl", "a.jsonl"):
...     _ = (folder / name).write_text('{"id": "x", "label": "neutral"}\\n')
>>> [p.name for p in expand_predictions([str(folder / "*.jsonl")])]
['a.jsonl', 'b.jsonl']
>>> expand_predictions([str(folder / "*.jsonl"), folder / "a.jsonl"])  # doctest: +ELLIPSIS
Traceback (most recent call last):
nlibias.errors.ConfigError: predictions names one predictions file twice (.../a.jsonl (a match of '.../*.jsonl') and .../a.jsonl); name each file once
>>> expand_predictions([str(folder / "*.jsonl"), str(folder / "a*")])  # doctest: +ELLIPSIS
Traceback (most recent call last):
nlibias.errors.ConfigError: predictions names one predictions file twice (... and .../a.jsonl (a match of '.../a*')); name each file once
"""

from __future__ import annotations

import glob
import os
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import ExitStack, nullcontext
from os import PathLike
from pathlib import Path
from typing import Annotated

import numpy as np
from annotated_types import MinLen

from nlibias.benchmarks.base import Benchmark, BenchmarkSamples
from nlibias.catalog.registry import benchmarks, read_benchmark_samples
from nlibias.errors import ConfigError, SourceError
from nlibias.io.atomic import PendingFile, write_jsonl
from nlibias.io.overwrites import refuse_named_twice
from nlibias.io.predictions import (
    PREDICTIONS_JSONL,
    PredictionArrays,
    predictions_file,
    read_prediction_arrays,
    read_predictions,
)
from nlibias.io.results import MetricsDocument
from nlibias.io.run_dir import RunSamples
from nlibias.io.run_manifest import check_run_file, read_manifest
from nlibias.io.temporary import temporary_folder
from nlibias.io.tool_logs import native_predictions
from nlibias.jobs.results import (
    AuditResult,
    finish_run,
    refuse_run_overwrites,
    run_info,
    score_models,
)
from nlibias.metrics.bbnli_scorer import missing_predictions_error
from nlibias.schema import Prediction, Sample
from nlibias.schema.applies import option_applies_to_nothing
from nlibias.schema.columns import IdPositions, SampleColumns
from nlibias.schema.declared import Allowed, DrawSeed, Name, PathArg, Resamples, declared, one_or_many
from nlibias.schema.outputs import ModelOutputs
from nlibias.schema.prediction_rows import SCORE_FIELDS

PredictionsInput = (
    PathArg | Annotated[Sequence[PathArg], MinLen(1), Allowed("a non-empty list of predictions files")]
)


def expand_predictions(predictions: PredictionsInput) -> list[Path]:
    """The predictions files named: each path as given, or the files a glob pattern matches
    (sorted; a pattern is expanded only when no file has its literal name); a file (or run
    directory) named twice, or named and matched by a pattern, or matched by two, is refused."""
    given: list[str | Path] = one_or_many(predictions)
    paths: list[Path] = []
    spelled: list[str] = []
    for item in given:
        text = str(item)
        if glob.has_magic(text) and not Path(text).exists():
            matches = sorted(glob.glob(text))
            if not matches:
                raise ConfigError(
                    f"{{predictions}} pattern {text!r} matches no file", parameter="predictions"
                )
            paths.extend(Path(m) for m in matches)
            spelled.extend(f"{m} (a match of {text!r})" for m in matches)
        else:
            paths.append(Path(item))
            spelled.append(text)
    refuse_named_twice(
        paths, "predictions", "predictions file", each="file", file_of=predictions_file, spelled=spelled
    )
    return paths


@declared
def run_score(
    samples: str | PathLike[str] | Sequence[Sample],
    predictions: PredictionsInput,
    *,
    out_dir: PathArg | None = None,
    bootstrap: Resamples = 1000,
    seed: DrawSeed = 0,
    answer_column: Name | None = None,
) -> AuditResult:
    """Score ``predictions`` (JSONL, an lm-eval or Inspect log, a glob, or several) as an audit would,
    writing ``out_dir`` when given; ``answer_column``: the files hold answer strings there (BBQ)."""
    paths = expand_predictions(predictions)
    refuse_run_overwrites(out_dir, samples=samples, predictions=paths, rescoring=answer_column is None)
    checked = read_benchmark_samples(samples)
    _refuse_other_samples(checked, paths)
    with ExitStack() as stack:
        if answer_column is None:
            natives = [Path(stack.enter_context(native_predictions(path))) for path in paths]
        else:
            folder = stack.enter_context(temporary_folder("nlibias-answers-"))
            natives = [
                _answer_file(checked, path, answer_column, folder / f"{i}.jsonl")
                for i, path in enumerate(paths)
            ]
        converted = any(n != p for n, p in zip(natives, paths, strict=True))
        source, name = natives[0], str(paths[0]) if converted else None
        if len(paths) > 1:
            tmp = stack.enter_context(temporary_folder("nlibias-combined-"))
            source = _combine(checked.columns.ids, paths, natives, tmp / PREDICTIONS_JSONL)
            name, converted = os.pathsep.join(str(p) for p in paths), True
        result = score_files(
            checked, source, out_dir=out_dir, bootstrap=bootstrap, seed=seed, predictions_name=name
        )
        # a converted or combined file lives in a temporary directory: hold its rows first
        return result.materialised() if converted else result


def _refuse_other_samples(samples: BenchmarkSamples, paths: Sequence[Path]) -> None:
    """Refuse a run's predictions.jsonl on samples other than those it audited (its manifest's SHA-256)."""
    given = samples.path
    if given is None:  # sample objects: read from no file a run could record
        return
    for path in paths:
        run = path if path.is_dir() else path.parent
        manifest = read_manifest(run) if predictions_file(path).name == PREDICTIONS_JSONL else None
        RunSamples.locate(run, {}, manifest).check_texts(given, samples.columns, samples.sha256)


def _answer_file(samples: BenchmarkSamples, path: Path, column: str, target: Path) -> Path:
    """The answer strings of ``path`` (in ``column``) as a native predictions file at ``target``."""
    read = samples.benchmark.answer_rows
    if read is None:
        given = f"{samples.benchmark.name} predictions are not"
        raise option_applies_to_nothing("answer_column", "answer strings", value=column, given=given)
    write_jsonl(target, read(path, column, samples.columns))
    return target


def _combine(ids: Sequence[str], paths: Sequence[Path], natives: Sequence[Path], target: Path) -> Path:
    """The rows of every file in one predictions file, refusing a sample one model answers twice."""
    id_positions = IdPositions(ids)
    seen: dict[str, tuple[np.ndarray, np.ndarray]] = {}  # model → each sample's file (-1: none) and line
    with PendingFile(target) as pending:
        for index, (path, native) in enumerate(zip(paths, natives, strict=True)):
            check_run_file(predictions_file(native))
            default = predictions_file(path).stem if native == path else None  # as a lone file is read
            arrays = read_prediction_arrays(
                native, position_of=id_positions, n_samples=len(ids), default_model=default, copy_to=pending
            )
            for model, rows in arrays.models.items():
                answered = rows.line > 0
                empty = (np.full(len(ids), -1, dtype=np.int32), np.zeros(len(ids), dtype=np.int64))
                files, lines = seen.setdefault(model, empty)
                both = np.flatnonzero(answered & (files >= 0))
                if len(both):
                    at, earlier = int(both[0]), int(files[both[0]])
                    first = paths[earlier]
                    where = f" (line {int(lines[at])})" if natives[earlier] == first else ""
                    raise SourceError(
                        path,
                        "id",
                        f"sample {ids[at]!r} of model {model!r} is answered here and in {first}"
                        f"{where}; {len(both)} samples are answered in both files",
                        line=int(rows.line[at]) if native == path else None,
                        fix="pass each model's answer to a sample once: leave out one of the two files "
                        "(e.g. an older rerun)",
                    )
                files[answered] = index
                lines[answered] = rows.line[answered]
        pending.commit()
    return target


ARRAY_KINDS = frozenset({"classifier"})
"""Kinds whose rows hold a label and probabilities only: read as arrays, never as records."""


def score_files(
    samples: BenchmarkSamples,
    predictions_path: str | Path,
    *,
    out_dir: str | Path | None,
    bootstrap: int = 1000,
    seed: int = 0,
    predictions_name: str | Path | None = None,
) -> AuditResult:
    """Score ``predictions_path`` (a file or run directory) on the samples some model predicted
    (each model answering all of them) and write ``out_dir``; ``predictions_name``: the file
    ``metrics.json`` records (the original log when ``predictions_path`` is its conversion).

    >>> import tempfile, pathlib
    >>> from nlibias.io.samples import write_samples
    >>> from nlibias.schema import Sample
    >>> pair = [Sample(id=f"x:{s}", source="bbnli", domain="d", subtopic="t", premise="P.",
    ...                hypothesis=f"{s} H.", gold="neutral", stereotype=s, pair_key="x")
    ...         for s in ("pro", "anti")]
    >>> run_dir = write_samples(tempfile.mkdtemp(), pair)["jsonl"].parent
    >>> rows = pathlib.Path(tempfile.mkdtemp()) / "m.jsonl"
    >>> _ = rows.write_text('{"id": "x:pro", "label": "entailment"}\\n{"id": "x:anti", "label": "neutral"}\\n')
    >>> result = score_files(read_benchmark_samples(run_dir), rows, out_dir=None, bootstrap=0)
    >>> overall = result.metrics["models"]["m"]["overall"]  # pro entailed, anti neutral: 1 of 2 points
    >>> overall["n_pairs"], overall["cf_pro"], len(result.predictions)
    (1, 50.0, 2)
    """
    check_run_file(predictions_file(predictions_path))  # a run directory's: the one its manifest lists
    benchmark, columns = samples.benchmark, samples.columns
    id_positions = IdPositions(columns.ids)
    # copied in the same pass that reads it; it replaces the run's only once everything is scored
    copying = nullcontext() if out_dir is None else PendingFile(Path(out_dir) / PREDICTIONS_JSONL)
    with copying as copy:
        arrays = read_prediction_arrays(
            predictions_path, position_of=id_positions, n_samples=len(columns), copy_to=copy
        )
        _check_kinds(predictions_path, arrays, benchmark)
        records = _rows_as_records(predictions_path, arrays, id_positions)
        del id_positions  # not needed while scoring (which is where the peak is)
        name = str(predictions_name or predictions_path)
        metrics = _score_arrays(
            benchmark, columns, arrays, records, bootstrap=bootstrap, seed=seed, source=name
        )
        metrics["run"] = run_info(
            samples.path, predictions=name, samples_scored=metrics["n_samples"], samples_given=len(columns)
        )
        return finish_run(
            out_dir, arrays.rows, metrics, benchmark, predictions_file=copy, samples_sha256=samples.sha256
        )


def _check_kinds(path: str | Path, arrays: PredictionArrays, benchmark: Benchmark) -> None:
    """Refuse a model whose kind of rows the samples' benchmark cannot score, naming its first line."""
    for model, kind in arrays.kinds.items():
        if kind not in benchmark.measures:
            reason = benchmark.refusal(
                kind, given=f"model {model!r} of this file holds outputs of", others=benchmarks()
            )
            lines = arrays.models[model].line
            first = int(lines[lines > 0].min())
            raise SourceError(predictions_file(path), None, reason, line=first)


def _rows_as_records(
    path: str | Path, arrays: PredictionArrays, id_positions: IdPositions
) -> dict[str, list[Prediction | None]]:
    """Each model's rows (not of :data:`ARRAY_KINDS`) by sample position, checked (:data:`ROW_CHECKS`)."""
    wanted = {m for m, kind in arrays.kinds.items() if kind not in ARRAY_KINDS}
    if not wanted:
        return {}
    rows: dict[str, list[Prediction | None]] = {m: [None] * len(arrays.models[m].line) for m in wanted}
    for prediction in read_predictions(path):
        if prediction.model in rows:
            rows[prediction.model][id_positions(prediction.sample_id)] = prediction
    for model in wanted:
        check = ROW_CHECKS.get(arrays.kinds[model])
        lines = arrays.models[model].line
        for position, row in enumerate(rows[model]):
            if row is not None and check is not None:
                check(predictions_file(path), int(lines[position]), row)
    return rows


def _check_sentence_scores(path: Path, line: int, prediction: Prediction) -> None:
    """Refuse a sentence scorer's row without its scores (``no_pair: true`` rows carry none)."""
    fix = (
        "a sentence-logprob row carries score_more, score_less, tokens_more and tokens_less, or "
        "no_pair: true; audit the samples again to write the model's rows, its scores read from the cache"
    )
    if prediction.kind != "sentence-logprob":
        reason = f"a {prediction.kind} row among model {prediction.model!r}'s sentence scores"
        raise SourceError(path, "kind", reason, line=line, fix=fix)
    missing = [field for field in SCORE_FIELDS if field not in prediction.extra]
    if missing and not (prediction.extra.get("no_pair") is True and len(missing) == len(SCORE_FIELDS)):
        raise SourceError(path, missing[0], "missing", line=line, fix=fix)


def _score_arrays(
    benchmark: Benchmark,
    columns: SampleColumns,
    arrays: PredictionArrays,
    records: Mapping[str, list[Prediction | None]],
    *,
    bootstrap: int,
    seed: int,
    source: str,
) -> MetricsDocument:
    """``metrics.json`` (without ``run``) for the samples that some model predicted (``source``:
    the predictions file a refusal names)."""
    positions = _predicted_positions(arrays, len(columns))
    every_sample = len(positions) == len(columns)
    scored = columns if every_sample else columns.take(positions)

    def pick(values: np.ndarray) -> np.ndarray:
        return values if every_sample else values[positions]  # no copy in the usual case

    def outputs() -> Iterator[tuple[str, str, ModelOutputs]]:
        for model, rows in arrays.models.items():
            missing = np.flatnonzero(pick(rows.line) == 0)
            if len(missing):
                raise missing_predictions_error(len(missing), scored.ids[int(missing[0])])
            kind, read = arrays.kinds[model], records.get(model)
            if read is None:
                yield model, kind, ModelOutputs(kind, pick(rows.probs), pick(rows.label))
            else:  # every predicted position has a row
                yield model, kind, ModelOutputs.of_predictions(read, kind).take(positions)

    return score_models(benchmark, scored, outputs(), bootstrap=bootstrap, seed=seed, source=source)


ROW_CHECKS: dict[str, Callable[[Path, int, Prediction], None]] = {"sentence-logprob": _check_sentence_scores}
"""What a kind's rows must hold to be scored, checked with the file and line (a hand-edited file)."""


def _predicted_positions(arrays: PredictionArrays, n_samples: int) -> np.ndarray:
    """Positions of the samples that some model predicted, in sample order."""
    predicted = np.zeros(n_samples, dtype=bool)
    for rows in arrays.models.values():
        predicted |= rows.predicted()
    return np.flatnonzero(predicted)
