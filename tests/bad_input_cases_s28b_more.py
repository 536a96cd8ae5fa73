"""Session 28's output-side bad inputs (``bad_input_cases_s28b``), part three: options that apply
to nothing, models in the wrong role, damaged files, wrong types and empty inputs."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import nlibias
from bad_input_cases_declared import _model_dir
from bad_input_cases_explain import _generated_run
from bad_input_cases_s26 import JUDGEMENT_HEADER, _extend_args, _gate, _run_copy
from bad_input_cases_s27 import _augment, _debias, _finetune, _training, _vrun
from bad_input_cases_s28b_io import CLASSIFIER, HID, Add, _explain, _file, _pair, _tiny, _until
from bad_input_corpus import Base

# -- options that apply to nothing, models in the wrong role -------------------------------------------


def _nothing_cases(case: Add) -> None:
    def explain_cli(name: str, extra: list[str], named: str) -> None:
        def build(d: Path, base: Base) -> tuple[list[str], str]:
            run, _ = _generated_run(d, base)
            return ["explain", str(run), "--judge", "fake:j", "--bootstrap", "0", *extra], named

        case(f"s28b-nothing/cli-explain-{name}", build)

    explain_cli("device-with-a-fake-judge", ["--no-cache", "--device", "cuda"], "--device")
    explain_cli("dtype-with-a-fake-judge", ["--no-cache", "--dtype", "float16"], "--dtype")
    explain_cli("cache-and-no-cache", ["--no-cache", "--cache", "c.sqlite"], "--no-cache")
    # both options named by their flags (the cache once spelt cache='c.sqlite', as in Python)
    explain_cli(
        "cache-and-no-cache-the-cache-by-its-flag",
        ["--no-cache", "--cache", "c.sqlite"],
        "--cache 'c.sqlite'",
    )
    case(
        "s28b-nothing/cli-audit-quantize-with-compile-both-by-their-flags",
        lambda d, b: (
            [
                *["audit", "--samples", str(b.samples), "--model", str(_tiny(b))],
                *["--out", str(d / "o"), "--bootstrap", "0", "--no-cache", "--quantize", "int8", "--compile"],
            ],
            "--quantize 'int8' and --compile",
        ),
    )

    def explain_py(d: Path, base: Base) -> tuple[Callable[[], object], str]:
        run, _ = _generated_run(d, base)
        return lambda: nlibias.explain(
            run, ["fake:j"], cache=False, bootstrap=0, progress=False, device="cuda"
        ), "device"

    case("s28b-nothing/python-explain-device-with-a-fake-judge", explain_py)
    case(
        "s28b-nothing/python-report-compare-a-string",
        lambda d, b: (lambda: nlibias.make_report(b.run, fmt="md", compare="yes"), "compare"),
    )
    case(
        "s28b-nothing/python-validation-prescreen-no-judge-at-all",
        lambda d, b: (lambda: nlibias.validation_prescreen(_vrun(d, b)), "judge"),
    )

    def extend_until_before_from(d: Path, base: Base) -> tuple[list[str], str]:
        args = _extend_args(d, "subtopics: [man_is_to_breadwinner]\n")
        return [*args, "--from", "filter"], "--from"

    case("s28b-nothing/cli-extend-until-a-stage-before-from", extend_until_before_from)
    case(
        "s28b-nothing/yaml-extend-templates-none-without-derive",
        lambda d, b: (
            _extend_args(
                d,
                "subtopics: [man_is_to_breadwinner]\ntemplates:\n  curated: none\n  derive: false\n",
            ),
            f"{d / 'config.yaml'}:3",
        ),
    )
    case(
        "s28b-nothing/yaml-extend-filter-models-empty",
        lambda d, b: (_extend_args(d, "filter:\n  models: []\n"), f"{d / 'config.yaml'}:1: field filter"),
    )
    case(
        "s28b-numbers/yaml-extend-policy-at-least-zero",
        lambda d, b: (
            _extend_args(d, "filter:\n  policy: at_least:0\n"),
            f"{d / 'config.yaml'}:1: field filter",
        ),
    )


def _roles_cases(case: Add) -> None:
    def roles_cli(name: str, build: Callable[[Path, Base], list[str]], named: str) -> None:
        case(f"s28b-roles/cli-{name}", lambda d, b: (build(d, b), named))

    roles_cli(
        "explain-judge-an-openai-server",
        lambda d, b: _explain(_generated_run(d, b)[0], "--judge", "openai:http://127.0.0.1:9/v1#m"),
        "--judge",
    )
    roles_cli(
        "explain-lm-judge-an-mlm-prefix",
        lambda d, b: _explain(_generated_run(d, b)[0], "--lm-judge", "mlm:roberta-base"),
        "--lm-judge",
    )
    roles_cli(
        "lm-eval-model-a-prompt-prefix",
        lambda d, b: (
            [
                "export",
                "lm-eval",
                "--samples",
                str(b.samples),
                "--out",
                str(d / "t"),
                "--model",
                "prompt:smollm2",
            ]
        ),
        "--model",
    )
    roles_cli(
        "finetune-model-an-openai-server",
        lambda d, b: _finetune(d, model="openai:http://127.0.0.1:9/v1#m"),
        "classifier",
    )
    roles_cli(
        "debias-model-a-gguf-file",
        lambda d, b: _debias(d, model=f"gguf:{_file(d, 'x.gguf', b'GGUF' + bytes(60))}"),
        "classifier",
    )
    case(
        "s28b-roles/yaml-extend-holdout-an-mlm-prefix",
        lambda d, b: (
            _extend_args(d, "filter:\n  holdout: ['mlm:bert-base-cased']\n"),
            f"{d / 'config.yaml'}:2",
        ),
    )
    case(
        "s28b-roles/yaml-extend-compare-fills-a-prompted-classifier",
        lambda d, b: (
            _extend_args(d, "filter:\n  compare_fills: ['prompt:smollm2']\n"),
            f"{d / 'config.yaml'}:2",
        ),
    )
    case(
        "s28b-roles/python-validation-prescreen-judge-a-generative-lm",
        lambda d, b: (lambda: nlibias.validation_prescreen(_vrun(d, b), judge="smollm2"), "judge"),
    )
    case(
        "s28b-roles/python-validation-prescreen-lm-judge-a-classifier-folder",
        lambda d, b: (
            lambda: nlibias.validation_prescreen(_vrun(d, b), lm_judge=str(_model_dir(d, CLASSIFIER))),
            "lm_judge",
        ),
    )


# -- damaged files, wrong types, empty inputs --------------------------------------------------------


def _damaged_cases(case: Add) -> None:
    def rules_file(name: str, data: bytes, line: int | None = None) -> None:
        def build(d: Path, base: Base) -> tuple[list[str], str]:
            path = _file(d, "gate.yaml", data)
            return _gate(*_pair(d, base), "--rules", str(path)), f"{path}:{line}" if line else str(path)

        case(f"s28b-damaged/yaml-gate-rules-{name}", build)

    rules_file("not-utf8", b"margin: 1\n# caf\xe9\n")
    rules_file("utf16", "margin: 1\n".encode("utf-16"))
    rules_file("two-documents", b"margin: 1\n---\nmargin: 2\n", 2)
    rules_file("empty", b"")
    rules_file("a-bare-number", b"5\n", 1)
    rules_file("only-comments", b"# margin: 0.5\n\n")
    case(
        "s28b-damaged/yaml-extend-config-only-comments",
        lambda d, b: (_extend_args(d, "# seed: 3\n"), str(d / "config.yaml")),
    )

    def metrics_duplicate_key(d: Path, base: Base) -> tuple[list[str], str]:
        run = _run_copy(d, base)
        path = run / "metrics.json"
        text = path.read_text(encoding="utf-8").strip()
        path.write_text(text[:1] + '"benchmark": "wq_nli", ' + text[1:], encoding="utf-8")
        return ["report", str(run), "--format", "md", "--quiet"], "metrics.json"

    case("s28b-damaged/cli-report-metrics-a-key-twice", metrics_duplicate_key)

    def metrics_cut(d: Path, base: Base) -> tuple[list[str], str]:
        run = _run_copy(d, base)
        path = run / "metrics.json"
        path.write_text(path.read_text(encoding="utf-8")[:-40], encoding="utf-8")
        return ["export", "model-index", str(run)], str(path)

    case("s28b-damaged/cli-model-index-metrics-cut", metrics_cut)

    def card(name: str, data: bytes) -> None:
        def build(d: Path, base: Base) -> tuple[list[str], str]:
            path = _file(d, "README.md", data)
            return ["export", "model-index", str(base.run), "--card", str(path)], str(path)

        case(f"s28b-damaged/cli-model-index-card-{name}", build)

    card("utf16", "---\nlicense: mit\n---\n# Model\n".encode("utf-16"))
    card("binary", bytes(range(256)) * 4)
    card("front-matter-a-bare-string", b"---\njust words\n---\n# Model\n")

    def import_file(name: str, data: bytes, fmt: str) -> None:
        def build(d: Path, base: Base) -> tuple[list[str], str]:
            path = _file(d, "export.json", data)
            return ["validate", "import", str(_vrun(d, base)), str(path), "--format", fmt], str(path)

        case(f"s28b-damaged/cli-validate-import-{name}", build)

    import_file("argilla-utf16", json.dumps([{"id": HID}]).encode("utf-16"), "argilla")
    import_file("label-studio-a-number", b"42", "label-studio")


def _damaged_training_cases(case: Add) -> None:
    def train(name: str, build: Callable[[Path], Path], command: str = "augment") -> None:
        def made(d: Path, base: Base) -> tuple[list[str], str]:
            path = build(d)
            if command == "augment":
                return ["augment", "gender-swap", "--train", str(path), "--out", str(d / "aug")], str(path)
            args = _finetune(d)
            args[args.index("--train") + 1] = str(path)
            return args, str(path)

        case(f"s28b-damaged/cli-{command}-train-{name}", made)

    train(
        "utf16",
        lambda d: _file(
            d,
            "train.jsonl",
            (json.dumps({"premise": "He ran.", "hypothesis": "She ran.", "label": "neutral"}) + "\n").encode(
                "utf-16"
            ),
        ),
    )
    train(
        "last-line-cut",
        lambda d: _file(d, "t/train.jsonl", _training(d / "t").read_text(encoding="utf-8")[:-30]),
        command="finetune",
    )
    train("a-header-only-csv", lambda d: _file(d, "train.csv", "premise,hypothesis,label\n"))
    train("empty", lambda d: _file(d, "train.jsonl", ""), command="finetune")

    def premises(name: str, data: bytes) -> None:
        def build(d: Path, base: Base) -> tuple[list[str], str]:
            path = _file(d, "premises.txt", data)
            return _debias(d, "--premises", str(path), model=str(_tiny(base))), str(path)

        case(f"s28b-damaged/cli-debias-premises-{name}", build)

    premises("not-utf8", b"The nurse went home.\nThe caf\xe9 owner left.\n")
    premises("empty", b"")

    def names_empty(d: Path, base: Base) -> tuple[list[str], str]:
        names = _file(d, "names.tsv", "")
        return _augment(d, "--names", str(names)), str(names)

    case("s28b-empty/cli-augment-names-empty", names_empty)

    def lm_eval_empty(d: Path, base: Base) -> tuple[list[str], str]:
        path = _file(d, "s/samples.jsonl", "")
        return ["export", "lm-eval", "--samples", str(path), "--out", str(d / "t")], str(path)

    case("s28b-empty/cli-lm-eval-samples-empty", lm_eval_empty)

    def import_no_queue_match(d: Path, base: Base) -> tuple[list[str], str]:
        path = _file(d, "judgements.csv", JUDGEMENT_HEADER + "h000000000000,ana,valid,pro\n")
        return ["validate", "import", str(_vrun(d, base)), str(path)], f"{path}:2"

    case("s28b-empty/cli-validate-import-every-row-an-unknown-hypothesis", import_no_queue_match)
    case(
        "s28b-empty/python-make-report-no-runs",
        lambda d, b: (lambda: nlibias.make_report([], fmt="md"), "runs"),
    )
    case(
        "s28b-empty/python-debias-no-models",
        lambda d, b: (
            lambda: nlibias.debias_models([], _training(d / "data"), d / "deb", progress=False),
            "models",
        ),
    )


def _wrong_type_cases(case: Add) -> None:
    def py(name: str, call: Callable[[Path, Base], Callable[[], object]], named: str) -> None:
        case(f"s28b-damaged/python-{name}", lambda d, b: (call(d, b), named))

    py("make-report-fmt-pdf", lambda d, b: lambda: nlibias.make_report(b.run, fmt="pdf"), "fmt")
    py("model-index-model-an-int", lambda d, b: lambda: nlibias.model_index(b.run, model=5), "model")
    py("model-index-name-an-int", lambda d, b: lambda: nlibias.model_index(b.run, name=123), "name")
    py(
        "export-lm-eval-prompt-unknown",
        lambda d, b: lambda: nlibias.export_lm_eval(b.samples, d / "t", prompt="maybe"),
        "prompt",
    )
    py(
        "validation-export-fmt-xlsx",
        lambda d, b: lambda: nlibias.validation_export(_vrun(d, b), fmt="xlsx"),
        "fmt",
    )
    py(
        "gate-pairs-a-list",
        lambda d, b: lambda: nlibias.gate(b.run, _run_copy(d, b), pairs=[("fake:m", "fake:m")]),
        "pairs",
    )
    py(
        "gate-samples-the-baseline-s-predictions",
        lambda d, b: lambda: nlibias.gate(b.run, _run_copy(d, b), samples=d / "run" / "predictions.jsonl"),
        "predictions.jsonl",
    )
    py(
        "explain-judges-blank",
        lambda d, b: lambda: nlibias.explain(_generated_run(d, b)[0], " ", cache=False, bootstrap=0),
        "judges",
    )
    py(
        "augment-word-list-blank",
        lambda d, b: lambda: nlibias.augment(_training(d / "data"), d / "aug", word_list=""),
        "word_list",
    )
    py("gate-candidate-blank", lambda d, b: lambda: nlibias.gate("", b.run), "candidate")
    case(
        "s28b-damaged/cli-augment-out-blank",
        lambda d, b: (
            ["augment", "gender-swap", "--train", str(_training(d / "data")), "--out", ""],
            "--out",
        ),
    )


def _unknown_value_cases(case: Add) -> None:
    def cli(name: str, build: Callable[[Path, Base], list[str]], named: str) -> None:
        case(f"s28b-damaged/cli-{name}", lambda d, b: (build(d, b), named))

    cli("report-format-pdf", lambda d, b: ["report", str(b.run), "--format", "pdf"], "--format")
    cli(
        "validate-export-format-xlsx",
        lambda d, b: ["validate", "export", str(_vrun(d, b)), "--format", "xlsx"],
        "--format",
    )
    cli(
        "validate-status-rule-unknown",
        lambda d, b: ["validate", "status", str(_vrun(d, b)), "--rule", "vote"],
        "--rule",
    )
    cli(
        "validate-status-exclude-blank",
        lambda d, b: ["validate", "status", str(_vrun(d, b)), "--exclude", ""],
        "--exclude",
    )

    def extend_yaml(name: str, text: str, line: int) -> None:
        case(
            f"s28b-damaged/yaml-extend-{name}",
            lambda d, b: (_extend_args(d, text), f"{d / 'config.yaml'}:{line}"),
        )

    extend_yaml("block-list-a-string", "mlm:\n  block_list: the\n", 2)
    extend_yaml("subtopics-a-string", "subtopics: man_is_to_breadwinner\n", 1)
    extend_yaml("subtopic-unknown", "subtopics: [man_is_to_astronaut]\n", 1)
    case(
        "s28b-damaged/yaml-extend-mlm-dtype-unknown",
        lambda d, b: (
            _until(
                _extend_args(
                    d,
                    "subtopics: [man_is_to_breadwinner]\nmlm:\n  model: smollm2\n  dtype: float8\n",
                    mlm=False,
                ),
                "fill",
            ),
            f"{d / 'config.yaml'}:4",
        ),
    )
    extend_yaml("filter-a-list", "filter:\n  - fake:a\n", 1)
