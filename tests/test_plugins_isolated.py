"""Plug-in benchmarks are isolated (issue #48): a broken one is a warning naming it and stops no
command that does not use it; its exceptions and bad return values are its own faults, named with
its distribution (not nlibias internal errors); its samples are scored by its own benchmark only;
two plug-ins of one name are both refused, naming both distributions."""

from __future__ import annotations

import importlib.metadata
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from nlibias.benchmarks.base import Benchmark, Measures
from nlibias.catalog import registry
from nlibias.catalog.registry import PluginWarning
from nlibias.cli.main import app
from nlibias.errors import ConfigError, PluginError
from nlibias.schema import Sample


class Dist:
    def __init__(self, name: str) -> None:
        self.metadata = {"Name": name}
        self.version = "1.0"


class Entry:
    """An entry point of the ``nlibias.benchmarks`` group, as importlib.metadata gives it."""

    def __init__(self, name: str, load: object, dist: str) -> None:
        self.name, self.value, self.dist, self._load = (
            name,
            f"{dist.replace('-', '_')}:BENCH",
            Dist(dist),
            load,
        )

    def load(self) -> object:
        if isinstance(self._load, Exception):
            raise self._load
        if isinstance(self._load, Importing):
            return self._load.build()
        return self._load


class Importing:
    """A plug-in module that builds its benchmark when it is imported (``entry_point.load()``):
    what the building raises is a failure to load."""

    def __init__(self, build: Callable[[], object]) -> None:
        self.build = build


@pytest.fixture
def plugins(monkeypatch: pytest.MonkeyPatch) -> Iterator[Callable[..., None]]:
    """Install these entry points (a fresh registry holding the built-in benchmarks)."""

    def install(*entries: Entry) -> None:
        monkeypatch.setattr(importlib.metadata, "entry_points", lambda group: list(entries))

    monkeypatch.setattr(registry, "_entry_points_loaded", False)
    for table in ("_BY_NAME", "_BY_SOURCE", "_PLUGINS", "_PLUGIN_ERRORS"):
        monkeypatch.setattr(registry, table, getattr(registry, table).copy())
    yield install


def sample(source: str, i: int, stereotype: str) -> Sample:
    return Sample(
        id=f"{source}:{i}:{stereotype}", source=source, domain="d", subtopic="s", premise="A person waits.",
        hypothesis=f"The {stereotype} one waits.", gold="neutral", stereotype=stereotype, pair_key=f"{source}:{i}",
    )  # fmt: skip


class Expanded:
    def __init__(self, samples: list[Sample]) -> None:
        self.samples = samples

    def summary(self) -> dict[str, Any]:
        return {"samples": len(self.samples)}


def benchmark(
    name: str, *, expand: Any = None, score: Any = None, sources: tuple[str, ...] = ()
) -> Benchmark:
    def default_score(columns: Any, outputs: Any, **_: Any) -> dict[str, Any]:
        return {"overall": {"n": len(columns)}}

    return Benchmark(
        name=name,
        description=f"the {name} plug-in",
        sources=sources or (name,),
        measures={"classifier": Measures(score=score or default_score, tables=lambda models, **_: "")},
        expand=expand or (lambda source=None: Expanded([sample(name, 0, "pro"), sample(name, 0, "anti")])),
    )


def cli(args: list[str]) -> tuple[int, str]:
    result = CliRunner().invoke(app, args)
    return result.exit_code, " ".join(result.output.split())


def test_a_plug_in_that_fails_to_load_is_one_warning_and_stops_no_other_command(
    plugins: Callable[..., None], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    plugins(Entry("broken", ModuleNotFoundError("No module named 'broken_pkg'"), "nlibias-broken"))
    code, output = cli(["expand", "occupations", "--out", str(tmp_path / "occ")])
    assert code == 0 and output.count("warning: entry point 'broken'") == 1, output  # a look-up loads them
    monkeypatch.setattr(registry, "_entry_points_loaded", False)  # the next command: a new process
    code, output = cli(["audit", "--samples", str(tmp_path / "occ"), "--out", str(tmp_path / "run"),
                        "--model", "fake:a", "--bootstrap", "0", "--no-cache"])  # fmt: skip
    assert code == 0, output  # a command that does not use it goes on, warned once
    assert output.count("warning: entry point 'broken'") == 1, output
    assert "No module named 'broken_pkg'" in output and "distribution nlibias-broken 1.0" in output
    code, output = cli(["expand", "broken", "--out", str(tmp_path / "b")])  # one that does: refused
    assert code == 2 and "installed but broken" in output and "internal error" not in output


def test_a_plug_ins_exception_is_its_own_fault_naming_its_distribution(
    plugins: Callable[..., None], tmp_path: Path
) -> None:
    def crash(source: Any = None) -> Any:
        return {}["premise"]  # a KeyError inside the plug-in

    plugins(Entry("crashy", benchmark("crashy", expand=crash), "nlibias-crashy"))
    code, output = cli(["expand", "crashy", "--out", str(tmp_path / "c")])
    assert code == 2 and "internal error" not in output, output
    assert "plug-in 'crashy' (nlibias_crashy:BENCH, distribution nlibias-crashy 1.0)" in output
    assert "expanding its source raised KeyError: 'premise'" in output


def test_a_plug_ins_bad_return_value_is_its_own_fault(plugins: Callable[..., None]) -> None:
    plugins(
        Entry("listy", benchmark("listy", score=lambda columns, outputs, **_: [0.5]), "nlibias-listy"),
        Entry("dicty", benchmark("dicty", expand=lambda source=None: {"samples": []}), "nlibias-dicty"),
    )
    with pytest.raises(
        PluginError, match=r"plug-in 'listy'.*scoring classifier outputs returned list \[0\.5\]"
    ):
        registry.get_benchmark("listy").measures["classifier"].score([], None, model="m", bootstrap=0, seed=0)
    with pytest.raises(PluginError, match=r"plug-in 'dicty'.*returned dict .*, not an expansion"):
        registry.get_benchmark("dicty").expand_source(None)


def test_a_plug_ins_samples_of_another_benchmarks_source_are_refused(
    plugins: Callable[..., None], tmp_path: Path
) -> None:
    posing = benchmark("poser", expand=lambda source=None: Expanded([sample("bbnli", 0, "pro")]))
    plugins(
        Entry("poser", posing, "nlibias-poser"),
        Entry("taker", benchmark("taker", sources=("bbnli",)), "nlibias-taker"),
    )
    code, output = cli(["expand", "poser", "--out", str(tmp_path / "p")])
    assert (
        code == 2
        and "wrote samples with source 'bbnli', which is not one of its own sources (poser)" in output
    )
    assert not (tmp_path / "p" / "samples.jsonl").exists()
    # a plug-in declaring a built-in's source is not registered: its samples would get BBNLI's measures
    assert registry.benchmark_for_source("bbnli").name == "bbnli"
    problems = registry.plugin_problems() or ""
    assert (
        "plug-in 'taker'" in problems
        and "its sample source 'bbnli' belongs to nlibias's built-in" in problems
    )
    with pytest.raises(ConfigError, match="installed but broken"):
        registry.get_benchmark("taker")


def test_two_plug_ins_of_one_name_are_both_refused_naming_both_distributions(
    plugins: Callable[..., None],
) -> None:
    plugins(Entry("twin", benchmark("twin"), "nlibias-one"), Entry("twin", benchmark("twin"), "nlibias-two"))
    with pytest.warns(PluginWarning) as caught:
        registry.load_plugins()
    [message] = [str(w.message) for w in caught]
    assert "two plug-ins are named 'twin'" in message
    assert "distribution nlibias-one 1.0" in message and "distribution nlibias-two 1.0" in message
    with pytest.raises(ConfigError, match="two plug-ins are named 'twin'"):
        registry.get_benchmark("twin")


def test_a_plug_in_taking_another_plug_ins_name_names_that_plug_in(plugins: Callable[..., None]) -> None:
    plugins(
        Entry("first", benchmark("same"), "nlibias-first"),
        Entry("second", benchmark("same"), "nlibias-second"),
    )
    with pytest.warns(PluginWarning, match=r"plug-in 'second'.*its name 'same' belongs to plug-in 'first'"):
        registry.load_plugins()
    assert registry.get_benchmark("same").description == "the same plug-in"


def test_a_plug_in_named_like_a_built_in_is_warned_of_when_the_built_in_is_looked_up(
    plugins: Callable[..., None],
) -> None:
    """Before: a look-up that found the built-in never loaded the plug-ins, so the clash was silent."""
    plugins(Entry("lean", benchmark("wq-nli"), "nlibias-lean"))
    with pytest.warns(PluginWarning) as caught:
        found = registry.get_benchmark("wq-nli")
    assert found.name == "wq-nli" and found.description != "the wq-nli plug-in"  # the built-in
    [message] = [str(w.message) for w in caught]
    assert (
        "distribution nlibias-lean 1.0" in message
        and "its name 'wq-nli' belongs to nlibias's built-in" in message
    )
    assert registry.plugin_problems() == message
