"""A fresh set of bad inputs of issue #48's classes (session 26's acceptance check), part of the
corpus of ``bad_input_cases``: numbers no decision can use, outputs that destroy inputs, the same
thing twice, things not comparable compared, derived files that do not check out, options that
apply to nothing, models in the wrong role and plug-ins, each through the command line, YAML (gate
rules, extend configurations, model cards) and Python where the route exists. None repeats an
example of the issue or an earlier case of the corpus."""

from __future__ import annotations

import importlib.metadata
import json
import math
import os
import shutil
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

import nlibias
from bad_input_cases_declared import _model_dir
from bad_input_cases_explain import _generated_run
from bad_input_cases_routes import _TABLES, _install, _plugin_registry
from bad_input_cases_validate_explanations import explained_run
from bad_input_corpus import QUEUE_ROWS, Base, Case, audit_args, cases_of, score_args
from nlibias.runtime.cache import PredictionCache

Build = Callable[[Path, Base], tuple[Any, str]]


def _run_copy(d: Path, base: Base, name: str = "run") -> Path:
    run = d / name
    shutil.copytree(base.run, run)
    return run


def _gate(candidate: Path, baseline: Path | None, *extra: str) -> list[str]:
    args = ["gate", str(candidate), "--quiet"]
    return [*args, "--baseline", str(baseline), *extra] if baseline else [*args, *extra]


def _rules(d: Path, text: str) -> Path:
    path = d / "gate.yaml"
    path.write_text(text, encoding="utf-8")
    return path


JUDGEMENT_HEADER = "hypothesis_id,annotator,judgement,stereotype\n"


def _extend_args(d: Path, text: str, *, mlm: bool = True) -> list[str]:
    """``extend --until masks`` with this configuration (``--mlm fake`` unless ``mlm`` is False)."""
    path = d / "config.yaml"
    path.write_text(text, encoding="utf-8")
    args = ["extend", "--config", str(path), "--out", str(d / "next"), "--until", "masks"]
    return [*args, *(["--mlm", "fake"] if mlm else []), "--cache", str(d / "c.sqlite"), "--no-progress"]


def _extend_yaml(
    case: Callable[..., None], group: str, name: str, text: str, line: int | str, known: str = ""
) -> None:
    """A configuration refused naming ``config.yaml:LINE`` (LINE may go on with the field)."""
    case(
        f"s26-{group}/yaml-extend-{name}",
        lambda d, base: (_extend_args(d, text), f"{d / 'config.yaml'}:{line}"),
        known=known,
    )


def masked_lm_as_classifier(d: Path, base: Base) -> tuple[list[str], str]:
    folder = d / "masked-lm"
    folder.mkdir()
    sizes = {"vocab_size": 100, "hidden_size": 8, "num_hidden_layers": 1, "num_attention_heads": 1}
    config = {"architectures": ["BertForMaskedLM"], "model_type": "bert", "intermediate_size": 8, **sizes}
    (folder / "config.json").write_text(json.dumps(config), encoding="utf-8")
    args = audit_args(base.samples, d)
    args[args.index("fake:m")] = str(folder)
    return args, "--model"


def _train(d: Path) -> Path:
    d.mkdir(parents=True, exist_ok=True)
    path = d / "train.jsonl"
    row = {"premise": "A nurse left.", "hypothesis": "A nurse.", "label": "entailment"}
    path.write_text(json.dumps(row) + "\n", encoding="utf-8")
    return path


def _gate_rules(case: Callable[..., None], group: str, name: str, text: str, line: int) -> None:
    """A gate rules file refused naming ``gate.yaml:LINE``."""

    def build(d: Path, base: Base) -> tuple[list[str], str]:
        path = _rules(d, text)
        return _gate(base.run, _run_copy(d, base), "--rules", str(path)), f"{path}:{line}"

    case(f"s26-{group}/yaml-gate-{name}", build)


def _numbers_cases(case: Callable[..., None]) -> None:
    """Numbers that make a decision impossible or meaningless."""

    def rules(name: str, text: str, line: int) -> None:
        _gate_rules(case, "numbers", name, text, line)

    rules("margin-negative", "margin: -1\n", 1)
    rules("confidence-one", "confidence: 1\n", 1)
    rules("confidence-zero", "confidence: 0\n", 1)
    rules("measure-margin-inf", "measures:\n  bbnli_bias_score:\n    margin: .inf\n", 3)
    rules("measure-max-abs-nan", "measures:\n  bbnli_bias_score:\n    max_abs: .nan\n", 3)
    rules("bootstrap-zero", "bootstrap: 0\n", 1)
    rules("max-detectable-negative", "max_detectable: -2\n", 1)
    rules("seed-a-word", "seed: seven\n", 1)
    rules("bootstrap-fractional", "bootstrap: 1000.5\n", 1)
    rules("extend-style-seed-negative", "seed: -3\n", 1)

    def undecidable(name: str, text: str) -> None:
        def build(d: Path, base: Base) -> tuple[list[str], str]:
            path = _rules(d, text)
            return _gate(base.run, _run_copy(d, base), "--rules", str(path)), "bootstrap"

        case(f"s26-numbers/yaml-gate-{name}", build)

    undecidable("bootstrap-50-over-three-slicings", "bootstrap: 50\nslices: [overall, domain, subtopic]\n")

    def beyond_range(d: Path, base: Base) -> tuple[list[str], str]:
        path = _rules(d, "measures:\n  bbnli_bias_score:\n    margin: 250\n")
        return _gate(base.run, _run_copy(d, base), "--rules", str(path)), f"{path}:3"

    case("s26-numbers/yaml-gate-measure-margin-beyond-any-score", beyond_range)

    def limit_beyond_range(d: Path, base: Base) -> tuple[list[str], str]:
        path = _rules(d, "measures:\n  bbnli_bias_score:\n    max_abs: 150\n")
        return _gate(base.run, None, "--rules", str(path)), f"{path}:3"

    case("s26-numbers/yaml-gate-max-abs-beyond-any-score", limit_beyond_range)

    def cli_gate(name: str, *extra: str) -> None:
        case(
            f"s26-numbers/cli-gate-{name}",
            lambda d, base: (_gate(base.run, _run_copy(d, base), *extra), "--margin"),
        )

    cli_gate("margin-nan", "--margin", "nan")
    cli_gate("margin-negative", "--margin", "-0.5")
    case(
        "s26-numbers/cli-gate-margin-beyond-any-score",
        lambda d, base: (_gate(base.run, _run_copy(d, base), "--margin", "500"), "--margin"),
    )

    def py_gate(name: str, **options: Any) -> None:
        def build(d: Path, base: Base) -> tuple[Callable[[], object], str]:
            baseline = _run_copy(d, base)
            return lambda: nlibias.gate(base.run, baseline, **options), next(iter(options))

        case(f"s26-numbers/python-gate-{name}", build)

    py_gate("margin-nan", margin=math.nan)
    py_gate("margin-bool", margin=True)
    py_gate("margin-string", margin="1")

    def gate_rules_object(d: Path, base: Base) -> tuple[Callable[[], object], str]:
        from nlibias.jobs.gate_rules import GateRules

        baseline, rules = _run_copy(d, base), GateRules(bootstrap=30)  # two slices: 39 or more decide
        return lambda: nlibias.gate(base.run, baseline, rules=rules), "bootstrap"

    case("s26-numbers/python-gate-rules-bootstrap-too-few-to-decide", gate_rules_object)

    def explain_threshold(d: Path, base: Base) -> tuple[list[str], str]:
        run, _ = _generated_run(d, base)
        return ["explain", str(run), "--judge", "fake:j", "--no-cache", "--threshold", "1.5"], "--threshold"

    case("s26-numbers/cli-explain-threshold-above-one", explain_threshold)
    case(
        "s26-numbers/cli-audit-limit-zero",
        lambda d, base: ([*audit_args(base.samples, d), "--limit", "0"], "--limit"),
    )
    case(
        "s26-numbers/cli-score-one-resample",
        lambda d, base: ([*score_args(base, base.predictions, d)[:-2], "--bootstrap", "1"], "--bootstrap"),
    )
    case(
        "s26-numbers/python-score-two-resamples",
        lambda d, base: (lambda: nlibias.score(base.samples, base.predictions, bootstrap=2), "bootstrap"),
    )
    case(
        "s26-numbers/python-audit-bootstrap-string",
        lambda d, base: (
            lambda: nlibias.audit(base.samples, ["fake:m"], cache=False, progress=False, bootstrap="100"),
            "bootstrap",
        ),
    )
    case(
        "s26-numbers/python-score-bootstrap-float",
        lambda d, base: (lambda: nlibias.score(base.samples, base.predictions, bootstrap=10.0), "bootstrap"),
    )
    case(
        "s26-numbers/python-prescreen-threshold-nan",
        lambda d, base: (
            lambda: nlibias.validation_prescreen(base.validation_run, judge="fake:j", threshold=math.nan),
            "threshold",
        ),
    )

    _extend_yaml(case, "numbers", "top-k-negative", "mlm:\n  top_k: -3\n", 2)
    for option, value in (("epochs", math.nan), ("warmup_ratio", 1.0)):
        case(
            f"s26-numbers/python-finetune-{option}-{value}",
            lambda d, base, option=option, value=value: (
                lambda: nlibias.finetune("fake:m", _train(d), d / "ft", **{option: value}),
                option,
            ),
        )
    case(
        "s26-numbers/python-audit-limit-bool",
        lambda d, base: (
            lambda: nlibias.audit(
                base.samples, ["fake:m"], cache=False, progress=False, bootstrap=0, limit=True
            ),
            "limit",
        ),
    )
    case(
        "s26-numbers/python-validation-status-min-annotators-bool",
        lambda d, base: (
            lambda: nlibias.validation_status(base.validation_run, min_annotators=True),
            "min_annotators",
        ),
    )
    for flag, value in (("--max-tokens", "0"), ("--threads", "0"), ("--ray-workers", "0")):
        case(
            f"s26-numbers/cli-audit{flag}-{value}",
            lambda d, base, flag=flag, value=value: ([*audit_args(base.samples, d), flag, value], flag),
        )

    def explanations_size(d: Path, base: Base) -> tuple[list[str], str]:
        run = explained_run(d, base)
        return ["validate", "explanations", str(run), "--size", "0"], "--size"

    case("s26-numbers/cli-validate-explanations-size-zero", explanations_size)
    case(
        "s26-numbers/cli-export-model-index-name-blank",
        lambda d, base: (["export", "model-index", str(base.run), "--name", " "], "--name"),
    )
    _extend_yaml(case, "numbers", "seed-negative", "seed: -4\n", 1)
    _extend_yaml(case, "numbers", "max-tokens-zero", "mlm:\n  max_tokens: 0\n", 2)


def _outputs_cases(case: Callable[..., None]) -> None:
    """Outputs that would destroy an input of the same command."""

    def gate_baseline_predictions(d: Path, base: Base) -> tuple[list[str], str]:
        baseline = _run_copy(d, base)
        out = str(baseline / "predictions.jsonl")
        return _gate(base.run, baseline, "--markdown", out), "--markdown"

    def gate_samples(d: Path, base: Base) -> tuple[list[str], str]:
        samples = d / "samples.jsonl"
        shutil.copy(base.samples / "samples.jsonl", samples)
        args = _gate(base.run, _run_copy(d, base), "--samples", str(samples), "--junit", str(samples))
        return args, "--junit"

    def gate_hardlink(d: Path, base: Base) -> tuple[list[str], str]:
        candidate = _run_copy(d, base, "cand")
        os.link(candidate / "metrics.json", d / "gate.md")
        return _gate(candidate, _run_copy(d, base), "--markdown", str(d / "gate.md")), "--markdown"

    def export_link(d: Path, base: Base) -> tuple[list[str], str]:
        run = _run_copy(d, base)
        (d / "index.yaml").symlink_to(run / "metrics.json")
        return ["export", "model-index", str(run), "--out", str(d / "index.yaml")], "--out"

    def validate_hardlink(d: Path, base: Base) -> tuple[list[str], str]:
        run = d / "vrun"
        shutil.copytree(base.validation_run, run)
        os.link(run / "validation" / "queue.csv", d / "export.csv")
        return ["validate", "export", str(run), "--out", str(d / "export.csv")], "--out"

    def report_md_link(d: Path, base: Base) -> tuple[list[str], str]:
        run = _run_copy(d, base)
        (d / "tables.md").symlink_to(run / "manifest.json")
        return ["report", str(run), "--format", "md", "--out", str(d / "tables.md")], "--out"

    case("s26-outputs/cli-gate-markdown-is-the-baseline-s-predictions", gate_baseline_predictions)
    case("s26-outputs/cli-gate-junit-is-the-samples-file", gate_samples)
    case("s26-outputs/cli-gate-markdown-a-hard-link-to-the-candidate-s-metrics", gate_hardlink)
    case("s26-outputs/cli-export-out-a-link-to-the-run-s-metrics", export_link)
    case("s26-outputs/cli-validate-export-out-a-hard-link-to-the-queue", validate_hardlink)
    case("s26-outputs/cli-report-out-a-link-to-the-run-s-manifest", report_md_link)

    def py_report(d: Path, base: Base) -> tuple[Callable[[], object], str]:
        run = _run_copy(d, base)
        return lambda: nlibias.make_report(run, out=run / "metrics.json", fmt="md"), "out"

    def py_validation_export(d: Path, base: Base) -> tuple[Callable[[], object], str]:
        run = d / "vrun"
        shutil.copytree(base.validation_run, run)
        return lambda: nlibias.validation_export(run, out=run / "validation" / "queue.csv"), "out"

    def cache_is_samples(d: Path, base: Base) -> tuple[list[str], str]:
        samples = d / "samples"
        shutil.copytree(base.samples, samples)
        args = audit_args(samples, d)
        args[args.index("--no-cache")] = "--cache"
        return [*args[:-1], str(samples / "samples.jsonl"), "--quiet"], "--cache"

    def cache_is_own_metrics(d: Path, base: Base) -> tuple[list[str], str]:
        args = audit_args(base.samples, d)
        args[args.index("--no-cache")] = "--cache"
        return [*args[:-1], str(d / "o" / "metrics.json"), "--quiet"], "--cache"

    def py_cache_is_samples(d: Path, base: Base) -> tuple[Callable[[], object], str]:
        samples = d / "samples"
        shutil.copytree(base.samples, samples)
        return lambda: nlibias.audit(
            samples, ["fake:m"], cache=samples / "samples.jsonl", progress=False
        ), "cache"

    case("s26-outputs/cli-audit-cache-is-the-samples-file", cache_is_samples)

    def py_cache_replaced(d: Path, base: Base) -> tuple[Callable[[], object], str]:
        cache = d / "o" / "metrics.json"
        with PredictionCache(cache) as opened:  # replaced while open (audit --out o --cache o/... is refused)
            opened.put_many([("k", [0.2, 0.3, 0.5])])
            nlibias.audit(base.samples, ["fake:m"], cache=False, out_dir=d / "o", bootstrap=0, progress=False)
        return lambda: nlibias.audit(
            base.samples, ["fake:m"], cache=cache, out_dir=d / "p", bootstrap=0, progress=False
        ), str(cache)

    def finetune_into_model(d: Path, base: Base) -> tuple[list[str], str]:
        folder = _model_dir(d, "RobertaForSequenceClassification")
        return ["finetune", "--model", str(folder), "--train", str(_train(d)), "--out", str(folder)], "--out"

    def augment_out_link(d: Path, base: Base) -> tuple[list[str], str]:
        train = _train(d / "data")
        (d / "aug").symlink_to(d / "data")
        return ["augment", "gender-swap", "--train", str(train), "--out", str(d / "aug")], "--out"

    def gate_junit_folder(d: Path, base: Base) -> tuple[list[str], str]:
        (d / "junit").mkdir()
        return _gate(base.run, _run_copy(d, base), "--junit", str(d / "junit")), "--junit"

    def explain_cache_predictions(d: Path, base: Base) -> tuple[list[str], str]:
        run, _ = _generated_run(d, base)
        return [
            "explain",
            str(run),
            "--judge",
            "fake:j",
            "--cache",
            str(run / "predictions.jsonl"),
        ], "--cache"

    def masks_derive_source(d: Path, base: Base) -> tuple[list[str], str]:
        source = d / "bbnli"
        shutil.copytree(base.bbnli_dir, source)
        target = next(source.rglob("*.json"))
        return ["masks", "derive", "--source", str(source), "--out", str(target)], "--out"

    case("s26-outputs/cli-finetune-out-is-the-base-model", finetune_into_model)
    case("s26-outputs/cli-augment-out-a-link-to-the-training-folder", augment_out_link)
    case("s26-outputs/cli-gate-junit-a-folder", gate_junit_folder)
    case("s26-outputs/cli-explain-cache-is-the-run-s-predictions", explain_cache_predictions)
    case("s26-outputs/cli-masks-derive-out-a-source-file", masks_derive_source)
    case("s26-outputs/cli-audit-cache-is-its-own-metrics", cache_is_own_metrics)
    case("s26-outputs/python-audit-cache-is-the-samples-file", py_cache_is_samples)
    case("s26-outputs/python-audit-cache-now-another-run-s-metrics", py_cache_replaced)
    case("s26-outputs/python-report-out-is-the-run-s-metrics", py_report)
    case("s26-outputs/python-validation-export-out-is-the-queue", py_validation_export)

    def card(
        name: str, body: bytes, line: int | str, *, folder_mode: int | None = None, link: bool = False
    ) -> None:
        def build(d: Path, base: Base) -> tuple[list[str], str]:
            folder = d / "card"
            folder.mkdir()
            path = folder / "README.md"
            if link:
                path.symlink_to(folder / "gone.md")
            elif body:
                path.write_bytes(body)
            else:
                path.mkdir()
            if folder_mode is not None:
                folder.chmod(folder_mode)
            named = f"{path}{line}" if isinstance(line, str) else f"{path}:{line}" if line else str(path)
            return ["export", "model-index", str(base.run), "--card", str(path)], named

        case(f"s26-outputs/card-{name}", build)

    card("a-dangling-link", b"", 0, link=True)
    card("is-a-folder", b"", 0)
    card("metadata-key-twice", b"---\nlicense: mit\nlicense: apache-2.0\n---\n# m\n", 3)
    card("model-index-a-number", b"---\nmodel-index: 5\n---\n# m\n", ": field model-index")
    card(
        "model-index-entry-a-string", b"---\nmodel-index:\n  - just a name\n---\n# m\n", ": field model-index"
    )


def _twice_cases(case: Callable[..., None]) -> None:
    """The same thing twice."""

    def gate_link(d: Path, base: Base) -> tuple[list[str], str]:
        run = _run_copy(d, base)
        (d / "link").symlink_to(run)
        return _gate(run, d / "link"), "--baseline"

    def py_gate_link(d: Path, base: Base) -> tuple[Callable[[], object], str]:
        run = _run_copy(d, base)
        (d / "link").symlink_to(run)
        return lambda: nlibias.gate(d / "link", run), "baseline"

    case("s26-twice/cli-gate-baseline-a-link-to-the-candidate", gate_link)
    case("s26-twice/python-gate-baseline-a-link-to-the-candidate", py_gate_link)

    def rules(name: str, text: str, line: int) -> None:
        _gate_rules(case, "twice", name, text, line)

    rules("measure-twice", "measures:\n  bbnli_bias_score: {margin: 1}\n  bbnli_bias_score: {margin: 5}\n", 3)
    rules("key-twice", "margin: 1\nmargin: 0\n", 2)
    case(
        "s26-twice/cli-audit-model-twice",
        lambda d, base: ([*audit_args(base.samples, d), "--model", "fake:m"], "--model"),
    )
    case(
        "s26-twice/python-audit-model-twice",
        lambda d, base: (
            lambda: nlibias.audit(
                base.samples, ["fake:m", "fake:m"], cache=False, progress=False, bootstrap=0
            ),
            "models",
        ),
    )
    case(
        "s26-twice/python-score-predictions-twice",
        lambda d, base: (
            lambda: nlibias.score(base.samples, [base.predictions, base.predictions], bootstrap=0),
            "predictions",
        ),
    )
    case(
        "s26-twice/cli-score-predictions-twice",
        lambda d, base: (
            [*score_args(base, base.predictions, d), "--predictions", str(base.predictions)],
            "--predictions",
        ),
    )
    twice = "subtopics: [man_is_to_breadwinner, man_is_to_breadwinner]\n"
    _extend_yaml(case, "twice", "subtopics-twice", twice, "1: field subtopics.1")
    twice = "filter:\n  models: [{model: fake:a}, {model: fake:a}]\n"
    _extend_yaml(case, "twice", "filter-model-twice", twice, "2: field filter.models.1")
    both = "filter:\n  models: [{model: fake:a}]\n  holdout: [{model: fake:a}]\n"
    _extend_yaml(case, "twice", "holdout-also-a-filter-model", both, "3: field filter.holdout.0")

    case(
        "s26-twice/python-report-compare-one-run-twice",
        lambda d, base: (lambda: nlibias.make_report([base.run, base.run], fmt="md", compare=True), "runs"),
    )
    case(
        "s26-twice/python-report-compare-one-run",
        lambda d, base: (lambda: nlibias.make_report([base.run], fmt="md", compare=True), "compare"),
    )

    def annotator_zero_width(d: Path, base: Base) -> tuple[list[str], str]:
        run = d / "vrun"
        shutil.copytree(base.validation_run, run)
        path = d / "judgements.csv"
        rows = [f"{QUEUE_ROWS[0][0]},{name},valid,pro\n" for name in ("ana", "an\u200ba")]
        path.write_text(JUDGEMENT_HEADER + "".join(rows), encoding="utf-8")
        return ["validate", "import", str(run), str(path)], f"{path}:3"

    case("s26-twice/cli-validate-import-one-annotator-spelt-with-a-zero-width-space", annotator_zero_width)

    # `--devices cpu,cpu` (two CPU workers) and `--devices` on a fake (a sharded dry run) are
    # documented uses (docs/scaling.md), not bad inputs

    def explain_twice(d: Path, base: Base) -> tuple[list[str], str]:
        run, _ = _generated_run(d, base)
        return ["explain", str(run), "--judge", "fake:j", "--judge", "fake:j", "--no-cache"], "--judge"

    case("s26-twice/cli-explain-judge-twice", explain_twice)

    def prompt_twice(d: Path, base: Base) -> tuple[list[str], str]:
        args = audit_args(base.samples, d)
        args[args.index("--model") : args.index("--model") + 2] = ["--generative", "fake:g"]
        return [*args, "--prompt", "true", "--prompt", "true"], "--prompt"

    case("s26-twice/cli-audit-prompt-twice", prompt_twice)


def _comparable_cases(case: Callable[..., None]) -> None:
    """Things that are not comparable, compared; derived files that do not check out."""

    def limited_baseline(d: Path, base: Base) -> tuple[list[str], str]:
        args = audit_args(base.samples, d)
        args[args.index("--out") + 1] = str(d / "small")
        nlibias_args = [*args, "--limit", "20"]
        from bad_input_corpus import invoke

        code, text, _ = invoke(nlibias_args)
        assert code == 0, text
        return _gate(base.run, d / "small"), "sample"

    def other_samples(d: Path, base: Base) -> tuple[list[str], str]:
        samples = d / "other.jsonl"
        lines = (base.samples / "samples.jsonl").read_text(encoding="utf-8").splitlines()
        samples.write_text("\n".join(lines[: len(lines) // 2]) + "\n", encoding="utf-8")
        return _gate(base.run, _run_copy(d, base), "--samples", str(samples)), "--samples"

    def predictions_row_removed(d: Path, base: Base) -> tuple[list[str], str]:
        candidate = _run_copy(d, base, "cand")
        path = candidate / "predictions.jsonl"
        path.write_text("".join(path.read_text(encoding="utf-8").splitlines(True)[1:]), encoding="utf-8")
        return _gate(
            candidate, _run_copy(d, base)
        ), f"{candidate} is incomplete or mixed: file predictions.jsonl"

    def predictions_cut(d: Path, base: Base) -> tuple[Callable[[], object], str]:
        candidate = _run_copy(d, base, "cand")
        path = candidate / "predictions.jsonl"
        text = path.read_text(encoding="utf-8")
        path.write_text(text[: len(text) - 40], encoding="utf-8")
        baseline = _run_copy(d, base)
        return lambda: nlibias.gate(
            candidate, baseline
        ), f"{candidate} is incomplete or mixed: file predictions.jsonl"

    def metrics_edited(d: Path, base: Base) -> tuple[list[str], str]:
        run = _run_copy(d, base)
        path = run / "metrics.json"
        metrics = json.loads(path.read_text(encoding="utf-8"))
        metrics["samples_sha256"] = "0" * 64 if "samples_sha256" in metrics else None
        path.write_text(json.dumps(metrics), encoding="utf-8")
        return [
            "report",
            str(run),
            str(base.run),
            "--compare",
            "--format",
            "md",
        ], f"{run} is incomplete or mixed: file metrics.json"

    def pair_unknown(d: Path, base: Base) -> tuple[list[str], str]:
        baseline = _run_copy(d, base)
        return _gate(base.run, baseline, "--pair", "m=x"), "--pair names baseline model 'x'"

    case("s26-comparable/cli-gate-baseline-a-limited-subset", limited_baseline)
    case("s26-comparable/cli-gate-samples-half-the-file", other_samples)
    case("s26-comparable/cli-gate-candidate-predictions-row-removed", predictions_row_removed)
    case("s26-comparable/python-gate-candidate-predictions-cut", predictions_cut)
    case("s26-comparable/cli-report-compare-metrics-sample-hash-edited", metrics_edited)
    case("s26-comparable/cli-gate-pair-names-a-model-the-baseline-lacks", pair_unknown)

    def rules_other_benchmark(d: Path, base: Base) -> tuple[list[str], str]:
        path = _rules(d, "measures:\n  tp_tie_split_score: {margin: 1}\n")
        return _gate(base.run, _run_copy(d, base), "--rules", str(path)), "tp_tie_split_score"

    case(
        "s26-comparable/yaml-gate-measure-of-another-benchmark",
        rules_other_benchmark,
    )

    def explanation_edited(d: Path, base: Base) -> tuple[list[str], str]:
        run = explained_run(d, base)
        rows = run / "explanations" / "explanations.jsonl"
        lines = rows.read_text(encoding="utf-8").splitlines(True)
        record = json.loads(lines[0])
        for key, value in record.items():
            if isinstance(value, float):
                record[key] = 1.0 - value if 0 <= value <= 1 else value
        lines[0] = json.dumps(record) + "\n"
        rows.write_text("".join(lines), encoding="utf-8")
        return ["explain", str(run), "--judge", "fake:j", "--no-cache", "--bootstrap", "0"], "recomput"

    case("s26-comparable/cli-explain-a-row-edited-since", explanation_edited, expect="warn")

    def extend_stage_cut(d: Path, base: Base) -> tuple[list[str], str]:
        from bad_input_corpus import invoke

        args = _extend_args(d, "mlm:\n  top_k: 5\n")
        code, text, _ = invoke(args)
        assert code == 0, text
        rows = d / "next" / "masks" / "templates.jsonl"
        rows.write_text(rows.read_text(encoding="utf-8")[:1000], encoding="utf-8")
        return args, "templates.jsonl"

    case(
        "s26-comparable/cli-extend-rerun-after-a-stage-output-was-cut",
        extend_stage_cut,
        expect="warn",
    )

    def edited_samples(d: Path, base: Base) -> Path:
        samples = d / "samples"
        shutil.copytree(base.samples, samples)
        path = samples / "samples.jsonl"
        lines = path.read_text(encoding="utf-8").splitlines(True)
        record = json.loads(lines[0])
        record["hypothesis"] = "Nobody works."
        lines[0] = json.dumps(record) + "\n"
        path.write_text("".join(lines), encoding="utf-8")
        (samples / "samples.parquet").unlink()
        return path

    def score_edited(d: Path, base: Base) -> tuple[list[str], str]:
        path = edited_samples(d, base)
        args = ["score", "--samples", str(path), "--predictions", str(base.predictions)]
        return [*args, "--out", str(d / "o"), "--bootstrap", "0"], "--samples"

    def py_score_edited(d: Path, base: Base) -> tuple[Callable[[], object], str]:
        path = edited_samples(d, base)
        return lambda: nlibias.score(path, base.predictions, bootstrap=0), "samples"

    for route, build in (("cli", score_edited), ("python", py_score_edited)):
        name = f"s26-comparable/{route}-score-a-run-s-predictions-on-other-texts"
        case(name, build)

    def queue_edited(d: Path, base: Base) -> tuple[list[str], str]:
        run = d / "vrun"
        shutil.copytree(base.validation_run, run)
        queue = run / "validation" / "queue.csv"
        queue.write_text(
            queue.read_text(encoding="utf-8").replace("Men cook.", "Men never cook."), encoding="utf-8"
        )
        return ["validate", "export", str(run), "--out", str(d / "sheet.csv")], f"{queue}:4"

    case("s26-comparable/cli-validate-export-queue-hypothesis-edited", queue_edited)


def _nothing_cases(case: Callable[..., None]) -> None:
    """Options that apply to nothing."""

    def audit_extra(name: str, named: str, *extra: str) -> None:
        case(
            f"s26-nothing/cli-audit-{name}",
            lambda d, base: ([*audit_args(base.samples, d), *extra], named),
        )

    audit_extra("prompt-without-generative", "--prompt", "--prompt", "true")
    audit_extra("option-score-with-a-classifier", "--option-score", "--option-score", "per-byte")
    audit_extra("max-new-tokens-with-a-classifier", "--max-new-tokens", "--max-new-tokens", "8")
    audit_extra("tp-variant-without-a-scorer", "--tp-variant", "--tp-variant", "whole")
    audit_extra("concurrency-without-an-endpoint", "--concurrency", "--concurrency", "4")
    audit_extra("mode-with-a-classifier", "--mode", "--mode", "generated")
    case(
        "s26-nothing/cli-score-answer-column-on-bbnli",
        lambda d, base: (
            [*score_args(base, base.predictions, d), "--answer-column", "uqa"],
            "--answer-column",
        ),
    )

    def lm_tokens(d: Path, base: Base) -> tuple[list[str], str]:
        run, _ = _generated_run(d, base)
        args = ["explain", str(run), "--judge", "fake:j", "--no-cache", "--lm-judge-max-new-tokens", "5"]
        return args, "--lm-judge-max-new-tokens"

    case("s26-nothing/cli-explain-lm-judge-tokens-without-an-lm-judge", lm_tokens)
    case(
        "s26-nothing/cli-report-pair-without-debias",
        lambda d, base: (["report", str(base.run), "--format", "md", "--pair", "fake:m=fake:m"], "--pair"),
    )
    case(
        "s26-nothing/python-report-pairs-without-debias",
        lambda d, base: (lambda: nlibias.make_report(base.run, fmt="md", pairs=["fake:m=fake:m"]), "pairs"),
    )
    case(
        "s26-nothing/python-report-min-effect-without-debias",
        lambda d, base: (lambda: nlibias.make_report(base.run, fmt="md", min_effect=2.0), "min_effect"),
    )

    case(
        "s26-nothing/python-audit-no-model",
        lambda d, base: (lambda: nlibias.audit(base.samples, [], cache=False, progress=False), "models"),
    )
    case(
        "s26-nothing/python-score-no-predictions",
        lambda d, base: (lambda: nlibias.score(base.samples, [], bootstrap=0), "predictions"),
    )

    def no_judge(d: Path, base: Base) -> tuple[Callable[[], object], str]:
        run, _ = _generated_run(d, base)
        return lambda: nlibias.explain(run, [], cache=False, progress=False), "judges"

    case("s26-nothing/python-explain-no-judge", no_judge)
    case(
        "s26-nothing/python-model-index-a-model-the-run-lacks",
        lambda d, base: (lambda: nlibias.model_index(base.run, model="fake:other"), "fake:other"),
    )

    def judged_by_ana(d: Path, base: Base) -> tuple[Path, Path]:
        run = d / "vrun"
        shutil.copytree(base.validation_run, run)
        path = d / "judgements.csv"
        path.write_text(f"{JUDGEMENT_HEADER}{QUEUE_ROWS[0][0]},ana,valid,pro\n", encoding="utf-8")
        return run, path

    def import_annotator(d: Path, base: Base) -> tuple[list[str], str]:
        run, path = judged_by_ana(d, base)
        return ["validate", "import", str(run), str(path), "--annotator", "bob"], "--annotator"

    def py_import_annotator(d: Path, base: Base) -> tuple[Callable[[], object], str]:
        run, path = judged_by_ana(d, base)
        return lambda: nlibias.validation_import(run, path, annotator="bob"), "annotator"

    case("s26-nothing/cli-validate-import-annotator-every-row-names", import_annotator)
    case("s26-nothing/python-validation-import-annotator-every-row-names", py_import_annotator)

    def rules_without_baseline(name: str, text: str, line: int) -> None:
        def build(d: Path, base: Base) -> tuple[list[str], str]:
            path = _rules(d, text)
            return _gate(base.run, None, "--rules", str(path)), f"{path}:{line}"

        case(f"s26-nothing/yaml-gate-{name}-without-a-baseline", build)

    rules_without_baseline("margin", "margin: 2\nmeasures:\n  bbnli_bias_score: {max_abs: 50}\n", 1)
    rules_without_baseline(
        "worse", "worse: towards_stereotype\nmeasures:\n  bbnli_bias_score: {max_abs: 50}\n", 1
    )

    def explain_tokens(d: Path, base: Base) -> tuple[Callable[[], object], str]:
        run, _ = _generated_run(d, base)
        return lambda: nlibias.explain(
            run, "fake:j", cache=False, progress=False, lm_judge_max_new_tokens=5
        ), ("lm_judge_max_new_tokens")

    case("s26-nothing/python-explain-lm-judge-tokens-without-an-lm-judge", explain_tokens)
    case(
        "s26-nothing/python-audit-mode-with-a-classifier",
        lambda d, base: (
            lambda: nlibias.audit(
                base.samples, ["fake:m"], cache=False, progress=False, bootstrap=0, mode="generated"
            ),
            "mode",
        ),
    )


def _roles_cases(case: Callable[..., None]) -> None:
    """A model in the wrong role (a local folder whose config.json names its architecture)."""

    def audit_role(name: str, flag: str, architecture: str) -> None:
        def build(d: Path, base: Base) -> tuple[list[str], str]:
            args = audit_args(base.samples, d)
            folder = str(_model_dir(d, architecture))
            if flag == "--model":
                args[args.index("fake:m")] = folder
            else:
                args += [flag, folder]
            return args, flag

        case(f"s26-roles/cli-audit-{name}", build)

    audit_role("generative-a-classifier", "--generative", "RobertaForSequenceClassification")
    case("s26-roles/cli-audit-model-a-masked-lm", masked_lm_as_classifier)
    audit_role("causal-a-classifier", "--causal", "RobertaForSequenceClassification")
    audit_role("mlm-a-causal-lm", "--mlm", "LlamaForCausalLM")

    def mlm_yaml(d: Path, base: Base) -> tuple[list[str], str]:
        folder = _model_dir(d, "RobertaForSequenceClassification")
        return _extend_args(d, f"mlm:\n  model: {folder}\n", mlm=False), f"{d / 'config.yaml'}:2"

    case("s26-roles/yaml-extend-mlm-a-classifier", mlm_yaml)

    def prescreen_judge(d: Path, base: Base) -> tuple[list[str], str]:
        return [
            "validate",
            "prescreen",
            str(base.validation_run),
            "--judge",
            "smollm2",
            "--no-progress",
        ], "--judge"

    case("s26-roles/cli-prescreen-judge-a-generative-lm", prescreen_judge)

    def py_generative(d: Path, base: Base) -> tuple[Callable[[], object], str]:
        folder = _model_dir(d, "RobertaForSequenceClassification")
        return lambda: nlibias.audit(
            base.samples, generative=[str(folder)], cache=False, progress=False
        ), "generative"

    def py_lm_judge(d: Path, base: Base) -> tuple[Callable[[], object], str]:
        folder = _model_dir(d, "RobertaForSequenceClassification")
        return lambda: nlibias.validation_prescreen(base.validation_run, lm_judge=str(folder)), "lm_judge"

    case("s26-roles/python-audit-generative-a-classifier", py_generative)
    case("s26-roles/python-prescreen-lm-judge-a-classifier", py_lm_judge)


def _plugin_cases(case: Callable[..., None]) -> None:
    """Plug-ins registered in Python: a name taken, not a benchmark, a plug-in's own failure."""
    from test_plugin_gate import LEAN_BENCHMARK, Leaning

    def registered(name: str, benchmark: Callable[[], object], named: str) -> None:
        def build(d: Path, base: Base) -> tuple[Callable[[], object], str]:
            return lambda: nlibias.register_benchmark(benchmark()), named  # type: ignore[arg-type]

        case(f"s26-plugins/python-register-{name}", build, context=_plugin_registry)

    registered("a-builtin-name", lambda: replace(LEAN_BENCHMARK, name="bbnli"), "bbnli")
    registered("a-string", lambda: "lean", "benchmark")

    def failing(name: str, changes: Callable[[], dict[str, Any]], named: str) -> None:
        def build(d: Path, base: Base) -> tuple[Callable[[], object], str]:
            from nlibias.catalog import registry

            saved = {table: getattr(registry, table).copy() for table in _TABLES}
            measures = replace(LEAN_BENCHMARK.measures["classifier"], **changes())
            _install(saved, replace(LEAN_BENCHMARK, measures={"classifier": measures}))
            samples = nlibias.expand("lean", out_dir=d / "samples")
            return lambda: nlibias.audit(
                samples, models=[Leaning(0.8, 0.4)], cache=False, bootstrap=0, progress=False
            ), named

        case(f"s26-plugins/python-{name}", build, context=_plugin_registry)

    def raises(*args: Any, **kwargs: Any) -> Any:
        raise ZeroDivisionError("the plug-in's own bug")

    failing("score-raises", lambda: {"score": raises}, "lean")
    failing("score-returns-a-list", lambda: {"score": lambda *a, **k: [1, 2]}, "lean")

    def installed(
        name: str,
        benchmark: Callable[[], object],
        command: Callable[[Path, Base], Any],
        named: str,
        expect: str = "error",
    ) -> None:
        """``command`` run with only this plug-in installed (an exception: one that fails to load)."""

        def build(d: Path, base: Base) -> tuple[Any, str]:
            from nlibias.catalog import registry
            from test_plugins_isolated import Entry

            saved = {table: getattr(registry, table).copy() for table in _TABLES}
            _install(saved, None)
            entries = [Entry("lean", benchmark(), "nlibias-lean")]
            importlib.metadata.entry_points = lambda group=None: list(entries)  # type: ignore[assignment]
            return command(d, base), named

        case(f"s26-plugins/{name}", build, expect, context=_plugin_registry)

    def expand_cli(d: Path, base: Base) -> list[str]:
        return ["expand", "lean", "--out", str(d / "samples")]

    def expand_python(d: Path, base: Base) -> Callable[[], object]:
        return lambda: nlibias.expand("lean", out_dir=d / "samples")

    installed(
        "cli-expand-raises", lambda: replace(LEAN_BENCHMARK, expand=raises), expand_cli, "plug-in 'lean'"
    )
    installed(
        "python-expand-returns-none",
        lambda: replace(LEAN_BENCHMARK, expand=lambda source=None: None),
        expand_python,
        "plug-in 'lean'",
    )
    installed(
        "cli-benchmarks-beside-a-plug-in-that-fails-to-load",
        lambda: ImportError("No module named 'nlibias_lean_helpers'"),
        lambda d, base: ["benchmarks"],
        "lean",
        expect="warn",
    )

    def audit_lean(d: Path, base: Base) -> list[str]:
        nlibias.expand("lean", out_dir=d / "samples")
        return audit_args(d / "samples", d)

    def lean_measures(**changes: Any) -> Callable[[], object]:
        measures = replace(LEAN_BENCHMARK.measures["classifier"], **changes)
        return lambda: replace(LEAN_BENCHMARK, measures={"classifier": measures})

    installed("cli-audit-tables-raise", lean_measures(tables=raises), audit_lean, "plug-in 'lean'")
    five = lean_measures(tables=lambda *a, **k: 5)
    installed("cli-audit-tables-return-a-number", five, audit_lean, "plug-in 'lean'")

    def register_twice() -> None:
        nlibias.register_benchmark(LEAN_BENCHMARK)
        nlibias.register_benchmark(replace(LEAN_BENCHMARK, description="another"))

    case(
        "s26-plugins/python-register-one-name-twice",
        lambda d, base: (register_twice, "'lean'"),
        context=_plugin_registry,
    )


def s26_cases() -> list[Case]:
    """Every case of this module."""
    return cases_of(
        (
            _numbers_cases,
            _outputs_cases,
            _twice_cases,
            _comparable_cases,
            _nothing_cases,
            _roles_cases,
            _plugin_cases,
        )
    )
