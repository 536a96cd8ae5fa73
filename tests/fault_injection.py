"""Helpers of the fault-injection tests: compare output directories apart from listed run fields.

A directory is read as ``{relative path: content}``; JSON and JSON Lines files are parsed and
the keys of :data:`RUN_FIELDS` removed at any depth (how long it took, when it finished, how
much came from the prediction cache): everything else must be equal byte for byte (text files)
or value for value (JSON).
"""

from __future__ import annotations

import json
import re
from collections.abc import Collection
from pathlib import Path
from typing import Any

#: Fields that differ between two runs of the same command on the same inputs, by design.
RUN_FIELDS: frozenset[str] = frozenset(
    {
        "seconds",  # extend: stage durations (markers, run.json, fill/filter stats)
        "started_at",  # extend run.json
        "finished_at",  # extend markers and run.json
        "finished",  # metrics.json run.finished (audit, score)
        "written",  # manifest.json
        "cached",  # extend fill/filter stats: requests found in the cache (a resumed run finds more)
        "computed",  # ... and computed by the model
        "cached_pairs",
        "computed_pairs",
        "cache_rejected",
        "sha256",  # manifest.json entries hash files whose JSON differs only in the fields above
        "bytes",
        # audit metrics.json run.models.*.stats: what this run computed (a rerun finds the rest cached)
        "pairs_per_second",
        "real_tokens",
        "padded_tokens",
        "padding_efficiency",
        "wall_seconds",
        "truncated_pairs",
        # finetune.json: how long, and from which checkpoint a resumed run went on
        "train_seconds",
        "examples_per_second",
        "resumed_from",
        "discarded_checkpoints",
        "record_sha256",  # a stage or fine-tune record's hash of its own content, the fields above included
    }
)
#: The report's provenance table: each model's run statistics (RUN_FIELDS) and when the run finished.
REPORT_RUN_FIELDS = (r'(?s)<td data-label="stats">.*?</td>', r"<td>\d{4}-\d\d-\d\dT[0-9:.+-]+</td>")
#: Whole files that record one run's timing and nothing else.
RUN_FILES: frozenset[str] = frozenset({"run.json"})


def _strip(value: Any, fields: Collection[str]) -> Any:
    if isinstance(value, dict):
        return {k: _strip(v, fields) for k, v in value.items() if k not in fields}
    if isinstance(value, list):
        return [_strip(v, fields) for v in value]
    return value


def read_tree(
    root: Path,
    *,
    fields: Collection[str] = RUN_FIELDS,
    skip: Collection[str] = RUN_FILES,
    text_patterns: Collection[str] = (),
) -> dict[str, Any]:
    """Every file under ``root`` (temporary ``.part`` files included: a rerun must not leave
    any), JSON parsed with ``fields`` removed; ``text_patterns`` (regexes) are blanked in text."""
    tree: dict[str, Any] = {}
    for path in sorted(p for p in root.rglob("*") if p.is_file()):
        rel = path.relative_to(root).as_posix()
        if rel in skip or path.name in skip:
            continue
        data = path.read_bytes()
        if path.suffix == ".json":
            tree[rel] = _strip(json.loads(data), fields)
        elif path.suffix == ".jsonl":
            tree[rel] = [_strip(json.loads(line), fields) for line in data.splitlines() if line.strip()]
        elif path.suffix in (".txt", ".md", ".html", ".yaml", ".csv", ".svg", ".xml", ".sh", ".py"):
            text = data.decode("utf-8")
            for pattern in text_patterns:
                text = re.sub(pattern, "<run field>", text)
            tree[rel] = text
        else:
            tree[rel] = data
    return tree


def first_difference(expected: Any, got: Any, where: str = "") -> str:
    """Where two parsed values first differ (``a.b[2]: 1 != 2``), values shortened."""
    if isinstance(expected, dict) and isinstance(got, dict):
        for key in sorted(set(expected) | set(got), key=str):
            if expected.get(key, "<absent>") != got.get(key, "<absent>"):
                return first_difference(
                    expected.get(key, "<absent>"), got.get(key, "<absent>"), f"{where}.{key}"
                )
    if isinstance(expected, list) and isinstance(got, list) and len(expected) == len(got):
        for index, (a, b) in enumerate(zip(expected, got, strict=True)):
            if a != b:
                return first_difference(a, b, f"{where}[{index}]")
    return f"{where or '<file>'}: {str(expected)[:80]!r} != {str(got)[:80]!r}"


def differences(expected: dict[str, Any], got: dict[str, Any]) -> list[str]:
    """Files missing, extra or different (where they first differ: the contents can be large)."""
    out = [f"missing {k}" for k in sorted(set(expected) - set(got))]
    out += [f"extra {k}" for k in sorted(set(got) - set(expected))]
    out += [
        f"differs {k} at {first_difference(expected[k], got[k])}"
        for k in sorted(set(expected) & set(got))
        if expected[k] != got[k]
    ]
    return out
