"""A fresh set of bad inputs of issue #48's classes (session 28's acceptance check, the output side
of the pipeline), part of the corpus of ``bad_input_cases``: ``gate`` (its rules file, its options,
its CI files), ``report``, ``explain``, ``export model-index`` and ``export lm-eval``, ``validate``,
``extend``'s configuration and stages, ``augment``, ``finetune`` and ``debias``, through the
command line, YAML and Python. None repeats an earlier case of the corpus or an example of the
issue."""

from __future__ import annotations

import math
from collections.abc import Callable
from pathlib import Path
from typing import Any

import nlibias
from bad_input_cases_declared import _model_dir
from bad_input_cases_explain import _generated_run
from bad_input_cases_s26 import _extend_args, _gate, _rules
from bad_input_cases_s27 import _debias, _finetune, _training, _vrun
from bad_input_cases_s28b_io import (
    CLASSIFIER,
    Add,
    _comparable_cases,
    _explain,
    _more_twice_cases,
    _outputs_cases,
    _pair,
    _pipeline_outputs_cases,
    _report_outputs_cases,
    _twice_cases,
)
from bad_input_cases_s28b_more import (
    _damaged_cases,
    _damaged_training_cases,
    _nothing_cases,
    _roles_cases,
    _unknown_value_cases,
    _wrong_type_cases,
)
from bad_input_corpus import QUEUE_ROWS, Base, Case, cases_of

HID = QUEUE_ROWS[0][0]
KNOWN: dict[str, str] = {}


# -- numbers that make a decision impossible or meaningless ------------------------------------------


def _numbers_cases(case: Add) -> None:
    def rules(name: str, text: str, line: int | None = None, named: str = "") -> None:
        def build(d: Path, base: Base) -> tuple[list[str], str]:
            path = _rules(d, text)
            cand, ref = _pair(d, base)
            return _gate(cand, ref, "--rules", str(path)), named or f"{path}:{line}"

        case(f"s28b-numbers/yaml-gate-{name}", build)

    rules("confidence-nan", "confidence: .nan\n", 1)
    # a NaN is not a number, whatever bound pydantic would test first ("less than 1" once)
    rules(
        "confidence-nan-said-not-finite",
        "confidence: .nan\n",
        named="field confidence: Input should be a finite number",
    )
    rules("confidence-negative", "confidence: -0.95\n", 1)
    rules("confidence-quoted", 'confidence: "0.95"\n', 1)
    rules("bootstrap-inf", "bootstrap: .inf\n", 1)
    rules("seed-a-boolean", "seed: true\n", 1)
    rules("seed-inf", "seed: .inf\n", 1)
    rules("max-detectable-a-boolean", "max_detectable: true\n", 1)
    rules("measure-max-abs-inf", "measures:\n  bbnli_bias_score:\n    max_abs: .inf\n", 3)
    rules("measure-max-abs-a-boolean", "measures:\n  bbnli_bias_score:\n    max_abs: true\n", 3)
    rules("worse-a-yes", "worse: yes\n", 1)
    rules(
        "bootstrap-19-one-slice-p-never-below-0.05", "bootstrap: 19\nslices: [overall]\n", named="bootstrap"
    )
    rules("confidence-0.999-with-1000-resamples-two-slicings", "confidence: 0.999\n", named="bootstrap")

    def cli(name: str, value: str) -> None:
        case(
            f"s28b-numbers/cli-gate-margin-{name}",
            lambda d, b: (_gate(*_pair(d, b), "--margin", value), "--margin"),
        )

    cli("empty", "")
    cli("decimal-comma", "1,5")

    def py(name: str, named: str, **options: Any) -> None:
        def build(d: Path, base: Base) -> tuple[Callable[[], object], str]:
            cand, ref = _pair(d, base)
            return lambda: nlibias.gate(cand, ref, **options), named

        case(f"s28b-numbers/python-gate-{name}", build)

    py("margin-negative", "margin", margin=-1.0)
    py("margin-an-int-beyond-float", "margin", margin=10**400)

    def rules_object(d: Path, base: Base) -> tuple[Callable[[], object], str]:
        from nlibias.jobs.gate_rules import GateRules

        cand, ref = _pair(d, base)
        rules = GateRules(confidence=0.99, bootstrap=99, slices=["overall"])  # p >= 0.01 always
        return lambda: nlibias.gate(cand, ref, rules=rules), "bootstrap"

    case("s28b-numbers/python-gate-rules-99-resamples-at-99-percent", rules_object)


def _more_numbers_cases(case: Add) -> None:
    def explain_cli(name: str, flag: str, value: str) -> None:
        def build(d: Path, base: Base) -> tuple[list[str], str]:
            run, _ = _generated_run(d, base)
            return _explain(run, flag, value), flag

        case(f"s28b-numbers/cli-explain{flag}-{name}", build)

    explain_cli("negative", "--bootstrap", "-5")
    explain_cli("zero", "--max-tokens", "0")

    def explain_py(name: str, named: str, **options: Any) -> None:
        def build(d: Path, base: Base) -> tuple[Callable[[], object], str]:
            run, _ = _generated_run(d, base)
            options.setdefault("cache", False)
            return lambda: nlibias.explain(run, ["fake:j"], progress=False, **options), named

        case(f"s28b-numbers/python-explain-{name}", build)

    explain_py("bootstrap-negative", "bootstrap", bootstrap=-5)
    explain_py("seed-fractional", "seed", seed=1.5)
    explain_py("threshold-nan", "threshold", threshold=math.nan, bootstrap=0)
    explain_py("max-tokens-zero", "max_tokens", max_tokens=0, bootstrap=0)

    case(
        "s28b-numbers/cli-validate-resolve-min-annotators-zero",
        lambda d, b: (["validate", "resolve", str(_vrun(d, b)), "--min-annotators", "0"], "--min-annotators"),
    )
    case(
        "s28b-numbers/python-validation-resolve-min-annotators-zero",
        lambda d, b: (lambda: nlibias.validation_resolve(_vrun(d, b), min_annotators=0), "min_annotators"),
    )
    case(
        "s28b-numbers/cli-debias-min-effect-inf",
        lambda d, b: ([*_debias(d), "--min-effect", "inf"], "--min-effect"),
    )
    case(
        "s28b-numbers/cli-finetune-seed-negative",
        lambda d, b: (_finetune(d, "--seed", "-1"), "--seed"),
    )
    case(
        "s28b-numbers/cli-finetune-epochs-nan",
        lambda d, b: (_finetune(d, "--epochs", "nan"), "--epochs"),
    )
    case(
        "s28b-numbers/python-debias-audit-options-bootstrap-negative",
        lambda d, b: (
            lambda: nlibias.debias_models(
                [str(_model_dir(d, CLASSIFIER))],
                _training(d / "data"),
                d / "deb",
                audit_options={"bootstrap": -1},
                progress=False,
            ),
            "bootstrap",
        ),
    )

    def extend(name: str, text: str, line: int) -> None:
        case(
            f"s28b-numbers/yaml-extend-{name}",
            lambda d, b: (_extend_args(d, text), f"{d / 'config.yaml'}:{line}"),
        )

    extend("top-k-inf", "mlm:\n  top_k: .inf\n", 2)
    extend("seed-fractional", "seed: 1.5\n", 1)
    extend("filter-max-tokens-negative", "filter:\n  max_tokens: -1\n", 2)


GROUPS = (
    _numbers_cases,
    _more_numbers_cases,
    _outputs_cases,
    _report_outputs_cases,
    _pipeline_outputs_cases,
    _twice_cases,
    _more_twice_cases,
    _comparable_cases,
    _explain,
    _nothing_cases,
    _roles_cases,
    _damaged_cases,
    _damaged_training_cases,
    _wrong_type_cases,
    _unknown_value_cases,
)


def s28b_cases() -> list[Case]:
    """Every case of this round (this module and its two parts), a known defect marked from
    :data:`KNOWN`."""
    return cases_of(GROUPS, KNOWN)
