"""Bad inputs of issue #34 (part C), part of the corpus of ``bad_input_cases``: prediction rows
that break a rule of their kind on routes that skipped it (a label beside an answer word, an
answer that is no answer word), lm-eval logs (a log-likelihood above 0, choices inconsistent with
the answers, an unknown sample, two prompts in one log: each named in the user's log, not in its
converted copy) and model specs that name no model or another kind's key."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from bad_input_corpus import Base, Case, audit_args, score_args

_STAMP = "2026-01-01T00-00-00.000001"
_TASK = "nlibias_bbnli_true"


def _rows_cases() -> list[Case]:
    found: list[Case] = []

    def row(name: str, edit: Callable[[dict[str, Any]], None]) -> None:
        def build(d: Path, base: Base) -> tuple[list[str], str]:
            lines = base.predictions.read_text(encoding="utf-8").splitlines()
            record = json.loads(lines[0])
            edit(record)
            path = d / "predictions.jsonl"
            path.write_text("\n".join([json.dumps(record), *lines[1:]]) + "\n", encoding="utf-8")
            return score_args(base, path, d), str(path)

        found.append(Case(f"prediction-rows/{name}", build))

    def contradicts_beside_answer(r: dict[str, Any]) -> None:
        # "no" stands for contradiction (yes/no/maybe), and the probabilities say neutral
        probs = {"entailment": 0.1, "neutral": 0.8, "contradiction": 0.1}
        r.update(label="contradiction", answer="no", answers="yes/no/maybe", probs=probs)

    row("label-contradicts-probs-beside-answer", contradicts_beside_answer)
    row("answer-not-an-answer-word", lambda r: r.update(label="entailment", answer="banana", probs=None))
    row("label-contradicts-answer", lambda r: r.update(label="entailment", answer="no", probs=None))
    row("answer-outside-its-answer-set", lambda r: r.update(label="neutral", answer="maybe", answers="yes/no",
                                                            probs=None))  # fmt: skip
    row("answer-probs-of-other-words", lambda r: r.update(label="entailment", answer="yes", probs=None,
                                                          answer_probs={"yes": 0.7, "perhaps": 0.3}))  # fmt: skip
    return found


def _lm_eval_cases() -> list[Case]:
    found: list[Case] = []

    def log(name: str, edit: Callable[[list[dict[str, Any]]], None]) -> None:
        def build(d: Path, base: Base) -> tuple[list[str], str]:
            ids = [
                json.loads(line)["id"] for line in (base.samples / "samples.jsonl").read_text().splitlines()
            ]
            lines = [
                {"doc_id": i, "doc": {"id": sample_id, "choice_answers": ["yes", "no"], "answers": "yes/no",
                                      "prompt": "true"},
                 "resps": [[[-1.0, False]], [[-2.0, False]]], "filtered_resps": [[-1.0, False], [-2.0, False]]}
                for i, sample_id in enumerate(ids)
            ]  # fmt: skip
            edit(lines)
            path = d / f"samples_{_TASK}_{_STAMP}.jsonl"
            path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
            results = {"results": {_TASK: {"acc,none": 0.0}}, "config": {"limit": None},
                       "n-samples": {_TASK: {"original": len(lines), "effective": len(lines)}}}  # fmt: skip
            (d / f"results_{_STAMP}.json").write_text(json.dumps(results), encoding="utf-8")
            return score_args(base, path, d), str(path)

        found.append(Case(f"lm-eval-log/{name}", build))

    def positive(lines: list[dict[str, Any]]) -> None:
        lines[1]["filtered_resps"] = [[3.0, False], [-2.0, False]]

    def inconsistent(lines: list[dict[str, Any]]) -> None:
        lines[1]["doc"]["choice_answers"] = ["yes", "maybe"]

    def unknown(lines: list[dict[str, Any]]) -> None:
        lines[2]["doc"]["id"] = "no-such-sample"

    def two_prompts(lines: list[dict[str, Any]]) -> None:
        for line in lines[len(lines) // 2 :]:
            line["doc"]["prompt"] = "gpt3"

    log("loglikelihood-above-zero", positive)
    log("choice-answers-inconsistent", inconsistent)
    log("unknown-sample-named-in-the-log", unknown)
    log("two-prompts-in-one-log", two_prompts)
    return found


def _model_spec_cases() -> list[Case]:
    found: list[Case] = []
    for name, spec in (
        ("fake-without-a-name", "fake:"),
        ("classifier-in-generative-key-syntax", "fake:m|prompt=true|scored"),
        ("classifier-in-sentence-scorer-key-syntax", "fake:m|tp=shared"),
    ):

        def build(d: Path, base: Base, spec: str = spec) -> tuple[list[str], str]:
            args = audit_args(base.samples, d)
            args[args.index("fake:m")] = spec
            return args, spec

        found.append(Case(f"model-spec/{name}", build))
    return found


def cases() -> list[Case]:
    """The prediction-row cases of issue #34 (part C)."""
    return [*_rows_cases(), *_lm_eval_cases(), *_model_spec_cases()]
