"""A fresh set of bad inputs of issue #48's classes (session 27's acceptance check), part of the
corpus of ``bad_input_cases``. It leans on the routes the older cases touch least: debias, augment
and finetune, validate, BBQ (``expand bbq``, ``score --answer-column``), explain, ``export
model-index``, ``report --compare`` and extend's stages, and on inputs that would give a wrong
number or decision if accepted. None repeats an example of the issue or an earlier case."""

from __future__ import annotations

import json
import math
import os
import shutil
from collections.abc import Callable
from dataclasses import replace
from decimal import Decimal
from pathlib import Path
from typing import Any

import nlibias
from bad_input_cases_declared import _model_dir
from bad_input_cases_explain import _generated_run
from bad_input_cases_routes import (
    _TABLES,
    _bbq_rows,
    _bbq_run,
    _install,
    _lean,
    _plugin_registry,
    _write_jsonl,
)
from bad_input_cases_s26 import JUDGEMENT_HEADER, _extend_args, _gate, _rules, _run_copy
from bad_input_cases_validate_explanations import explained_run
from bad_input_corpus import QUEUE_ROWS, Base, Case, audit_args, cases_of, invoke, score_args

Build = Callable[[Path, Base], tuple[Any, str]]
Add = Callable[..., None]
CLASSIFIER = "RobertaForSequenceClassification"


def _training(d: Path, rows: int = 6) -> Path:
    """A small training set with both pronouns and occupations (something to swap)."""
    d.mkdir(parents=True, exist_ok=True)
    path = d / "train.jsonl"
    labels = ("entailment", "neutral", "contradiction")
    lines = [
        {"premise": f"The nurse said he was late {i}.", "hypothesis": "She was late.", "label": labels[i % 3]}
        for i in range(rows)
    ]
    path.write_text("".join(json.dumps(row) + "\n" for row in lines), encoding="utf-8")
    return path


def _debias(d: Path, *extra: str, model: str | None = None) -> list[str]:
    folder = model or str(_model_dir(d, CLASSIFIER))
    train = _training(d / "data")
    return ["debias", "--model", folder, "--train", str(train), "--out", str(d / "deb"), *extra]


def _finetune(d: Path, *extra: str, model: str | None = None) -> list[str]:
    folder = model or str(_model_dir(d, CLASSIFIER))
    train = _training(d / "data")
    return ["finetune", "--model", folder, "--train", str(train), "--out", str(d / "ft"), *extra]


def _augment(d: Path, *extra: str) -> list[str]:
    return ["augment", "gender-swap", "--train", str(_training(d / "data")), "--out", str(d / "aug"), *extra]


def _vrun(d: Path, base: Base) -> Path:
    run = d / "vrun"
    shutil.copytree(base.validation_run, run)
    return run


def _judgements(d: Path, *judged: str) -> Path:
    """A judgements file of the first queued hypothesis: one row per ``annotator,judgement,stereotype``."""
    path = d / "judgements.csv"
    path.write_text(
        JUDGEMENT_HEADER + "".join(f"{QUEUE_ROWS[0][0]},{row}\n" for row in judged), encoding="utf-8"
    )
    return path


def _bbq_answers(d: Path, rows: list[dict[str, Any]] | None = None) -> tuple[Path, Path]:
    run = _bbq_run(d)
    made = rows if rows is not None else [{**row, "uqa": row["ans0"]} for row in _bbq_rows()]
    return run, _write_jsonl(d / "answers.jsonl", made)


def _bbq_score(d: Path, *extra: str) -> list[str]:
    run, path = _bbq_answers(d)
    args = ["score", "--samples", str(run), "--predictions", str(path), "--answer-column", "uqa"]
    return [*args, "--out", str(d / "o"), *extra]


def _bbq_src(d: Path, rows: list[dict[str, Any]] | None = None) -> Path:
    _write_jsonl(d / "src" / "ages.jsonl", rows if rows is not None else _bbq_rows())
    return d / "src"


def _expand_bbq(d: Path, *extra: str) -> list[str]:
    return ["expand", "bbq", "--source", str(_bbq_src(d)), "--out", str(d / "out"), *extra]


def _audited_bbq(d: Path) -> Path:
    run = _bbq_run(d)
    args = audit_args(run, d / "bbq-audit")
    args[args.index("--model") : args.index("--model") + 2] = ["--generative", "fake:g"]
    code, text, _ = invoke(args)
    assert code == 0, text
    return d / "bbq-audit" / "o"


def _edit_json(path: Path, edit: Callable[[Any], Any]) -> None:
    path.write_text(json.dumps(edit(json.loads(path.read_text(encoding="utf-8")))), encoding="utf-8")


# -- numbers that make a decision impossible or meaningless ------------------------------------------


def _numbers_cases(case: Add) -> None:
    def gate_cli(name: str, flag: str, value: str) -> None:
        case(
            f"s27-numbers/cli-gate-{name}",
            lambda d, base: (_gate(base.run, _run_copy(d, base), flag, value), flag),
        )

    gate_cli("margin-Infinity-spelt-out", "--margin", "Infinity")
    gate_cli("margin-minus-inf", "--margin", "-inf")
    gate_cli("margin-hex-float", "--margin", "0x1p1023")

    def rules(name: str, text: str, line: int, named: str = "", known: str = "") -> None:
        def build(d: Path, base: Base) -> tuple[list[str], str]:
            path = _rules(d, text)
            return _gate(base.run, _run_copy(d, base), "--rules", str(path)), named or f"{path}:{line}"

        case(f"s27-numbers/yaml-gate-{name}", build, known=known)

    rules("margin-quoted-inf", 'margin: "inf"\n', 1)
    rules("confidence-a-boolean", "confidence: true\n", 1)
    rules("seed-fractional", "seed: 1.5\n", 1)
    rules("measure-margin-quoted", 'measures:\n  bbnli_bias_score:\n    margin: "2"\n', 3)
    rules("measure-max-abs-negative", "measures:\n  bbnli_bias_score:\n    max_abs: -1\n", 3)
    rules("bootstrap-negative", "bootstrap: -100\n", 1)
    rules("confidence-too-high-for-200-resamples", "confidence: 0.9999\nbootstrap: 200\n", 0, "bootstrap")
    rules("max-detectable-nan", "max_detectable: .nan\n", 1)
    rules("confidence-a-percentage", "confidence: 95\n", 1)

    def py_gate(name: str, **options: Any) -> None:
        def build(d: Path, base: Base) -> tuple[Callable[[], object], str]:
            baseline = _run_copy(d, base)
            return lambda: nlibias.gate(base.run, baseline, **options), next(iter(options))

        case(f"s27-numbers/python-gate-{name}", build)

    py_gate("margin-decimal-nan", margin=Decimal("NaN"))
    py_gate("margin-minus-inf", margin=-math.inf)
    py_gate("margin-a-list", margin=[1.0])

    case(
        "s27-numbers/cli-score-bootstrap-negative",
        lambda d, base: ([*score_args(base, base.predictions, d)[:-2], "--bootstrap", "-5"], "--bootstrap"),
    )
    case(
        "s27-numbers/cli-audit-seed-negative",
        lambda d, base: (
            [*audit_args(base.samples, d)[:-4], "--bootstrap", "100", "--seed", "-1", "--quiet"],
            "--seed",
        ),
    )
    case(
        "s27-numbers/python-audit-limit-negative",
        lambda d, base: (
            lambda: nlibias.audit(
                base.samples, ["fake:m"], cache=False, progress=False, bootstrap=0, limit=-3
            ),
            "limit",
        ),
    )

    def explain_cli(name: str, flag: str, value: str) -> None:
        def build(d: Path, base: Base) -> tuple[list[str], str]:
            run, _ = _generated_run(d, base)
            return ["explain", str(run), "--judge", "fake:j", "--no-cache", flag, value], flag

        case(f"s27-numbers/cli-explain-{name}", build)

    explain_cli("bootstrap-one", "--bootstrap", "1")
    explain_cli("threshold-negative", "--threshold", "-0.2")

    def py_explain_threshold(d: Path, base: Base) -> tuple[Callable[[], object], str]:
        run, _ = _generated_run(d, base)
        return lambda: nlibias.explain(run, "fake:j", cache=False, progress=False, threshold=2), "threshold"

    case("s27-numbers/python-explain-threshold-two", py_explain_threshold)

    for flag, value in (
        ("--epochs", "0"),
        ("--epochs", "inf"),
        ("--batch-size", "0"),
        ("--learning-rate", "-1e-5"),
        ("--learning-rate", "nan"),
        ("--warmup-ratio", "1.5"),
        ("--warmup-steps", "-1"),
        ("--save-steps", "0"),
        ("--max-length", "0"),
        ("--seeds", "0"),
        ("--min-effect", "-1"),
        ("--bootstrap", "1"),
    ):
        case(
            f"s27-numbers/cli-debias{flag}-{value}",
            lambda d, base, flag=flag, value=value: (_debias(d, flag, value), flag),
        )
    for flag, value in (("--epochs", "-1"), ("--learning-rate", "inf"), ("--batch-size", "-4")):
        case(
            f"s27-numbers/cli-finetune{flag}-{value}",
            lambda d, base, flag=flag, value=value: (_finetune(d, flag, value), flag),
        )
    for option, value in (("batch_size", True), ("learning_rate", -0.1), ("max_length", 0), ("seed", "1")):
        case(
            f"s27-numbers/python-finetune-{option}-{value}",
            lambda d, base, option=option, value=value: (
                lambda: nlibias.finetune(
                    str(_model_dir(d, CLASSIFIER)), _training(d), d / "ft", **{option: value}
                ),
                option,
            ),
        )
    for option, value in (("seeds", 0), ("bootstrap", -1), ("min_effect", math.nan), ("seed", True)):
        case(
            f"s27-numbers/python-debias-{option}-{value}",
            lambda d, base, option=option, value=value: (
                lambda: nlibias.debias_models(
                    [str(_model_dir(d, CLASSIFIER))], _training(d), d / "deb", **{option: value}
                ),
                option,
            ),
        )
    case(
        "s27-numbers/cli-validate-status-min-annotators-zero",
        lambda d, base: (
            ["validate", "status", str(_vrun(d, base)), "--min-annotators", "0"],
            "--min-annotators",
        ),
    )
    case(
        "s27-numbers/cli-validate-prescreen-threshold-inf",
        lambda d, base: (
            [
                "validate",
                "prescreen",
                str(_vrun(d, base)),
                "--judge",
                "fake:j",
                "--threshold",
                "inf",
                "--no-progress",
            ],
            "--threshold",
        ),
    )
    case(
        "s27-numbers/python-validation-status-min-annotators-float",
        lambda d, base: (
            lambda: nlibias.validation_status(_vrun(d, base), min_annotators=1.5),
            "min_annotators",
        ),
    )
    case(
        "s27-numbers/python-report-min-effect-inf",
        lambda d, base: (
            lambda: nlibias.make_report(base.run, fmt="md", debias=True, min_effect=math.inf),
            "min_effect",
        ),
    )
    for name, text, line in (
        ("top-k-fractional", "mlm:\n  top_k: 2.5\n", 2),
        ("top-k-a-boolean", "mlm:\n  top_k: true\n", 2),
        ("max-batch-size-zero", "mlm:\n  max_batch_size: 0\n", 2),
        ("threads-negative", "filter:\n  threads: -2\n", 2),
    ):
        case(
            f"s27-numbers/yaml-extend-{name}",
            lambda d, base, text=text, line=line: (_extend_args(d, text), f"{d / 'config.yaml'}:{line}"),
        )
    case(
        "s27-numbers/cli-finetune-max-steps-zero",
        lambda d, base: (_finetune(d, "--max-steps", "0"), "--max-steps"),
    )
    case(
        "s27-numbers/python-finetune-max-steps-zero",
        lambda d, base: (
            lambda: nlibias.finetune(str(_model_dir(d, CLASSIFIER)), _training(d), d / "ft", max_steps=0),
            "max_steps",
        ),
    )

    def py_explain_threshold_zero(d: Path, base: Base) -> tuple[Callable[[], object], str]:
        run, _ = _generated_run(d, base)
        return lambda: nlibias.explain(run, "fake:j", cache=False, progress=False, threshold=0.0), "threshold"

    case("s27-numbers/python-explain-threshold-zero-flags-nothing", py_explain_threshold_zero)
    explain_cli("threshold-zero-flags-nothing", "--threshold", "0")
    rules("max-detectable-zero", "max_detectable: 0\n", 1)
    for name, text in (
        ("policy-negative-count", "filter:\n  policy: -1\n"),
        ("policy-more-than-the-models", "filter:\n  models: [fake:a, fake:b]\n  policy: 3\n"),
    ):
        case(
            f"s27-numbers/yaml-extend-{name}",
            lambda d, base, text=text: (
                _extend_args(d, text),
                f"{d / 'config.yaml'}:1: field filter: policy",
            ),
        )
    case(
        "s27-numbers/cli-score-bbq-bootstrap-two",
        lambda d, base: (_bbq_score(d, "--bootstrap", "2"), "--bootstrap"),
    )


# -- outputs that destroy inputs ------------------------------------------------------------------------


def _outputs_cases(case: Add) -> None:
    def augment_into_train_folder(d: Path, base: Base) -> tuple[list[str], str]:
        train = _training(d / "data")
        return ["augment", "gender-swap", "--train", str(train), "--out", str(train.parent)], "--out"

    def augment_out_is_train(d: Path, base: Base) -> tuple[list[str], str]:
        train = _training(d / "data")
        return ["augment", "gender-swap", "--train", str(train), "--out", str(train)], "--out"

    def py_augment_into_train_folder(d: Path, base: Base) -> tuple[Callable[[], object], str]:
        train = _training(d / "data")
        return lambda: nlibias.augment(train, train.parent, progress=False), "out_dir"

    def finetune_out_is_train(d: Path, base: Base) -> tuple[list[str], str]:
        args = _finetune(d)
        args[args.index("--out") + 1] = str(d / "data" / "train.jsonl")
        return args, "--out"

    def debias_out_is_model(d: Path, base: Base) -> tuple[list[str], str]:
        args = _debias(d)
        args[args.index("--out") + 1] = args[args.index("--model") + 1]
        return args, "--out"

    def py_finetune_out_is_train(d: Path, base: Base) -> tuple[Callable[[], object], str]:
        train = _training(d / "data")
        folder = str(_model_dir(d, CLASSIFIER))
        return lambda: nlibias.finetune(folder, train, train), "out_dir"

    def report_compare_out_is_second_metrics(d: Path, base: Base) -> tuple[list[str], str]:
        other = _run_copy(d, base, "other")
        args = ["report", str(base.run), str(other), "--compare", "--format", "md"]
        return [*args, "--out", str(other / "metrics.json")], "--out"

    def py_report_compare_out(d: Path, base: Base) -> tuple[Callable[[], object], str]:
        first, other = _run_copy(d, base), _run_copy(d, base, "other")
        return lambda: nlibias.make_report(
            [first, other], out=other / "predictions.jsonl", fmt="csv", compare=True
        ), "out"

    def report_csv_out_is_predictions(d: Path, base: Base) -> tuple[list[str], str]:
        run = _run_copy(d, base)
        return ["report", str(run), "--format", "csv", "--out", str(run / "predictions.jsonl")], "--out"

    def expand_bbq_into_source(d: Path, base: Base) -> tuple[list[str], str]:
        source = _bbq_src(d)
        return ["expand", "bbq", "--source", str(source), "--out", str(source)], "--out"

    def py_expand_bbq_into_source(d: Path, base: Base) -> tuple[Callable[[], object], str]:
        source = _bbq_src(d)
        return lambda: nlibias.expand("bbq", source=source, out_dir=source), "out"

    def score_out_holds_the_answers(d: Path, base: Base) -> tuple[list[str], str]:
        run, answers = _bbq_answers(d)
        path = d / "o" / "predictions.jsonl"
        path.parent.mkdir()
        shutil.move(answers, path)
        args = ["score", "--samples", str(run), "--predictions", str(path), "--answer-column", "uqa"]
        return [*args, "--out", str(d / "o"), "--bootstrap", "0"], "--out"

    def gate_junit_is_rules(d: Path, base: Base) -> tuple[list[str], str]:
        path = _rules(d, "margin: 1\n")
        return _gate(base.run, _run_copy(d, base), "--rules", str(path), "--junit", str(path)), "--junit"

    def gate_markdown_link_to_junit(d: Path, base: Base) -> tuple[list[str], str]:
        (d / "summary.md").symlink_to(d / "junit.xml")
        args = ["--junit", str(d / "junit.xml"), "--markdown", str(d / "summary.md")]
        return _gate(base.run, _run_copy(d, base), *args), "--markdown"

    def py_gate_samples_is_baseline_metrics(d: Path, base: Base) -> tuple[list[str], str]:
        baseline = _run_copy(d, base)
        return _gate(base.run, baseline, "--junit", str(baseline / "manifest.json")), "--junit"

    def explain_cache_is_samples(d: Path, base: Base) -> tuple[list[str], str]:
        run, samples = _generated_run(d, base)
        return ["explain", str(run), "--judge", "fake:j", "--cache", str(samples)], "--cache"

    def prescreen_cache_is_queue(d: Path, base: Base) -> tuple[list[str], str]:
        run = _vrun(d, base)
        queue = run / "validation" / "queue.csv"
        args = ["validate", "prescreen", str(run), "--judge", "fake:j", "--cache", str(queue)]
        return [*args, "--no-progress"], "--cache"

    def card_is_run_metrics(d: Path, base: Base) -> tuple[list[str], str]:
        run = _run_copy(d, base)
        return ["export", "model-index", str(run), "--card", str(run / "metrics.json")], "--card"

    def card_hardlink_to_metrics(d: Path, base: Base) -> tuple[list[str], str]:
        run = _run_copy(d, base)
        os.link(run / "metrics.json", d / "README.md")
        return ["export", "model-index", str(run), "--card", str(d / "README.md")], "--card"

    for name, build in (
        ("cli-augment-out-is-the-training-folder", augment_into_train_folder),
        ("cli-augment-out-is-the-training-file", augment_out_is_train),
        ("python-augment-out-is-the-training-folder", py_augment_into_train_folder),
        ("cli-finetune-out-is-the-training-file", finetune_out_is_train),
        ("cli-debias-out-is-the-model", debias_out_is_model),
        ("python-finetune-out-is-the-training-file", py_finetune_out_is_train),
        ("cli-report-compare-out-is-the-second-run-s-metrics", report_compare_out_is_second_metrics),
        ("python-report-compare-out-is-the-second-run-s-predictions", py_report_compare_out),
        ("cli-report-csv-out-is-the-run-s-predictions", report_csv_out_is_predictions),
        ("cli-expand-bbq-out-is-the-source", expand_bbq_into_source),
        ("python-expand-bbq-out-is-the-source", py_expand_bbq_into_source),
        ("cli-score-bbq-out-holds-the-answers-file-as-predictions", score_out_holds_the_answers),
        ("cli-gate-junit-is-the-rules-file", gate_junit_is_rules),
        ("cli-gate-markdown-a-link-to-the-junit", gate_markdown_link_to_junit),
        ("cli-gate-junit-is-the-baseline-s-manifest", py_gate_samples_is_baseline_metrics),
        ("cli-explain-cache-is-the-samples-file", explain_cache_is_samples),
        ("cli-validate-prescreen-cache-is-the-queue", prescreen_cache_is_queue),
        ("card-is-the-run-s-metrics", card_is_run_metrics),
        ("card-a-hard-link-to-the-run-s-metrics", card_hardlink_to_metrics),
    ):
        case(f"s27-outputs/{name}", build)


# -- the same thing twice ---------------------------------------------------------------------------------


def _twice_cases(case: Add) -> None:
    case(
        "s27-twice/cli-gate-margin-twice",
        lambda d, base: (_gate(base.run, _run_copy(d, base), "--margin", "1", "--margin", "30"), "--margin"),
    )
    case(
        "s27-nothing/cli-report-compare-a-run-and-a-samples-folder",
        lambda d, base: (
            ["report", str(base.run), str(base.samples), "--compare", "--format", "md"],
            str(base.samples),
        ),
    )

    def bbq_own_column(d: Path, base: Base) -> tuple[list[str], str]:
        run, path = _bbq_answers(d, _bbq_rows())
        args = ["score", "--samples", str(run), "--predictions", str(path), "--answer-column", "ans0"]
        return [*args, "--out", str(d / "o"), "--bootstrap", "0"], "--answer-column"

    def py_bbq_own_column(d: Path, base: Base) -> tuple[Callable[[], object], str]:
        run, path = _bbq_answers(d, _bbq_rows())
        return lambda: nlibias.score(run, path, answer_column="ans1", bootstrap=0), "answer_column"

    case("s27-comparable/cli-score-bbq-answer-column-a-column-of-the-dataset", bbq_own_column)
    case("s27-comparable/python-score-bbq-answer-column-a-column-of-the-dataset", py_bbq_own_column)
    case(
        "s27-twice/cli-gate-one-pair-twice",
        lambda d, base: (
            _gate(base.run, _run_copy(d, base), "--pair", "m=m", "--pair", "m=m"),
            "--pair",
        ),
    )
    case(
        "s27-twice/cli-audit-bootstrap-twice",
        lambda d, base: ([*audit_args(base.samples, d), "--bootstrap", "200"], "--bootstrap"),
    )
    case(
        "s27-twice/cli-export-name-twice",
        lambda d, base: (
            ["export", "model-index", str(base.run), "--name", "a/b", "--name", "c/d"],
            "--name",
        ),
    )

    def score_answer_column_twice(d: Path, base: Base) -> tuple[list[str], str]:
        args = _bbq_score(d, "--bootstrap", "0")  # ans1 is refused as BBQ's own field: answers in uqa2
        _write_jsonl(
            d / "answers.jsonl", [{**row, "uqa": row["ans0"], "uqa2": row["ans1"]} for row in _bbq_rows()]
        )
        return [*args, "--answer-column", "uqa2"], "--answer-column"

    case("s27-twice/cli-score-answer-column-twice", score_answer_column_twice)
    case(
        "s27-twice/cli-report-compare-a-run-twice-among-three",
        lambda d, base: (
            ["report", str(base.run), str(_run_copy(d, base)), str(base.run), "--compare", "--format", "md"],
            str(base.run),
        ),
    )
    case(
        "s27-twice/cli-debias-model-twice",
        lambda d, base: ([*_debias(d), "--model", str(d / CLASSIFIER)], "--model"),
    )
    case(
        "s27-twice/python-debias-model-twice",
        lambda d, base: (
            lambda: nlibias.debias_models(
                [str(_model_dir(d, CLASSIFIER))] * 2, _training(d), d / "deb", progress=False
            ),
            "models",
        ),
    )

    def names_file(d: Path, text: str) -> Path:
        path = d / "names.tsv"
        path.write_text(text, encoding="utf-8")
        return path

    case(
        "s27-twice/cli-augment-names-one-name-two-partners",
        lambda d, base: (
            _augment(d, "--names", str(names_file(d, "John\tMary\nJohn\tSusan\n"))),
            "names.tsv:2",
        ),
    )
    case(
        "s27-twice/python-augment-names-a-pair-and-its-reverse-clash",
        lambda d, base: (
            lambda: nlibias.augment(
                _training(d / "data"),
                d / "aug",
                names=names_file(d, "John\tMary\nMary\tPeter\n"),
                progress=False,
            ),
            "names.tsv:2",
        ),
    )

    def word_list(d: Path, base: Base) -> tuple[list[str], str]:
        path = d / "words.tsv"
        path.write_text("he\tshe\nhe\tthey\n", encoding="utf-8")
        return _augment(d, "--word-list", str(path)), "words.tsv:2"

    case("s27-twice/cli-augment-word-list-one-word-two-partners", word_list)

    def bbq_same_file_twice(d: Path, base: Base) -> tuple[list[str], str]:
        source = _bbq_src(d)
        shutil.copy(source / "ages.jsonl", source / "ages-copy.jsonl")
        return ["expand", "bbq", "--source", str(source), "--out", str(d / "out")], "example_id"

    case("s27-twice/cli-expand-bbq-one-category-in-two-files", bbq_same_file_twice)

    def py_bbq_same_file_twice(d: Path, base: Base) -> tuple[Callable[[], object], str]:
        source = _bbq_src(d)
        shutil.copy(source / "ages.jsonl", source / "more-ages.jsonl")
        return lambda: nlibias.expand("bbq", source=source, out_dir=d / "out"), "example_id"

    case("s27-twice/python-expand-bbq-one-category-in-two-files", py_bbq_same_file_twice)

    def judgement_twice(d: Path, base: Base) -> tuple[list[str], str]:
        path = _judgements(d, "ana,valid,pro", "ana,invalid,")
        return ["validate", "import", str(_vrun(d, base)), str(path)], f"{path}:3"

    case("s27-twice/cli-validate-import-one-annotator-judges-twice-differently", judgement_twice)

    def rules_slice_spelt_twice(d: Path, base: Base) -> tuple[list[str], str]:
        path = _rules(d, "slices: [overall, domain, Domain]\n")
        return _gate(base.run, _run_copy(d, base), "--rules", str(path)), f"{path}:1"

    case("s27-twice/yaml-gate-slice-in-two-cases", rules_slice_spelt_twice)
    for name, text, line in (
        (
            "filter-model-with-a-trailing-space",
            "filter:\n  models: [{model: fake:a}, {model: 'fake:a '}]\n",
            "2",
        ),
    ):
        case(
            f"s27-twice/yaml-extend-{name}",
            lambda d, base, text=text, line=line: (_extend_args(d, text), f"{d / 'config.yaml'}:{line}"),
        )


# -- things not comparable, compared; derived files that do not check out ------------------------------


def _comparable_cases(case: Add) -> None:
    def compare_bbnli_and_bbq(d: Path, base: Base) -> tuple[list[str], str]:
        bbq = _audited_bbq(d)
        return ["report", str(base.run), str(bbq), "--compare", "--format", "md"], "bbq"

    def py_compare_bbnli_and_bbq(d: Path, base: Base) -> tuple[Callable[[], object], str]:
        bbq = _audited_bbq(d)
        return lambda: nlibias.make_report([base.run, bbq], fmt="md", compare=True), "bbq"

    def gate_bbq_against_bbnli(d: Path, base: Base) -> tuple[list[str], str]:
        return _gate(_audited_bbq(d), _run_copy(d, base)), "'bbq' samples and the baseline of 'bbnli'"

    def py_gate_bbq_against_bbnli(d: Path, base: Base) -> tuple[Callable[[], object], str]:
        bbq = _audited_bbq(d)
        return lambda: nlibias.gate(base.run, bbq), "baseline"

    def gate_samples_of_bbq(d: Path, base: Base) -> tuple[list[str], str]:
        bbq = _bbq_run(d)
        return _gate(base.run, _run_copy(d, base), "--samples", str(bbq / "samples.jsonl")), "--samples"

    def score_bbq_with_bbnli_predictions(d: Path, base: Base) -> tuple[list[str], str]:
        bbq = _bbq_run(d)
        args = ["score", "--samples", str(bbq), "--predictions", str(base.predictions)]
        return [*args, "--out", str(d / "o"), "--bootstrap", "0"], f"{base.predictions}:1"

    def explain_samples_of_other_benchmark(d: Path, base: Base) -> tuple[list[str], str]:
        run, _ = _generated_run(d, base)
        bbq = _bbq_run(d)
        args = [
            "explain",
            str(run),
            "--judge",
            "fake:j",
            "--no-cache",
            "--samples",
            str(bbq / "samples.jsonl"),
        ]
        return args, "--samples"

    def compare_metrics_edited(d: Path, base: Base) -> tuple[list[str], str]:
        run = _run_copy(d, base)

        def shift(metrics: Any) -> Any:
            text = json.dumps(metrics)
            return json.loads(text.replace('"n": ', '"n": 1'))

        _edit_json(run / "metrics.json", shift)
        return ["report", str(run), str(base.run), "--compare", "--format", "md"], "metrics.json"

    def export_metrics_headline_edited(d: Path, base: Base) -> tuple[list[str], str]:
        run = _run_copy(d, base)

        def edit(metrics: Any) -> Any:
            for model in metrics["models"].values():
                model["overall"]["bbnli_bias_score"] = -40.0
            return metrics

        _edit_json(run / "metrics.json", edit)
        return ["export", "model-index", str(run)], "metrics.json"

    def gate_predictions_of_another_model(d: Path, base: Base) -> tuple[list[str], str]:
        run = _run_copy(d, base, "cand")
        path = run / "predictions.jsonl"
        rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
        for row in rows:
            row["model"] = "other"
        path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
        return _gate(run, _run_copy(d, base)), "predictions.jsonl"

    def explain_rows_emptied(d: Path, base: Base) -> tuple[list[str], str]:
        run = explained_run(d, base)
        (run / "explanations" / "explanations.jsonl").write_text("", encoding="utf-8")
        return ["explain", str(run), "--judge", "fake:j", "--no-cache", "--bootstrap", "0"], "recomput"

    def explain_rows_from_another_judge(d: Path, base: Base) -> tuple[list[str], str]:
        run = explained_run(d, base)
        rows = run / "explanations" / "explanations.jsonl"
        rows.write_text(rows.read_text(encoding="utf-8").replace('"fake:j"', '"fake:k"'), encoding="utf-8")
        return ["explain", str(run), "--judge", "fake:j", "--no-cache", "--bootstrap", "0"], "recomput"

    def validate_explanations_row_dropped(d: Path, base: Base) -> tuple[list[str], str]:
        run = explained_run(d, base)
        rows = run / "explanations" / "explanations.jsonl"
        rows.write_text("".join(rows.read_text(encoding="utf-8").splitlines(True)[1:]), encoding="utf-8")
        return ["validate", "explanations", str(run)], "explanations.jsonl"

    def extend_stage_replaced(d: Path, base: Base) -> tuple[list[str], str]:
        args = _extend_args(d, "mlm:\n  top_k: 5\n")
        code, text, _ = invoke(args)
        assert code == 0, text
        rows = d / "next" / "masks" / "templates.jsonl"
        lines = rows.read_text(encoding="utf-8").splitlines(True)
        rows.write_text("".join(lines[::-1][: max(1, len(lines) // 2)]), encoding="utf-8")
        return args, "templates.jsonl"

    def extend_stage_emptied(d: Path, base: Base) -> tuple[list[str], str]:
        args = _extend_args(d, "mlm:\n  top_k: 5\n")
        code, text, _ = invoke(args)
        assert code == 0, text
        (d / "next" / "masks" / "templates.jsonl").write_text("", encoding="utf-8")
        return args, "templates.jsonl"

    def score_bbq_answers_of_other_category(d: Path, base: Base) -> tuple[list[str], str]:
        run = _bbq_run(d)
        rows = [{**row, "uqa": row["ans0"]} for row in _bbq_rows(category="Religion")]
        path = _write_jsonl(d / "answers.jsonl", rows)
        args = ["score", "--samples", str(run), "--predictions", str(path), "--answer-column", "uqa"]
        return [*args, "--out", str(d / "o"), "--bootstrap", "0"], str(path)

    def score_bbq_answers_of_shuffled_contexts(d: Path, base: Base) -> tuple[list[str], str]:
        rows = _bbq_rows()
        answers = [
            {**row, "uqa": row["ans0"], "context": rows[-1 - i]["context"]} for i, row in enumerate(rows)
        ]
        run, path = _bbq_answers(d, answers)
        args = ["score", "--samples", str(run), "--predictions", str(path), "--answer-column", "uqa"]
        return [*args, "--out", str(d / "o"), "--bootstrap", "0"], str(path)

    for name, build, expect in (
        ("cli-report-compare-bbnli-and-bbq", compare_bbnli_and_bbq, "error"),
        ("python-report-compare-bbnli-and-bbq", py_compare_bbnli_and_bbq, "error"),
        ("cli-gate-bbq-against-bbnli", gate_bbq_against_bbnli, "error"),
        ("python-gate-bbnli-against-bbq", py_gate_bbq_against_bbnli, "error"),
        ("cli-gate-samples-of-bbq", gate_samples_of_bbq, "error"),
        ("cli-score-bbq-with-bbnli-predictions", score_bbq_with_bbnli_predictions, "error"),
        ("cli-explain-samples-of-another-benchmark", explain_samples_of_other_benchmark, "error"),
        ("cli-report-compare-metrics-counts-edited", compare_metrics_edited, "error"),
        ("cli-export-metrics-numbers-edited", export_metrics_headline_edited, "error"),
        ("cli-gate-candidate-predictions-of-another-model", gate_predictions_of_another_model, "error"),
        ("cli-explain-rows-emptied", explain_rows_emptied, "warn"),
        ("cli-explain-rows-of-another-judge", explain_rows_from_another_judge, "warn"),
        ("cli-validate-explanations-a-row-dropped", validate_explanations_row_dropped, "error"),
        ("cli-extend-rerun-after-a-stage-output-was-replaced", extend_stage_replaced, "warn"),
        ("cli-extend-rerun-after-a-stage-output-was-emptied", extend_stage_emptied, "warn"),
        ("cli-score-bbq-answers-of-another-category", score_bbq_answers_of_other_category, "error"),
        ("cli-score-bbq-answers-with-other-contexts", score_bbq_answers_of_shuffled_contexts, "error"),
    ):
        case(f"s27-comparable/{name}", build, expect)


# -- options that apply to nothing --------------------------------------------------------------------------


def _nothing_cases(case: Add) -> None:
    for name, extra, named in (
        ("balance", ("--balance",), "--balance"),
        ("hypothesis-templates", ("--hypothesis-templates", "occupations"), "--hypothesis-templates"),
        ("strict", ("--strict",), "--strict"),
        ("seed", ("--seed", "3"), "--seed"),
    ):
        case(
            f"s27-nothing/cli-expand-bbq-{name}",
            lambda d, base, extra=extra, named=named: (_expand_bbq(d, *extra), named),
        )
    case(
        "s27-nothing/python-expand-bbq-balance",
        lambda d, base: (
            lambda: nlibias.expand("bbq", source=_bbq_src(d), out_dir=d / "out", balance=True),
            "balance",
        ),
    )
    case(
        "s27-nothing/cli-score-bbq-seed-without-bootstrap",
        lambda d, base: (_bbq_score(d, "--bootstrap", "0", "--seed", "9"), "--seed"),
    )
    for name, extra, named in (
        ("her-model-with-the-rule", ("--her-model", "smollm2"), "--her-model"),
        ("split-of-a-file", ("--split", "validation"), "--split"),
    ):
        case(
            f"s27-nothing/cli-augment-{name}",
            lambda d, base, extra=extra, named=named: (_augment(d, *extra), named),
        )
    case(
        "s27-nothing/python-augment-her-model-with-the-rule",
        lambda d, base: (
            lambda: nlibias.augment(_training(d / "data"), d / "aug", her_model="smollm2", progress=False),
            "her_model",
        ),
    )
    for name, extra, named in (
        ("eval-split-without-eval", ("--eval-split", "test"), "--eval-split"),
        ("split-of-a-file", ("--split", "validation"), "--split"),
        (
            "warmup-ratio-with-a-constant-schedule",
            ("--lr-scheduler", "constant", "--warmup-ratio", "0.1"),
            "--warmup-ratio",
        ),
        ("warmup-steps-and-ratio", ("--warmup-steps", "10", "--warmup-ratio", "0.1"), "--warmup"),
    ):
        case(
            f"s27-nothing/cli-finetune-{name}",
            lambda d, base, extra=extra, named=named: (_finetune(d, *extra), named),
        )
    for name, extra, named in (("her-model-with-the-rule", ("--her-model", "smollm2"), "--her-model"),):
        case(
            f"s27-nothing/cli-debias-{name}",
            lambda d, base, extra=extra, named=named: (_debias(d, *extra), named),
        )
    case(
        "s27-nothing/python-finetune-eval-split-without-eval",
        lambda d, base: (
            lambda: nlibias.finetune(
                str(_model_dir(d, CLASSIFIER)), _training(d), d / "ft", eval_split="test"
            ),
            "eval_split",
        ),
    )
    case(
        "s27-nothing/cli-report-no-plots-with-md",
        lambda d, base: (["report", str(base.run), "--format", "md", "--no-plots"], "--no-plots"),
    )
    case(
        "s27-nothing/python-report-no-plots-with-csv",
        lambda d, base: (lambda: nlibias.make_report(base.run, fmt="csv", plots=False), "plots"),
    )
    case(
        "s27-nothing/cli-report-debias-on-a-plain-audit",
        lambda d, base: (["report", str(base.run), "--debias"], "no before/after pair"),
    )
    case(
        "s27-nothing/cli-export-model-on-a-one-model-run-naming-another",
        lambda d, base: (["export", "model-index", str(base.run), "--model", "fake:n"], "--model"),
    )

    def judged_run(d: Path, base: Base) -> Path:
        run = _vrun(d, base)
        code, text, _ = invoke(["validate", "import", str(run), str(_judgements(d, "ana,invalid,"))])
        assert code == 0, text
        return run

    def status_exclude_nobody(d: Path, base: Base) -> tuple[list[str], str]:
        return ["validate", "status", str(judged_run(d, base)), "--exclude", "anna"], "--exclude"

    case("s27-nothing/cli-validate-status-exclude-an-unknown-annotator", status_exclude_nobody)
    case(
        "s27-nothing/python-validation-status-exclude-an-unknown-annotator",
        lambda d, base: (lambda: nlibias.validation_status(judged_run(d, base), exclude="anna"), "exclude"),
    )

    def gate_rules_slice_without_column(d: Path, base: Base) -> tuple[list[str], str]:
        path = _rules(d, "slices: [overall, template]\n")
        return _gate(base.run, _run_copy(d, base), "--rules", str(path)), f"{path}:1"

    case("s27-nothing/yaml-gate-slice-no-sample-has", gate_rules_slice_without_column)
    for name, text, line in (
        ("mlm-device-with-a-fake", "mlm:\n  device: cuda\n", "mlm.device"),
        ("stopwords-without-derive", "templates:\n  stopwords: words.txt\n", "config.yaml:2"),
        ("mlm-revision-of-a-fake", "mlm:\n  revision: main\n", "mlm.revision"),
    ):
        case(
            f"s27-nothing/yaml-extend-{name}",
            lambda d, base, text=text, line=line: (_extend_args(d, text), line),
        )


# -- a model in the wrong role ---------------------------------------------------------------------------


def _roles_cases(case: Add) -> None:
    def explain_judge_masked(d: Path, base: Base) -> tuple[list[str], str]:
        run, _ = _generated_run(d, base)
        return [
            "explain",
            str(run),
            "--no-cache",
            "--judge",
            str(_model_dir(d, "BertForMaskedLM")),
        ], "--judge"

    case("s27-roles/cli-explain-judge-a-masked-lm", explain_judge_masked)

    def explain_lm_judge_masked(d: Path, base: Base) -> tuple[Callable[[], object], str]:
        run, _ = _generated_run(d, base)
        folder = str(_model_dir(d, "BertForMaskedLM"))
        return lambda: nlibias.explain(
            run, "fake:j", cache=False, progress=False, lm_judge=folder
        ), "lm_judge"

    case("s27-roles/python-explain-lm-judge-a-masked-lm", explain_lm_judge_masked)

    def extend_filter_causal(d: Path, base: Base) -> tuple[list[str], str]:
        folder = _model_dir(d, "LlamaForCausalLM")
        return _extend_args(d, f"filter:\n  models: [{{model: {folder}}}]\n"), f"{d / 'config.yaml'}:2"

    case("s27-roles/yaml-extend-filter-model-a-causal-lm", extend_filter_causal)

    def prescreen_judge_masked(d: Path, base: Base) -> tuple[list[str], str]:
        folder = str(_model_dir(d, "BertForMaskedLM"))
        return ["validate", "prescreen", str(_vrun(d, base)), "--judge", folder, "--no-progress"], "--judge"

    case("s27-roles/cli-validate-prescreen-judge-a-masked-lm", prescreen_judge_masked)

    def export_lm_eval_classifier(d: Path, base: Base) -> tuple[list[str], str]:
        bbq = _bbq_run(d)
        folder = str(_model_dir(d, CLASSIFIER))
        return [
            "export",
            "lm-eval",
            "--samples",
            str(bbq),
            "--out",
            str(d / "task"),
            "--model",
            folder,
        ], "--model"

    case("s27-roles/cli-export-lm-eval-model-a-classifier", export_lm_eval_classifier)


# -- internal errors and damaged run files ----------------------------------------------------------------


def _damaged_cases(case: Add) -> None:
    def damaged(name: str, file: str, body: bytes, command: Callable[[Path], list[str]]) -> None:
        def build(d: Path, base: Base) -> tuple[list[str], str]:
            run = _run_copy(d, base)
            (run / file).write_bytes(body)
            return command(run), file

        case(f"s27-damaged/{name}", build)

    export = lambda run: ["export", "model-index", str(run)]  # noqa: E731
    report = lambda run: ["report", str(run), "--format", "md"]  # noqa: E731
    damaged("export-metrics-a-list", "metrics.json", b"[1, 2]\n", export)
    damaged("export-metrics-null", "metrics.json", b"null\n", export)
    damaged("report-manifest-cut", "manifest.json", b'{"version": ', report)
    damaged("report-metrics-a-string", "metrics.json", b'"done"\n', report)

    def gate_rules_list(d: Path, base: Base) -> tuple[list[str], str]:
        path = _rules(d, "- margin: 1\n")
        return _gate(base.run, _run_copy(d, base), "--rules", str(path)), str(path)

    case("s27-damaged/yaml-gate-rules-a-list", gate_rules_list)

    def gate_rules_folder(d: Path, base: Base) -> tuple[list[str], str]:
        (d / "gate.yaml").mkdir()
        return _gate(base.run, _run_copy(d, base), "--rules", str(d / "gate.yaml")), "--rules"

    case("s27-damaged/cli-gate-rules-a-folder", gate_rules_folder)

    def status_judgements_folder(d: Path, base: Base) -> tuple[list[str], str]:
        run = _vrun(d, base)
        (run / "validation" / "judgements.csv").mkdir()
        return ["validate", "status", str(run)], "judgements.csv"

    case("s27-damaged/cli-validate-status-judgements-a-folder", status_judgements_folder)

    def explain_predictions_empty(d: Path, base: Base) -> tuple[list[str], str]:
        run, _ = _generated_run(d, base)
        (run / "predictions.jsonl").write_text("", encoding="utf-8")
        return ["explain", str(run), "--judge", "fake:j", "--no-cache"], "predictions.jsonl"

    case("s27-damaged/cli-explain-predictions-emptied", explain_predictions_empty)

    case(
        "s27-damaged/python-gate-candidate-an-int",
        lambda d, base: (lambda: nlibias.gate(5, base.run), "candidate"),  # type: ignore[arg-type]
    )
    case(
        "s27-damaged/python-augment-train-an-int",
        lambda d, base: (lambda: nlibias.augment(7, d / "aug", progress=False), "train"),  # type: ignore[arg-type]
    )
    case(
        "s27-damaged/python-validation-import-file-none",
        lambda d, base: (lambda: nlibias.validation_import(_vrun(d, base), None), "file"),  # type: ignore[arg-type]
    )

    def bbq_answers_not_utf8(d: Path, base: Base) -> tuple[list[str], str]:
        run, path = _bbq_answers(d)
        path.write_bytes(path.read_bytes().replace(b"Age", b"\xe9ge", 1))
        args = ["score", "--samples", str(run), "--predictions", str(path), "--answer-column", "uqa"]
        return [*args, "--out", str(d / "o"), "--bootstrap", "0"], str(path)

    case("s27-damaged/cli-score-bbq-answers-not-utf8", bbq_answers_not_utf8)


def _plugin_cases(case: Add) -> None:
    """A plug-in's own numbers, names and samples."""
    from test_plugin_gate import LEAN_BENCHMARK, Leaning
    from test_plugins_isolated import Expanded, sample

    def audited(name: str, plugin: Callable[[], Any], named: str = "benchmark 'lean'") -> None:
        def build(d: Path, base: Base) -> tuple[Callable[[], object], str]:
            from nlibias.catalog import registry

            _install({table: getattr(registry, table).copy() for table in _TABLES}, plugin())
            samples = nlibias.expand("lean", out_dir=d / "samples")
            return lambda: nlibias.audit(
                samples, models=[Leaning(0.8, 0.4)], cache=False, bootstrap=0, progress=False
            ), named

        case(f"s27-plugins/python-audit-{name}", build, context=_plugin_registry)

    def headline(value: float) -> Callable[[], Any]:
        return lambda: _lean(
            score=lambda columns, *a, **k: {"overall": {"n": len(columns), "lean_gap": value}}
        )

    audited("headline-nan", headline(math.nan))
    audited("headline-beyond-its-declared-range", headline(250.0))
    audited("headline-a-string", headline("12"))  # type: ignore[arg-type]

    def expanded(name: str, samples: Callable[[], list[Any]], named: str = "plug-in 'lean'") -> None:
        def build(d: Path, base: Base) -> tuple[list[str], str]:
            from nlibias.catalog import registry

            plugin = replace(LEAN_BENCHMARK, expand=lambda source=None: Expanded(samples()))
            _install({table: getattr(registry, table).copy() for table in _TABLES}, plugin)
            return ["expand", "lean", "--out", str(d / "samples")], named

        case(f"s27-plugins/cli-expand-{name}", build, context=_plugin_registry)

    expanded("one-sample-id-twice", lambda: [sample("lean", 0, "pro"), sample("lean", 0, "pro")])
    expanded("no-samples", lambda: [], "lean: the source expands to no samples")

    def registered(name: str, plugin: Callable[[], Any], named: str) -> None:
        case(
            f"s27-plugins/python-register-{name}",
            lambda d, base: (lambda: nlibias.register_benchmark(plugin()), named),
            context=_plugin_registry,
        )

    registered("a-builtin-name-in-capitals", lambda: replace(LEAN_BENCHMARK, name="BBQ"), "BBQ")
    registered("a-name-with-a-space", lambda: replace(LEAN_BENCHMARK, name="lean one"), "lean one")
    registered("a-blank-name", lambda: replace(LEAN_BENCHMARK, name=" "), "name")


KNOWN: dict[str, str] = {}
"""Defects found by this round (strict xfails), by case name."""


def s27_cases() -> list[Case]:
    """Every case of this module, a known defect marked from :data:`KNOWN`."""
    return cases_of(
        (
            _numbers_cases,
            _outputs_cases,
            _twice_cases,
            _comparable_cases,
            _nothing_cases,
            _roles_cases,
            _damaged_cases,
            _plugin_cases,
        ),
        KNOWN,
    )
