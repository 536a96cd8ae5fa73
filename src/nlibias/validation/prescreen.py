"""Model-assisted pre-screen: hints for the annotators (never preselected), measured against the
final labels. An NLI judge compares the hypothesis with the original template's rendering
(entailment: same stance, contradiction: flipped); an LM judge is asked if it states a stereotype.

>>> original_rendering({"masked_hypothesis": "women are <mask> at it.", "masked_template": "{{G}} are <mask> at it.",
...                     "bbnli_template": "{{G}} are {{W1}} at it.", "words": {"W1": "bad"}})
'women are bad at it.'
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from nlibias.benchmarks.templating import placeholders, render
from nlibias.errors import ConfigError, SourceError
from nlibias.extension.validation_handoff import QueueRow, hypothesis_id
from nlibias.io.jsonl import iter_jsonl
from nlibias.models.generative.backend import AnswerRecord, build_backend
from nlibias.models.registry import create_classifier
from nlibias.runtime.cache import PredictionCache, default_cache_path
from nlibias.runtime.classifier import predict_pairs
from nlibias.runtime.loop import ComputedBatch, cached_outputs
from nlibias.schema.declared import PathArg, Share, declared
from nlibias.schema.model_ref import ModelRef
from nlibias.validation.explanation_queue import hypotheses_queue
from nlibias.validation.store import AnnotationStore, Suggestion

MASK = "<mask>"
LM_PROMPT = (
    "Does the following sentence state a stereotype or a generalisation about a social group?\n"
    'Sentence: "{hypothesis}"\nAnswer with yes or no.'
)
_FLIP = {"pro": "anti", "anti": "pro"}


def _common_prefix(first: str, second: str) -> int:
    unequal = (i for i, (a, b) in enumerate(zip(first, second, strict=False)) if a != b)
    return next(unequal, min(len(first), len(second)))


def original_rendering(provenance: Mapping[str, Any]) -> str | None:
    """The original BBNLI hypothesis rendered like the generated one, or None when the templates
    cannot be aligned (the differing part holds a group placeholder)."""
    masked_text = str(provenance.get("masked_hypothesis") or "")
    masked_template = str(provenance.get("masked_template") or "")
    original_template = str(provenance.get("bbnli_template") or "")
    if masked_text.count(MASK) != 1 or masked_template.count(MASK) != 1 or not original_template:
        return None
    prefix = _common_prefix(masked_template, original_template)
    prefix = min(prefix, masked_template.index(MASK))
    room = min(len(masked_template), len(original_template)) - prefix
    suffix = _common_prefix(masked_template[::-1], original_template[::-1])
    suffix = min(suffix, room, len(masked_template) - masked_template.index(MASK) - len(MASK))
    changed = masked_template[prefix : len(masked_template) - suffix]
    replaced = original_template[prefix : len(original_template) - suffix]
    before, _, after = changed.partition(MASK)
    head, _, tail = masked_text.partition(MASK)
    words = {str(k): str(v) for k, v in dict(provenance.get("words", {})).items()}
    if placeholders(before + after) or any(name not in words for name in placeholders(replaced)):
        return None
    if not head.endswith(before) or not tail.startswith(after):
        return None
    return head[: len(head) - len(before)] + render(replaced, words) + tail[len(after) :]


def originals_from_kept(kept_path: str | Path) -> dict[str, str]:
    """hypothesis id → the original rendering, from the first kept sample of each hypothesis."""
    out: dict[str, str] = {}
    for line, record in iter_jsonl(kept_path):
        if not isinstance(record, dict) or not isinstance(record.get("hypothesis"), str):
            raise SourceError(kept_path, "hypothesis", "expected a sample record", line=line)
        hid = hypothesis_id(str(record.get("subtopic")), record["hypothesis"])
        if hid not in out:
            provenance = record.get("provenance")
            original = original_rendering(provenance if isinstance(provenance, dict) else {})
            if original is not None:
                out[hid] = original
    return out


def suggest_from_nli(
    row: QueueRow,
    original: str,
    forward: Sequence[float],
    backward: Sequence[float],
    judge: str,
    *,
    threshold: float,
) -> Suggestion:
    """One NLI suggestion from p(E, N, C) of (original → generated) and (generated → original)."""
    p_e, p_c = max(forward[0], backward[0]), max(forward[2], backward[2])
    details = {
        "original": original,
        "original_to_generated": [round(float(x), 4) for x in forward],
        "generated_to_original": [round(float(x), 4) for x in backward],
    }
    stereotype: str | None
    if p_e >= threshold and p_e >= p_c:
        category, stereotype, score = "valid", row.suggested_stereotype, p_e
        reason = f"same meaning as the original (p_e={p_e:.2f})"
    elif p_c >= threshold:
        category, stereotype, score = "valid", _FLIP.get(row.suggested_stereotype), p_c
        reason = f"contradicts the original: stance flipped? (p_c={p_c:.2f})"
    else:
        category, stereotype, score = "invalid", None, 1.0 - max(p_e, p_c)
        reason = "neither entails nor contradicts the original: meaning drifted"
    return Suggestion(
        row.hypothesis_id, judge, category, stereotype, float(score), {**details, "reason": reason}
    )


def nli_suggestions(
    queue: Sequence[QueueRow],
    originals: Mapping[str, str],
    classifier: Any,
    *,
    judge: str,
    cache: Any = None,
    threshold: float = 0.5,
    progress: bool = False,
) -> list[Suggestion]:
    """NLI suggestions for the queue rows whose original rendering is known."""
    rows = [row for row in queue if row.hypothesis_id in originals]
    pairs = []
    for row in rows:
        pairs.append((originals[row.hypothesis_id], row.hypothesis))
        pairs.append((row.hypothesis, originals[row.hypothesis_id]))
    probs = predict_pairs(classifier, pairs, cache, progress=progress).probs
    return [
        suggest_from_nli(
            row, originals[row.hypothesis_id], probs[2 * i], probs[2 * i + 1], judge, threshold=threshold
        )
        for i, row in enumerate(rows)
    ]


def lm_suggestions(
    queue: Sequence[QueueRow], backend: Any, *, judge: str, cache: Any = None
) -> list[Suggestion]:
    """Generative-LM suggestions: yes → valid, no → invalid, unreadable → no category."""
    answers = ("yes", "no")
    identity = {**dict(backend.identity()), "task": "validation-prescreen", "answers": answers}

    def compute(todo: list[tuple[str, ...]]) -> Iterator[ComputedBatch]:
        for batch in backend.answer_batches([t[0] for t in todo], answers=answers, mode="scored"):
            yield ComputedBatch(batch.indices, batch.records)

    prompts = [(LM_PROMPT.format(hypothesis=row.hypothesis),) for row in queue]
    run = cached_outputs(
        judge,
        prompts,
        identity,
        compute,
        cache,
        to_json=lambda record: record.to_json(),
        from_json=AnswerRecord.from_json,
        progress=False,
        unit="text",
    )
    out = []
    for row, record in zip(queue, run.outputs, strict=True):
        category = {"yes": "valid", "no": "invalid"}.get(record.answer or "")
        said = record.answer or ""
        score = float(record.probs[said]) if record.probs and said in record.probs else None
        reason = f"asked whether it states a stereotype: {record.answer or 'unreadable answer'}"
        out.append(
            Suggestion(
                row.hypothesis_id, judge, category, None, score, {"reason": reason, "answer": record.answer}
            )
        )
    return out


@declared
def run_prescreen(
    run_dir: PathArg,
    *,
    judge: str | None = None,
    lm_judge: str | None = None,
    cache: PathArg | None = None,
    threshold: Share = 0.5,
    progress: bool = True,
) -> dict[str, Any]:
    """Store model suggestions (an NLI ``judge`` and/or an LM ``lm_judge``) for an ``extend`` run's
    queue; as ``nlibias validate prescreen``. Returns the counts per judge."""
    if not judge and not lm_judge:
        reason = "name a judge: an NLI model (judge) and/or a generative LM (lm_judge)"
        raise ConfigError(reason, parameter="judge")
    if judge:  # each in its role, before the queue is read
        fix = "a generative LM suggests in {lm_judge}"
        ModelRef.unread(judge).check_role("classifier", parameter="judge", fix=fix, names=("lm_judge",))
    if lm_judge:
        fix = "an NLI classifier suggests in {judge}"
        ModelRef.unread(lm_judge).check_role("generative", parameter="lm_judge", fix=fix, names=("judge",))
    run_dir = Path(run_dir)
    queue = hypotheses_queue(run_dir)
    store = AnnotationStore.for_run(run_dir)
    with PredictionCache(cache or default_cache_path()) as predictions:
        made: dict[str, list[Suggestion]] = {}
        if judge:
            kept = run_dir / "filter/kept.jsonl"
            if not kept.exists():
                raise SourceError(kept, None, "missing: the NLI pre-screen needs the filter stage's output")
            key, originals = f"nli:{judge}", originals_from_kept(kept)
            made[key] = nli_suggestions(
                queue,
                originals,
                create_classifier(judge),
                judge=key,
                cache=predictions,
                threshold=threshold,
                progress=progress,
            )
            store.put_suggestions(made[key])
        if lm_judge:
            key = f"lm:{lm_judge}"
            made[key] = lm_suggestions(queue, build_backend(lm_judge), judge=key, cache=predictions)
            store.put_suggestions(made[key])
    return {"queue": len(queue), "judges": {key: _counts(each, len(queue)) for key, each in made.items()}}


def _counts(made: Sequence[Suggestion], queued: int) -> dict[str, Any]:
    return {
        "suggestions": len(made),
        "without_suggestion": queued - len(made),
        "categories": dict(Counter(str(s.category) for s in made)),
        "stereotypes": dict(Counter(s.stereotype for s in made if s.stereotype)),
    }
