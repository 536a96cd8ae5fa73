"""Session 29's final measurement (finder s29f): a fresh set of issue #48's classes spread evenly
over every command (expand, audit, score, report, gate, explain, export, extend, masks, validate,
augment, finetune, debias, demo, doctor, schema, benchmarks) and the three routes, aimed at what the
day's new rules (OutFile, CachePath, the list-file reader, device addresses, folder locks, sealed
stage records) do not reach: files of one kind given as another on commands not tried with them, the
later item of a list, nested YAML keys, an output onto another run's file, a SQLite file of another
kind as a cache, and options that apply to nothing. Part of the corpus of ``bad_input_cases``; none
repeats an earlier case."""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Callable
from pathlib import Path

import nlibias
from bad_input_cases_declared import _model_dir
from bad_input_cases_explain import _generated_run
from bad_input_cases_routes import _bbq_rows, _write_jsonl
from bad_input_cases_s26 import _gate, _run_copy
from bad_input_cases_s27 import _audited_bbq, _augment, _debias, _finetune, _training, _vrun
from bad_input_cases_s28 import PAIRS_CSV, _crows_rows, _gen
from bad_input_cases_s28 import _write as write
from bad_input_cases_s28b_io import _tiny
from bad_input_cases_s28c_more import Add, bbnli_data, extend_cli, extend_yaml, pair, templates_file
from bad_input_cases_s29e import CARD, _explained, _index, _judged_vrun
from bad_input_corpus import QUEUE_ROWS, Base, audit_args, cases_of, score_args

KNOWN: dict[str, str] = {}

Build = Callable[[Path, Base], list[str]]
PyBuild = Callable[[Path, Base], Callable[[], object]]
Named = str | Callable[[Path], str]
CLASSIFIER = "RobertaForSequenceClassification"


def _cli(case: Add, group: str) -> Callable[..., None]:
    def add(name: str, args: Build, named: Named, expect: str = "error", **kw: object) -> None:
        def build(d: Path, b: Base) -> tuple[list[str], str]:
            built = args(d, b)
            return built, named(d) if callable(named) else named

        case(f"s29f-{group}/cli-{name}", build, expect, **kw)

    return add


def _py(case: Add, group: str) -> Callable[..., None]:
    def add(name: str, named: Named, call: PyBuild, expect: str = "error") -> None:
        def build(d: Path, b: Base) -> tuple[Callable[[], object], str]:
            return call(d, b), named(d) if callable(named) else named

        case(f"s29f-{group}/python-{name}", build, expect)

    return add


def _at(rel: str) -> Callable[[Path], str]:
    return lambda d: str(d / rel)


def _annotations(d: Path, b: Base) -> Path:
    """A validation run's annotations database (a SQLite file of another kind)."""
    return _judged_vrun(d, b) / "validation" / "annotations.sqlite"


def _symlink(target: Path, link: Path) -> Path:
    os.symlink(target, link)
    return link


def _junit(d: Path) -> Path:
    return write(
        d / "gate.xml", '<?xml version="1.0"?>\n<testsuites><testsuite name="m" tests="1"/></testsuites>\n'
    )


def _swap_value(args: list[str], flag: str, value: Path | str) -> list[str]:
    """``args`` with the value of ``flag`` replaced by ``value``."""
    at = args.index(flag) + 1
    return [*args[:at], str(value), *args[at + 1 :]]


def _explanations(d: Path, b: Base) -> Path:
    return _explained(d, b) / "explanations" / "explanations.jsonl"


# -- expand --------------------------------------------------------------------------------------------


def _expand_cases(case: Add) -> None:
    cli = _cli(case, "expand")

    def bbq_copy(d: Path, b: Base) -> list[str]:
        rows = _bbq_rows()
        _write_jsonl(d / "src" / "ages.jsonl", rows)
        _write_jsonl(d / "src" / "ages-copy.jsonl", rows)
        return ["expand", "bbq", "--source", str(d / "src"), "--out", str(d / "out")]

    cli("bbq-a-second-file-holding-the-same-examples", bbq_copy, "ages-copy.jsonl")

    def crows_last_blank(d: Path, b: Base) -> list[str]:
        lines = _crows_rows().splitlines()
        header = lines[0].split(",")
        last = next(csv_row for csv_row in _csv_rows(lines))
        last[header.index("sent_less")] = ""
        text = "\n".join([*lines[:-1], _csv_line(last)]) + "\n"
        return [
            "expand",
            "crows-pairs",
            "--source",
            str(write(d / "crows.csv", text)),
            "--out",
            str(d / "out"),
        ]

    cli("crows-pairs-last-row-sent-less-blank", crows_last_blank, _at("crows.csv"))
    cli("bbnli-tp-source-a-predictions-file", lambda d, b: ["expand", "bbnli-tp", "--source",
        str(b.predictions), "--out", str(d / "out")], "predictions.jsonl")  # fmt: skip

    py = _py(case, "expand")
    py("sentence-pairs-hypothesis-templates", "hypothesis_templates", lambda d, b: lambda: nlibias.expand(
        "sentence-pairs", write(d / "pairs.csv", PAIRS_CSV), out_dir=d / "o", hypothesis_templates="all"))  # fmt: skip
    py("bbq-strict", "strict", lambda d, b: lambda: nlibias.expand(
        "bbq", _write_jsonl(d / "src" / "ages.jsonl", _bbq_rows()).parent, out_dir=d / "o", strict=False))  # fmt: skip
    py("crows-pairs-source-a-bbnli-folder", lambda d: "bbnli", lambda d, b: lambda: nlibias.expand(
        "crows-pairs", b.bbnli_dir, out_dir=d / "o"))  # fmt: skip


def _csv_rows(lines: list[str]) -> list[list[str]]:
    import csv

    return list(csv.reader(lines[-1:]))


def _csv_line(row: list[str]) -> str:
    import csv
    import io

    buffer = io.StringIO()
    csv.writer(buffer, lineterminator="").writerow(row)
    return buffer.getvalue()


# -- audit ---------------------------------------------------------------------------------------------


def _audit_cases(case: Add) -> None:
    cli = _cli(case, "audit")

    def samples(path: Callable[[Path, Base], Path]) -> Build:
        return lambda d, b: audit_args(path(d, b), d)

    cli("samples-a-junit-file-of-a-gate", samples(lambda d, b: _junit(d)), _at("gate.xml"))
    cli("samples-a-run-s-explanations", samples(_explanations), "explanations.jsonl")
    cli(
        "by-one-slice-twice",
        lambda d, b: [*audit_args(b.samples, d), "--by", "domain", "--by", "domain"],
        "--by",
    )
    cli(
        "prompt-twice-in-other-case",
        lambda d, b: _gen(d, b, "--prompt", "true", "--prompt", "TRUE"),
        "--prompt",
    )
    cli("cache-a-validation-database", lambda d, b: [*audit_args(b.samples, d)[:-2], "--cache",
        str(_annotations(d, b)), "--quiet"], "annotations.sqlite")  # fmt: skip

    py = _py(case, "audit")
    py("second-model-with-a-trailing-space", "models", lambda d, b: lambda: nlibias.audit(
        b.samples, ["fake:m", "fake:n "], cache=False, bootstrap=0, progress=False))  # fmt: skip
    py("out-dir-the-samples-jsonl", "out_dir", lambda d, b: lambda: nlibias.audit(
        b.samples, "fake:m", cache=False, bootstrap=0, progress=False,
        out_dir=Path(shutil.copytree(b.samples, d / "s")) / "samples.jsonl"))  # fmt: skip
    py("cache-the-run-s-own-metrics", lambda d: "metrics.json", lambda d, b: (lambda run: lambda: nlibias.audit(
        b.samples, "fake:m", cache=run / "metrics.json", bootstrap=0, progress=False, out_dir=run))(
        _run_copy(d, b)))  # fmt: skip


# -- score ---------------------------------------------------------------------------------------------


def _score_cases(case: Add) -> None:
    cli = _cli(case, "score")
    cli("predictions-a-run-s-metrics-json", lambda d, b: score_args(b, _run_copy(d, b) / "metrics.json", d),
        _at("run/metrics.json"))  # fmt: skip
    cli(
        "predictions-a-run-s-explanations",
        lambda d, b: score_args(b, _explanations(d, b), d),
        "explanations.jsonl",
    )
    cli("predictions-the-samples-file", lambda d, b: score_args(
        b, Path(shutil.copytree(b.samples, d / "s")) / "samples.jsonl", d), _at("s/samples.jsonl"))  # fmt: skip

    def two_copies(d: Path, b: Base) -> list[str]:
        copy = Path(shutil.copy(b.predictions, d / "again.jsonl"))
        return [*score_args(b, b.predictions, d), "--predictions", str(copy)]

    cli("predictions-a-second-file-with-the-same-rows", two_copies, "again.jsonl")
    cli("answer-column-on-classifier-predictions", lambda d, b: [*score_args(b, b.predictions, d),
        "--answer-column", "label"], "--answer-column")  # fmt: skip

    py = _py(case, "score")
    py("predictions-a-file-and-a-symlink-to-it", "predictions", lambda d, b: lambda: nlibias.score(
        b.samples, [b.predictions, _symlink(b.predictions, d / "link.jsonl")], bootstrap=0))  # fmt: skip
    py("out-dir-the-predictions-file", "out_dir", lambda d, b: (lambda p: lambda: nlibias.score(
        b.samples, p, bootstrap=0, out_dir=p))(Path(shutil.copy(b.predictions, d / "p.jsonl"))))  # fmt: skip


# -- report --------------------------------------------------------------------------------------------


def _report_cases(case: Add) -> None:
    cli = _cli(case, "report")

    def compare(*runs: Callable[[Path, Base], Path]) -> Build:
        return lambda d, b: ["report", *[str(r(d, b)) for r in runs], "--compare", "--format", "md"]

    cli("compare-a-run-and-a-validation-run", compare(lambda d, b: _run_copy(d, b), _vrun), _at("vrun"))
    cli("compare-third-run-of-another-benchmark", compare(
        lambda d, b: _run_copy(d, b, "one"), lambda d, b: _run_copy(d, b, "two"), lambda d, b: _audited_bbq(d)),
        _at("bbq-audit/o"))  # fmt: skip
    cli("md-out-the-run-s-manifest", lambda d, b: (lambda r: ["report", str(r), "--format", "md", "--out",
        str(r / "manifest.json")])(_run_copy(d, b)), _at("run/manifest.json"))  # fmt: skip
    cli(
        "a-gate-junit-file-as-a-run",
        lambda d, b: ["report", str(_junit(d)), "--format", "md"],
        _at("gate.xml"),
    )

    py = _py(case, "report")
    py("compare-a-run-spelt-with-a-dot", "runs", lambda d, b: (lambda r: lambda: nlibias.make_report(
        [r, Path(f"{r}/.")], compare=True, fmt="md"))(_run_copy(d, b)))  # fmt: skip
    py("md-out-the-run-s-metrics", "out", lambda d, b: (lambda r: lambda: nlibias.make_report(
        [r], out=r / "metrics.json", fmt="md"))(_run_copy(d, b)))  # fmt: skip
    py("runs-a-samples-directory", lambda d: "samples", lambda d, b: lambda: nlibias.make_report(
        [b.samples], fmt="md"))  # fmt: skip


# -- gate ----------------------------------------------------------------------------------------------


def _gate_cases(case: Add) -> None:
    cli = _cli(case, "gate")
    cli("markdown-the-baseline-s-tables", lambda d, b: (lambda c, r: _gate(
        c, r, "--markdown", str(r / "tables.txt")))(*pair(d, b)), _at("ref/tables.txt"))  # fmt: skip
    cli("junit-the-candidate-s-manifest-through-a-symlink", lambda d, b: (lambda c, r: _gate(
        c, r, "--junit", str(_symlink(c / "manifest.json", d / "out.xml"))))(*pair(d, b)), _at("out.xml"))  # fmt: skip
    cli("pair-the-same-pair-twice", lambda d, b: (lambda c, r: _gate(c, r, "--pair", "m=m", "--pair", "m=m"))(
        *pair(d, b)), "--pair")  # fmt: skip
    cli("baseline-a-samples-directory", lambda d, b: _gate(_run_copy(d, b), b.samples), "samples")
    cli("baseline-a-gate-junit-file", lambda d, b: _gate(_run_copy(d, b), _junit(d)), _at("gate.xml"))

    def rules(name: str, text: str, line: int) -> None:
        def build(d: Path, b: Base) -> tuple[list[str], str]:
            c, r = pair(d, b)
            return _gate(c, r, "--rules", str(write(d / "gate.yaml", text))), f"{d / 'gate.yaml'}:{line}"

        case(f"s29f-gate/yaml-{name}", build)

    rules("slices-a-typo", "slices: [overall, domian]\n", 1)
    rules(
        "measure-given-twice",
        "measures:\n  bbnli_bias_score:\n    margin: 1\n  bbnli_bias_score:\n    margin: 5\n",
        4,
    )
    rules("slices-a-bare-string", "slices: overall\n", 1)
    rules("measure-indented-with-a-tab", "measures:\n\tbbnli_bias_score:\n\t\tmargin: 1\n", 2)
    rules(
        "measure-alias-under-an-unknown-name",
        "measures:\n  bbnli_bias_score: &r\n    margin: 1\n  bias: *r\n",
        4,
    )

    py = _py(case, "gate")
    py("rules-a-json-file-with-a-key-twice", lambda d: str(d / "rules.json"), lambda d, b: (
        lambda c, r: lambda: nlibias.gate(c, r, rules=write(d / "rules.json", '{"margin": 1, "margin": 9}\n')))(
        *pair(d, b)))  # fmt: skip
    py("samples-a-predictions-file", "samples", lambda d, b: (lambda c, r: lambda: nlibias.gate(
        c, r, samples=b.predictions))(*pair(d, b)))  # fmt: skip


# -- explain -------------------------------------------------------------------------------------------


def _explain_cases(case: Add) -> None:
    cli = _cli(case, "explain")

    def explain(*extra: str | Callable[[Path, Base], Path]) -> Build:
        def build(d: Path, b: Base) -> list[str]:
            run, _ = _generated_run(d, b)
            rest = [str(e(d, b)) if callable(e) else e for e in extra]
            return ["explain", str(run), "--bootstrap", "0", "--quiet", *rest]

        return build

    cli(
        "cache-a-validation-database",
        explain("--judge", "fake:j", "--cache", _annotations),
        "annotations.sqlite",
    )
    cli("samples-a-predictions-file", explain("--judge", "fake:j", "--no-cache", "--samples",
        lambda d, b: b.predictions), "--samples")  # fmt: skip
    cli("samples-another-subtopic-s", explain("--judge", "fake:j", "--no-cache", "--samples",
        lambda d, b: _other_samples(d)), _at("other/samples.jsonl"))  # fmt: skip
    cli("cache-the-run-s-manifest", explain("--judge", "fake:j", "--cache", lambda d, b: d / "G" / "manifest.json"),
        "--cache")  # fmt: skip

    py = _py(case, "explain")

    def call(**options: object) -> PyBuild:
        return lambda d, b: (lambda run: lambda: nlibias.explain(run, "fake:j", bootstrap=0, progress=False,
                                                                  **options))(_generated_run(d, b)[0])  # fmt: skip

    py("threshold-inf", "threshold", call(cache=False, threshold=float("inf")))
    py("cache-the-run-s-predictions", "cache", lambda d, b: (lambda run: lambda: nlibias.explain(
        run, "fake:j", cache=run / "predictions.jsonl", bootstrap=0, progress=False))(_generated_run(d, b)[0]))  # fmt: skip
    py("judges-an-empty-list", "judges", lambda d, b: (lambda run: lambda: nlibias.explain(
        run, [], cache=False, bootstrap=0, progress=False))(_generated_run(d, b)[0]))  # fmt: skip


def _other_samples(d: Path) -> Path:
    src = d / "other-src" / "gender"
    src.mkdir(parents=True)
    shutil.copy(bbnli_data() / "gender" / "woman_is_to_homemaker.json", src)
    nlibias.expand("bbnli", d / "other-src", out_dir=d / "other")
    return d / "other" / "samples.jsonl"


# -- export model-index and lm-eval ----------------------------------------------------------------------


def _export_cases(case: Add) -> None:
    cli = _cli(case, "export")

    def card_and_out(d: Path, b: Base) -> list[str]:
        card = write(d / "README.md", CARD)
        return _index(_run_copy(d, b), "--card", str(card), "--out", str(card))

    cli("model-index-card-and-out-one-file", card_and_out, "--out")
    cli("model-index-card-a-run-s-tables", lambda d, b: (lambda r: _index(r, "--card", str(r / "tables.txt")))(
        _run_copy(d, b)), _at("run/tables.txt"))  # fmt: skip
    cli("lm-eval-samples-a-run-s-explanations", lambda d, b: ["export", "lm-eval", "--samples",
        str(_explanations(d, b)), "--out", str(d / "lm")], "explanations.jsonl")  # fmt: skip
    cli("lm-eval-prompt-file-a-key-twice", lambda d, b: ["export", "lm-eval", "--samples", str(b.samples), "--out",
        str(d / "lm"), "--prompt", str(write(d / "p.yaml", "prompts:\n  - name: mine\n    template: 'P: {premise} H: {hypothesis}'\n"
        "    template: 'H: {hypothesis}'\n"))], _at("p.yaml:4"))  # fmt: skip

    def prompt(name: str, text: str, lm_eval: bool) -> None:
        """A second prompt style, refused naming its item's line (``p.yaml:4``) with its field."""

        def build(d: Path, b: Base) -> tuple[list[str], str]:
            path = write(
                d / "p.yaml", "prompts:\n  - name: a\n    template: 'P: {premise} H: {hypothesis}'\n" + text
            )
            if lm_eval:
                return [
                    "export",
                    "lm-eval",
                    "--samples",
                    str(b.samples),
                    "--out",
                    str(d / "lm"),
                    "--prompt",
                    str(path),
                ], f"{path}:4"
            return _gen(d, b, "--prompt", str(path)), f"{path}:4"

        case(f"s29f-{'export' if lm_eval else 'audit'}/yaml-prompt-{name}", build)

    prompt("second-template-blank", "  - name: b\n    template: ''\n", True)
    prompt(
        "second-template-an-unknown-placeholder",
        "  - name: b\n    template: 'P: {premise} H: {hypotesis}'\n",
        True,
    )
    prompt(
        "second-answers-a-bare-string",
        "  - name: b\n    template: 'Q: {premise} {hypothesis}'\n    answers: yes\n",
        False,
    )
    prompt("second-template-without-the-hypothesis", "  - name: b\n    template: 'Only {premise}'\n", False)

    py = _py(case, "export")
    py(
        "model-index-a-validation-run",
        lambda d: "vrun",
        lambda d, b: lambda: nlibias.model_index(_vrun(d, b)),
    )
    py("lm-eval-task-with-a-space", "task", lambda d, b: lambda: nlibias.export_lm_eval(
        b.samples, d / "lm", task="nlibias task"))  # fmt: skip
    py("lm-eval-out-dir-the-samples-jsonl", "out_dir", lambda d, b: lambda: nlibias.export_lm_eval(
        Path(shutil.copytree(b.samples, d / "s")), d / "s" / "samples.jsonl"))  # fmt: skip


# -- extend --------------------------------------------------------------------------------------------


def _extend_cases(case: Add) -> None:
    cli = _cli(case, "extend")
    cli("templates-a-samples-file", lambda d, b: extend_cli(d, b, "--templates", str(b.samples / "samples.jsonl")),
        "samples.jsonl")  # fmt: skip
    cli("subtopic-twice-in-other-case", lambda d, b: extend_cli(d, b, "--subtopic", "man_is_to_breadwinner",
        "--subtopic", "Man_is_to_breadwinner"), "--subtopic")  # fmt: skip
    cli("fill-cache-a-validation-database", lambda d, b: [*_swap_value(extend_cli(d, b)[:-3], "--until", "fill"),
        "--cache", str(_annotations(d, b)), "--subtopic", "man_is_to_breadwinner", "--no-progress"],
        "annotations.sqlite")  # fmt: skip

    def yaml(name: str, text: str, line: int) -> None:
        case(
            f"s29f-extend/yaml-{name}",
            lambda d, b: (extend_yaml(d, b, "source: BASE\n" + text), f"{d / 'config.yaml'}:{line}"),
        )

    yaml(
        "filter-policy-at-least-zero", "filter:\n  policy: {at_least: 0}\n", 2
    )  # named at the filter key's line
    yaml("filter-second-model-the-first-again", "filter:\n  models:\n  - fake:a\n  - fake:a\n", 5)
    yaml("mlm-top-k-a-float", "mlm:\n  top_k: 1e3\n", 3)
    yaml("validation-unvalidated-a-quoted-no", "validation:\n  unvalidated: 'no'\n", 3)
    yaml("filter-max-tokens-nan", "filter:\n  max_tokens: .nan\n", 3)

    py = _py(case, "extend")

    def extend(**kw: object) -> PyBuild:
        return lambda d, b: lambda: nlibias.extend(source=bbnli_data(), out_dir=d / "next", fill_model="fake",
                                                   progress=False, cache=d / "c.sqlite", **kw)  # fmt: skip

    py("from-stage-after-until", "from_stage", extend(until="masks", from_stage="export"))


# -- masks ---------------------------------------------------------------------------------------------


def _masks_cases(case: Add) -> None:
    cli = _cli(case, "masks")
    cli("list-one-subtopic-twice", lambda d, b: ["masks", "list", "--subtopic", "man_is_to_breadwinner",
        "--subtopic", "man_is_to_breadwinner"], "--subtopic")  # fmt: skip
    cli("validate-a-subtopic-the-source-lacks", lambda d, b: ["masks", "validate", str(templates_file(d, json.dumps(
        {"subtopic": "woman_is_to_homemaker", "template": 0, "masked": "{{GROUP1}} are the <mask>.",
         "strategy": "replace_placeholder"}) + "\n")), "--source", str(b.bbnli_dir)], _at("templates.jsonl"))  # fmt: skip
    cli("derive-subtopic-blank", lambda d, b: ["masks", "derive", "--source", str(b.bbnli_dir), "--subtopic", ""],
        "--subtopic")  # fmt: skip
    cli("derive-stopwords-a-predictions-file", lambda d, b: ["masks", "derive", "--source", str(b.bbnli_dir),
        "--stopwords", str(b.predictions)], "predictions.jsonl")  # fmt: skip
    cli("list-templates-a-gate-junit-file", lambda d, b: ["masks", "list", "--templates", str(_junit(d))],
        _at("gate.xml"))  # fmt: skip


# -- validate ------------------------------------------------------------------------------------------


def _validate_cases(case: Add) -> None:
    cli = _cli(case, "validate")
    hid = QUEUE_ROWS[0][0]

    def import_file(text: str, *extra: str) -> Build:
        return lambda d, b: ["validate", "import", str(_vrun(d, b)), str(write(d / "j.csv", text)), *extra]

    head = "hypothesis_id,annotator,judgement,stereotype\n"
    cli("import-second-row-the-first-with-another-judgement",
        import_file(f"{head}{hid},ann,valid,pro\n{hid},ann,invalid,\n"), _at("j.csv:3"))  # fmt: skip
    cli("import-a-csv-as-label-studio", import_file(f"{head}{hid},ann,valid,pro\n", "--format", "label-studio"),
        _at("j.csv"))  # fmt: skip
    cli("import-a-run-s-predictions", lambda d, b: ["validate", "import", str(_vrun(d, b)), str(b.predictions)],
        "predictions.jsonl")  # fmt: skip
    cli("export-out-the-run-s-queue", lambda d, b: (lambda r: ["validate", "export", str(r), "--out",
        str(r / "validation" / "queue.csv")])(_vrun(d, b)), _at("vrun/validation/queue.csv"))  # fmt: skip
    cli("prescreen-cache-the-run-s-annotations", lambda d, b: (lambda a: ["validate", "prescreen", str(a.parent.parent),
        "--judge", "fake:j", "--cache", str(a), "--quiet"])(_annotations(d, b)), "annotations.sqlite")  # fmt: skip

    py = _py(case, "validate")
    py("import-a-csv-as-argilla", lambda d: str(d / "j.csv"), lambda d, b: lambda: nlibias.validation_import(
        _vrun(d, b), write(d / "j.csv", f"{head}{hid},ann,valid,pro\n"), fmt="argilla"))  # fmt: skip
    py("export-out-the-run-s-queue", "out", lambda d, b: (lambda r: lambda: nlibias.validation_export(
        r, out=r / "validation" / "queue.csv"))(_vrun(d, b)))  # fmt: skip


# -- augment, finetune, debias -------------------------------------------------------------------------


def _training_cases(case: Add) -> None:
    cli = _cli(case, "augment")
    cli("out-the-folder-holding-the-train-file", lambda d, b: ["augment", "gender-swap", "--train",
        str(_training(d / "data")), "--out", str(d / "data")], "--out")  # fmt: skip
    cli("train-a-csv-with-the-label-column-twice", lambda d, b: ["augment", "gender-swap", "--train", str(write(
        d / "t.csv", "premise,hypothesis,label,label\nHe left.,He left.,entailment,neutral\n")), "--out",
        str(d / "aug")], _at("t.csv"))  # fmt: skip
    cli("word-list-a-bbnli-source-file", lambda d, b: _augment(d, "--word-list",
        str(b.bbnli_dir / "gender" / "man_is_to_breadwinner.json")), "man_is_to_breadwinner.json")  # fmt: skip

    py = _py(case, "augment")
    py("split-on-a-file", "split", lambda d, b: lambda: nlibias.augment(
        _training(d / "data"), d / "aug", split="validation", progress=False))  # fmt: skip
    py("select-capitalised", "select", lambda d, b: lambda: nlibias.augment(
        _training(d / "data"), d / "aug", select="Occupation", progress=False))  # fmt: skip

    cli = _cli(case, "finetune")
    cli("eval-the-train-file", lambda d, b: _finetune(d, "--eval", str(d / "data" / "train.jsonl"), model=str(_tiny(b))), "--eval")  # fmt: skip
    cli(
        "eval-split-without-eval",
        lambda d, b: _finetune(d, "--eval-split", "dev", model=str(_tiny(b))),
        "--eval-split",
    )
    cli("split-on-a-file", lambda d, b: _finetune(d, "--split", "test"), "--split")
    cli("train-a-samples-file", lambda d, b: ["finetune", "--model", str(_model_dir(d, CLASSIFIER)), "--train",
        str(b.samples / "samples.jsonl"), "--out", str(d / "ft")], "samples.jsonl")  # fmt: skip

    py = _py(case, "finetune")
    py("lr-scheduler-capitalised", "lr_scheduler", lambda d, b: lambda: nlibias.finetune(
        str(_model_dir(d, CLASSIFIER)), _training(d / "data"), d / "ft", lr_scheduler="Cosine"))  # fmt: skip
    py("eval-path-a-predictions-file", lambda d: "predictions.jsonl", lambda d, b: lambda: nlibias.finetune(
        str(_model_dir(d, CLASSIFIER)), _training(d / "data"), d / "ft", eval_path=b.predictions))  # fmt: skip

    cli = _cli(case, "debias")
    cli("premises-a-bbnli-source-file", lambda d, b: _debias(d, "--premises", str(
        b.bbnli_dir / "gender" / "man_is_to_breadwinner.json"), model=str(_tiny(b))), "man_is_to_breadwinner.json")  # fmt: skip
    cli("match-with-select-all", lambda d, b: _debias(d, "--select", "all", "--match", "paper"), "--match")

    py = _py(case, "debias")
    py("augment-options-a-misspelt-key", "selct", lambda d, b: lambda: nlibias.debias_models(
        str(_model_dir(d, CLASSIFIER)), _training(d / "data"), d / "deb", augment_options={"selct": "all"},
        progress=False))  # fmt: skip
    py("audit-options-a-misspelt-key", "bootstap", lambda d, b: lambda: nlibias.debias_models(
        str(_model_dir(d, CLASSIFIER)), _training(d / "data"), d / "deb", audit_options={"bootstap": 0},
        progress=False))  # fmt: skip


# -- demo, doctor, schema, benchmarks ------------------------------------------------------------------


def _small_commands_cases(case: Add) -> None:
    cli = _cli(case, "demo")
    cli("cache-a-validation-database", lambda d, b: ["demo", "--out", str(d / "demo"), "--pairs", "1",
        "--cache", str(_annotations(d, b)), "--bootstrap", "0", "--quiet"], "annotations.sqlite")  # fmt: skip
    py = _py(case, "demo")
    py("cache-the-samples-jsonl", "cache", lambda d, b: lambda: nlibias.demo(
        d / "demo", pairs=1, bootstrap=0, progress=False,
        cache=Path(shutil.copytree(b.samples, d / "s")) / "samples.jsonl"))  # fmt: skip

    def doctor(
        name: str, variable: str, rel: str, make: Callable[[Path, Base], object], expect: str = "warn"
    ) -> None:
        def build(d: Path, b: Base) -> tuple[list[str], str]:
            make(d, b)
            return ["doctor", "--quiet"], str(d / rel) if rel else variable

        case(
            f"s29f-doctor/cli-{name}",
            build,
            expect,
            env=lambda d: {variable: str(d / rel) if rel else "maybe"},
        )

    doctor(
        "cache-a-samples-jsonl",
        "NLIBIAS_CACHE",
        "s/samples.jsonl",
        lambda d, b: shutil.copytree(b.samples, d / "s"),
    )
    doctor("allow-modified-data-a-word", "NLIBIAS_ALLOW_MODIFIED_DATA", "", lambda d, b: None)

    cli = _cli(case, "schema")
    cli("name-capitalised", lambda d, b: ["schema", "Metrics"], "Metrics")
    cli("name-a-file-name", lambda d, b: ["schema", "metrics.json"], "metrics.json")

    cli = _cli(case, "benchmarks")
    py = _py(case, "benchmarks")
    py(
        "register-a-benchmark-that-is-a-string",
        "benchmark",
        lambda d, b: lambda: nlibias.register_benchmark("bbnli"),
    )


def s29f_cases() -> list[object]:
    return cases_of(
        [
            _expand_cases,
            _audit_cases,
            _score_cases,
            _report_cases,
            _gate_cases,
            _explain_cases,
            _export_cases,
            _extend_cases,
            _masks_cases,
            _validate_cases,
            _training_cases,
            _small_commands_cases,
        ],
        KNOWN,
    )
