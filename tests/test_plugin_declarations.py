"""A plug-in's declarations and return values are held to a declared shape (issue #48): a
MeasureInfo's fields (every way of building one), a Benchmark's kinds and measures, and what its
callables return (metrics, expansions, resampling units), each refusal naming the plug-in or the
measure and the field."""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import nlibias
from nlibias.catalog import registry
from nlibias.catalog.plugins import attributed
from nlibias.catalog.registry import PluginWarning
from nlibias.errors import ConfigError, PluginError
from nlibias.schema.plugin_origin import PluginOrigin
from test_plugin_gate import LEAN, LEAN_BENCHMARK, lean_units
from test_plugins_isolated import Entry, Expanded, Importing, plugins, sample  # noqa: F401 (the fixture)

GAP = dict(name="gap", description="d", direction="zero", range=(-100.0, 100.0), citation="c")


@pytest.mark.parametrize(
    ("changes", "field", "words"),
    [
        ({"range": (1.0, 1.0)}, "range", "low end must be below its high end"),
        ({"range": (0.0, math.nan)}, "range", "not NaN"),
        ({"range": [0.0, 1.0]}, "range", "a tuple (low, high)"),
        ({"direction": "Lower"}, "direction", "one of 'higher'"),
        ({"name": "lean gap"}, "name", "one word"),
        ({"name": ""}, "name", "one word"),
        ({"neutral": math.inf, "headline": True}, "neutral", "finite"),
        ({"neutral": True, "headline": True}, "neutral", "finite float"),
        ({"direction": "target", "target": math.nan}, "target", "finite"),
        ({"headline": True, "neutral": 0.0, "range": (0.0, math.inf)}, "range", "finite range"),
        ({"supersedes": ["other"]}, "supersedes", "tuple"),
    ],
)
def test_a_measure_declaration_breaking_a_rule_is_refused_naming_the_field(
    changes: dict[str, Any], field: str, words: str
) -> None:
    with pytest.raises(ConfigError, match=f"^measure .*{field}") as caught:
        nlibias.MeasureInfo(**{**GAP, **changes})
    assert caught.value.parameter == field and words in str(caught.value), str(caught.value)


def test_every_way_of_building_a_measure_declaration_is_checked() -> None:
    with pytest.raises(ConfigError, match=r"range is \(100\.0, -100\.0\)"):
        dataclasses.replace(LEAN, range=(100.0, -100.0))  # not only the constructor's keywords
    with pytest.raises(ConfigError, match=r"neutral 200\.0 is outside its range"):
        nlibias.MeasureInfo("g", "d", "zero", (-100.0, 100.0), "c", headline=True, neutral=200.0)
    nats = nlibias.MeasureInfo("spread", "d", "none", (0, math.inf), "c", unit="nats")
    assert nats.range == (0.0, math.inf) and isinstance(nats.range[0], float)  # as validated


def test_a_kind_spelt_like_a_built_in_one_is_refused_and_a_plug_ins_own_kind_is_not() -> None:
    measures = LEAN_BENCHMARK.measures["classifier"]
    for kind in ("Classifier", "generativ", "sentence_logprob", "classifier "):
        with pytest.raises(ConfigError, match=f"measures of kind {kind!r}: no such predictor kind") as caught:
            dataclasses.replace(LEAN_BENCHMARK, measures={kind: measures})
        assert caught.value.parameter == "measures"
    for kind in ("agreement-judge", "generative-judge"):  # a plug-in's own predictor kinds
        assert dataclasses.replace(LEAN_BENCHMARK, measures={kind: measures}).kinds() == (kind,)


def test_one_measure_declared_twice_is_refused_naming_both_declarations() -> None:
    measures = LEAN_BENCHMARK.measures["classifier"]
    same = dataclasses.replace(LEAN_BENCHMARK, measures={"classifier": measures, "generative": measures})
    assert same.measure_infos() == (LEAN,)  # one declaration for two kinds: one measure
    other = dataclasses.replace(measures, infos=(dataclasses.replace(LEAN, unit="points"),))
    with pytest.raises(ConfigError, match="'lean_gap' is declared twice") as caught:
        dataclasses.replace(LEAN_BENCHMARK, measures={"classifier": measures, "generative": other})
    assert "for classifier with unit '%'; for generative with unit 'points'" in str(caught.value)
    with pytest.raises(ConfigError, match="not a MeasureInfo"):
        dataclasses.replace(
            LEAN_BENCHMARK, measures={"classifier": dataclasses.replace(measures, infos=("x",))}
        )


def test_a_plug_in_module_whose_declaration_is_refused_is_a_warning_naming_it(
    plugins: Callable[..., None],  # noqa: F811 (the imported fixture)
) -> None:
    def build() -> Any:
        info = dataclasses.replace(LEAN, direction="lowr")  # refused here, as the module is imported
        measures = dataclasses.replace(LEAN_BENCHMARK.measures["classifier"], infos=(info,))
        return dataclasses.replace(LEAN_BENCHMARK, measures={"classifier": measures})

    plugins(Entry("lean", Importing(build), "nlibias-lean"))
    with pytest.warns(PluginWarning) as caught:
        registry.load_plugins()
    [message] = [str(w.message) for w in caught]
    assert "entry point 'lean'" in message and "distribution nlibias-lean 1.0" in message
    assert "measure 'lean_gap': direction is 'lowr'" in message


def lean_plugin(**changes: Any) -> nlibias.Benchmark:
    """The plug-in of tests/test_plugin_gate.py with ``changes`` (``measures``: to its classifier
    measures), as an entry point of ``nlibias-lean`` is guarded."""
    measures = dataclasses.replace(LEAN_BENCHMARK.measures["classifier"], **changes.pop("measures", {}))
    changed = dataclasses.replace(LEAN_BENCHMARK, measures={"classifier": measures}, **changes)
    return attributed(changed, PluginOrigin("lean", "nlibias_lean:BENCH", "nlibias-lean 1.0"))


def _scored(benchmark: nlibias.Benchmark) -> Any:
    columns = nlibias.SampleColumns.from_samples(benchmark.expand_source(None).samples)
    outputs = nlibias.ModelOutputs("classifier", np.full((len(columns), 3), 1.0 / 3.0))
    return benchmark.measures["classifier"].score(columns, outputs, model="m", bootstrap=0, seed=0)


def test_a_plug_ins_metrics_hold_only_its_declared_measures_and_nothing_over_no_samples() -> None:
    def scoring(metrics: dict[str, Any]) -> dict[str, Any]:
        return {"score": lambda columns, outputs, **_: metrics}

    fine = {"overall": {"n": 0, "lean_gap": None}, "domain": {"d0": {"n": 2, "lean_gap": 1.0}}}
    assert _scored(lean_plugin(measures=scoring(fine))) == fine  # None over no samples: fine
    slicing_typo = {"overall": {"n": 4, "lean_gap": 1.0}, "domain": {"d1": {"n": 2, "gap": 3.0}}}
    with pytest.raises(PluginError, match=r"plug-in 'lean'.*returned measure 'gap' in domain\.d1, which"):
        _scored(lean_plugin(measures=scoring(slicing_typo)))
    empty_slice = {"overall": {"n": 4, "lean_gap": 1.0}, "domain": {"d1": {"n": 0, "lean_gap": 0.0}}}
    with pytest.raises(PluginError, match=r"returned domain\.d1 with n 0 and lean_gap 0\.0"):
        _scored(lean_plugin(measures=scoring(empty_slice)))


def test_a_plug_ins_expansion_is_held_to_pairs_a_sequence_and_a_json_summary() -> None:
    pairs = [sample("lean", i, role) for i in range(2) for role in ("pro", "anti")]
    checked = lean_plugin(expand=lambda source=None: Expanded(tuple(pairs))).expand_source(None)
    assert checked.samples == pairs and checked.summary() == {"samples": 4}  # a tuple is a sequence
    lone = [sample("lean", i, "pro") for i in range(3)]  # every sample a pair of its own (CrowS-Pairs)
    assert len(lean_plugin(expand=lambda source=None: Expanded(lone)).expand_source(None).samples) == 3
    anti_alone = [*pairs, sample("lean", 9, "anti")]
    with pytest.raises(PluginError, match=r"pair 'lean:9' with its anti sample 'lean:9:anti' alone"):
        lean_plugin(expand=lambda source=None: Expanded(anti_alone)).expand_source(None)

    class Raising(Expanded):
        def summary(self) -> dict[str, Any]:
            return {}["samples"]

    with pytest.raises(PluginError, match=r"plug-in 'lean'.*summary\(\) raised KeyError"):
        lean_plugin(expand=lambda source=None: Raising(pairs)).expand_source(None)

    class Objects(Expanded):
        def summary(self) -> dict[str, Any]:
            return {"when": object()}

    with pytest.raises(PluginError, match=r"summary\(\) is not JSON"):
        lean_plugin(expand=lambda source=None: Objects(pairs)).expand_source(None)


def test_a_plug_ins_resampling_units_agree_on_their_number() -> None:
    def short_groups(columns: Any, outputs: Any, model: str) -> nlibias.RunUnits:
        made = lean_units(columns, outputs, model)
        return nlibias.RunUnits(made.blocks, made.statistic, made.stratum, {"domain": ["d0"]})

    benchmark = lean_plugin(measures={"units": short_groups})
    columns = nlibias.SampleColumns.from_samples(benchmark.expand_source(None).samples)
    outputs = nlibias.ModelOutputs("classifier", np.full((len(columns), 3), 1.0 / 3.0))
    with pytest.raises(PluginError, match=r"plug-in 'lean'.*grouping 'domain' labels 1 units of 24"):
        benchmark.measures["classifier"].units(columns, outputs, "m")
