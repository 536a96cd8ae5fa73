"""Bad inputs of the declared rules (issue #48), part of the corpus of ``bad_input_cases``, each
class through the command line and the Python API: numbers no decision can use (infinite, out of
range, a bool or a string for a number), options that apply to nothing (``--seed`` with nothing
drawn, ``--by`` with ``--json``, a ``--limit`` of every sample) and a model in the wrong role (an
NLI classifier as the LM judge, a generative LM as a judge or an audit's classifier)."""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from pathlib import Path

import nlibias
from bad_input_cases_explain import _generated_run
from bad_input_corpus import Base, Case, audit_args, score_args


def _model_dir(d: Path, architecture: str) -> Path:
    """A local model directory whose config.json records ``architecture`` (no weights: a role is
    read from the reference, before anything loads)."""
    folder = d / architecture
    folder.mkdir()
    (folder / "config.json").write_text(json.dumps({"architectures": [architecture]}), encoding="utf-8")
    return folder


def _explain(run: Path, *extra: str) -> list[str]:
    return ["explain", str(run), "--no-cache", *extra]


def declared_cases() -> list[Case]:
    found: list[Case] = []

    def cli_explain(name: str, extra: list[str], named: str) -> None:
        def build(d: Path, base: Base) -> tuple[list[str], str]:
            run, _ = _generated_run(d, base)
            return _explain(run, *extra), named

        found.append(Case(f"declared/cli-{name}", build))

    def cli_run(name: str, extra: list[str], named: str, *, command: str = "audit") -> None:
        def build(d: Path, base: Base) -> tuple[list[str], str]:
            args = (
                audit_args(base.samples, d) if command == "audit" else score_args(base, base.predictions, d)
            )
            return [*args, *extra], named

        found.append(Case(f"declared/cli-{name}", build))

    def python(name: str, make: Callable[[Path, Base], Callable[[], object]], named: str) -> None:
        found.append(Case(f"declared/python-{name}", lambda d, base: (make(d, base), named)))

    def explain_call(**options: object) -> Callable[[Path, Base], Callable[[], object]]:
        def make(d: Path, base: Base) -> Callable[[], object]:
            run, _ = _generated_run(d, base)
            judges = options.pop("judges", ["fake:j"])
            return lambda: nlibias.explain(run, judges, cache=False, progress=False, **options)

        return make

    # numbers that no decision can use
    cli_explain("explain-threshold-inf", ["--judge", "fake:j", "--threshold", "inf"], "--threshold")
    cli_explain("explain-threshold-nan", ["--judge", "fake:j", "--threshold", "nan"], "--threshold")
    cli_explain("explain-threshold-1e309", ["--judge", "fake:j", "--threshold", "1e309"], "--threshold")
    cli_explain("explain-seed-negative", ["--judge", "fake:j", "--seed", "-1"], "--seed")
    cli_explain("explain-lm-tokens-zero", ["--judge", "fake:j", "--lm-judge", "fake:l",
                                           "--lm-judge-max-new-tokens", "0"], "--lm-judge-max-new-tokens")  # fmt: skip
    cli_run("score-seed-negative", ["--seed", "-2"], "--seed", command="score")
    python("explain-threshold-string", explain_call(threshold="0.5"), "threshold")
    python("explain-threshold-inf", explain_call(threshold=math.inf), "threshold")
    python("explain-bootstrap-bool", explain_call(bootstrap=True), "bootstrap")
    python("explain-lm-judge-int", explain_call(lm_judge=5), "lm_judge")
    python("explain-samples-int", explain_call(samples=123), "samples")
    python(
        "gate-margin-inf",
        lambda d, base: lambda: nlibias.gate(base.run, base.run, margin=math.inf),
        "margin",
    )
    python(
        "score-seed-bool",
        lambda d, base: lambda: nlibias.score(base.samples, base.predictions, seed=True),
        "seed",
    )
    python(
        "audit-limit-float",
        lambda d, base: (
            lambda: nlibias.audit(base.samples, ["fake:m"], cache=False, progress=False, limit=2.5)
        ),
        "limit",
    )

    # options that apply to nothing
    cli_run("audit-seed-no-bootstrap", ["--seed", "3"], "--seed")
    cli_run("score-seed-no-bootstrap", ["--seed", "3"], "--seed", command="score")
    cli_explain(
        "explain-seed-no-bootstrap", ["--judge", "fake:j", "--bootstrap", "0", "--seed", "3"], "--seed"
    )
    cli_run("audit-by-with-json", ["--by", "subtopic", "--json"], "--by")
    cli_run("score-by-with-json", ["--by", "subtopic", "--json"], "--by", command="score")
    cli_run("audit-limit-every-sample", ["--limit", "100000"], "--limit")
    python(
        "audit-seed-no-bootstrap",
        lambda d, base: (
            lambda: nlibias.audit(base.samples, ["fake:m"], cache=False, progress=False, bootstrap=0, seed=3)
        ),
        "seed",
    )
    python(
        "score-seed-no-bootstrap",
        lambda d, base: lambda: nlibias.score(base.samples, base.predictions, bootstrap=0, seed=3),
        "seed",
    )
    python("explain-seed-no-bootstrap", explain_call(bootstrap=0, seed=3), "seed")
    python(
        "audit-limit-every-sample",
        lambda d, base: (
            lambda: nlibias.audit(
                base.samples, ["fake:m"], cache=False, progress=False, bootstrap=0, limit=100_000
            )
        ),
        "limit",
    )

    # a model in the wrong role
    cli_explain("explain-judge-generative", ["--judge", "smollm2"], "--judge")
    cli_run("audit-model-generative", ["--model", "smollm2"], "--model")

    def lm_judge_classifier(d: Path, base: Base) -> tuple[list[str], str]:
        run, _ = _generated_run(d, base)
        folder = _model_dir(d, "RobertaForSequenceClassification")
        return _explain(run, "--judge", "fake:j", "--lm-judge", str(folder)), "--lm-judge"

    def judge_causal_dir(d: Path, base: Base) -> tuple[list[str], str]:
        run, _ = _generated_run(d, base)
        return _explain(run, "--judge", str(_model_dir(d, "LlamaForCausalLM"))), "--judge"

    def generative_prompted(d: Path, base: Base) -> tuple[list[str], str]:
        args = [
            "audit",
            "--samples",
            str(base.samples),
            "--generative",
            "prompt:smollm2",
            "--out",
            str(d / "o"),
        ]
        return [*args, "--bootstrap", "0", "--no-cache"], "--generative"

    found.append(Case("declared/cli-explain-lm-judge-classifier", lm_judge_classifier))
    found.append(Case("declared/cli-explain-judge-causal-dir", judge_causal_dir))
    found.append(Case("declared/cli-audit-generative-prompted", generative_prompted))
    python("explain-judge-generative", explain_call(judges=["smollm2"]), "judges")
    python("explain-lm-judge-prompted", explain_call(lm_judge="prompt:smollm2"), "lm_judge")
    python(
        "audit-model-generative",
        lambda d, base: lambda: nlibias.audit(base.samples, ["smollm2"], cache=False, progress=False),
        "models",
    )
    return found
