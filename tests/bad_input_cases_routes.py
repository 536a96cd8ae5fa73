"""Bad inputs of the newest routes (issue #48, every class through every route), part of the corpus
of ``bad_input_cases``: damaged BBQ category files (``expand bbq``), ``export lm-eval`` of a BBQ run
with a bad --out or prompt, ``--option-score`` values through the command line, the Python API and
an lm-eval log's documents, BBQ answer files scored with ``--answer-column``, and the gate of a
plug-in benchmark whose resampling units or headline measure are missing."""

from __future__ import annotations

import importlib.metadata
import json
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path
from typing import Any

from bad_input_corpus import Base, Case, audit_args

BBQ_SOURCE = "bbq/data/Age.jsonl"
"""The pinned category file the BBQ cases copy their first examples from."""
_STAMP = "2026-01-01T00-00-00.000001"
_TASK = "nlibias_bbq_race"


def _data_dir() -> Path:
    import os

    return Path(os.environ.get("NLIBIAS_DATA_DIR", Path(__file__).resolve().parents[2] / "shared" / "data"))


def _bbq_rows(count: int = 8, category: str = "Age") -> list[dict[str, Any]]:
    """The first ``count`` examples of a pinned category file (two filled templates for 8)."""
    path = _data_dir() / "bbq" / "data" / f"{category}.jsonl"
    with path.open(encoding="utf-8") as lines:
        return [json.loads(next(lines)) for _ in range(count)]


def _write_jsonl(path: Path, rows: list[dict[str, Any]]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    return path


def _bbq_run(d: Path) -> Path:
    """A BBQ run directory: the 8 first Age examples (under a name of the user's own), expanded."""
    import nlibias

    _write_jsonl(d / "bbq-src" / "ages.jsonl", _bbq_rows())
    nlibias.expand("bbq", source=d / "bbq-src", out_dir=d / "bbq-run")
    return d / "bbq-run"


def _bbnli_generative(d: Path, base: Base) -> list[str]:
    args = audit_args(base.samples, d)
    args[args.index("--model") : args.index("--model") + 2] = ["--generative", "fake:g"]
    return args


# -- expand bbq ------------------------------------------------------------------------------------


def _expand_bbq_cases() -> list[Case]:
    found: list[Case] = []

    def bbq(
        name: str, damage: Callable[[list[dict[str, Any]]], list[dict[str, Any]] | bytes], known: str = ""
    ) -> None:
        def build(d: Path, base: Base) -> tuple[list[str], str]:
            damaged = damage(_bbq_rows())
            path = d / "src" / "ages.jsonl"
            path.parent.mkdir(parents=True)
            if isinstance(damaged, bytes):
                path.write_bytes(damaged)
            else:
                _write_jsonl(path, damaged)
            return ["expand", "bbq", "--source", str(d / "src"), "--out", str(d / "out")], f"{path}:2"

        found.append(Case(f"bbq-jsonl/{name}", build, known=known))

    def second(
        edit: Callable[[dict[str, Any]], None],
    ) -> Callable[[list[dict[str, Any]]], list[dict[str, Any]]]:
        def damage(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
            edit(rows[1])
            return rows

        return damage

    def groups(row: dict[str, Any], *stereotyped: str) -> None:
        row["additional_metadata"]["stereotyped_groups"] = list(stereotyped)

    bbq("missing-context", second(lambda r: r.pop("context")))
    bbq("missing-answer-info", second(lambda r: r.pop("answer_info")))
    bbq("answer-info-no-target", second(lambda r: groups(r, "young")))
    bbq("answer-info-two-targets", second(lambda r: r["answer_info"].update(ans1=["grandson", "old"])))
    bbq("answer-info-no-unknown", second(lambda r: r["answer_info"].update(ans2=["nobody", "nonOld"])))
    bbq("answer-info-two-entries", second(lambda r: r["answer_info"].pop("ans2")))
    bbq("label-out-of-range", second(lambda r: r.update(label=3)))
    bbq("label-negative", second(lambda r: r.update(label=-1)))
    bbq("label-a-string", second(lambda r: r.update(label="1")))
    bbq("condition-unknown", second(lambda r: r.update(context_condition="vague")))
    bbq("example-id-repeated", second(lambda r: r.update(example_id=0)))
    bbq("not-json-line", lambda rows: (json.dumps(rows[0]) + "\n{not json\n").encode())

    def ambiguous_answered_by_a_person(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
        rows[0], rows[1] = rows[1], rows[0]  # line 2: an ambiguous context (its answer: unknown)
        assert rows[1]["context_condition"] == "ambig"
        rows[1]["label"] = 0
        return rows

    # every example of the pinned files keeps these rules (checked on all 11956): refusing them
    # refuses no upstream example
    bbq("label-a-person-in-an-ambiguous-context", ambiguous_answered_by_a_person)
    bbq("two-answers-one-text", second(lambda r: r.update(ans1=r["ans0"])))
    bbq("answer-blank", second(lambda r: r.update(ans1="  ")))

    def pinned_name_edited(d: Path, base: Base) -> tuple[list[str], str]:
        rows = _bbq_rows()
        rows[0]["context"] += " Edited."
        path = _write_jsonl(d / "src" / "data" / "Age.jsonl", rows)
        return ["expand", "bbq", "--source", str(d / "src"), "--out", str(d / "out")], str(path)

    def empty(d: Path, base: Base) -> tuple[list[str], str]:
        path = d / "src" / "ages.jsonl"
        path.parent.mkdir(parents=True)
        path.write_bytes(b"")
        return ["expand", "bbq", "--source", str(d / "src"), "--out", str(d / "out")], str(path)

    found.append(Case("bbq-jsonl/pinned-name-edited", pinned_name_edited))
    found.append(Case("bbq-jsonl/empty", empty))
    return found


# -- export lm-eval of a BBQ run --------------------------------------------------------------------


def _export_cases() -> list[Case]:
    found: list[Case] = []

    def export(
        name: str, extra: Callable[[Path, Path], tuple[list[str], str]], samples_file: bool = False
    ) -> None:
        def build(d: Path, base: Base) -> tuple[list[str], str]:
            run = _bbq_run(d)
            given = run / "samples.jsonl" if samples_file else run
            args, named = extra(run, d)
            return ["export", "lm-eval", "--samples", str(given), *args, "--quiet"], named

        found.append(Case(f"export-lm-eval/{name}", build))

    def out_samples(run: Path, d: Path) -> tuple[list[str], str]:
        return ["--out", str(run / "samples.jsonl")], str(run / "samples.jsonl")

    def out_under_samples(run: Path, d: Path) -> tuple[list[str], str]:
        return ["--out", str(run / "samples.jsonl" / "task")], str(run / "samples.jsonl")

    export("out-is-the-samples-file", out_samples)
    export("out-is-the-samples-file-given-as-a-file", out_samples, samples_file=True)
    export("out-under-the-samples-file", out_under_samples)
    export("prompt-unknown", lambda run, d: (["--out", str(d / "t"), "--prompt", "nope"], "--prompt"))
    export("prompt-yes-no-on-bbq", lambda run, d: (["--out", str(d / "t"), "--prompt", "true"], "'true'"))
    export("prompt-file-missing", lambda run, d: (["--out", str(d / "t"), "--prompt", str(d / "p.yaml")],
                                                  str(d / "p.yaml")))  # fmt: skip
    export("task-named-the-samples-file", lambda run, d: (["--out", str(run), "--task", "samples"],
                                                          str(run / "samples.jsonl")))  # fmt: skip

    def task(name: str, value: str) -> None:
        def build(d: Path, base: Base) -> tuple[list[str], str]:
            run = _bbq_run(d)
            args = ["export", "lm-eval", "--samples", str(run), "--out", str(d / "t" / "u"), "--task", value]
            return [*args, "--quiet"], "--task"

        found.append(Case(f"export-lm-eval/{name}", build))

    task("task-escaping-out", "../escape")  # a path, not a name: its files would land outside --out
    task("task-with-a-slash", "a/b")
    task("task-blank", "")

    def python_task(d: Path, base: Base) -> tuple[Callable[[], object], str]:
        import nlibias

        run = _bbq_run(d)
        return lambda: nlibias.export_lm_eval(run, d / "t" / "u", task="../escape"), "task"

    found.append(Case("export-lm-eval/python-task-escaping-out", python_task))
    return found


# -- --option-score ---------------------------------------------------------------------------------


def _option_score_cases() -> list[Case]:
    found: list[Case] = []

    def cli(name: str, value: str, *extra: str) -> None:
        def build(d: Path, base: Base) -> tuple[list[str], str]:
            args = audit_args(_bbq_run(d), d)
            args[args.index("--model") : args.index("--model") + 2] = ["--generative", "fake:g"]
            return [*args, "--option-score", value, *extra], "--option-score"

        found.append(Case(f"option-score/cli-{name}", build))

    cli("unknown", "bogus")
    cli("underscore", "per_byte")
    cli("capitals", "Per-Byte")
    cli("blank", "")
    cli("trailing-space", "total ")
    cli("per-byte-generated", "per-byte", "--mode", "generated")

    def cli_yes_no(d: Path, base: Base) -> tuple[list[str], str]:
        return [*_bbnli_generative(d, base), "--option-score", "per-byte"], "--option-score"

    found.append(Case("option-score/cli-per-byte-on-yes-no-samples", cli_yes_no))

    def export_value(d: Path, base: Base) -> tuple[list[str], str]:
        run = _bbq_run(d)
        args = ["export", "lm-eval", "--samples", str(run), "--out", str(d / "t"), "--option-score", "bytes"]
        return args, "--option-score"

    found.append(Case("option-score/export-unknown", export_value))

    def python(name: str, value: object, **extra: Any) -> None:
        def build(d: Path, base: Base) -> tuple[Callable[[], object], str]:
            import nlibias

            run = _bbq_run(d)
            return lambda: nlibias.audit(
                run,
                generative="fake:g",
                cache=False,
                bootstrap=0,
                progress=False,
                option_score=value,
                **extra,
            ), "option_score"

        found.append(Case(f"option-score/python-{name}", build))

    python("unknown", "bogus")
    python("a-number", 5)
    python("none", None)
    python("a-list", ["total"])
    python("per-byte-generated", "per-byte", mode="generated")

    def python_export(d: Path, base: Base) -> tuple[Callable[[], object], str]:
        import nlibias

        run = _bbq_run(d)
        return lambda: nlibias.export_lm_eval(run, d / "t", option_score="bogus"), "option_score"  # type: ignore[arg-type]

    found.append(Case("option-score/python-export-unknown", python_export))

    def log(name: str, value: object) -> None:
        """An lm-eval log of an exported BBQ task whose documents say how options were chosen."""

        def build(d: Path, base: Base) -> tuple[list[str], str]:
            run = _bbq_run(d)
            lines = []
            for i, line in enumerate((run / "samples.jsonl").read_text(encoding="utf-8").splitlines()):
                sample = json.loads(line)
                answers = sample["provenance"]["answers"]
                doc = {"id": sample["id"], "prompt": "race", "options": 3, "target": 0,
                       "choices": [f"\n{a}" for a in answers] + ["\n"], "option_score": value}  # fmt: skip
                resps = [[-1.0, False], [-2.0, False], [-3.0, False], [-0.5, False]]
                lines.append(
                    {"doc_id": i, "doc": doc, "resps": [[r] for r in resps], "filtered_resps": resps}
                )
            path = d / f"samples_{_TASK}_{_STAMP}.jsonl"
            path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
            results = {"results": {_TASK: {"acc,none": 0.0}}, "config": {"limit": None},
                       "n-samples": {_TASK: {"original": len(lines), "effective": len(lines)}}}  # fmt: skip
            (d / f"results_{_STAMP}.json").write_text(json.dumps(results), encoding="utf-8")
            args = ["score", "--samples", str(run), "--predictions", str(path), "--out", str(d / "o")]
            return [*args, "--bootstrap", "0"], str(path)

        found.append(Case(f"option-score/lm-eval-log-{name}", build))

    log("unknown", "bogus")
    log("missing", None)
    return found


# -- score --answer-column ------------------------------------------------------------------------


def _answer_column_cases() -> list[Case]:
    found: list[Case] = []

    def answers(
        name: str,
        rows: Callable[[list[dict[str, Any]]], list[dict[str, Any]] | bytes],
        expect: str = "error",
        named: str = "",
    ) -> None:
        def build(d: Path, base: Base) -> tuple[list[str], str]:
            run = _bbq_run(d)
            made = rows([{**row, "uqa": row["ans0"]} for row in _bbq_rows()])
            path = d / "answers.jsonl"
            if isinstance(made, bytes):
                path.write_bytes(made)
            else:
                _write_jsonl(path, made)
            args = ["score", "--samples", str(run), "--predictions", str(path), "--answer-column", "uqa"]
            return [*args, "--out", str(d / "o"), "--bootstrap", "0"], named or str(path)

        found.append(Case(f"answer-column/{name}", build, expect))

    def shifted(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
        return [{**row, "example_id": row["example_id"] + 1000} for row in rows]

    def one_unknown(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
        rows[3]["example_id"] = 9999
        return rows

    def other_category(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
        return [{**row, "uqa": row["ans0"]} for row in _bbq_rows(category="Religion")]

    def answer(value: object) -> Callable[[list[dict[str, Any]]], list[dict[str, Any]]]:
        return lambda rows: [{**row, "uqa": value} for row in rows]

    answers("unknown-example-ids", shifted)
    answers("one-unknown-example-id", one_unknown)
    answers("another-categorys-examples", other_category)
    answers("column-missing", lambda rows: [{k: v for k, v in row.items() if k != "uqa"} for row in rows])
    answers("answer-a-number", answer(1))
    answers("answer-null", answer(None))
    answers("answer-a-list", answer(["The grandfather"]))
    answers("empty-file", lambda rows: b"")
    answers("blank-lines", lambda rows: b"\n\n")
    answers("not-json-line", lambda rows: (json.dumps(rows[0]) + "\n{not json\n").encode())
    answers("csv-content", lambda rows: b"example_id,category,uqa\n0,Age,The grandfather\n")
    answers("json-array-content", lambda rows: json.dumps(rows).encode())
    answers("example-repeated", lambda rows: [*rows, rows[0]])
    answers(
        "example-id-a-string", lambda rows: [{**row, "example_id": str(row["example_id"])} for row in rows]
    )
    answers("half-the-examples", lambda rows: rows[:4], expect="warn", named="have no prediction")

    def blank_column(d: Path, base: Base) -> tuple[list[str], str]:
        run = _bbq_run(d)
        path = _write_jsonl(d / "answers.jsonl", [{**row, "uqa": row["ans0"]} for row in _bbq_rows()])
        args = ["score", "--samples", str(run), "--predictions", str(path), "--answer-column", " "]
        return [*args, "--out", str(d / "o"), "--bootstrap", "0"], "--answer-column"

    def on_bbnli_samples(d: Path, base: Base) -> tuple[list[str], str]:
        path = _write_jsonl(d / "answers.jsonl", [{**row, "uqa": row["ans0"]} for row in _bbq_rows()])
        args = ["score", "--samples", str(base.samples), "--predictions", str(path), "--answer-column", "uqa"]
        return [*args, "--out", str(d / "o"), "--bootstrap", "0"], "--answer-column"

    def python_missing(d: Path, base: Base) -> tuple[Callable[[], object], str]:
        import nlibias

        run = _bbq_run(d)
        path = _write_jsonl(d / "answers.jsonl", _bbq_rows())
        return lambda: nlibias.score(run, path, answer_column="uqa", bootstrap=0), str(path)

    def two_files(d: Path, base: Base) -> tuple[list[str], str]:
        run = _bbq_run(d)
        rows = [{**row, "uqa": row["ans0"]} for row in _bbq_rows()]
        first, second = _write_jsonl(d / "a.jsonl", rows), _write_jsonl(d / "b.jsonl", rows)
        args = ["score", "--samples", str(run), "--predictions", str(first), "--predictions", str(second)]
        return [*args, "--answer-column", "uqa", "--out", str(d / "o"), "--bootstrap", "0"], str(second)

    found.append(Case("answer-column/blank-name", blank_column))
    found.append(Case("answer-column/answered-in-two-files", two_files))
    found.append(Case("answer-column/on-bbnli-samples", on_bbnli_samples))
    found.append(Case("answer-column/python-column-missing", python_missing))
    return found


# -- the gate of a plug-in benchmark -----------------------------------------------------------------


_TABLES = ("_BY_NAME", "_BY_SOURCE", "_PLUGINS", "_PLUGIN_ERRORS")


@contextmanager
def _plugin_registry() -> Iterator[None]:
    """The plug-in registry and the declared measures as they were, restored after the case."""
    from nlibias.catalog import registry
    from nlibias.metrics.meta import ALL_MEASURES

    saved = {table: getattr(registry, table).copy() for table in _TABLES}
    loaded, entry_points = registry._entry_points_loaded, importlib.metadata.entry_points
    declared = dict(ALL_MEASURES)
    try:
        yield
    finally:
        for table, value in saved.items():
            setattr(registry, table, value)
        registry._entry_points_loaded = loaded
        importlib.metadata.entry_points = entry_points
        ALL_MEASURES.clear()
        ALL_MEASURES.update(declared)


def _install(saved: dict[str, Any], benchmark: object | None) -> None:
    """Only this plug-in (None: none) installed, as an entry point of ``nlibias-lean``."""
    from nlibias.catalog import registry
    from test_plugins_isolated import Entry

    entries = [] if benchmark is None else [Entry("lean", benchmark, "nlibias-lean")]
    importlib.metadata.entry_points = lambda group=None: list(entries)  # type: ignore[assignment]
    registry._entry_points_loaded = False
    for table, value in saved.items():
        setattr(registry, table, value.copy())


def _lean(**changes: Any) -> Any:
    """The plug-in of tests/test_plugin_gate.py with its classifier measures changed."""
    from test_plugin_gate import LEAN_BENCHMARK

    measures = replace(LEAN_BENCHMARK.measures["classifier"], **changes)
    return replace(LEAN_BENCHMARK, measures={"classifier": measures})


def _no_headline(columns: Any, outputs: Any, **_: Any) -> dict[str, Any]:
    return {"overall": {"n": len(columns)}}


def _units_of_another_measure(columns: Any, outputs: Any, model: str) -> Any:
    import nlibias
    from test_plugin_gate import lean_units

    units = lean_units(columns, outputs, model)
    return nlibias.RunUnits(units.blocks, lambda totals: {"other": totals[:, 0]}, units.stratum, units.groups)


def _plugin_gate_cases() -> list[Case]:
    found: list[Case] = []

    def gate(
        name: str,
        baseline: Callable[[], object],
        candidate: Callable[[], object] | None = None,
        *,
        named: Callable[[Path], str],
        python: bool = False,
        gated_with: Callable[[], object | None] | None = None,
        rules: str = "",
        known: str = "",
    ) -> None:
        """Two audits of the plug-in's samples (the baseline's and the candidate's plug-in), then
        ``nlibias gate`` (or ``nlibias.gate``) with the plug-in ``gated_with`` installed."""

        def build(d: Path, base: Base) -> tuple[list[str] | Callable[[], object], str]:
            import nlibias
            from nlibias.catalog import registry
            from test_plugin_gate import Leaning

            saved = {table: getattr(registry, table).copy() for table in _TABLES}
            _install(saved, baseline())
            samples = nlibias.expand("lean", out_dir=d / "samples")
            nlibias.audit(samples, models=[Leaning(0.5, 0.5)], cache=False, bootstrap=0, progress=False,
                          out_dir=d / "base")  # fmt: skip
            _install(saved, (candidate or baseline)())
            nlibias.audit(samples, models=[Leaning(0.8, 0.4)], cache=False, bootstrap=0, progress=False,
                          out_dir=d / "cand")  # fmt: skip
            _install(saved, (gated_with or candidate or baseline)())
            if python:
                return lambda: nlibias.gate(d / "cand", d / "base"), named(d)
            args = ["gate", str(d / "cand"), "--baseline", str(d / "base")]
            if rules:
                (d / "gate.yaml").write_text(rules, encoding="utf-8")
                args += ["--rules", str(d / "gate.yaml")]
            return args, named(d)

        found.append(Case(f"plugin-gate/{name}", build, context=_plugin_registry, known=known))

    def no_units() -> Any:
        return _lean(units=None)

    def no_headline() -> Any:
        return _lean(score=_no_headline, tables=lambda models, **_: "")

    def the_plugin() -> Any:
        return _lean()

    gate("units-missing", no_units, named=lambda d: "Measures.units")
    gate("units-missing-python", no_units, named=lambda d: "Measures.units", python=True)
    gate(
        "units-of-another-measure", lambda: _lean(units=_units_of_another_measure), named=lambda d: "lean_gap"
    )
    gate("units-not-run-units", lambda: _lean(units=lambda c, o, m: None), named=lambda d: "plug-in 'lean'")
    gate("plugin-uninstalled", the_plugin, gated_with=lambda: None, named=lambda d: "'lean'")
    gate("headline-absent-from-both-runs", no_headline, named=lambda d: "headline measure")
    gate("headline-absent-python", no_headline, named=lambda d: "headline measure", python=True)
    gate(
        "headline-absent-from-the-baseline",
        no_headline,
        the_plugin,
        named=lambda d: str(d / "base"),
    )
    gate(
        "headline-absent-from-the-candidate",
        the_plugin,
        no_headline,
        named=lambda d: str(d / "cand"),
    )
    lean_rules = "measures:\n  lean_gap: {max_abs: 5}\n"
    gate("rules-measure-misspelt", the_plugin, rules="measures:\n  lean_gapp: {max_abs: 5}\n",
         named=lambda d: f"{d / 'gate.yaml'}:2")  # fmt: skip
    gate(
        "rules-slicing-unknown",
        the_plugin,
        rules="slices: [region]\n",
        named=lambda d: f"{d / 'gate.yaml'}:1",
    )
    gate("rules-measure-the-runs-lack", no_headline, rules=lean_rules, named=lambda d: "lean_gap")
    gate("rules-units-missing", no_units, rules=lean_rules, named=lambda d: "Measures.units")
    return found


def routes_cases() -> list[Case]:
    """The cases of the newest routes (issue #48)."""
    return [
        *_expand_bbq_cases(),
        *_export_cases(),
        *_option_score_cases(),
        *_answer_column_cases(),
        *_plugin_gate_cases(),
    ]
