"""One NLI judge over the explanations of generated answers, every pair through the batched, cached
classifier runtime at once (what it asks and the labels: docs/generative.md)."""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any

from nlibias.metrics.explanations import (
    DEFAULT_GROUNDED_THRESHOLD,
    STANCES,
    explanation_label,
    is_consistent,
    stance_of,
)
from nlibias.runtime.classifier import predict_pairs

if TYPE_CHECKING:
    from nlibias.models.base import NLIClassifier
    from nlibias.runtime.cache import PredictionCache


@dataclass(frozen=True)
class GeneratedAnswer:
    """One generated answer of an audit run, split, with the sample it answers."""

    id: str
    model: str
    prompt: str | None
    text: str
    answer: str | None
    answer_rule: str
    explanation: str
    sentences: tuple[str, ...]
    premise: str
    hypothesis: str
    stereotype: str | None
    pair_key: str | None
    domain: str
    subtopic: str


@dataclass(frozen=True)
class JudgedAnswers:
    """The rows of ``explanations.jsonl`` for one judge, and its runtime counts."""

    rows: list[dict[str, Any]]
    stats: Mapping[str, Any]


def judge_reference(judge: NLIClassifier) -> str:
    """The judge's full reference as ``explain`` writes it (a fake judge ``j`` is ``fake:j``)."""
    fake = dict(judge.identity()).get("backend") == "fake"
    return shown_judge(judge.name, [judge.name] if fake else [])


def shown_judge(name: str, fake_judges: Collection[str]) -> str:
    """A judge's name from ``explanations.json`` as its full reference (older files list a fake's
    bare name in ``fake_judges``)."""
    return f"fake:{name}" if name in fake_judges and not name.startswith("fake:") else name


def _probs(values: Sequence[float]) -> dict[str, float]:
    return {label: round(float(p), 6) for label, p in zip(STANCES, values, strict=True)}


def judge_pairs(answers: Sequence[GeneratedAnswer]) -> list[tuple[str, str]]:
    """The pairs the judge is asked, in order: per sentence (premise, sentence) and (hypothesis,
    sentence), then (explanation, hypothesis)."""
    pairs: list[tuple[str, str]] = []
    for item in answers:
        for sentence in item.sentences:
            pairs += [(item.premise, sentence), (item.hypothesis, sentence)]
        if item.sentences:
            pairs.append((item.explanation, item.hypothesis))
    return pairs


GROUNDED_RULE_VERSION = 2
"""The version of :func:`is_grounded`, recorded so that another rule's judgements are redone."""


def is_grounded(by_premise: str, by_hypothesis: str) -> bool:
    """The premise entails the sentence, or the hypothesis does and the premise does not contradict it."""
    return by_premise == "entailment" or (by_premise != "contradiction" and by_hypothesis == "entailment")


def judge_answers(
    answers: Sequence[GeneratedAnswer],
    judge: NLIClassifier,
    cache: PredictionCache | None,
    *,
    threshold: float = DEFAULT_GROUNDED_THRESHOLD,
    progress: bool = True,
) -> JudgedAnswers:
    """Judge every explanation of ``answers`` with ``judge``; one row each."""
    run = predict_pairs(judge, judge_pairs(answers), cache, progress=progress)
    rows: list[dict[str, Any]] = []
    at = 0
    for item in answers:
        sentences = []
        for sentence in item.sentences:
            by_premise, by_hypothesis = run.probs[at].tolist(), run.probs[at + 1].tolist()
            at += 2
            grounded = is_grounded(stance_of(by_premise), stance_of(by_hypothesis))
            probs = {"premise": _probs(by_premise), "hypothesis": _probs(by_hypothesis)}
            sentences.append({"text": sentence, **probs, "grounded": grounded})
        row = _row(item, judge_reference(judge), sentences)
        if item.sentences:
            stance_probs = run.probs[at].tolist()
            at += 1
            _label(row, stance_probs, sentences, threshold)
        rows.append(row)
    return JudgedAnswers(rows, run.stats())


_JUDGED = ("grounded", "stance", "stance_probs", "consistent", "label")


def _row(item: GeneratedAnswer, judge: str, sentences: list[dict[str, Any]]) -> dict[str, Any]:
    """The row of an answer before its label (nulls stay without an explanation)."""
    row = asdict(item)
    del row["sentences"]
    return row | {"sentences": sentences} | dict.fromkeys(_JUDGED) | {"judge": judge}


def _label(
    row: dict[str, Any], stance_probs: list[float], sentences: list[dict[str, Any]], threshold: float
) -> None:
    grounded = sum(s["grounded"] for s in sentences) / len(sentences)
    stance = stance_of(stance_probs)
    consistent = is_consistent(row["answer"], stance)
    row |= {
        "grounded": round(grounded, 6),
        "stance": stance,
        "stance_probs": _probs(stance_probs),
        "consistent": consistent,
        "label": explanation_label(
            consistent=consistent,
            grounded=grounded,
            stance=stance,
            stereotype=row["stereotype"],
            threshold=threshold,
        ),
    }
