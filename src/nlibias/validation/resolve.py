"""Final labels from several annotators' answers by a rule (``drop``, the paper's; ``majority``;
``adjudicator:NAME``: docs/validation.md, "Final labels"); a dropped or pending hypothesis gets an
empty judgement and the reason in ``note``.

>>> parse_rule("adjudicator:eve")
Rule(kind='adjudicator', adjudicator='eve')
"""

from __future__ import annotations

import warnings
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from nlibias.errors import ConfigError, SourceError
from nlibias.extension.validation_handoff import JUDGEMENTS_CSV, QueueRow, write_queue
from nlibias.validation.agreement import majority_label
from nlibias.validation.store import CurrentAnswer, check_annotator, check_choice

RULES = ("drop", "majority", "adjudicator:NAME")


@dataclass(frozen=True)
class Rule:
    kind: str
    """``drop``, ``majority`` or ``adjudicator``."""
    adjudicator: str | None = None


def parse_rule(text: str) -> Rule:
    """``drop`` | ``majority`` | ``adjudicator:NAME``."""
    kind, _, name = text.partition(":")
    if kind == "adjudicator" and name:
        return Rule("adjudicator", check_annotator(name))
    return Rule(check_choice(text, RULES, "resolution rule", parameter="rule"))  # adjudicator:NAME: above


@dataclass(frozen=True)
class ResolvedLabel:
    hypothesis_id: str
    judgement: str | None
    stereotype: str | None
    status: str
    """``resolved``, ``dropped`` (disagreement) or ``pending`` (not enough answers yet)."""
    reason: str
    annotators: int
    """How many annotators answered the category round."""


def _unanimous_or_majority(labels: Mapping[str, str], *, majority: bool) -> tuple[str | None, str]:
    if len(set(labels.values())) == 1:
        return next(iter(labels.values())), ""
    listing = ", ".join(f"{who}={label or '-'}" for who, label in sorted(labels.items()))
    if majority and (label := majority_label(list(labels.values()))) is not None:
        return label, f"majority ({listing})"
    return None, f"{'no majority' if majority else 'disagreement'} ({listing})"


def resolve_item(
    hypothesis_id: str,
    answers: Mapping[str, CurrentAnswer],
    rule: Rule,
    *,
    min_annotators: int = 1,
) -> ResolvedLabel:
    """The final label of one hypothesis under ``rule`` (see module doc)."""
    categories = {who: a.category for who, a in answers.items() if a.category is not None}

    def label(
        status: str, reason: str, judgement: str | None = None, stereotype: str | None = None
    ) -> ResolvedLabel:
        return ResolvedLabel(hypothesis_id, judgement, stereotype, status, reason, len(categories))

    waiting = "; waiting for the adjudicator" if rule.kind == "adjudicator" else ""
    on_conflict = "pending" if rule.kind == "adjudicator" else "dropped"
    if rule.kind == "adjudicator" and rule.adjudicator in categories:
        final = answers[rule.adjudicator]
        if final.category == "valid" and final.stereotype is None:
            return label("pending", "adjudicator gave no pro/anti")
        return label("resolved", f"adjudicator {rule.adjudicator}", final.category, final.stereotype)
    if len(categories) < max(1, min_annotators):
        return label("pending", f"{len(categories)} of {min_annotators} annotators")
    majority = rule.kind == "majority"
    category, why = _unanimous_or_majority(categories, majority=majority)
    if category is None:
        return label(on_conflict, f"category {why}{waiting}")
    if category != "valid":
        return label("resolved", why, category)
    stereotypes = {who: answers[who].stereotype for who, c in categories.items() if c == "valid"}
    missing = [who for who, s in stereotypes.items() if s is None]
    if missing:
        return label("pending", f"no pro/anti yet from {', '.join(missing)}")
    stereotype, why_s = _unanimous_or_majority({w: str(s) for w, s in stereotypes.items()}, majority=majority)
    if stereotype is None:
        return label(on_conflict, f"stereotype {why_s}{waiting}")
    return label("resolved", "; ".join(x for x in (why, why_s) if x), "valid", stereotype)


def resolve(
    queue: Sequence[QueueRow],
    current: Mapping[str, Mapping[str, CurrentAnswer]],
    rule: Rule,
    *,
    min_annotators: int = 1,
) -> list[ResolvedLabel]:
    """One :class:`ResolvedLabel` per queue row, in queue order."""
    return [
        resolve_item(
            row.hypothesis_id, current.get(row.hypothesis_id, {}), rule, min_annotators=min_annotators
        )
        for row in queue
    ]


class NothingResolvedWarning(UserWarning):
    """No hypothesis of the queue got a final label (the annotators disagree, or a pro/anti is missing)."""


def check_resolved(resolved: Sequence[ResolvedLabel], min_annotators: int, queue_file: Path) -> None:
    """Refuse final labels of which none could be resolved for want of answers (nobody judged yet,
    or fewer annotators than ``min_annotators``): the judgements file would hold no final label and
    ``extend --from validate`` would keep no hypothesis. Warn when none was resolved otherwise."""
    if not resolved or any(r.status == "resolved" for r in resolved):
        return
    most = max(r.annotators for r in resolved)
    if most == 0:
        fix = "judge them in `nlibias validate app`, or `nlibias validate import` judgements made elsewhere"
        raise SourceError(
            queue_file, None, "no hypothesis of the queue has been judged yet: nothing to resolve", fix=fix
        )
    if most < min_annotators:
        raise ConfigError(
            f"{{min_annotators}} {min_annotators}: no hypothesis has answers from {min_annotators} "
            f"annotators (the most any has is {most}), so all {len(resolved)} would stay pending and the "
            f"judgements file would hold no final label; pass {{min_annotators}} {most} or less, or "
            "resolve once more annotators have answered",
            parameter="min_annotators",
        )
    counts = ", ".join(
        f"{status} {count}" for status, count in sorted(Counter(r.status for r in resolved).items())
    )
    warnings.warn(
        f"no hypothesis of {queue_file} got a final label ({counts}; judgements.csv's note column "
        "says why): `extend --from validate` would keep none",
        NothingResolvedWarning,
        stacklevel=3,
    )


def resolution_summary(resolved: Sequence[ResolvedLabel]) -> dict[str, Any]:
    """Counts by status and by final category (paper Table 3 for the resolved ones)."""
    return {
        "hypotheses": len(resolved),
        "status": dict(Counter(r.status for r in resolved)),
        "categories": dict(Counter(r.judgement for r in resolved if r.judgement)),
        "stereotypes": dict(Counter(r.stereotype for r in resolved if r.stereotype)),
    }


def write_judgements(
    run_dir: str | Path, queue: Sequence[QueueRow], resolved: Sequence[ResolvedLabel]
) -> Path:
    """Write ``RUN/validation/judgements.csv`` (the queue's columns, judgement/stereotype filled,
    the reason in ``note``) atomically; ``read_judgements`` accepts it. Returns its path."""
    by_id = {r.hypothesis_id: r for r in resolved}
    rows, extra = [], []
    for row in queue:
        label = by_id.get(row.hypothesis_id) or ResolvedLabel(row.hypothesis_id, None, None, "pending", "", 0)
        judged, stereotype = label.judgement or "", label.stereotype or ""
        rows.append(replace(row, judgement=judged, stereotype=stereotype, note=label.reason))
        extra.append({"annotators": label.annotators, "resolution": label.status})
    return write_queue(Path(run_dir) / JUDGEMENTS_CSV, rows, extra)
