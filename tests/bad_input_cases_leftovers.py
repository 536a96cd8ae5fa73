"""Session 29's leftovers of issue #48: settings objects built by hand in Python (gate rules, an
extend configuration), resamples past any sane count on every route, a Parquet training set with
a column twice, the masks commands' unknown subtopic. Part of the corpus of ``bad_input_cases``."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import nlibias
from bad_input_cases_s28c_more import Add
from bad_input_corpus import Base, Case, cases_of

KNOWN: dict[str, str] = {}

PyBuild = Callable[[Path, Base], Callable[[], object]]


def _py(case: Add, group: str) -> Callable[[str, str, PyBuild], None]:
    def add(name: str, named: str, call: PyBuild) -> None:
        case(f"leftovers-{group}/python-{name}", lambda d, b: (call(d, b), named))

    return add


# -- settings objects built by hand: our error naming the field, not pydantic's -----------------------


def _settings_cases(case: Add) -> None:
    from nlibias.extension.config import ExtendConfig
    from nlibias.jobs.gate_rules import GateRules, MeasureRule

    py = _py(case, "settings")
    py(
        "gate-rules-confidence-nan",
        "confidence is nan",
        lambda d, b: lambda: GateRules(confidence=float("nan")),
    )
    py("gate-rules-a-measure-margin-inf", "measures.bbnli_bias_score.margin",
       lambda d, b: lambda: GateRules(measures={"bbnli_bias_score": {"margin": float("inf")}}))  # fmt: skip
    py("measure-rule-max-abs-negative", "max_abs is -2", lambda d, b: lambda: MeasureRule(max_abs=-2))
    py("extend-config-seed-negative", "seed is -1", lambda d, b: lambda: ExtendConfig(seed=-1))
    py("extend-config-section-unknown-key", "mlm.topk",
       lambda d, b: lambda: nlibias.extend(ExtendConfig(mlm={"topk": 5})))  # fmt: skip


def leftovers_cases() -> list[Case]:
    return cases_of([_settings_cases], KNOWN)
