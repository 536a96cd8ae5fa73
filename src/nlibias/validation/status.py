"""What ``nlibias validate status`` reports: progress, agreement, resolution preview, pre-screen quality."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import asdict
from pathlib import Path
from typing import Any

from nlibias.errors import ConfigError, SourceError, did_you_mean
from nlibias.extension.validation_handoff import JUDGEMENTS_CSV, QueueRow
from nlibias.schema.declared import PathArg, PositiveInt, declared
from nlibias.validation.agreement import agreement_report, judge_agreement, majority_label
from nlibias.validation.explanation_queue import (
    AnnotationRound,
    ExplanationQueue,
    explanations_fingerprint,
    read_explanation_queue,
)
from nlibias.validation.resolve import ResolvedLabel, Rule, resolution_summary, resolve
from nlibias.validation.store import (
    EXPLANATION_LABELS,
    EXPLANATION_ROUND,
    ROUND_LABELS,
    AnnotationStore,
    CurrentAnswer,
    Suggestion,
)

_JUDGE_COUNTS = ("compared", "category_agree", "stereotype_compared", "stereotype_agree")


def progress(
    queue: Sequence[QueueRow], current: Mapping[str, Mapping[str, CurrentAnswer]]
) -> dict[str, dict[str, Any]]:
    """Per annotator: hypotheses with a category, complete (valid ones with pro/anti), percent done."""
    total = len(queue)
    ids = {row.hypothesis_id for row in queue}
    out: dict[str, dict[str, Any]] = {}
    for hid, by in current.items():
        if hid not in ids:
            continue
        for who, answer in by.items():
            entry = out.setdefault(
                who, {"judged": 0, "complete": 0, "categories": Counter(), "last_answer": ""}
            )
            if answer.category is not None:
                entry["judged"] += 1
                entry["categories"][answer.category] += 1
            if answer.complete:
                entry["complete"] += 1
            entry["last_answer"] = max(entry["last_answer"], answer.updated_at)
    for entry in out.values():
        entry["categories"] = dict(entry["categories"])
        entry["total"] = total
        entry["percent_complete"] = 100.0 * entry["complete"] / total if total else 0.0
    return dict(sorted(out.items()))


def prescreen_agreement(
    suggestions: Mapping[str, Sequence[Suggestion]], resolved: Sequence[ResolvedLabel]
) -> dict[str, dict[str, Any]]:
    """Per judge: how often its category (and, on valid hypotheses, its pro/anti) matched the final
    human label."""
    final = {r.hypothesis_id: r for r in resolved if r.status == "resolved"}
    out: dict[str, dict[str, Any]] = {}
    for hid, items in suggestions.items():
        label = final.get(hid)
        if label is None:
            continue
        for suggestion in items:
            entry = out.setdefault(
                suggestion.judge, {**dict.fromkeys(_JUDGE_COUNTS, 0), "confusion": Counter()}
            )
            if suggestion.category is not None:
                entry["compared"] += 1
                entry["category_agree"] += int(suggestion.category == label.judgement)
                entry["confusion"][f"{suggestion.category}->{label.judgement}"] += 1
            if label.judgement == "valid" and suggestion.stereotype is not None:
                entry["stereotype_compared"] += 1
                entry["stereotype_agree"] += int(suggestion.stereotype == label.stereotype)
    for entry in out.values():
        entry["confusion"] = dict(sorted(entry["confusion"].items()))
        for name, compared in (("category", "compared"), ("stereotype", "stereotype_compared")):
            agreed = entry[f"{name}_agree"]
            entry[f"{name}_percent"] = 100.0 * agreed / entry[compared] if entry[compared] else None
    return dict(sorted(out.items()))


def unjudged_count(queue: Sequence[QueueRow], current: Mapping[str, Mapping[str, Any]]) -> int:
    """Queued hypotheses that no annotator has given a category yet."""
    judged = {hid for hid, by in current.items() if any(a.category is not None for a in by.values())}
    return sum(1 for row in queue if row.hypothesis_id not in judged)


@declared
def validation_status(
    run_dir: PathArg,
    *,
    rule: Rule,
    min_annotators: PositiveInt = 1,
    exclude_from_agreement: Sequence[str] = (),
) -> dict[str, Any]:
    """Progress per annotator, agreement per round, the final labels ``rule`` would give and each
    pre-screen judge's agreement; an explanations queue's round under ``explanations``."""
    run = AnnotationRound.open(run_dir)
    report: dict[str, Any] = {"run_dir": str(run_dir)}
    if run.hypotheses is not None:
        report |= _hypotheses_status(run, run.hypotheses, rule, min_annotators, exclude_from_agreement)
    if run.explained is not None:
        report["explanations"] = _explanations_status(run, run.explained, exclude_from_agreement)
    _check_excluded(run.store, exclude_from_agreement)
    return report


def _check_excluded(store: AnnotationStore, excluded: Sequence[str]) -> None:
    """An excluded name that gave no judgement leaves out nobody (a typo: the one meant still
    decides); names that leave out every annotator leave the agreement (and the judges' reference)
    nobody's answers to compare."""
    if not excluded:
        return
    judged = {r.annotator for r in store.history()} | {r.annotator for r in store.explanation_history()}
    for name in excluded:
        if name not in judged:
            hint = did_you_mean(name, judged) or ("pass one of them" if judged else "leave {exclude} out")
            raise ConfigError(
                f"{{exclude}} {name!r}: no judgement of this run is by that annotator, so it leaves out "
                f"nobody (annotators: {', '.join(sorted(judged)) or 'none yet'}); {hint}",
                parameter="exclude",
            )
    if judged <= set(excluded):
        raise ConfigError(
            f"{{exclude}} leaves out every annotator who judged this run ({', '.join(sorted(judged))}): "
            "the agreement would be computed over nobody; "
            "leave out fewer, or leave {exclude} out",
            parameter="exclude",
        )


def _hypotheses_status(
    run: AnnotationRound,
    queue: Sequence[QueueRow],
    rule: Rule,
    min_annotators: int,
    exclude_from_agreement: Sequence[str],
) -> dict[str, Any]:
    """The hypotheses rounds (category, stereotype) of an extension run's ``validation/queue.csv``."""
    if (run.run_dir / JUDGEMENTS_CSV).is_dir():  # the report would look fine until resolve fails to write it
        reason = (
            "a folder stands where `validate resolve` writes the final labels for `extend --from validate`"
        )
        raise SourceError(run.run_dir / JUDGEMENTS_CSV, None, reason, fix="move the folder aside")
    store = run.store
    current = store.current()
    ids = run.hypothesis_ids
    subtopic_of = {row.hypothesis_id: row.subtopic for row in queue}
    excluded = set(exclude_from_agreement)
    if rule.adjudicator:
        excluded.add(rule.adjudicator)
    category: dict[str, dict[str, str]] = {}
    stereotype: dict[str, dict[str, str]] = {}
    for hid, by in current.items():
        if hid not in ids:
            continue
        for who, answer in by.items():
            if who in excluded:
                continue
            if answer.category is not None:
                category.setdefault(hid, {})[who] = answer.category
            if answer.stereotype is not None:
                stereotype.setdefault(hid, {})[who] = answer.stereotype
    annotators = sorted({w for by in category.values() for w in by})
    shared: dict[str, Any] = {"subtopic_of": subtopic_of, "annotators": annotators}
    rounds = {
        name: asdict(agreement_report(answers, round_name=name, labels=ROUND_LABELS[name], **shared))
        for name, answers in (("category", category), ("stereotype", stereotype))
    }
    resolved = resolve(queue, current, rule, min_annotators=min_annotators)
    return {
        "queue": len(queue),
        "stale_judgements": sum(1 for hid in current if hid not in ids),
        "unjudged": unjudged_count(queue, current),
        "progress": progress(queue, current),
        "agreement": rounds,
        # an adjudicator answers the disagreements, not a sample: left out of agreement, and said so
        "left_out_of_agreement": {
            who: "the adjudicator" if who == rule.adjudicator else "excluded" for who in sorted(excluded)
        },
        "rule": rule.kind if not rule.adjudicator else f"adjudicator:{rule.adjudicator}",
        "resolution": resolution_summary(resolved),
        "prescreen": prescreen_agreement(store.suggestions(), resolved),
    }


def explanations_status(run_dir: str | Path, *, exclude_from_agreement: Sequence[str] = ()) -> dict[str, Any]:
    """The explanations round: progress per annotator, human agreement, and each judge's agreement
    with the humans' majority label (ties left out); ``stale``: the explanations changed since the draw."""
    queue = read_explanation_queue(run_dir)
    run = AnnotationRound(Path(run_dir), None, queue, AnnotationStore.for_run(run_dir))
    return _explanations_status(run, queue, exclude_from_agreement)


def _explanations_status(
    run: AnnotationRound, queue: ExplanationQueue, exclude_from_agreement: Sequence[str]
) -> dict[str, Any]:
    current_fp = explanations_fingerprint(run.run_dir)
    store = run.store
    answers = store.current_explanations(fingerprint=queue.fingerprint)
    ids = run.explained_ids
    excluded = set(exclude_from_agreement)
    human = {
        item: {who: a.label for who, a in by.items() if who not in excluded}
        for item, by in answers.items()
        if item in ids
    }
    human = {item: by for item, by in human.items() if by}
    subtopic_of = {item.item_id: item.subtopic for item in queue.items}
    agreement = agreement_report(
        human, round_name=EXPLANATION_ROUND, labels=EXPLANATION_LABELS, subtopic_of=subtopic_of
    )
    reference = {item: label for item, by in human.items() if (label := majority_label(list(by.values())))}
    judged = {judge: {it.item_id: it.labels.get(judge) for it in queue.items} for judge in queue.judges}
    if queue.lm_judge is not None:
        judged[queue.lm_judge] = {item.item_id: item.lm_label for item in queue.items}
    judges = {
        judge: {
            "kind": "lm" if judge == queue.lm_judge else "nli",
            **judge_agreement(labels, reference, EXPLANATION_LABELS),
        }
        for judge, labels in judged.items()
    }
    every = store.current_explanations()
    return {
        "queue": len(queue.items),
        "available": queue.available,
        "seed": queue.seed,
        "stratified_by": queue.stratified_by,
        "fingerprint": queue.fingerprint,
        "stale": current_fp != queue.fingerprint,
        "other_fingerprint_judgements": sum(
            1 for by in every.values() for a in by.values() if a.fingerprint != queue.fingerprint
        ),
        "unjudged": sum(1 for item in ids if not answers.get(item)),
        "progress": _explanation_progress(ids, answers),
        "agreement": asdict(agreement),
        "reference": {"items": len(reference), "rule": "majority (more than half; ties left out)"},
        "judges": judges,
    }


def _explanation_progress(
    ids: set[str], answers: Mapping[str, Mapping[str, Any]]
) -> dict[str, dict[str, Any]]:
    """Per annotator: explained answers judged, of the queue, and the labels given."""
    out: dict[str, dict[str, Any]] = {}
    for item, by in answers.items():
        if item not in ids:
            continue
        for who, answer in by.items():
            entry = out.setdefault(who, {"judged": 0, "labels": Counter()})
            entry["judged"] += 1
            entry["labels"][answer.label] += 1
    for entry in out.values():
        entry["labels"] = dict(sorted(entry["labels"].items()))
        entry["total"] = len(ids)
        entry["percent_complete"] = 100.0 * entry["judged"] / len(ids) if ids else 0.0
    return dict(sorted(out.items()))
