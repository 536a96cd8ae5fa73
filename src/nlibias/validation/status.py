"""What ``nlibias validate status`` reports: progress, agreement, resolution preview, pre-screen quality.

>>> # report = validation_status("runs/next", rule=parse_rule("drop"))
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import asdict
from pathlib import Path
from typing import Any

from nlibias.extension.validation_handoff import QUEUE_CSV, QueueRow, read_queue
from nlibias.validation.agreement import agreement_report
from nlibias.validation.resolve import ResolvedLabel, Rule, resolution_summary, resolve
from nlibias.validation.store import ROUND_LABELS, AnnotationStore, CurrentAnswer, Suggestion


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
    """Per judge: how often its suggestion matched the final human label (resolved hypotheses only).

    ``category``: suggested category == final category; ``stereotype``: on hypotheses finally
    valid for which the judge suggested pro/anti, suggested == final.
    """
    final = {r.hypothesis_id: r for r in resolved if r.status == "resolved"}
    out: dict[str, dict[str, Any]] = {}
    for hid, items in suggestions.items():
        label = final.get(hid)
        if label is None:
            continue
        for suggestion in items:
            entry = out.setdefault(
                suggestion.judge,
                {
                    "compared": 0,
                    "category_agree": 0,
                    "stereotype_compared": 0,
                    "stereotype_agree": 0,
                    "confusion": Counter(),
                },
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
        entry["category_percent"] = (
            100.0 * entry["category_agree"] / entry["compared"] if entry["compared"] else None
        )
        entry["stereotype_percent"] = (
            100.0 * entry["stereotype_agree"] / entry["stereotype_compared"]
            if entry["stereotype_compared"]
            else None
        )
    return dict(sorted(out.items()))


def unjudged_count(queue: Sequence[QueueRow], current: Mapping[str, Mapping[str, Any]]) -> int:
    """Queued hypotheses that no annotator has given a category yet.

    >>> from types import SimpleNamespace as N
    >>> unjudged_count([N(hypothesis_id="a"), N(hypothesis_id="b")], {"a": {"ana": N(category="valid")}})
    1
    """
    return sum(
        1
        for row in queue
        if not any(answer.category is not None for answer in current.get(row.hypothesis_id, {}).values())
    )


def validation_status(
    run_dir: str | Path,
    *,
    rule: Rule,
    min_annotators: int = 1,
    exclude_from_agreement: Sequence[str] = (),
) -> dict[str, Any]:
    """Progress per annotator, agreement per round (overall, per label, per subtopic), the final
    labels ``rule`` would give, and how often each pre-screen judge agreed with them."""
    if isinstance(min_annotators, bool) or not isinstance(min_annotators, int) or min_annotators < 1:
        from nlibias.errors import ConfigError

        raise ConfigError(
            f"min_annotators is {min_annotators!r}; a hypothesis needs at least 1 answer to be resolved",
            parameter="min_annotators",
        )
    run_dir = Path(run_dir)
    queue = read_queue(run_dir / QUEUE_CSV)
    store = AnnotationStore.for_run(run_dir)
    current = store.current()
    ids = {row.hypothesis_id for row in queue}
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
    rounds = {
        "category": asdict(
            agreement_report(
                category,
                round_name="category",
                labels=ROUND_LABELS["category"],
                subtopic_of=subtopic_of,
                annotators=annotators,
            )
        ),
        "stereotype": asdict(
            agreement_report(
                stereotype,
                round_name="stereotype",
                labels=ROUND_LABELS["stereotype"],
                subtopic_of=subtopic_of,
                annotators=annotators,
            )
        ),
    }
    resolved = resolve(queue, current, rule, min_annotators=min_annotators)
    return {
        "run_dir": str(run_dir),
        "queue": len(queue),
        "stale_judgements": sum(1 for hid in current if hid not in ids),
        "unjudged": unjudged_count(queue, current),
        "progress": progress(queue, current),
        "agreement": rounds,
        "rule": rule.kind if not rule.adjudicator else f"adjudicator:{rule.adjudicator}",
        "resolution": resolution_summary(resolved),
        "prescreen": prescreen_agreement(store.suggestions(), resolved),
    }
