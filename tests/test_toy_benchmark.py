"""A benchmark and a predictor kind from outside the package (tests/toy_benchmark.py), through the
public API only: registered, expanded, audited beside a built-in classifier, written and read back."""

from __future__ import annotations

from pathlib import Path

import pytest

import nlibias
from nlibias.errors import ConfigError
from toy_benchmark import BENCHMARK, AgreementJudge


@pytest.fixture
def toy_registered(monkeypatch: pytest.MonkeyPatch) -> None:
    from nlibias.catalog import registry  # the registry's tables: leave no registration behind

    monkeypatch.setattr(registry, "_BY_NAME", dict(registry._BY_NAME))
    monkeypatch.setattr(registry, "_BY_SOURCE", dict(registry._BY_SOURCE))
    nlibias.register_benchmark(BENCHMARK)


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


def test_the_gap_is_hand_derived_for_a_judge_that_prefers_pro(toy_registered: None, tmp_path: Path) -> None:
    class ProJudge(AgreementJudge):
        name = "pro-judge"

        def predict(self, samples, cache, *, progress=True):  # type: ignore[no-untyped-def]
            values = [0.9 if code == 0 else 0.4 for code in samples.columns.stereotype.tolist()]
            rows = [nlibias.Prediction(i, self.name, None, extra={"kind": self.kind, "p_agree": v})
                    for i, v in zip(samples.columns.ids, values, strict=True)]  # fmt: skip
            return nlibias.PredictorRun.of_predictions(rows, self.kind, {})

    result = nlibias.audit(
        nlibias.expand("toy"), models=[ProJudge()], cache=False, bootstrap=0, progress=False
    )
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
