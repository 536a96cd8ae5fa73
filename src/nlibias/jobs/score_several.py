"""Score one or several predictions files together (``nlibias score --predictions A --predictions B``,
or a quoted glob pattern that nlibias expands: ``--predictions 'lm-eval-out/*/samples_*.jsonl'``).

Each file is nlibias' own predictions or another tool's log (:mod:`nlibias.io.tool_logs`, which
refuses the log of a run that failed or did not cover its task). Several files are read one by
one, each checked as a lone file is (its errors name it and its line), and their rows are
combined: two logs of one model covering different samples (a run split in two, a retry of the
failed part) score as one model; the same sample answered by the same model in two files (two
reruns matched by one pattern) is refused, naming both files, since which answer counts would
otherwise be an accident of order. ``metrics.json`` records the files joined with
:data:`os.pathsep`.

>>> import tempfile, pathlib
>>> folder = pathlib.Path(tempfile.mkdtemp())
>>> for name in ("b.jsonl", "a.jsonl"):
...     _ = (folder / name).write_text('{"id": "x", "label": "neutral"}\\n')
>>> [p.name for p in expand_predictions([str(folder / "*.jsonl"), folder / "a.jsonl"])]
['a.jsonl', 'b.jsonl']
"""

from __future__ import annotations

import glob
import os
import tempfile
from collections.abc import Sequence
from contextlib import ExitStack
from pathlib import Path

import numpy as np

from nlibias.errors import ConfigError, SourceError
from nlibias.io.atomic import PendingFile
from nlibias.io.predictions import PREDICTIONS_JSONL, read_prediction_arrays
from nlibias.io.run_manifest import check_run_file
from nlibias.jobs.audit import AuditResult
from nlibias.jobs.streamed_audit import read_sample_columns_and_ids

PredictionsInput = str | Path | Sequence[str | Path]


def expand_predictions(predictions: PredictionsInput) -> list[Path]:
    """The predictions files named: each path as given, or the files a glob pattern matches
    (sorted; a pattern is expanded only when no file has its literal name), each file once."""
    given = [predictions] if isinstance(predictions, str | Path) else list(predictions)
    if not given:
        raise ConfigError("no predictions file given", parameter="predictions")
    paths: list[Path] = []
    for item in given:
        text = str(item)
        if glob.has_magic(text) and not Path(text).exists():
            matches = sorted(glob.glob(text))
            if not matches:
                raise ConfigError(f"predictions pattern {text!r} matches no file", parameter="predictions")
            paths.extend(Path(m) for m in matches)
        else:
            paths.append(Path(item))
    unique: dict[Path, Path] = {}
    for path in paths:
        unique.setdefault(path.resolve(), path)
    return list(unique.values())


def score_predictions(
    samples: str | Path,
    predictions: PredictionsInput,
    *,
    out_dir: str | Path | None = None,
    bootstrap: int = 1000,
    seed: int = 0,
) -> AuditResult:
    """Score ``predictions`` (a file, a glob pattern, or several of either) against ``samples``,
    as :func:`nlibias.jobs.score.score_files` scores one file; tool logs are converted first."""
    from nlibias.io.tool_logs import native_predictions
    from nlibias.jobs.score import score_files

    paths = expand_predictions(predictions)
    with ExitStack() as stack:
        natives = [Path(stack.enter_context(native_predictions(path))) for path in paths]
        converted = any(n != p for n, p in zip(natives, paths, strict=True))
        if len(paths) == 1:
            result = score_files(
                samples, natives[0], out_dir=out_dir, bootstrap=bootstrap, seed=seed,
                predictions_name=paths[0] if converted else None,
            )  # fmt: skip
        else:
            tmp = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="nlibias-combined-")))
            combined = _combine(samples, paths, natives, tmp / PREDICTIONS_JSONL)
            result = score_files(
                samples, combined, out_dir=out_dir, bootstrap=bootstrap, seed=seed,
                predictions_name=os.pathsep.join(str(p) for p in paths),
            )  # fmt: skip
            converted = True
        # a converted or combined file lives in a temporary directory: hold its rows first
        return result.materialised() if converted else result


def _combine(samples: str | Path, paths: Sequence[Path], natives: Sequence[Path], target: Path) -> Path:
    """The rows of every file in one predictions file (each file checked as it is read, its
    model filled in), refusing a sample that one model answers in two files."""
    columns, id_positions = read_sample_columns_and_ids(samples)
    owner: dict[str, np.ndarray] = {}  # model → index of the file answering each sample (-1: none)
    line_of: dict[str, np.ndarray] = {}
    with PendingFile(target) as pending:
        for index, (path, native) in enumerate(zip(paths, natives, strict=True)):
            check_run_file(native)
            arrays = read_prediction_arrays(
                native,
                position_of=id_positions,
                n_samples=len(columns),
                default_model=_default_model(path) if native == path else None,
                copy_to=pending,
            )
            for model, rows in arrays.models.items():
                answered = rows.line > 0
                files = owner.setdefault(model, np.full(len(columns), -1, dtype=np.int32))
                lines = line_of.setdefault(model, np.zeros(len(columns), dtype=np.int64))
                both = np.flatnonzero(answered & (files >= 0))
                if len(both):
                    at = int(both[0])
                    earlier = int(files[at])
                    first = paths[earlier]
                    where = f" (line {int(lines[at])})" if natives[earlier] == first else ""
                    raise SourceError(
                        path,
                        "id",
                        f"sample {columns.ids[at]!r} of model {model!r} is answered here and in {first}"
                        f"{where}; {len(both)} samples are answered in both files",
                        line=int(rows.line[at]) if native == path else None,
                        fix="pass each model's answer to a sample once: leave out one of the two files "
                        "(e.g. an older rerun)",
                    )
                files[answered] = index
                lines[answered] = rows.line[answered]
        pending.commit()
    return target


def _default_model(path: Path) -> str:
    """The model of a native row without one, as a lone file is read (its file's stem)."""
    return (path / PREDICTIONS_JSONL if path.is_dir() else path).stem
