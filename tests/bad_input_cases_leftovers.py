"""Session 29's leftovers of issue #48: settings objects built by hand in Python (gate rules, an
extend configuration), resamples past any sane count on every route, a Parquet training set with
a column twice, the masks commands' unknown subtopic. Part of the corpus of ``bad_input_cases``."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import nlibias
from bad_input_cases_s26 import _gate, _rules
from bad_input_cases_s28c import _explain_args
from bad_input_cases_s28c_more import Add, pair
from bad_input_corpus import Base, Case, audit_args, cases_of, score_args

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


# -- resamples past any sane count (10**12 would allocate and run for days): every route --------------

HUGE = str(10**12)


def _bootstrap(args: list[str], value: str = HUGE) -> list[str]:
    """``args`` with ``--bootstrap value`` in place of the one they give (an option given twice is refused)."""
    at = args.index("--bootstrap") + 1
    return [*args[:at], value, *args[at + 1 :]]


def _resamples_cases(case: Add) -> None:
    cli = lambda name, args, named="--bootstrap": case(  # noqa: E731
        f"leftovers-resamples/cli-{name}", lambda d, b: (args(d, b), named)
    )
    cli("audit-bootstrap-a-trillion", lambda d, b: _bootstrap(audit_args(b.samples, d)))
    cli("score-bootstrap-a-million-and-one",
        lambda d, b: _bootstrap(score_args(b, b.predictions, d), "1000001"))  # fmt: skip
    cli("explain-bootstrap-a-trillion", lambda d, b: _bootstrap(_explain_args(d, b)))
    py = _py(case, "resamples")
    py("score-bootstrap-a-trillion", "bootstrap",
       lambda d, b: lambda: nlibias.score(b.samples, b.predictions, out_dir=d / "o", bootstrap=10**12))  # fmt: skip
    py("audit-bootstrap-a-trillion", "bootstrap",
       lambda d, b: lambda: nlibias.audit(b.samples, ["fake:m"], bootstrap=10**12, cache=False))  # fmt: skip

    def rules(d: Path, b: Base) -> tuple[list[str], str]:
        path = _rules(d, "confidence: 0.95\nbootstrap: 10000000\n")
        return _gate(*pair(d, b), "--rules", str(path)), f"{path}:2: field bootstrap"

    case("leftovers-resamples/yaml-gate-bootstrap-ten-million", rules)


# -- a Parquet file with a column twice (pyarrow allows it; a row would keep the last value) ----------


def _duplicated_parquet(d: Path, names: list[str], values: list[str]) -> Path:
    import pyarrow as pa
    import pyarrow.parquet as pq

    d.mkdir(parents=True, exist_ok=True)
    path = d / "train.parquet"
    pq.write_table(pa.Table.from_arrays([pa.array([v] * 6) for v in values], names), path)
    return path


def _parquet_cases(case: Add) -> None:
    names = ["premise", "hypothesis", "label", "label"]
    values = ["The nurse said he was late.", "She was late.", "entailment", "contradiction"]

    def augment(d: Path, b: Base) -> tuple[list[str], str]:
        train = _duplicated_parquet(d / "data", names, values)
        return [
            "augment",
            "gender-swap",
            "--train",
            str(train),
            "--out",
            str(d / "aug"),
        ], f"{train}: field label"

    case("leftovers-parquet/cli-augment-a-label-column-twice", augment)

    def augment_py(d: Path, b: Base) -> tuple[Callable[[], object], str]:
        twice = ["premise", "premise", "hypothesis", "label"]
        train = _duplicated_parquet(
            d / "data", twice, ["A man.", "The nurse said he was late.", *values[1:3]]
        )
        return lambda: nlibias.augment(train, d / "aug"), "column 'premise' appears twice"

    case("leftovers-parquet/python-augment-a-premise-column-twice", augment_py)

    def finetune(d: Path, b: Base) -> tuple[list[str], str]:
        from bad_input_cases_declared import _model_dir
        from bad_input_cases_s28c_more import CLASSIFIER

        train = _duplicated_parquet(d / "data", names, values)
        args = [
            "finetune",
            "--model",
            str(_model_dir(d, CLASSIFIER)),
            "--train",
            str(train),
            "--out",
            str(d / "ft"),
        ]
        return args, f"{train}: field label"

    case("leftovers-parquet/cli-finetune-a-label-column-twice", finetune)


# -- derived outputs damaged since explain wrote them: recomputed, and a Python call is told so ---------


def _explain_cases(case: Add) -> None:
    from bad_input_cases_explain import _generated_run

    def explained(d: Path, b: Base, damage: Callable[[Path], object]) -> Callable[[], object]:
        run, _ = _generated_run(d, b)
        nlibias.explain(run, ["fake:j"], progress=False, cache=False, bootstrap=0)
        damage(run / "explanations")
        return lambda: nlibias.explain(run, ["fake:j"], progress=False, cache=False, bootstrap=0)

    def cut(folder: Path) -> None:
        rows = folder / "explanations.jsonl"
        rows.write_bytes(rows.read_bytes()[:-7])

    def foreign(folder: Path) -> None:  # a readable summary that is not the one this stage wrote
        (folder / "explanations.json").write_text('{"threshold": 0.5}\n', encoding="utf-8")

    for name, damage, file in (
        ("rows-cut-short", cut, "explanations.jsonl"),
        ("summary-replaced", foreign, "explanations.json"),
    ):
        case(f"leftovers-explain/python-rerun-{name}",
             lambda d, b, damage=damage, file=file: (explained(d, b, damage), f"(recomputed: explanations/{file} changed"),
             "warn")  # fmt: skip


# -- the masks commands' unknown subtopic: named as the --subtopic flag ------------------------------


def _masks_cases(case: Add) -> None:
    for command in ("list", "derive"):
        case(f"leftovers-masks/cli-{command}-an-unknown-subtopic",
             lambda d, b, command=command: (["masks", command, "--source", str(b.bbnli_dir.parent), "--subtopic",
                                             "man_is_to_breadwiner"], "--subtopic 'man_is_to_breadwiner'"))  # fmt: skip


def leftovers_cases() -> list[Case]:
    groups = [_settings_cases, _resamples_cases, _parquet_cases, _explain_cases, _masks_cases]
    return cases_of(groups, KNOWN)
