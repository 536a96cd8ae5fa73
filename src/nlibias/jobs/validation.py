"""``nlibias validate status``, ``resolve``, ``export`` and ``import`` as functions."""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from nlibias.extension.validation_handoff import QUEUE_CSV, RESOLUTION_JSON
from nlibias.io.atomic import atomic_write_text, write_json
from nlibias.io.fingerprint import sha256_file
from nlibias.io.overwrites import refuse_overwrites, run_files
from nlibias.schema.declared import PathArg, PositiveInt, declared, one_or_many
from nlibias.schema.paths import OutFile
from nlibias.validation.explanation_queue import AnnotationRound, QueueWarning
from nlibias.validation.formats import (
    ExportFormat,
    ImportFormat,
    export_judgements,
    read_import,
    store_imported,
)
from nlibias.validation.resolve import check_resolved, parse_rule, resolution_summary, write_judgements
from nlibias.validation.resolve import resolve as resolve_labels
from nlibias.validation.status import unjudged_count, validation_status
from nlibias.validation.store import Annotator


@dataclass(frozen=True)
class ExportResult:
    """The queue with every annotator's current answers, as text in ``fmt``."""

    fmt: str
    text: str
    out: Path | None
    """Where the text was written (None: not written)."""


@dataclass(frozen=True)
class ImportResult:
    """Judgements made elsewhere, added to a run's annotation database."""

    file: Path
    answers: int
    """Judgements read (a hypothesis judged by one annotator)."""
    rows: int
    """Answers stored (a category and a stereotype are two)."""
    annotators: tuple[str, ...]
    unjudged_hypotheses: int
    """Queued hypotheses that still have no judgement from anyone."""
    queue: int

    def to_dict(self) -> dict[str, Any]:
        """What ``nlibias validate import --json`` prints."""
        return {**asdict(self), "file": str(self.file), "annotators": list(self.annotators)}


@declared
def status(
    run_dir: PathArg,
    *,
    rule: str = "drop",
    min_annotators: PositiveInt = 1,
    exclude: str | Sequence[str] = (),
) -> dict[str, Any]:
    """How far the human validation of an ``extend`` run is: progress per annotator, agreement
    (percent, Cohen's/Fleiss' kappa) per round, label and subtopic (``exclude``: annotators left
    out of the agreement), and a preview of the resolution with ``rule`` (``drop``, ``majority``,
    ``adjudicator:NAME``); as ``nlibias validate status``.

    >>> # nlibias.validation_status("runs/next")["progress"]"""
    return validation_status(
        run_dir,
        rule=parse_rule(rule),
        min_annotators=min_annotators,
        exclude_from_agreement=one_or_many(exclude),
    )


@declared
def resolve(run_dir: PathArg, *, rule: str = "drop", min_annotators: PositiveInt = 1) -> dict[str, Any]:
    """Write the final labels of an ``extend`` run's queue to ``validation/judgements.csv`` (then
    ``extend(..., from_stage="validate")``); as ``nlibias validate resolve``. Returns the counts by
    status, category and stereotype, the rule and the file.

    >>> # nlibias.validation_resolve("runs/next", rule="majority")["status"]"""
    parsed = parse_rule(rule)
    round_ = _opened(run_dir, "nothing was resolved, and the judgements file holds no row")
    resolved = resolve_labels(round_.queue, round_.store.current(), parsed, min_annotators=min_annotators)
    check_resolved(resolved, min_annotators, Path(run_dir) / QUEUE_CSV)
    path = write_judgements(run_dir, round_.queue, resolved)
    # beside the judgements, for the dataset card: the rule, who judged and how far they agreed
    report = validation_status(run_dir, rule=parsed, min_annotators=min_annotators)
    keep = ("annotators", "items", "percent", "kappa", "kappa_kind")
    record = {
        "judgements_sha256": sha256_file(path),
        "rule": report["rule"],
        "min_annotators": min_annotators,
        "agreement": {name: {k: rnd.get(k) for k in keep} for name, rnd in report["agreement"].items()},
        "left_out_of_agreement": report["left_out_of_agreement"],
    }
    write_json(Path(run_dir) / RESOLUTION_JSON, record)
    return {**resolution_summary(resolved), "rule": rule, "judgements": str(path)}


def _opened(run_dir: PathArg, outcome: str) -> AnnotationRound:
    """The run's annotation round; an empty queue (a run whose filters kept nothing) is warned of,
    saying what that leaves (a faithful, empty result)."""
    round_ = AnnotationRound.open(run_dir)
    if not round_.queue:
        warnings.warn(
            f"{Path(run_dir) / QUEUE_CSV} holds no hypotheses (the extend run kept none to validate): {outcome}",
            QueueWarning,
            stacklevel=3,
        )
    return round_


@declared
def export(run_dir: PathArg, *, fmt: ExportFormat = "csv", out: OutFile | None = None) -> ExportResult:
    """An ``extend`` run's queue with every annotator's current answers (and model suggestions) as
    ``fmt`` (``csv``, ``label-studio``, ``argilla``), written to ``out`` when given; as
    ``nlibias validate export``.

    >>> # nlibias.validation_export("runs/next", fmt="label-studio").text"""
    refuse_overwrites({"out": out}, {"run": run_files(run_dir)})  # the queue or the database, say
    round_ = _opened(run_dir, "nothing was exported")
    text = export_judgements(round_.queue, round_.store.current(), round_.store.suggestions(), fmt=fmt)
    if out is not None:
        atomic_write_text(out, text)
    return ExportResult(fmt, text, None if out is None else Path(out))


@declared
def import_judgements(
    run_dir: PathArg, file: PathArg, *, fmt: ImportFormat = "auto", annotator: Annotator | None = None
) -> ImportResult:
    """Add judgements made elsewhere (``file``: CSV, Label Studio JSON export or Argilla records;
    ``fmt`` ``auto`` tells them apart) to an ``extend`` run's annotation database; ``annotator``
    for rows that name none. Unknown or duplicate rows are refused, naming the file and line; as
    ``nlibias validate import``.

    >>> # nlibias.validation_import("runs/next", "judged.csv", annotator="ana").answers"""
    file = Path(file)
    round_ = AnnotationRound.open(run_dir)
    answers = read_import(file, round_.queue, fmt=fmt, default_annotator=annotator)
    rows = store_imported(round_.store, answers, source=f"import:{file.name}")
    annotators = tuple(sorted({a.annotator for a in answers}))
    unjudged = unjudged_count(round_.queue, round_.store.current())
    queued = len(round_.queue)
    return ImportResult(file, len(answers), rows, annotators, unjudged_hypotheses=unjudged, queue=queued)
