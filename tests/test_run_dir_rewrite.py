"""A run directory changes as a unit: a new audit into it removes what was derived from the old one."""

from __future__ import annotations

import json
from pathlib import Path

import nlibias
from nlibias.io.run_manifest import check_run_directory


def test_a_new_audit_into_a_run_directory_removes_the_old_runs_report(tmp_path: Path) -> None:
    samples = nlibias.expand("bbnli", out_dir=tmp_path / "samples")
    run = tmp_path / "run"
    nlibias.audit(samples, ["fake:a"], out_dir=run, cache=False, bootstrap=0, progress=False)
    old = json.loads((run / "metrics.json").read_text())["models"]["a"]["overall"]
    # what `nlibias report RUN` and `report --debias` leave there, from the first audit
    (run / "report.html").write_text("<p>model a</p>")
    (run / "report_files").mkdir()
    (run / "report_files" / "pro_anti_0.svg").write_text("<svg/>")
    (run / "debias_comparison.json").write_text("{}")
    (run / "notes.txt").write_text("mine")  # not derived by nlibias: kept
    nlibias.audit(samples, ["fake:b"], out_dir=run, cache=False, bootstrap=0, progress=False)
    assert sorted(p.name for p in run.iterdir()) == [
        "manifest.json",
        "metrics.json",
        "notes.txt",
        "predictions.jsonl",
        "tables.txt",
    ]
    check_run_directory(run)
    new = json.loads((run / "metrics.json").read_text())["models"]
    assert list(new) == ["b"] and new["b"]["overall"] != old  # the test sees two different runs
