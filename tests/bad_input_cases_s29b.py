"""Session 29's acceptance check of issue #48, route b: files and state across commands (a run written
by one command and read by another, edited by hand between them, a file of another kind in its
place), derived files and caches (the prediction cache, extend's stage files, explain's outputs,
validation queues, fine-tune and debias folders), and every YAML file (gate rules, extend's
configuration, model cards: anchors, merge keys, several documents, tags, keys twice or unknown at
depth, numbers as strings). Part of the corpus of ``bad_input_cases``; none repeats an earlier case."""

from __future__ import annotations

import json
import shutil
import sqlite3
from collections.abc import Callable
from pathlib import Path

import nlibias
from bad_input_cases_s26 import _gate, _rules
from bad_input_cases_s27 import _vrun
from bad_input_cases_s28 import _predictions, _preds_file
from bad_input_cases_s28c import _explain_args
from bad_input_cases_s28c_more import Add, extend_cli, extend_yaml, pair, write
from bad_input_cases_validate_explanations import explained_run
from bad_input_corpus import Base, Case, audit_args, cases_of, invoke, score_args

KNOWN: dict[str, str] = {}

Build = Callable[[Path, Base], list[str]]
PyBuild = Callable[[Path, Base], Callable[[], object]]
Named = str | Callable[[Path], str]


def _cli(case: Add, group: str) -> Callable[..., None]:
    def add(name: str, args: Build, named: Named, expect: str = "error", **kw: object) -> None:
        def build(d: Path, b: Base) -> tuple[list[str], str]:
            built = args(d, b)
            return built, named(d) if callable(named) else named

        case(f"s29b-{group}/cli-{name}", build, expect, **kw)

    return add


def _py(case: Add, group: str) -> Callable[..., None]:
    def add(name: str, named: Named, call: PyBuild, expect: str = "error") -> None:
        def build(d: Path, b: Base) -> tuple[Callable[[], object], str]:
            made = call(d, b)
            return made, named(d) if callable(named) else named

        case(f"s29b-{group}/python-{name}", build, expect)

    return add


def _at(rel: str) -> Callable[[Path], str]:
    return lambda d: str(d / rel)


def _run(d: Path, b: Base, name: str = "run") -> Path:
    return Path(shutil.copytree(b.run, d / name))


def _edit_json(path: Path, edit: Callable[[dict], None]) -> Path:
    data = json.loads(path.read_text(encoding="utf-8"))
    edit(data)
    path.write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")
    return path


def _lines(path: Path, edit: Callable[[list[str]], list[str]]) -> Path:
    lines = path.read_text(encoding="utf-8").splitlines(True)
    path.write_text("".join(edit(lines)), encoding="utf-8")
    return path


def _other_model_run(d: Path, b: Base, name: str = "other") -> Path:
    """An audit of the base samples by another fake classifier (``fake:x``)."""
    args = audit_args(b.samples, d)
    args[args.index("fake:m")] = "fake:x"
    args[args.index(str(d / "o"))] = str(d / name)
    code, text, _ = invoke(args)
    assert code == 0, text
    return d / name


def _metric(run: Path, key: str, value: object) -> Path:
    def edit(data: dict) -> None:
        for model in data["models"].values():
            model["overall"][key] = value

    return _edit_json(run / "metrics.json", edit)


# -- a file of another kind in its place ------------------------------------------------------------------


def _kind_cases(case: Add) -> None:
    cli = _cli(case, "kind")

    cli("score-predictions-the-samples-file",
        lambda d, b: score_args(b, b.samples / "samples.jsonl", d), str(Path("samples") / "samples.jsonl"))  # fmt: skip
    cli("audit-samples-a-predictions-file",
        lambda d, b: audit_args(_run(d, b) / "predictions.jsonl", d), _at("run/predictions.jsonl"))  # fmt: skip
    cli("gate-rules-the-run-s-metrics-json",
        lambda d, b: _gate(*pair(d, b), "--rules", str(b.run / "metrics.json")), "metrics.json")  # fmt: skip

    def card_rules(d: Path, b: Base) -> list[str]:
        card = write(d / "README.md", "---\nlicense: mit\ntags: [nli]\n---\n# model\n")
        return _gate(*pair(d, b), "--rules", str(card))

    cli("gate-rules-a-model-card", card_rules, _at("README.md"))

    def extend_config_rules(d: Path, b: Base) -> list[str]:
        path = write(d / "ext.yaml", "source: null\nmlm:\n  top_k: 5\nseed: 0\n")
        return _gate(*pair(d, b), "--rules", str(path))

    cli("gate-rules-an-extend-configuration", extend_config_rules, _at("ext.yaml"))

    def rules_as_config(d: Path, b: Base) -> list[str]:
        path = write(d / "config.yaml", "confidence: 0.95\nbootstrap: 1000\nmargin: 1\n")
        return [
            "extend",
            "--config",
            str(path),
            "--out",
            str(d / "next"),
            "--until",
            "masks",
            "--no-progress",
        ]

    cli("extend-config-a-gate-rules-file", rules_as_config, _at("config.yaml"))

    def manifest_as_metrics(d: Path, b: Base) -> list[str]:
        cand, ref = pair(d, b)
        shutil.copy(ref / "manifest.json", cand / "metrics.json")
        return _gate(cand, ref)

    cli("gate-candidate-metrics-replaced-by-its-manifest", manifest_as_metrics, "metrics.json")

    def samples_as_predictions_in_run(d: Path, b: Base) -> list[str]:
        run = _run(d, b)
        shutil.copy(b.samples / "samples.jsonl", run / "predictions.jsonl")
        return ["report", str(run), "--format", "md"]

    cli("report-run-predictions-replaced-by-samples", samples_as_predictions_in_run, "predictions.jsonl")

    def vqueue_as_judgements(d: Path, b: Base) -> list[str]:
        run = _vrun(d, b)
        return ["validate", "import", str(run), str(run / "validation" / "queue.csv")]

    cli("validate-import-the-queue-as-judgements", vqueue_as_judgements, _at("vrun/validation/queue.csv"))

    def explain_samples_folder(d: Path, b: Base) -> list[str]:
        return ["explain", str(b.samples), "--judge", "fake:j", "--no-cache", "--bootstrap", "0"]

    cli("explain-run-a-samples-folder", explain_samples_folder, lambda d: "samples")

    def model_index_samples(d: Path, b: Base) -> list[str]:
        return ["export", "model-index", str(b.samples)]

    cli("export-model-index-a-samples-folder", model_index_samples, "samples")

    def lm_eval_predictions(d: Path, b: Base) -> list[str]:
        return [
            "export",
            "lm-eval",
            "--samples",
            str(_run(d, b) / "predictions.jsonl"),
            "--out",
            str(d / "t"),
        ]

    cli("export-lm-eval-samples-a-predictions-file", lm_eval_predictions, _at("run/predictions.jsonl"))

    def cache_store(d: Path, b: Base) -> list[str]:
        return [*audit_args(b.samples, d)[:-2], "--cache", str(_sqlite_other(d)), "--quiet"]

    cli("audit-cache-another-sqlite-database", cache_store, _at("other.sqlite"))

    def explain_cache_store(d: Path, b: Base) -> list[str]:
        args = _explain_args(d, b)
        return [*(a for a in args if a != "--no-cache"), "--cache", str(_sqlite_other(d))]

    cli("explain-cache-another-sqlite-database", explain_cache_store, _at("other.sqlite"))

    def gate_baseline_extend_run(d: Path, b: Base) -> list[str]:
        args = extend_cli(d, b)
        code, text, _ = invoke(args)
        assert code == 0, text
        return _gate(_run(d, b), d / "next")

    cli("gate-baseline-an-extend-run", gate_baseline_extend_run, _at("next"))

    def report_compare_explained_folder(d: Path, b: Base) -> list[str]:
        run = explained_run(d, b)
        return ["report", str(b.run), str(run / "explanations"), "--compare", "--format", "md"]

    cli("report-compare-an-explanations-folder", report_compare_explained_folder, "explanations")

    py = _py(case, "kind")
    py("score-predictions-the-samples-file", "samples.jsonl:1",
       lambda d, b: lambda: nlibias.score(b.samples, b.samples / "samples.jsonl", bootstrap=0))  # fmt: skip
    py("gate-rules-the-run-s-metrics-json", "metrics.json",
       lambda d, b: (lambda c, r: lambda: nlibias.gate(c, r, rules=b.run / "metrics.json"))(*pair(d, b)))  # fmt: skip
    py(
        "load-run-an-extend-run",
        "next",
        lambda d, b: (invoke(extend_cli(d, b)), lambda: nlibias.load_run(d / "next"))[1],
    )
    py("make-report-a-validation-run", "vrun",
       lambda d, b: lambda: nlibias.make_report([_vrun(d, b)], fmt="md"))  # fmt: skip
    py("model-index-an-explained-run-s-explanations-folder", "explanations",
       lambda d, b: lambda: nlibias.model_index(explained_run(d, b) / "explanations"))  # fmt: skip


def _sqlite_other(d: Path) -> Path:
    """A SQLite database of another tool (one table of its own)."""
    path = d / "other.sqlite"
    with sqlite3.connect(path) as db:
        db.execute("CREATE TABLE notes (id INTEGER PRIMARY KEY, text TEXT)")
        db.execute("INSERT INTO notes (text) VALUES ('keep me')")
    return path


# -- a run edited by hand between commands -----------------------------------------------------------------


def _edited_cases(case: Add) -> None:
    cli = _cli(case, "edited")

    def accuracy(d: Path, b: Base) -> Path:
        run = _run(d, b)
        _metric(run, "accuracy", 99.0)
        return run

    cli("export-model-index-metrics-a-number-changed",
        lambda d, b: ["export", "model-index", str(accuracy(d, b))], "metrics.json")  # fmt: skip
    cli("report-md-metrics-a-number-changed",
        lambda d, b: ["report", str(accuracy(d, b)), "--format", "md"], "metrics.json")  # fmt: skip
    cli("report-html-metrics-a-number-changed",
        lambda d, b: ["report", str(accuracy(d, b)), "--out", str(d / "r.html")], "metrics.json")  # fmt: skip

    def gate_bias_edited(d: Path, b: Base) -> list[str]:
        cand, ref = pair(d, b)
        _metric(cand, "bbnli_bias_score", 0.0)
        return _gate(cand, ref)

    cli("gate-candidate-metrics-bias-score-changed", gate_bias_edited, "metrics.json")

    def tables_edited(d: Path, b: Base) -> list[str]:
        run = _run(d, b)
        path = run / "tables.txt"
        path.write_text(path.read_text(encoding="utf-8").replace("8.33", "0.00"), encoding="utf-8")
        return ["report", str(run), "--format", "md"]

    cli("report-md-tables-txt-edited", tables_edited, "tables.txt")

    def manifest_incomplete(d: Path, b: Base) -> list[str]:
        run = _run(d, b)
        _edit_json(run / "manifest.json", lambda m: m.update(complete=False))
        return ["export", "model-index", str(run)]

    cli("export-model-index-manifest-says-incomplete", manifest_incomplete, _at("run"))

    def swapped_metrics(d: Path, b: Base) -> list[str]:
        cand, ref = pair(d, b)
        other = _other_model_run(d, b)
        shutil.copy(other / "metrics.json", cand / "metrics.json")
        return _gate(cand, ref)

    cli("gate-candidate-metrics-from-another-model-s-run", swapped_metrics, "metrics.json")

    def swapped_predictions(d: Path, b: Base) -> list[str]:
        run = _run(d, b)
        other = _other_model_run(d, b)
        shutil.copy(other / "predictions.jsonl", run / "predictions.jsonl")
        return ["export", "model-index", str(run)]

    cli("export-model-index-predictions-from-another-model-s-run", swapped_predictions, _at("run"))

    def swapped_manifest(d: Path, b: Base) -> list[str]:
        run = _run(d, b)
        other = _other_model_run(d, b)
        shutil.copy(other / "manifest.json", run / "manifest.json")
        return ["report", str(run), "--format", "md"]

    cli("report-md-manifest-from-another-run", swapped_manifest, _at("run"))

    def last_prediction_removed(d: Path, b: Base) -> list[str]:
        run = _run(d, b)
        _lines(run / "predictions.jsonl", lambda lines: lines[:-1])
        return ["export", "model-index", str(run)]

    cli("export-model-index-last-prediction-removed", last_prediction_removed, "predictions.jsonl")

    def prediction_added(d: Path, b: Base) -> list[str]:
        run = _run(d, b)
        _lines(run / "predictions.jsonl", lambda lines: [*lines, lines[-1]])
        return ["report", str(run), "--format", "md"]

    cli("report-md-last-prediction-twice", prediction_added, "predictions.jsonl")

    def samples_moved(d: Path, b: Base) -> list[str]:
        samples = Path(shutil.copytree(b.samples, d / "s"))
        args = audit_args(samples / "samples.jsonl", d)
        code, text, _ = invoke(args)
        assert code == 0, text
        _lines(samples / "samples.jsonl", lambda lines: lines[:-2])
        (samples / "samples.parquet").unlink()
        return _gate(d / "o", _run(d, b))

    cli("gate-candidate-samples-cut-after-the-audit", samples_moved, _at("s/samples.jsonl"))

    py = _py(case, "edited")
    py("model-index-metrics-a-number-changed", "metrics.json",
       lambda d, b: lambda: nlibias.model_index(accuracy(d, b)))  # fmt: skip
    py("load-run-metrics-a-number-changed", "metrics.json",
       lambda d, b: lambda: nlibias.load_run(accuracy(d, b)).metrics)  # fmt: skip
    py("make-report-metrics-a-number-changed", "metrics.json",
       lambda d, b: lambda: nlibias.make_report([accuracy(d, b)], fmt="md"))  # fmt: skip

    def py_gate_swapped(d: Path, b: Base) -> Callable[[], object]:
        cand, ref = pair(d, b)
        shutil.copy(_other_model_run(d, b) / "metrics.json", cand / "metrics.json")
        return lambda: nlibias.gate(cand, ref)

    py("gate-candidate-metrics-from-another-model-s-run", "metrics.json", py_gate_swapped)

    def py_report_compare_swapped(d: Path, b: Base) -> Callable[[], object]:
        run = _run(d, b)
        shutil.copy(_other_model_run(d, b) / "predictions.jsonl", run / "predictions.jsonl")
        return lambda: nlibias.make_report([run, b.run], fmt="md", compare=True)

    py("make-report-compare-predictions-from-another-run", "predictions.jsonl", py_report_compare_swapped)


# -- derived files and caches, damaged or foreign ---------------------------------------------------------


def _derived_cases(case: Add) -> None:
    cli = _cli(case, "derived")

    def cache_cut(d: Path, b: Base) -> list[str]:
        path = d / "c.sqlite"
        data = b.cache.read_bytes()
        path.write_bytes(data[: len(data) // 2])
        return [*audit_args(b.samples, d)[:-2], "--cache", str(path), "--quiet"]

    cli("audit-cache-cut-in-half", cache_cut, _at("c.sqlite"))

    def cache_rows_edited(d: Path, b: Base) -> list[str]:
        path = Path(shutil.copy(b.cache, d / "c.sqlite"))
        with sqlite3.connect(path) as db:
            tables = [r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type='table'")]
            for table in tables:
                cols = [r[1] for r in db.execute(f"PRAGMA table_info({table})")]
                text_cols = [c for c in cols if c in ("value", "result", "output", "data")]
                for col in text_cols:
                    db.execute(f"UPDATE {table} SET {col} = '[0.9, 0.05, 0.05]'")
        return [*audit_args(b.samples, d)[:-2], "--cache", str(path), "--quiet"]

    cli("audit-cache-values-rewritten-by-hand", cache_rows_edited, "recomput", "warn")

    def cache_empty_file(d: Path, b: Base) -> list[str]:
        write(d / "c.sqlite", b"SQLite format 3\x00")
        return [*(a for a in _explain_args(d, b) if a != "--no-cache"), "--cache", str(d / "c.sqlite")]

    cli("explain-cache-a-sqlite-header-only", cache_empty_file, _at("c.sqlite"))

    def extend_templates_other_run(d: Path, b: Base) -> list[str]:
        args = extend_cli(d, b, "--subtopic", "man_is_to_breadwinner")
        code, text, _ = invoke(args)
        assert code == 0, text
        other = extend_cli(d / "o2", b, "--subtopic", "man_is_to_programmer")
        (d / "o2").mkdir()
        code, text, _ = invoke(other)
        assert code == 0, text
        shutil.copy(d / "o2" / "next" / "masks" / "templates.jsonl", d / "next" / "masks" / "templates.jsonl")
        return _until(args, "masked")

    cli(
        "extend-rerun-masks-templates-from-another-run", extend_templates_other_run, "templates.jsonl", "warn"
    )

    def extend_counts_edited(d: Path, b: Base) -> list[str]:
        args = extend_cli(d, b)
        code, text, _ = invoke(args)
        assert code == 0, text
        _edit_json(d / "next" / "masks" / "counts.json", lambda c: c.update(templates=1))
        return args

    cli("extend-rerun-masks-counts-edited", extend_counts_edited, "counts.json", "warn")

    def extend_stage_record_damaged(d: Path, b: Base) -> list[str]:
        args = extend_cli(d, b)
        code, text, _ = invoke(args)
        assert code == 0, text
        path = d / "next" / "stages" / "masks.json"
        path.write_text(path.read_text(encoding="utf-8")[:200], encoding="utf-8")
        return args

    cli("extend-rerun-stage-record-cut", extend_stage_record_damaged, "masks.json", "warn")

    def extend_stage_record_other(d: Path, b: Base) -> list[str]:
        args = extend_cli(d, b)
        code, text, _ = invoke(args)
        assert code == 0, text
        shutil.copy(d / "next" / "run.json", d / "next" / "stages" / "masks.json")
        return args

    cli("extend-rerun-stage-record-replaced-by-run-json", extend_stage_record_other, "masks.json", "warn")

    def extend_masked_cut(d: Path, b: Base) -> list[str]:
        args = _until(extend_cli(d, b), "masked")
        code, text, _ = invoke(args)
        assert code == 0, text
        _lines(d / "next" / "masked" / "samples.jsonl", lambda lines: lines[: len(lines) // 2])
        return args

    cli("extend-rerun-masked-samples-half-removed", extend_masked_cut, "samples.jsonl", "warn")

    def queue_row_twice(d: Path, b: Base) -> list[str]:
        run = _vrun(d, b)
        _lines(run / "validation" / "queue.csv", lambda lines: [*lines, lines[-1]])
        return ["validate", "status", str(run)]

    cli("validate-status-queue-last-row-twice", queue_row_twice, _at("vrun/validation/queue.csv"))

    def queue_from_other_run(d: Path, b: Base) -> list[str]:
        run = _vrun(d, b)
        path = run / "validation" / "queue.csv"
        path.write_text(
            path.read_text(encoding="utf-8").replace(",s,gender,", ",t,gender,"), encoding="utf-8"
        )
        return ["validate", "resolve", str(run)]

    cli("validate-resolve-queue-subtopic-edited", queue_from_other_run, _at("vrun/validation/queue.csv"))

    def explanations_jsonl_swapped(d: Path, b: Base) -> list[str]:
        run = explained_run(d, b)
        rows = run / "explanations" / "explanations.jsonl"
        rows.write_text(rows.read_text(encoding="utf-8").replace('"balanced"', '"biased"'), encoding="utf-8")
        return ["validate", "explanations", str(run)]

    cli("validate-explanations-labels-edited", explanations_jsonl_swapped, "explanations")  # fmt: skip

    def explain_record_removed(d: Path, b: Base) -> list[str]:
        run = explained_run(d, b)
        (run / "stages" / "explain.json").unlink()
        _lines(run / "explanations" / "explanations.jsonl", lambda lines: lines[:-1])
        return ["explain", str(run), "--judge", "fake:j", "--no-cache", "--bootstrap", "0"]

    cli("explain-rerun-stage-record-gone-and-a-row-removed", explain_record_removed, "explanations", "warn")

    py = _py(case, "derived")

    def py_prescreen_db(d: Path, b: Base) -> Callable[[], object]:
        run = _vrun(d, b)
        db = write(run / "validation" / "annotations.sqlite", b"not a database at all\n" * 10)
        assert db.exists()
        return lambda: nlibias.validation_status(run)

    py("validation-status-annotations-database-damaged", "annotations.sqlite", py_prescreen_db)


def _src() -> Path:
    from bad_input_cases_s28c_more import bbnli_data

    return bbnli_data()


def _until(args: list[str], stage: str) -> list[str]:
    at = args.index("--until") + 1
    return [*args[:at], stage, *args[at + 1 :]]


# -- YAML: gate rules ---------------------------------------------------------------------------------------


def _yaml_gate_cases(case: Add) -> None:
    def rules(name: str, text: str, named: str, expect: str = "error") -> None:
        def build(d: Path, b: Base) -> tuple[list[str], str]:
            path = _rules(d, text)
            return _gate(b.run, _run(d, b, "ref"), "--rules", str(path)), named.replace("FILE", str(path))

        case(f"s29b-yaml-gate/{name}", build, expect)

    rules(
        "merge-key-from-an-anchor",
        "base: &b {margin: 1}\nmeasures:\n  bbnli_bias_score:\n    <<: *b\n",
        "FILE:",
    )
    rules("two-documents", "margin: 0\n---\nmargin: 5\n", "FILE:")
    rules("python-tag", "margin: !!python/float 1\n", "FILE:1")
    rules("str-tag-on-bootstrap", "bootstrap: !!str 1000\n", "FILE:1")
    rules("seed-a-date", "seed: 2024-01-01\n", "FILE:1")
    rules("confidence-a-percent", "confidence: 95%\n", "FILE:1")
    rules("measure-max-abs-a-string", "measures:\n  bbnli_bias_score:\n    max_abs: '5'\n", "FILE:3")
    rules(
        "measure-max-detectable-a-boolean",
        "measures:\n  bbnli_bias_score:\n    max_detectable: yes\n",
        "FILE:3",
    )
    rules("measures-an-ordered-map", "measures: !!omap\n  - bbnli_bias_score: {margin: 1}\n", "FILE:1")
    rules("measure-a-number-as-key", "measures:\n  1: {margin: 1}\n", "FILE:2")
    rules("measures-alias-of-itself", "measures: &m\n  bbnli_bias_score: *m\n", "FILE:2")
    rules("a-later-slice-null", "slices: [overall, domain, ~]\n", "FILE:1")
    rules("json-rules-a-key-twice", '{"margin": 0, "bootstrap": 1000, "margin": 50}\n', "FILE:1")
    rules(
        "measure-worse-a-typo-at-depth",
        "measures:\n  bbnli_bias_score:\n    worse: towards_stereotypes\n",
        "FILE:3",
    )
    rules("unknown-key-under-a-later-measure",
          "measures:\n  bbnli_bias_score: {margin: 1}\n  cf_pro: {margn: 1}\n", "FILE:3")  # fmt: skip


# -- YAML: extend's configuration ---------------------------------------------------------------------------


def _yaml_extend_cases(case: Add) -> None:
    def cfg(name: str, text: str, named: str, expect: str = "error") -> None:
        def build(d: Path, b: Base) -> tuple[list[str], str]:
            args = extend_yaml(d, b, "source: BASE\n" + text)
            return args, named.replace("FILE", str(d / "config.yaml"))

        case(f"s29b-yaml-extend/{name}", build, expect)

    cfg("merge-key-into-filter", "mlm: &m\n  top_k: 5\nfilter:\n  <<: *m\n", "FILE:")
    cfg("two-documents", "mlm:\n  top_k: 5\n---\nmlm:\n  top_k: 7\n", "FILE:")
    cfg("python-tag-at-depth", "mlm:\n  top_k: !!python/int 5\n", "FILE:3")
    cfg("pretty-name-a-date", "pretty_name: 2024-01-01\n", "FILE:2")
    cfg("holdout-a-string-not-a-list", "filter:\n  holdout: fake:a\n  models: [fake:a]\n", "FILE:3")
    cfg(
        "second-filter-model-unknown-key",
        "filter:\n  models:\n    - {model: fake:a}\n    - {model: fake:b, quantise: int8}\n",
        "FILE:5",
    )
    cfg(
        "second-filter-model-key-twice",
        "filter:\n  models:\n    - {model: fake:a}\n    - {model: fake:b, model: fake:c}\n",
        "FILE:5",
    )
    cfg("policy-more-than-the-filter-models", "filter:\n  models: [fake:a]\n  policy: 3\n", "FILE:2")
    cfg("policy-zero", "filter:\n  models: [fake:a, fake:b]\n  policy: 0\n", "FILE:2")
    cfg("unvalidated-a-string", "validation:\n  unvalidated: 'false'\n", "FILE:3")
    cfg("seed-a-date", "seed: 2024-01-01\n", "FILE:2")
    cfg(
        "later-subtopic-twice",
        "subtopics: [man_is_to_breadwinner, man_is_to_programmer, man_is_to_programmer]\n",
        "FILE:2",
    )
    cfg("mlm-null", "mlm: ~\n", "FILE:2")
    cfg("custom-tag", "mlm:\n  top_k: !int 5\n", "FILE:3")
    cfg("label-map-of-a-later-filter-model-a-number",
        "filter:\n  models:\n    - {model: fake:a}\n    - {model: fake:b, label_map: 5}\n", "FILE:5")  # fmt: skip


# -- the fine-tune and debias folders, edited between runs ------------------------------------------------


def _folders_cases(case: Add) -> None:
    from bad_input_cases_fill import _tiny
    from bad_input_cases_s27 import _debias, _finetune

    cli = _cli(case, "folders")

    def finetune_done(d: Path, b: Base) -> list[str]:
        args = _finetune(d, "--max-steps", "1", "--batch-size", "2", model=str(_tiny(b, "nli")))
        code, text, _ = invoke(args)
        assert code == 0, text
        return args

    def record_edit(d: Path, b: Base) -> list[str]:
        args = finetune_done(d, b)
        _edit_json(d / "ft" / "finetune.json", lambda r: r.update(steps=999, train_rows=1000))
        return args

    cli("finetune-rerun-record-steps-and-rows-edited", record_edit, "finetune.json", "warn")

    def weights_swapped(d: Path, b: Base) -> list[str]:
        args = finetune_done(d, b)
        for path in _tiny(b, "nli").glob("*.safetensors"):
            shutil.copy(path, d / "ft" / path.name)
        return args

    cli("finetune-rerun-weights-replaced-by-the-base-model-s", weights_swapped, "safetensors", "warn")

    def train_edited(d: Path, b: Base) -> list[str]:
        args = finetune_done(d, b)
        _lines(d / "data" / "train.jsonl", lambda lines: lines[:-1])
        return args

    cli("finetune-rerun-train-file-edited-since", train_edited, "train.sha256")

    def finetune_out_a_run(d: Path, b: Base) -> list[str]:
        run = _run(d, b)
        args = _finetune(d, "--max-steps", "1", "--batch-size", "2", model=str(_tiny(b, "nli")))
        return [*args[: args.index("--out") + 1], str(run), *args[args.index("--out") + 2 :]]

    cli("finetune-out-an-audit-run", finetune_out_a_run, _at("run"))

    def debias_out_a_model(d: Path, b: Base) -> list[str]:  # the same rule (io/overwrites.refuse_other_run)
        finetune_done(d, b)
        args = _debias(d, "--max-steps", "1", "--batch-size", "2", model=str(_tiny(b, "nli")))
        return [*args[: args.index("--out") + 1], str(d / "ft"), *args[args.index("--out") + 2 :]]

    cli("debias-out-a-fine-tuned-model-folder", debias_out_a_model, "finetune.json")


# -- empty or unread results across commands ---------------------------------------------------------------


def _empty_cases(case: Add) -> None:
    cli = _cli(case, "empty")

    def all_predictions_removed(d: Path, b: Base) -> list[str]:
        run = _run(d, b)
        (run / "predictions.jsonl").write_text("", encoding="utf-8")
        return ["report", str(run), "--format", "md"]

    cli("report-md-predictions-emptied", all_predictions_removed, "predictions.jsonl")

    def explanations_emptied(d: Path, b: Base) -> list[str]:
        run = explained_run(d, b)
        (run / "explanations" / "explanations.jsonl").write_text("", encoding="utf-8")
        return ["validate", "explanations", str(run)]

    cli("validate-explanations-explanations-emptied", explanations_emptied,
        _at("G/explanations/explanations.jsonl"))  # fmt: skip

    def score_predictions_other_ids(d: Path, b: Base) -> list[str]:
        rows = [dict(r, id=r["id"].replace("breadwinner", "programmer")) for r in _predictions(b)]
        return score_args(b, _preds_file(d, rows), d)

    cli("score-predictions-of-another-subtopic", score_predictions_other_ids, _at("preds.jsonl"))

    def metrics_models_emptied(d: Path, b: Base) -> list[str]:
        run = _run(d, b)
        _edit_json(run / "metrics.json", lambda m: m.update(models={}))
        return ["export", "model-index", str(run)]

    cli("export-model-index-metrics-models-emptied", metrics_models_emptied, "metrics.json")

    def gate_no_models(d: Path, b: Base) -> list[str]:
        cand, ref = pair(d, b)
        _edit_json(cand / "metrics.json", lambda m: m.update(models={}))
        return _gate(cand, ref)

    cli("gate-candidate-metrics-models-emptied", gate_no_models, "metrics.json")


def s29b_cases() -> list[Case]:
    groups = [
        _kind_cases,
        _edited_cases,
        _derived_cases,
        _yaml_gate_cases,
        _yaml_extend_cases,
        _folders_cases,
        _empty_cases,
    ]
    return cases_of(groups, KNOWN)
