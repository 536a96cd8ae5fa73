"""Plug-in benchmarks kept apart: a fault of one is a PluginError naming its :class:`PluginOrigin`,
its samples keep to its sources, one that fails to load or clashes is not registered (a warning)."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping
from typing import Any

from nlibias.benchmarks.base import Benchmark, Extra, Measures
from nlibias.errors import NlibiasError, PluginError
from nlibias.schema import Sample
from nlibias.schema.plugin_origin import PluginOrigin
from nlibias.schema.run_units import RunUnits


class PluginWarning(UserWarning):
    """A plug-in benchmark is installed but not registered (it failed to load, or clashes)."""


def attributed(benchmark: Any, origin: PluginOrigin) -> Benchmark:
    """The plug-in's benchmark with every callable it brings attributed to it."""
    if not isinstance(benchmark, Benchmark):
        raise PluginError(
            origin.describe(),
            f"its entry point names a {type(benchmark).__name__}, not a nlibias Benchmark",
        )
    brings = (benchmark.measures, benchmark.extras, benchmark.expand, benchmark.summary_table)
    if not any(brings) and benchmark.sentence_pairs is None:
        return benchmark  # no callable of its own: nothing to attribute
    guard = _Guard(origin, benchmark)
    measures = {
        kind: dataclasses.replace(
            m,
            score=guard(m.score, f"scoring {kind} outputs", _metrics),
            tables=guard(m.tables, f"the {kind} tables", _text),
            across=guard(m.across, f"the {kind} across-model measures", _mapping),
            units=guard(m.units, f"the {kind} resampling units", _units),
        )
        for kind, m in benchmark.measures.items()
        if isinstance(m, Measures)
    }
    extras = tuple(
        dataclasses.replace(
            e,
            compute=guard(e.compute, f"the extra {e.name!r}", None),
            tables=guard(e.tables, f"the extra {e.name!r}'s tables", _text),
        )
        for e in benchmark.extras
        if isinstance(e, Extra)
    )
    return dataclasses.replace(
        benchmark,
        measures=measures,
        extras=extras,
        expand=guard(benchmark.expand, "expanding its source", guard.expansion),
        summary_table=guard(benchmark.summary_table, "its expansion summary", _text),
        sentence_pairs=guard(benchmark.sentence_pairs, "its sentence pairs", _list),
    )


Check = Callable[[Any], str | None]  # what is wrong with a callable's return value (None: nothing)


def _metrics(value: Any) -> str | None:
    if not isinstance(value, Mapping) or not isinstance(value.get("overall"), Mapping):
        return f"returned {_kind(value)}, not the metrics mapping with an 'overall' mapping"
    return None


def _returns(kind: type, what: str) -> Check:
    return lambda value: None if isinstance(value, kind) else f"returned {_kind(value)}, not {what}"


_units = _returns(RunUnits, "RunUnits")
_text = _returns(str, "text")
_mapping = _returns(Mapping, "a mapping")
_list = _returns(list, "a list")


def _kind(value: Any) -> str:
    text = repr(value)
    return f"{type(value).__name__} {text[:60]}{'...' if len(text) > 60 else ''}"


class _Guard:
    """Wraps a plug-in's callables so that what goes wrong in them is said as its fault."""

    def __init__(self, origin: PluginOrigin, benchmark: Benchmark) -> None:
        self.origin, self.benchmark = origin, benchmark

    def __call__(self, fn: Callable[..., Any] | None, what: str, check: Check | None) -> Any:
        """``fn`` guarded (None stays None)."""
        if fn is None:
            return None
        origin = self.origin

        def guarded(*args: Any, **kwargs: Any) -> Any:
            try:
                value = fn(*args, **kwargs)
            except NlibiasError:  # said on purpose, with the file or parameter at fault
                raise
            except Exception as error:
                raise PluginError(
                    origin.describe(), f"{what} raised {type(error).__name__}: {error}"
                ) from error
            problem = None if check is None else check(value)
            if problem is not None:
                raise PluginError(origin.describe(), f"{what} {problem}")
            return value

        guarded.__wrapped__ = fn  # type: ignore[attr-defined]
        return guarded

    def expansion(self, value: Any) -> str | None:
        """An expansion's samples are :class:`Sample` objects of the plug-in's own sources."""
        samples = getattr(value, "samples", None)
        if samples is None or not callable(getattr(value, "summary", None)):
            return f"returned {_kind(value)}, not an expansion (samples and summary())"
        foreign = sorted({s.source for s in samples if isinstance(s, Sample)} - set(self.benchmark.sources))
        if not all(isinstance(s, Sample) for s in samples):
            return "returned samples that are not nlibias Sample objects"
        if foreign:
            return (
                f"wrote samples with source {foreign[0]!r}, which is not one of its own sources "
                f"({', '.join(self.benchmark.sources)}): they would be scored with another benchmark's "
                "measures"
            )
        return None
