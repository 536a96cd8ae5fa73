"""The explanations round of human validation: a seeded sample of an audit run's explained answers,
stratified by judge label × subtopic (one per stratum in turn), queued in the annotation app; each
answer is stored with the SHA-256 of the ``explanations.jsonl`` it judged."""

from __future__ import annotations

import hashlib
import random
import warnings
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any

from pydantic import TypeAdapter

from nlibias.errors import ConfigError, SourceError
from nlibias.explanations.run_files import EXPLANATIONS_DIR, EXPLANATIONS_JSONL, current_summary, read_rows
from nlibias.extension.validation_handoff import QUEUE_CSV, QueueRow, read_queue
from nlibias.io.atomic import write_json
from nlibias.io.fingerprint import sha256_file
from nlibias.schema.declared import PathArg, PositiveInt, Seed, declared
from nlibias.schema.measure_info import EXPLANATIONS_FILE
from nlibias.validation.store import ANNOTATIONS_DB, AnnotationStore, CurrentAnswer

EXPLANATIONS_QUEUE = "validation/explanations_queue.json"
QUEUE_FORMAT = 1
DEFAULT_SIZE = 200


def item_id(model: str, prompt: str | None, sample_id: str) -> str:
    """The stable queue id of one explained answer (kept, with its judgements, across draws).

    >>> item_id("smollm2|prompt=true|generated", "true", "s1")
    'x28da128f5340f79cfbeb'
    """
    key = "\x1f".join((model, "" if prompt is None else str(prompt), sample_id))
    return "x" + hashlib.sha256(key.encode("utf-8")).hexdigest()[:20]


@dataclass(frozen=True)
class ExplanationItem:
    """One explained answer in the queue."""

    item_id: str
    id: str
    """The sample id."""
    model: str
    prompt: str | None
    premise: str
    hypothesis: str
    answer: str | None
    explanation: str
    subtopic: str
    domain: str
    stereotype: str | None
    labels: dict[str, str | None] = field(default_factory=dict)
    """Each NLI judge's label (judge name → label)."""
    lm_label: str | None = None
    """The LM judge's label (None without an LM judge or when it gave none)."""


@dataclass(frozen=True)
class ExplanationQueue:
    """``validation/explanations_queue.json``."""

    fingerprint: str
    """SHA-256 of the ``explanations.jsonl`` the items were drawn from."""
    judges: tuple[str, ...]
    lm_judge: str | None
    stratified_by: str
    """The judge whose label formed the strata."""
    size: int
    seed: int
    available: int
    """Explained answers there were to draw from."""
    items: tuple[ExplanationItem, ...]

    def strata(self) -> dict[str, int]:
        """Queued items per ``label / subtopic`` of the stratifying judge."""
        counts = Counter(f"{it.labels.get(self.stratified_by)} / {it.subtopic}" for it in self.items)
        return dict(sorted(counts.items()))


_QUEUE = TypeAdapter(ExplanationQueue)


class QueueWarning(UserWarning):
    """A queue was drawn, but not as asked: fewer answers than ``size``, or earlier answers left out;
    or a queue with nothing in it was exported."""


def explanations_fingerprint(run_dir: str | Path) -> str:
    """SHA-256 of ``RUN/explanations/explanations.jsonl`` (refused, saying how, when there is none)."""
    run_dir = Path(run_dir)
    if not run_dir.is_dir():
        fix = "pass the run directory of an explained audit"
        raise SourceError(run_dir, None, "no such run directory", fix=fix)
    path = run_dir / EXPLANATIONS_DIR / EXPLANATIONS_JSONL
    if not path.is_file():
        fix = "label the audit run's generated explanations first: `nlibias explain RUN` with an NLI judge"
        raise SourceError(path, None, "no explanations here", fix=fix)
    return sha256_file(path)


def hypotheses_queue(run_dir: str | Path) -> list[QueueRow]:
    """An extension run's hypotheses queue (``validation/queue.csv``); refused for an explained audit run."""
    path = Path(run_dir) / QUEUE_CSV
    if not path.exists() and has_explanation_queue(run_dir):
        raise SourceError(
            path,
            None,
            "file does not exist: this run's validation is of explained answers "
            f"({EXPLANATIONS_QUEUE}); resolve, export, import and prescreen read an extension run's hypotheses",
            fix="judge the explanations in the annotation app (`nlibias validate serve RUN`); "
            "`nlibias validate status RUN` measures them",
        )
    if not path.exists() and (Path(run_dir) / EXPLANATIONS_DIR / EXPLANATIONS_JSONL).is_file():
        reason = (
            "file does not exist: this is an explained audit run, whose queue is drawn from its explanations"
        )
        raise SourceError(path, None, reason, fix="draw it first with `nlibias validate explanations RUN`")
    return read_queue(path)


def _explained_answers(run_dir: Path) -> tuple[dict[str, ExplanationItem], list[str], str | None]:
    """Every explained answer of the run (by item id), the NLI judges in the order ``explain`` ran
    them, and the LM judge's name."""
    out_dir = run_dir / EXPLANATIONS_DIR
    summary_path = out_dir / EXPLANATIONS_FILE
    if not summary_path.is_file():
        fix = "run `nlibias explain` again"
        raise SourceError(summary_path, None, "missing (explain did not finish)", fix=fix)
    items: dict[str, ExplanationItem] = {}
    rows = read_rows(out_dir)
    if not rows:
        reason = "no rows (explain wrote one per generated answer and judge)"
        raise SourceError(
            out_dir / EXPLANATIONS_JSONL, None, reason, fix="run explain on the audit run again"
        )
    summary = current_summary(run_dir, recorded=False)
    if not isinstance(summary, dict):
        raise SourceError(summary_path, None, f"not current: {summary}", fix="run `nlibias explain` again")
    for row in rows:
        if row.get("label") is None:  # no explanation to judge
            continue
        key = item_id(str(row["model"]), row.get("prompt"), str(row["id"]))
        if key not in items:
            texts: dict[str, Any] = {
                n: str(row[n]) for n in ("id", "model", "premise", "hypothesis", "explanation")
            }
            texts |= {"subtopic": str(row.get("subtopic") or "?"), "domain": str(row.get("domain") or "")}
            kept: dict[str, Any] = {
                name: row.get(name) for name in ("prompt", "answer", "stereotype", "lm_label")
            }
            items[key] = ExplanationItem(item_id=key, **texts, **kept)
        items[key].labels[str(row["judge"])] = row["label"]
    judges = list(dict.fromkeys(str(row["judge"]) for row in rows))
    lm_judge = summary.get("lm_judge")
    return items, judges, None if lm_judge is None else str(lm_judge)


def stratified_sample(
    items: Sequence[ExplanationItem], strata_of: Mapping[str, str], size: int, seed: int
) -> list[ExplanationItem]:
    """``size`` items taken one per stratum in turn (strata sorted, each shuffled with ``seed``)."""
    groups: dict[str, list[ExplanationItem]] = {}
    for item in sorted(items, key=lambda it: it.item_id):
        groups.setdefault(strata_of[item.item_id], []).append(item)
    rng = random.Random(seed)
    queues = [groups[name] for name in sorted(groups)]
    for group in queues:
        rng.shuffle(group)
    chosen: list[ExplanationItem] = []
    depth = 0
    while len(chosen) < size and any(depth < len(group) for group in queues):
        chosen += [group[depth] for group in queues if depth < len(group)][: size - len(chosen)]
        depth += 1
    return chosen


@declared
def draw_explanation_queue(
    run_dir: PathArg, *, size: PositiveInt = DEFAULT_SIZE, seed: Seed = 0, judge: str | None = None
) -> ExplanationQueue:
    """Draw and write the explanations queue of ``run_dir``: ``size`` answers stratified by
    ``judge``'s label (default: the first NLI judge) and subtopic, seeded; stored judgements stay."""
    run_dir = Path(run_dir)
    fingerprint = explanations_fingerprint(run_dir)
    items, judges, lm_judge = _explained_answers(run_dir)
    by = judge if judge is not None else (judges[0] if judges else "")
    if by not in judges:
        reason = f"{{judge}} {judge!r} did not label this run's explanations; use one of {', '.join(judges)}"
        raise ConfigError(reason, parameter="judge")
    if not items:
        fix = "audit with a prompt that asks for an explanation, then explain that run"
        path = run_dir / EXPLANATIONS_DIR / EXPLANATIONS_JSONL
        raise SourceError(path, None, "no answer here has an explanation to judge", fix=fix)
    strata = {key: f"{item.labels.get(by)}\x1f{item.subtopic}" for key, item in items.items()}
    chosen = stratified_sample(list(items.values()), strata, size, seed)
    queue = ExplanationQueue(fingerprint, tuple(judges), lm_judge, by, size, seed, len(items), tuple(chosen))
    if size > len(items):
        warnings.warn(
            f"size is {size} but {run_dir} holds {len(items)} explained answers: all {len(items)} are queued",
            QueueWarning,
            stacklevel=2,
        )
    _warn_left_out(run_dir, queue)
    write_json(run_dir / EXPLANATIONS_QUEUE, {"format_version": QUEUE_FORMAT, **_QUEUE.dump_python(queue)})
    return queue


def _warn_left_out(run_dir: Path, queue: ExplanationQueue) -> None:
    """Warn when the queue being replaced holds answered items the new one leaves out."""
    if not has_explanation_queue(run_dir) or not (run_dir / ANNOTATIONS_DB).is_file():
        return
    try:
        earlier = read_explanation_queue(run_dir)
    except SourceError:  # a damaged queue: nothing to keep
        return
    answered = set(AnnotationStore.for_run(run_dir).current_explanations(fingerprint=earlier.fingerprint))
    left_out = answered & {it.item_id for it in earlier.items} - {it.item_id for it in queue.items}
    if left_out:
        warnings.warn(
            f"{len(left_out)} answered items of the queue drawn before (size={earlier.size}, "
            f"seed={earlier.seed}, judge={earlier.stratified_by!r}) are not in the new one: their answers "
            "stay stored but no longer count; draw with those settings to queue them again",
            QueueWarning,
            stacklevel=3,
        )


def has_explanation_queue(run_dir: str | Path) -> bool:
    return (Path(run_dir) / EXPLANATIONS_QUEUE).is_file()


def read_explanation_queue(run_dir: str | Path) -> ExplanationQueue:
    """The queue :func:`draw_explanation_queue` wrote (refused, naming the file, when it is not one)."""
    path = Path(run_dir) / EXPLANATIONS_QUEUE
    if not path.is_file():
        fix = "draw one with `nlibias validate explanations RUN`"
        raise SourceError(path, None, "file does not exist", fix=fix)
    try:
        return _QUEUE.validate_json(path.read_bytes())
    except (OSError, ValueError) as exc:
        fix = "draw it again with `nlibias validate explanations RUN`"
        raise SourceError(path, None, f"not an explanations queue ({exc})", fix=fix) from None


@dataclass(frozen=True)
class AnnotationRound:
    """A run's annotation round, read once: an extension run's hypotheses queue (None: the run has
    none), an explained audit run's drawn answers (None: none drawn) and the store of their answers."""

    run_dir: Path
    hypotheses: tuple[QueueRow, ...] | None
    explained: ExplanationQueue | None
    store: AnnotationStore

    @classmethod
    def open(cls, run_dir: str | Path) -> AnnotationRound:
        """The round of ``run_dir``; neither queue there: the hypotheses queue's refusal."""
        explained = read_explanation_queue(run_dir) if has_explanation_queue(run_dir) else None
        with_hypotheses = (Path(run_dir) / QUEUE_CSV).exists() or explained is None
        hypotheses = tuple(hypotheses_queue(run_dir)) if with_hypotheses else None
        return cls(Path(run_dir), hypotheses, explained, AnnotationStore.for_run(run_dir))

    @property
    def queue(self) -> tuple[QueueRow, ...]:
        """The hypotheses queue (``resolve``, ``export``, ``import``); an explained run's refusal."""
        return self.hypotheses if self.hypotheses is not None else tuple(hypotheses_queue(self.run_dir))

    @cached_property
    def hypothesis_ids(self) -> set[str]:
        return {row.hypothesis_id for row in self.hypotheses or ()}

    @cached_property
    def explained_ids(self) -> set[str]:
        return set() if self.explained is None else {item.item_id for item in self.explained.items}

    def answers_of(self, who: str) -> dict[str, CurrentAnswer]:
        """``who``'s current hypotheses-round answers by hypothesis id."""
        return {hid: by[who] for hid, by in self.store.current(annotator=who).items() if who in by}

    def explanation_labels(self, who: str) -> dict[str, str]:
        """``who``'s current explanations-round label per item of this queue."""
        if self.explained is None:
            return {}
        current = self.store.current_explanations(fingerprint=self.explained.fingerprint, annotator=who)
        return {item: by[who].label for item, by in current.items() if who in by}

    def progress(self, who: str, answers: dict[str, CurrentAnswer]) -> dict[str, int]:
        """Items of both kinds: queued, judged, complete."""
        judged = [a for hid, a in answers.items() if hid in self.hypothesis_ids and a.category is not None]
        explained = sum(1 for item in self.explanation_labels(who) if item in self.explained_ids)
        return {
            "total": len(self.hypothesis_ids) + len(self.explained_ids),
            "judged": len(judged) + explained,
            "complete": sum(1 for a in judged if a.complete) + explained,
        }
