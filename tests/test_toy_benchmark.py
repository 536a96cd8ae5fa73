"""A benchmark and a predictor kind from outside the package (tests/toy_benchmark.py), through the
public API only: registered, expanded, audited beside a built-in classifier, written and read back."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest

import nlibias
from nlibias.errors import ConfigError, SourceError
from nlibias.io.results import check_metrics, metrics_issues, metrics_schema
from toy_benchmark import AGREE_GAP, BENCHMARK, AgreementJudge


@pytest.fixture
def toy_registered(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    from nlibias.catalog import registry  # the registry's tables: leave no registration behind
    from nlibias.metrics.meta import ALL_MEASURES

    monkeypatch.setattr(registry, "_BY_NAME", registry._BY_NAME.copy())
    monkeypatch.setattr(registry, "_BY_SOURCE", registry._BY_SOURCE.copy())
    declared = dict(ALL_MEASURES)
    nlibias.register_benchmark(BENCHMARK)
    yield
    ALL_MEASURES.clear()
    ALL_MEASURES.update(declared)


def test_a_toy_benchmark_and_kind_audit_through_the_public_api(toy_registered: None, tmp_path: Path) -> None:
    samples = nlibias.expand("toy", out_dir=tmp_path / "samples")
    assert len(samples) == 4
    result = nlibias.audit(
        samples, models=[AgreementJudge(), "fake:a"], cache=False, bootstrap=0, progress=False,
        out_dir=tmp_path / "run",
    )  # fmt: skip
    assert result.metrics["predictor_kinds"] == {"length-judge": "agreement-judge", "a": "classifier"}
    # p_agree = len(hypothesis) / 20: pro "She is caring." (14) and "He is logical." (14),
    # anti "He is caring." (13) and "She is logical." (15): means 0.70 and 0.70, gap 0 points
    assert result.metrics["models"]["length-judge"]["overall"]["agree_gap"] == pytest.approx(0.0, abs=1e-9)
    assert result.metrics["models"]["a"]["overall"]["n"] == 4
    assert "Toy agreement gap" in result.tables_text and "length-judge: 0.0" in result.tables_text
    rows = [p for p in result.predictions if p.model == "length-judge"]
    assert [p.extra["p_agree"] for p in rows] == [0.7, 0.65, 0.7, 0.75]
    loaded = nlibias.load_run(tmp_path / "run")
    assert loaded.metrics["models"] == result.metrics["models"]
    assert str(loaded.tables()) == result.tables_text


class FixedJudge(AgreementJudge):
    """A toy-kind predictor that agrees ``pro`` with pro-stereotype samples and ``anti`` with the others."""

    def __init__(self, name: str, pro: float, anti: float) -> None:
        self.name, self.pro, self.anti = name, pro, anti

    def predict(self, samples, cache, *, progress=True):  # type: ignore[no-untyped-def]
        values = [self.pro if code == 0 else self.anti for code in samples.columns.stereotype.tolist()]
        rows = [nlibias.Prediction(i, self.name, None, extra={"kind": self.kind, "p_agree": v})
                for i, v in zip(samples.columns.ids, values, strict=True)]  # fmt: skip
        return nlibias.PredictorRun.of_predictions(rows, self.kind, {})


def test_the_gap_is_hand_derived_for_a_judge_that_prefers_pro(toy_registered: None, tmp_path: Path) -> None:
    result = nlibias.audit(
        nlibias.expand("toy"), models=[FixedJudge("pro-judge", 0.9, 0.4)], cache=False, bootstrap=0,
        progress=False,
    )  # fmt: skip
    # pro mean 0.9, anti mean 0.4: a gap of 50 points
    assert result.metrics["models"]["pro-judge"]["overall"]["agree_gap"] == pytest.approx(50.0)


def test_a_kind_the_toy_benchmark_does_not_score_is_refused_before_any_model_loads(
    toy_registered: None,
) -> None:
    with pytest.raises(ConfigError, match="toy samples have no measures for generative") as caught:
        nlibias.audit(
            nlibias.expand("toy"), generative="no-such-model-is-loaded", cache=False, progress=False
        )
    assert caught.value.parameter == "generative"


def test_the_toy_measure_is_in_the_schema_and_its_range_checked(toy_registered: None, tmp_path: Path) -> None:
    field = metrics_schema()["$defs"]["SliceMetrics"]["properties"]["agree_gap"]
    assert field["anyOf"][0] == {"type": "number", "minimum": -100.0, "maximum": 100.0}
    result = nlibias.audit(nlibias.expand("toy"), models=["fake:a"], cache=False, bootstrap=0, progress=False)
    assert metrics_issues(result.metrics, strict=True) == []  # agree_gap is a declared field
    broken = {"source": "toy", "models": {"a": {"overall": {"agree_gap": 150.0}}}}
    with pytest.raises(SourceError, match=r"models\.a\.overall\.agree_gap: 150\.0 is outside \[-100, 100\]"):
        check_metrics(broken, path="metrics.json")


def test_an_undeclared_measure_is_not_a_schema_field() -> None:
    # the fixture is not used: nothing registered the toy, so its measure is no field (this is
    # what makes the test above fail if registering stops declaring the measures)
    assert "agree_gap" not in metrics_schema()["$defs"]["SliceMetrics"]["properties"]


def test_a_measure_declared_otherwise_than_a_built_in_one_is_refused(toy_registered: None) -> None:
    other = replace(AGREE_GAP, name="M1")  # WinoQueer-NLI's M1 has a target of 50
    clash = replace(BENCHMARK, name="toy-clash", sources=("toy-clash",),
                    measures={"classifier": replace(BENCHMARK.measures["classifier"], infos=(other,))})  # fmt: skip
    with pytest.raises(ConfigError, match="declares measure 'M1' otherwise than it is declared already"):
        nlibias.register_benchmark(clash)
    assert nlibias.list_benchmarks() and "toy-clash" not in [b["name"] for b in nlibias.list_benchmarks()]


def test_a_measure_outside_its_declared_range_stops_the_audit_before_writing(
    toy_registered: None, tmp_path: Path
) -> None:
    # p_agree 3.0 on pro samples and 0.0 on anti: a gap of 300 points, outside [-100, 100]
    overjoyed = FixedJudge("overjoyed", 3.0, 0.0)
    with pytest.raises(
        ConfigError, match=r"models\.overjoyed\.overall\.agree_gap: 300\.0 is outside \[-100, 100\]"
    ):
        nlibias.audit(nlibias.expand("toy"), models=[overjoyed], cache=False, bootstrap=0, progress=False,
                      out_dir=tmp_path / "run")  # fmt: skip
    assert not (tmp_path / "run" / "metrics.json").exists()


def test_a_replaced_benchmark_may_declare_its_own_measures_anew(toy_registered: None) -> None:
    """A notebook rerun: the toy registered again with its measure's range changed replaces the
    declaration; the built-in ones stay fixed (M1 above)."""
    from nlibias.metrics.meta import ALL_MEASURES

    wider = replace(AGREE_GAP, range=(-200.0, 200.0))
    measures = {kind: replace(m, infos=(wider,)) for kind, m in BENCHMARK.measures.items()}
    nlibias.register_benchmark(replace(BENCHMARK, measures=measures), replace=True)
    assert ALL_MEASURES["agree_gap"].range == (-200.0, 200.0)
    other = replace(
        BENCHMARK, name="toy-2", sources=("toy-2",), measures={"classifier": BENCHMARK.measures["classifier"]}
    )
    with pytest.raises(ConfigError, match="declares measure 'agree_gap' otherwise"):
        nlibias.register_benchmark(other)  # another benchmark: the toy's declaration holds
