"""Session 28's last acceptance check: a fresh set of bad inputs of issue #48's classes on every
route (expand, audit, score, report, gate, explain, export, validate, extend, masks, augment,
finetune, debias, demo, doctor, schema, the Python API and the YAML files), weighted to the day's
new rules (a JSON key or CSV column twice, a blank path, an empty settings file, one run in two
spellings, a fine-tune base that must be a checkpoint, extend's outputs over its inputs, NaN as not
finite) and their variants on the readers, options and routes they were not written for. Part of
the corpus of ``bad_input_cases``; none repeats an earlier case."""

from __future__ import annotations

import math
import os
from collections.abc import Callable
from pathlib import Path

import nlibias
from bad_input_cases_declared import _model_dir
from bad_input_cases_s26 import _extend_args, _gate, _rules
from bad_input_cases_s27 import _augment, _debias, _finetune, _training, _vrun
from bad_input_cases_s28c_more import (
    CLASSIFIER,
    Add,
    _blank_cases,
    _column_twice_cases,
    _empty_settings_cases,
    _key_twice_cases,
    bbnli_copy,
    bbnli_data,
    extend_cli,
    extend_own_cache,
    extend_yaml,
    pair,
    templates_file,
    with_model,
    write,
)
from bad_input_corpus import Base, Case, audit_args, cases_of

KNOWN: dict[str, str] = {}


# -- numbers ------------------------------------------------------------------------------------------


def _numbers_cases(case: Add) -> None:
    def cli(name: str, args: Callable[[Path, Base], list[str]], flag: str) -> None:
        case(f"s28c-numbers/cli-{name}", lambda d, b: (args(d, b), flag))

    cli("finetune-warmup-ratio-nan", lambda d, b: _finetune(d, "--warmup-ratio", "nan"), "--warmup-ratio")
    cli("debias-warmup-ratio-nan", lambda d, b: _debias(d, "--warmup-ratio", "nan"), "--warmup-ratio")
    cli("finetune-epochs-1e309", lambda d, b: _finetune(d, "--epochs", "1e309"), "--epochs")
    cli("debias-min-effect-nan", lambda d, b: _debias(d, "--min-effect", "nan"), "--min-effect")
    cli("validate-prescreen-threshold-nan",
        lambda d, b: ["validate", "prescreen", str(_vrun(d, b)), "--judge", "fake:j", "--threshold", "nan"],
        "--threshold")  # fmt: skip
    cli("audit-ray-gpus-per-worker-inf",
        lambda d, b: [*audit_args(b.samples, d), "--ray-workers", "2", "--ray-gpus-per-worker", "inf"],
        "--ray-gpus-per-worker")  # fmt: skip
    cli("extend-top-k-zero", lambda d, b: extend_cli(d, b, "--top-k", "0"), "--top-k")
    cli("explain-lm-judge-max-new-tokens-zero",
        lambda d, b: _explain_args(d, b, "--lm-judge", "fake:g", "--lm-judge-max-new-tokens", "0"),
        "--lm-judge-max-new-tokens")  # fmt: skip

    def py(name: str, named: str, call: Callable[[Path, Base], Callable[[], object]]) -> None:
        case(f"s28c-numbers/python-{name}", lambda d, b: (call(d, b), named))

    model = lambda d: str(_model_dir(d, CLASSIFIER))  # noqa: E731
    py("finetune-learning-rate-nan", "learning_rate", lambda d, b: lambda: nlibias.finetune(
        model(d), _training(d / "data"), d / "ft", learning_rate=math.nan))  # fmt: skip
    py("finetune-warmup-ratio-inf", "warmup_ratio", lambda d, b: lambda: nlibias.finetune(
        model(d), _training(d / "data"), d / "ft", warmup_ratio=math.inf))  # fmt: skip
    py("finetune-epochs-true", "epochs", lambda d, b: lambda: nlibias.finetune(
        model(d), _training(d / "data"), d / "ft", epochs=True))  # fmt: skip
    py("validation-prescreen-threshold-true", "threshold", lambda d, b: lambda: nlibias.validation_prescreen(
        _vrun(d, b), judge="fake:j", threshold=True, progress=False))  # fmt: skip
    py(
        "gate-margin-true",
        "margin",
        lambda d, b: (lambda c, r: lambda: nlibias.gate(c, r, margin=True))(*pair(d, b)),
    )
    py("make-report-min-effect-nan", "min_effect", lambda d, b: lambda: nlibias.make_report(
        [b.run, b.run], debias=True, min_effect=math.nan))  # fmt: skip
    py("extend-top-k-true", "top_k", lambda d, b: lambda: nlibias.extend(
        source=bbnli_data(), out_dir=d / "next", fill_model="fake", top_k=True, until="masks", progress=False))  # fmt: skip
    py("debias-models-finetune-options-learning-rate-nan", "learning_rate",
       lambda d, b: lambda: nlibias.debias_models(
           [model(d)], _training(d / "data"), d / "deb", finetune_options={"learning_rate": math.nan},
           progress=False))  # fmt: skip

    def gate_yaml(name: str, text: str, line: int) -> None:
        def build(d: Path, base: Base) -> tuple[list[str], str]:
            path = _rules(d, text)
            return _gate(*pair(d, base), "--rules", str(path)), f"{path}:{line}"

        case(f"s28c-numbers/yaml-gate-{name}", build)

    gate_yaml("margin-capital-nan", "margin: .NaN\n", 1)
    gate_yaml("measure-margin-a-boolean", "measures:\n  bbnli_bias_score:\n    margin: on\n", 3)
    gate_yaml("bootstrap-a-float", "bootstrap: 2000.5\n", 1)

    def ext_yaml(name: str, text: str, line: int) -> None:
        case(
            f"s28c-numbers/yaml-extend-{name}",
            lambda d, b: (extend_yaml(d, b, "source: BASE\n" + text), f"{d / 'config.yaml'}:{line}"),
        )

    ext_yaml("seed-nan", "seed: .nan\n", 2)
    ext_yaml("policy-a-boolean", "filter:\n  policy: true\n", 3)
    ext_yaml("mlm-max-tokens-nan", "mlm:\n  max_tokens: .nan\n", 3)
    ext_yaml("mlm-threads-a-boolean", "mlm:\n  threads: yes\n", 3)
    ext_yaml("filter-max-batch-size-zero", "filter:\n  max_batch_size: 0\n", 3)


def _explain_args(d: Path, base: Base, *extra: str) -> list[str]:
    from bad_input_cases_explain import _generated_run

    run, _ = _generated_run(d, base)
    return ["explain", str(run), "--judge", "fake:j", "--no-cache", "--bootstrap", "0", *extra]


# -- outputs that would destroy an input ------------------------------------------------------------


def _outputs_cases(case: Add) -> None:
    def out_link_to_source(d: Path, base: Base) -> tuple[list[str], str]:
        src = bbnli_copy(d)
        os.symlink(src, d / "next-link")
        args = with_model(extend_cli(d, base), "--source", str(src))
        args = with_model(args, "--out", str(d / "next-link"))
        return args, "--out"

    case("s28c-outputs/cli-extend-out-a-symlink-to-the-source", out_link_to_source)

    def yaml_run_dir(name: str, run_dir: str) -> None:
        def build(d: Path, base: Base) -> tuple[list[str], str]:
            src = bbnli_copy(d)
            text = f"source: {src}\nrun_dir: {run_dir.replace('SRC', str(src))}\n"
            path = write(d / "config.yaml", text)
            args = ["extend", "--config", str(path), "--mlm", "fake", "--until", "masks"]
            return [*args, "--cache", str(d / "c.sqlite"), "--no-progress"], f"{path}:2"

        case(f"s28c-outputs/yaml-extend-{name}", build)

    yaml_run_dir("run-dir-the-source-folder", "SRC")
    yaml_run_dir("run-dir-inside-the-source-spelt-with-dot-dot", "SRC/gender/../next")

    def yaml_cache(name: str, which: str) -> None:
        def build(d: Path, base: Base) -> tuple[list[str], str]:
            target = templates_file(d) if which == "templates" else write(d / "judged.csv", "x\n")
            text = f"source: BASE\ntemplates:\n  curated: {d / 'templates.jsonl'}\ncache: {target}\n"
            if which == "judgements":
                text = f"source: BASE\nvalidation:\n  judgements: {target}\ncache: {target}\n"
            return extend_own_cache(d, text), "cache"

        case(f"s28c-outputs/yaml-extend-cache-the-{name}", build)

    yaml_cache("templates-file", "templates")
    yaml_cache("judgements-file", "judgements")

    def cli_cache_templates(d: Path, base: Base) -> tuple[list[str], str]:
        path = templates_file(d)
        args = with_model(extend_cli(d, base, "--templates", str(path)), "--cache", str(path))
        return args, "--cache"

    case("s28c-outputs/cli-extend-cache-the-templates-file", cli_cache_templates)

    def py_extend_into_source(d: Path, base: Base) -> tuple[Callable[[], object], str]:
        src = bbnli_copy(d)
        return lambda: nlibias.extend(
            source=src, out_dir=src / "gender", fill_model="fake", until="masks", progress=False
        ), "out_dir"

    case("s28c-outputs/python-extend-out-dir-inside-the-source", py_extend_into_source)

    def derive_over_stopwords(d: Path, base: Base) -> tuple[list[str], str]:
        stop = write(d / "stop.txt", "the\na\n")
        return [
            "masks",
            "derive",
            "--source",
            str(base.bbnli_dir),
            "--stopwords",
            str(stop),
            "--out",
            str(stop),
        ], "--out"

    case("s28c-outputs/cli-masks-derive-out-the-stopwords-file", derive_over_stopwords)

    def validate_export_queue(d: Path, base: Base) -> tuple[list[str], str]:
        run = _vrun(d, base)
        return ["validate", "export", str(run), "--out", str(run / "validation" / "queue.csv")], "--out"

    case("s28c-outputs/cli-validate-export-out-the-queue", validate_export_queue)

    def finetune_link_model(d: Path, base: Base) -> tuple[list[str], str]:
        folder = _model_dir(d, CLASSIFIER)
        os.symlink(folder, d / "ft-link")
        return with_model(_finetune(d, model=str(folder)), "--out", str(d / "ft-link")), "--out"

    case("s28c-outputs/cli-finetune-out-a-symlink-to-the-model", finetune_link_model)

    def explain_cache_samples(d: Path, base: Base) -> tuple[list[str], str]:
        from bad_input_cases_explain import _generated_run

        run, samples = _generated_run(d, base)
        args = ["explain", str(run), "--judge", "fake:j", "--samples", str(samples), "--cache", str(samples)]
        return args, "--cache"

    case("s28c-outputs/cli-explain-cache-the-samples-given-with-samples", explain_cache_samples)

    def prescreen_cache_queue(d: Path, base: Base) -> tuple[list[str], str]:
        run = _vrun(d, base)
        queue = run / "validation" / "queue.csv"
        return ["validate", "prescreen", str(run), "--judge", "fake:j", "--cache", str(queue)], "--cache"

    case("s28c-outputs/cli-validate-prescreen-cache-the-queue", prescreen_cache_queue)

    def py_augment_out_train_folder_link(d: Path, base: Base) -> tuple[Callable[[], object], str]:
        train = _training(d / "data")
        os.symlink(d / "data", d / "aug-link")
        return lambda: nlibias.augment(train, d / "aug-link", progress=False), "out_dir"

    case(
        "s28c-outputs/python-augment-out-dir-a-symlink-to-the-train-folder", py_augment_out_train_folder_link
    )


# -- one run in two spellings, and the same thing twice ------------------------------------------------


def _runs_twice_cases(case: Add) -> None:
    def py_gate_metrics(d: Path, base: Base) -> tuple[Callable[[], object], str]:
        cand, _ = pair(d, base)
        return lambda: nlibias.gate(cand, cand / "metrics.json"), "baseline"

    case("s28c-twice/python-gate-baseline-the-candidate-s-metrics-file", py_gate_metrics)

    def py_report_metrics(d: Path, base: Base) -> tuple[Callable[[], object], str]:
        run, _ = pair(d, base)
        return lambda: nlibias.make_report([run, run / "metrics.json"], compare=True, fmt="md"), "runs"

    case("s28c-twice/python-make-report-compare-a-run-and-its-metrics-file", py_report_metrics)

    def gate_dot_dot(d: Path, base: Base) -> tuple[list[str], str]:
        cand, _ = pair(d, base)
        return _gate(cand, cand / ".." / "cand"), "--baseline"

    case("s28c-twice/cli-gate-baseline-the-candidate-spelt-through-its-parent", gate_dot_dot)

    def report_manifest(d: Path, base: Base) -> tuple[list[str], str]:
        run, _ = pair(d, base)
        return ["report", str(run), str(run / "manifest.json"), "--compare", "--format", "md"], "RUNS"

    case("s28c-twice/cli-report-compare-a-run-and-its-manifest", report_manifest)

    def gate_samples_link(d: Path, base: Base) -> tuple[list[str], str]:
        cand, _ = pair(d, base)
        os.symlink(cand, d / "shipped")
        return _gate(cand, d / "shipped" / "metrics.json"), "--baseline"

    case("s28c-twice/cli-gate-baseline-metrics-through-a-symlink-of-the-candidate", gate_samples_link)

    def debias_report_twice(d: Path, base: Base) -> tuple[list[str], str]:
        run, _ = pair(d, base)
        return ["report", str(run), f"{run}/", "--debias"], "RUNS"

    case("s28c-twice/cli-report-debias-one-run-with-a-trailing-slash", debias_report_twice)

    def model_index_models(d: Path, base: Base) -> tuple[Callable[[], object], str]:
        return lambda: nlibias.model_index(base.run / "metrics.json", model="fake:m"), "run"

    case("s28c-twice/python-model-index-run-given-as-its-metrics-file", model_index_models)

    def explain_judges(d: Path, base: Base) -> tuple[list[str], str]:
        return _explain_args(d, base, "--judge", " fake:j"), "--judge"

    case("s28c-twice/cli-explain-one-judge-twice-once-with-a-leading-space", explain_judges)

    # the same rule on other routes (it was: accepted as a model of its own; a kind without the option)
    def audit_generative_trailing_space(d: Path, base: Base) -> tuple[list[str], str]:
        args = audit_args(base.samples, d)
        return [*args[:3], "--generative", "fake:g ", *args[5:]], "--generative"

    case("s28c-twice/cli-audit-generative-with-a-trailing-space", audit_generative_trailing_space)

    def explain_unknown_kind(d: Path, base: Base) -> tuple[list[str], str]:
        return _explain_args(d, base, "--judge", "nope:j"), "--judge"

    case("s28c-twice/cli-explain-judge-of-an-unknown-kind", explain_unknown_kind)

    def augment_select_twice(d: Path, base: Base) -> tuple[Callable[[], object], str]:
        names = write(d / "names.tsv", "John\tMary\nJohn \tMary\n")
        return lambda: nlibias.augment(_training(d / "data"), d / "aug", names=names, progress=False), str(
            names
        )

    case("s28c-twice/python-augment-names-one-pair-spelt-with-a-space", augment_select_twice)

    def validate_exclude_twice(d: Path, base: Base) -> tuple[Callable[[], object], str]:
        return lambda: nlibias.validation_status(_vrun(d, base), exclude=["ana", "ana"]), "exclude"

    case("s28c-twice/python-validation-status-exclude-one-annotator-twice", validate_exclude_twice)


# -- a model in the wrong role ------------------------------------------------------------------------


def _roles_cases(case: Add) -> None:
    def cli(name: str, args: Callable[[Path, Base], list[str]], flag: str) -> None:
        case(f"s28c-roles/cli-{name}", lambda d, b: (args(d, b), flag))

    cli("finetune-model-a-fake", lambda d, b: _finetune(d, model="fake:m"), "--model")
    cli("finetune-model-a-prompted-classifier", lambda d, b: _finetune(d, model="prompt:smollm2"), "--model")
    cli("debias-model-a-causal-prefix", lambda d, b: _debias(d, model="causal:gpt2"), "--model")
    cli("finetune-model-a-folder-without-config",
        lambda d, b: _finetune(d, model=str(write(d / "empty" / "README.md", "x").parent)), "--model")  # fmt: skip
    cli("augment-her-model-an-openai-server",
        lambda d, b: _augment(d, "--her", "lm", "--her-model", "openai:http://127.0.0.1:9/v1#m"), "--her-model")  # fmt: skip
    cli("export-lm-eval-model-a-classifier-folder",
        lambda d, b: ["export", "lm-eval", "--samples", str(b.samples), "--out", str(d / "t"), "--model",
                      str(_model_dir(d, CLASSIFIER))], "--model")  # fmt: skip
    cli("extend-holdout-model-a-gguf-file",
        lambda d, b: extend_cli(d, b, "--holdout-model", str(write(d / "m.gguf", b"GGUF" + bytes(60)))),
        "--holdout-model")  # fmt: skip
    cli("extend-filter-model-a-causal-prefix", lambda d, b: extend_cli(d, b, "--filter-model", "causal:gpt2"),
        "--filter-model")  # fmt: skip
    cli("validate-prescreen-lm-judge-a-classifier-folder",
        lambda d, b: ["validate", "prescreen", str(_vrun(d, b)), "--judge", "fake:j", "--lm-judge",
                      str(_model_dir(d, CLASSIFIER))], "--lm-judge")  # fmt: skip

    def py(name: str, named: str, call: Callable[[Path, Base], Callable[[], object]]) -> None:
        case(f"s28c-roles/python-{name}", lambda d, b: (call(d, b), named))

    py("finetune-model-an-openai-server", "model", lambda d, b: lambda: nlibias.finetune(
        "openai:http://127.0.0.1:9/v1#m", _training(d / "data"), d / "ft"))  # fmt: skip
    py("debias-models-a-gguf-file", "models", lambda d, b: lambda: nlibias.debias_models(
        [str(write(d / "m.gguf", b"GGUF" + bytes(60)))], _training(d / "data"), d / "deb", progress=False))  # fmt: skip
    py("augment-her-model-a-prompted-classifier", "her_model", lambda d, b: lambda: nlibias.augment(
        _training(d / "data"), d / "aug", her="lm", her_model="prompt:smollm2", progress=False))  # fmt: skip
    py("explain-lm-judge-a-classifier-folder", "lm_judge", lambda d, b: (lambda run: lambda: nlibias.explain(
        run, ["fake:j"], lm_judge=str(_model_dir(d, CLASSIFIER)), cache=False, bootstrap=0, progress=False))(
        Path(_explain_args(d, b)[1])))  # fmt: skip

    def yaml_fill(d: Path, base: Base) -> tuple[list[str], str]:
        folder = _model_dir(d, CLASSIFIER)
        text = f"source: {bbnli_data()}\nmlm:\n  model: {folder}\n"
        return _extend_args(d, text, mlm=False), f"{d / 'config.yaml'}:3"

    case("s28c-roles/yaml-extend-mlm-model-a-classifier-folder", yaml_fill)

    def yaml_holdout(d: Path, base: Base) -> tuple[list[str], str]:
        gguf = write(d / "m.gguf", b"GGUF" + bytes(60))
        text = f"source: {bbnli_data()}\nfilter:\n  holdout: [{gguf}]\n"
        return _extend_args(d, text), f"{d / 'config.yaml'}:3"

    case("s28c-roles/yaml-extend-holdout-a-gguf-file", yaml_holdout)


# -- options that apply to nothing ---------------------------------------------------------------------


def _nothing_cases(case: Add) -> None:
    def cli(name: str, args: Callable[[Path, Base], list[str]], flag: str) -> None:
        case(f"s28c-nothing/cli-{name}", lambda d, b: (args(d, b), flag))

    cli("explain-lm-judge-max-new-tokens-without-an-lm-judge",
        lambda d, b: _explain_args(d, b, "--lm-judge-max-new-tokens", "32"), "--lm-judge-max-new-tokens")  # fmt: skip
    cli("finetune-warmup-steps-with-a-constant-schedule",
        lambda d, b: _finetune(d, "--lr-scheduler", "constant", "--warmup-steps", "10"), "--warmup-steps")  # fmt: skip

    def yaml(name: str, text: str, named: str) -> None:
        case(
            f"s28c-nothing/yaml-extend-{name}",
            lambda d, b: (extend_yaml(d, b, "source: BASE\n" + text), named),
        )

    yaml("validation-unvalidated-and-judgements", "validation:\n  unvalidated: true\n  judgements: j.csv\n",
         "unvalidated")  # fmt: skip
    yaml("templates-curated-null-with-derive-false", "templates:\n  curated: null\n", "curated")


# -- wrong types on the Python route, and damaged inputs -------------------------------------------------


def _types_cases(case: Add) -> None:
    def py(name: str, named: str, call: Callable[[Path, Base], Callable[[], object]]) -> None:
        case(f"s28c-types/python-{name}", lambda d, b: (call(d, b), named))

    py(
        "validation-import-file-an-int",
        "file",
        lambda d, b: lambda: nlibias.validation_import(_vrun(d, b), 3),
    )
    py("make-report-runs-an-int", "runs", lambda d, b: lambda: nlibias.make_report(7, fmt="md"))
    py("augment-train-a-list-of-dicts", "train", lambda d, b: lambda: nlibias.augment(
        [{"premise": "The nurse ran.", "hypothesis": "He ran.", "label": "neutral"}], d / "aug", progress=False))  # fmt: skip
    py("model-index-run-a-list", "run", lambda d, b: lambda: nlibias.model_index([b.run]))
    py("load-run-a-metrics-dict", "directory", lambda d, b: lambda: nlibias.load_run({"runs": []}))
    py("gate-pairs-a-set", "pairs", lambda d, b: (lambda c, r: lambda: nlibias.gate(c, r, pairs={"fake:m"}))(
        *pair(d, b)))  # fmt: skip
    py("expand-source-a-list", "source", lambda d, b: lambda: nlibias.expand("bbnli", [b.bbnli_dir]))
    py(
        "validation-export-out-an-int",
        "out",
        lambda d, b: lambda: nlibias.validation_export(_vrun(d, b), out=5),
    )
    py("doctor-device-a-string", "device", lambda d, b: lambda: nlibias.doctor(device="cpu"))
    py("demo-seed-a-string", "seed", lambda d, b: lambda: nlibias.demo(d / "demo", seed="1", pairs=2))

    def cli(name: str, args: Callable[[Path, Base], list[str]], named: str) -> None:
        case(f"s28c-damaged/cli-{name}", lambda d, b: (args(d, b), named))

    cli("schema-name-unknown", lambda d, b: ["schema", "metric"], "choose one of: metrics, manifest")
    cli("schema-name-blank", lambda d, b: ["schema", ""], "choose one of: metrics, manifest")
    cli("gate-rules-with-a-bom-and-a-tab",
        lambda d, b: _gate(*pair(d, b), "--rules", str(write(d / "gate.yaml", "\ufeffmargin:\t0.5\n"))), "gate.yaml")  # fmt: skip
    case("s28c-damaged/cli-masks-validate-a-folder", lambda d, b: (["masks", "validate", str(d)], str(d)))
    case(
        "s28c-damaged/cli-extend-config-a-folder",
        lambda d, b: (["extend", "--config", str(d), "--until", "masks"], str(d)),
    )
    cli("finetune-train-a-bom-then-utf16",
        lambda d, b: with_model(_finetune(d), "--train", str(write(d / "t.jsonl", "\ufeff".encode() + '{"premise": "A."}\n'.encode("utf-16-le")))),
        "t.jsonl")  # fmt: skip
    cli("validate-import-csv-with-a-bom-header", lambda d, b: [
        "validate", "import", str(_vrun(d, b)),
        str(write(d / "j.csv", b"\xef\xbb\xbf\xef\xbb\xbfhypothesis_id,annotator,judgement,stereotype\n"))], "j.csv")  # fmt: skip
    case("s28c-damaged/cli-explain-run-a-samples-folder",
         lambda d, b: (["explain", str(b.samples), "--judge", "fake:j", "--no-cache"], str(b.samples)))  # fmt: skip


GROUPS = (
    _numbers_cases,
    _outputs_cases,
    _runs_twice_cases,
    _key_twice_cases,
    _column_twice_cases,
    _blank_cases,
    _empty_settings_cases,
    _roles_cases,
    _nothing_cases,
    _types_cases,
)


def s28c_cases() -> list[Case]:
    """Every case of this round (this module and its second part), a known defect marked from
    :data:`KNOWN`."""
    return cases_of(GROUPS, KNOWN)
