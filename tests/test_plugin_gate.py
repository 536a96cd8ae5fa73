"""A plug-in benchmark, defined here and installed as an entry point (nothing registered anywhere
else), is audited, scored, reported and gated, through the Python API and the command line: the
gate and the paired comparison read its resampling units from its ``Measures.units``."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import nlibias
from nlibias.errors import DataError
from nlibias.metrics.meta import ALL_MEASURES
from nlibias.report import compare as report_compare
from test_plugins_isolated import Entry, Expanded, cli, plugins, sample  # noqa: F401 (plugins: the fixture)

PAIRS = 24  # 12 per domain: every slice holds the 10 units a test needs
LEAN = nlibias.MeasureInfo(
    "lean_gap", "Mean P(entailment) of pro samples minus their anti twins', in points.", "zero",
    (-100.0, 100.0), "tests/test_plugin_gate.py", headline=True, neutral=0.0, signed=True,
)  # fmt: skip


def expand_lean(source: object = None) -> Expanded:
    pairs = [
        replace(sample("lean", i, role), domain=f"d{i % 2}") for i in range(PAIRS) for role in ("pro", "anti")
    ]
    return Expanded(pairs)


def _pair_gaps(columns: nlibias.SampleColumns, outputs: nlibias.ModelOutputs) -> np.ndarray:
    """Each pair's P(entailment) of its pro sample minus its anti sample's (samples in pair order)."""
    entail = outputs.probs[:, 0]
    return entail[columns.stereotype == 0] - entail[columns.stereotype == 1]


def score_lean(columns: nlibias.SampleColumns, outputs: nlibias.ModelOutputs, **_: Any) -> dict[str, Any]:
    return {"overall": {"n": len(columns), "lean_gap": 100.0 * float(_pair_gaps(columns, outputs).mean())}}


def lean_units(columns: nlibias.SampleColumns, outputs: nlibias.ModelOutputs, model: str) -> nlibias.RunUnits:
    """One unit per pair: its gap and a count of 1 (a unit read; an unread one is a row of zeros)."""
    gaps = _pair_gaps(columns, outputs)
    rows = np.column_stack([gaps, np.ones(len(gaps))])
    domains = columns.domain.take(np.flatnonzero(columns.stereotype == 0)).tolist()
    return nlibias.RunUnits(
        (rows,), lambda totals: {"lean_gap": 100.0 * totals[:, 0] / totals[:, 1]}, np.zeros(len(rows), int),
        {"domain": domains},
    )  # fmt: skip


def lean_tables(models: Mapping[str, Any], **_: Any) -> str:
    return "\n".join(f"{m}: lean {v['overall']['lean_gap']:.2f}" for m, v in models.items())


LEAN_BENCHMARK = nlibias.Benchmark(
    name="lean", description="a plug-in defined in a test", sources=("lean",), expand=expand_lean,
    measures={"classifier": nlibias.Measures(score=score_lean, tables=lean_tables, infos=(LEAN,), units=lean_units)},
)  # fmt: skip


class Leaning:
    """A classifier whose P(entailment) is ``pro`` on pro samples and ``anti`` on the others, plus a
    small per-pair wobble (so the resamples vary)."""

    kind = "classifier"

    def __init__(self, pro: float, anti: float) -> None:
        self.name, self.pro, self.anti = "m", pro, anti

    def describe(self) -> Mapping[str, Any]:
        return {"model": f"leaning {self.pro}/{self.anti}"}

    def predict(self, samples: nlibias.BenchmarkSamples, cache: Any, *, progress: bool = True) -> Any:
        rows = []
        for i, (sample_id, code) in enumerate(
            zip(samples.columns.ids, samples.columns.stereotype.tolist(), strict=True)
        ):
            entail = (self.pro if code == 0 else self.anti) + 0.01 * (i // 2 % 5)
            probs = (entail, (1.0 - entail) / 2, (1.0 - entail) / 2)
            rows.append(nlibias.Prediction(sample_id, self.name, "entailment", probs=probs))
        return nlibias.PredictorRun.of_predictions(rows, self.kind, {"computed": len(rows)})


@pytest.fixture
def lean(plugins: Callable[..., None]) -> Iterator[None]:  # noqa: F811 (the imported fixture)
    declared = dict(ALL_MEASURES)
    plugins(Entry("lean", LEAN_BENCHMARK, "nlibias-lean"))
    yield
    ALL_MEASURES.clear()
    ALL_MEASURES.update(declared)


def test_a_plug_in_is_audited_scored_reported_and_gated(
    lean: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    samples = nlibias.expand("lean", out_dir=tmp_path / "samples")
    runs = {}
    for name, pro, anti in (("base", 0.5, 0.5), ("same", 0.5, 0.5), ("cand", 0.8, 0.4)):
        nlibias.audit(samples, models=[Leaning(pro, anti)], cache=False, bootstrap=0, progress=False,
                      out_dir=tmp_path / name)  # fmt: skip
        runs[name] = tmp_path / name
    # base: every pair's gap 0 (the wobble is on both twins); cand: (0.8 - 0.4) x 100 = 40 points
    scored = nlibias.score(
        samples, runs["cand"] / "predictions.jsonl", bootstrap=0, out_dir=tmp_path / "scored"
    )
    assert scored.metrics["models"]["m"]["overall"]["lean_gap"] == pytest.approx(40.0)
    failed = nlibias.gate(runs["cand"], runs["base"])
    assert not failed.passed and {c.measure for c in failed.checks} == {"lean_gap"}
    assert {c.comparison.slice_name for c in failed.checks} == {"overall", "domain=d0", "domain=d1"}
    overall = next(c.comparison for c in failed.checks if c.comparison.slicing == "overall")
    assert (overall.baseline, overall.candidate, overall.delta) == pytest.approx((0.0, 40.0, 40.0))
    assert nlibias.gate(runs["same"], runs["base"]).passed  # the same answers: no change
    text = nlibias.make_report([runs["base"], runs["cand"]], fmt="md", compare=True).text
    assert "Δ +40.00 [40.00, 40.00]" in text, text  # paired through the plug-in's units
    # a paired test whose smallest p, 1/11, cannot fall below .05 / 3 slices decides nothing: the
    # columns are compared by their intervals' overlap instead (the same refusal as the gate's)
    with monkeypatch.context() as patched:
        patched.setattr(report_compare, "PAIRED_RESAMPLES", 10)
        undecided = nlibias.make_report([runs["base"], runs["cand"]], fmt="md", compare=True).text
    assert "Δ +40.00" not in undecided and "Interval overlap (cand" in undecided, undecided

    code, output = cli(["gate", str(runs["cand"]), "--baseline", str(runs["base"])])
    assert code == 1 and "lean_gap" in output, output
    code, output = cli(["report", str(runs["base"]), str(runs["cand"]), "--compare", "--format", "md"])
    assert code == 0 and "Δ +40.00" in output, output
    for name, model in (("cli-a", "fake:a"), ("cli-b", "fake:b")):
        code, output = cli(["audit", "--samples", str(samples.path), "--model", model, "--out",
                            str(tmp_path / name), "--bootstrap", "0", "--no-cache"])  # fmt: skip
        assert code == 0, output
    code, output = cli(["score", "--samples", str(samples.path), "--predictions",
                        str(tmp_path / "cli-b" / "predictions.jsonl"), "--out", str(tmp_path / "cli-scored"),
                        "--bootstrap", "0"])  # fmt: skip
    assert code == 0, output
    audited, rescored = (
        json.loads((tmp_path / d / "metrics.json").read_text()) for d in ("cli-b", "cli-scored")
    )
    assert rescored["models"]["b"]["overall"]["lean_gap"] == pytest.approx(
        audited["models"]["b"]["overall"]["lean_gap"]
    )
    code, output = cli(["gate", str(tmp_path / "cli-b"), "--baseline", str(tmp_path / "cli-a")])
    assert code in (0, 1) and "lean_gap" in output and "internal error" not in output, output


def test_measures_that_cannot_resample_a_headline_measure_are_refused_naming_the_model() -> None:
    columns = nlibias.SampleColumns.from_samples(expand_lean().samples)
    outputs = nlibias.ModelOutputs("classifier", np.full((len(columns), 3), 1 / 3))
    without = nlibias.Measures(score=score_lean, tables=lean_tables, infos=(LEAN,))
    with pytest.raises(DataError, match=r"cannot resample its measures of model 'm'.*Measures\.units"):
        without.resampling_units(columns, outputs, model="m", measures=["lean_gap"])
    with pytest.raises(DataError, match="cannot resample other of model 'm'"):
        LEAN_BENCHMARK.measures["classifier"].resampling_units(
            columns, outputs, model="m", measures=["lean_gap", "other"]
        )
    units = LEAN_BENCHMARK.measures["classifier"].resampling_units(
        columns, outputs, model="m", measures=["lean_gap"]
    )
    assert len(units) == PAIRS and units.point()["lean_gap"].tolist() == [0.0]  # every pair: 1/3 - 1/3
