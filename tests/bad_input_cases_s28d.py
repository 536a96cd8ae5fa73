"""Session 28's final measurement of issue #48 on the final tree: a fresh set of bad inputs on every
route (expand, audit, score, report, gate, explain, export, validate, extend, masks, augment,
finetune, debias, doctor, schema; the command line, Python and YAML), weighted to the last hour's
rules (a model none of whose answers is read warned of, a JSON key twice refused by the one parser,
spaces around a model reference and a blank path refused, a .gguf file's generative role, an empty
export warned of, a folder of several files locked, a full disk named) and their variants on the
routes those rules were not written for. Part of the corpus of ``bad_input_cases``; none repeats an
earlier case."""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable
from pathlib import Path

import nlibias
from bad_input_cases_declared import _model_dir
from bad_input_cases_s26 import _gate
from bad_input_cases_s27 import _augment, _finetune, _training, _vrun
from bad_input_cases_s28 import _predictions, _preds_file
from bad_input_cases_s28c import _explain_args
from bad_input_cases_s28c_more import CLASSIFIER, QUEUE_HEADER, Add, extend_cli, extend_yaml, pair, write
from bad_input_corpus import Base, Case, audit_args, cases_of, score_args

KNOWN: dict[str, str] = {}

Build = Callable[[Path, Base], list[str]]
PyBuild = Callable[[Path, Base], Callable[[], object]]


def _cli(case: Add, group: str) -> Callable[..., None]:
    def add(
        name: str, args: Build, named: str | Callable[[Path], str], expect: str = "error", **kw: object
    ) -> None:
        def build(d: Path, b: Base) -> tuple[list[str], str]:
            built = args(d, b)
            return built, named(d) if callable(named) else named

        case(f"s28d-{group}/cli-{name}", build, expect, **kw)

    return add


def _py(case: Add, group: str) -> Callable[[str, str, PyBuild], None]:
    def add(name: str, named: str, call: PyBuild) -> None:
        case(f"s28d-{group}/python-{name}", lambda d, b: (call(d, b), named))

    return add


def _yaml_extend(case: Add, group: str) -> Callable[[str, str, int], None]:
    def add(name: str, text: str, line: int) -> None:
        case(
            f"s28d-{group}/yaml-extend-{name}",
            lambda d, b: (extend_yaml(d, b, "source: BASE\n" + text), f"{d / 'config.yaml'}:{line}"),
        )

    return add


def _prescreen(d: Path, b: Base, *extra: str) -> list[str]:
    return [
        "validate",
        "prescreen",
        str(_vrun(d, b)),
        "--no-progress",
        "--cache",
        str(d / "c.sqlite"),
        *extra,
    ]


def _gguf(d: Path) -> str:
    return str(write(d / "models" / "tiny-q4.gguf", b"GGUF" + (3).to_bytes(4, "little") + bytes(16)))


def _lm_eval(d: Path, b: Base, *extra: str) -> list[str]:
    return ["export", "lm-eval", "--samples", str(b.samples), "--out", str(d / "task"), *extra]


def _swap(args: list[str], flag: str, value: str) -> list[str]:
    at = args.index(flag) + 1
    return [*args[:at], value, *args[at + 1 :]]


def _index(b: Base, *extra: str) -> list[str]:
    return ["export", "model-index", str(b.run), *extra]


# -- spaces around a model reference, on the routes the one parser may not reach ----------------------


def _spaces_cases(case: Add) -> None:
    cli = _cli(case, "spaces")
    cli(
        "validate-prescreen-judge-a-leading-space",
        lambda d, b: _prescreen(d, b, "--judge", " fake:j"),
        "--judge",
    )
    cli("validate-prescreen-lm-judge-a-trailing-space",
        lambda d, b: _prescreen(d, b, "--judge", "fake:j", "--lm-judge", "fake:g "), "--lm-judge")  # fmt: skip
    cli("extend-mlm-a-trailing-space", lambda d, b: _swap(extend_cli(d, b), "--mlm", "fake "), "--fill-model")
    cli("export-lm-eval-model-a-leading-space", lambda d, b: _lm_eval(d, b, "--model", " smollm2"), "--model")
    cli("export-model-index-model-a-trailing-space", lambda d, b: _index(b, "--model", "m "), "--model")
    cli("augment-her-model-a-leading-space",
        lambda d, b: _augment(d, "--her", "lm", "--her-model", " smollm2"), "--her-model")  # fmt: skip
    cli("audit-mlm-a-trailing-space",
        lambda d, b: [*audit_args(b.samples, d)[:3], "--mlm", "fake ", *audit_args(b.samples, d)[5:]], "--mlm")  # fmt: skip

    py = _py(case, "spaces")
    py("validation-prescreen-judge-a-trailing-space", "judge",
       lambda d, b: lambda: nlibias.validation_prescreen(_vrun(d, b), judge="fake:j ", progress=False))  # fmt: skip
    py("export-lm-eval-model-a-trailing-space", "model",
       lambda d, b: lambda: nlibias.export_lm_eval(b.samples, d / "t", model="smollm2 "))  # fmt: skip
    py("gate-pairs-a-key-with-a-space", "pairs",
       lambda d, b: (lambda c, r: lambda: nlibias.gate(c, r, pairs={"m ": "m"}))(*pair(d, b)))  # fmt: skip
    py(
        "model-index-model-a-leading-space",
        "model",
        lambda d, b: lambda: nlibias.model_index(b.run, model=" m"),
    )
    py("augment-her-model-a-trailing-space", "her_model", lambda d, b: lambda: nlibias.augment(
        _training(d / "data"), d / "aug", her="lm", her_model="smollm2 ", progress=False))  # fmt: skip
    py("extend-fill-model-a-leading-space", "fill_model", lambda d, b: lambda: nlibias.extend(
        source=b.bbnli_dir, out_dir=d / "next", fill_model=" fake", until="masks", progress=False))  # fmt: skip

    yaml = _yaml_extend(case, "spaces")
    yaml("mlm-model-a-leading-space", "mlm:\n  model: ' fake'\n", 3)
    yaml("filter-models-a-trailing-space", "filter:\n  models: ['fake:m ']\n", 3)
    yaml("compare-fills-a-trailing-space", "filter:\n  compare_fills: ['fake:x ']\n", 3)


# -- a JSON key twice, on readers the one parser may not reach ------------------------------------------


def _twice_cases(case: Add) -> None:
    def config_twice(d: Path) -> Path:
        folder = _model_dir(d, CLASSIFIER)
        text = f'{{"architectures": ["{CLASSIFIER}"], "architectures": ["GPT2LMHeadModel"]}}'
        write(folder / "config.json", text)
        return folder

    cfg = lambda d: str(d / CLASSIFIER / "config.json")  # noqa: E731
    cli = _cli(case, "twice")
    cli("finetune-model-config-a-key-twice", lambda d, b: _finetune(d, model=str(config_twice(d))), cfg)
    cli("validate-prescreen-judge-config-a-key-twice",
        lambda d, b: _prescreen(d, b, "--judge", str(config_twice(d))), cfg)  # fmt: skip
    cli("extend-mlm-config-a-key-twice", lambda d, b: [*extend_cli(d, b)[:6], str(config_twice(d)),
                                                        *extend_cli(d, b)[7:]], cfg)  # fmt: skip

    def metrics_twice(d: Path, b: Base) -> list[str]:
        cand, ref = pair(d, b)
        path = cand / "metrics.json"
        path.write_text(path.read_text().replace("{", '{"schema_version": 0, ', 1))
        return _gate(cand, ref)

    cli("gate-candidate-metrics-a-key-twice", metrics_twice, lambda d: str(d / "cand" / "metrics.json"))

    def index_metrics_twice(d: Path, b: Base) -> list[str]:
        run = Path(shutil.copytree(b.run, d / "run"))
        path = run / "metrics.json"
        path.write_text(path.read_text().replace("{", '{"models": {}, ', 1))
        return ["export", "model-index", str(run)]

    cli(
        "export-model-index-metrics-a-key-twice",
        index_metrics_twice,
        lambda d: str(d / "run" / "metrics.json"),
    )

    def samples_row_twice(d: Path, b: Base) -> list[str]:
        src = b.samples / "samples.jsonl"
        lines = src.read_text().splitlines()
        lines[0] = lines[0].replace("{", '{"hypothesis": "Nobody works.", ', 1)
        path = write(d / "s" / "samples.jsonl", "\n".join(lines) + "\n")
        return [*audit_args(path, d)]

    cli("audit-samples-jsonl-a-key-twice", samples_row_twice, lambda d: f"{d / 's' / 'samples.jsonl'}:1")

    def lm_eval_samples_twice(d: Path, b: Base) -> list[str]:
        src = b.samples / "samples.jsonl"
        lines = src.read_text().splitlines()
        lines[0] = lines[0].replace("{", '{"premise": "A man.", ', 1)
        path = write(d / "s" / "samples.jsonl", "\n".join(lines) + "\n")
        return ["export", "lm-eval", "--samples", str(path), "--out", str(d / "task")]

    cli(
        "export-lm-eval-samples-jsonl-a-key-twice",
        lm_eval_samples_twice,
        lambda d: f"{d / 's' / 'samples.jsonl'}:1",
    )

    def preds_nan(d: Path, b: Base) -> list[str]:
        rows = [dict(row, probs=[0.5, 0.5, 0.0]) for row in _predictions(b)]
        path = _preds_file(d, rows)
        path.write_text(path.read_text().replace("0.0]", "NaN]", 1))
        return score_args(b, path, d)

    cli("score-predictions-probs-a-nan-literal", preds_nan, lambda d: str(d / "preds.jsonl"))

    py = _py(case, "twice")
    py("finetune-model-config-a-key-twice", "config.json", lambda d, b: lambda: nlibias.finetune(
        str(config_twice(d)), _training(d / "data"), d / "ft"))  # fmt: skip
    py("explain-judge-config-a-key-twice", "config.json", lambda d, b: lambda: nlibias.explain(
        _explain_args(d, b)[1], [str(config_twice(d))], cache=False, bootstrap=0))  # fmt: skip

    def yaml_filter(d: Path, b: Base) -> tuple[list[str], str]:
        return extend_yaml(d, b, f"source: BASE\nfilter:\n  models: ['{config_twice(d)}']\n"), cfg(d)

    case("s28d-twice/yaml-extend-filter-model-config-a-key-twice", yaml_filter)


# -- a blank path, on the options and variables the declared type may not reach ------------------------


def _blank_cases(case: Add) -> None:
    cli = _cli(case, "blank")
    cli(
        "audit-cache-blank",
        lambda d, b: [*audit_args(b.samples, d)[:-2], "--cache", "", "--quiet"],
        "--cache",
    )
    cli("validate-prescreen-cache-blank",
        lambda d, b: ["validate", "prescreen", str(_vrun(d, b)), "--judge", "fake:j", "--cache", " "], "--cache")  # fmt: skip
    cli("export-lm-eval-out-blank",
        lambda d, b: ["export", "lm-eval", "--samples", str(b.samples), "--out", ""], "--out")  # fmt: skip
    cli("export-model-index-card-blank", lambda d, b: _index(b, "--card", ""), "--card")
    cli("export-model-index-out-a-space", lambda d, b: _index(b, "--out", " "), "--out")
    cli("masks-derive-stopwords-blank", lambda d, b: ["masks", "derive", "--stopwords", "", "--subtopic",
                                                       "man_is_to_breadwinner"], "--stopwords")  # fmt: skip
    cli("masks-list-source-blank", lambda d, b: ["masks", "list", "--source", ""], "--source")
    cli("augment-names-blank", lambda d, b: _augment(d, "--names", ""), "--names")
    cli("report-out-a-space", lambda d, b: ["report", str(b.run), "--format", "md", "--out", " "], "--out")
    cli("score-samples-blank", lambda d, b: ["score", "--samples", "", "--predictions", str(b.predictions),
                                             "--bootstrap", "0"], "--samples")  # fmt: skip
    cli("gate-samples-blank", lambda d, b: _gate(*pair(d, b), "--samples", ""), "--samples")
    cli(
        "expand-out-blank",
        lambda d, b: ["expand", "bbnli", "--source", str(b.bbnli_dir), "--out", ""],
        "--out",
    )
    cli("expand-data-dir-env-blank", lambda d, b: ["expand", "bbnli", "--out", str(d / "s")], "NLIBIAS_DATA_DIR",
        env=lambda d: {"NLIBIAS_DATA_DIR": ""})  # fmt: skip

    py = _py(case, "blank")
    py(
        "validation-import-file-blank",
        "file",
        lambda d, b: lambda: nlibias.validation_import(_vrun(d, b), ""),
    )
    py("augment-names-blank", "names", lambda d, b: lambda: nlibias.augment(
        _training(d / "data"), d / "aug", names="", progress=False))  # fmt: skip
    py("gate-samples-a-space", "samples", lambda d, b: (lambda c, r: lambda: nlibias.gate(c, r, samples=" "))(
        *pair(d, b)))  # fmt: skip
    py("make-report-out-blank", "out", lambda d, b: lambda: nlibias.make_report([b.run], out="", plots=False))
    py("finetune-eval-path-blank", "eval_path", lambda d, b: lambda: nlibias.finetune(
        str(_model_dir(d, CLASSIFIER)), _training(d / "data"), d / "ft", eval_path=""))  # fmt: skip
    py(
        "validation-export-out-blank",
        "out",
        lambda d, b: lambda: nlibias.validation_export(_vrun(d, b), out=""),
    )
    py("load-run-blank", "directory", lambda d, b: lambda: nlibias.load_run(""))

    yaml = _yaml_extend(case, "blank")
    yaml("mlm-stopwords-a-space", "mlm:\n  stopwords: ' '\n", 3)
    yaml("filter-model-blank", "filter:\n  models: ['']\n", 3)


# -- a .gguf file in a role it cannot fill ---------------------------------------------------------------


def _gguf_cases(case: Add) -> None:
    cli = _cli(case, "roles")
    cli("validate-prescreen-judge-a-gguf-file", lambda d, b: _prescreen(d, b, "--judge", _gguf(d)), "--judge")
    cli("explain-judge-a-gguf-file", lambda d, b: _swap(_explain_args(d, b), "--judge", _gguf(d)), "--judge")
    cli("finetune-model-a-gguf-file", lambda d, b: _finetune(d, model=_gguf(d)), "--model")
    cli("audit-mlm-a-gguf-file",
        lambda d, b: [*audit_args(b.samples, d)[:3], "--mlm", _gguf(d), *audit_args(b.samples, d)[5:]], "--mlm")  # fmt: skip
    py = _py(case, "roles")
    py("debias-models-a-gguf-file", "models", lambda d, b: lambda: nlibias.debias_models(
        [_gguf(d)], _training(d / "data"), d / "deb", progress=False))  # fmt: skip
    py("validation-prescreen-judge-a-gguf-file", "judge",
       lambda d, b: lambda: nlibias.validation_prescreen(_vrun(d, b), judge=_gguf(d), progress=False))  # fmt: skip


# -- empty results: nothing read, nothing exported, nothing judged ------------------------------------------


def _empty_cases(case: Add) -> None:
    cli = _cli(case, "empty")

    def unread(d: Path, b: Base) -> Path:
        rows = [{"id": r["id"], "model": "fake:m", "label": None, "text": "?"} for r in _predictions(b)]
        path = _preds_file(d, rows)
        from bad_input_corpus import invoke

        invoke(["score", "--samples", str(b.samples), "--predictions", str(path), "--out", str(d / "unread"),
                "--bootstrap", "0"])  # fmt: skip
        return d / "unread"

    cli("export-model-index-a-run-whose-model-read-nothing",
        lambda d, b: ["export", "model-index", str(unread(d, b))], "fake:m")  # fmt: skip
    cli("gate-baseline-a-run-whose-model-read-nothing",
        lambda d, b: _gate(pair(d, b)[0], unread(d, b)), "baseline model 'fake:m'")  # fmt: skip

    def header_only(d: Path, b: Base) -> Path:
        run = _vrun(d, b)
        write(run / "validation" / "queue.csv", ",".join(QUEUE_HEADER) + "\n")
        return run

    queue = lambda d: str(d / "vrun" / "validation" / "queue.csv")  # noqa: E731
    for fmt in ("argilla", "label-studio"):
        cli(f"validate-export-{fmt}-a-header-only-queue",
            lambda d, b, fmt=fmt: ["validate", "export", str(header_only(d, b)), "--format", fmt], queue, "warn")  # fmt: skip
    cli("validate-resolve-a-header-only-queue",
        lambda d, b: ["validate", "resolve", str(header_only(d, b))], queue, "warn")  # fmt: skip


# -- outputs: a folder that is a file, a file that is a pipe -------------------------------------------


def _outputs_cases(case: Add) -> None:
    cli = _cli(case, "outputs")
    expand = lambda out: ["expand", "bbnli", "--source", str(out[1]), "--out", str(out[0])]  # noqa: E731
    cli("expand-out-an-existing-file", lambda d, b: expand((write(d / "out.txt", "keep me\n"), b.bbnli_dir)),
        lambda d: str(d / "out.txt"))  # fmt: skip
    cli("expand-out-under-a-file", lambda d, b: expand((write(d / "f.txt", "x") / "s", b.bbnli_dir)),
        lambda d: str(d / "f.txt"))  # fmt: skip

    def dangling(d: Path, b: Base) -> list[str]:
        (d / "gone").symlink_to(d / "nowhere")
        return expand((d / "gone", b.bbnli_dir))

    cli("expand-out-a-dangling-symlink", dangling, lambda d: str(d / "gone"))

    def fifo(d: Path) -> str:  # a named pipe (what `--out /dev/stdout` or `/dev/null` is not, but is like)
        os.mkfifo(d / "pipe")
        return str(d / "pipe")

    cli(
        "export-model-index-out-a-named-pipe",
        lambda d, b: _index(b, "--out", fifo(d)),
        lambda d: str(d / "pipe"),
    )
    cli("report-md-out-a-named-pipe", lambda d, b: ["report", str(b.run), "--format", "md", "--out", fifo(d)],
        lambda d: str(d / "pipe"))  # fmt: skip
    cli("masks-derive-out-a-named-pipe", lambda d, b: ["masks", "derive", "--out", fifo(d), "--subtopic",
                                                       "man_is_to_breadwinner"], lambda d: str(d / "pipe"))  # fmt: skip
    cli("lm-eval-out-a-file", lambda d, b: [*_lm_eval(d, b)[:-2], "--out", str(write(d / "task", "x"))],
        lambda d: str(d / "task"))  # fmt: skip
    py = _py(case, "outputs")
    py("expand-out-dir-an-existing-file", "out_dir", lambda d, b: lambda: nlibias.expand(
        "bbnli", b.bbnli_dir, out_dir=write(d / "samples", "x")))  # fmt: skip


def s28d_cases() -> list[Case]:
    groups = [_spaces_cases, _twice_cases, _blank_cases, _gguf_cases, _empty_cases, _outputs_cases]
    return cases_of(groups, KNOWN)
