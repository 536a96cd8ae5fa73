"""Plug-in benchmarks (entry-point group ``nlibias.benchmarks``) kept apart: a fault of one is a
:class:`~nlibias.errors.PluginError` naming its :class:`PluginOrigin` (:func:`attributed`), its
samples keep to its sources, and one that fails to load or clashes is not registered (one warning).
"""

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
    """The plug-in's benchmark with every callable it brings attributed to it (module notes); an
    entry point naming anything but a :class:`Benchmark` is a :class:`PluginError`."""
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
            across=None
            if m.across is None
            else guard(m.across, f"the {kind} across-model measures", _mapping),
            units=None if m.units is None else guard(m.units, f"the {kind} resampling units", _units),
        )
        for kind, m in benchmark.measures.items()
        if isinstance(m, Measures)
    }
    extras = tuple(
        dataclasses.replace(
            e,
            compute=guard(e.compute, f"the extra {e.name!r}", None),
            tables=None if e.tables is None else guard(e.tables, f"the extra {e.name!r}'s tables", _text),
        )
        for e in benchmark.extras
        if isinstance(e, Extra)
    )

    def optional(fn: Callable[..., Any] | None, what: str, check: Check) -> Any:
        return None if fn is None else guard(fn, what, check)

    return dataclasses.replace(
        benchmark,
        measures=measures,
        extras=extras,
        expand=optional(benchmark.expand, "expanding its source", guard.expansion),
        summary_table=optional(benchmark.summary_table, "its expansion summary", _text),
        sentence_pairs=optional(benchmark.sentence_pairs, "its sentence pairs", _list),
    )


Check = Callable[[Any], str | None]
"""What is wrong with a callable's return value (None: nothing)."""


def _metrics(value: Any) -> str | None:
    if not isinstance(value, Mapping) or not isinstance(value.get("overall"), Mapping):
        return f"returned {_kind(value)}, not the metrics mapping with an 'overall' mapping"
    return None


def _units(value: Any) -> str | None:
    return None if isinstance(value, RunUnits) else f"returned {_kind(value)}, not RunUnits"


def _text(value: Any) -> str | None:
    return None if isinstance(value, str) else f"returned {_kind(value)}, not text"


def _mapping(value: Any) -> str | None:
    return None if isinstance(value, Mapping) else f"returned {_kind(value)}, not a mapping"


def _list(value: Any) -> str | None:
    return None if isinstance(value, list) else f"returned {_kind(value)}, not a list"


def _kind(value: Any) -> str:
    text = repr(value)
    return f"{type(value).__name__} {text[:60]}{'...' if len(text) > 60 else ''}"


class _Guard:
    """Wraps a plug-in's callables so that what goes wrong in them is said as its fault."""

    def __init__(self, origin: PluginOrigin, benchmark: Benchmark) -> None:
        self.origin, self.benchmark = origin, benchmark

    def __call__(self, fn: Callable[..., Any], what: str, check: Check | None) -> Callable[..., Any]:
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
