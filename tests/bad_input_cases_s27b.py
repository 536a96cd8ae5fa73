"""A second fresh set of bad inputs of issue #48's classes (session 27's second acceptance check),
part of the corpus of ``bad_input_cases``. It leans on the routes the older cases touch least: the
Python API (``nlibias.*`` and the objects it returns), ``report`` (formats and outputs), ``masks``,
``demo``, ``doctor``, ``schema``, ``benchmarks``, ``finetune``, ``validate serve``'s HTTP API and the
refusal of a single-valued option given twice. None repeats an earlier case."""

from __future__ import annotations

import json
import math
import os
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import nlibias
from bad_input_cases_declared import _model_dir
from bad_input_cases_explain import _generated_run
from bad_input_cases_routes import _bbq_run, _plugin_registry
from bad_input_cases_s26 import _gate, _run_copy
from bad_input_corpus import QUEUE_ROWS, Base, Case, audit_args, cases_of, score_args

Build = Callable[[Path, Base], tuple[Any, str]]
Add = Callable[..., None]
CLASSIFIER = "RobertaForSequenceClassification"


def _training(d: Path) -> Path:
    d.mkdir(parents=True, exist_ok=True)
    path = d / "train.jsonl"
    labels = ("entailment", "neutral", "contradiction")
    rows = [
        {"premise": f"The nurse said he was late {i}.", "hypothesis": "She was late.", "label": labels[i % 3]}
        for i in range(6)
    ]
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    return path


def _finetune(d: Path, *extra: str, model: Path | None = None) -> list[str]:
    folder = model or _model_dir(d, CLASSIFIER)
    train = _training(d / "data")
    return ["finetune", "--model", str(folder), "--train", str(train), "--out", str(d / "ft"), *extra]


def _augment(d: Path, *extra: str) -> list[str]:
    return ["augment", "gender-swap", "--train", str(_training(d / "data")), "--out", str(d / "aug"), *extra]


def _report(run: Path | str, *extra: str) -> list[str]:
    return ["report", str(run), "--quiet", *extra]


def _source(d: Path, base: Base) -> Path:
    """A copy of the base BBNLI source folder (so a case may damage it)."""
    target = d / "src"
    shutil.copytree(base.bbnli_dir, target)
    return target


def _source_file(source: Path) -> Path:
    return next(source.rglob("*.json"))


def _subtopic(base: Base) -> str:
    return _source_file(base.bbnli_dir).stem


class _Refused(nlibias.errors.NlibiasError):
    """What the HTTP API answered with a 4xx status (judged as a clear or unclear refusal)."""


def _http(
    base: Base, d: Path, method: str, path: str, body: dict[str, Any] | None = None, **settings: Any
) -> Callable[[], object]:
    """One request to ``validate serve``'s app over a copy of the validation run; a 4xx answer is
    raised as a refusal carrying its detail, a 2xx one returns (accepted)."""

    def request() -> object:
        from fastapi.testclient import TestClient

        from nlibias.validation.app import AppSettings, create_app

        run = d / "vrun"
        if not run.exists():
            shutil.copytree(base.validation_run, run)
        app = create_app(run, AppSettings(**settings))
        with TestClient(app, base_url="http://127.0.0.1") as client:
            if body is not None and body.get("round") == "stereotype-after-invalid":
                first = {**body, "round": "category", "label": "invalid"}
                client.post("/api/answer", json=first)
                body["round"] = "stereotype"
            answer = client.request(method, path, json=body)
        if 400 <= answer.status_code < 500:
            raise _Refused(f"HTTP {answer.status_code}: {answer.text}")
        return answer.json()

    return request


# -- a single-valued option given twice (nested commands, --opt=value forms) -----------------------


def _twice_option_cases(case: Add) -> None:
    def twice(name: str, build: Callable[[Path, Base], list[str]], flag: str) -> None:
        case(f"s27b-twice-option/cli-{name}", lambda d, base: (build(d, base), flag))

    twice("report-format-equals-form", lambda d, b: _report(b.run, "--format=md", "--format=csv"), "--format")
    twice(
        "report-out-equals-form",
        lambda d, b: _report(b.run, "--format", "md", "--out", str(d / "a.md"), f"--out={d / 'b.md'}"),
        "--out",
    )
    twice(
        "masks-list-source",
        lambda d, b: ["masks", "list", "--source", str(b.bbnli_dir), f"--source={_source(d, b)}"],
        "--source",
    )
    twice(
        "masks-derive-out",
        lambda d, b: [
            "masks",
            "derive",
            "--source",
            str(b.bbnli_dir),
            "--out",
            str(d / "a"),
            "--out",
            str(d / "b"),
        ],
        "--out",
    )
    twice(
        "masks-list-templates",
        lambda d, b: ["masks", "list", "--templates", str(d / "a.txt"), f"--templates={d / 'b.txt'}"],
        "--templates",
    )
    twice(
        "validate-status-min-annotators",
        lambda d, b: [
            "validate",
            "status",
            str(b.validation_run),
            "--min-annotators",
            "2",
            "--min-annotators=3",
        ],
        "--min-annotators",
    )
    twice(
        "gate-baseline-equals-form",
        lambda d, b: [*_gate(b.run, _run_copy(d, b)), f"--baseline={_run_copy(d, b, 'other')}"],
        "--baseline",
    )
    twice(
        "explain-threshold",
        lambda d, b: [
            *["explain", str(_generated_run(d, b)[0]), "--judge", "fake:a", "--no-cache"],
            *["--threshold", "0.3", "--threshold=0.4"],
        ],
        "--threshold",
    )
    twice("finetune-epochs", lambda d, b: _finetune(d, "--epochs", "1", "--epochs=2"), "--epochs")
    twice(
        "finetune-lr-scheduler",
        lambda d, b: _finetune(d, "--lr-scheduler", "linear", "--lr-scheduler=cosine"),
        "--lr-scheduler",
    )
    twice("augment-her", lambda d, b: _augment(d, "--her", "rule", "--her=model"), "--her")
    twice(
        "audit-limit-equals-form",
        lambda d, b: [*audit_args(b.samples, d), "--limit", "3", "--limit=4"],
        "--limit",
    )
    twice("audit-out", lambda d, b: [*audit_args(b.samples, d), "--out", str(d / "p")], "--out")
    twice(
        "export-model-index-card",
        lambda d, b: ["export", "model-index", str(b.run), "--card", str(d / "a.md"), f"--card={d / 'b.md'}"],
        "--card",
    )
    twice(
        "demo-pairs", lambda d, b: ["demo", "--out", str(d / "demo"), "--pairs", "2", "--pairs=3"], "--pairs"
    )
    twice("score-seed", lambda d, b: [*score_args(b, b.predictions, d), "--seed", "1", "--seed=2"], "--seed")


# -- numbers that make a decision impossible or meaningless ------------------------------------------


def _numbers_cases(case: Add) -> None:
    def py(name: str, call: Callable[[Path, Base], Callable[[], object]], named: str) -> None:
        case(f"s27b-numbers/python-{name}", lambda d, base: (call(d, base), named))

    py(
        "score-bootstrap-a-bool",
        lambda d, b: lambda: nlibias.score(b.samples, b.predictions, bootstrap=True),
        "bootstrap",
    )
    py(
        "score-seed-fractional",
        lambda d, b: lambda: nlibias.score(b.samples, b.predictions, seed=1.5),
        "seed",
    )
    py(
        "score-bootstrap-nan",
        lambda d, b: lambda: nlibias.score(b.samples, b.predictions, bootstrap=math.nan),  # type: ignore[arg-type]
        "bootstrap",
    )
    py(
        "audit-limit-a-bool",
        lambda d, b: (
            lambda: nlibias.audit(b.samples, "fake:m", cache=False, progress=False, bootstrap=0, limit=True)
        ),
        "limit",
    )
    py(
        "audit-limit-zero",
        lambda d, b: (
            lambda: nlibias.audit(b.samples, "fake:m", cache=False, progress=False, bootstrap=0, limit=0)
        ),
        "limit",
    )
    py("demo-pairs-zero", lambda d, b: lambda: nlibias.demo(d / "demo", pairs=0, progress=False), "pairs")
    py(
        "demo-bootstrap-negative",
        lambda d, b: lambda: nlibias.demo(d / "demo", bootstrap=-1, progress=False),
        "bootstrap",
    )
    py("demo-seed-a-string", lambda d, b: lambda: nlibias.demo(d / "demo", seed="7", progress=False), "seed")
    py(
        "finetune-warmup-ratio-negative",
        lambda d, b: (
            lambda: nlibias.finetune(
                str(_model_dir(d, CLASSIFIER)), _training(d / "data"), d / "ft", warmup_ratio=-0.1
            )
        ),
        "warmup_ratio",
    )
    py(
        "finetune-save-steps-a-bool",
        lambda d, b: (
            lambda: nlibias.finetune(
                str(_model_dir(d, CLASSIFIER)), _training(d / "data"), d / "ft", save_steps=True
            )
        ),
        "save_steps",
    )
    py(
        "finetune-epochs-nan",
        lambda d, b: (
            lambda: nlibias.finetune(
                str(_model_dir(d, CLASSIFIER)), _training(d / "data"), d / "ft", epochs=math.nan
            )
        ),
        "epochs",
    )
    py(
        "finetune-max-length-huge",
        lambda d, b: (
            lambda: nlibias.finetune(
                str(_model_dir(d, CLASSIFIER)), _training(d / "data"), d / "ft", max_length=10**9
            )
        ),
        "max_length",
    )

    def cli(name: str, build: Callable[[Path, Base], list[str]], flag: str) -> None:
        case(f"s27b-numbers/cli-{name}", lambda d, base: (build(d, base), flag))

    cli(
        "demo-bootstrap-negative",
        lambda d, b: ["demo", "--out", str(d / "demo"), "--bootstrap", "-1"],
        "--bootstrap",
    )
    cli("demo-pairs-fractional", lambda d, b: ["demo", "--out", str(d / "demo"), "--pairs", "1.5"], "--pairs")
    cli("demo-seed-huge", lambda d, b: ["demo", "--out", str(d / "demo"), "--seed", "1e400"], "--seed")
    cli(
        "finetune-warmup-both-steps-and-ratio",
        lambda d, b: _finetune(d, "--warmup-steps", "2", "--warmup-ratio", "0.5"),
        "--warmup",
    )
    cli(
        "finetune-lr-scheduler-unknown",
        lambda d, b: _finetune(d, "--lr-scheduler", "cosine-ish"),
        "--lr-scheduler",
    )
    cli("finetune-learning-rate-zero", lambda d, b: _finetune(d, "--learning-rate", "0"), "--learning-rate")
    cli("finetune-save-steps-negative", lambda d, b: _finetune(d, "--save-steps", "-5"), "--save-steps")
    cli(
        "validate-serve-port-too-high",
        lambda d, b: ["validate", "serve", str(b.validation_run), "--port", "70000"],
        "--port",
    )


# -- outputs that destroy inputs ----------------------------------------------------------------------


def _outputs_cases(case: Add) -> None:
    def out(name: str, build: Build) -> None:
        case(f"s27b-outputs/{name}", build)

    def report_md_over_metrics(d: Path, base: Base) -> tuple[list[str], str]:
        run = _run_copy(d, base)
        return _report(run, "--format", "md", "--out", str(run / "metrics.json")), "metrics.json"

    def report_html_over_predictions(d: Path, base: Base) -> tuple[list[str], str]:
        run = _run_copy(d, base)
        return _report(run, "--out", str(run / "predictions.jsonl")), "predictions.jsonl"

    def report_csv_over_second_run(d: Path, base: Base) -> tuple[list[str], str]:
        first, second = _run_copy(d, base), _run_copy(d, base, "second")
        args = ["report", str(first), str(second), "--format", "csv", "--out", str(second / "metrics.json")]
        return args, "metrics.json"

    def py_report_over_metrics(d: Path, base: Base) -> tuple[Callable[[], object], str]:
        run = _run_copy(d, base)
        return lambda: nlibias.make_report(run, run / "metrics.json", plots=False), "metrics.json"

    def masks_derive_over_source(d: Path, base: Base) -> tuple[list[str], str]:
        source = _source(d, base)
        target = _source_file(source)
        return ["masks", "derive", "--source", str(source), "--out", str(target)], target.name

    def masks_derive_over_stopwords(d: Path, base: Base) -> tuple[list[str], str]:
        words = d / "stop.txt"
        words.write_text("the\na\n", encoding="utf-8")
        args = [
            "masks",
            "derive",
            "--source",
            str(base.bbnli_dir),
            "--stopwords",
            str(words),
            "--out",
            str(words),
        ]
        return args, "stop.txt"

    def export_card_is_predictions(d: Path, base: Base) -> tuple[list[str], str]:
        run = _run_copy(d, base)
        return [
            "export",
            "model-index",
            str(run),
            "--card",
            str(run / "predictions.jsonl"),
        ], "predictions.jsonl"

    def finetune_out_is_model(d: Path, base: Base) -> tuple[list[str], str]:
        model = _model_dir(d, CLASSIFIER)
        args = _finetune(d, model=model)
        args[args.index("--out") + 1] = str(model)
        return args, "--out"

    def py_expand_into_source(d: Path, base: Base) -> tuple[Callable[[], object], str]:
        source = _source(d, base)
        return lambda: nlibias.expand("bbnli", source, out_dir=source), "out_dir"

    def masks_derive_out_a_folder(d: Path, base: Base) -> tuple[list[str], str]:
        (d / "folder").mkdir()
        return ["masks", "derive", "--source", str(base.bbnli_dir), "--out", str(d / "folder")], "folder"

    def report_out_a_folder(d: Path, base: Base) -> tuple[list[str], str]:
        (d / "folder").mkdir()
        return _report(base.run, "--format", "md", "--out", str(d / "folder")), "folder"

    for name, build in (
        ("cli-report-md-over-the-runs-metrics", report_md_over_metrics),
        ("cli-report-html-over-the-runs-predictions", report_html_over_predictions),
        ("cli-report-csv-over-the-second-runs-metrics", report_csv_over_second_run),
        ("python-report-over-the-runs-metrics", py_report_over_metrics),
        ("cli-masks-derive-over-a-bbnli-source-file", masks_derive_over_source),
        ("cli-masks-derive-over-its-stopwords", masks_derive_over_stopwords),
        ("cli-export-card-is-the-runs-predictions", export_card_is_predictions),
        ("cli-finetune-out-is-the-model-folder", finetune_out_is_model),
        ("python-expand-into-its-source", py_expand_into_source),
        ("cli-masks-derive-out-a-folder", masks_derive_out_a_folder),
        ("cli-report-out-a-folder", report_out_a_folder),
    ):
        out(name, build)


# -- the same thing twice -------------------------------------------------------------------------------


def _same_twice_cases(case: Add) -> None:
    def link(d: Path, base: Base) -> tuple[Path, Path]:
        run = _run_copy(d, base)
        os.symlink(run, d / "alias")
        return run, d / "alias"

    case(
        "s27b-twice/cli-report-one-run-twice",
        lambda d, b: (_report(b.run, str(b.run), "--format", "md"), "run"),
    )
    case(
        "s27b-twice/cli-report-a-run-and-its-symlink",
        lambda d, b: (_report(*map(str, link(d, b)), "--format", "md"), "alias"),
    )
    case(
        "s27b-twice/python-report-one-run-twice",
        lambda d, b: (lambda: nlibias.make_report([b.run, b.run], fmt="md"), "runs"),
    )
    case(
        "s27b-twice/python-audit-one-model-twice",
        lambda d, b: (
            lambda: nlibias.audit(b.samples, ["fake:m", "fake:m"], cache=False, progress=False, bootstrap=0),
            "given twice",
        ),
    )
    case(
        "s27b-twice/cli-audit-one-model-twice",
        lambda d, b: ([*audit_args(b.samples, d), "--model", "fake:m"], "given twice"),
    )
    case(
        "s27b-twice/cli-masks-derive-one-subtopic-twice",
        lambda d, b: (
            ["masks", "derive", "--subtopic", _subtopic(b), "--subtopic", _subtopic(b)],
            "--subtopic",
        ),
    )
    case(
        "s27b-twice/cli-report-debias-one-pair-twice",
        lambda d, b: (
            _report(b.run, "--debias", "--pair", "fake:m=fake:n", "--pair", "fake:m=fake:n"),
            "--pair",
        ),
    )


# -- options that apply to nothing ---------------------------------------------------------------------


def _nothing_cases(case: Add) -> None:
    def cli(name: str, build: Callable[[Path, Base], list[str]], flag: str) -> None:
        case(f"s27b-nothing/cli-{name}", lambda d, base: (build(d, base), flag))

    def py(name: str, call: Callable[[Path, Base], Callable[[], object]], named: str) -> None:
        case(f"s27b-nothing/python-{name}", lambda d, base: (call(d, base), named))

    cli(
        "report-pair-without-debias", lambda d, b: _report(b.run, "--format", "md", "--pair", "a=b"), "--pair"
    )
    py(
        "report-pairs-without-debias",
        lambda d, b: lambda: nlibias.make_report(b.run, fmt="md", pairs=["a=b"]),
        "pairs",
    )
    py(
        "report-min-effect-without-debias",
        lambda d, b: lambda: nlibias.make_report(b.run, fmt="md", min_effect=0.1),
        "min_effect",
    )
    cli("finetune-split-with-a-file", lambda d, b: _finetune(d, "--split", "test"), "--split")
    cli("augment-split-with-a-file", lambda d, b: _augment(d, "--split", "test"), "--split")
    cli(
        "score-answer-column-on-bbnli",
        lambda d, b: [*score_args(b, b.predictions, d), "--answer-column", "label"],
        "--answer-column",
    )
    py(
        "score-answer-column-on-bbnli",
        lambda d, b: lambda: nlibias.score(b.samples, b.predictions, bootstrap=0, answer_column="label"),
        "answer_column",
    )
    py(
        "expand-an-unknown-option",
        lambda d, b: lambda: nlibias.expand("bbnli", b.bbnli_dir, colour="red"),
        "colour",
    )
    py(
        "audit-a-generation-option-for-a-classifier",
        lambda d, b: (
            lambda: nlibias.audit(
                b.samples, "fake:m", cache=False, progress=False, bootstrap=0, temperature=0.5
            )
        ),
        "temperature",
    )
    cli(
        "finetune-warmup-ratio-with-constant-scheduler",
        lambda d, b: _finetune(d, "--lr-scheduler", "constant", "--warmup-ratio", "0.2"),
        "--warmup-ratio",
    )
    cli(
        "augment-her-model-with-the-rule",
        lambda d, b: _augment(d, "--her-model", str(_model_dir(d, "RobertaForMaskedLM"))),
        "--her-model",
    )
    cli(
        "demo-pairs-with-full",
        lambda d, b: ["demo", "--out", str(d / "demo"), "--full", "--pairs", "2", "--cache", str(_folder(d))],
        "--pairs",
    )
    py(
        "demo-pairs-with-full",
        lambda d, b: lambda: nlibias.demo(d / "demo", full=True, pairs=2, cache=_folder(d), progress=False),
        "pairs",
    )
    cli(
        "masks-list-source-with-one-subtopic",
        lambda d, b: ["masks", "list", "--source", str(b.bbnli_dir)],
        "--source",
    )
    cli(
        "export-model-index-model-not-in-run",
        lambda d, b: ["export", "model-index", str(b.run), "--model", "fake:nobody"],
        "fake:nobody",
    )
    py(
        "model-index-model-not-in-run",
        lambda d, b: lambda: nlibias.model_index(b.run, model="fake:nobody"),
        "fake:nobody",
    )
    cli(
        "masks-list-a-subtopic-that-does-not-exist",
        lambda d, b: ["masks", "list", "--source", str(b.bbnli_dir), "--subtopic", "no_such_subtopic"],
        "no_such_subtopic",
    )
    cli(
        "masks-derive-a-subtopic-that-does-not-exist",
        lambda d, b: ["masks", "derive", "--source", str(b.bbnli_dir), "--subtopic", "no_such_subtopic"],
        "no_such_subtopic",
    )


# -- a model in the wrong role ----------------------------------------------------------------------------


def _roles_cases(case: Add) -> None:
    case(
        "s27b-roles/cli-audit-model-a-causal-lm",
        lambda d, b: (_audit_model(d, b, "--model", _model_dir(d, "GPT2LMHeadModel")), "--model"),
    )
    case(
        "s27b-roles/cli-audit-mlm-a-classifier",
        lambda d, b: (_audit_model(d, b, "--mlm", _model_dir(d, CLASSIFIER)), "--mlm"),
    )
    case(
        "s27b-roles/python-audit-causal-a-masked-lm",
        lambda d, b: (
            lambda: nlibias.audit(
                b.samples,
                causal=str(_model_dir(d, "BertForMaskedLM")),
                cache=False,
                progress=False,
                bootstrap=0,
            ),
            "causal",
        ),
    )
    case(
        "s27b-roles/cli-augment-her-model-a-classifier",
        lambda d, b: (
            _augment(d, "--her", "lm", "--her-model", str(_model_dir(d, CLASSIFIER))),
            "classifier",
        ),
    )
    case(
        "s27b-roles/python-augment-her-model-a-classifier",
        lambda d, b: (
            lambda: nlibias.augment(
                _training(d / "data"), d / "aug", her="lm", her_model=str(_model_dir(d, CLASSIFIER))
            ),
            "classifier",
        ),
    )
    case(
        "s27b-roles/python-audit-generative-a-classifier-folder",
        lambda d, b: (
            lambda: nlibias.audit(
                b.samples, generative=str(_model_dir(d, CLASSIFIER)), cache=False, progress=False, bootstrap=0
            ),
            "generative",
        ),
    )


# -- damaged or foreign inputs, and the commands with no file to read --------------------------------------


def _damaged_cases(case: Add) -> None:
    def py(name: str, call: Callable[[Path, Base], Callable[[], object]], named: str) -> None:
        case(f"s27b-damaged/python-{name}", lambda d, base: (call(d, base), named))

    def cli(name: str, build: Callable[[Path, Base], list[str]], named: str, expect: str = "error") -> None:
        case(f"s27b-damaged/cli-{name}", lambda d, base: (build(d, base), named), expect)

    def run_with(d: Path, base: Base, name: str, body: str) -> Path:
        run = _run_copy(d, base)
        (run / name).write_text(body, encoding="utf-8")
        return run

    py("load-run-a-samples-folder", lambda d, b: lambda: nlibias.load_run(b.samples), "metrics.json")
    py(
        "load-run-metrics-a-list",
        lambda d, b: lambda: nlibias.load_run(run_with(d, b, "metrics.json", "[]")),
        "metrics.json",
    )
    py(
        "load-run-predictions-cut-mid-line",
        lambda d, b: (
            lambda: nlibias.load_run(
                run_with(
                    d, b, "predictions.jsonl", (b.run / "predictions.jsonl").read_text(encoding="utf-8")[:-40]
                )
            ).predictions_frame()
        ),
        "predictions.jsonl",
    )
    cli(
        "report-metrics-a-list",
        lambda d, b: _report(run_with(d, b, "metrics.json", "[]"), "--format", "md"),
        "metrics.json",
    )
    cli(
        "report-md-metrics-headline-a-string",
        lambda d, b: _report(
            run_with(
                d,
                b,
                "metrics.json",
                (b.run / "metrics.json")
                .read_text(encoding="utf-8")
                .replace("0.", '"0.', 1)
                .replace(",", '",', 1),
            ),
            "--format",
            "md",
        ),
        "metrics.json",
    )
    cli("schema-unknown-name", lambda d, b: ["schema", "metric"], "metric")
    cli("schema-two-names", lambda d, b: ["schema", "metrics", "manifest"], "manifest")
    case(
        "s27b-damaged/cli-masks-validate-a-folder",
        lambda d, b: (["masks", "validate", str(d)], d.name),
    )
    cli(
        "masks-list-templates-empty",
        lambda d, b: ["masks", "list", "--source", str(b.bbnli_dir), "--templates", str(_empty(d))],
        "empty.txt",
    )
    cli(
        "masks-derive-stopwords-binary",
        lambda d, b: ["masks", "derive", "--source", str(b.bbnli_dir), "--stopwords", str(_binary(d))],
        "stop.bin",
    )
    case(
        "s27b-damaged/cli-doctor-cache-a-folder",
        lambda d, b: (["doctor"], "warning"),
        "warn",
        env=lambda d: {"NLIBIAS_CACHE": str(d)},
    )
    cli(
        "report-run-whose-predictions-are-empty",
        lambda d, b: _report(run_with(d, b, "predictions.jsonl", ""), "--format", "md"),
        "predictions.jsonl",
    )
    cli(
        "score-bbq-run-with-bbnli-predictions",
        lambda d, b: [
            "score",
            "--samples",
            str(_bbq_run(d)),
            "--predictions",
            str(b.predictions),
            "--bootstrap",
            "0",
        ],
        "predictions",
    )


def _empty(d: Path) -> Path:
    path = d / "empty.txt"
    path.write_text("", encoding="utf-8")
    return path


def _binary(d: Path) -> Path:
    path = d / "stop.bin"
    path.write_bytes(bytes(range(256)) * 4)
    return path


def _folder(d: Path) -> Path:
    """A cache no audit can open (a text file), so a demo that got past its options fails fast; not a
    folder, which the cache option's declared type refuses before the options' combination."""
    path = d / "cache.txt"
    path.write_text("not a cache\n", encoding="utf-8")
    return path


def _audit_model(d: Path, base: Base, flag: str, model: Path) -> list[str]:
    args = audit_args(base.samples, d)
    args[args.index("--model") : args.index("--model") + 2] = [flag, str(model)]
    return args


# -- validate serve's HTTP API --------------------------------------------------------------------------------


def _http_cases(case: Add) -> None:
    hid = QUEUE_ROWS[0][0]

    def http(
        name: str, method: str, path: str, body: dict[str, Any] | None, named: str, **settings: Any
    ) -> None:
        case(
            f"s27b-http/python-{name}",
            lambda d, b: (_http(b, d, method, path, body and dict(body), **settings), named),
        )

    answer = {"hypothesis_id": hid, "annotator": "ann", "round": "category", "label": "valid"}
    http("answer-a-label-of-another-round", "POST", "/api/answer", {**answer, "label": "pro"}, "label")
    http(
        "answer-an-unknown-hypothesis",
        "POST",
        "/api/answer",
        {**answer, "hypothesis_id": "nope"},
        "hypothesis",
    )
    http(
        "answer-pro-for-an-invalid-hypothesis",
        "POST",
        "/api/answer",
        {**answer, "round": "stereotype-after-invalid", "label": "pro"},
        "valid",
    )
    http(
        "answer-as-another-annotator-than-fixed",
        "POST",
        "/api/answer",
        {**answer, "annotator": "mallory"},
        "annotator",
        annotator="ann",
    )
    http("answer-an-extra-field", "POST", "/api/answer", {**answer, "weight": 5}, "unexpected field")
    http(
        "answer-annotator-with-a-slash", "POST", "/api/answer", {**answer, "annotator": "../ann"}, "annotator"
    )
    http("items-annotator-empty", "GET", "/api/items?annotator=", None, "annotator")
    http(
        "answer-without-the-token",
        "POST",
        "/api/answer",
        answer,
        "token",
        token="a-long-enough-test-token-123",
    )


# -- plug-ins ---------------------------------------------------------------------------------------------------


def _plugin_cases(case: Add) -> None:
    def same_name_other_case(d: Path, base: Base) -> tuple[Callable[[], object], str]:
        from nlibias.catalog.registry import get_benchmark

        bbnli = get_benchmark("bbnli")
        return lambda: nlibias.register_benchmark(bbnli), "bbnli"

    case("s27b-plugins/python-register-bbnli-again", same_name_other_case, context=_plugin_registry)
    case(
        "s27b-plugins/python-register-a-string",
        lambda d, b: (lambda: nlibias.register_benchmark("lean"), "benchmark"),
        context=_plugin_registry,
    )


KNOWN: dict[str, str] = {}
"""Defects found by this round (strict xfails), by case name."""


# -- BBQ scored by a completions server -----------------------------------------------------------------------


def _served(d: Path, echo: Callable[[str], dict[str, Any]], *, choices: int = 0) -> Callable[[], object]:
    """An audit of a BBQ run whose options a fake completions server scores with ``echo(text)``
    (``choices``: answer only that many of a list of prompts)."""

    def reply(n: int, path: str, payload: dict[str, Any], headers: dict[str, str]) -> Any:
        texts = payload["prompt"] if isinstance(payload["prompt"], list) else [payload["prompt"]]
        if not payload.get("echo"):
            return 200, {}, {"choices": [{"index": 0, "text": ","}]}, 0.0
        shown = texts[:choices] if choices else texts
        return (
            200,
            {},
            {"choices": [{"index": k, "text": "", "logprobs": echo(t)} for k, t in enumerate(shown)]},
            0.0,
        )

    def audit() -> object:
        from test_openai_http import FakeServer

        run = _bbq_run(d)
        server = FakeServer(reply)
        try:
            model = f"openai-completions:{server.url}#m"
            return nlibias.audit(run, generative=model, cache=False, progress=False, bootstrap=0)
        finally:
            server.close()

    return audit


def _echo(value: Callable[[int], float | None]) -> Callable[[str], dict[str, Any]]:
    """As vLLM echoes: "<s>" then one token per 3 characters, the k-th scored ``value(k)``."""

    def echo(text: str) -> dict[str, Any]:
        pieces = ["<s>", *(text[s : s + 3] for s in range(0, len(text), 3)), "!"]
        return {
            "tokens": pieces,
            "text_offset": [sum(map(len, pieces[:k])) for k in range(len(pieces))],
            "token_logprobs": [None, *(value(k) for k in range(1, len(pieces) - 1)), -9.0],
        }

    return echo


def _server_cases(case: Add) -> None:
    def served(name: str, echo: Callable[[str], dict[str, Any]], named: str, choices: int = 0) -> None:
        case(f"s27b-server/python-audit-bbq-{name}", lambda d, b: (_served(d, echo, choices=choices), named))

    served("logprob-nan", _echo(lambda k: math.nan), "log-prob")
    served("logprob-positive", _echo(lambda k: 0.5), "log-prob")
    served("logprob-minus-inf", _echo(lambda k: -math.inf), "log-prob")
    served("logprob-missing-mid-prompt", _echo(lambda k: None if k == 5 else -0.1), "log-prob")
    served("fewer-choices-than-prompts", _echo(lambda k: -k / 10), "choices", choices=1)


# -- the gate's rules file: numbers in YAML spellings and beyond a measure's range ----------------------------


def _yaml_cases(case: Add) -> None:
    def rules(name: str, text: str, named: str) -> None:
        def build(d: Path, base: Base) -> tuple[list[str], str]:
            path = d / "gate.yaml"
            path.write_text(text, encoding="utf-8")
            return _gate(base.run, _run_copy(d, base), "--rules", str(path)), named

        case(f"s27b-numbers/yaml-gate-{name}", build)

    rules("margin-beyond-the-measures-range", "margin: 1000\n", "gate.yaml:1")
    rules(
        "measure-margin-beyond-its-range", "measures:\n  bbnli_bias_score:\n    margin: 250\n", "gate.yaml:3"
    )
    rules("bootstrap-a-float-spelling", "bootstrap: 1e3\n", "gate.yaml:1")
    case(
        "s27b-numbers/cli-gate-margin-beyond-the-measures-range",
        lambda d, b: (_gate(b.run, _run_copy(d, b), "--margin", "500"), "--margin"),
    )


GROUPS = (
    _twice_option_cases,
    _numbers_cases,
    _outputs_cases,
    _same_twice_cases,
    _nothing_cases,
    _roles_cases,
    _damaged_cases,
    _http_cases,
    _plugin_cases,
    _server_cases,
    _yaml_cases,
)


def s27b_cases() -> list[Case]:
    """Every case of this module, a known defect marked from :data:`KNOWN`."""
    return cases_of(GROUPS, KNOWN)
