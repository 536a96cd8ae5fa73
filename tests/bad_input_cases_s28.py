"""A fourth fresh set of bad inputs of issue #48's classes (session 28's acceptance check of the
input side), part of the corpus of ``bad_input_cases``: ``expand`` of every source format, ``audit``
with every model kind and its options, ``score`` of nlibias's and other tools' files, ``demo``,
``benchmarks``, ``schema``, ``doctor``, ``masks``, the environment variables and their Python
counterparts. None repeats an earlier case."""

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
from bad_input_cases_routes import _bbq_rows, _bbq_run, _install, _lean, _plugin_registry, _write_jsonl
from bad_input_cases_s27b import _source, _source_file
from bad_input_corpus import WQ_HEADER, WQ_ROW, Base, Case, audit_args, cases_of, copy_samples, score_args

Build = Callable[[Path, Base], tuple[Any, str]]
Add = Callable[..., None]
CLASSIFIER = "RobertaForSequenceClassification"
SERVER = "openai:http://127.0.0.1:9/v1#m"
KNOWN: dict[str, str] = {}


# -- helpers --------------------------------------------------------------------------------------


def _audit(d: Path, base: Base, *extra: str, samples: Path | None = None) -> list[str]:
    return [*audit_args(samples or base.samples, d), *extra]


def _swap(args: list[str], flag: str, *new: str) -> list[str]:
    """``args`` with ``--model fake:m`` replaced by ``new``."""
    at = args.index("--model")
    return [*args[:at], *new, *args[at + 2 :]] if flag else args


def _gen(d: Path, base: Base, *extra: str, samples: Path | None = None) -> list[str]:
    return [*_swap(audit_args(samples or base.samples, d), "x", "--generative", "fake:g"), *extra]


def _write(path: Path, text: str | bytes) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text, encoding="utf-8")
    return path


def _expand(kind: str, source: Path | str, d: Path, *extra: str) -> list[str]:
    return ["expand", kind, "--source", str(source), "--out", str(d / "out"), *extra]


def _pairs_csv(d: Path, text: str, name: str = "pairs.csv") -> Path:
    return _write(d / name, text)


PAIRS_CSV = (
    "more,less,group\nMen are strong.,Women are strong.,gender\nRich people lie.,Poor people lie.,class\n"
)


def _wq(d: Path, text: str) -> Path:
    return _write(d / "winoqueer_nli.csv", text)


def _crows_rows(count: int = 6) -> str:
    from bad_input_cases_routes import _data_dir

    lines = (_data_dir() / "crows-pairs" / "crows_pairs_anonymized.csv").read_text(encoding="utf-8")
    return "\n".join(lines.splitlines()[: count + 1]) + "\n"


def _predictions(base: Base) -> list[dict[str, Any]]:
    return [json.loads(line) for line in base.predictions.read_text(encoding="utf-8").splitlines()]


def _preds_file(d: Path, rows: list[dict[str, Any]], name: str = "preds.jsonl") -> Path:
    return _write_jsonl(d / name, rows)


def _prompt(d: Path, text: str, name: str = "prompts.yaml") -> Path:
    return _write(d / name, text)


def _run_copy(d: Path, base: Base, name: str = "run") -> Path:
    target = d / name
    shutil.copytree(base.run, target)
    return target


def _lm_eval_row(doc_id: int, sample_id: str, yes: float, no: float) -> dict[str, Any]:
    """One row of lm-eval's --log_samples file for a yes/no task."""
    return {
        "doc_id": doc_id,
        "doc": {"id": sample_id, "choice_answers": ["yes", "no"], "answers": "yes/no", "prompt": "true"},
        "target": 0,
        "arguments": [[f"Q{doc_id}", " yes"], [f"Q{doc_id}", " no"]],
        "resps": [[[yes, False]], [[no, False]]],
        "filtered_resps": [[yes, False], [no, False]],
    }


# -- numbers --------------------------------------------------------------------------------------


def _numbers_cases(case: Add) -> None:
    def cli(name: str, build: Callable[[Path, Base], list[str]], named: str) -> None:
        case(f"s28-numbers/cli-{name}", lambda d, b: (build(d, b), named))

    cli(
        "audit-bootstrap-one",
        lambda d, b: [*_audit(d, b)[:-4], "--bootstrap", "1", "--no-cache"],
        "--bootstrap",
    )
    cli("audit-limit-negative", lambda d, b: _audit(d, b, "--limit", "-5"), "--limit")
    cli("audit-max-tokens-negative", lambda d, b: _audit(d, b, "--max-tokens", "-64"), "--max-tokens")
    cli(
        "audit-max-new-tokens-zero",
        lambda d, b: _gen(d, b, "--mode", "generated", "--max-new-tokens", "0"),
        "--max-new-tokens",
    )
    cli(
        "audit-ray-gpus-per-worker-nan",
        lambda d, b: _audit(d, b, "--ray", "local", "--ray-gpus-per-worker", "nan"),
        "--ray-gpus-per-worker",
    )
    cli(
        "audit-concurrency-zero-with-an-endpoint",
        lambda d, b: _swap(_audit(d, b, "--concurrency", "0"), "x", "--generative", SERVER),
        "--concurrency",
    )
    cli("audit-threads-negative", lambda d, b: _audit(d, b, "--threads", "-2"), "--threads")
    cli("score-bootstrap-38", lambda d, b: [*score_args(b, b.predictions, d)[:-1], "38"], "--bootstrap")
    cli("demo-pairs-negative", lambda d, b: ["demo", "--out", str(d / "demo"), "--pairs", "-4"], "--pairs")

    def py(name: str, call: Callable[[Path, Base], Callable[[], object]], named: str) -> None:
        case(f"s28-numbers/python-{name}", lambda d, b: (call(d, b), named))

    def audit(**options: Any) -> Callable[[Path, Base], Callable[[], object]]:
        settings = {"cache": False, "bootstrap": 0, "progress": False, **options}
        models = settings.pop("models", "fake:m")
        return lambda d, b: lambda: nlibias.audit(b.samples, models, **settings)

    py("audit-bootstrap-inf", audit(bootstrap=math.inf), "bootstrap")
    py("audit-bootstrap-true", audit(bootstrap=True), "bootstrap")
    py("audit-seed-nan", audit(seed=math.nan), "seed")
    py("audit-seed-true", audit(seed=True, bootstrap=100), "seed")
    py("audit-limit-inf", audit(limit=math.inf), "limit")
    py(
        "audit-max-new-tokens-a-float",
        audit(models=(), generative="fake:g", mode="generated", max_new_tokens=2.5),
        "max_new_tokens",
    )
    py(
        "expand-occupations-seed-a-string",
        lambda d, b: lambda: nlibias.expand("occupations", out_dir=d / "o", seed="one"),
        "seed",
    )
    py("demo-bootstrap-nan", lambda d, b: lambda: nlibias.demo(d / "demo", bootstrap=math.nan), "bootstrap")

    def prompt(name: str, text: str, line: int) -> None:
        def build(d: Path, base: Base) -> tuple[list[str], str]:
            path = _prompt(d, text)
            return _gen(d, base, "--prompt", str(path)), f"{path}:{line}" if line else "prompts[0].template"

        case(f"s28-numbers/yaml-prompt-{name}", build)

    prompt("name-a-number", "prompts:\n  - name: 1.5\n    template: 'P: {premise} H: {hypothesis}'\n", 2)
    prompt("name-a-boolean", "prompts:\n  - name: yes\n    template: 'P: {premise} H: {hypothesis}'\n", 2)
    prompt("template-an-infinity", "prompts:\n  - name: s\n    template: .inf\n", 0)


# -- outputs that destroy inputs -------------------------------------------------------------------


def _outputs_cases(case: Add) -> None:
    def pairs_into_own_folder(d: Path, base: Base) -> tuple[list[str], str]:
        source = _write(d / "pairs" / "samples.jsonl", "".join(
            json.dumps({"more": m, "less": less}) + "\n"
            for m, less in (("Men are strong.", "Women are strong."), ("Rich people lie.", "Poor people lie."))
        ))  # fmt: skip
        return ["expand", "sentence-pairs", "--source", str(source), "--out", str(d / "pairs")], "--out"

    case("s28-outputs/cli-expand-sentence-pairs-source-is-out-s-samples-file", pairs_into_own_folder)

    def wq_out_is_source(d: Path, base: Base) -> tuple[list[str], str]:
        path = _wq(d, WQ_HEADER + WQ_ROW)
        return ["expand", "wq-nli", "--source", str(path), "--out", str(path)], "--out"

    case("s28-outputs/cli-expand-wq-nli-out-is-the-source-csv", wq_out_is_source)

    def premises_in_out(d: Path, base: Base) -> tuple[list[str], str]:
        path = _write(d / "o" / "samples.jsonl", "The nurse arrived.\nThe janitor left.\n")
        return ["expand", "occupations", "--premises", str(path), "--out", str(d / "o")], "--out"

    case("s28-outputs/cli-expand-occupations-premises-is-out-s-samples-file", premises_in_out)

    def audit_out_symlink_to_samples(d: Path, base: Base) -> tuple[list[str], str]:
        samples = d / "samples"
        shutil.copytree(base.samples, samples)
        (d / "link").symlink_to(samples)
        args = _audit(d, base, samples=samples)
        args[args.index("--out") + 1] = str(d / "link" / "samples.jsonl")
        return args, "--out"

    case("s28-outputs/cli-audit-out-is-the-samples-file-through-a-symlink", audit_out_symlink_to_samples)

    def audit_cache_is_prompt_file(d: Path, base: Base) -> tuple[list[str], str]:
        path = _prompt(d, "prompts:\n  - name: s\n    template: 'P: {premise} H: {hypothesis}'\n")
        args = _gen(d, base, "--prompt", str(path))
        args.remove("--no-cache")
        return [*args, "--cache", str(path)], "--cache"

    case("s28-outputs/cli-audit-cache-is-the-prompt-file", audit_cache_is_prompt_file)

    def audit_cache_dot_spelling(d: Path, base: Base) -> tuple[list[str], str]:
        samples = d / "s"
        shutil.copytree(base.samples, samples)
        args = _audit(d, base, samples=samples)
        args.remove("--no-cache")
        return [*args, "--cache", f"{samples}/./samples.parquet"], "--cache"

    case("s28-outputs/cli-audit-cache-is-the-samples-parquet-spelt-with-dot", audit_cache_dot_spelling)

    def score_out_is_predictions_file(d: Path, base: Base) -> tuple[list[str], str]:
        path = d / "preds.jsonl"
        shutil.copy(base.predictions, path)
        args = score_args(base, path, d)
        args[args.index("--out") + 1] = str(path)
        return args, "--out"

    case("s28-outputs/cli-score-out-is-the-predictions-file", score_out_is_predictions_file)

    def score_out_is_samples_run(d: Path, base: Base) -> tuple[list[str], str]:
        samples = _copy_samples_dir(d, base)
        preds = _preds_file(d, _predictions(base))
        args = ["score", "--samples", str(samples / "samples.jsonl"), "--predictions", str(preds)]
        return [*args, "--out", str(samples / "samples.jsonl"), "--bootstrap", "0"], "--out"

    case("s28-outputs/cli-score-out-is-the-samples-file", score_out_is_samples_run)

    def demo_cache_is_out_metrics(d: Path, base: Base) -> tuple[list[str], str]:
        run = _run_copy(d, base)
        return [
            "demo",
            "--out",
            str(run),
            "--cache",
            str(run / "metrics.json"),
            "--pairs",
            "1",
            "--bootstrap",
            "0",
        ], "--cache"

    case("s28-outputs/cli-demo-cache-is-its-out-s-metrics", demo_cache_is_out_metrics)

    def expand_out_is_data_dir(d: Path, base: Base) -> tuple[list[str], str]:
        data = d / "data"
        shutil.copytree(base.bbnli_dir, data / "bbnli")
        return ["expand", "bbnli", "--out", str(data / "bbnli" / "gender")], "--out"

    case(
        "s28-outputs/cli-expand-out-is-the-data-dir-s-bbnli-folder",
        expand_out_is_data_dir,
        env=lambda d: {"NLIBIAS_DATA_DIR": str(d / "data")},
    )


def _copy_samples_dir(d: Path, base: Base) -> Path:
    shutil.copytree(base.samples, d / "s")
    return d / "s"


# -- the same thing twice ----------------------------------------------------------------------------


def _twice_cases(case: Add) -> None:
    def cli(name: str, build: Callable[[Path, Base], list[str]], named: str, expect: str = "error") -> None:
        case(f"s28-twice/cli-{name}", lambda d, b: (build(d, b), named), expect)

    cli("audit-generative-twice", lambda d, b: _gen(d, b, "--generative", "fake:g"), "--generative")
    cli(
        "expand-source-twice",
        lambda d, b: _expand("bbnli", b.bbnli_dir, d, "--source", str(_source(d, b))),
        "--source",
    )
    cli(
        "score-predictions-a-glob-and-its-match",
        lambda d, b: _score_glob_and_file(d, b),
        "preds.jsonl",
    )

    def csv_twice(name: str, kind: str, text: Callable[[], str], named: str) -> None:
        def build(d: Path, base: Base) -> tuple[list[str], str]:
            path = _write(d / f"{kind}.csv", text())
            return _expand(kind, path, d), f"{path}{named}"

        case(f"s28-twice/cli-expand-{name}", build)

    csv_twice(
        "sentence-pairs-column-twice", "sentence-pairs", lambda: "more,less,more\na b.,c d.,e f.\n", ":1"
    )

    def crows_row_twice(d: Path, base: Base) -> tuple[list[str], str]:
        text = _crows_rows()
        last = text.strip().splitlines()[-1]
        path = _write(d / "crows_pairs_anonymized.csv", text + last + "\n")
        return _expand("crows-pairs", path, d), str(path)

    case("s28-twice/cli-expand-crows-pairs-own-copy-one-row-twice", crows_row_twice)

    def premises_twice(d: Path, base: Base) -> tuple[list[str], str]:
        path = _write(d / "premises.txt", "The nurse arrived.\nThe janitor left.\nThe nurse arrived.\n")
        return ["expand", "occupations", "--premises", str(path), "--out", str(d / "o")], f"{path}:3"

    case("s28-twice/cli-expand-occupations-premise-twice", premises_twice, "warn")

    def bbnli_two_files_one_subtopic(d: Path, base: Base) -> tuple[list[str], str]:
        source = _source(d, base)
        file = _source_file(source)
        (source / "race").mkdir()
        shutil.copy(file, source / "race" / file.name)
        return _expand("bbnli", source, d), file.stem

    case("s28-twice/cli-expand-bbnli-one-subtopic-in-two-domains", bbnli_two_files_one_subtopic)
    case(
        "s28-twice/python-audit-generative-twice-in-a-list",
        lambda d, b: (
            lambda: nlibias.audit(
                b.samples, generative=["fake:g", "fake:g"], cache=False, bootstrap=0, progress=False
            ),
            "generative",
        ),
    )
    case(
        "s28-twice/python-audit-prompts-twice",
        lambda d, b: (
            lambda: nlibias.audit(
                b.samples,
                generative="fake:g",
                prompts=["true", "true"],
                cache=False,
                bootstrap=0,
                progress=False,
            ),
            "prompts",
        ),
    )
    case(
        "s28-twice/python-score-one-file-under-two-spellings",
        lambda d, b: (
            lambda: nlibias.score(
                b.samples, [b.predictions, f"{b.predictions.parent}/./{b.predictions.name}"], bootstrap=0
            ),
            "predictions",
        ),
    )

    def prompt(name: str, text: str, line: int) -> None:
        def build(d: Path, base: Base) -> tuple[list[str], str]:
            path = _prompt(d, text)
            return _gen(d, base, "--prompt", str(path)), f"{path}:{line}" if line else "prompts[0].answers"

        case(f"s28-twice/yaml-prompt-{name}", build)

    style = "  - name: {n}\n    template: 'P: {{premise}} H: {{hypothesis}}{t}'\n"
    prompt("name-twice", "prompts:\n" + style.format(n="s", t="") + style.format(n="s", t="?"), 4)
    prompt("name-of-a-built-in-style", "prompts:\n" + style.format(n="'true'", t=""), 2)
    prompt("answers-twice", "prompts:\n" + style.format(n="s", t="") + "    answers: ['yes', 'yes']\n", 0)

    def two_files_one_name(d: Path, base: Base) -> tuple[list[str], str]:
        one = _prompt(d, "prompts:\n" + style.format(n="s", t=""), "one.yaml")
        two = _prompt(d, "prompts:\n" + style.format(n="s", t="!"), "two.yaml")
        return _gen(d, base, "--prompt", str(one), "--prompt", str(two)), "--prompt"

    case("s28-twice/yaml-prompt-one-name-in-two-files", two_files_one_name)


def _score_glob_and_file(d: Path, base: Base) -> list[str]:
    path = _preds_file(d / "p", _predictions(base))
    args = score_args(base, path, d)
    return [*args, "--predictions", str(d / "p" / "*.jsonl")]


# -- things that are not comparable, compared ----------------------------------------------------


def _comparable_cases(case: Add) -> None:
    def crows_samples(d: Path) -> Path:
        path = _write(d / "crows" / "crows_pairs_anonymized.csv", _crows_rows(12))
        nlibias.expand("crows-pairs", path, out_dir=d / "crows-run")
        return d / "crows-run"

    case(
        "s28-comparable/cli-audit-a-classifier-on-crows-pairs",
        lambda d, b: (_audit(d, b, samples=crows_samples(d)), "--model"),
    )
    case(
        "s28-comparable/cli-audit-a-classifier-on-bbq",
        lambda d, b: (_audit(d, b, samples=_bbq_run(d)), "--model"),
    )
    case(
        "s28-comparable/cli-score-bbnli-predictions-on-wq-nli-samples",
        lambda d, b: (
            [*score_args(b, b.predictions, d)[:2], str(_wq_run(d)), *score_args(b, b.predictions, d)[3:]],
            "predictions.jsonl",
        ),
    )

    def probs_two_way(d: Path, base: Base) -> tuple[list[str], str]:
        rows = [
            {**row, "probs": {k: v for k, v in row["probs"].items() if k != "neutral"}}
            for row in _predictions(base)
        ]
        path = _preds_file(d, rows)
        return score_args(base, path, d), f"{path}:1"

    def labels_of_another_scheme(d: Path, base: Base) -> tuple[list[str], str]:
        rows = [
            {**row, "label": {"entailment": "yes", "neutral": "maybe"}.get(row["label"], "no")}
            for row in _predictions(base)
        ]
        for row in rows:
            row.pop("probs", None)
        path = _preds_file(d, rows)
        return score_args(base, path, d), f"{path}:1"

    def lm_eval_other_task(d: Path, base: Base) -> tuple[list[str], str]:
        ids = [
            json.loads(line)["id"]
            for line in (base.samples / "samples.jsonl").read_text(encoding="utf-8").splitlines()
        ]
        rows = [_lm_eval_row(i, f"other-{i}", -0.5, -1.0) for i in range(len(ids))]
        path = _write_jsonl(d / "lm" / "samples_nlibias_bbnli_true_2026.jsonl", rows)
        return score_args(base, path, d), str(path)

    case("s28-comparable/cli-score-lm-eval-samples-of-other-ids", lm_eval_other_task)

    def predictions_of_another_subtopic(d: Path, base: Base) -> tuple[list[str], str]:
        source = _source(d, base)
        file = _source_file(source)
        other = Path(os.environ.get("NLIBIAS_DATA_DIR", "")) / "bbnli" / "gender"
        replacement = sorted(p for p in other.glob("*.json") if p.name != file.name)[0]
        file.unlink()
        shutil.copy(replacement, source / "gender" / replacement.name)
        nlibias.expand("bbnli", source, out_dir=d / "other")
        return [
            *score_args(base, base.predictions, d)[:2],
            str(d / "other"),
            *score_args(base, base.predictions, d)[3:],
        ], "predictions.jsonl"

    case("s28-comparable/cli-score-predictions-of-another-subtopic", predictions_of_another_subtopic)

    def samples_frame_other_samples(d: Path, base: Base) -> tuple[Callable[[], object], str]:
        _wq_run(d)
        return lambda: nlibias.load_run(base.run).samples_frame(d / "wq"), "samples"

    case("s28-comparable/python-samples-frame-with-other-benchmark-s-samples", samples_frame_other_samples)
    case(
        "s28-comparable/python-audit-sentence-scorer-on-bbq",
        lambda d, b: (
            lambda: nlibias.audit(_bbq_run(d), mlm="fake:t", cache=False, bootstrap=0, progress=False),
            "mlm",
        ),
    )


def _wq_run(d: Path) -> Path:
    if not (d / "wq").exists():
        nlibias.expand("wq-nli", _wq(d / "wq-src", WQ_HEADER + WQ_ROW), out_dir=d / "wq")
    return d / "wq"


# -- derived results reused when damaged or foreign ------------------------------------------------


def _derived_cases(case: Add) -> None:

    def truncated_predictions(d: Path, base: Base) -> tuple[Callable[[], object], str]:
        run = _run_copy(d, base)
        text = (run / "predictions.jsonl").read_text(encoding="utf-8")
        (run / "predictions.jsonl").write_text(text[: len(text) // 2], encoding="utf-8")
        return lambda: nlibias.load_run(run).samples_frame(), "predictions.jsonl"

    case("s28-derived/python-samples-frame-predictions-cut-mid-line", truncated_predictions)

    def metrics_foreign(d: Path, base: Base) -> tuple[Callable[[], object], str]:
        run = _run_copy(d, base)
        other = d / "other"
        code = nlibias.audit(_wq_run(d), "fake:m", cache=False, bootstrap=0, progress=False, out_dir=other)
        assert code is not None
        shutil.copy(other / "metrics.json", run / "metrics.json")
        return lambda: nlibias.load_run(run).metrics_frame(), "metrics.json"

    case("s28-derived/python-metrics-frame-metrics-of-another-run", metrics_foreign)

    def predictions_foreign(d: Path, base: Base) -> tuple[Callable[[], object], str]:
        run = _run_copy(d, base)
        other = d / "other"
        nlibias.audit(_wq_run(d), "fake:m", cache=False, bootstrap=0, progress=False, out_dir=other)
        shutil.copy(other / "predictions.jsonl", run / "predictions.jsonl")
        return lambda: nlibias.load_run(run).samples_frame(), "predictions.jsonl"

    case("s28-derived/python-samples-frame-predictions-of-another-run", predictions_foreign)

    def score_run_with_edited_samples(d: Path, base: Base) -> tuple[list[str], str]:
        run = _run_copy(d, base)
        path = run / "samples.jsonl"
        if not path.exists():
            shutil.copy(base.samples / "samples.jsonl", path)
        lines = path.read_text(encoding="utf-8").splitlines()
        lines = [*lines[:-2]]
        path.write_text("\n".join(lines) + "\n", encoding="utf-8")
        return [
            "score",
            "--samples",
            str(run),
            "--predictions",
            str(run / "predictions.jsonl"),
            "--out",
            str(d / "o"),
            "--bootstrap",
            "0",
        ], "samples"

    case("s28-derived/cli-score-a-run-whose-samples-lost-two-rows", score_run_with_edited_samples)

    def cache_env_truncated(d: Path, base: Base) -> tuple[list[str], str]:
        data = base.cache.read_bytes()
        _write(d / "cache.sqlite", data[: len(data) // 3])
        args = _audit(d, base)
        args.remove("--no-cache")
        return args, str(d / "cache.sqlite")

    case(
        "s28-derived/cli-audit-nlibias-cache-env-truncated",
        cache_env_truncated,
        env=lambda d: {"NLIBIAS_CACHE": str(d / "cache.sqlite")},
    )


# -- options that apply to nothing ------------------------------------------------------------------


def _nothing_cases(case: Add) -> None:
    def cli(name: str, build: Callable[[Path, Base], list[str]], named: str) -> None:
        case(f"s28-nothing/cli-{name}", lambda d, b: (build(d, b), named))

    cli("expand-bbnli-balance", lambda d, b: _expand("bbnli", b.bbnli_dir, d, "--balance"), "--balance")
    cli(
        "expand-wq-nli-seed",
        lambda d, b: _expand("wq-nli", _wq(d, WQ_HEADER + WQ_ROW), d, "--seed", "3"),
        "--seed",
    )
    cli(
        "expand-sentence-pairs-strict",
        lambda d, b: _expand("sentence-pairs", _pairs_csv(d, PAIRS_CSV), d, "--strict"),
        "--strict",
    )
    cli(
        "expand-wq-nli-allow-modified-data-on-own-file",
        lambda d, b: _expand("wq-nli", _wq(d, WQ_HEADER + WQ_ROW), d, "--allow-modified-data"),
        "--allow-modified-data",
    )
    cli("audit-revision-of-a-fake", lambda d, b: _audit(d, b, "--revision", "main"), "--revision")
    cli("audit-quantize-with-a-fake", lambda d, b: _audit(d, b, "--quantize", "int8"), "--quantize")
    cli("audit-compile-with-a-fake", lambda d, b: _audit(d, b, "--compile"), "--compile")
    # `--devices` on a fake (a sharded dry run) is a documented use (docs/scaling.md; s26 dropped the
    # same case, and test_scale_out runs `--model fake:x --devices cpu,cpu`), not a bad input
    cli(
        "audit-ray-gpus-without-ray",
        lambda d, b: _audit(d, b, "--ray-gpus-per-worker", "1"),
        "--ray-gpus-per-worker",
    )
    cli(
        "audit-label-map-with-only-a-generative",
        lambda d, b: _gen(d, b, "--label-map", "entailment=0,neutral=1,contradiction=2"),
        "--label-map",
    )
    cli(
        "audit-prompt-with-only-a-scorer",
        lambda d, b: _swap(_audit(d, b, "--prompt", "true"), "x", "--mlm", "fake:t"),
        "--prompt",
    )
    cli(
        "audit-max-new-tokens-in-scored-mode",
        # 64 is the default, which the command line cannot tell from no flag (an option at its default
        # is not given, for every applies-to rule): another value, which changes nothing in scored mode
        lambda d, b: _gen(d, b, "--mode", "scored", "--max-new-tokens", "32"),
        "--max-new-tokens",
    )
    cli(
        "audit-tp-variant-with-a-classifier",
        lambda d, b: _audit(d, b, "--tp-variant", "whole"),
        "--tp-variant",
    )
    cli(
        "audit-option-score-on-bbnli", lambda d, b: _gen(d, b, "--option-score", "acc_norm"), "--option-score"
    )
    case(
        "s28-nothing/python-expand-crows-pairs-seed",
        lambda d, b: (lambda: nlibias.expand("crows-pairs", out_dir=d / "o", seed=4), "seed"),
    )
    case(
        "s28-nothing/python-audit-revision-of-a-fake",
        lambda d, b: (
            lambda: nlibias.audit(
                b.samples, "fake:m", cache=False, bootstrap=0, progress=False, revision="v1"
            ),
            "revision",
        ),
    )
    case(
        "s28-nothing/python-audit-prompts-without-generative",
        lambda d, b: (
            lambda: nlibias.audit(
                b.samples, "fake:m", prompts="entailed", cache=False, bootstrap=0, progress=False
            ),
            "prompts",
        ),
    )
    case(
        "s28-nothing/python-audit-tp-variants-without-scorer",
        lambda d, b: (
            lambda: nlibias.audit(
                b.samples, "fake:m", tp_variants="whole", cache=False, bootstrap=0, progress=False
            ),
            "tp_variants",
        ),
    )


def _wq_preds(d: Path) -> Path:
    nlibias.audit(_wq_run(d), "fake:m", cache=False, bootstrap=0, progress=False, out_dir=d / "wq-audit")
    return d / "wq-audit" / "predictions.jsonl"


# -- a model in the wrong role ---------------------------------------------------------------------


def _roles_cases(case: Add) -> None:
    def model(name: str, flag: str, reference: Callable[[Path], str], named: str = "") -> None:
        def build(d: Path, base: Base) -> tuple[list[str], str]:
            samples = _wq_run(d) if flag in ("--mlm", "--causal") else None
            return _swap(_audit(d, base, samples=samples), "x", flag, reference(d)), named or flag

        case(f"s28-roles/cli-audit{flag}-{name}", build)

    model("an-openai-server", "--model", lambda d: SERVER)
    model("openai-completions-server", "--mlm", lambda d: "openai-completions:http://127.0.0.1:9/v1#m")
    model("smollm2", "--model", lambda d: "smollm2")
    model("a-gguf-file", "--model", lambda d: f"gguf:{_write(d / 'm.gguf', b'GGUF' + bytes(60))}")
    model("a-gguf-file", "--mlm", lambda d: f"gguf:{_write(d / 'm.gguf', b'GGUF' + bytes(60))}")
    model("a-classifier-folder", "--causal", lambda d: str(_model_dir(d, CLASSIFIER)))
    model("a-masked-lm-folder", "--generative", lambda d: str(_model_dir(d, "BertForMaskedLM")))
    model(
        "a-folder-without-config",
        "--model",
        lambda d: str((d / "empty-model").mkdir() or d / "empty-model"),
        "config.json",
    )
    case(
        "s28-roles/python-audit-models-a-gguf-reference",
        lambda d, b: (
            lambda: nlibias.audit(
                b.samples,
                f"gguf:{_write(d / 'm.gguf', b'GGUF' + bytes(60))}",
                cache=False,
                bootstrap=0,
                progress=False,
            ),
            "models",
        ),
    )
    case(
        "s28-roles/python-audit-causal-a-classifier-folder",
        lambda d, b: (
            lambda: nlibias.audit(
                _wq_run(d), causal=str(_model_dir(d, CLASSIFIER)), cache=False, bootstrap=0, progress=False
            ),
            "causal",
        ),
    )
    case(
        "s28-roles/python-audit-mlm-a-samples-folder",
        lambda d, b: (
            lambda: nlibias.audit(_wq_run(d), mlm=str(b.samples), cache=False, bootstrap=0, progress=False),
            str(b.samples),
        ),
    )


# -- damaged files --------------------------------------------------------------------------------


def _damaged_cases(case: Add) -> None:
    def source(
        name: str,
        kind: str,
        filename: str,
        text: Callable[[], str | bytes],
        named: str,
        expect: str = "error",
    ) -> None:
        def build(d: Path, base: Base) -> tuple[list[str], str]:
            path = _write(d / filename, text())
            return _expand(kind, path, d), named.replace("FILE", str(path))

        case(f"s28-damaged/cli-expand-{kind}-{name}", build, expect)

    source(
        "semicolons", "wq-nli", "winoqueer_nli.csv", lambda: (WQ_HEADER + WQ_ROW).replace(",", ";"), "FILE"
    )
    source(
        "hypothesis-only-spaces", "wq-nli", "winoqueer_nli.csv", lambda: WQ_HEADER + "A.,B.,   \n", "FILE:2"
    )
    source(
        "premises-identical",
        "wq-nli",
        "winoqueer_nli.csv",
        lambda: WQ_HEADER + "Some people are gay.,Some people are gay.,They are sad.\n",
        "FILE:2",
        "warn",
    )
    source(
        "nul-in-a-cell",
        "wq-nli",
        "winoqueer_nli.csv",
        lambda: (WQ_HEADER + WQ_ROW).replace("abnormal", "abn\x00ormal"),
        "FILE:2",
    )
    source(
        "missing-column",
        "crows-pairs",
        "crows_pairs_anonymized.csv",
        lambda: _drop_column(_crows_rows(), "sent_less"),
        "FILE",
    )
    source(
        "direction-unknown",
        "crows-pairs",
        "crows_pairs_anonymized.csv",
        lambda: _crows_rows().replace(",stereo,", ",sterio,", 1),
        "FILE:",
    )
    source(
        "less-column-empty",
        "sentence-pairs",
        "pairs.csv",
        lambda: "more,less,group\nMen are strong.,,gender\n",
        "FILE:2",
    )
    source(
        "jsonl-more-a-number",
        "sentence-pairs",
        "pairs.jsonl",
        lambda: '{"more": 5, "less": "Women are strong."}\n',
        "FILE:1",
    )
    source(
        "jsonl-a-list-per-line",
        "sentence-pairs",
        "pairs.jsonl",
        lambda: '["Men are strong.", "Women are strong."]\n',
        "FILE:1",
    )
    source(
        "jsonl-duplicate-key",
        "sentence-pairs",
        "pairs.jsonl",
        lambda: '{"more": "Men are strong.", "less": "Women are strong.", "less": "Kids are strong."}\n',
        "FILE:1",
    )
    source(
        "tsv",
        "sentence-pairs",
        "pairs.tsv",
        lambda: "more\tless\nMen are strong.\tWomen are strong.\n",
        "FILE",
    )
    source("premises-a-json-file", "occupations", "premises.json", lambda: '["The nurse arrived."]\n', "FILE")

    def bbnli_json(name: str, edit: Callable[[Any], Any], expect: str = "error") -> None:
        def build(d: Path, base: Base) -> tuple[list[str], str]:
            source = _source(d, base)
            path = _source_file(source)
            data = json.loads(path.read_text(encoding="utf-8"))
            out = edit(data)
            path.write_text(out if isinstance(out, str) else json.dumps(out), encoding="utf-8")
            return _expand("bbnli", source, d), str(path)

        case(f"s28-damaged/cli-expand-bbnli-json-{name}", build, expect)

    bbnli_json("nan-literal", lambda data: json.dumps(data).replace("[", "[NaN, ", 1))
    bbnli_json(
        "premise-empty-strings",
        lambda data: (
            {**data, "premise": ["" for _ in data["premise"]]}
            if isinstance(data.get("premise"), list)
            else data
        ),
    )

    def samples(name: str, lines: Callable[[list[str]], list[str]], at: str = ":1") -> None:
        def build(d: Path, base: Base) -> tuple[list[str], str]:
            path = copy_samples(d, base, lines)
            return _audit(d, base, samples=path), f"{path}{at}"

        case(f"s28-damaged/cli-audit-samples-{name}", build)

    def lm_eval(name: str, rows: Callable[[list[str]], list[Any]], at: str = "") -> None:
        def build(d: Path, base: Base) -> tuple[list[str], str]:
            ids = [
                json.loads(line)["id"]
                for line in (base.samples / "samples.jsonl").read_text(encoding="utf-8").splitlines()
            ]
            path = d / "lm" / "samples_nlibias_bbnli_true_2026.jsonl"
            made = rows(ids)
            _write(path, "".join((x if isinstance(x, str) else json.dumps(x)) + "\n" for x in made))
            return score_args(base, path, d), f"{path}{at.replace('LAST', str(len(made)))}"

        case(f"s28-damaged/cli-score-lm-eval-{name}", build)

    def row(i: int, sample_id: str, **changes: Any) -> dict[str, Any]:
        return {**_lm_eval_row(i, sample_id, -1.0, -2.0), **changes}

    lm_eval(
        "loglikelihood-a-word",
        lambda ids: [row(i, s, filtered_resps=[["high", False], [-2.0, False]]) for i, s in enumerate(ids)],
        ":1",
    )
    lm_eval(
        "last-line-cut",
        lambda ids: [
            *[row(i, s) for i, s in enumerate(ids)][:-1],
            json.dumps(row(len(ids) - 1, ids[-1]))[:40],
        ],
        ":LAST",
    )
    lm_eval(
        "doc-without-id",
        lambda ids: [
            row(i, s, doc={"choice_answers": ["yes", "no"], "answers": "yes/no", "prompt": "true"})
            for i, s in enumerate(ids)
        ],
        ":1",
    )
    lm_eval(
        "one-loglikelihood-for-two-answers",
        lambda ids: [row(i, s, filtered_resps=[[-1.0, False]]) for i, s in enumerate(ids)],
        ":1",
    )
    lm_eval(
        "answers-not-in-choice-answers",
        lambda ids: [
            row(
                i,
                s,
                doc={"id": s, "choice_answers": ["yes", "no"], "answers": "true/false", "prompt": "true"},
            )
            for i, s in enumerate(ids)
        ],
        ":1",
    )

    def inspect_log(name: str, content: bytes) -> None:
        def build(d: Path, base: Base) -> tuple[list[str], str]:
            path = _write(d / "logs" / "2026-01-01_task_abc.eval", content)
            return score_args(base, path, d), str(path)

        case(f"s28-damaged/cli-score-inspect-{name}", build)

    inspect_log("eval-not-a-zip", b"this is not a zip archive\n")
    inspect_log("eval-zip-cut", _zip_bytes()[:-40])

    def predictions_py(name: str, text: str, named: str) -> None:
        def build(d: Path, base: Base) -> tuple[Callable[[], object], str]:
            path = _write(d / "preds.jsonl", text)
            return lambda: nlibias.score(base.samples, path, bootstrap=0), named.replace("FILE", str(path))

        case(f"s28-damaged/python-score-{name}", build)

    predictions_py("predictions-a-json-object", '{"predictions": []}\n', "FILE")
    predictions_py("predictions-only-whitespace", "\n\n   \n", "FILE")
    case(
        "s28-damaged/python-expand-wq-nli-source-a-folder-without-the-csv",
        lambda d, b: (
            lambda: nlibias.expand("wq-nli", (d / "nothing").mkdir() or d / "nothing", out_dir=d / "o"),
            "winoqueer_nli.csv",
        ),
    )
    case(
        "s28-damaged/python-audit-samples-a-list-of-dicts",
        lambda d, b: (
            lambda: nlibias.audit(
                [{"id": "a", "premise": "p", "hypothesis": "h"}],
                "fake:m",
                cache=False,
                bootstrap=0,
                progress=False,
            ),
            "samples",
        ),
    )

    def prompt(name: str, text: str | bytes, named: str) -> None:
        def build(d: Path, base: Base) -> tuple[list[str], str]:
            path = _write(d / ("prompt.txt" if name.startswith("txt-") else "prompts.yaml"), text)
            return _gen(d, base, "--prompt", str(path)), named.replace("FILE", str(path))

        case(f"s28-damaged/yaml-prompt-{name}", build)

    prompt("tab-indent", "prompts:\n\t- name: s\n\t  template: 'P: {premise} H: {hypothesis}'\n", "FILE:2")
    prompt("prompts-a-mapping", "prompts:\n  s: 'P: {premise} H: {hypothesis}'\n", "FILE")
    prompt("txt-template-without-hypothesis", "Premise: {premise}. True?", "FILE")


def _drop_column(text: str, column: str) -> str:
    import csv
    import io

    rows = list(csv.reader(io.StringIO(text)))
    at = rows[0].index(column)
    buffer = io.StringIO()
    csv.writer(buffer, lineterminator="\n").writerows([row[:at] + row[at + 1 :] for row in rows])
    return buffer.getvalue()


def _zip_bytes() -> bytes:
    import io
    import zipfile

    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr(
            "header.json", json.dumps({"version": 2, "status": "success", "eval": {"task": "nlibias_bbnli"}})
        )
        archive.writestr(
            "samples/1_epoch_1.json", json.dumps({"id": "x", "epoch": 1, "output": {"completion": "yes"}})
        )
    return buffer.getvalue()


# -- empty inputs ----------------------------------------------------------------------------------


def _empty_cases(case: Add) -> None:
    def source(name: str, kind: str, make: Callable[[Path], Path], named: str) -> None:
        def build(d: Path, base: Base) -> tuple[list[str], str]:
            path = make(d)
            return _expand(kind, path, d), named.replace("FILE", str(path))

        case(f"s28-empty/cli-expand-{kind}-{name}", build)

    source(
        "a-folder-without-json",
        "bbnli",
        lambda d: _write(d / "src" / "gender" / "README.txt", "x").parent.parent,
        "FILE",
    )
    source("header-only", "sentence-pairs", lambda d: _pairs_csv(d, "more,less,group\n"), "FILE")
    source(
        "header-only",
        "crows-pairs",
        lambda d: _write(d / "crows_pairs_anonymized.csv", _crows_rows(0)),
        "FILE",
    )
    source("premises-only-blank-lines", "occupations", lambda d: _write(d / "premises.txt", "\n\n\n"), "FILE")
    source(
        "bbq-category-file-empty",
        "bbq",
        lambda d: _write(d / "bbq-src" / "Age.jsonl", "").parent,
        "Age.jsonl",
    )

    def no_match_scored(d: Path, base: Base) -> tuple[list[str], str]:
        rows = [{**row, "id": row["id"] + "-x"} for row in _predictions(base)]
        path = _preds_file(d, rows)
        return score_args(base, path, d), str(path)

    case("s28-empty/cli-score-predictions-match-no-sample", no_match_scored)

    def inspect_empty(d: Path, base: Base) -> tuple[list[str], str]:
        import io
        import zipfile

        buffer = io.BytesIO()
        with zipfile.ZipFile(buffer, "w") as archive:
            archive.writestr(
                "header.json",
                json.dumps({"version": 2, "status": "success", "eval": {"task": "nlibias_bbnli"}}),
            )
        path = _write(d / "logs" / "empty.eval", buffer.getvalue())
        return score_args(base, path, d), str(path)

    case("s28-empty/cli-score-inspect-log-without-samples", inspect_empty)

    def glob_no_match(d: Path, base: Base) -> tuple[list[str], str]:
        return score_args(base, Path(f"{d}/lm-eval-out/*/samples_*.jsonl"), d), "--predictions"

    case("s28-empty/cli-score-a-glob-that-matches-nothing", glob_no_match)

    def all_unparsed(d: Path, base: Base) -> tuple[list[str], str]:
        rows = [
            {"id": row["id"], "model": "g", "label": None, "text": "I cannot tell."}
            for row in _predictions(base)
        ]
        path = _preds_file(d, rows)
        return score_args(base, path, d), str(path)

    case("s28-empty/cli-score-every-answer-unparsed", all_unparsed, "warn")
    case(
        "s28-empty/cli-audit-samples-bbnli-a-data-dir-without-it",
        lambda d, b: (
            [
                "audit",
                "--samples",
                "bbnli",
                "--model",
                "fake:m",
                "--out",
                str(d / "o"),
                "--no-cache",
                "--bootstrap",
                "0",
            ],
            "bbnli",
        ),
        env=lambda d: {"NLIBIAS_DATA_DIR": str((d / "data").mkdir() or d / "data")},
    )
    case(
        "s28-empty/python-score-predictions-an-empty-list",
        lambda d, b: (lambda: nlibias.score(b.samples, [], bootstrap=0), "predictions"),
    )
    case(
        "s28-empty/python-expand-sentence-pairs-empty-jsonl",
        lambda d, b: (
            lambda: nlibias.expand("sentence-pairs", _write(d / "p.jsonl", ""), out_dir=d / "o"),
            "p.jsonl",
        ),
    )
    case(
        "s28-empty/python-samples-frame-predictions-empty",
        lambda d, b: (
            lambda: (
                _write(_run_copy(d, b) / "predictions.jsonl", ""),
                nlibias.load_run(d / "run").samples_frame(),
            ),
            "predictions.jsonl",
        ),
    )
    case(
        "s28-empty/yaml-prompt-prompts-an-empty-list",
        lambda d, b: (_gen(d, b, "--prompt", str(_prompt(d, "prompts: []\n"))), str(d / "prompts.yaml")),
    )
    case(
        "s28-empty/yaml-prompt-an-empty-file",
        lambda d, b: (_gen(d, b, "--prompt", str(_prompt(d, "# nothing\n"))), str(d / "prompts.yaml")),
    )


# -- the environment -------------------------------------------------------------------------------


def _environment_cases(case: Add) -> None:
    def env(
        name: str,
        variables: Callable[[Path], dict[str, str]],
        build: Callable[[Path, Base], list[str]],
        named: str,
        expect: str = "error",
    ) -> None:
        case(f"s28-env/cli-{name}", lambda d, b: (build(d, b), named), expect, env=variables)

    def file_at(d: Path, name: str) -> str:
        return str(_write(d / name, "not a folder\n"))

    env(
        "data-dir-a-file",
        lambda d: {"NLIBIAS_DATA_DIR": file_at(d, "data")},
        lambda d, b: ["expand", "bbnli", "--out", str(d / "o")],
        "NLIBIAS_DATA_DIR",
    )
    env(
        "data-dir-empty-string",
        lambda d: {"NLIBIAS_DATA_DIR": ""},
        lambda d, b: ["expand", "crows-pairs", "--out", str(d / "o")],
        "NLIBIAS_DATA_DIR",
    )
    env(
        "cache-a-folder",
        lambda d: {"NLIBIAS_CACHE": str((d / "cdir").mkdir() or d / "cdir")},
        lambda d, b: [a for a in _audit(d, b) if a != "--no-cache"],
        "NLIBIAS_CACHE",
    )
    env(
        "cache-a-text-file",
        lambda d: {"NLIBIAS_CACHE": file_at(d, "cache.txt")},
        lambda d, b: [a for a in _audit(d, b) if a != "--no-cache"],
        "cache.txt",
    )
    env(
        "device-unknown",
        lambda d: {"NLIBIAS_DEVICE": "tpu"},
        lambda d, b: _swap(_audit(d, b), "x", "--model", str(_model_dir(d, CLASSIFIER))),
        "NLIBIAS_DEVICE",
    )
    env(
        "device-unknown-doctor",
        lambda d: {"NLIBIAS_DEVICE": "gpu0"},
        lambda d, b: ["doctor"],
        "NLIBIAS_DEVICE",
    )
    env(
        "model-cache-a-file",
        lambda d: {"NLIBIAS_MODEL_CACHE": file_at(d, "models")},
        lambda d, b: ["doctor"],
        "NLIBIAS_MODEL_CACHE",
        "warn",
    )

    def data_dir_edited_wq(d: Path, base: Base) -> tuple[list[str], str]:
        from bad_input_cases_routes import _data_dir

        shutil.copytree(_data_dir() / "wq-nli", d / "data" / "wq-nli")
        path = d / "data" / "wq-nli" / "winoqueer_nli.csv"
        lines = path.read_text(encoding="utf-8").splitlines()
        lines[1] = lines[1].replace("a", "o", 1)
        path.write_text("\n".join(lines) + "\n", encoding="utf-8")
        return ["expand", "wq-nli", "--out", str(d / "o")], str(path)

    case(
        "s28-env/cli-data-dir-wq-nli-edited",
        data_dir_edited_wq,
        env=lambda d: {"NLIBIAS_DATA_DIR": str(d / "data")},
    )

    def data_dir_edited_bbq(d: Path, base: Base) -> tuple[list[str], str]:
        from bad_input_cases_routes import _data_dir

        (d / "data" / "bbq" / "data").mkdir(parents=True)
        for path in (_data_dir() / "bbq" / "data").glob("*.jsonl"):
            (d / "data" / "bbq" / "data" / path.name).symlink_to(path)
        age = d / "data" / "bbq" / "data" / "Age.jsonl"
        age.unlink()
        rows = _bbq_rows(40)
        rows[3] = {**rows[3], "label": (rows[3]["label"] + 1) % 3}
        _write_jsonl(age, rows)
        return ["expand", "bbq", "--out", str(d / "o")], str(age)

    case(
        "s28-env/cli-data-dir-bbq-age-edited",
        data_dir_edited_bbq,
        env=lambda d: {"NLIBIAS_DATA_DIR": str(d / "data")},
    )


# -- schema, benchmarks, masks, demo, plug-ins --------------------------------------------------------


def _misc_cases(case: Add) -> None:
    def cli(name: str, build: Callable[[Path, Base], list[str]], named: str) -> None:
        case(f"s28-misc/cli-{name}", lambda d, b: (build(d, b), named))

    cli(
        "masks-validate-empty-file",
        lambda d, b: ["masks", "validate", str(_write(d / "masks.jsonl", ""))],
        "masks.jsonl",
    )
    cli(
        "masks-list-source-a-csv",
        lambda d, b: ["masks", "list", "--source", str(_pairs_csv(d, PAIRS_CSV))],
        "pairs.csv",
    )
    cli(
        "demo-out-an-existing-file",
        lambda d, b: ["demo", "--out", str(_write(d / "demo.txt", "x")), "--pairs", "1", "--bootstrap", "0"],
        "demo.txt",
    )
    cli(
        "demo-cache-a-folder",
        lambda d, b: ["demo", "--out", str(d / "o"), "--cache", str(d), "--pairs", "1", "--bootstrap", "0"],
        "--cache",
    )

    def plugin(
        name: str,
        benchmark: Callable[[], Any],
        build: Callable[[Path, Base], Any],
        named: str,
        expect: str = "error",
    ) -> None:
        def run(d: Path, base: Base) -> tuple[Any, str]:
            from nlibias.catalog import registry

            saved = {
                table: getattr(registry, table).copy()
                for table in ("_BY_NAME", "_BY_SOURCE", "_PLUGINS", "_PLUGIN_ERRORS")
            }
            _install(saved, benchmark())
            return build(d, base), named

        case(f"s28-plugins/{name}", run, expect, context=_plugin_registry)

    from dataclasses import replace

    plugin(
        "cli-expand-plug-in-named-like-a-built-in-source",
        lambda: replace(_lean(), name="wq-nli", sources=("wq-nli",)),
        lambda d, b: ["expand", "wq-nli", "--out", str(d / "o")],
        "wq-nli",
        "warn",  # the built-in is expanded; the plug-in is not loaded, a warning naming it
    )
    plugin(
        "python-expand-plug-in-name-with-a-space",
        lambda: replace(_lean(), name="le an"),
        lambda d, b: lambda: nlibias.expand("le an", out_dir=d / "o"),
        "le an",
    )


GROUPS = (
    _numbers_cases,
    _outputs_cases,
    _twice_cases,
    _comparable_cases,
    _derived_cases,
    _nothing_cases,
    _roles_cases,
    _damaged_cases,
    _empty_cases,
    _environment_cases,
    _misc_cases,
)


def s28_cases() -> list[Case]:
    """Every case of this module, a known defect marked from :data:`KNOWN`."""
    return cases_of(GROUPS, KNOWN)
