"""Checks that another tool's run finished and covered its task before its log is scored.

>>> lm_eval_results_path("out/m/samples_nlibias_bbnli_true_2026-01-01T00-00-00.123.jsonl").name
'results_2026-01-01T00-00-00.123.json'
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from nlibias.errors import SourceError
from nlibias.io.jsonl import json_object_or_none, read_json_file

LM_EVAL_SAMPLES_NAME = re.compile(r"^samples_(?P<task>.+)_(?P<time>\d{4}-\d{2}-\d{2}T[\d\-.]+)\.jsonl$")

ZIP_MAGIC = b"PK\x03\x04"
_LM_EVAL_FIX = (
    "rerun lm_eval with --log_samples and pass the samples_<task>_<time>.jsonl it writes, with the "
    "results_<time>.json beside it"
)


def check_input_file(path: Path) -> None:
    """Refuse an empty predictions file, and one that cannot be what its name says."""
    if not path.is_file():
        return  # a run directory or a missing file: the native reader says what is wrong
    with path.open("rb") as handle:
        head = handle.read(1 << 16)
        blank = not head.strip()
        while blank and (chunk := handle.read(1 << 20)):
            blank = not chunk.strip()
    if blank:
        raise SourceError(
            path,
            None,
            "the file is empty (no predictions)",
            fix="the tool that wrote it did not finish; rerun it, or pass the file it wrote its answers to",
        )
    if path.suffix == ".eval" and not head.startswith(ZIP_MAGIC):
        raise SourceError(
            path,
            None,
            "named .eval (an Inspect AI log) but not one: an Inspect .eval log is a zip archive",
            fix="pass the .eval file that `inspect eval` wrote to its --log-dir",
        )
    if path.name.startswith("results_") and path.suffix == ".json" and _is_lm_eval_results(path):
        raise SourceError(
            path,
            None,
            "this is lm-eval's results summary (aggregate metrics only), not its answers",
            fix="pass the samples_<task>_<time>.jsonl beside it (run lm_eval with --log_samples)",
        )


def _is_lm_eval_results(path: Path) -> bool:
    document = json_object_or_none(path)
    return document is not None and "results" in document and "n-samples" in document


# --- Inspect AI ------------------------------------------------------------------------------------


def read_inspect_header(path: Path) -> Any:
    """The header of an Inspect log, refused unless its run succeeded."""
    from inspect_ai.log import read_eval_log

    try:
        header = read_eval_log(str(path), header_only=True)
    except Exception as exc:  # Inspect raises several kinds for a damaged log
        raise SourceError(
            path,
            None,
            f"cannot read it as an Inspect AI log: {type(exc).__name__}: {exc}",
            fix="pass a log that `inspect eval` wrote to its --log-dir; a copy cut short cannot be read",
        ) from exc
    status = getattr(header, "status", None)
    if status != "success":
        error = getattr(header, "error", None)
        message = getattr(error, "message", None) if error is not None else None
        reason = {
            "error": "the Inspect run failed",
            "cancelled": "the Inspect run was cancelled",
            "started": "the Inspect run has not finished (it is running, or it was killed)",
        }.get(str(status), "the Inspect run did not finish")
        detail = f": {message.strip()}" if isinstance(message, str) and message.strip() else ""
        raise SourceError(
            path,
            "status",
            f"{reason} (status {status!r}){detail}; its samples are not the model's answers",
            fix="fix the cause and rerun it (inspect eval-retry LOG), then score the new log",
        )
    return header


def check_inspect_sample(path: Path, sample: Any) -> None:
    """Refuse a sample that ended in an error."""
    error = getattr(sample, "error", None)
    if error is not None:
        message = str(getattr(error, "message", error)).strip()
        raise SourceError(
            path,
            f"samples[{sample.id}].error",
            f"sample {sample.id!r} ended in an error, so it holds no answer: {message}",
            fix="rerun the failed samples (inspect eval-retry LOG), then score the new log",
        )


def check_inspect_count(path: Path, header: Any, read: int) -> None:
    """Refuse a log that holds fewer samples than its results say were completed."""
    results = getattr(header, "results", None)
    completed = getattr(results, "completed_samples", None)
    if isinstance(completed, int) and read != completed:
        raise SourceError(
            path,
            "samples",
            f"the log holds {read} samples but its results say {completed} were completed",
            fix="the log is incomplete; score the log `inspect eval` wrote, or rerun it",
        )


# --- lm-evaluation-harness -------------------------------------------------------------------------


def lm_eval_results_path(path: str | Path) -> Path:
    """The ``results_<time>.json`` lm-eval writes beside ``samples_<task>_<time>.jsonl``."""
    path = Path(path)
    match = LM_EVAL_SAMPLES_NAME.match(path.name)
    stamp = match["time"] if match else "<time>"
    return path.with_name(f"results_{stamp}.json")


def read_lm_eval_results(path: Path) -> tuple[str, dict[str, Any]]:
    """The task name and results document of a samples file (refused when missing or without it)."""
    match = LM_EVAL_SAMPLES_NAME.match(path.name)
    if match is None:
        raise SourceError(
            path,
            None,
            "an lm-eval samples file must keep the name lm-eval gave it (samples_<task>_<time>.jsonl): "
            "the results file beside it says how many documents the run evaluated",
            fix=_LM_EVAL_FIX,
        )
    results_path = lm_eval_results_path(path)
    try:
        document = read_json_file(results_path, allow_nan=True)  # a key twice refused, with its line
    except FileNotFoundError:
        raise SourceError(
            path,
            None,
            f"lm-eval's results file {results_path.name} is not beside it; without it a samples file cut "
            "short cannot be told from a complete one",
            fix=_LM_EVAL_FIX,
        ) from None
    except OSError as exc:
        raise SourceError(results_path, None, f"not a readable lm-eval results file: {exc}") from None
    task = match["task"]
    if not isinstance(document, dict) or task not in (document.get("results") or {}):
        raise SourceError(
            results_path,
            "results",
            f"no results for task {task!r}: the lm-eval run did not finish it",
            fix=_LM_EVAL_FIX,
        )
    return task, document


def check_lm_eval_coverage(path: Path, doc_ids: Iterable[Any]) -> None:
    """Refuse a samples file that does not hold exactly the documents lm-eval evaluated, or only
    part of the task without a ``--limit``."""
    task, document = read_lm_eval_results(path)
    results_path = lm_eval_results_path(path)
    counts = (document.get("n-samples") or {}).get(task) or {}
    effective, original = counts.get("effective"), counts.get("original")
    if not isinstance(effective, int):
        raise SourceError(results_path, f"n-samples.{task}", "no count of the documents evaluated")
    ids = list(doc_ids)
    expected = set(range(effective))
    present = {i for i in ids if isinstance(i, int)}
    if len(ids) != effective or present != expected:
        missing = sorted(expected - present)
        raise SourceError(
            path,
            "doc_id",
            f"holds {len(ids)} documents but lm-eval evaluated {effective} (results file {results_path.name})"
            + (f"; documents {_few(missing)} are missing" if missing else "")
            + ": the file was cut short or mixes runs",
            fix=_LM_EVAL_FIX,
        )
    limit = (document.get("config") or {}).get("limit")
    if isinstance(original, int) and effective < original and limit in (None, 0):
        raise SourceError(
            results_path,
            f"n-samples.{task}",
            f"lm-eval evaluated {effective} of the task's {original} documents without a --limit: "
            "the run did not cover the task",
            fix=_LM_EVAL_FIX,
        )


def _few(values: list[int], shown: int = 5) -> str:
    text = ", ".join(str(v) for v in values[:shown])
    return text + (f" ... ({len(values)} in all)" if len(values) > shown else "")
