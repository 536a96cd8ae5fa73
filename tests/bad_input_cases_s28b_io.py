"""Session 28's output-side bad inputs (``bad_input_cases_s28b``), part two: the helpers the
round shares, outputs that would destroy an input, the same thing twice, things not comparable
compared and derived files reused."""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import nlibias
from bad_input_cases_declared import _model_dir
from bad_input_cases_explain import _generated_run
from bad_input_cases_s26 import _extend_args, _gate, _rules, _run_copy
from bad_input_cases_s27 import _augment, _debias, _finetune, _judgements, _training, _vrun
from bad_input_cases_validate_explanations import explained_run
from bad_input_corpus import QUEUE_ROWS, Base, invoke

Build = Callable[[Path, Base], tuple[Any, str]]
Add = Callable[..., None]
CLASSIFIER = "RobertaForSequenceClassification"
HID = QUEUE_ROWS[0][0]


def _pair(d: Path, base: Base) -> tuple[Path, Path]:
    """Copies of the base run as candidate and baseline (a case may overwrite either)."""
    return _run_copy(d, base, "cand"), _run_copy(d, base, "ref")


_TINY: dict[Path, Path] = {}


def _tiny(base: Base) -> Path:
    """A tiny NLI classifier that loads (built once per base): debias reaches its premises."""
    if base.root not in _TINY:
        from nlibias.testing.tiny_models import build_tiny_nli_classifier

        _TINY[base.root] = build_tiny_nli_classifier(base.root / "tiny", ["The nurse said he was late."])
    return _TINY[base.root]


def _explain(run: Path, *extra: str) -> list[str]:
    return ["explain", str(run), "--judge", "fake:j", "--no-cache", *extra]


def _edit_line(path: Path, edit: Callable[[list[str]], list[str]]) -> Path:
    lines = path.read_text(encoding="utf-8").splitlines()
    path.write_text("\n".join(edit(lines)) + "\n", encoding="utf-8")
    return path


def _flip_first_label(lines: list[str]) -> list[str]:
    row = json.loads(lines[0])
    for key in ("label", "prediction", "predicted"):
        if key in row:
            row[key] = "entailment" if row[key] != "entailment" else "contradiction"
            break
    else:
        raise AssertionError(f"no label in {sorted(row)}")
    return [json.dumps(row), *lines[1:]]


def _until(args: list[str], stage: str) -> list[str]:
    args[args.index("--until") + 1] = stage
    return args


def _file(d: Path, name: str, data: str | bytes) -> Path:
    path = d / name
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(data, bytes):
        path.write_bytes(data)
    else:
        path.write_text(data, encoding="utf-8")
    return path


# -- outputs that destroy inputs -------------------------------------------------------------------


def _outputs_cases(case: Add) -> None:
    def gate(name: str, build: Callable[[Path, Base, Path, Path], tuple[list[str], str]]) -> None:
        def made(d: Path, base: Base) -> tuple[list[str], str]:
            cand, ref = _pair(d, base)
            extra, named = build(d, base, cand, ref)
            return _gate(cand, ref, *extra), named

        case(f"s28b-outputs/cli-gate-{name}", made)

    gate(
        "junit-a-dot-spelling-of-the-candidate-s-predictions",
        lambda d, b, c, r: (["--junit", f"{c}/./predictions.jsonl"], "--junit"),
    )
    gate(
        "markdown-a-parent-spelling-of-the-baseline-s-metrics",
        lambda d, b, c, r: (["--markdown", f"{r}/../ref/metrics.json"], "--markdown"),
    )

    def markdown_link_to_rules(d: Path, b: Base, c: Path, r: Path) -> tuple[list[str], str]:
        rules = _rules(d, "margin: 1\n")
        (d / "summary.md").symlink_to(rules)
        return ["--rules", str(rules), "--markdown", str(d / "summary.md")], "--markdown"

    gate("markdown-a-symlink-to-the-rules-file", markdown_link_to_rules)

    def junit_the_given_samples(d: Path, b: Base, c: Path, r: Path) -> tuple[list[str], str]:
        samples = _file(d, "s/samples.jsonl", (b.samples / "samples.jsonl").read_bytes())
        return ["--samples", str(samples), "--junit", str(samples)], "--junit"

    gate("junit-the-samples-file-given-with-samples", junit_the_given_samples)
    gate(
        "junit-the-candidate-s-tables",
        lambda d, b, c, r: (["--junit", str(c / "tables.txt")], "--junit"),
    )


def _report_outputs_cases(case: Add) -> None:
    def report(name: str, extra: Callable[[Path], list[str]]) -> None:
        def build(d: Path, base: Base) -> tuple[list[str], str]:
            run = _run_copy(d, base)
            return ["report", str(run), *extra(run), "--quiet"], "--out"

        case(f"s28b-outputs/cli-report-{name}", build)

    report("latex-out-the-run-s-manifest", lambda r: ["--format", "latex", "--out", str(r / "manifest.json")])
    report("html-out-a-dot-spelling-of-the-run-s-metrics", lambda r: ["--out", f"{r}/./metrics.json"])
    case(
        "s28b-outputs/python-report-md-out-the-run-s-manifest",
        lambda d, b: (
            lambda: nlibias.make_report(_run_copy(d, b), d / "run" / "manifest.json", fmt="md"),
            "out",
        ),
    )
    case(
        "s28b-outputs/cli-model-index-out-a-dot-spelling-of-the-run-s-manifest",
        lambda d, b: (
            ["export", "model-index", str(_run_copy(d, b)), "--out", f"{d / 'run'}/./manifest.json"],
            "--out",
        ),
    )

    def explain_cache(name: str, target: Callable[[Path], Path], explained: bool = False) -> None:
        def build(d: Path, base: Base) -> tuple[list[str], str]:
            run = explained_run(d, base) if explained else _generated_run(d, base)[0]
            args = ["explain", str(run), "--judge", "fake:j", "--bootstrap", "0", "--cache", str(target(run))]
            return args, "--cache"

        case(f"s28b-outputs/cli-explain-cache-{name}", build)

    explain_cache("the-run-s-metrics", lambda r: r / "metrics.json")
    explain_cache(
        "its-own-explanations-rows", lambda r: r / "explanations" / "explanations.jsonl", explained=True
    )


def _pipeline_outputs_cases(case: Add) -> None:
    def export_db(d: Path, base: Base) -> tuple[list[str], str]:
        run = _vrun(d, base)
        code, text, _ = invoke(["validate", "import", str(run), str(_judgements(d, "ana,valid,pro"))])
        assert code == 0, text
        db = run / "validation" / "annotations.sqlite"
        return ["validate", "export", str(run), "--out", str(db)], "--out"

    case("s28b-outputs/cli-validate-export-out-the-annotations-database", export_db)

    def extend_out_source(d: Path, base: Base) -> tuple[list[str], str]:
        shutil.copytree(Path(os.environ["NLIBIAS_DATA_DIR"]) / "bbnli", d / "src")
        args = [
            "extend",
            "--source",
            str(d / "src"),
            "--out",
            str(d / "src"),
            "--mlm",
            "fake",
            "--subtopic",
            "man_is_to_breadwinner",
        ]
        return [*args, "--until", "masks", "--cache", str(d / "c.sqlite"), "--no-progress"], "--out"

    case("s28b-outputs/cli-extend-out-the-source-folder", extend_out_source)

    def extend_cache_source(d: Path, base: Base) -> tuple[list[str], str]:
        shutil.copytree(Path(os.environ["NLIBIAS_DATA_DIR"]) / "bbnli", d / "src")
        source = next((d / "src").rglob("*.json"))
        config = _file(
            d, "config.yaml", f"source: {d / 'src'}\ncache: {source}\nsubtopics: [man_is_to_breadwinner]\n"
        )
        args = ["extend", "--config", str(config), "--out", str(d / "next"), "--mlm", "fake"]
        return [*args, "--until", "fill", "--no-progress"], str(source)

    case("s28b-outputs/yaml-extend-cache-a-source-file", extend_cache_source)

    def finetune_out_eval(d: Path, base: Base) -> tuple[list[str], str]:
        evaluation = _training(d / "eval")
        args = _finetune(d, "--eval", str(evaluation))
        args[args.index("--out") + 1] = str(evaluation)
        return args, "--out"

    case("s28b-outputs/cli-finetune-out-the-eval-file", finetune_out_eval)

    def augment_out_names(d: Path, base: Base) -> tuple[list[str], str]:
        names = _file(d, "names.tsv", "Anna\tAndrew\n")
        return [
            "augment",
            "gender-swap",
            "--train",
            str(_training(d / "data")),
            "--names",
            str(names),
            "--out",
            str(names),
        ], "--out"

    case("s28b-outputs/cli-augment-out-the-names-file", augment_out_names)

    def debias_out_premises(d: Path, base: Base) -> tuple[list[str], str]:
        premises = _file(d, "premises.txt", "The nurse went home.\n")
        args = _debias(d, "--premises", str(premises))
        args[args.index("--out") + 1] = str(premises)
        return args, "--out"

    case("s28b-outputs/cli-debias-out-the-premises-file", debias_out_premises)


# -- the same thing twice ------------------------------------------------------------------------


def _twice_cases(case: Add) -> None:
    def gate(name: str, build: Callable[[Path, Path, Path], list[str]], named: str) -> None:
        case(f"s28b-twice/cli-gate-{name}", lambda d, b: (build(d, *_pair(d, b)), named))

    gate(
        "rules-twice",
        lambda d, c, r: _gate(
            c, r, "--rules", str(_rules(d, "margin: 1\n")), "--rules", str(_file(d, "b.yaml", "margin: 2\n"))
        ),
        "--rules",
    )
    gate(
        "junit-twice",
        lambda d, c, r: _gate(c, r, "--junit", str(d / "a.xml"), "--junit", str(d / "b.xml")),
        "--junit",
    )
    gate("baseline-the-candidate-s-metrics-file", lambda d, c, r: _gate(c, c / "metrics.json"), "--baseline")
    case(
        "s28b-twice/python-gate-baseline-the-candidate-with-a-trailing-slash",
        lambda d, b: (lambda: nlibias.gate(_run_copy(d, b), f"{d / 'run'}/"), "baseline"),
    )
    case(
        "s28b-twice/cli-model-index-model-twice",
        lambda d, b: (
            ["export", "model-index", str(b.run), "--model", "fake:x", "--model", "fake:m"],
            "--model",
        ),
    )
    case(
        "s28b-twice/cli-lm-eval-prompt-twice",
        lambda d, b: (
            [
                "export",
                "lm-eval",
                "--samples",
                str(b.samples),
                "--out",
                str(d / "t"),
                "--prompt",
                "entailed",
                "--prompt",
                "true",
            ],
            "--prompt",
        ),
    )

    def lm_eval_duplicate(d: Path, base: Base) -> tuple[list[str], str]:
        lines = (base.samples / "samples.jsonl").read_text(encoding="utf-8").splitlines()
        path = _file(d, "s/samples.jsonl", "\n".join([*lines, lines[0]]) + "\n")
        return [
            "export",
            "lm-eval",
            "--samples",
            str(path),
            "--out",
            str(d / "t"),
        ], f"{path}:{len(lines) + 1}"

    case("s28b-twice/cli-lm-eval-samples-one-id-twice", lambda d, b: lm_eval_duplicate(d, b))


def _more_twice_cases(case: Add) -> None:
    def import_header_twice(d: Path, base: Base) -> tuple[list[str], str]:
        path = _file(
            d,
            "judgements.csv",
            "hypothesis_id,annotator,judgement,judgement,stereotype\n" + f"{HID},ana,valid,invalid,pro\n",
        )
        return ["validate", "import", str(_vrun(d, base)), str(path)], str(path)

    case("s28b-twice/cli-validate-import-csv-a-column-twice", import_header_twice)

    def import_json_key_twice(d: Path, base: Base) -> tuple[list[str], str]:
        task = (
            f'{{"id": 1, "data": {{"hypothesis_id": "{HID}"}}, "annotations": [], '
            '"annotations": [{"completed_by": {"email": "ana"}, "result": '
            '[{"from_name": "judgement", "value": {"choices": ["valid"]}}]}]}'
        )
        path = _file(d, "export.json", f"[{task}]")
        return ["validate", "import", str(_vrun(d, base)), str(path), "--format", "label-studio"], str(path)

    case("s28b-twice/cli-validate-import-label-studio-key-twice", import_json_key_twice)
    case(
        "s28b-twice/cli-augment-word-list-twice",
        lambda d, b: (_augment(d, "--word-list", "paper", "--word-list", "winobias"), "--word-list"),
    )

    def train_column_twice(d: Path, base: Base) -> tuple[list[str], str]:
        train = _file(
            d,
            "train.csv",
            "premise,hypothesis,label,label\nThe nurse said he ran.,She ran.,entailment,neutral\n",
        )
        return ["augment", "gender-swap", "--train", str(train), "--out", str(d / "aug")], str(train)

    case("s28b-twice/cli-augment-train-csv-a-column-twice", train_column_twice)

    def train_key_twice(d: Path, base: Base) -> tuple[list[str], str]:
        row = '{"premise": "The nurse said he ran.", "hypothesis": "She ran.", "label": "entailment", '
        train = _file(d, "train.jsonl", row + '"label": "contradiction"}\n')
        return ["augment", "gender-swap", "--train", str(train), "--out", str(d / "aug")], f"{train}:1"

    case("s28b-twice/cli-augment-train-jsonl-a-key-twice", train_key_twice)

    def train_tsv_column_twice(d: Path, base: Base) -> tuple[list[str], str]:
        train = _file(
            d, "train.tsv", "premise\thypothesis\tlabel\tlabel\nHe ran.\tShe ran.\tentailment\tneutral\n"
        )
        return ["augment", "gender-swap", "--train", str(train), "--out", str(d / "aug")], f"{train}:1"

    case("s28b-twice/cli-augment-train-tsv-a-column-twice", train_tsv_column_twice)

    def predictions_key_twice(d: Path, base: Base) -> tuple[list[str], str]:
        lines = base.predictions.read_text(encoding="utf-8").splitlines(keepends=True)
        lines[1] = lines[1].replace("{", '{"label": "contradiction", ', 1)  # the row's own comes last
        path = _file(d, "predictions.jsonl", "".join(lines))
        return ["score", "--samples", str(base.samples), "--predictions", str(path), "--out", str(d / "o")], (
            f"{path}:2"
        )

    case("s28b-twice/cli-score-predictions-a-key-twice", predictions_key_twice)

    def debias_model_spelt_twice(d: Path, base: Base) -> tuple[list[str], str]:
        folder = _model_dir(d, CLASSIFIER)
        return _debias(d, "--model", f"{folder}/", model=str(folder)), "--model"

    case("s28b-twice/cli-debias-one-model-spelt-two-ways", debias_model_spelt_twice)
    case(
        "s28b-twice/yaml-extend-two-filter-models-one-name",
        lambda d, b: (
            _extend_args(
                d, "filter:\n  models:\n    - {model: 'fake:a', name: x}\n    - {model: 'fake:b', name: x}\n"
            ),
            f"{d / 'config.yaml'}:4",
        ),
    )
    case(
        "s28b-twice/yaml-extend-compare-fills-the-fill-model-spelt-with-a-prefix",
        lambda d, b: (
            _extend_args(
                d, "mlm:\n  model: smollm2\nfilter:\n  compare_fills: ['causal:smollm2']\n", mlm=False
            ),
            f"{d / 'config.yaml'}:4",
        ),
    )


# -- things not comparable, compared; derived results reused -------------------------------------


def _comparable_cases(case: Add) -> None:
    def flipped(run: Path) -> Path:
        _edit_line(run / "predictions.jsonl", _flip_first_label)
        return run / "predictions.jsonl"

    def gate_flipped(d: Path, base: Base) -> tuple[list[str], str]:
        cand, ref = _pair(d, base)
        flipped(ref)
        return _gate(cand, ref), "predictions.jsonl"

    case("s28b-comparable/cli-gate-baseline-predictions-one-label-flipped", gate_flipped)

    def compare_flipped(d: Path, base: Base) -> tuple[list[str], str]:
        cand, ref = _pair(d, base)
        flipped(cand)
        return ["report", "--compare", str(ref), str(cand), "--format", "md", "--quiet"], "predictions.jsonl"

    case("s28b-comparable/cli-report-compare-predictions-one-label-flipped", compare_flipped)

    def index_flipped(d: Path, base: Base) -> tuple[list[str], str]:
        run = _run_copy(d, base)
        flipped(run)
        return ["export", "model-index", str(run)], "predictions.jsonl"

    case("s28b-comparable/cli-model-index-predictions-one-label-flipped", index_flipped)

    def explain_samples_predictions(d: Path, base: Base) -> tuple[list[str], str]:
        run, _ = _generated_run(d, base)
        return _explain(run, "--bootstrap", "0", "--samples", str(run / "predictions.jsonl")), str(
            run / "predictions.jsonl"
        )

    case("s28b-comparable/cli-explain-samples-the-run-s-predictions", explain_samples_predictions)
    case(
        "s28b-comparable/python-model-index-a-samples-folder",
        lambda d, b: (lambda: nlibias.model_index(b.samples), "metrics"),
    )

    def extend_rerun(name: str, until: str, damage: Callable[[Path], None]) -> None:
        def build(d: Path, base: Base) -> tuple[list[str], str]:
            args = _extend_args(d, "subtopics: [man_is_to_breadwinner]\n")
            args[args.index("--until") + 1] = until
            code, text, _ = invoke(args)
            assert code == 0, text
            damage(d / "next")
            return args, "warning"

        case(f"s28b-derived/cli-extend-rerun-{name}", build, "warn")

    extend_rerun(
        "after-a-masked-sample-was-duplicated",
        "masked",
        lambda r: _edit_line(r / "masked" / "samples.jsonl", lambda lines: [*lines, lines[0]]),
    )

    def queue_row_twice(d: Path, base: Base) -> tuple[list[str], str]:
        run = _vrun(d, base)
        queue = run / "validation" / "queue.csv"
        _edit_line(queue, lambda lines: [*lines, lines[1]])
        return ["validate", "status", str(run)], f"{queue}:5"

    case("s28b-damaged/cli-validate-status-queue-a-row-twice", queue_row_twice)
