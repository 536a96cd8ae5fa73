"""``nlibias doctor``: the environment report (library) and its two printouts (CLI)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

import nlibias
from nlibias.cli.main import app
from nlibias.jobs.doctor import environment_report, extras_status, parse_requirement


@pytest.fixture
def isolated(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Every nlibias location under tmp_path, with files of known sizes."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    monkeypatch.setenv("NLIBIAS_CACHE", str(tmp_path / "preds" / "p.sqlite"))
    monkeypatch.setenv("NLIBIAS_MODEL_CACHE", str(tmp_path / "models"))
    monkeypatch.setenv("NLIBIAS_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.delenv("NLIBIAS_WHEELS", raising=False)
    (tmp_path / "preds").mkdir()
    (tmp_path / "preds" / "p.sqlite").write_bytes(b"x" * 1000)
    (tmp_path / "preds" / "p.sqlite-wal").write_bytes(b"x" * 24)
    (tmp_path / "preds" / "other.sqlite").write_bytes(b"x" * 5)  # not the cache: not counted
    (tmp_path / "models" / "m1").mkdir(parents=True)
    (tmp_path / "models" / "m1" / "w.bin").write_bytes(b"x" * 10)
    (tmp_path / "models" / "w2.bin").write_bytes(b"x" * 20)
    (tmp_path / "data" / "bbnli" / "gender").mkdir(parents=True)
    (tmp_path / "data" / "bbnli" / "gender" / "t.json").write_text("{}")
    return tmp_path


def test_report_reads_every_location_from_the_environment(isolated: Path) -> None:
    report = environment_report(device=False)
    caches = {c["name"]: c for c in report["caches"]}
    predictions = caches["predictions"]
    assert (
        predictions["path"] == str(isolated / "preds" / "p.sqlite")
        and predictions["set_by"] == "NLIBIAS_CACHE"
    )
    assert predictions["bytes"] == 1000 + 24  # the database and its WAL, not its neighbour
    models = caches["converted GGUF models"]
    assert models["bytes"] == 10 + 20 and models["set_by"] == "NLIBIAS_MODEL_CACHE"
    user = caches["user cache (everything below)"]
    assert user["path"] == str(isolated / "xdg" / "nlibias") and not user["exists"] and user["bytes"] == 0
    wheels = caches["built wheels (scripts/setup.sh)"]
    assert wheels["path"] == str(isolated / "xdg" / "nlibias" / "wheels") and wheels["set_by"] is None
    assert report["data"]["bbnli"] == {
        "found": True,
        "path": str(isolated / "data" / "bbnli"),
        "where": "NLIBIAS_DATA_DIR",
    }
    assert report["data"]["wq-nli"] == {"found": False, "path": None, "where": None}
    assert report["plugin_error"] is None


def test_a_plug_in_that_fails_to_load_is_reported_and_the_rest_listed(
    isolated: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import importlib.metadata

    from nlibias.catalog import registry

    class BrokenEntry:
        name, value = "mine", "pkg.mod:BENCH"

        def load(self) -> object:
            raise ModuleNotFoundError("No module named 'pkg'")

    monkeypatch.setattr(importlib.metadata, "entry_points", lambda group: [BrokenEntry()])
    monkeypatch.setattr(registry, "_entry_points_loaded", False)
    monkeypatch.setattr(registry, "_PLUGIN_ERRORS", {})
    with pytest.warns(registry.PluginWarning, match="'mine'"):  # issue #48: a warning, once
        report = environment_report(device=False)
    assert (
        report["plugin_error"] == "entry point 'mine' (pkg.mod:BENCH) failed to load: No module named 'pkg'"
    )
    assert report["data"]["bbnli"]["found"] and "wq-nli" in report["data"]  # the built-in ones


def test_versions_are_the_installed_ones() -> None:
    report = environment_report(device=False)
    assert report["nlibias"] == nlibias.__version__
    assert report["packages"]["numpy"] == np.__version__
    assert "pytest" not in report["packages"]  # development tools are not what nlibias runs with
    assert report["device"] is None


def test_device_is_the_one_a_model_would_get() -> None:
    torch = pytest.importorskip("torch")
    device = environment_report()["device"]
    assert device is not None
    assert device["default"] == ("cuda" if torch.cuda.is_available() else "cpu")
    assert len(device["cuda"]) == (torch.cuda.device_count() if torch.cuda.is_available() else 0)


def test_extras_follow_the_package_metadata() -> None:
    lines = [
        "numpy>=1.26",
        'transformers>=4.45; extra == "hf"',
        "gguf>=0.10 ; extra == 'hf'",
        'matplotlib>=3.8; extra == "report"',
        'ray[data]>=2.30; extra == "ray"',
        'nlibias[hf,ray,report]; extra == "all"',
        'pytest>=8; extra == "dev"',
    ]
    parsed = [parse_requirement(line) for line in lines]
    assert parsed[4] == ("ray", frozenset({"data"}), "ray")
    installed = {"numpy", "gguf", "matplotlib"}
    status = extras_status([p for p in parsed if p is not None], installed.__contains__)
    assert status == {
        "hf": {"installed": False, "missing": ["transformers"]},
        "ray": {"installed": False, "missing": ["ray"]},
        "report": {"installed": True, "missing": []},
    }


def test_cli_prints_the_same_report(isolated: Path) -> None:
    runner = CliRunner()
    result = runner.invoke(app, ["doctor", "--json"])
    assert result.exit_code == 0, result.output
    printed = json.loads(result.output)
    expected = json.loads(json.dumps(environment_report()))
    assert printed == expected
    text = runner.invoke(app, ["doctor"])
    assert text.exit_code == 0, text.output
    assert f"nlibias {nlibias.__version__}" in text.output
    assert f"{isolated / 'preds' / 'p.sqlite'} (set by NLIBIAS_CACHE)  1.0 KiB" in text.output
    assert f"bbnli: {isolated / 'data' / 'bbnli'} (from NLIBIAS_DATA_DIR)" in text.output
    assert "wq-nli: not found" in text.output


def test_a_prediction_cache_no_audit_can_open_is_a_problem_naming_nlibias_cache(
    isolated: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    predictions = {c["name"]: c for c in environment_report(device=False)["caches"]}["predictions"]
    assert predictions["problem"] is not None and "not an SQLite database" in predictions["problem"]
    monkeypatch.setenv("NLIBIAS_CACHE", str(isolated / "preds"))
    text = CliRunner().invoke(app, ["doctor"])
    assert text.exit_code == 0, text.output
    assert (
        f"warning: the predictions cache {isolated / 'preds'} is a folder, not a file: every audit fails to "
        "open it; point NLIBIAS_CACHE at a file (a new one is created), or unset it"
    ) in text.output
    monkeypatch.setenv("NLIBIAS_CACHE", str(isolated / "new.sqlite"))
    assert all(c["problem"] is None for c in environment_report(device=False)["caches"])
    # a folder cache (NLIBIAS_MODEL_CACHE) pointing at a file: the same check, the other way round
    (isolated / "gguf-file").write_text("x")
    monkeypatch.setenv("NLIBIAS_MODEL_CACHE", str(isolated / "gguf-file"))
    text = CliRunner().invoke(app, ["doctor"])
    assert text.exit_code == 0, text.output
    assert (
        f"warning: the converted GGUF models cache {isolated / 'gguf-file'} is a file, not a folder: nothing "
        "can be kept in it; point NLIBIAS_MODEL_CACHE at a folder (a new one is created), or unset it"
    ) in text.output


def test_a_broken_plug_in_does_not_hide_the_plug_ins_after_it(monkeypatch: pytest.MonkeyPatch) -> None:
    """Before: the loaded flag was set before the loop and the first broken plug-in raised, so a
    later, working plug-in was never registered and every lookup silently went without it."""
    import importlib.metadata

    from nlibias.benchmarks.base import Benchmark
    from nlibias.catalog import registry
    from nlibias.errors import ConfigError

    good = Benchmark(name="good-plugin", description="a working plug-in", sources=("good-plugin",))

    class Entry:
        def __init__(self, name: str, load: object) -> None:
            self.name, self.value, self._load = name, f"pkg:{name}", load

        def load(self) -> object:
            if isinstance(self._load, Exception):
                raise self._load
            return self._load

    entries = [Entry("broken", ModuleNotFoundError("No module named 'pkg'")), Entry("good-plugin", good)]
    monkeypatch.setattr(importlib.metadata, "entry_points", lambda group: entries)
    monkeypatch.setattr(registry, "_entry_points_loaded", False)
    monkeypatch.setattr(registry, "_BY_NAME", registry._BY_NAME.copy())
    monkeypatch.setattr(registry, "_BY_SOURCE", registry._BY_SOURCE.copy())
    monkeypatch.setattr(registry, "_PLUGIN_ERRORS", {})
    # issue #48: a plug-in that fails to load is a warning naming it (it stopped every command)
    with pytest.warns(registry.PluginWarning, match=r"'broken'.*No module named 'pkg'"):
        registry.load_plugins()
    assert registry.get_benchmark("good-plugin") is good
    with pytest.raises(ConfigError, match="installed but broken"):
        registry.get_benchmark("broken")
