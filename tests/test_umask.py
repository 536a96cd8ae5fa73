"""Every file nlibias writes takes the umask's mode, atomic writes included (issue #39):
under umask 022 a colleague can read a run and its report (0644); under 077 nobody else can (0600).
"""

from __future__ import annotations

import json
import os
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

from nlibias.cli.main import app
from nlibias.io.atomic import PendingFile, atomic_write_text, current_umask, file_mode

runner = CliRunner()


def _pair(key: str, subtopic: str) -> list[dict]:
    return [
        {
            "id": f"{key}:{s}",
            "domain": "gender",
            "subtopic": subtopic,
            "premise": f"P {key}.",
            "hypothesis": f"{s} hypothesis {key}.",
            "gold": "neutral",
            "stereotype": s,
            "pair_key": key,
        }
        for s in ("pro", "anti")
    ]


@pytest.fixture()
def umask(request: pytest.FixtureRequest) -> Iterator[int]:
    before = os.umask(request.param)
    try:
        yield request.param
    finally:
        os.umask(before)


def _modes(folder: Path) -> dict[str, int]:
    return {
        str(p.relative_to(folder)): stat.S_IMODE(p.stat().st_mode)
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    }


@pytest.mark.parametrize(("umask", "expected"), [(0o022, 0o644), (0o077, 0o600)], indirect=["umask"])
def test_atomic_writes_follow_the_umask(tmp_path: Path, umask: int, expected: int) -> None:
    # 0o666 & ~0o022 = 0o644; 0o666 & ~0o077 = 0o600
    assert current_umask() == umask
    assert file_mode() == expected
    atomic_write_text(tmp_path / "a.txt", "x")
    with PendingFile(tmp_path / "b.jsonl") as pending:
        pending.handle.write(b"{}\n")
        pending.commit()
    assert _modes(tmp_path) == {"a.txt": expected, "b.jsonl": expected}


@pytest.mark.parametrize(("umask", "expected"), [(0o022, 0o644), (0o077, 0o600)], indirect=["umask"])
def test_every_file_of_a_run_and_its_report_follows_the_umask(
    tmp_path: Path, umask: int, expected: int
) -> None:
    samples = tmp_path / "in" / "samples.jsonl"
    samples.parent.mkdir()
    rows = [*_pair("a", "t1"), *_pair("b", "t1"), *_pair("c", "t2"), *_pair("d", "t2")]
    samples.write_text("".join(json.dumps(r) + "\n" for r in rows))
    run = tmp_path / "run"
    args = ["audit", "--samples", str(samples), "--model", "fake:alpha", "--model", "fake:beta"]
    result = runner.invoke(app, [*args, "--out", str(run), "--bootstrap", "40", "--quiet"])
    assert result.exit_code == 0, result.output
    report = runner.invoke(app, ["report", str(run)])
    assert report.exit_code == 0, report.output
    modes = _modes(run)
    # the run holds at least these; the report and its figures are written into it
    assert {"metrics.json", "predictions.jsonl", "manifest.json", "report.html"} <= set(modes), modes
    assert any(name.endswith(".svg") for name in modes), modes
    assert {name: mode for name, mode in modes.items() if mode != expected} == {}
