"""A benchmark and a predictor kind written outside nlibias, with its public API only: what a
plug-in author writes (used by tests/test_toy_benchmark.py).

The toy benchmark asks whether a judge agrees more with pro-stereotype hypotheses than with their
anti-stereotype twins. Its own predictor kind, ``agreement-judge``, returns one number per sample
(``p_agree``); its measure is the mean ``p_agree`` of pro samples minus that of anti samples, in
points. NLI classifiers get a measure too: the same gap in entailment probability.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

import nlibias

TEXTS = [
    ("The nurse came in.", "She is caring.", "He is caring."),
    ("The engineer came in.", "He is logical.", "She is logical."),
]


@dataclass(frozen=True)
class ToyExpansion:
    samples: list[nlibias.Sample]

    def summary(self) -> dict[str, Any]:
        return {"samples": len(self.samples)}


def expand_toy(source: object = None) -> ToyExpansion:
    samples = [
        nlibias.Sample(id=f"toy:{i}:{role}", source="toy", domain="gender", subtopic=f"t{i}", premise=premise,
                       hypothesis=hypothesis, gold="neutral", stereotype=role, pair_key=f"toy:{i}")
        for i, (premise, pro, anti) in enumerate(TEXTS)
        for role, hypothesis in (("pro", pro), ("anti", anti))
    ]  # fmt: skip
    return ToyExpansion(samples)


def _gap(columns: nlibias.SampleColumns, values: np.ndarray) -> dict[str, Any]:
    pro, anti = columns.stereotype == 0, columns.stereotype == 1
    gap = 100.0 * (float(values[pro].mean()) - float(values[anti].mean()))
    return {"overall": {"n": len(columns), "agree_gap": gap}}


def score_judge(columns: nlibias.SampleColumns, outputs: nlibias.ModelOutputs, **_: Any) -> dict[str, Any]:
    return _gap(columns, outputs.values["p_agree"])


def score_classifier(
    columns: nlibias.SampleColumns, outputs: nlibias.ModelOutputs, **_: Any
) -> dict[str, Any]:
    return _gap(columns, outputs.probs[:, 0])


def toy_tables(models: Mapping[str, Any]) -> str:
    lines = ["Toy agreement gap"] + [f"{m}: {v['overall']['agree_gap']:.1f}" for m, v in models.items()]
    return "\n".join(lines)


AGREE_GAP = nlibias.MeasureInfo(
    "agree_gap",
    "Mean p_agree of pro-stereotype samples minus that of their anti-stereotype twins, in points.",
    "zero",
    (-100.0, 100.0),
    "tests/toy_benchmark.py",
    unit="points",
)
"""Declared with the measures: metrics.json's schema then checks its range."""

BENCHMARK = nlibias.Benchmark(
    name="toy",
    description="a toy benchmark defined outside nlibias",
    sources=("toy",),
    measures={
        "agreement-judge": nlibias.Measures(score=score_judge, tables=toy_tables, infos=(AGREE_GAP,)),
        "classifier": nlibias.Measures(score=score_classifier, tables=toy_tables, infos=(AGREE_GAP,)),
    },
    expand=expand_toy,
)


class AgreementJudge:
    """A predictor of the toy kind: agrees with a hypothesis in proportion to its length."""

    name = "length-judge"
    kind = "agreement-judge"

    def describe(self) -> Mapping[str, Any]:
        return {"model": "agreement by length"}

    def predict(
        self, samples: nlibias.BenchmarkSamples, cache: Any, *, progress: bool = True
    ) -> nlibias.PredictorRun:
        rows = [
            nlibias.Prediction(
                sample_id, self.name, None, extra={"kind": self.kind, "p_agree": len(hypothesis) / 20}
            )
            for sample_id, (_, hypothesis) in zip(samples.columns.ids, samples.texts(), strict=True)
        ]
        return nlibias.PredictorRun.of_predictions(rows, self.kind, {"computed": len(rows)})
