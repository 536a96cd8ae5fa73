"""Session 29's finder round s29a: the Python route first (a notebook user's own predictor and
``PredictorRun``, ``Sample`` objects built by hand, the result object's methods, the options
objects ``GateRules``/``ModelOptions``/``RunOptions`` built by hand, and the public functions'
less-trodden parameters), then the command line (a valid file of another kind where a command
reads one) and nested gate-rules YAML keys. Part of the corpus of ``bad_input_cases``; none repeats
an earlier case."""

from __future__ import annotations

import dataclasses
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

import nlibias
from bad_input_cases_s26 import _gate, _rules
from bad_input_cases_s27 import _vrun
from bad_input_cases_s28 import _run_copy
from bad_input_cases_s28c_more import Add, pair
from bad_input_corpus import Base, Case, audit_args, cases_of

KNOWN: dict[str, str] = {}

PyBuild = Callable[[Path, Base], Callable[[], object]]


def _py(case: Add, group: str) -> Callable[..., None]:
    def add(name: str, named: str, call: PyBuild, expect: str = "error") -> None:
        case(f"s29a-{group}/python-{name}", lambda d, b: (call(d, b), named), expect)

    return add


def _cli(case: Add, group: str) -> Callable[..., None]:
    def add(name: str, args: Callable[[Path, Base], list[str]], named: str | Callable[[Path], str]) -> None:
        def build(d: Path, b: Base) -> tuple[list[str], str]:
            built = args(d, b)
            return built, named(d) if callable(named) else named

        case(f"s29a-{group}/cli-{name}", build)

    return add


def _samples(b: Base) -> Any:
    return nlibias.expand("bbnli", b.bbnli_dir)


def _audit(samples: Any, *models: Any, **options: Any) -> Any:
    return nlibias.audit(samples, models=list(models), cache=False, bootstrap=0, progress=False, **options)


# -- a notebook user's own predictor (the Predictor contract, PredictorRun) -------------------------------


class _Own:
    """A predictor of the user's own: ``make(samples)`` is what its ``predict`` returns."""

    def __init__(self, make: Callable[[Any], Any], name: Any = "mine", kind: str = "classifier") -> None:
        self.make, self.name, self.kind = make, name, kind

    def describe(self) -> dict[str, str]:
        return {"model": "a notebook's own"}

    def predict(self, samples: Any, cache: Any, *, progress: bool = True) -> Any:
        return self.make(samples)


def _tile(row: list[float], model: str = "mine", **kw: Any) -> Callable[[Any], Any]:
    def make(s: Any) -> Any:
        return nlibias.PredictorRun.of_probabilities(model, s.columns.ids, np.tile(row, (len(s), 1)), **kw)

    return make


def _rows(label: Any, probs: Any = (0.1, 0.8, 0.1)) -> Callable[[Any], Any]:
    def make(s: Any) -> Any:
        rows = [nlibias.Prediction(i, "mine", label, probs) for i in s.columns.ids]
        return nlibias.PredictorRun.of_predictions(rows, "classifier", {})

    return make


def _predictor_cases(case: Add) -> None:
    py = _py(case, "predictor")

    def own(label: str, named: str, make: Callable[[Any], Any], **kw: Any) -> None:
        py(label, named, lambda d, b: lambda: _audit(_samples(b), _Own(make, **kw)))

    own("probs-nan", "probs", _tile([np.nan, 0.5, 0.5]))
    own("probs-inf", "probs", _tile([np.inf, 0.5, 0.5]))
    own("probs-sum-to-2", "probs", _tile([1.0, 0.9, 0.1]))
    own("probs-negative", "probs", _tile([-0.5, 1.0, 0.5]))
    own("probs-two-columns", "probs", _tile([0.5, 0.5]))
    own("probs-four-columns", "probs", _tile([0.25, 0.25, 0.25, 0.25]))
    own("one-row-short", "136 samples", lambda s: nlibias.PredictorRun.of_probabilities(
        "mine", s.columns.ids[:-1], np.tile([0.1, 0.8, 0.1], (len(s) - 1, 1))))  # fmt: skip
    own("rows-in-reverse-order", "order", lambda s: nlibias.PredictorRun.of_probabilities(
        "mine", list(s.columns.ids)[::-1], np.tile([0.1, 0.8, 0.1], (len(s), 1))))  # fmt: skip
    own("one-id-for-every-row", "order", lambda s: nlibias.PredictorRun.of_probabilities(
        "mine", [s.columns.ids[0]] * len(s), np.tile([0.1, 0.8, 0.1], (len(s), 1))))  # fmt: skip
    own("rows-under-another-name", "other", _tile([0.1, 0.8, 0.1], model="other"))
    own("predict-returns-none", "PredictorRun", lambda s: None)
    own("predict-returns-an-array", "PredictorRun", lambda s: np.tile([0.1, 0.8, 0.1], (len(s), 1)))
    own("kind-misspelt", "clasifier", _tile([0.1, 0.8, 0.1]), kind="clasifier")
    own("kind-generative-outputs-classifier", "generative", _tile([0.1, 0.8, 0.1]), kind="generative")
    own("name-empty", "name", _tile([0.1, 0.8, 0.1], model=""), name="")
    own("name-an-int", "name", _tile([0.1, 0.8, 0.1]), name=5)
    own("label-contradicts-probs", "label", _rows("entailment"))
    own("label-unknown-word", "label", _rows("maybe"))
    own("label-unknown-word-no-probs", "label", _rows("yes", None))
    own("stats-a-list", "stats", _tile([0.1, 0.8, 0.1], stats=[1, 2]))
    py("name-clashes-with-a-fake-model", "a", lambda d, b: lambda: _audit(
        _samples(b), _Own(_tile([0.1, 0.8, 0.1], model="a"), name="a"), "fake:a"))  # fmt: skip
    py("the-same-predictor-twice", "mine", lambda d, b: lambda: _audit(
        _samples(b), _Own(_tile([0.1, 0.8, 0.1])), _Own(_tile([0.1, 0.8, 0.1]))))  # fmt: skip


# -- Sample objects built by hand ------------------------------------------------------------------------


def _sample_objects_cases(case: Add) -> None:
    py = _py(case, "sample-objects")

    def first(name: str, named: str, **change: Any) -> None:
        def call(d: Path, b: Base) -> Callable[[], object]:
            samples = list(_samples(b))
            return lambda: _audit([dataclasses.replace(samples[0], **change), *samples[1:]], "fake:a")

        py(name, named, call)

    def last(name: str, named: str, **change: Any) -> None:
        def call(d: Path, b: Base) -> Callable[[], object]:
            samples = list(_samples(b))
            return lambda: _audit([*samples[:-1], dataclasses.replace(samples[-1], **change)], "fake:a")

        py(name, named, call)

    first("first-gold-unknown", "gold", gold="maybe")
    last("last-stereotype-unknown", "stereotype", stereotype="both")
    first("first-id-an-int", "id", id=5)
    last("last-id-an-int", "id", id=7)
    first("first-premise-none", "premise", premise=None)
    last("last-domain-none", "domain", domain=None)
    first("first-source-another-benchmark", "sources", source="wq-nli")
    first("first-pair-key-an-int", "pair_key", pair_key=3)
    py("a-sample-twice-at-the-end", "duplicate sample id", lambda d, b: (lambda s: lambda: _audit(
        [*s, s[5]], "fake:a"))(list(_samples(b))))  # fmt: skip
    py("every-source-unregistered", "mybench", lambda d, b: (lambda s: lambda: _audit(
        [dataclasses.replace(x, source="mybench") for x in s], "fake:a"))(list(_samples(b))))  # fmt: skip
    py("a-tuple-with-a-dict-later", "samples", lambda d, b: (lambda s: lambda: _audit(
        (*s[:3], s[3].to_dict()), "fake:a"))(list(_samples(b))))  # fmt: skip
    py("a-pandas-frame", "samples", lambda d, b: lambda: _audit(_samples(b).to_frame(), "fake:a"))


# -- the result object's methods ---------------------------------------------------------------------------


def _result_cases(case: Add) -> None:
    py = _py(case, "result")
    py("samples-frame-an-int", "samples", lambda d, b: lambda: nlibias.load_run(b.run).samples_frame(5))
    py("samples-frame-a-list-of-paths", "samples",
       lambda d, b: lambda: nlibias.load_run(b.run).samples_frame([str(b.samples)]))  # fmt: skip
    py("samples-frame-a-dict", "samples",
       lambda d, b: lambda: nlibias.load_run(b.run).samples_frame({"path": str(b.samples)}))  # fmt: skip
    py("samples-frame-another-benchmark", "samples",
       lambda d, b: lambda: nlibias.load_run(b.run).samples_frame(nlibias.expand("occupations")))  # fmt: skip
    py("samples-frame-the-predictions-file", "samples",
       lambda d, b: lambda: nlibias.load_run(b.run).samples_frame(b.predictions))  # fmt: skip
    py("load-run-a-samples-folder", "samples",
       lambda d, b: lambda: nlibias.load_run(b.samples))  # fmt: skip


# -- options objects built by hand ------------------------------------------------------------------------


def _options_cases(case: Add) -> None:
    from nlibias.jobs.gate_rules import GateRules

    py = _py(case, "options")

    def rules(name: str, named: str, **fields: Any) -> None:
        py(f"gate-rules-object-{name}", named,
           lambda d, b: (lambda c, r: lambda: nlibias.gate(c, r, rules=GateRules(**fields)))(*pair(d, b)))  # fmt: skip

    rules("margin-nan", "margin", margin=float("nan"))
    rules("margin-inf", "margin", margin=float("inf"))
    rules("confidence-1", "confidence", confidence=1.0)
    rules("seed-negative", "seed", seed=-1)
    rules("bootstrap-true", "bootstrap", bootstrap=True)
    rules("worse-misspelt", "worse", worse="up")
    rules("slices-a-string", "slices", slices="overall")
    rules("measure-max-abs-inf", "max_abs", measures={"bbnli_bias_score": {"max_abs": float("inf")}})
    rules("measure-name-misspelt", "bbnli_bias_scor", measures={"bbnli_bias_scor": {"margin": 1.0}})
    rules("slice-misspelt", "domian", slices=["domian"])
    py("gate-rules-object-max-detectable-without-a-baseline", "max_detectable",
       lambda d, b: lambda: nlibias.gate(_run_copy(d, b), rules=GateRules(max_detectable=2.0)))  # fmt: skip
    py("gate-rules-a-dict-with-inf", "rules", lambda d, b: (lambda c, r: lambda: nlibias.gate(
        c, r, rules={"margin": float("inf")}))(*pair(d, b)))  # fmt: skip

    def run_audit(run: Callable[[], Any], options: Callable[[], Any] | None = None) -> PyBuild:
        from nlibias.jobs.audit import run_audit as job

        def call(d: Path, b: Base) -> Callable[[], object]:
            samples = _samples(b)

            def go() -> object:  # the options are made in the call, as a notebook makes them
                made = {"options": options()} if options else {}
                return job(samples, nlibias.ModelSet.of(["fake:a"]), run=run(), **made)

            return go

        return call

    py("run-options-seed-with-bootstrap-0", "seed",
       run_audit(lambda: nlibias.RunOptions(cache=False, bootstrap=0, seed=3, progress=False)))  # fmt: skip
    py("run-options-limit-true", "limit", run_audit(lambda: nlibias.RunOptions(limit=True)))
    py("run-options-cache-an-int", "cache", run_audit(lambda: nlibias.RunOptions(cache=1)))
    py("model-options-max-new-tokens-0", "max_new_tokens", run_audit(
        lambda: nlibias.RunOptions(cache=False, bootstrap=0, progress=False),
        lambda: nlibias.ModelOptions(max_new_tokens=0)))  # fmt: skip
    py("model-options-devices-a-comma-string", "devices", run_audit(
        lambda: nlibias.RunOptions(cache=False, bootstrap=0, progress=False),
        lambda: nlibias.ModelOptions(devices="cuda:0,cuda:1")))  # fmt: skip
    py("model-options-concurrency-true", "concurrency", run_audit(
        lambda: nlibias.RunOptions(cache=False, bootstrap=0, progress=False),
        lambda: nlibias.ModelOptions(concurrency=True)))  # fmt: skip
    py("model-options-dtype-float8-for-a-fake", "dtype", run_audit(
        lambda: nlibias.RunOptions(cache=False, bootstrap=0, progress=False),
        lambda: nlibias.ModelOptions(dtype="float8")))  # fmt: skip
    py("model-options-label-map-for-a-fake", "label_map", run_audit(
        lambda: nlibias.RunOptions(cache=False, bootstrap=0, progress=False),
        lambda: nlibias.ModelOptions(label_map="0=entailment,1=entailment,2=neutral")))  # fmt: skip


# -- the public functions' other parameters ------------------------------------------------------------------


def _functions_cases(case: Add) -> None:
    py = _py(case, "functions")
    py("audit-limit-nan", "limit", lambda d, b: lambda: _audit(_samples(b), "fake:a", limit=float("nan")))
    py("audit-max-tokens-a-numpy-int", "max_tokens",
       lambda d, b: lambda: _audit(_samples(b), "fake:a", max_tokens=np.int64(100)))  # fmt: skip
    py("audit-device-for-a-fake-only", "device",
       lambda d, b: lambda: _audit(_samples(b), "fake:a", device="gpu"))  # fmt: skip
    py("audit-cache-the-samples-file", "cache", lambda d, b: (lambda s: lambda: nlibias.audit(
        s / "samples.jsonl", ["fake:a"], cache=s / "samples.jsonl", bootstrap=0, progress=False))(
        Path(shutil.copytree(b.samples, d / "s"))))  # fmt: skip
    py("score-predictions-a-generator", "predictions",
       lambda d, b: lambda: nlibias.score(b.samples, (p for p in [b.predictions]), bootstrap=0))  # fmt: skip
    py("score-predictions-the-samples-file", "samples.jsonl",
       lambda d, b: lambda: nlibias.score(b.samples, b.samples / "samples.jsonl", bootstrap=0))  # fmt: skip
    py("score-predictions-the-metrics-file", "metrics.json",
       lambda d, b: lambda: nlibias.score(b.samples, b.run / "metrics.json", bootstrap=0))  # fmt: skip
    py("score-samples-a-run-without-samples", "samples",
       lambda d, b: lambda: nlibias.score(b.run, b.predictions, bootstrap=0))  # fmt: skip
    py("score-samples-a-tenth-of-them", "predictions.jsonl:11", lambda d, b: lambda: nlibias.score(
        list(_samples(b))[:10], b.predictions, bootstrap=0))  # fmt: skip
    py("gate-pairs-a-list-of-tuples", "pairs",
       lambda d, b: (lambda c, r: lambda: nlibias.gate(c, r, pairs=[("m", "m")]))(*pair(d, b)))  # fmt: skip
    py("gate-margin-a-numpy-nan", "margin",
       lambda d, b: (lambda c, r: lambda: nlibias.gate(c, r, margin=np.float64("nan")))(*pair(d, b)))  # fmt: skip
    py("gate-samples-the-run-folder", "samples",
       lambda d, b: (lambda c, r: lambda: nlibias.gate(c, r, samples=b.run))(*pair(d, b)))  # fmt: skip
    py("make-report-a-generator", "runs",
       lambda d, b: lambda: nlibias.make_report((r for r in [b.run]), fmt="md"))  # fmt: skip
    py("make-report-fmt-upper-case", "fmt", lambda d, b: lambda: nlibias.make_report(b.run, fmt="MD"))
    py("make-report-out-the-run-s-predictions", "out", lambda d, b: (lambda r: lambda: nlibias.make_report(
        r, r / "predictions.jsonl", plots=False))(_run_copy(d, b)))  # fmt: skip
    py("make-report-plots-a-string", "plots",
       lambda d, b: lambda: nlibias.make_report(b.run, d / "r.html", plots="no"))  # fmt: skip
    py("expand-source-a-list", "source", lambda d, b: lambda: nlibias.expand("bbnli", [b.bbnli_dir]))
    py("expand-occupations-balance-a-string", "balance",
       lambda d, b: lambda: nlibias.expand("occupations", balance="yes"))  # fmt: skip
    py("validation-export-fmt-upper-case", "fmt",
       lambda d, b: lambda: nlibias.validation_export(_vrun(d, b), fmt="CSV"))  # fmt: skip
    py("validation-status-min-annotators-0", "min_annotators",
       lambda d, b: lambda: nlibias.validation_status(_vrun(d, b), min_annotators=0))  # fmt: skip
    py("validation-prescreen-judge-a-list", "judge", lambda d, b: lambda: nlibias.validation_prescreen(
        _vrun(d, b), judge=["fake:j", "fake:k"], progress=False))  # fmt: skip
    py("validation-prescreen-cache-the-queue", "queue.csv", lambda d, b: (lambda v: lambda: nlibias.validation_prescreen(
        v, judge="fake:j", progress=False, cache=v / "validation" / "queue.csv"))(_vrun(d, b)))  # fmt: skip
    py("doctor-device-a-string", "device", lambda d, b: lambda: nlibias.doctor(device="no"))


# -- the command line: a valid file of another kind where a command reads one ----------------------------


def _kinds_cases(case: Add) -> None:
    cli = _cli(case, "kinds")
    cli("gate-rules-a-predictions-file", lambda d, b: _gate(*pair(d, b), "--rules", str(b.predictions)),
        lambda d: "predictions.jsonl")  # fmt: skip
    cli("gate-rules-a-samples-file",
        lambda d, b: _gate(*pair(d, b), "--rules", str(b.samples / "samples.jsonl")), "samples.jsonl")  # fmt: skip
    cli("gate-samples-a-predictions-file", lambda d, b: _gate(*pair(d, b), "--samples", str(b.predictions)),
        "--samples")  # fmt: skip
    cli("gate-samples-a-metrics-file",
        lambda d, b: _gate(*pair(d, b), "--samples", str(b.run / "metrics.json")), "--samples")  # fmt: skip
    cli("score-samples-a-predictions-file", lambda d, b: ["score", "--samples", str(b.predictions),
        "--predictions", str(b.predictions), "--out", str(d / "o"), "--bootstrap", "0"], "predictions.jsonl:1")  # fmt: skip
    cli("audit-samples-a-metrics-file", lambda d, b: audit_args(b.run / "metrics.json", d), "metrics.json")
    cli("audit-samples-a-predictions-file", lambda d, b: audit_args(b.predictions, d), "predictions.jsonl:1")
    cli("gate-rules-a-metrics-file",
        lambda d, b: _gate(*pair(d, b), "--rules", str(b.run / "metrics.json")), "metrics.json")  # fmt: skip
    cli("explain-a-classifier-run", lambda d, b: ["explain", str(_run_copy(d, b)), "--judge", "fake:j",
        "--no-cache", "--bootstrap", "0"], lambda d: str(d / "run"))  # fmt: skip
    cli("validate-status-an-audit-run", lambda d, b: ["validate", "status", str(_run_copy(d, b))],
        lambda d: str(d / "run"))  # fmt: skip
    cli("export-model-index-a-validation-run", lambda d, b: ["export", "model-index", str(_vrun(d, b))],
        lambda d: str(d / "vrun"))  # fmt: skip
    cli("report-a-samples-folder", lambda d, b: ["report", str(shutil.copytree(b.samples, d / "s")), "--format",
        "md"], lambda d: str(d / "s"))  # fmt: skip


# -- nested gate-rules YAML keys ----------------------------------------------------------------------------


def _yaml_cases(case: Add) -> None:
    def rules(name: str, text: str, line: int) -> None:
        def build(d: Path, b: Base) -> tuple[list[str], str]:
            path = _rules(d, text)
            return _gate(*pair(d, b), "--rules", str(path)), f"{path}:{line}"

        case(f"s29a-yaml/gate-{name}", build)

    rules("measure-slices-a-string", "measures:\n  bbnli_bias_score:\n    slices: overall\n", 3)
    rules("measure-worse-misspelt", "measures:\n  bbnli_bias_score:\n    worse: up\n", 3)
    rules(
        "measure-max-detectable-nan",
        "margin: 0\nmeasures:\n  bbnli_bias_score:\n    max_detectable: .nan\n",
        4,
    )
    rules("seed-a-float", "seed: 1.5\n", 1)
    rules("measure-margin-a-list", "measures:\n  bbnli_bias_score:\n    margin: [1, 2]\n", 3)
    rules("measure-rule-a-number", "measures:\n  bbnli_bias_score: 5\n", 2)
    rules("measures-a-list", "measures:\n  - bbnli_bias_score\n", 1)  # the key's line
    rules("slices-empty-list", "slices: []\n", 1)


def s29a_cases() -> list[Case]:
    groups = [
        _predictor_cases,
        _sample_objects_cases,
        _result_cases,
        _options_cases,
        _functions_cases,
        _kinds_cases,
        _yaml_cases,
    ]
    return cases_of(groups, KNOWN)
