"""A run directory changes as a unit: ``manifest.json`` (written last) lists every output file's
size and SHA-256; ``load_run``, ``report`` and ``score`` refuse a directory left half-replaced by a
crash or a kill between the renames of its files; stale ``.part`` files are removed by the next
write; directories written before manifests load with one warning."""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
import warnings
from pathlib import Path
from typing import Any

import pytest

import nlibias
import nlibias.jobs.results as audit_module
from nlibias.errors import SourceError
from nlibias.io.run_manifest import MANIFEST_JSON, LegacyRunWarning, check_run_directory
from nlibias.io.samples import write_samples
from nlibias.testing.report_runs import bbnli_like_samples

OUTPUTS = ("predictions.jsonl", "metrics.json", "tables.txt")


@pytest.fixture(scope="module")
def samples(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("samples")
    write_samples(folder, bbnli_like_samples())
    return folder


def _audit(samples: Path, out: Path, model: str) -> nlibias.AuditResult:
    return nlibias.audit(samples, [model], cache=False, bootstrap=0, out_dir=out, progress=False)


def _cli(*args: str) -> tuple[int, str]:
    """The ``nlibias`` entry point in a subprocess: exit code and stderr + stdout."""
    code = "from nlibias.cli.main import main; main()"
    done = subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True, timeout=300)
    return done.returncode, done.stderr + done.stdout


def test_an_audit_writes_a_manifest_of_its_files(samples: Path, tmp_path: Path) -> None:
    out = tmp_path / "run"
    _audit(samples, out, "fake:a")
    manifest = json.loads((out / MANIFEST_JSON).read_text(encoding="utf-8"))
    assert manifest["complete"] is True and sorted(manifest["files"]) == sorted(OUTPUTS)
    for name in OUTPUTS:
        data = (out / name).read_bytes()  # independent of the code under test: hashlib on the bytes
        assert manifest["files"][name] == {"bytes": len(data), "sha256": hashlib.sha256(data).hexdigest()}
    assert nlibias.load_run(out).metrics["models"].keys() == {"a"}
    assert sorted(p.name for p in out.iterdir()) == sorted([*OUTPUTS, MANIFEST_JSON])


@pytest.mark.parametrize(
    "crash_in",
    ["write_json", "atomic_write_text", "finish_write"],
    ids=["after predictions", "after metrics", "before the manifest"],
)
def test_a_crash_between_renames_is_refused_by_every_reader(
    samples: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, crash_in: str
) -> None:
    out = tmp_path / "run"
    _audit(samples, out, "fake:a")
    old_predictions = (out / "predictions.jsonl").read_bytes()

    def crash(*args: Any, **kwargs: Any) -> None:
        raise KeyboardInterrupt("simulated kill")

    with monkeypatch.context() as patch:
        patch.setattr(audit_module, crash_in, crash)
        with pytest.raises(KeyboardInterrupt):
            _audit(samples, out, "fake:b")
    assert (out / "predictions.jsonl").read_bytes() != old_predictions  # the new rows are in place
    if crash_in == "write_json":
        assert '"b"' not in (out / "metrics.json").read_text(encoding="utf-8")  # beside the old metrics

    with pytest.raises(
        SourceError, match=r"run directory .*run is incomplete: a write of its files was interrupted"
    ):
        nlibias.load_run(out)
    code, output = _cli("report", str(out), "--format", "md")
    assert code == 2 and "is incomplete" in output and "rerun the command" in output, output
    assert "Traceback" not in output
    code, output = _cli("score", "--samples", str(samples), "--predictions", str(out / "predictions.jsonl"))
    assert code == 2 and "is incomplete" in output, output

    _audit(samples, out, "fake:b")  # rerunning the command repairs the directory
    assert nlibias.load_run(out).metrics["models"].keys() == {"b"}


def test_a_file_changed_after_the_run_is_named(samples: Path, tmp_path: Path) -> None:
    out = tmp_path / "run"
    _audit(samples, out, "fake:a")
    (out / "tables.txt").write_text("edited by hand\n", encoding="utf-8")
    with pytest.raises(
        SourceError, match=r"is incomplete or mixed: file tables.txt does not match manifest.json"
    ):
        nlibias.load_run(out)
    code, output = _cli("report", str(out), "--format", "md")
    assert code == 2 and "file tables.txt does not match manifest.json" in output, output


_KILL_BEFORE_METRICS = """
import os, signal, sys
import nlibias, nlibias.io.atomic as atomic
real_replace = os.replace
def replace(source, target):
    if str(target).endswith("metrics.json"):
        os.kill(os.getpid(), signal.SIGKILL)  # killed with metrics.json's new text still in its .part
    real_replace(source, target)
atomic.os.replace = replace
nlibias.audit(sys.argv[1], ["fake:b"], cache=False, bootstrap=0, out_dir=sys.argv[2], progress=False)
"""


def test_a_killed_audit_leaves_a_refused_directory_and_the_rerun_cleans_it(
    samples: Path, tmp_path: Path
) -> None:
    out = tmp_path / "run"
    _audit(samples, out, "fake:a")
    killed = subprocess.run(
        [sys.executable, "-c", _KILL_BEFORE_METRICS, str(samples), str(out)], capture_output=True, timeout=300
    )
    assert killed.returncode == -9, killed.stderr
    assert '"model": "b"' in (out / "predictions.jsonl").read_text(encoding="utf-8")
    assert '"b"' not in (out / "metrics.json").read_text(encoding="utf-8")
    assert list(out.glob(".metrics.json.*.part"))  # what the killed write left
    code, output = _cli("report", str(out), "--format", "md")
    assert code == 2 and "is incomplete" in output, output

    _audit(samples, out, "fake:b")
    assert not list(out.glob(".*.part"))
    assert nlibias.load_run(out).metrics["models"].keys() == {"b"}


def test_a_scoring_writes_the_manifest_and_a_failed_one_leaves_the_old_run_readable(
    samples: Path, tmp_path: Path
) -> None:
    out = tmp_path / "run"
    rows = tmp_path / "rows.jsonl"
    ids = [s.id for s in bbnli_like_samples()]
    rows.write_text("".join(json.dumps({"id": i, "label": "neutral"}) + "\n" for i in ids), encoding="utf-8")
    nlibias.score(samples, rows, out_dir=out, bootstrap=0)
    assert check_run_directory(out) is not None
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"id": "nope", "label": "neutral"}\n', encoding="utf-8")
    with pytest.raises(SourceError):
        nlibias.score(samples, bad, out_dir=out, bootstrap=0)
    assert nlibias.load_run(out).metrics["models"].keys() == {"rows"}
    assert not list(out.glob(".*.part"))


def test_a_directory_written_before_manifests_loads_with_one_warning(samples: Path, tmp_path: Path) -> None:
    out = tmp_path / "old"
    _audit(samples, out, "fake:a")
    (out / MANIFEST_JSON).unlink()
    with pytest.warns(LegacyRunWarning, match="no manifest.json"):
        first = nlibias.load_run(out)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert nlibias.load_run(out).metrics == first.metrics  # warned once per directory
    code, output = _cli("report", str(out), "--format", "md")
    assert code == 0 and "warning:" in output and "no manifest.json" in output, output


def test_a_hand_corrupted_metrics_json_is_named_by_its_field_before_the_manifest(
    samples: Path, tmp_path: Path
) -> None:
    out = tmp_path / "run"
    _audit(samples, out, "fake:a")
    metrics = json.loads((out / "metrics.json").read_text(encoding="utf-8"))
    metrics["models"]["a"]["overall"]["accuracy"] = -5000.0
    (out / "metrics.json").write_text(json.dumps(metrics), encoding="utf-8")
    code, output = _cli("report", str(out), "--format", "md")
    assert code == 2 and "field models.a.overall.accuracy: -5000.0 is outside [0, 100]" in output, output
    metrics["models"]["a"]["overall"]["accuracy"] = 99.0  # possible, but not what the run wrote
    (out / "metrics.json").write_text(json.dumps(metrics), encoding="utf-8")
    with pytest.raises(SourceError, match=r"file metrics\.json does not match manifest\.json"):
        nlibias.load_run(out)
