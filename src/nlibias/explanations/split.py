"""A generated text as its short answer and explanation (the rest after a leading answer word, else
the whole text), and the explanation as sentences (pysbd)."""

from __future__ import annotations

import functools
from dataclasses import dataclass
from importlib.metadata import version
from typing import Any

from nlibias.errors import import_extra
from nlibias.models.generative.answers import normalise_text, parse_answer, text_after_leading_answer
from nlibias.models.generative.prompts import BINARY_ANSWERS


@dataclass(frozen=True)
class SplitAnswer:
    """A generated text's short answer (None: unreadable), the parser's rule, and its explanation."""

    answer: str | None
    rule: str
    explanation: str


def split_answer(text: str | None, answers: tuple[str, ...] = BINARY_ANSWERS) -> SplitAnswer:
    """The short answer and the explanation of a generated text."""
    parsed = parse_answer(text, answers)
    if text is None:
        return SplitAnswer(parsed.answer, parsed.rule, "")
    cleaned = normalise_text(text)
    leading = parsed.rule in ("leading-word", "not-an-allowed-answer")
    rest = text_after_leading_answer(cleaned) if leading else None
    explanation = cleaned if rest is None else rest
    return SplitAnswer(parsed.answer, parsed.rule, explanation.strip())


@functools.cache
def _segmenter() -> Any:
    pysbd = import_extra(
        "pysbd", "explain", use="the sentence splitter of generated explanations", parameter="judges"
    )
    return pysbd.Segmenter(language="en", clean=False)


TEXT_RULES_VERSION = 2
"""The version of what ``normalise_text`` removes before a split (recorded with the outputs)."""


def splitter_identity() -> str:
    """The splitter, its version and :data:`TEXT_RULES_VERSION`, recorded with the outputs."""
    _segmenter()
    return f"pysbd {version('pysbd')}; text rules {TEXT_RULES_VERSION}"


def split_sentences(explanation: str) -> list[str]:
    """The sentences of ``explanation``, stripped; pieces without a letter or digit dropped."""
    if not explanation.strip():
        return []
    pieces = (piece.strip() for piece in _segmenter().segment(explanation))
    return [piece for piece in pieces if any(ch.isalnum() for ch in piece)]
