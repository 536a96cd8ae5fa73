"""Session 29, finder s29e: the decision and reading side (gate, report, explain, export
model-index, validate, extend's later stages, demo, doctor) on inputs no earlier case touched: files
of one kind given as another (a card or a JUnit file as rules, a samples file as a card, a run's own
queue as judgements), derived files replaced by another run's, the second item of a list, Python
options misspelt or of the wrong type, and settings that make a number or a decision meaningless
while exiting 0. Part of the corpus of ``bad_input_cases``; none repeats an earlier case."""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Callable
from pathlib import Path

import nlibias
from bad_input_cases_explain import _generated_run
from bad_input_cases_s26 import _gate, _run_copy
from bad_input_cases_s27 import _vrun
from bad_input_cases_s28c_more import QUEUE_HEADER, Add, extend_cli, extend_yaml, pair, write
from bad_input_corpus import QUEUE_ROWS, Base, cases_of, invoke

KNOWN: dict[str, str] = {}

Build = Callable[[Path, Base], list[str]]
PyBuild = Callable[[Path, Base], Callable[[], object]]
Named = str | Callable[[Path], str]


def _cli(case: Add, group: str) -> Callable[..., None]:
    def add(name: str, args: Build, named: Named, expect: str = "error", **kw: object) -> None:
        def build(d: Path, b: Base) -> tuple[list[str], str]:
            built = args(d, b)
            return built, named(d) if callable(named) else named

        case(f"s29e-{group}/cli-{name}", build, expect, **kw)

    return add


def _py(case: Add, group: str) -> Callable[..., None]:
    def add(name: str, named: Named, call: PyBuild, expect: str = "error") -> None:
        def build(d: Path, b: Base) -> tuple[Callable[[], object], str]:
            return call(d, b), named(d) if callable(named) else named

        case(f"s29e-{group}/python-{name}", build, expect)

    return add


def _samples_of(run: Path) -> Path:
    return Path(json.loads((run / "manifest.json").read_text())["inputs"]["samples"]["path"])


def _audit(d: Path, b: Base, name: str, *models: str) -> Path:
    """A run of the fake classifiers ``models`` over the base samples."""
    args = ["audit", "--samples", str(b.samples), "--out", str(d / name), "--bootstrap", "0"]
    for model in models:
        args += ["--model", model]
    code, text, error = invoke([*args, "--no-cache", "--quiet"])
    assert code == 0 and error is None, text
    return d / name


def _explained(d: Path, b: Base) -> Path:
    run, _ = _generated_run(d, b)
    nlibias.explain(run, "fake:j", cache=False, bootstrap=0, progress=False)
    return run


def _judged_vrun(d: Path, b: Base) -> Path:
    """The validation run with two annotators' judgements of every queued hypothesis."""
    run = _vrun(d, b)
    rows = "".join(f"{row[0]},{who},valid,pro\n" for row in QUEUE_ROWS for who in ("ann", "bob"))
    path = write(d / "judged.csv", "hypothesis_id,annotator,judgement,stereotype\n" + rows)
    code, text, error = invoke(["validate", "import", str(run), str(path), "--quiet"])
    assert code == 0 and error is None, text
    return run


def _in(folder: Path, call: Callable[[], object]) -> Callable[[], object]:
    """``call`` run with ``folder`` as the working directory (a relative path it writes lands there)."""

    def run() -> object:
        before = Path.cwd()
        os.chdir(folder)
        try:
            return call()
        finally:
            os.chdir(before)

    return run


def _bumped(tree: object, done: list[bool] | None = None) -> object:
    """``tree`` with its first score (a float) 10 points higher, as a hand edit would leave it."""
    done = [False] if done is None else done
    if isinstance(tree, dict):
        return {k: _bumped(v, done) for k, v in tree.items()}
    if isinstance(tree, list):
        return [_bumped(v, done) for v in tree]
    if isinstance(tree, float) and not done[0]:
        done[0] = True
        return tree + 10.0
    return tree


def _index(run: Path, *extra: str) -> list[str]:
    return ["export", "model-index", str(run), *extra]


CARD = "---\nlicense: mit\nmodel-index:\n- name: org/m\n  results: []\n---\n# org/m\n"


# -- the gate: outputs, rules files of another kind, runs edited between commands ------------------


def _gate_cases(case: Add) -> None:
    cli = _cli(case, "gate")

    def gate_extra(*extra: str) -> Build:
        return lambda d, b: _gate(*pair(d, b), *[e.replace("D/", f"{d}/") for e in extra])

    cli("junit-blank", gate_extra("--junit", ""), "--junit")
    cli("markdown-blank", gate_extra("--markdown", ""), "--markdown")
    cli("junit-a-folder-spelling-with-a-trailing-slash", gate_extra("--junit", "D/reports/"), "--junit")

    def markdown_recorded_samples(d: Path, b: Base) -> list[str]:
        cand, ref = pair(d, b)
        return _gate(cand, ref, "--markdown", str(_samples_of(cand)))

    cli("markdown-the-samples-file-the-runs-record", markdown_recorded_samples, lambda d: "samples.jsonl")

    def junit_hard_link(d: Path, b: Base) -> list[str]:
        cand, ref = pair(d, b)
        os.link(ref / "predictions.jsonl", d / "gate.xml")
        return _gate(cand, ref, "--junit", str(d / "gate.xml"))

    cli("junit-a-hard-link-to-the-baseline-s-predictions", junit_hard_link, lambda d: str(d / "gate.xml"))

    def same_file_dot(d: Path, b: Base) -> list[str]:
        cand, ref = pair(d, b)
        return _gate(cand, ref, "--junit", str(d / "gate.out"), "--markdown", f"{d}/./gate.out")

    cli("junit-and-markdown-one-file-spelt-with-a-dot", same_file_dot, "--markdown")

    def rules_file(text: str, name: str = "rules.yaml") -> Build:
        def build(d: Path, b: Base) -> list[str]:
            cand, ref = pair(d, b)
            return _gate(cand, ref, "--rules", str(write(d / name, text)))

        return build

    cli("rules-a-model-card", rules_file(CARD, "README.md"), lambda d: str(d / "README.md"))
    junit = '<?xml version="1.0"?>\n<testsuites><testsuite name="m" tests="1"/></testsuites>\n'
    cli("rules-a-junit-file-of-an-earlier-gate", rules_file(junit, "gate.xml"), lambda d: str(d / "gate.xml"))

    def rules_manifest(d: Path, b: Base) -> list[str]:
        cand, ref = pair(d, b)
        return _gate(cand, ref, "--rules", str(ref / "manifest.json"))

    cli("rules-the-baseline-s-manifest", rules_manifest, lambda d: str(d / "ref" / "manifest.json"))

    def rules_line(text: str, line: int) -> tuple[Build, Named]:
        return rules_file(text, "gate.yaml"), lambda d: f"{d / 'gate.yaml'}:{line}"

    for name, text, line in (
        ("measure-slices-an-empty-list", "measures:\n  bbnli_bias_score:\n    slices: []\n", 3),
        ("measure-a-null-rule", "measures:\n  bbnli_bias_score:\n", 2),
        ("max-detectable-inf", "max_detectable: .inf\n", 1),
        ("seed-beyond-64-bits", "seed: 123456789012345678901234567890\n", 1),
        ("bootstrap-a-list", "bootstrap: [1000]\n", 1),
        ("margin-a-decimal-comma", "margin: 0,5\n", 1),
        ("measure-max-abs-a-decimal-comma", "measures:\n  bbnli_bias_score:\n    max_abs: 5,0\n", 3),
        ("measure-max-detectable-a-boolean", "measures:\n  bbnli_bias_score:\n    max_detectable: yes\n", 3),
        ("slices-a-null-item", "slices: [overall, null]\n", 1),
        ("confidence-a-fraction", "confidence: 19/20\n", 1),
    ):
        built, where = rules_line(text, line)
        case(f"s29e-gate/yaml-{name}", lambda d, b, built=built, where=where: (built(d, b), where(d)))

    cli("pair-without-an-equals-sign", gate_extra("--pair", "m"), "--pair")
    cli("pair-an-empty-candidate", gate_extra("--pair", "=m"), "--pair")
    cli("pair-three-sides", gate_extra("--pair", "m=m=m"), "--pair")

    def second_model_unpaired(d: Path, b: Base) -> list[str]:
        return _gate(_audit(d, b, "cand", "fake:m", "fake:cand2"), _run_copy(d, b, "ref"))

    cli("candidate-s-second-model-without-a-baseline", second_model_unpaired, "cand2")

    def ambiguous_baseline(d: Path, b: Base) -> list[str]:
        return _gate(_audit(d, b, "cand", "fake:x"), _audit(d, b, "ref", "fake:m", "fake:n"))

    cli("one-candidate-two-baseline-models-no-key-in-common", ambiguous_baseline, "--pair")

    def baseline_last_row_twice(d: Path, b: Base) -> list[str]:
        cand, ref = pair(d, b)
        path = ref / "predictions.jsonl"
        lines = path.read_text().splitlines()
        path.write_text("\n".join([*lines, lines[-1]]) + "\n")
        return _gate(cand, ref)

    cli(
        "baseline-predictions-last-row-twice",
        baseline_last_row_twice,
        lambda d: str(d / "ref" / "manifest.json"),
    )

    def baseline_last_row_cut(d: Path, b: Base) -> list[str]:
        cand, ref = pair(d, b)
        path = ref / "predictions.jsonl"
        text = path.read_text()
        path.write_text(text[: len(text) - 40])
        return _gate(cand, ref)

    cli(
        "baseline-predictions-last-row-cut",
        baseline_last_row_cut,
        lambda d: str(d / "ref" / "manifest.json"),
    )

    def foreign_metrics(d: Path, b: Base) -> list[str]:
        cand, ref = pair(d, b)
        run, _ = _generated_run(d, b)
        shutil.copy(run / "metrics.json", cand / "metrics.json")
        return _gate(cand, ref)

    cli("candidate-metrics-another-run-s", foreign_metrics, lambda d: str(d / "cand" / "manifest.json"))

    def metrics_value_edited(d: Path, b: Base) -> list[str]:
        cand, ref = pair(d, b)
        path = ref / "metrics.json"
        path.write_text(json.dumps(_bumped(json.loads(path.read_text())), indent=2))
        return _gate(cand, ref)

    cli("baseline-metrics-edited-by-hand", metrics_value_edited, lambda d: str(d / "ref" / "metrics.json"))

    cli("candidate-a-validation-run", lambda d, b: _gate(_vrun(d, b), _run_copy(d, b, "ref")),
        lambda d: str(d / "vrun"))  # fmt: skip

    py = _py(case, "gate")
    py("pairs-a-value-an-int", "pairs", lambda d, b: (lambda c, r: lambda: nlibias.gate(c, r, pairs={"m": 5}))(*pair(d, b)))  # fmt: skip
    py("rules-yaml-text-instead-of-a-path", "rules",
       lambda d, b: (lambda c, r: lambda: nlibias.gate(c, r, rules="margin: 1\n"))(*pair(d, b)))  # fmt: skip
    py(
        "no-baseline-and-no-rules",
        "baseline",
        lambda d, b: (lambda c: lambda: nlibias.gate(c))(_run_copy(d, b, "c")),
    )
    py("samples-a-list-of-paths", "samples",
       lambda d, b: (lambda c, r: lambda: nlibias.gate(c, r, samples=[b.samples]))(*pair(d, b)))  # fmt: skip
    py("rules-a-path-to-a-folder-of-rules", "rules",
       lambda d, b: (lambda c, r: lambda: nlibias.gate(c, r, rules=d))(*pair(d, b)))  # fmt: skip
    py("candidate-and-baseline-one-run-given-as-str-and-path", "baseline",
       lambda d, b: (lambda c: lambda: nlibias.gate(str(c), Path(f"{c}/.")))(_run_copy(d, b, "c")))  # fmt: skip


# -- report: outputs onto inputs, foreign or edited files, things not comparable --------------------


def _report_cases(case: Add) -> None:
    cli = _cli(case, "report")

    def out_recorded_samples(d: Path, b: Base) -> list[str]:
        run = _run_copy(d, b)
        return ["report", str(run), "--format", "md", "--out", str(_samples_of(run))]

    cli("md-out-the-samples-file-the-run-records", out_recorded_samples, "samples.jsonl")

    def out_explanations(d: Path, b: Base) -> list[str]:
        run = _explained(d, b)
        return ["report", str(run), "--no-plots", "--out", str(run / "explanations" / "explanations.jsonl")]

    cli(
        "html-out-the-run-s-explanations",
        out_explanations,
        lambda d: str(d / "G" / "explanations" / "explanations.jsonl"),
    )

    cli("format-upper-case", lambda d, b: ["report", str(b.run), "--format", "MD"], "--format")

    def compare_classifier_generative(d: Path, b: Base) -> list[str]:
        run, _ = _generated_run(d, b)
        return ["report", str(_run_copy(d, b)), str(run), "--compare", "--format", "md"]

    cli("compare-a-classifier-and-a-generative-run", compare_classifier_generative, lambda d: str(d / "G"))

    def compare_predictions_cut(d: Path, b: Base) -> list[str]:
        first, second = pair(d, b)
        path = second / "predictions.jsonl"
        text = path.read_text()
        path.write_text(text[: len(text) - 30])
        return ["report", str(first), str(second), "--compare", "--format", "md"]

    cli(
        "compare-second-run-s-predictions-cut",
        compare_predictions_cut,
        lambda d: str(d / "ref" / "manifest.json"),
    )

    def compare_samples_edited(d: Path, b: Base) -> list[str]:
        samples = Path(shutil.copytree(b.samples, d / "s"))
        first = [
            "audit",
            "--samples",
            str(samples / "samples.jsonl"),
            "--model",
            "fake:m",
            "--bootstrap",
            "0",
        ]
        for name in ("one", "two"):
            code, text, _ = invoke([*first, "--out", str(d / name), "--no-cache", "--quiet"])
            assert code == 0, text
        path = samples / "samples.jsonl"
        lines = path.read_text().splitlines()
        row = json.loads(lines[0])
        row["hypothesis"] = "Nobody is the main breadwinner."
        path.write_text("\n".join([json.dumps(row), *lines[1:]]) + "\n")
        return ["report", str(d / "one"), str(d / "two"), "--compare", "--format", "md"]

    cli(
        "compare-samples-edited-after-both-audits",
        compare_samples_edited,
        lambda d: str(d / "s" / "samples.jsonl"),
    )

    def foreign_metrics(d: Path, b: Base) -> list[str]:
        run = _run_copy(d, b)
        other = _audit(d, b, "other", "fake:other")
        shutil.copy(other / "metrics.json", run / "metrics.json")
        return ["report", str(run), "--format", "latex"]

    cli("latex-metrics-another-run-s", foreign_metrics, lambda d: str(d / "run" / "manifest.json"))

    def metrics_edited(d: Path, b: Base) -> list[str]:
        run = _run_copy(d, b)
        path = run / "metrics.json"
        path.write_text(json.dumps(_bumped(json.loads(path.read_text())), indent=2))
        return ["report", str(run), "--format", "csv"]

    cli("csv-metrics-changed-since-the-manifest", metrics_edited, lambda d: str(d / "run" / "metrics.json"))

    def explanations_cut(d: Path, b: Base) -> list[str]:
        run = _explained(d, b)
        path = run / "explanations" / "explanations.jsonl"
        text = path.read_text()
        path.write_text(text[: len(text) // 2])
        return ["report", str(run), "--no-plots", "--out", str(d / "r.html")]

    cli(  # the audit's report stands; its explanations are left out, said as a warning naming the file
        "html-explanations-cut-mid-line",
        explanations_cut,
        lambda d: str(d / "G" / "explanations" / "explanations.jsonl"),
        expect="warn",
    )

    def json_with_out_html(d: Path, b: Base) -> list[str]:
        return [
            "report",
            str(_run_copy(d, b)),
            "--json",
            "--no-plots",
            "--out",
            str(d / "r.html"),
            "--format",
            "html",
        ]

    cli("format-html-spelt-out", json_with_out_html, "--format")

    py = _py(case, "report")
    py("compare-a-classifier-and-a-generative-run", lambda d: str(d / "G"), lambda d, b: (
        lambda g: lambda: nlibias.make_report([_run_copy(d, b), g], compare=True, fmt="md"))(_generated_run(d, b)[0]))  # fmt: skip
    py("runs-a-set", "runs", lambda d, b: lambda: nlibias.make_report({_run_copy(d, b)}, fmt="md"))
    py("fmt-with-a-dot", "fmt", lambda d, b: lambda: nlibias.make_report([b.run], fmt=".md"))
    py(
        "out-a-folder-that-exists",
        "out",
        lambda d, b: lambda: nlibias.make_report([_run_copy(d, b)], out=d, plots=False),
    )
    py("pairs-a-string-without-debias", "pairs",
       lambda d, b: lambda: nlibias.make_report([b.run], fmt="md", pairs="m=m"))  # fmt: skip
    py("debias-a-string", "debias", lambda d, b: lambda: nlibias.make_report([b.run], debias="no"))


# -- explain: judges, thresholds, options misspelt, reruns -----------------------------------------


def _explain_cases(case: Add) -> None:
    cli = _cli(case, "explain")

    def explain(*extra: str) -> Build:
        def build(d: Path, b: Base) -> list[str]:
            run, samples = _generated_run(d, b)
            args = [
                "explain",
                str(run),
                *([] if "--cache" in extra else ["--no-cache"]),
                "--bootstrap",
                "0",
                "--quiet",
            ]
            return [
                *args,
                *[
                    e.replace("RUN", str(run)).replace("SAMPLES", str(samples)).replace("D/", f"{d}/")
                    for e in extra
                ],
            ]

        return build

    cli("judge-the-run-directory-itself", explain("--judge", "RUN"), lambda d: str(d / "G"))
    cli("judge-a-samples-file", explain("--judge", "SAMPLES"), lambda d: str(d / "samples" / "samples.jsonl"))
    cli("second-judge-blank", explain("--judge", "fake:j", "--judge", ""), "--judge")
    cli("cache-a-folder", explain("--judge", "fake:j", "--cache", "D/"), "--cache")
    cli("samples-blank", explain("--judge", "fake:j", "--samples", ""), "--samples")
    cli("run-given-as-its-predictions-file", lambda d, b: [
        "explain", str(_generated_run(d, b)[0] / "predictions.jsonl"), "--judge", "fake:j", "--no-cache"],
        lambda d: str(d / "G" / "predictions.jsonl"))  # fmt: skip

    def rerun_other_threshold_summary_edited(d: Path, b: Base) -> list[str]:
        run = _explained(d, b)
        path = run / "explanations" / "explanations.json"
        summary = json.loads(path.read_text())
        summary["threshold"] = 0.9
        path.write_text(json.dumps(summary))
        return ["explain", str(run), "--judge", "fake:j", "--no-cache", "--bootstrap", "0"]

    cli("rerun-summary-edited-by-hand", rerun_other_threshold_summary_edited,
        lambda d: "explanations/explanations.json", expect="warn")  # fmt: skip

    def rerun_rows_last_dup(d: Path, b: Base) -> list[str]:
        run = _explained(d, b)
        path = run / "explanations" / "explanations.jsonl"
        lines = path.read_text().splitlines()
        path.write_text("\n".join([*lines, lines[-1]]) + "\n")
        return ["explain", str(run), "--judge", "fake:j", "--no-cache", "--bootstrap", "0"]

    cli("rerun-rows-last-row-twice", rerun_rows_last_dup,
        lambda d: "explanations/explanations.jsonl", expect="warn")  # fmt: skip
    cli("threshold-a-percent", explain("--judge", "fake:j", "--threshold", "50"), "--threshold")
    cli("lm-judge-blank", explain("--judge", "fake:j", "--lm-judge", ""), "--lm-judge")

    py = _py(case, "explain")

    def call(**options: object) -> PyBuild:
        return lambda d, b: (lambda run: lambda: nlibias.explain(run, "fake:j", cache=False, bootstrap=0,
                                                                  progress=False, **options))(_generated_run(d, b)[0])  # fmt: skip

    py("threshold-misspelt", "thresold", call(thresold=0.3))
    py("progress-a-string", "progress", lambda d, b: (lambda run: lambda: nlibias.explain(
        run, "fake:j", cache=False, bootstrap=0, progress="no"))(_generated_run(d, b)[0]))  # fmt: skip
    py(
        "lm-judge-max-new-tokens-true",
        "lm_judge_max_new_tokens",
        call(lm_judge="fake:g", lm_judge_max_new_tokens=True),
    )
    py("max-tokens-fractional", "max_tokens", call(max_tokens=1.5))
    py("one-judge-twice", "judges", lambda d, b: (lambda run: lambda: nlibias.explain(
        run, ["fake:j", "fake:j"], cache=False, bootstrap=0, progress=False))(_generated_run(d, b)[0]))  # fmt: skip
    py("judges-a-tuple-of-a-list", "judges", lambda d, b: (lambda run: lambda: nlibias.explain(
        run, (["fake:j"],), cache=False, bootstrap=0, progress=False))(_generated_run(d, b)[0]))  # fmt: skip
    py("samples-the-run-folder", "samples", lambda d, b: (lambda run: lambda: nlibias.explain(
        run, "fake:j", samples=run, cache=False, bootstrap=0, progress=False))(_generated_run(d, b)[0]))  # fmt: skip
    py("cache-a-string-yes", "cache", lambda d, b: (lambda run: _in(d, lambda: nlibias.explain(
        run, "fake:j", cache="yes", bootstrap=0, progress=False)))(_generated_run(d, b)[0]))  # fmt: skip


# -- export model-index and cards -------------------------------------------------------------------


def _index_cases(case: Add) -> None:
    cli = _cli(case, "model-index")

    def out_recorded_samples(d: Path, b: Base) -> list[str]:
        run = _run_copy(d, b)
        return _index(run, "--out", str(_samples_of(run)))

    cli("out-the-samples-file-the-run-records", out_recorded_samples, "samples.jsonl")

    def card_is_samples(d: Path, b: Base) -> list[str]:
        run = _run_copy(d, b)
        samples = Path(shutil.copytree(b.samples, d / "s")) / "samples.jsonl"
        return _index(run, "--card", str(samples))

    cli("card-a-samples-file", card_is_samples, lambda d: str(d / "s" / "samples.jsonl"))

    def card(text: str) -> Build:
        return lambda d, b: _index(_run_copy(d, b), "--card", str(write(d / "README.md", text)))

    two = "---\nmodel-index:\n- name: org/a\n  results: []\n- name: org/b\n  results: []\n---\n# card\n"
    cli("card-model-index-two-models", card(two), lambda d: str(d / "README.md"))
    results = "---\nmodel-index:\n- name: org/m\n  results: none yet\n---\n# card\n"
    cli("card-results-a-string", card(results), lambda d: str(d / "README.md"))
    task = "---\nmodel-index:\n- name: org/m\n  results:\n  - task: text-classification\n---\n# card\n"
    cli("card-a-result-s-task-a-string", card(task), lambda d: str(d / "README.md"))
    cli("card-metadata-a-bare-string-after-a-comment", card("---\n# meta\njust text\n---\n# card\n"),
        lambda d: str(d / "README.md"))  # fmt: skip
    cli("name-a-hub-url", lambda d, b: _index(b.run, "--name", "https://huggingface.co/org/m"), "--name")
    cli("out-a-folder-spelling-with-a-trailing-slash",
        lambda d, b: _index(_run_copy(d, b), "--out", f"{d}/idx/"), "--out")  # fmt: skip

    def foreign_metrics(d: Path, b: Base) -> list[str]:
        run = _run_copy(d, b)
        other = _audit(d, b, "other", "fake:other")
        shutil.copy(other / "metrics.json", run / "metrics.json")
        return _index(run)

    cli("metrics-another-run-s", foreign_metrics, lambda d: str(d / "run" / "manifest.json"))

    def second_model(d: Path, b: Base) -> list[str]:
        return _index(_audit(d, b, "two", "fake:m", "fake:n"), "--card", str(write(d / "README.md", CARD)))

    cli("card-of-a-two-model-run-without-model", second_model, "--model")

    py = _py(case, "model-index")
    py("model-a-list", "model", lambda d, b: lambda: nlibias.model_index(b.run, model=["m"]))
    py("name-a-path", "name", lambda d, b: lambda: nlibias.model_index(b.run, name=Path("org/m")))
    py(
        "run-the-samples-file",
        lambda d: "samples",
        lambda d, b: lambda: nlibias.model_index(b.samples / "samples.jsonl"),
    )
    py(
        "model-a-blank-string-on-a-one-model-run",
        "model",
        lambda d, b: lambda: nlibias.model_index(b.run, model=""),
    )


# -- validate: app settings, import/export/resolve, annotators, the explanations queue --------------


def _validate_cases(case: Add) -> None:
    cli = _cli(case, "validate")

    def import_queue(d: Path, b: Base) -> list[str]:
        run = _vrun(d, b)
        copy = shutil.copy(run / "validation" / "queue.csv", d / "queue-copy.csv")
        return ["validate", "import", str(run), str(copy)]

    cli("import-the-run-s-own-queue", import_queue, lambda d: str(d / "queue-copy.csv"))

    def import_wrong_format(d: Path, b: Base) -> list[str]:
        run = _vrun(d, b)
        out = d / "ls.json"
        code, text, _ = invoke(
            ["validate", "export", str(run), "--format", "label-studio", "--out", str(out)]
        )
        assert code == 0, text
        return ["validate", "import", str(run), str(out), "--format", "argilla", "--annotator", "ann"]

    cli("import-a-label-studio-export-as-argilla", import_wrong_format, "--format")

    def import_with(annotator: str) -> Build:
        def build(d: Path, b: Base) -> list[str]:
            run = _vrun(d, b)
            path = write(d / "j.csv", f"hypothesis_id,judgement,stereotype\n{QUEUE_ROWS[0][0]},valid,pro\n")
            return ["validate", "import", str(run), str(path), "--annotator", annotator]

        return build

    cli("import-annotator-blank", import_with(""), "--annotator")
    cli("import-annotator-with-a-newline", import_with("ann\nbob"), "--annotator")
    cli("import-annotator-a-space", import_with(" "), "--annotator")
    cli("export-out-a-folder-spelling-with-a-trailing-slash",
        lambda d, b: ["validate", "export", str(_vrun(d, b)), "--out", f"{d}/exports/"], "--out")  # fmt: skip
    cli(
        "resolve-rule-misspelt",
        lambda d, b: ["validate", "resolve", str(_judged_vrun(d, b)), "--rule", "majorty"],
        "--rule",
    )
    # refused rather than warned of: the judgements file it wrote held no final label (and replaced any earlier one)
    cli("resolve-min-annotators-more-than-there-are",
        lambda d, b: ["validate", "resolve", str(_judged_vrun(d, b)), "--min-annotators", "3"], "--min-annotators")  # fmt: skip
    cli("status-exclude-every-annotator",
        lambda d, b: ["validate", "status", str(_judged_vrun(d, b)), "--exclude", "ann", "--exclude", "bob"],
        "--exclude")  # fmt: skip
    cli(
        "resolve-an-audit-run",
        lambda d, b: ["validate", "resolve", str(_run_copy(d, b))],
        lambda d: str(d / "run"),
    )

    def explanations(*extra: str) -> Build:
        return lambda d, b: ["validate", "explanations", str(_explained(d, b)), "--quiet", *extra]

    cli("explanations-judge-not-in-the-run", explanations("--judge", "fake:zz"), "--judge")
    cli("explanations-seed-negative", explanations("--seed", "-1"), "--seed")
    cli("explanations-judge-blank", explanations("--judge", ""), "--judge")

    def explanations_twice(d: Path, b: Base) -> list[str]:
        run = _explained(d, b)
        code, text, _ = invoke(["validate", "explanations", str(run), "--quiet", "--size", "2"])
        assert code == 0, text
        path = run / "explanations" / "explanations.jsonl"
        lines = path.read_text().splitlines()
        path.write_text("\n".join(lines[:-1]) + "\n")
        return ["validate", "explanations", str(run), "--quiet", "--size", "2", "--seed", "1"]

    cli("explanations-requeued-after-the-rows-were-cut", explanations_twice,
        lambda d: str(d / "G" / "explanations"))  # fmt: skip

    py = _py(case, "validate")
    py(
        "status-rule-capitalised",
        "rule",
        lambda d, b: lambda: nlibias.validation_status(_vrun(d, b), rule="Drop"),
    )
    py("resolve-min-annotators-true", "min_annotators",
       lambda d, b: lambda: nlibias.validation_resolve(_vrun(d, b), min_annotators=True))  # fmt: skip
    py("import-fmt-with-a-trailing-space", "fmt", lambda d, b: lambda: nlibias.validation_import(
        _vrun(d, b), write(d / "j.csv", QUEUE_HEADER[0] + "\n"), fmt="csv "))  # fmt: skip
    py("import-annotator-an-int", "annotator", lambda d, b: lambda: nlibias.validation_import(
        _vrun(d, b), write(d / "j.csv", f"hypothesis_id,judgement\n{QUEUE_ROWS[0][0]},valid\n"), annotator=5))  # fmt: skip
    py("prescreen-threshold-true", "threshold", lambda d, b: lambda: nlibias.validation_prescreen(
        _vrun(d, b), judge="fake:j", threshold=True, cache=d / "c.sqlite", progress=False))  # fmt: skip
    py("export-out-a-folder", "out", lambda d, b: lambda: nlibias.validation_export(_vrun(d, b), out=d))
    py("status-exclude-a-comma-list", "exclude",
       lambda d, b: lambda: nlibias.validation_status(_judged_vrun(d, b), exclude="ann,bob"))  # fmt: skip
    py("import-the-run-s-judgements-db", "file", lambda d, b: lambda: nlibias.validation_import(
        _judged_vrun(d, b), d / "vrun" / "validation" / "annotations.sqlite"))  # fmt: skip


# -- extend's later stages (filter, validation handoff), as flags, YAML and Python --------------------


def _extend_cases(case: Add) -> None:
    cli = _cli(case, "extend")
    cli("holdout-model-twice", lambda d, b: extend_cli(d, b, "--holdout-model", "fake:h", "--holdout-model", "fake:h"),
        "--holdout-model")  # fmt: skip
    cli("compare-fill-twice", lambda d, b: extend_cli(d, b, "--compare-fill", "fake:x", "--compare-fill", "fake:x"),
        "--compare-fill")  # fmt: skip
    cli("policy-at-least-fractional", lambda d, b: extend_cli(d, b, "--policy", "at_least:1.5"), "--policy")
    cli(
        "subtopic-with-a-leading-space",
        lambda d, b: extend_cli(d, b, "--subtopic", " man_is_to_breadwinner"),
        "--subtopic",
    )

    def yaml(name: str, text: str, line: int) -> None:
        case(
            f"s29e-extend/yaml-{name}",
            lambda d, b: (extend_yaml(d, b, "source: BASE\n" + text), f"{d / 'config.yaml'}:{line}"),
        )

    yaml("policy-at-least-fractional", "filter:\n  policy: {at_least: 1.5}\n", 3)
    yaml("pretty-name-blank", "pretty_name: ''\n", 2)
    yaml("holdout-one-model-twice", "filter:\n  holdout: ['fake:h', 'fake:h']\n", 3)
    yaml("compare-fills-one-model-twice", "filter:\n  compare_fills: ['fake:x', 'fake:x']\n", 3)
    yaml(
        "second-filter-model-revision-blank",
        "filter:\n  models:\n  - fake:a\n  - model: fake:b\n    revision: ''\n",
        6,
    )
    yaml(
        "second-filter-model-quantize-unknown",
        "filter:\n  models:\n  - fake:a\n  - model: fake:b\n    quantize: 3bit\n",
        5,
    )
    yaml("subtopics-second-with-a-trailing-space",
         "subtopics: [man_is_to_breadwinner, 'woman_is_to_homemaker ']\n", 2)  # fmt: skip

    py = _py(case, "extend")

    def extend(**kw: object) -> PyBuild:
        from bad_input_cases_s28c_more import bbnli_data

        return lambda d, b: lambda: nlibias.extend(source=bbnli_data(), out_dir=d / "next", fill_model="fake",
                                                   until="masks", progress=False, cache=d / "c.sqlite", **kw)  # fmt: skip

    py("policy-a-float", "policy", extend(policy=2.0))
    py("holdout-one-model-twice", "holdout", extend(holdout=["fake:h", "fake:h"]))
    py("subtopics-blank", "subtopics", extend(subtopics=""))
    py("unvalidated-a-string", "unvalidated", extend(unvalidated="yes"))
    py("top-k-a-string-number", "top_k", extend(top_k="5"))
    py("classifiers-a-set", "classifiers", extend(classifiers={"fake:a", "fake:b"}))


# -- demo and doctor ----------------------------------------------------------------------------------


def _demo_doctor_cases(case: Add) -> None:
    py = _py(case, "demo")
    py("pairs-true", "pairs", lambda d, b: lambda: nlibias.demo(d / "demo", pairs=True, progress=False))
    py("seed-true", "seed", lambda d, b: lambda: nlibias.demo(d / "demo", seed=True, pairs=1, progress=False))
    py("explain-a-string", "explain", lambda d, b: lambda: nlibias.demo(d / "demo", explain="yes", pairs=1))
    py("full-a-string", "full", lambda d, b: lambda: nlibias.demo(d / "demo", full="no", progress=False))

    cli = _cli(case, "demo")
    cli(
        "cache-blank",
        lambda d, b: ["demo", "--out", str(d / "demo"), "--cache", "", "--pairs", "1"],
        "--cache",
    )

    def doctor(variable: str, value: Callable[[Path], str]) -> Callable[..., None]:
        def add(name: str, named: str, expect: str = "warn") -> None:
            def build(d: Path, b: Base) -> tuple[list[str], str]:
                return ["doctor", "--quiet"], named.replace("D/", f"{d}/")

            case(f"s29e-doctor/cli-{name}", build, expect, env=lambda d: {variable: value(d)})

        return add

    doctor("NLIBIAS_DATA_DIR", lambda d: f"{d}/no-such-data")("data-dir-missing", "D/no-such-data")
    doctor("NLIBIAS_DATA_DIR", lambda d: str(write(d / "data.txt", "x")))("data-dir-a-file", "D/data.txt")
    doctor("NLIBIAS_MODEL_CACHE", lambda d: str(write(d / "models.txt", "x")))(
        "model-cache-a-file", "D/models.txt"
    )
    doctor("NLIBIAS_DEVICE", lambda d: "cuda:7")("device-a-gpu-that-is-not-there", "NLIBIAS_DEVICE", "error")


def s29e_cases() -> list[object]:
    return cases_of(
        [
            _gate_cases,
            _report_cases,
            _explain_cases,
            _index_cases,
            _validate_cases,
            _extend_cases,
            _demo_doctor_cases,
        ],
        KNOWN,
    )
