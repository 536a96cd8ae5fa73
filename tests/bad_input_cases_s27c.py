"""A third fresh set of bad inputs of issue #48's classes (session 27's third acceptance check),
part of the corpus of ``bad_input_cases``. It leans on the routes changed today: the gate's rules
and options, ``report --compare``, ``export model-index`` and ``export lm-eval``, ``score
--answer-column`` with BBQ answer files, model references with a prefix, ``augment`` and
``validate import``. None repeats an earlier case."""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from pathlib import Path
from typing import Any

import nlibias
from bad_input_cases_declared import _model_dir
from bad_input_cases_routes import _bbq_rows
from bad_input_cases_s26 import JUDGEMENT_HEADER, _extend_args, _gate, _rules, _run_copy
from bad_input_cases_s27 import _audited_bbq, _bbq_answers, _debias, _judgements, _training, _vrun
from bad_input_corpus import QUEUE_ROWS, Base, Case, audit_args, cases_of

Build = Callable[[Path, Base], tuple[Any, str]]
Add = Callable[..., None]
CLASSIFIER = "RobertaForSequenceClassification"
KNOWN: dict[str, str] = {}


def _edit_metrics(run: Path, edit: Callable[[dict[str, Any]], None]) -> None:
    path = run / "metrics.json"
    data = json.loads(path.read_text(encoding="utf-8"))
    edit(data)
    path.write_text(json.dumps(data), encoding="utf-8")


def _nan_everywhere(data: Any) -> Any:
    """Every number of a metrics document made NaN."""
    if isinstance(data, dict):
        return {key: _nan_everywhere(value) for key, value in data.items()}
    if isinstance(data, list):
        return [_nan_everywhere(value) for value in data]
    if isinstance(data, (int, float)) and not isinstance(data, bool):
        return math.nan
    return data


def _gate_cases(case: Add) -> None:
    def rules(name: str, text: str, line: int) -> None:
        def build(d: Path, base: Base) -> tuple[list[str], str]:
            path = _rules(d, text)
            return _gate(base.run, _run_copy(d, base), "--rules", str(path)), f"{path}:{line}"

        case(f"s27c-gate/yaml-{name}", build)

    rules("confidence-as-a-percent", "confidence: 95\n", 1)
    rules("margin-a-percent-string", 'margin: "5%"\n', 1)
    rules("margin-given-twice", "margin: 1\nmargin: 2\n", 2)
    rules("measure-name-misspelt", "measures:\n  bbnli_bias_scor:\n    margin: 1\n", 2)
    rules("top-level-key-misspelt", "margn: 1\n", 1)
    rules("measure-margin-a-yes", "measures:\n  bbnli_bias_score:\n    margin: yes\n", 3)
    rules("measure-max-abs-negative", "measures:\n  bbnli_bias_score:\n    max_abs: -1\n", 3)

    def cli(name: str, extra: Callable[[Path, Base], list[str]], named: str) -> None:
        case(f"s27c-gate/cli-{name}", lambda d, b: (_gate(b.run, _run_copy(d, b), *extra(d, b)), named))

    cli("margin-nan", lambda d, b: ["--margin", "nan"], "--margin")
    cli("margin-inf", lambda d, b: ["--margin", "inf"], "--margin")
    case(
        "s27c-gate/cli-baseline-a-samples-folder",
        lambda d, b: (_gate(b.run, b.samples), str(b.samples)),
    )
    case(
        "s27c-gate/cli-baseline-another-benchmark",
        lambda d, b: (_gate(b.run, _audited_bbq(d)), "bench"),
    )
    case(
        "s27c-gate/cli-baseline-metrics-all-nan",
        lambda d, b: (_gate(b.run, _nan_baseline(d, b)), "metrics.json"),
    )
    case(
        "s27c-gate/python-margin-nan",
        lambda d, b: (lambda: nlibias.gate(b.run, _run_copy(d, b), margin=math.nan), "margin"),
    )
    case(
        "s27c-gate/python-pairs-unknown-model",
        lambda d, b: (lambda: nlibias.gate(b.run, _run_copy(d, b), pairs={"nope": "m"}), "nope"),
    )


def _nan_baseline(d: Path, base: Base) -> Path:
    run = _run_copy(d, base, "nan-run")
    path = run / "metrics.json"
    path.write_text(
        json.dumps(_nan_everywhere(json.loads(path.read_text(encoding="utf-8")))), encoding="utf-8"
    )
    return run


def _report_cases(case: Add) -> None:
    def compare(name: str, build: Callable[[Path, Base], list[str]], named: str) -> None:
        case(f"s27c-report/cli-compare-{name}", lambda d, b: (["report", "--compare", *build(d, b)], named))

    compare("with-debias", lambda d, b: [str(b.run), str(_run_copy(d, b)), "--debias", "--quiet"], "--debias")
    compare(
        "a-bbnli-and-a-bbq-run",
        lambda d, b: [str(b.run), str(_audited_bbq(d)), "--format", "md", "--quiet"],
        "bench",
    )
    compare(
        "a-run-with-all-nan-metrics",
        lambda d, b: [str(b.run), str(_nan_baseline(d, b)), "--format", "md", "--quiet"],
        "metrics.json",
    )
    compare(
        "out-the-second-run-s-metrics",
        lambda d, b: [
            str(b.run),
            str(_run_copy(d, b)),
            "--format",
            "md",
            "--out",
            str(d / "run" / "metrics.json"),
        ],
        "--out",
    )
    compare(
        "out-the-first-run-s-predictions",
        lambda d, b: [
            str(_run_copy(d, b)),
            str(b.run),
            "--format",
            "csv",
            "--out",
            str(d / "run" / "predictions.jsonl"),
        ],
        "--out",
    )
    case(
        "s27c-report/python-compare-a-run-and-its-nan-copy",
        lambda d, b: (
            lambda: nlibias.make_report([b.run, _nan_baseline(d, b)], fmt="md", compare=True),
            "metrics",
        ),
    )


def _model_index_cases(case: Add) -> None:
    def cli(name: str, build: Callable[[Path, Base], list[str]], named: str) -> None:
        case(f"s27c-model-index/cli-{name}", lambda d, b: (["export", "model-index", *build(d, b)], named))

    cli(
        "out-the-run-s-metrics",
        lambda d, b: [str(_run_copy(d, b)), "--out", str(d / "run" / "metrics.json")],
        "--out",
    )
    cli(
        "card-the-run-s-predictions",
        lambda d, b: [str(_run_copy(d, b)), "--card", str(d / "run" / "predictions.jsonl")],
        "--card",
    )
    cli("name-with-a-newline", lambda d, b: [str(b.run), "--name", "org/model\nlicense: mit"], "--name")
    cli("a-samples-folder", lambda d, b: [str(b.samples)], "metrics")
    cli("a-run-with-all-nan-metrics", lambda d, b: [str(_nan_baseline(d, b))], "metrics.json")
    cli("model-empty", lambda d, b: [str(b.run), "--model", ""], "--model")

    def card(name: str, text: bytes) -> None:
        def build(d: Path, base: Base) -> tuple[list[str], str]:
            path = d / "README.md"
            path.write_bytes(text)
            return ["export", "model-index", str(base.run), "--card", str(path)], str(path)

        case(f"s27c-model-index/cli-card-{name}", build)

    card("not-utf8", b"---\nlicense: mit\n---\n# Caf\xe9\n")
    card("front-matter-broken", b"---\nmodel-index: [\n---\n# Model\n")
    card("front-matter-a-list", b"---\n- a\n- b\n---\n# Model\n")
    card("front-matter-unclosed", b"---\nlicense: mit\n# Model\n")
    case(
        "s27c-model-index/python-name-blank",
        lambda d, b: (lambda: nlibias.model_index(b.run, name="  "), "name"),
    )


def _lm_eval_cases(case: Add) -> None:
    def cli(name: str, extra: list[str], named: str) -> None:
        def build(d: Path, base: Base) -> tuple[list[str], str]:
            return ["export", "lm-eval", "--samples", str(base.samples), "--out", str(d / "t"), *extra], named

        case(f"s27c-lm-eval/cli-{name}", build)

    cli("task-with-a-slash", ["--task", "a b/c"], "--task")
    cli("option-score-on-bbnli", ["--option-score", "acc_bytes"], "--option-score")
    cli("prompt-unknown", ["--prompt", "maybe"], "--prompt")
    cli("model-an-mlm-prefix", ["--model", "mlm:roberta-base"], "--model")
    cli("model-a-gguf-file", ["--model", "gguf:/nonexistent/x.gguf"], "x.gguf")
    case(
        "s27c-lm-eval/cli-samples-a-predictions-file",
        lambda d, b: (
            ["export", "lm-eval", "--samples", str(b.predictions), "--out", str(d / "t")],
            "predictions.jsonl:1",
        ),
    )


def _answers_cases(case: Add) -> None:
    def answers(
        name: str,
        rows: Callable[[list[dict[str, Any]]], list[dict[str, Any]]],
        named: str = "answers.jsonl",
        expect: str = "error",
    ) -> None:
        def build(d: Path, base: Base) -> tuple[list[str], str]:
            made = rows([{**row, "uqa": row["ans0"]} for row in _bbq_rows()])
            run, path = _bbq_answers(d, made)
            args = ["score", "--samples", str(run), "--predictions", str(path), "--answer-column", "uqa"]
            return [*args, "--out", str(d / "o"), "--bootstrap", "0"], named

        case(f"s27c-answers/cli-{name}", build, expect)

    answers("half-the-examples", lambda rows: rows[: len(rows) // 2], "have no prediction", expect="warn")
    answers("answers-empty", lambda rows: [{**row, "uqa": ""} for row in rows])
    answers("answer-no-option", lambda rows: [{**row, "uqa": "maybe"} for row in rows])
    answers("one-example-twice-two-answers", lambda rows: [*rows, {**rows[0], "uqa": rows[0]["ans1"]}])
    answers("answers-numbers", lambda rows: [{**row, "uqa": 1} for row in rows])
    answers(
        "another-category",
        lambda rows: [{**row, "uqa": row["ans0"]} for row in _bbq_rows(category="Religion")],
    )
    case(
        "s27c-answers/cli-answer-column-empty",
        lambda d, b: (
            [
                "score",
                "--samples",
                str(_bbq_answers(d)[0]),
                "--predictions",
                str(d / "answers.jsonl"),
                "--answer-column",
                "",
                "--out",
                str(d / "o"),
            ],
            "--answer-column",
        ),
    )
    case(
        "s27c-answers/python-answer-column-blank",
        lambda d, b: (
            lambda: nlibias.score(*_bbq_answers(d), answer_column=" ", bootstrap=0),
            "answer_column",
        ),
    )


def _models_cases(case: Add) -> None:
    def model(name: str, flag: str, reference: Callable[[Path], str]) -> None:
        def build(d: Path, base: Base) -> tuple[list[str], str]:
            args = audit_args(base.samples, d)
            args[args.index("--model") : args.index("--model") + 2] = [flag, reference(d)]
            return args, flag

        case(f"s27c-models/cli-audit{flag}-{name}", build)

    model("causal-prefix-a-classifier-folder", "--model", lambda d: f"causal:{_model_dir(d, CLASSIFIER)}")
    model("mlm-prefix-a-classifier-folder", "--model", lambda d: f"mlm:{_model_dir(d, CLASSIFIER)}")
    model("hf-prefix-a-causal-folder", "--model", lambda d: f"hf:{_model_dir(d, 'LlamaForCausalLM')}")
    model("revision-empty", "--model", lambda d: "roberta-large-mnli@")
    model("hf-prefix-empty", "--model", lambda d: "hf:")
    model("gguf-a-classifier-folder", "--generative", lambda d: f"gguf:{_model_dir(d, CLASSIFIER)}")
    case(
        "s27c-models/cli-finetune-model-a-causal-folder",
        lambda d, b: (
            [
                "finetune",
                "--model",
                str(_model_dir(d, "LlamaForCausalLM")),
                "--train",
                str(_training(d / "data")),
                "--out",
                str(d / "ft"),
            ],
            "--model",
        ),
    )


def _augment_cases(case: Add) -> None:
    def train(name: str, text: str) -> None:
        def build(d: Path, base: Base) -> tuple[list[str], str]:
            path = d / "train.jsonl"
            path.write_text(text, encoding="utf-8")
            return ["augment", "gender-swap", "--train", str(path), "--out", str(d / "aug")], str(path)

        case(f"s27c-augment/cli-train-{name}", build)

    train("empty", "")
    train("no-hypothesis", '{"premise": "He ran.", "label": "neutral"}\n')
    train("label-unknown", '{"premise": "He ran.", "hypothesis": "She ran.", "label": "maybe"}\n')
    case(
        "s27c-augment/cli-kind-unknown",
        lambda d, b: (
            ["augment", "race-swap", "--train", str(_training(d)), "--out", str(d / "aug")],
            "race-swap",
        ),
    )
    case(
        "s27c-augment/cli-out-the-train-file",
        lambda d, b: (
            ["augment", "gender-swap", "--train", str(_training(d)), "--out", str(d / "train.jsonl")],
            "--out",
        ),
    )


def _import_cases(case: Add) -> None:
    def csv_file(name: str, text: str, named: str, *extra: str) -> None:
        def build(d: Path, base: Base) -> tuple[list[str], str]:
            path = d / "judgements.csv"
            path.write_text(text, encoding="utf-8")
            where = named.replace("FILE", str(path))
            return ["validate", "import", str(_vrun(d, base)), str(path), *extra], where

        case(f"s27c-import/cli-{name}", build)

    hid = QUEUE_ROWS[0][0]
    csv_file("judgement-unknown", JUDGEMENT_HEADER + f"{hid},ana,maybe,pro\n", "FILE:2")
    csv_file("stereotype-unknown", JUDGEMENT_HEADER + f"{hid},ana,valid,both\n", "FILE:2")
    csv_file("annotator-blank-no-option", JUDGEMENT_HEADER + f"{hid}, ,valid,pro\n", "FILE:2")
    csv_file(
        "format-label-studio-on-a-csv",
        JUDGEMENT_HEADER + f"{hid},ana,valid,pro\n",
        "FILE",
        "--format",
        "label-studio",
    )
    csv_file(
        "format-argilla-on-a-csv", JUDGEMENT_HEADER + f"{hid},ana,valid,pro\n", "FILE", "--format", "argilla"
    )
    csv_file("header-only", JUDGEMENT_HEADER, "FILE")

    def json_file(name: str, data: Any, fmt: str) -> None:
        def build(d: Path, base: Base) -> tuple[list[str], str]:
            path = d / "export.json"
            path.write_text(json.dumps(data), encoding="utf-8")
            return ["validate", "import", str(_vrun(d, base)), str(path), "--format", fmt], str(path)

        case(f"s27c-import/cli-{name}", build)

    json_file("label-studio-empty-list", [], "label-studio")
    json_file(
        "label-studio-task-without-annotations", [{"id": 1, "data": {"hypothesis_id": hid}}], "label-studio"
    )
    json_file("argilla-an-object", {"records": "none"}, "argilla")


def _more_cases(case: Add) -> None:
    """Extend's filter and mlm sections with prefixed references, debias's mappings and the Python
    route of export and import."""

    def extend(name: str, text: Callable[[Path], str], line: int) -> None:
        def build(d: Path, base: Base) -> tuple[list[str], str]:
            return _extend_args(d, text(d), mlm=False), f"{d / 'config.yaml'}:{line}"

        case(f"s27c-models/yaml-extend-{name}", build)

    extend("mlm-model-a-gguf-prefix", lambda d: f"mlm:\n  model: gguf:{d / 'x.gguf'}\n", 2)
    extend("filter-model-an-mlm-prefix", lambda d: "filter:\n  models: [{model: 'mlm:roberta-base'}]\n", 2)
    extend("mlm-model-revision-empty", lambda d: "mlm:\n  model: roberta-base@\n", 2)
    case(
        "s27c-debias/python-finetune-options-unknown-key",
        lambda d, b: (
            lambda: nlibias.debias_models(
                [str(_model_dir(d, CLASSIFIER))],
                _training(d / "data"),
                d / "deb",
                finetune_options={"epochz": 1},
                progress=False,
            ),
            "epochz",
        ),
    )
    case(
        "s27c-debias/python-augment-options-out-dir",
        lambda d, b: (
            lambda: nlibias.debias_models(
                [str(_model_dir(d, CLASSIFIER))],
                _training(d / "data"),
                d / "deb",
                augment_options={"out_dir": str(d / "elsewhere")},
                progress=False,
            ),
            "out_dir",
        ),
    )
    case(
        "s27c-debias/cli-seeds-zero",
        lambda d, b: ([*_debias(d), "--seeds", "0"], "--seeds"),
    )
    case(
        "s27c-lm-eval/python-option-score-unknown",
        lambda d, b: (
            lambda: nlibias.export_lm_eval(b.samples, d / "t", option_score="bytes"),
            "option_score",
        ),
    )
    case(
        "s27c-import/python-format-unknown",
        lambda d, b: (
            lambda: nlibias.validation_import(_vrun(d, b), _judgements(d, "ana,valid,pro"), fmt="excel"),
            "fmt",
        ),
    )
    case(
        "s27c-import/python-annotator-blank",
        lambda d, b: (
            lambda: nlibias.validation_import(_vrun(d, b), _judgements(d, ",valid,pro"), annotator=" "),
            "annotator",
        ),
    )
    case(
        "s27c-augment/python-select-unknown",
        lambda d, b: (
            lambda: nlibias.augment(_training(d / "data"), d / "aug", select="everything"),
            "select",
        ),
    )
    case(
        "s27c-model-index/python-model-a-label",
        lambda d, b: (lambda: nlibias.model_index(b.run, model="entailment"), "entailment"),
    )


GROUPS = (
    _gate_cases,
    _report_cases,
    _model_index_cases,
    _lm_eval_cases,
    _answers_cases,
    _models_cases,
    _augment_cases,
    _import_cases,
    _more_cases,
)


def s27c_cases() -> list[Case]:
    """Every case of this module, a known defect marked from :data:`KNOWN`."""
    return cases_of(GROUPS, KNOWN)
