"""Session 29's finder round s29c: the command line, every command and subcommand, weighted to the
options fewest earlier cases touch (masks, validate, augment, export, schema, benchmarks, doctor,
report, score's file kinds, audit's sharding and seeds, the environment variables the docs list):
the second value of a repeated option, paths spelt differently that resolve to one file, files of
the wrong kind, values just past their bounds, options that apply to nothing. Part of the corpus of
``bad_input_cases``; none repeats an earlier case."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path

import nlibias
from bad_input_cases_declared import _model_dir
from bad_input_cases_s27 import _augment, _training, _vrun
from bad_input_cases_s28 import _gen, _predictions, _preds_file
from bad_input_cases_s28c_more import CLASSIFIER, Add, extend_yaml, templates_file, write
from bad_input_corpus import Base, Case, audit_args, cases_of, score_args

KNOWN: dict[str, str] = {}

Build = Callable[[Path, Base], list[str]]
Named = str | Callable[[Path], str]


def _cli(case: Add, group: str) -> Callable[..., None]:
    def add(name: str, args: Build, named: Named, expect: str = "error", **kw: object) -> None:
        def build(d: Path, b: Base) -> tuple[list[str], str]:
            built = args(d, b)
            return built, named(d) if callable(named) else named

        case(f"s29c-{group}/cli-{name}", build, expect, **kw)

    return add


def _py(case: Add, group: str) -> Callable[..., None]:
    def add(
        name: str, named: Named, call: Callable[[Path, Base], Callable[[], object]], expect: str = "error"
    ) -> None:
        def build(d: Path, b: Base) -> tuple[Callable[[], object], str]:
            function = call(d, b)
            return function, named(d) if callable(named) else named

        case(f"s29c-{group}/python-{name}", build, expect)

    return add


def _run(d: Path, b: Base, name: str = "run") -> Path:
    return Path(shutil.copytree(b.run, d / name))


def _samples(d: Path, b: Base) -> Path:
    return Path(shutil.copytree(b.samples, d / "samples"))


def _derived(d: Path, lines: Callable[[list[str]], list[str]] | None = None) -> Path:
    """A valid masked-template file (the base subtopic's), edited by ``lines``."""
    rows = [
        {"subtopic": "man_is_to_breadwinner", "template": 0, "masked": m, "strategy": strategy}
        for m, strategy in (
            ("{{GROUP1}} are simply the main <mask>.", "replace_placeholder"),
            ("{{GROUP1}} are <mask> the main {{WORD1}}.", "mask_word"),
        )
    ]
    text = [json.dumps(row) for row in rows]
    return write(d / "t.jsonl", "\n".join(lines(text) if lines else text) + "\n")


def _mv(b: Base, path: Path, *extra: str) -> list[str]:
    return ["masks", "validate", str(path), "--source", str(b.bbnli_dir), *extra]


def _p(name: str) -> Callable[[Path], str]:
    return lambda d: str(d / name)


# -- masks: the files of other kinds, the later lines, outputs spelt another way -----------------------


def _masks_cases(case: Add) -> None:
    cli = _cli(case, "masks")
    cli("validate-a-run-directory", lambda d, b: _mv(b, _run(d, b)), lambda d: str(d / "run"))
    cli("validate-a-predictions-file", lambda d, b: _mv(b, _run(d, b) / "predictions.jsonl"),
        lambda d: str(d / "run" / "predictions.jsonl"))  # fmt: skip
    cli("validate-the-samples-parquet", lambda d, b: _mv(b, _samples(d, b) / "samples.parquet"),
        lambda d: str(d / "samples" / "samples.parquet"))  # fmt: skip
    cli("validate-source-a-samples-run", lambda d, b: ["masks", "validate", str(_derived(d)), "--source",
                                                        str(_samples(d, b))], lambda d: str(d / "samples"))  # fmt: skip
    cli("validate-blank-lines-only", lambda d, b: _mv(b, write(d / "t.jsonl", "\n\n \n")), _p("t.jsonl"))
    cli("validate-last-line-cut-short", lambda d, b: _mv(b, _derived(d, lambda t: [*t[:-1], t[-1][:30]])),
        lambda d: f"{d / 't.jsonl'}:2")  # fmt: skip
    cli("validate-template-a-string-number",
        lambda d, b: _mv(b, _derived(d, lambda t: [t[0], t[1].replace('"template": 0', '"template": "0"')])),
        lambda d: f"{d / 't.jsonl'}:2")  # fmt: skip
    cli("validate-second-line-subtopic-a-trailing-space",
        lambda d, b: _mv(b, _derived(d, lambda t: [t[0], t[1].replace('breadwinner"', 'breadwinner "')])),
        lambda d: f"{d / 't.jsonl'}:2")  # fmt: skip
    cli("validate-mask-with-a-zero-width-space",
        lambda d, b: _mv(b, _derived(d, lambda t: [t[0], t[1].replace("<mask>", "<ma\\u200bsk>")])),
        lambda d: f"{d / 't.jsonl'}:2")  # fmt: skip
    cli("validate-note-a-number",
        lambda d, b: _mv(b, _derived(d, lambda t: [t[0], t[1].replace("{", '{"note": 5, ', 1)])),
        lambda d: f"{d / 't.jsonl'}:2")  # fmt: skip
    cli("validate-third-line-a-copy-of-the-first-with-another-strategy",
        lambda d, b: _mv(b, _derived(d, lambda t: [*t, t[0].replace("replace_placeholder", "mask_word")])),
        lambda d: f"{d / 't.jsonl'}:3")  # fmt: skip
    cli("validate-a-json-array", lambda d, b: _mv(b, write(d / "a.jsonl", "[" + ", ".join(
        _derived(d).read_text().split("\n")[:2]) + "]\n")), _p("a.jsonl"))  # fmt: skip
    cli("list-templates-the-samples-jsonl",
        lambda d, b: ["masks", "list", "--templates", str(_samples(d, b) / "samples.jsonl"), "--source",
                      str(b.bbnli_dir)], lambda d: f"{d / 'samples' / 'samples.jsonl'}:1")  # fmt: skip
    cli("list-templates-a-directory", lambda d, b: ["masks", "list", "--templates", str(_samples(d, b))],
        lambda d: str(d / "samples"))  # fmt: skip

    def out_link(d: Path, b: Base) -> list[str]:
        src = Path(shutil.copytree(b.bbnli_dir, d / "src" / "gender"))
        (d / "link.json").symlink_to(next(src.rglob("*.json")))
        return ["masks", "derive", "--source", str(d / "src"), "--out", str(d / "link.json")]

    cli("derive-out-a-symlink-to-a-source-file", out_link, "--out")

    def stop_link(d: Path, b: Base) -> list[str]:
        stop = write(d / "stop.txt", "the\na\n")
        (d / "out.jsonl").symlink_to(stop)
        return ["masks", "derive", "--source", str(b.bbnli_dir), "--stopwords", str(stop), "--out",
                str(d / "out.jsonl")]  # fmt: skip

    cli("derive-out-a-symlink-to-the-stopwords", stop_link, "--out")
    cli("derive-out-a-directory",
        lambda d, b: ["masks", "derive", "--source", str(b.bbnli_dir), "--out", str((d / "o").mkdir() or d / "o")],
        lambda d: str(d / "o"))  # fmt: skip
    cli("derive-out-given-twice", lambda d, b: ["masks", "derive", "--source", str(b.bbnli_dir), "--out",
                                                 str(d / "a.jsonl"), "--out", str(d / "b.jsonl")], "--out")  # fmt: skip
    cli("derive-stopwords-the-samples-jsonl",
        lambda d, b: ["masks", "derive", "--source", str(b.bbnli_dir), "--stopwords",
                      str(_samples(d, b) / "samples.jsonl")], lambda d: str(d / "samples" / "samples.jsonl"))  # fmt: skip
    cli("list-second-subtopic-a-trailing-space",
        lambda d, b: ["masks", "list", "--source", str(b.bbnli_dir), "--templates", str(_derived(d)),
                      "--subtopic", "man_is_to_breadwinner", "--subtopic", "man_is_to_breadwinner "], "'man_is_to_breadwinner '")  # fmt: skip


# -- schema, benchmarks, doctor and the environment variables the docs list --------------------------------


def _env_cases(case: Add) -> None:
    cli = _cli(case, "env")
    cli("schema-blank-name", lambda d, b: ["schema", ""], "schema")
    cli("schema-name-with-a-trailing-space", lambda d, b: ["schema", "metrics "], "metrics ")
    doctor = lambda d, b: ["doctor", "--quiet"]  # noqa: E731
    cli("doctor-data-dir-a-file", doctor, "NLIBIAS_DATA_DIR", "warn",
        env=lambda d: {"NLIBIAS_DATA_DIR": str(write(d / "data.txt", "x"))})  # fmt: skip
    cli("doctor-data-dir-missing", doctor, "NLIBIAS_DATA_DIR", "warn",
        env=lambda d: {"NLIBIAS_DATA_DIR": str(d / "nowhere")})  # fmt: skip
    cli("doctor-cache-a-directory", doctor, "NLIBIAS_CACHE", "warn",
        env=lambda d: {"NLIBIAS_CACHE": str((d / "cdir").mkdir() or d / "cdir")})  # fmt: skip
    cli("doctor-device-bogus", doctor, "NLIBIAS_DEVICE", env=lambda d: {"NLIBIAS_DEVICE": "tpu"})
    cli("doctor-model-cache-a-file", doctor, "NLIBIAS_MODEL_CACHE", "warn",
        env=lambda d: {"NLIBIAS_MODEL_CACHE": str(write(d / "models", "x"))})  # fmt: skip
    expand = lambda d, b: ["expand", "bbnli", "--out", str(d / "s")]  # noqa: E731
    cli("expand-allow-modified-data-two", expand, "NLIBIAS_ALLOW_MODIFIED_DATA",
        env=lambda d: {"NLIBIAS_ALLOW_MODIFIED_DATA": "2", "NLIBIAS_DATA_DIR": "/work/shared/data"})  # fmt: skip
    cli("expand-allow-modified-data-bogus-with-a-source", lambda d, b: ["expand", "bbnli", "--source",
        str(b.bbnli_dir), "--out", str(d / "s")], "NLIBIAS_ALLOW_MODIFIED_DATA",
        env=lambda d: {"NLIBIAS_ALLOW_MODIFIED_DATA": "enable"})  # fmt: skip
    cli("audit-cache-env-the-samples-jsonl",
        lambda d, b: [*audit_args(_samples(d, b), d)[:-2], "--quiet"], lambda d: str(d / "samples" / "samples.jsonl"),
        env=lambda d: {"NLIBIAS_CACHE": str(d / "samples" / "samples.jsonl")})  # fmt: skip
    cli("audit-device-env-cuda-index-negative", lambda d, b: audit_args(b.samples, d), "NLIBIAS_DEVICE",
        env=lambda d: {"NLIBIAS_DEVICE": "cuda:-1"})  # fmt: skip
    cli("audit-device-env-with-a-trailing-space", lambda d, b: audit_args(b.samples, d), "NLIBIAS_DEVICE",
        env=lambda d: {"NLIBIAS_DEVICE": "cpu "})  # fmt: skip


# -- export: a card of the wrong kind, an output that is the card, the second value --------------------------


def _export_cases(case: Add) -> None:
    cli = _cli(case, "export")
    idx = lambda run, *extra: ["export", "model-index", str(run), *extra]  # noqa: E731
    cli("model-index-card-the-runs-metrics-json",
        lambda d, b: idx(_run(d, b), "--card", str(d / "run" / "metrics.json")), "--card")  # fmt: skip
    cli("model-index-card-the-runs-predictions",
        lambda d, b: idx(_run(d, b), "--card", str(d / "run" / "predictions.jsonl")), "--card")  # fmt: skip
    cli("model-index-card-and-out-one-file",
        lambda d, b: idx(b.run, "--card", str(write(d / "README.md", "# M\n")), "--out", str(d / "README.md")),
        "--out")  # fmt: skip

    def card_link(d: Path, b: Base) -> list[str]:
        card = write(d / "README.md", "# M\n")
        (d / "link.md").symlink_to(card)
        return idx(b.run, "--card", str(d / "link.md"), "--out", str(card))

    cli("model-index-out-the-card-through-a-symlink", card_link, "--out")
    cli("model-index-out-the-runs-manifest-spelt-with-dot",
        lambda d, b: idx(_run(d, b), "--out", str(d / "run" / "." / "manifest.json")), "--out")  # fmt: skip
    cli("model-index-card-a-directory", lambda d, b: idx(b.run, "--card", str((d / "c").mkdir() or d / "c")),
        lambda d: str(d / "c"))  # fmt: skip
    cli("model-index-run-a-samples-run", lambda d, b: idx(_samples(d, b)), lambda d: str(d / "samples"))
    cli(
        "model-index-model-twice",
        lambda d, b: idx(b.run, "--model", "fake:m", "--model", "fake:x"),
        "--model",
    )
    cli("model-index-card-a-gate-rules-yaml",
        lambda d, b: idx(b.run, "--card", str(write(d / "rules.yaml", "margin: 0.01\n"))), "--card")  # fmt: skip
    lm = lambda d, b, *extra: [  # noqa: E731
        "export",
        "lm-eval",
        "--samples",
        str(b.samples),
        "--out",
        str(d / "t"),
        *extra,
    ]
    cli("lm-eval-prompt-a-samples-jsonl", lambda d, b: lm(d, b, "--prompt", str(_samples(d, b) / "samples.jsonl")),
        lambda d: str(d / "samples" / "samples.jsonl"))  # fmt: skip
    cli("lm-eval-prompt-a-metrics-json", lambda d, b: lm(d, b, "--prompt", str(_run(d, b) / "metrics.json")),
        lambda d: str(d / "run" / "metrics.json"))  # fmt: skip
    cli("lm-eval-samples-a-predictions-file",
        lambda d, b: ["export", "lm-eval", "--samples", str(_run(d, b) / "predictions.jsonl"), "--out",
                      str(d / "t")], lambda d: str(d / "run" / "predictions.jsonl"))  # fmt: skip
    cli("lm-eval-samples-a-masks-file",
        lambda d, b: ["export", "lm-eval", "--samples", str(templates_file(d)), "--out", str(d / "t")],
        lambda d: str(d / "templates.jsonl"))  # fmt: skip
    cli("lm-eval-task-twice", lambda d, b: lm(d, b, "--task", "a", "--task", "b"), "--task")
    cli("lm-eval-device-bogus", lambda d, b: lm(d, b, "--device", "tpu"), "--device")
    cli("lm-eval-task-with-a-dot-dot", lambda d, b: lm(d, b, "--task", ".."), "--task")

    py = _py(case, "export")
    py("lm-eval-prompt-a-samples-jsonl", lambda d: str(d / "samples" / "samples.jsonl"), lambda d, b: lambda: nlibias.export_lm_eval(
        b.samples, d / "t", prompt=str(_samples(d, b) / "samples.jsonl")))  # fmt: skip
    py("lm-eval-model-path-a-file", "model_path", lambda d, b: lambda: nlibias.export_lm_eval(
        b.samples, d / "t", model_path=write(d / "m.txt", "x")))  # fmt: skip
    py("model-index-run-a-samples-run", "run", lambda d, b: lambda: nlibias.model_index(_samples(d, b)))
    py("model-index-name-a-number", "name", lambda d, b: lambda: nlibias.model_index(b.run, name=5))  # type: ignore[arg-type]


# -- report: the run of another kind, outputs spelt another way, options that apply to nothing ---------------


def _report_cases(case: Add) -> None:
    cli = _cli(case, "report")
    cli("md-out-the-runs-metrics-through-dot",
        lambda d, b: ["report", str(_run(d, b)), "--format", "md", "--out", str(d / "run" / "." / "metrics.json")],
        "--out")  # fmt: skip

    def html_link(d: Path, b: Base) -> list[str]:
        run = _run(d, b)
        (d / "r.html").symlink_to(run / "predictions.jsonl")
        return ["report", str(run), "--no-plots", "--out", str(d / "r.html")]

    cli("html-out-a-symlink-to-the-runs-predictions", html_link, "--out")

    def compare_link(d: Path, b: Base) -> list[str]:
        run = _run(d, b)
        (d / "same").symlink_to(run)
        return ["report", str(run), str(d / "same"), "--compare", "--format", "md"]

    cli("compare-a-run-and-a-symlink-to-it", compare_link, "name each run once")
    cli("compare-a-run-and-its-trailing-slash",
        lambda d, b: ["report", str(_run(d, b)), str(d / "run") + "/", "--compare", "--format", "csv"], "name each run once")  # fmt: skip
    cli(
        "a-samples-run",
        lambda d, b: ["report", str(_samples(d, b)), "--format", "md"],
        lambda d: str(d / "samples"),
    )
    cli("debias-on-a-bbnli-run", lambda d, b: ["report", str(b.run), "--debias"], "no before/after pair")
    cli("format-twice", lambda d, b: ["report", str(b.run), "--format", "md", "--format", "csv"], "--format")
    cli("no-plots-with-debias", lambda d, b: ["report", str(b.run), "--debias", "--no-plots"], "--no-plots")
    cli("compare-with-debias", lambda d, b: ["report", str(b.run), str(_run(d, b)), "--compare", "--debias"],
        "--compare")  # fmt: skip
    cli("html-out-a-directory", lambda d, b: ["report", str(b.run), "--no-plots", "--out",
                                               str((d / "o").mkdir() or d / "o")], lambda d: str(d / "o"))  # fmt: skip
    py = _py(case, "report")
    py("make-report-out-the-runs-metrics-through-dot", "out", lambda d, b: lambda: nlibias.make_report(
        [_run(d, b)], out=d / "run" / "." / "metrics.json", fmt="md", plots=False))  # fmt: skip
    py("make-report-compare-a-run-and-a-symlink", "runs", lambda d, b: (lambda run: (
        (d / "same").symlink_to(run), lambda: nlibias.make_report([run, d / "same"], compare=True, fmt="md"))[1])(
        _run(d, b)))  # fmt: skip
    py("make-report-min-effect-without-debias", "min_effect", lambda d, b: lambda: nlibias.make_report(
        [b.run], fmt="md", min_effect=1.0))  # fmt: skip
    py("make-report-pairs-a-string", "pairs", lambda d, b: lambda: nlibias.make_report(
        [b.run], debias=True, pairs="fake:m=fake:n"))  # fmt: skip


# -- score: files of another kind, one file reached twice, seeds past their bounds ------------------------


def _score_cases(case: Add) -> None:
    cli = _cli(case, "score")
    sc = lambda d, b, *preds, extra=(): [  # noqa: E731
        "score",
        "--samples",
        str(b.samples),
        *[x for p in preds for x in ("--predictions", str(p))],
        "--bootstrap",
        "0",
        *extra,
    ]

    def copy(d: Path, b: Base) -> Path:
        return write(d / "p" / "preds.jsonl", b.predictions.read_text())

    cli("a-run-and-its-own-predictions", lambda d, b: sc(d, b, _run(d, b), d / "run" / "predictions.jsonl"),
        "--predictions")  # fmt: skip
    cli("a-glob-and-a-file-it-matches", lambda d, b: sc(d, b, (copy(d, b), d / "p" / "*.jsonl")[1], d / "p" / "preds.jsonl"),
        "--predictions")  # fmt: skip
    cli("two-globs-that-overlap", lambda d, b: sc(d, b, (copy(d, b), d / "p" / "*.jsonl")[1], d / "p" / "pr*.jsonl"),
        "--predictions")  # fmt: skip
    cli("a-gate-rules-yaml", lambda d, b: sc(d, b, write(d / "rules.yaml", "margin: 0.01\n")),
        _p("rules.yaml"))  # fmt: skip
    cli("a-masks-template-file", lambda d, b: sc(d, b, _derived(d)), lambda d: f"{d / 't.jsonl'}:1")
    cli(
        "a-runs-manifest",
        lambda d, b: sc(d, b, _run(d, b) / "manifest.json"),
        lambda d: str(d / "run" / "manifest.json"),
    )
    cli("a-validation-queue-csv", lambda d, b: sc(d, b, _vrun(d, b) / "validation" / "queue.csv"),
        lambda d: str(d / "vrun" / "validation" / "queue.csv"))  # fmt: skip
    cli("out-the-predictions-file", lambda d, b: [*sc(d, b, copy(d, b)), "--out", str(d / "p" / "preds.jsonl")],
        lambda d: str(d / "p" / "preds.jsonl"))  # fmt: skip
    cli(
        "by-twice", lambda d, b: sc(d, b, b.predictions, extra=("--by", "domain", "--by", "subtopic")), "--by"
    )
    cli("seed-negative", lambda d, b: [*score_args(b, b.predictions, d)[:-1], "39", "--seed", "-1"], "--seed")
    cli("bootstrap-one", lambda d, b: [*score_args(b, b.predictions, d)[:-1], "1"], "--bootstrap")
    cli("samples-a-predictions-file", lambda d, b: ["score", "--samples", str(_run(d, b) / "predictions.jsonl"),
        "--predictions", str(b.predictions), "--bootstrap", "0"], lambda d: str(d / "run" / "predictions.jsonl"))  # fmt: skip
    cli("answer-column-with-nli-predictions", lambda d, b: sc(d, b, b.predictions, extra=("--answer-column", "label")),
        "--answer-column")  # fmt: skip

    def last_row_other_model(d: Path, b: Base) -> list[str]:
        rows = _predictions(b)
        rows[-1] = dict(rows[-1], model="fake:other")
        return sc(d, b, _preds_file(d, rows))

    py = _py(case, "score")
    py("predictions-one-file-spelt-twice", "predictions", lambda d, b: lambda: nlibias.score(
        b.samples, [copy(d, b), d / "p" / ".." / "p" / "preds.jsonl"], bootstrap=0))  # fmt: skip
    py(
        "bootstrap-true",
        "bootstrap",
        lambda d, b: lambda: nlibias.score(b.samples, b.predictions, bootstrap=True),
    )
    py("answer-column-blank", "answer_column", lambda d, b: lambda: nlibias.score(
        b.samples, b.predictions, bootstrap=0, answer_column=""))  # fmt: skip


def _predictions_n(d: Path) -> list[str]:
    return (d / "preds.jsonl").read_text().splitlines()


# -- audit: sharding, ray, seeds and caches ------------------------------------------------------------------


def _audit_cases(case: Add) -> None:
    cli = _cli(case, "audit")
    au = lambda d, b, *extra: [*audit_args(b.samples, d), *extra]  # noqa: E731
    # one device twice (`cpu,cpu`) is two workers on it, as docs/scaling.md says: an empty item is not
    cli("devices-an-empty-item", lambda d, b: au(d, b, "--devices", "cpu,,cpu"), "--devices")
    cli("devices-blank", lambda d, b: au(d, b, "--devices", ""), "--devices")
    cli("devices-a-bogus-device", lambda d, b: au(d, b, "--devices", "cpu,tpu"), "--devices")
    cli(
        "devices-and-device-disagree",
        lambda d, b: au(d, b, "--devices", "cpu", "--device", "cuda"),
        "--device",
    )
    cli("ray-bogus", lambda d, b: au(d, b, "--ray", "maybe"), "--ray")
    cli("ray-workers-without-ray", lambda d, b: au(d, b, "--ray-workers", "4"), "--ray-workers")
    cli("dtype-bogus", lambda d, b: au(d, b, "--dtype", "float8"), "--dtype")
    cli(
        "bootstrap-one",
        lambda d, b: [*audit_args(b.samples, d)[:-4], "--bootstrap", "1", "--no-cache"],
        "--bootstrap",
    )
    cli("cache-the-samples-jsonl", lambda d, b: [*audit_args(_samples(d, b), d)[:-2], "--cache",
                                                  str(d / "samples" / "samples.jsonl")], "--cache")  # fmt: skip
    cli("cache-the-outputs-predictions", lambda d, b: [*audit_args(b.samples, d)[:-2], "--cache",
                                                        str(d / "o" / "predictions.jsonl")], "--cache")  # fmt: skip
    cli("cache-a-metrics-json", lambda d, b: [*audit_args(b.samples, d)[:-2], "--cache",
                                               str(_run(d, b) / "metrics.json")], "--cache")  # fmt: skip
    cli(
        "samples-a-masks-file",
        lambda d, b: audit_args(templates_file(d), d),
        lambda d: str(d / "templates.jsonl"),
    )
    cli("prompt-a-samples-jsonl", lambda d, b: _gen(d, b, "--prompt", str(_samples(d, b) / "samples.jsonl")),
        lambda d: str(d / "samples" / "samples.jsonl"))  # fmt: skip
    cli("generative-twice", lambda d, b: _gen(d, b, "--generative", "fake:g"), "--generative")
    py = _py(case, "audit")
    py("models-one-model-twice-spelt-with-a-list-and-tuple", "models", lambda d, b: lambda: nlibias.audit(
        b.samples, ("fake:m", "fake:m"), cache=False, bootstrap=0))  # fmt: skip
    py("cache-the-samples-jsonl", "cache", lambda d, b: lambda: nlibias.audit(
        _samples(d, b), ["fake:m"], cache=str(d / "samples" / "samples.jsonl"), bootstrap=0))  # fmt: skip


# -- validate: the run's own files given as others, bounds, second values -------------------------------------


def _validate_cases(case: Add) -> None:
    cli = _cli(case, "validate")
    queue = lambda d: str(d / "vrun" / "validation" / "queue.csv")  # noqa: E731
    cli(
        "import-the-runs-own-queue",
        lambda d, b: ["validate", "import", str(_vrun(d, b)), queue(d)],
        queue,
    )
    cli("import-a-predictions-jsonl", lambda d, b: ["validate", "import", str(_vrun(d, b)), str(b.predictions)],
        str(Path("run") / "predictions.jsonl"))  # fmt: skip
    cli("import-a-metrics-json-as-label-studio",
        lambda d, b: ["validate", "import", str(_vrun(d, b)), str(_run(d, b) / "metrics.json"), "--format",
                      "label-studio"], lambda d: str(d / "run" / "metrics.json"))  # fmt: skip
    cli("import-format-twice", lambda d, b: ["validate", "import", str(_vrun(d, b)), queue(d), "--format", "csv",
                                              "--format", "argilla"], "--format")  # fmt: skip
    cli("import-annotator-twice", lambda d, b: ["validate", "import", str(_vrun(d, b)), queue(d), "--annotator",
                                                 "ann", "--annotator", "bob"], "--annotator")  # fmt: skip

    def export_link(d: Path, b: Base) -> list[str]:
        run = _vrun(d, b)
        (d / "q.csv").symlink_to(run / "validation" / "queue.csv")
        return ["validate", "export", str(run), "--out", str(d / "q.csv")]

    cli("export-out-a-symlink-to-the-queue", export_link, "--out")
    cli("export-out-the-queue-through-dot", lambda d, b: ["validate", "export", str(_vrun(d, b)), "--out",
                                                           str(d / "vrun" / "validation" / "." / "queue.csv")], "--out")  # fmt: skip
    cli("export-format-twice", lambda d, b: ["validate", "export", str(_vrun(d, b)), "--format", "csv", "--format",
                                              "argilla"], "--format")  # fmt: skip
    cli(
        "export-a-classifier-run",
        lambda d, b: ["validate", "export", str(_run(d, b))],
        lambda d: str(d / "run"),
    )
    cli("resolve-rule-twice", lambda d, b: ["validate", "resolve", str(_vrun(d, b)), "--rule", "drop", "--rule",
                                             "majority"], "--rule")  # fmt: skip
    cli(
        "resolve-a-samples-run",
        lambda d, b: ["validate", "resolve", str(_samples(d, b))],
        lambda d: str(d / "samples"),
    )
    cli("status-exclude-twice", lambda d, b: ["validate", "status", str(_vrun(d, b)), "--exclude", "ann",
                                               "--exclude", "ann"], "--exclude")  # fmt: skip
    cli("explanations-a-classifier-run", lambda d, b: ["validate", "explanations", str(_run(d, b))],
        lambda d: str(d / "run"))  # fmt: skip
    py = _py(case, "validate")
    py("import-the-runs-own-queue", queue, lambda d, b: lambda: nlibias.validation_import(
        _vrun(d, b), d / "vrun" / "validation" / "queue.csv"))  # fmt: skip
    py("resolve-min-annotators-true", "min_annotators",
       lambda d, b: lambda: nlibias.validation_resolve(_vrun(d, b), min_annotators=True))  # fmt: skip
    py(
        "resolve-rule-bogus",
        "rule",
        lambda d, b: lambda: nlibias.validation_resolve(_vrun(d, b), rule="vote"),
    )


# -- augment, finetune, debias: files of another kind, one file in two roles ----------------------------------


def _training_cases(case: Add) -> None:
    cli = _cli(case, "training")
    cli("augment-names-the-train-file", lambda d, b: _augment(d, "--names", str(d / "data" / "train.jsonl")),
        lambda d: str(d / "data" / "train.jsonl"))  # fmt: skip
    cli("augment-names-a-name-paired-with-itself", lambda d, b: _augment(
        d, "--names", str(write(d / "names.tsv", "John\tMary\nAnna\tAnna\n"))), lambda d: f"{d / 'names.tsv'}:2")  # fmt: skip
    cli("augment-names-one-name-in-two-pairs", lambda d, b: _augment(
        d, "--names", str(write(d / "names.tsv", "John\tMary\nJohn\tJane\n"))), lambda d: f"{d / 'names.tsv'}:2")  # fmt: skip
    cli("augment-names-three-columns-on-the-last-line", lambda d, b: _augment(
        d, "--names", str(write(d / "names.tsv", "John\tMary\nPeter\tPaula\tPat\n"))), lambda d: f"{d / 'names.tsv'}:2")  # fmt: skip
    cli("augment-word-list-the-train-file", lambda d, b: _augment(d, "--word-list", str(d / "data" / "train.jsonl")),
        lambda d: str(d / "data" / "train.jsonl"))  # fmt: skip
    cli("augment-match-twice", lambda d, b: _augment(d, "--match", "words", "--match", "exact"), "--match")
    cli("augment-match-bogus", lambda d, b: _augment(d, "--match", "fuzzy"), "--match")
    cli(
        "augment-select-twice",
        lambda d, b: _augment(d, "--select", "occupation", "--select", "all"),
        "--select",
    )
    cli("augment-train-a-samples-jsonl", lambda d, b: ["augment", "gender-swap", "--train",
        str(_samples(d, b) / "samples.jsonl"), "--out", str(d / "aug")], lambda d: str(d / "samples" / "samples.jsonl"))  # fmt: skip
    cli("augment-train-a-predictions-file", lambda d, b: ["augment", "gender-swap", "--train",
        str(_run(d, b) / "predictions.jsonl"), "--out", str(d / "aug")], lambda d: str(d / "run" / "predictions.jsonl"))  # fmt: skip
    cli("augment-out-the-train-file", lambda d, b: ["augment", "gender-swap", "--train",
        str(_training(d / "data")), "--out", str(d / "data" / "train.jsonl")], "--out")  # fmt: skip
    cli("finetune-train-a-masks-file", lambda d, b: ["finetune", "--model", str(_model_dir(d, CLASSIFIER)),
        "--train", str(templates_file(d)), "--out", str(d / "ft")], lambda d: str(d / "templates.jsonl"))  # fmt: skip
    py = _py(case, "training")
    py("augment-names-the-train-file", lambda d: str(d / "data" / "train.jsonl"), lambda d, b: lambda: nlibias.augment(
        _training(d / "data"), d / "aug", names=d / "data" / "train.jsonl", progress=False))  # fmt: skip
    py("augment-word-list-a-metrics-json", lambda d: str(d / "run" / "metrics.json"), lambda d, b: lambda: nlibias.augment(
        _training(d / "data"), d / "aug", word_list=_run(d, b) / "metrics.json", progress=False))  # fmt: skip


# -- YAML: extend's nested keys given files of another kind ----------------------------------------------------


def _yaml_cases(case: Add) -> None:
    def yaml(name: str, text: Callable[[Path, Base], str], named: Named) -> None:
        def build(d: Path, b: Base) -> tuple[list[str], str]:
            return extend_yaml(d, b, "source: BASE\n" + text(d, b)), named(d) if callable(named) else named

        case(f"s29c-yaml/extend-{name}", build)

    yaml("templates-curated-a-predictions-file",
         lambda d, b: f"templates:\n  curated: '{_run(d, b) / 'predictions.jsonl'}'\n",
         lambda d: str(d / "run" / "predictions.jsonl"))  # fmt: skip
    yaml(
        "source-a-samples-run",
        lambda d, b: f"source: '{_samples(d, b)}'\n",
        lambda d: f"{d / 'config.yaml'}:2",
    )
    yaml(
        "mlm-model-a-list-of-two",
        lambda d, b: "mlm:\n  model: [fake, fake]\n",
        lambda d: f"{d / 'config.yaml'}:3",
    )
    yaml("filter-models-one-twice", lambda d, b: "filter:\n  models: ['fake:m', 'fake:m']\n",
         lambda d: f"{d / 'config.yaml'}:3")  # fmt: skip
    yaml("mlm-a-bare-string", lambda d, b: "mlm: fake\n", lambda d: f"{d / 'config.yaml'}:2")
    yaml("templates-stopwords-a-metrics-json", lambda d, b: f"templates:\n  derive: true\n  stopwords: '{_run(d, b) / 'metrics.json'}'\n",
         lambda d: str(d / "run" / "metrics.json"))  # fmt: skip
    yaml("subtopics-the-second-a-trailing-space",
         lambda d, b: "subtopics: [man_is_to_breadwinner, 'man_is_to_breadwinner ']\n", lambda d: f"{d / 'config.yaml'}:2")  # fmt: skip


def s29c_cases() -> list[Case]:
    groups = [_masks_cases, _env_cases, _export_cases, _report_cases, _score_cases, _audit_cases,
              _validate_cases, _training_cases, _yaml_cases]  # fmt: skip
    return cases_of(groups, KNOWN)
