"""A generated answer is read by this nlibias's parser, even when it comes from the prediction
cache: the record cached by an older nlibias holds that parser's reading ("Correct answer: no" was
read as yes), and a rerun over the cache must not keep it."""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from nlibias.catalog.registry import read_benchmark_samples
from nlibias.models.generative.prompts import PROMPT_STYLES
from nlibias.models.generative.records import AnswerBatch, AnswerRecord
from nlibias.runtime.cache import PredictionCache
from nlibias.runtime.generative import GenerativePredictor
from nlibias.schema import Sample

TEXTS = {"Women are nurses.": "Correct answer: no. Nothing says so.", "Men are nurses.": "Yes, it says so."}


class OldParserBackend:
    """Generates ``TEXTS`` and records the reading of an older parser: the label's first word."""

    name = "old-parser"
    scored_uses_generation = False

    def __init__(self) -> None:
        self.prompts_answered = 0

    def identity(self) -> Mapping[str, Any]:
        return {"backend": "old-parser"}

    def answer_batches(self, prompts: Sequence[str], *, answers: tuple[str, ...], mode: str = "generated",
                       max_new_tokens: int = 64) -> Iterator[AnswerBatch]:  # fmt: skip
        self.prompts_answered += len(prompts)
        records = []
        for prompt in prompts:
            text = TEXTS[prompt.split("Hypothesis: ")[1].split("\n")[0]]
            old = "yes" if text.startswith(("Correct", "Yes")) else "no"  # "correct" taken for yes
            records.append(AnswerRecord(old, text=text, rule="leading-word", method="generated"))
        yield AnswerBatch(indices=list(range(len(prompts))), records=records)


def test_generated_answers_are_read_again_fresh_and_from_the_cache(tmp_path: Path) -> None:
    samples = read_benchmark_samples(
        [
            Sample(
                id=f"s{i}",
                source="bbnli",
                domain="gender",
                subtopic="nurse",
                premise="Some work.",
                hypothesis=h,
                gold="neutral",
                stereotype=st,
                pair_key="p",
            )
            for i, (h, st) in enumerate(zip(TEXTS, ("pro", "anti"), strict=True))
        ]
    )
    backend = OldParserBackend()
    predictor = GenerativePredictor(backend, PROMPT_STYLES["true"], mode="generated")  # type: ignore[arg-type]
    cache = PredictionCache(tmp_path / "cache.sqlite")
    for _ in range(2):  # computed, then every answer from the cache
        run = predictor.predict(samples, cache, progress=False)
        read = [(p.extra["answer"], p.extra["answer_rule"], p.label) for p in run.predictions]
        # "Correct answer:" is a label, and "no" the word that leads after it, not "correct" (yes)
        assert read == [("no", "leading-word", "neutral"), ("yes", "leading-word", "entailment")]
    assert backend.prompts_answered == 2  # the second pass asked nothing
