"""Plug-in benchmarks kept apart: every callable a plug-in brings is wrapped so that what goes
wrong in it, or what it returns outside nlibias's contract, is a :class:`PluginError` naming the
plug-in and its distribution (:class:`PluginOrigin`), never an nlibias internal error.

What is held to the contract where the plug-in hands it over: an expansion's samples (a sequence of
:class:`Sample` of its own sources, pairs of one pro and one anti sample) and its JSON summary;
a scorer's metrics (only the measures it declares, nothing measured over no samples); its
resampling units (:class:`RunUnits`, one row per unit in every block), tables and lists.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from nlibias.benchmarks.base import Benchmark, Extra, Measures
from nlibias.errors import DataError, NlibiasError, PluginError
from nlibias.io.jsonl import dumps_finite
from nlibias.metrics.metric_frame import is_measure_value
from nlibias.metrics.pairing import pair_codes
from nlibias.metrics.verdicts import slice_size
from nlibias.schema import Sample
from nlibias.schema.columns import NO_CODE
from nlibias.schema.measure_info import MeasureInfo
from nlibias.schema.outputs import RunUnits
from nlibias.schema.plugin_origin import PluginOrigin


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
            score=guard(m.score, f"scoring {kind} outputs", _metrics(m.infos)),
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


class _Fault(Exception):
    """What is wrong with a value a plug-in's callable returned (the guard says it as its fault)."""


Check = Callable[[Any], Any]
"""The value to hand on (checked), or :class:`_Fault` saying what is wrong with it."""


def _metrics(infos: Sequence[MeasureInfo]) -> Check:
    """A scorer's metrics: a mapping with an ``overall`` slice whose measures (and every other
    slice's) are the ones its kind declares, and none measured over no samples."""
    declared = {info.name for info in infos}

    def check(value: Any) -> Any:
        if not isinstance(value, Mapping) or not isinstance(value.get("overall"), Mapping):
            raise _Fault(f"returned {_kind(value)}, not the metrics mapping with an 'overall' mapping")
        for where, part in _slices(value):
            measured = {k: v for k, v in part.items() if is_measure_value(str(k), v)}
            undeclared = sorted(str(k) for k in measured if k not in declared)
            if undeclared:
                raise _Fault(
                    f"returned measure {undeclared[0]!r} in {where}, which its Measures.infos do not "
                    f"declare (declared: {', '.join(sorted(declared)) or 'none'}): declare it with a "
                    "MeasureInfo (its meaning, direction and range), or leave it out"
                )
            if measured and slice_size(part) == 0:
                name, number = next(iter(measured.items()))
                raise _Fault(
                    f"returned {where} with n 0 and {name} {number!r}: a measure over no samples is "
                    "undefined; give it as None"
                )
        return value

    return check


def _slices(metrics: Mapping[str, Any]) -> list[tuple[str, Mapping[str, Any]]]:
    """``overall`` and each slice of a slicing (a mapping of slice name → slice mapping)."""
    found: list[tuple[str, Mapping[str, Any]]] = [("overall", metrics["overall"])]
    for slicing, parts in metrics.items():
        sliced = isinstance(parts, Mapping) and parts and all(isinstance(p, Mapping) for p in parts.values())
        if slicing != "overall" and sliced:
            found += [(f"{slicing}.{name}", part) for name, part in parts.items()]
    return found


def _returns(kind: type, what: str) -> Check:
    def check(value: Any) -> Any:
        if not isinstance(value, kind):
            raise _Fault(f"returned {_kind(value)}, not {what}")
        return value

    return check


def _units(value: Any) -> Any:
    """Resampling units whose blocks, stratum and groupings agree on the number of units."""
    problem = _returns(RunUnits, "RunUnits")(value).shape_problem()
    if problem is not None:
        raise _Fault(f"returned RunUnits with {problem}")
    return value


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
            try:
                return value if check is None else check(value)
            except _Fault as fault:
                raise PluginError(origin.describe(), f"{what} {fault}") from None

        guarded.__wrapped__ = fn  # type: ignore[attr-defined]
        return guarded

    def expansion(self, value: Any) -> Any:
        """An expansion of :class:`Sample` objects (a sequence) of the plug-in's own sources, in
        pairs of one pro and one anti sample, with a JSON summary: as :class:`_Checked`."""
        samples = getattr(value, "samples", None)
        if samples is None or not callable(getattr(value, "summary", None)):
            raise _Fault(f"returned {_kind(value)}, not an expansion (samples and summary())")
        if not isinstance(samples, Sequence) or isinstance(samples, str):
            raise _Fault(f"returned samples as {_kind(samples)}, not a sequence (a list of Sample objects)")
        if not all(isinstance(s, Sample) for s in samples):
            raise _Fault("returned samples that are not nlibias Sample objects")
        foreign = sorted({s.source for s in samples} - set(self.benchmark.sources))
        if foreign:
            raise _Fault(
                f"wrote samples with source {foreign[0]!r}, which is not one of its own sources "
                f"({', '.join(self.benchmark.sources)}): they would be scored with another benchmark's "
                "measures"
            )
        _check_pairs(samples)
        return _Checked(value, list(samples), _summary(value))


def _check_pairs(samples: Sequence[Sample]) -> None:
    """The pairs rule of the samples reader (:func:`~nlibias.metrics.pairing.pair_codes`): a pair key
    names one pro and one anti sample; and, as every built-in benchmark that pairs its samples
    writes them, a key with one sample among complete pairs is a pair that lost its twin."""
    if any(s.stereotype not in (None, "pro", "anti") for s in samples):
        return  # a role that is none: the samples' writer refuses the field
    keys = [s.pair_key for s in samples]
    numbers: dict[str, int] = {}
    codes = np.array([NO_CODE if k is None else numbers.setdefault(k, len(numbers)) for k in keys], np.int64)
    roles = np.array([{"pro": 0, "anti": 1}.get(s.stereotype or "", NO_CODE) for s in samples], np.int64)
    try:
        paired = pair_codes(
            codes, roles, roles=("pro", "anti"), unit="pair", pair_keys=keys, ids=[s.id for s in samples]
        )
    except DataError as error:
        raise _Fault(f"wrote samples where {error.reason}") from None
    lone = [int(i) for i in paired.unpaired if codes[i] != NO_CODE and roles[i] != NO_CODE]
    if lone and len(paired.first):
        first = samples[lone[0]]
        raise _Fault(
            f"wrote pair {first.pair_key!r} with its {first.stereotype} sample {first.id!r} alone "
            f"({len(lone)} such sample(s)), while its other {len(paired.first)} pairs each hold one pro and "
            "one anti sample: write the missing twin, or give a sample without a twin no pair_key"
        )


def _summary(expansion: Any) -> dict[str, Any]:
    """The expansion's ``summary()``: a mapping JSON can hold (``expansion.json``)."""
    try:
        summary = expansion.summary()
    except NlibiasError:
        raise
    except Exception as error:
        raise _Fault(
            f"returned an expansion whose summary() raised {type(error).__name__}: {error}"
        ) from None
    if not isinstance(summary, Mapping) or not all(isinstance(key, str) for key in summary):
        raise _Fault(
            f"returned an expansion whose summary() is {_kind(summary)}, not a mapping of names to values "
            "(expansion.json)"
        )
    try:
        dumps_finite(dict(summary))
    except DataError as error:
        raise _Fault(f"returned an expansion whose summary() is not JSON: {error.reason}") from None
    except (TypeError, ValueError) as error:  # an object JSON cannot write
        raise _Fault(f"returned an expansion whose summary() is not JSON: {error}") from None
    return dict(summary)


class _Checked:
    """A plug-in's expansion as checked: its samples and summary read once; the rest its own."""

    def __init__(self, expansion: Any, samples: list[Sample], summary: dict[str, Any]) -> None:
        self._expansion, self.samples, self._summary = expansion, samples, summary

    def summary(self) -> dict[str, Any]:
        return dict(self._summary)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._expansion, name)
