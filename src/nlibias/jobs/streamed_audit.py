"""The audit: predict, score and write a run directory without holding the samples as objects.

Memory grows by ~0.1 kB a sample for an NLI classifier. Every audit (CLI, demo, Python API) runs
:func:`audit_samples`:

1. :func:`read_samples_to_audit` builds :class:`~nlibias.schema.columns.SampleColumns` (every line
   validated, ids checked, the samples scored once with placeholder probabilities so that a
   malformed pair stops the audit) before any model runs;
2. for each NLI classifier, one pass sends the first occurrence of every distinct (premise,
   hypothesis) to it, ``chunk_pairs`` pairs at a time, through the prediction cache; a generative
   LM (or any other predictor) gets the samples as objects (its prompts need the texts; such
   audits are small) and answers through the same cache;
3. each model's measures are computed over the columns and its outputs
   (:func:`nlibias.jobs.audit.score_outputs`: the benchmark's column scorer for its predictor
   kind), and ``predictions.jsonl`` is written row by row.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np

from nlibias.benchmarks.registry import (
    benchmark_for_source,
    check_predictor_kind,
    column_scorer_for,
    provenance_keys_for,
)
from nlibias.errors import ConfigError, DataError, SourceError
from nlibias.io.atomic import json_line
from nlibias.io.predictions import WritesJsonLines, probability_line
from nlibias.io.samples import (
    FieldLookup,
    duplicate_id_error,
    iter_checked_fields,
    iter_samples,
    peek_source,
    resolve_samples_path,
)
from nlibias.jobs.audit import (
    AuditResult,
    ModelOutputs,
    check_bootstrap,
    check_predictors,
    finish_run,
    metrics_document,
    read_samples_to_score,
    run_section,
    score_outputs,
    tp_nli_agreement,
    with_extra,
)
from nlibias.models.base import NLIClassifier
from nlibias.runtime.base import Predictor
from nlibias.runtime.cache import PredictionCache
from nlibias.runtime.predict import ClassifierPredictor, PairProbabilities, predict_pairs
from nlibias.schema import LABELS, Prediction, Sample
from nlibias.schema.columns import IdPositions, ItemSequence, SampleColumns
from nlibias.schema.model_keys import PredictorKind

DEFAULT_CHUNK_PAIRS = 8192
"""Distinct pairs per classifier call: the batches are length-sorted within a chunk, and a chunk's
texts and tokens (~2.7 kB a pair in Python objects while it is tokenized) are what the pass holds."""
_LINES_BLOCK = 4096
"""Samples whose ``predictions.jsonl`` lines are made from one conversion of their probabilities."""


@dataclass(frozen=True, eq=False)
class SamplesToAudit:
    """A checked samples file and its columns (what a streamed audit keeps of the samples)."""

    path: Path
    columns: SampleColumns


def read_samples_to_audit(path: str | Path) -> SamplesToAudit:
    """Check every sample of a run directory or samples file and keep them as columns.

    Errors name the file and line (bad records, duplicate ids) or the fix (no samples, mixed
    benchmarks, a source with no registered measures); the samples are then scored once with
    placeholder probabilities (:func:`check_scorable`).
    """
    columns, _ = read_sample_columns_and_ids(path)
    check_scorable(resolve_samples_path(path), columns)
    return SamplesToAudit(path=Path(path), columns=columns)


def read_sample_columns_and_ids(path: str | Path) -> tuple[SampleColumns, IdPositions]:
    """:func:`read_samples_to_audit` without scoring the samples (for a scoring that may cover
    only some of them), with the index of their ids that the duplicate check built (16 bytes a
    sample; for looking predictions' ids up)."""
    resolved = resolve_samples_path(path)
    source = peek_source(resolved)
    keys = tuple(provenance_keys_for(source) or ())
    passing = iter_samples(resolved, provenance_keys=keys, share_strings=False)
    columns = SampleColumns.from_samples(passing, provenance_keys=keys, pair_keys=())
    # The pair keys (up to 40 B a sample) are read back from the file only to name a pair in an error.
    columns = replace(columns, pair_keys=FieldLookup(resolved, "pair_key", len(columns)))
    if not len(columns):
        raise SourceError(resolved, None, "no samples in the file", fix="run `nlibias expand ...` first")
    id_positions = IdPositions(columns.ids)
    duplicate = id_positions.first_duplicate()
    if duplicate is not None:
        earlier, later = duplicate
        raise duplicate_id_error(resolved, columns.ids[later], earlier=earlier, later=later)
    return columns, id_positions


def check_scorable(path: Path, columns: SampleColumns) -> None:
    """Score the samples once with placeholder probabilities (no intervals: about a second for
    100k samples), so that what would stop the scoring (an unknown source, a pair key with two
    pro samples, ...) stops the audit before any model runs rather than after."""
    benchmark = benchmark_for_source(columns.source)  # an unknown source fails here
    if benchmark.column_scorer is None:  # sentence pairs: their expansion checked them
        return
    scorer = column_scorer_for(columns.source)
    uniform = np.full((len(columns), 3), 1.0 / 3.0)
    try:
        scorer(columns, uniform, model="(input check)", bootstrap=0, seed=0)
    except ValueError as error:  # the measures' own checks (they do not know the file)
        raise SourceError(path, None, str(error)) from None
    except DataError as error:  # samples that do not fit together: name the file they are in
        raise SourceError(path, error.field, error.reason, fix=error.fix) from error


def audit_samples(
    samples: SamplesToAudit,
    predictors: Sequence[Predictor],
    *,
    out_dir: str | Path | None,
    cache: PredictionCache | None,
    bootstrap: int = 1000,
    seed: int = 0,
    progress: bool = True,
    chunk_pairs: int = DEFAULT_CHUNK_PAIRS,
    extra: Mapping[str, Any] | None = None,
    note: str | None = None,
) -> AuditResult:
    """Predict, score and write the run directory of ``samples``: the one audit path.

    ``extra`` is merged into ``metrics.json``; ``note`` is appended to ``tables.txt``.

    >>> import tempfile
    >>> from nlibias.models.fake import FakeNLIClassifier
    >>> from nlibias.io.samples import write_samples
    >>> from nlibias.schema import Sample
    >>> pair = [Sample(id=f"x:{s}", source="bbnli", domain="d", subtopic="t", premise="P.",
    ...                hypothesis=f"{s} H.", gold="neutral", stereotype=s, pair_key="x")
    ...         for s in ("pro", "anti")]
    >>> run_dir = write_samples(tempfile.mkdtemp(), pair)["jsonl"].parent
    >>> result = audit_samples(read_samples_to_audit(run_dir), [ClassifierPredictor(FakeNLIClassifier())],
    ...                        out_dir=None, cache=None, bootstrap=0, progress=False)
    >>> result.metrics["models"]["fake-nli"]["overall"]["n_pairs"], len(result.predictions)
    (1, 2)
    """
    check_predictors(predictors)
    check_bootstrap(bootstrap, seed)
    if chunk_pairs < 1:
        raise ConfigError(
            f"chunk_pairs is {chunk_pairs}; pass a positive number of pairs", parameter="chunk_pairs"
        )
    columns = samples.columns
    for kind in dict.fromkeys(p.kind for p in predictors):  # a kind the benchmark cannot score stops here
        check_predictor_kind(columns.source, kind, parameter="predictors")
    distinct = DistinctPairs.of(columns)
    sample_objects: list[Sample] | None = None  # read only for predictors that need the texts
    parts: list[Sequence[Prediction]] = []
    models: dict[str, Any] = {}
    kinds: dict[str, PredictorKind] = {}
    model_runs: dict[str, Any] = {}
    for predictor in predictors:
        started = time.perf_counter()
        if isinstance(predictor, ClassifierPredictor):
            run = predict_distinct(predictor.classifier, samples.path, distinct, cache, progress, chunk_pairs)
            outputs = ModelOutputs(kind="classifier", probs=distinct.spread(run.probs))
            parts.append(ProbabilityPredictions(columns, distinct, {predictor.name: run.probs}))
            stats = run.stats()
        else:
            if sample_objects is None:
                sample_objects = read_samples_to_score(samples.path)
                if [s.id for s in sample_objects] != list(columns.ids):
                    raise SourceError(samples.path, None, "the file changed while it was being audited")
            predictor_run = predictor.predict(sample_objects, cache, progress=progress)
            predictions = predictor_run.predictions
            if len(predictions) != len(columns):
                raise RuntimeError(
                    f"{predictor.name}: expected {len(columns)} predictions, got {len(predictions)}"
                )
            outputs = ModelOutputs.of_predictions(predictions, predictor.kind)
            parts.append(predictions)
            stats = dict(predictor_run.stats)
        model_runs[predictor.name] = {
            **predictor.describe(),
            "stats": {**stats, "wall_seconds": round(time.perf_counter() - started, 3)},
        }
        kinds[predictor.name] = predictor.kind
        models[predictor.name] = score_outputs(
            columns, outputs, model=predictor.name, bootstrap=bootstrap, seed=seed, samples=sample_objects
        )
        del outputs  # a (samples x 3) array: free it before the next model runs
    metrics = metrics_document(
        columns.source,
        len(columns),
        models,
        kinds,
        bootstrap=bootstrap,
        seed=seed,
        domain_of=columns.domain_of_subtopic(),
    )
    if sample_objects is not None and "sentence-logprob" in kinds.values():
        agreement = tp_nli_agreement(sample_objects, dict(zip(kinds, parts, strict=True)), kinds)
        if agreement:
            metrics["tp_nli_agreement"] = agreement
    metrics["run"] = run_section(samples.path, model_runs, cache)
    return finish_run(out_dir, ChainedPredictions(parts), with_extra(metrics, extra), note=note)


@dataclass(frozen=True, eq=False)
class DistinctPairs:
    """Which samples carry the first occurrence of each distinct (premise, hypothesis).

    >>> d = DistinctPairs(first=np.array([True, False, True]), slot=np.array([0, 0, 1]))
    >>> d.spread(np.array([[1.0, 0, 0], [0, 1.0, 0]])).tolist()
    [[1.0, 0.0, 0.0], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0]]
    """

    first: np.ndarray
    """``(samples,)`` bool: the sample is the first with its texts (the one sent to the model)."""
    slot: np.ndarray
    """``(samples,)``: the rank of its texts' first occurrence among all first occurrences."""

    @classmethod
    def of(cls, columns: SampleColumns) -> DistinctPairs:
        _, first_at, inverse = np.unique(columns.text_code, return_index=True, return_inverse=True)
        rank = np.empty(len(first_at), dtype=np.int64)
        rank[np.argsort(first_at, kind="stable")] = np.arange(len(first_at))
        first = np.zeros(len(columns), dtype=bool)
        first[first_at] = True
        slot = rank.astype(np.int32) if len(rank) < 2**31 else rank  # 4 bytes a sample
        return cls(first=first, slot=slot[inverse.ravel()])

    def __len__(self) -> int:
        return int(self.first.sum())

    def spread(self, distinct_probs: np.ndarray) -> np.ndarray:
        """Each sample's row of ``distinct_probs`` (rows in first-occurrence order)."""
        return distinct_probs[self.slot]


def predict_distinct(
    classifier: NLIClassifier,
    path: Path,
    distinct: DistinctPairs,
    cache: PredictionCache | None,
    progress: bool,
    chunk_pairs: int,
) -> PairProbabilities:
    """One pass over the samples file: the classifier's probabilities for each distinct pair, in
    first-occurrence order, ``chunk_pairs`` at a time (one progress bar for the whole pass), each
    chunk's rows written into one array (no concatenation at the end)."""
    from tqdm.auto import tqdm

    probs = np.full((len(distinct), 3), np.nan)
    totals = dict.fromkeys(
        (
            "unique_pairs",
            "cached_pairs",
            "computed_pairs",
            "real_tokens",
            "padded_tokens",
            "cache_rejected",
            "truncated_pairs",
        ),
        0,
    )
    seconds = 0.0
    filled = 0

    def run_chunk(pairs: list[tuple[str, str]]) -> None:
        nonlocal filled, seconds
        run = predict_pairs(classifier, pairs, cache, progress=False, bar=bar)
        probs[filled : filled + len(pairs)] = run.probs
        for name in totals:
            totals[name] += getattr(run, name)
        seconds += run.seconds
        filled += len(pairs)

    changed = SourceError(path, None, "the file changed while it was being audited", fix="audit it again")
    chunk: list[tuple[str, str]] = []
    read = 0
    with tqdm(total=len(distinct), unit="pair", desc=classifier.name, disable=not progress) as bar:
        for position, (premise, hypothesis) in enumerate(
            iter_checked_fields(path, ("premise", "hypothesis"))
        ):
            if position >= len(distinct.first):
                raise changed  # more samples than when it was checked
            if distinct.first[position]:
                chunk.append((premise, hypothesis))
            if len(chunk) == chunk_pairs:
                run_chunk(chunk)
                chunk = []
            read = position + 1
        if chunk:
            run_chunk(chunk)
    if read != len(distinct.first) or filled != len(probs):
        raise changed
    return PairProbabilities(probs=probs, seconds=seconds, **totals)


class ProbabilityPredictions(ItemSequence[Prediction]):
    """Every model's predictions (model by model, samples in order) made on demand from the ids
    and each distinct pair's probabilities: what ``predictions.jsonl`` holds, without an object
    per row."""

    def __init__(
        self, columns: SampleColumns, distinct: DistinctPairs, distinct_probs: Mapping[str, np.ndarray]
    ) -> None:
        self._ids = columns.ids
        self._slot = distinct.slot
        self._models = list(distinct_probs)
        self._probs = [distinct_probs[m] for m in self._models]
        self._best = [p.argmax(axis=1) if len(p) else np.zeros(0, dtype=np.int64) for p in self._probs]

    def __len__(self) -> int:
        return len(self._ids) * len(self._models)

    def json_lines(self) -> Iterator[str]:
        """The lines of ``predictions.jsonl`` (:class:`~nlibias.io.predictions.WritesJsonLines`),
        model by model, made a block of samples at a time."""
        for model, probs, best in zip(self._models, self._probs, self._best, strict=True):
            if not np.isfinite(probs).all():
                raise ValueError(
                    f"{model} gave probabilities that are not finite numbers; they cannot be written"
                )
            quoted_model = json.dumps(model, ensure_ascii=False)
            for start in range(0, len(self._ids), _LINES_BLOCK):
                slots = self._slot[start : start + _LINES_BLOCK]
                rows = probs[slots].tolist()  # Python floats: their repr is what json writes
                labels = [LABELS[k] for k in best[slots].tolist()]
                for i, row, label in zip(range(start, start + len(slots)), rows, labels, strict=True):
                    yield probability_line(self._ids[i], quoted_model, label, row)

    def _item(self, index: int) -> Prediction:
        model, i = divmod(index, len(self._ids))
        slot = int(self._slot[i])
        row = self._probs[model][slot]
        return Prediction(
            sample_id=self._ids[i],
            model=self._models[model],
            label=LABELS[int(self._best[model][slot])],
            probs=(float(row[0]), float(row[1]), float(row[2])),
        )


class ChainedPredictions(ItemSequence[Prediction]):
    """Several models' predictions one after the other (the models in the order they ran), as
    ``predictions.jsonl`` holds them; parts that make their own lines (:class:`ProbabilityPredictions`)
    make them here too."""

    def __init__(self, parts: Sequence[Sequence[Prediction]]) -> None:
        self._parts = list(parts)
        self._starts = np.cumsum([0, *(len(part) for part in self._parts)])

    def __len__(self) -> int:
        return int(self._starts[-1])

    def json_lines(self) -> Iterator[str]:
        for part in self._parts:
            if isinstance(part, WritesJsonLines):
                yield from part.json_lines()
            else:
                for prediction in part:
                    yield json_line(prediction.to_dict())

    def _item(self, index: int) -> Prediction:
        part = int(np.searchsorted(self._starts, index, side="right")) - 1
        return self._parts[part][index - int(self._starts[part])]
