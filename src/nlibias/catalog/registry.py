"""The benchmark registry, by name and by sample ``source``; plug-ins come through
:func:`register_benchmark` or the entry-point group ``nlibias.benchmarks`` (loaded on first miss),
kept apart: a fault of one is a PluginError naming its :class:`PluginOrigin`, its samples keep to
its sources, one that fails to load or clashes is not registered (a warning).

>>> [b.name for b in benchmarks()][:3]
['bbnli', 'wq-nli', 'occupations']
>>> get_benchmark("crows-pairs").kinds()
('sentence-logprob',)
"""

from __future__ import annotations

import dataclasses
import warnings
from collections.abc import Callable, Sequence
from os import PathLike
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from nlibias.benchmarks.base import Benchmark, BenchmarkSamples
from nlibias.catalog.builtin import BUILTIN
from nlibias.catalog.plugins import attributed
from nlibias.errors import ConfigError, DataError, SourceError, did_you_mean
from nlibias.io.samples import read_sample_columns, read_samples, resolve_samples_path, write_samples
from nlibias.io.temporary import temporary_folder
from nlibias.metrics.meta import register_measures
from nlibias.report.load import Run
from nlibias.schema import Sample
from nlibias.schema.columns import SampleColumns
from nlibias.schema.declared import declared
from nlibias.schema.outputs import ModelOutputs
from nlibias.schema.plugin_origin import PluginOrigin, duplicate_names, load_failure

if TYPE_CHECKING:
    from nlibias.runtime.model_set import ModelSet


ENTRY_POINT_GROUP = "nlibias.benchmarks"


class _Table(dict[str, Benchmark]):
    """Benchmarks by name or by sample source; a look-up loads the plug-ins first (one that clashes
    with the benchmark found is warned of, whatever is looked up), a missing key is refused."""

    def __init__(self, kind: str, fix: str, refusal: Callable[[str], Exception]) -> None:
        super().__init__()
        self.kind, self.fix, self.refusal = kind, fix, refusal

    def __getitem__(self, key: str) -> Benchmark:
        load_plugins()
        return super().__getitem__(key)

    def __missing__(self, key: str) -> Benchmark:
        found = _find(self, key, self.kind, self.fix)
        if isinstance(found, str):
            raise self.refusal(found)
        return found

    def copy(self) -> _Table:
        table = _Table(self.kind, self.fix, self.refusal)
        table.update(self)
        return table


_BY_NAME = _Table(
    "named",
    "Register it with register_benchmark().",
    lambda reason: ConfigError(reason, parameter="benchmark"),
)
_BY_SOURCE = _Table(
    "for sample source",
    "Set the samples' `source` field to one of them, or register a benchmark for it.",
    lambda reason: DataError(reason, field="source"),
)
_entry_points_loaded = False


@declared
def register_benchmark(benchmark: Benchmark, *, replace: bool = False) -> None:
    """Add ``benchmark`` (a name or source taken is refused unless ``replace``) and its measures."""
    name, replaced = benchmark.name, _BY_NAME.get(benchmark.name)
    taken = [s for s in benchmark.sources if s in _BY_SOURCE and not replace]
    problem = None
    # names are typed on command lines and matched exactly: one word, unique whatever its case
    same = next((other for other in _BY_NAME if other.casefold() == name.casefold() and other != name), None)
    if not name or any(c.isspace() for c in name):
        problem = f"benchmark name {name!r} is empty or has spaces; name the benchmark with one word"
    elif same is not None:
        problem = (
            f"benchmark name {name!r} differs from the registered {same!r} only in case; "
            f"choose another name (or name it {same!r} with replace=True)"
        )
    elif replaced is not None and not replace:
        problem = f"a benchmark named {name!r} is already registered (pass replace=True)"
    elif taken:
        problem = (
            f"benchmark {name!r}: sample source(s) {', '.join(taken)} already belong to "
            f"{_BY_SOURCE[taken[0]].name!r} (pass replace=True)"
        )
    else:  # those only the replaced benchmark declared may be declared anew
        redeclarable = set() if replaced is None else {i.name for i in replaced.measure_infos()}
        redeclarable -= {i.name for b in _BY_NAME.values() if b is not replaced for i in b.measure_infos()}
        try:
            register_measures(
                benchmark.measure_infos(), owner=f"benchmark {name!r}", redeclarable=redeclarable
            )
        except ValueError as error:
            problem = str(error)
    if problem is not None:
        raise ConfigError(problem, parameter="benchmark")
    _BY_NAME[benchmark.name] = benchmark
    for source in benchmark.sources:
        _BY_SOURCE[source] = benchmark


for _builtin in BUILTIN:
    register_benchmark(_builtin)


def load_plugins() -> None:
    """Register the entry-point group's benchmarks, once; a broken or clashing one gets a warning."""
    global _entry_points_loaded
    if _entry_points_loaded:
        return
    from importlib.metadata import entry_points

    _entry_points_loaded = True
    entries = list(entry_points(group=ENTRY_POINT_GROUP))
    failures = duplicate_names(entries)
    for entry in (e for e in entries if e.name not in failures):
        origin = PluginOrigin.of(entry)
        try:
            loaded = entry.load()
            if isinstance(loaded, Benchmark) and _BY_NAME.get(loaded.name) is loaded:
                continue  # its module registered it when imported
            benchmark = attributed(loaded, origin)
            taken = _taken(benchmark)
            if taken is None:
                register_benchmark(benchmark)
        except Exception as error:  # a broken plug-in must not stop the others
            failures[entry.name] = load_failure(origin, error)
            continue
        if taken is not None:
            failures[entry.name] = f"{origin.describe()} is not loaded: {taken}"
            continue
        _PLUGINS[benchmark.name] = origin
    _PLUGIN_ERRORS.update(failures)
    for failure in failures.values():
        warnings.warn(failure, PluginWarning, stacklevel=2)


def _taken(benchmark: Benchmark) -> str | None:
    if benchmark.name in _BY_NAME:
        owner, what = _BY_NAME[benchmark.name], f"its name {benchmark.name!r}"
    else:
        taken = [source for source in benchmark.sources if source in _BY_SOURCE]
        if not taken:
            return None
        owner, what = _BY_SOURCE[taken[0]], f"its sample source {taken[0]!r}"
    return (
        f"{what} belongs to {described(owner)}: a plug-in's name and sample sources are its own (samples of "
        "another's source would be scored with that benchmark's measures)"
    )


def described(benchmark: Benchmark) -> str:
    """Where ``benchmark`` comes from, for messages: built in, or which plug-in."""
    origin = _PLUGINS.get(benchmark.name)
    if origin is not None:
        return origin.describe()
    if any(builtin is benchmark for builtin in BUILTIN):
        return f"nlibias's built-in benchmark {benchmark.name!r}"
    return f"plug-in {benchmark.name!r}"


def plugin_problems() -> str | None:
    """Why installed plug-ins are not registered (None: every one is)."""
    load_plugins()
    return "; ".join(_PLUGIN_ERRORS.values()) or None


_PLUGINS: dict[str, PluginOrigin] = {}  # by benchmark name
_PLUGIN_ERRORS: dict[str, str] = {}  # by entry-point name


def benchmarks() -> list[Benchmark]:
    """Every registered benchmark, built-in first."""
    load_plugins()
    return list(_BY_NAME.values())


def _find(table: dict[str, Benchmark], key: str, kind: str, fix: str) -> Benchmark | str:
    load_plugins()
    if key in table:
        return table[key]
    if key in _PLUGIN_ERRORS:
        return f"no benchmark {kind} {key!r}: its plug-in is installed but broken ({_PLUGIN_ERRORS[key]})"
    hint = did_you_mean(key, table)
    hint = f" {hint[:1].upper()}{hint[1:]}" if hint else ""
    return f"no benchmark {kind} {key!r}.{hint} Known: {', '.join(table)}. {fix}"


def get_benchmark(name: str) -> Benchmark:
    return _BY_NAME[name]


def benchmark_for_source(source: str) -> Benchmark:
    return _BY_SOURCE[source]


def benchmark_of(samples: Sequence[Sample]) -> Benchmark:
    """The benchmark of a list of sample objects (mixing benchmarks is refused)."""
    return _BY_SOURCE[SampleColumns.from_samples(samples).source]


def with_benchmarks(runs: Sequence[Run]) -> list[Run]:
    found = [_find(_BY_SOURCE, run.source, "for sample source", "") for run in runs]
    return [
        dataclasses.replace(run, benchmark=benchmark if isinstance(benchmark, Benchmark) else None)
        for run, benchmark in zip(runs, found, strict=True)
    ]


def read_benchmark_samples(samples: str | PathLike[str] | Sequence[Sample]) -> BenchmarkSamples:
    """The benchmark and samples of a run directory, samples file or sample objects, checked and
    scored once on placeholder outputs, so what would stop the scoring stops before any model runs."""
    if not isinstance(samples, str | PathLike):
        return _read_objects(samples)
    given = Path(samples)  # as given: what the run records
    read = read_sample_columns(given, benchmarks=_BY_SOURCE)
    benchmark, resolved = read.benchmark, read.path
    assert benchmark is not None and resolved is not None
    if not benchmark.measures:
        raise SourceError(
            resolved,
            "source",
            f"benchmark {benchmark.name!r} registers no measures: its samples cannot be audited",
        )
    checked = BenchmarkSamples(benchmark, read.columns, given, read.sha256)
    if "classifier" in benchmark.measures:  # uniform probabilities
        uniform = ModelOutputs("classifier", np.full((len(read.columns), 3), 1.0 / 3.0))
        try:
            benchmark.measures["classifier"].score(
                read.columns, uniform, model="(input check)", bootstrap=0, seed=0
            )
        except ValueError as error:
            raise SourceError(resolved, None, str(error)) from None
        except DataError as error:
            raise SourceError(resolved, error.field, error.reason, fix=error.fix) from error
    return checked


def read_checked_samples(path: str | PathLike[str]) -> list[Sample]:
    """The samples of a run directory or samples file as objects, under their benchmark's rules
    (for an lm-eval or Inspect task: bad samples stop before that tool runs)."""
    resolved = resolve_samples_path(Path(path))
    samples = read_samples(resolved, benchmarks=_BY_SOURCE)
    if not samples:
        raise SourceError(resolved, None, "no samples in the file", fix="run `nlibias expand ...` first")
    return samples


def _read_objects(samples: Sequence[Sample]) -> BenchmarkSamples:
    """Sample objects, checked as the file of them would be."""
    records = list(samples)
    if not records or not all(isinstance(s, Sample) for s in records):
        raise ConfigError(
            "{samples} must be what expand() returned, a run directory or samples file, or Sample objects",
            parameter="samples",
        )
    with temporary_folder("nlibias-samples-") as directory:
        write_samples(directory, records)
        read = read_benchmark_samples(directory)
    return BenchmarkSamples(read.benchmark, read.columns)  # no file: it is gone


def check_kinds(benchmark: Benchmark, models: ModelSet) -> None:
    """Refuse kinds of model ``benchmark`` cannot score, and prompt styles of the wrong sort.

    >>> from nlibias.runtime.model_set import ModelSet
    >>> check_kinds(get_benchmark("bbnli"), ModelSet.of(mlm="fake:m"))  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    nlibias.errors.ConfigError: bbnli samples hold no sentence pairs: ...
    """
    kinds = models.kinds()
    benchmark.check_kinds(kinds, others=benchmarks())
    benchmark.check_prompt_styles(models.prompts)


def describe_benchmarks() -> list[dict[str, Any]]:
    return [
        {
            "name": b.name,
            "description": b.description,
            "sources": list(b.sources),
            "expands": b.expand is not None,
            "kinds": list(b.kinds()),
        }
        for b in benchmarks()
    ]


class PluginWarning(UserWarning):
    """A plug-in benchmark is installed but not registered (it failed to load, or clashes)."""
