"""Samples handed to another tool (an lm-eval or Inspect task) pass the benchmark's sample rules
before that tool runs: a BBNLI bias sample whose gold is not neutral was exported and only
refused when the tool's log came back to be scored."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from nlibias.catalog.registry import read_checked_samples
from nlibias.errors import SourceError


@pytest.fixture(scope="module")
def broken_samples(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, int]:
    from nlibias.jobs.expand import expand_samples

    out = tmp_path_factory.mktemp("bbnli")
    expand_samples("bbnli", out_dir=out)
    path = out / "samples.jsonl"
    lines = path.read_text(encoding="utf-8").splitlines()
    line = next(i for i, text in enumerate(lines) if json.loads(text).get("stereotype") == "pro")
    row = json.loads(lines[line])
    row["gold"] = "entailment"
    lines[line] = json.dumps(row)
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path, line + 1


def _assert_names_the_line(error: SourceError, path: Path, line: int) -> None:
    assert f"{path}:{line}" in str(error) and "gold" in str(error), str(error)


def test_the_registry_reads_samples_under_their_benchmarks_rules(broken_samples: tuple[Path, int]) -> None:
    path, line = broken_samples
    with pytest.raises(SourceError) as refused:
        read_checked_samples(path)
    _assert_names_the_line(refused.value, path, line)


def test_lm_eval_export_refuses_before_loading_the_model(
    broken_samples: tuple[Path, int], tmp_path: Path
) -> None:
    from nlibias.integrations.lm_eval import export_lm_eval

    path, line = broken_samples
    with pytest.raises(SourceError) as refused:  # fake:x is no causal LM: the samples are read first
        export_lm_eval(path, tmp_path / "task", model="fake:x")
    _assert_names_the_line(refused.value, path, line)


def test_inspect_samples_task_refuses(broken_samples: tuple[Path, int]) -> None:
    pytest.importorskip("inspect_ai", reason='inspect-ai is not installed (pip install "nlibias[inspect]")')
    from nlibias.integrations.inspect_tasks import samples_task

    path, line = broken_samples
    with pytest.raises(SourceError) as refused:
        samples_task(samples=str(path))
    _assert_names_the_line(refused.value, path, line)
