"""Human validation: annotation store, agreement, resolution, formats, model pre-screen and a local
annotation web app. Answers go to ``RUN/validation/annotations.sqlite``; ``resolve`` writes
``RUN/validation/judgements.csv``, which ``nlibias extend`` reads."""

from __future__ import annotations

from nlibias.validation.store import (
    ANNOTATIONS_DB,
    ROUNDS,
    AnnotationStore,
    CurrentAnswer,
    JudgementRecord,
    Suggestion,
)

__all__ = [
    "ANNOTATIONS_DB",
    "ROUNDS",
    "AnnotationStore",
    "CurrentAnswer",
    "JudgementRecord",
    "Suggestion",
]
