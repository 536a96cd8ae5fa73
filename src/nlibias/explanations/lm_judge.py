"""A second opinion: a generative LM labels each explanation balanced / biased / invalid (the
first label word of its answer to ``resources/explanation_judge_prompt.txt``), through the cache."""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from importlib import resources
from typing import TYPE_CHECKING, Any

from nlibias.explanations.judge import GeneratedAnswer
from nlibias.metrics.explanations import LABELS
from nlibias.models.generative.records import AnswerRecord
from nlibias.runtime.loop import ComputedBatch, cached_outputs

if TYPE_CHECKING:
    from nlibias.models.generative.backend import GenerativeBackend
    from nlibias.runtime.cache import PredictionCache

PROMPT_FILE = "explanation_judge_prompt.txt"
LM_JUDGE_MAX_NEW_TOKENS = 8
_LABEL_WORD = re.compile(r"\b(balanced|biased|invalid)\b", re.IGNORECASE)


def parse_lm_label(text: str | None) -> str | None:
    """The first label word in the LM's text, lowercased; None when it names none."""
    found = _LABEL_WORD.search(text or "")
    return found.group(1).lower() if found else None


@dataclass(frozen=True)
class LMJudgement:
    """The LM judge's label of each answer (None: no explanation, or no label word) and texts."""

    name: str
    labels: list[str | None]
    texts: list[str | None]
    stats: dict[str, Any]


def lm_judge_labels(
    answers: Sequence[GeneratedAnswer],
    backend: GenerativeBackend,
    cache: PredictionCache | None,
    *,
    max_new_tokens: int = LM_JUDGE_MAX_NEW_TOKENS,
    progress: bool = True,
) -> LMJudgement:
    """Ask ``backend`` for the label of every explained answer."""
    template = resources.files("nlibias.resources").joinpath(PROMPT_FILE).read_text(encoding="utf-8")
    asked = [i for i, item in enumerate(answers) if item.sentences]
    prompts = [
        template.format(premise=answers[i].premise, hypothesis=answers[i].hypothesis, answer=answers[i].text)
        for i in asked
    ]
    identity = {
        "backend": dict(backend.identity()),
        "task": "explanation-label",
        "template_sha256": hashlib.sha256(template.encode()).hexdigest(),
        "max_new_tokens": max_new_tokens,
    }

    def compute(todo: list[tuple[str, ...]]) -> Iterator[ComputedBatch]:
        for batch in backend.answer_batches(
            [text for (text,) in todo], answers=LABELS, mode="generated", max_new_tokens=max_new_tokens
        ):
            yield ComputedBatch(batch.indices, batch.records, batch.real_tokens, batch.padded_tokens)

    unique = list(dict.fromkeys(prompts))
    run = cached_outputs(
        backend.name,
        [(prompt,) for prompt in unique],
        identity,
        compute,
        cache,
        to_json=AnswerRecord.to_json,
        from_json=AnswerRecord.from_json,
        progress=progress,
        unit="prompt",
    )
    by_prompt = dict(zip(unique, run.outputs, strict=True))
    labels: list[str | None] = [None] * len(answers)
    texts: list[str | None] = [None] * len(answers)
    for i, prompt in zip(asked, prompts, strict=True):
        texts[i] = by_prompt[prompt].text
        labels[i] = parse_lm_label(texts[i])
    return LMJudgement(backend.name, labels, texts, {"computed": run.computed, "cached": run.cached})
