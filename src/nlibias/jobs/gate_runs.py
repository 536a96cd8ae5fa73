"""The two runs a gate compares: read, and checked to be comparable (:func:`nlibias.jobs.gate.gate`).

A gate compares two different runs of one benchmark over the same samples: the same run twice
(however its directory is spelled) tells nothing; runs over samples whose ids or texts differ,
or a samples file edited since an audit (its recorded SHA-256), would compare answers to other
texts; a classifier against a generative model compares measures of different things. The same
samples in another order are the same samples: the baseline is put in the candidate's order.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from nlibias.errors import ConfigError, DataError, SourceError

if TYPE_CHECKING:
    from nlibias.schema.columns import SampleColumns
    from nlibias.schema.outputs import ModelOutputs


@dataclass(frozen=True, eq=False)
class RunData:
    """One run as a gate reads it: its metrics, the samples some model answered (as columns) and
    each model's outputs on them."""

    path: Path
    metrics: Mapping[str, Any]
    columns: SampleColumns
    outputs: Mapping[str, ModelOutputs]

    def kind_of(self, model: str) -> str:
        """The model's predictor kind (``classifier`` where the run records none)."""
        return str((self.metrics.get("predictor_kinds") or {}).get(model, "classifier"))


def _samples_path(run: Path, metrics: Mapping[str, Any], samples: str | Path | None) -> Path:
    """The samples a run scored: ``samples`` when given, else the file its manifest or
    ``metrics.json`` records (a relative path from the working directory, the run or a parent)."""
    if samples is not None:
        return Path(samples)
    candidates: list[Path] = []
    manifest = run / "manifest.json"
    if manifest.is_file():
        recorded = (
            (json.loads(manifest.read_text(encoding="utf-8")).get("inputs") or {}).get("samples") or {}
        ).get("path")
        if isinstance(recorded, str):
            candidates.append(Path(recorded))
    recorded = (metrics.get("run") or {}).get("samples")
    if isinstance(recorded, str) and recorded:
        given = Path(recorded).expanduser()
        root = run.absolute()
        candidates += (
            [given] if given.is_absolute() else [b / given for b in (Path.cwd(), root, *root.parents)]
        )
    for path in candidates:
        if path.exists():
            return path
    if isinstance(recorded, str) and recorded:
        reason = (
            f"the samples this run scored are not at {recorded!r} (looked for from the working "
            "directory, the run directory and each folder above it)"
        )
    elif candidates:  # only the manifest's absolute path
        reason = f"the samples this run scored are not at {str(candidates[0])!r}"
    else:
        reason = "this run records no samples file"
    raise SourceError(
        run / "metrics.json",
        "run.samples",
        reason,
        fix="pass the samples file the runs audited ({parameter samples})",
        names=("samples",),
    )


def load_gate_run(run_dir: str | Path, samples: str | Path | None) -> RunData:
    """A run's metrics, the samples it scored and each model's outputs on them; a samples file
    whose bytes are not those the run read (its recorded SHA-256) is refused."""
    from nlibias.catalog.registry import read_benchmark_samples
    from nlibias.jobs.results import load_run
    from nlibias.metrics.paired_units import model_outputs

    run = Path(run_dir)
    result = load_run(run)
    path = _samples_path(run, result.metrics, samples)
    result.check_samples_file(path)
    columns = read_benchmark_samples(path).columns
    kept, outputs = model_outputs(columns, result.predictions, result.metrics.get("predictor_kinds") or {})
    scored = columns if len(kept) == len(columns) else columns.take(kept)
    return _in_id_order(RunData(run, result.metrics, scored, outputs))


def _in_id_order(run: RunData) -> RunData:
    """The run's samples sorted by id: the bootstrap draws follow the units' order, so a samples
    file in another order would give other p-values for the same answers."""
    ids = list(run.columns.ids)
    order = np.array(sorted(range(len(ids)), key=ids.__getitem__), dtype=np.int64)
    if np.array_equal(order, np.arange(len(ids))):
        return run
    outputs = {model: out.take(order) for model, out in run.outputs.items()}
    return replace(run, columns=run.columns.take(order), outputs=outputs)


def check_different_runs(candidate: str | Path, baseline: str | Path) -> None:
    """Refuse one run directory given as both (``./runs/ref`` and ``runs/ref/`` alike)."""
    if Path(candidate).resolve() == Path(baseline).resolve():
        raise ConfigError(
            f"the candidate and the baseline are the same run ({Path(candidate).resolve()}): a gate "
            "compares a new run with another one",
            parameter="baseline",
        )


def aligned_baseline(candidate: RunData, baseline: RunData) -> RunData:
    """The baseline, refused where the runs are of different benchmarks or samples (naming the
    first difference); both runs are in id order (:func:`load_gate_run`), so the same samples in
    another file order line up."""
    a, b = candidate.columns, baseline.columns
    source_a, source_b = candidate.metrics.get("source"), baseline.metrics.get("source")
    if source_a != source_b:
        raise DataError(
            f"the candidate run is of {source_a!r} samples and the baseline of {source_b!r}; "
            "a gate compares runs of one benchmark",
            field="source",
        )
    if len(a) != len(b):
        raise DataError(
            f"the candidate run ({candidate.path}) scored {len(a)} samples and the baseline ({baseline.path}) "
            f"{len(b)}; a gate compares runs over the same samples",
            fix="audit both models on the same samples file",
        )
    for i in range(len(a)):
        for field_name, left, right in (
            ("id", a.ids[i], b.ids[i]),
            ("premise", a.premise[i], b.premise[i]),
            ("hypothesis", a.hypothesis[i], b.hypothesis[i]),
        ):
            if left != right:
                raise DataError(
                    f"sample {i + 1} ({a.ids[i]!r}) differs: {field_name} {left!r} in the candidate run ({candidate.path}), "
                    f"{right!r} in the baseline ({baseline.path}); a gate compares runs over the same samples",
                    sample=str(a.ids[i]),
                    field=field_name,
                    fix="audit both models on the same samples file",
                )
    return baseline


def check_same_kind(candidate: RunData, baseline: RunData, pairs: list[tuple[str, str | None]]) -> None:
    """Refuse a candidate model compared with a baseline model of another predictor kind (a
    classifier's probabilities against a generative model's answers measure different things)."""
    for cand_model, base_model in pairs:
        if base_model is None:
            continue
        kinds = candidate.kind_of(cand_model), baseline.kind_of(base_model)
        if kinds[0] != kinds[1]:
            raise DataError(
                f"candidate model {cand_model!r} is a {kinds[0]} model and baseline model {base_model!r} a "
                f"{kinds[1]} one: their measures are of different things; gate models of one kind",
                model=cand_model,
                fix="pair models of one kind (pairs), or audit the candidate the way the baseline was audited",
            )
