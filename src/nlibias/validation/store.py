"""Every human judgement and model suggestion, in ``RUN/validation/annotations.sqlite`` (WAL): an
append-only log whose latest row per answer is the current one; each answer commits on its own
connection, so threads, processes and killed servers lose nothing."""

from __future__ import annotations

import json
import re
import sqlite3
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import astuple, dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Annotated, Any, Literal, get_args

from nlibias.errors import ConfigError, NlibiasError
from nlibias.extension.validation_handoff import CATEGORIES
from nlibias.metrics.explanations import LABELS
from nlibias.runtime.sqlite_wal import database_fault, enable_wal, refuse_foreign_tables
from nlibias.schema import Stereotype
from nlibias.schema.declared import Refuse, declared

ANNOTATIONS_DB = "validation/annotations.sqlite"
Round = Literal["category", "stereotype"]
ROUNDS: tuple[Round, Round] = ("category", "stereotype")
ROUND_LABELS: dict[str, tuple[str, ...]] = {"category": CATEGORIES, "stereotype": get_args(Stereotype)}
EXPLANATION_ROUND = "explanation"
EXPLANATION_LABELS: tuple[str, ...] = LABELS
"""The labels of the explanations round (BBNLI-next appendix A.7; those of ``nlibias explain``)."""
ANNOTATOR_PATTERN = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.@-]{0,63}")
"""Annotator names, matched in full (``fullmatch``: ``$`` would let ``"ana\\n"`` pass as a second ``ana``)."""

_SCHEMA = """
CREATE TABLE IF NOT EXISTS judgements (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    hypothesis_id TEXT NOT NULL,
    annotator TEXT NOT NULL,
    round TEXT NOT NULL CHECK (round IN ('category', 'stereotype')),
    label TEXT NOT NULL,
    created_at TEXT NOT NULL,
    source TEXT NOT NULL DEFAULT 'app'
);
CREATE INDEX IF NOT EXISTS judgements_current ON judgements (hypothesis_id, annotator, round, id);
CREATE TABLE IF NOT EXISTS suggestions (
    hypothesis_id TEXT NOT NULL,
    judge TEXT NOT NULL,
    category TEXT,
    stereotype TEXT,
    score REAL,
    details TEXT NOT NULL DEFAULT '{}',
    created_at TEXT NOT NULL,
    PRIMARY KEY (hypothesis_id, judge)
);
CREATE TABLE IF NOT EXISTS explanation_judgements (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    item_id TEXT NOT NULL,
    annotator TEXT NOT NULL,
    label TEXT NOT NULL CHECK (label IN ('balanced', 'biased', 'invalid')),
    fingerprint TEXT NOT NULL,
    created_at TEXT NOT NULL,
    source TEXT NOT NULL DEFAULT 'app'
);
CREATE INDEX IF NOT EXISTS explanation_current ON explanation_judgements (item_id, annotator, id);
"""
_COLUMNS = {
    "judgements": ("id", "hypothesis_id", "annotator", "round", "label", "created_at", "source"),
    "explanation_judgements": ("id", "item_id", "annotator", "label", "fingerprint", "created_at", "source"),
    "suggestions": ("hypothesis_id", "judge", "category", "stereotype", "score", "details", "created_at"),
}


def now_iso() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds")


def _not_annotator(name: str) -> bool:
    return not ANNOTATOR_PATTERN.fullmatch(name)


Annotator = Annotated[
    str,
    Refuse(
        _not_annotator,
        lambda name: (
            f"name {name!r} is not allowed: use 1-64 letters, digits, '_', '.', '@' or '-', "
            "starting with a letter or digit"
        ),
    ),
]
"""An annotator's name (:data:`ANNOTATOR_PATTERN`), wherever one is given: the app's settings and
requests, the store, an adjudicator."""


@declared
def check_annotator(annotator: Annotator) -> str:
    """``annotator`` when it is a valid annotator name (:data:`Annotator`), else a ConfigError.

    >>> check_annotator("ana")
    'ana'
    """
    return annotator


def check_choice(value: str, allowed: Sequence[str], what: str, *, parameter: str) -> str:
    """``value`` when it is one of ``allowed``, else a ConfigError naming ``what`` and the choices."""
    if value not in allowed:
        raise ConfigError(f"unknown {what} {value!r}: use {', '.join(allowed)}", parameter=parameter)
    return value


@dataclass(frozen=True)
class JudgementRecord:
    """One answer as given (a row of the append-only log)."""

    id: int
    hypothesis_id: str
    annotator: str
    round: str
    """``category`` or ``stereotype``."""
    label: str
    created_at: str
    """UTC, ISO 8601 with milliseconds."""
    source: str = "app"
    """``app`` (the web app) or ``import:<file name>``."""


@dataclass(frozen=True)
class CurrentAnswer:
    """An annotator's latest answers for one hypothesis."""

    hypothesis_id: str
    annotator: str
    category: str | None
    stereotype_answer: str | None
    """The latest pro/anti answer, even if the category was later changed away from valid."""
    updated_at: str

    @property
    def stereotype(self) -> str | None:
        """pro / anti when the current category is valid, else None."""
        return self.stereotype_answer if self.category == "valid" else None

    @property
    def complete(self) -> bool:
        """Both rounds answered (a valid hypothesis also needs pro/anti)."""
        return self.category is not None and (self.category != "valid" or self.stereotype is not None)


@dataclass(frozen=True)
class Suggestion:
    """A model's suggested answer (a hint for the annotator, never an answer)."""

    hypothesis_id: str
    judge: str
    category: str | None
    stereotype: str | None
    score: float | None = None
    """The judge's confidence in its suggestion, 0-1."""
    details: Mapping[str, Any] = field(default_factory=dict)
    """What the suggestion rests on (probabilities, the text compared)."""
    created_at: str = ""


@dataclass(frozen=True)
class ExplanationJudgement:
    """One answer of the explanations round (a row of its append-only log)."""

    id: int
    item_id: str
    """The explained answer (:func:`nlibias.validation.explanation_queue.item_id`)."""
    annotator: str
    label: str
    """``balanced``, ``biased`` or ``invalid``."""
    fingerprint: str
    """SHA-256 of the ``explanations.jsonl`` whose queue the annotator judged."""
    created_at: str
    source: str = "app"


class AnnotationStore:
    """The annotation database of one run (see module doc)."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with self._connect() as db:
            refuse_foreign_tables(
                db,
                self.path,
                _COLUMNS,
                "an annotation database",
                fix="this run's validation/annotations.sqlite is another tool's database: move it aside",
            )
            db.executescript(_SCHEMA)

    @classmethod
    def for_run(cls, run_dir: str | Path) -> AnnotationStore:
        return cls(Path(run_dir) / ANNOTATIONS_DB)

    @contextmanager
    def _connect(self) -> Iterator[sqlite3.Connection]:
        try:
            db = sqlite3.connect(self.path, timeout=30.0, isolation_level=None)
        except sqlite3.Error as exc:
            raise self._fault(exc) from exc
        try:
            enable_wal(db, timeout_s=30.0)
            db.execute("PRAGMA synchronous=FULL")
            db.execute("PRAGMA busy_timeout=30000")
            yield db
        except sqlite3.Error as exc:
            raise self._fault(exc) from exc
        finally:
            db.close()

    def _fault(self, error: sqlite3.Error) -> NlibiasError:
        return database_fault(
            self.path,
            error,
            "the annotation database",
            elsewhere="run from a copy of the run directory on a writable disk",
            damaged_fix="it holds the annotators' answers, so do not delete it: restore it from a backup, or "
            "move it aside and re-import an export (`nlibias validate import`)",
        )

    def _insert(self, table: str, rows: Sequence[tuple[Any, ...]], verb: str = "INSERT") -> list[int]:
        """Append ``rows`` (the columns after any ``id``) to ``table`` in one transaction; their ids."""
        columns = _COLUMNS[table][1:] if _COLUMNS[table][0] == "id" else _COLUMNS[table]
        sql = f"{verb} INTO {table} ({', '.join(columns)}) VALUES ({', '.join('?' * len(columns))})"
        with self._connect() as db:
            db.execute("BEGIN IMMEDIATE")
            try:
                ids = [int(db.execute(sql, row).lastrowid or 0) for row in rows]
                db.execute("COMMIT")
            except BaseException:
                db.execute("ROLLBACK")
                raise
        return ids

    def _rows(self, table: str, annotator: str | None) -> list[tuple[Any, ...]]:
        """Every row of ``table`` (oldest first), optionally of one annotator."""
        query = f"SELECT {', '.join(_COLUMNS[table])} FROM {table}"
        where = "" if annotator is None else " WHERE annotator = ?"
        with self._connect() as db:
            return list(db.execute(query + where + " ORDER BY id", [] if annotator is None else [annotator]))

    # -- judgements -----------------------------------------------------------------------------

    def record(
        self,
        hypothesis_id: str,
        annotator: str,
        round_: str,
        label: str,
        *,
        source: str = "app",
        at: str | None = None,
    ) -> JudgementRecord:
        """Append one answer and commit it; returns the stored row."""
        return self.record_many([(hypothesis_id, annotator, round_, label)], source=source, at=at)[0]

    def record_many(
        self, answers: Iterable[tuple[str, str, str, str]], *, source: str = "app", at: str | None = None
    ) -> list[JudgementRecord]:
        """Append ``(hypothesis_id, annotator, round, label)`` answers in one transaction."""
        rows = list(answers)
        for annotator in dict.fromkeys(row[1] for row in rows):  # a bulk import: a few annotators, many rows
            check_annotator(annotator)
        for _, _, round_, label in rows:
            check_choice(round_, ROUNDS, "round", parameter="round_")
            check_choice(label, ROUND_LABELS[round_], f"{round_} label", parameter="label")
        stamp = at or now_iso()
        ids = self._insert("judgements", [(*row, stamp, source) for row in rows])
        return [JudgementRecord(i, *row, stamp, source) for i, row in zip(ids, rows, strict=True)]

    def history(self, *, annotator: str | None = None) -> list[JudgementRecord]:
        """Every answer ever given (oldest first), optionally of one annotator."""
        return [JudgementRecord(*row) for row in self._rows("judgements", annotator)]

    def current(self, *, annotator: str | None = None) -> dict[str, dict[str, CurrentAnswer]]:
        """Latest answers: hypothesis id → annotator → :class:`CurrentAnswer`."""
        latest: dict[tuple[str, str], dict[str, tuple[str, str]]] = {}
        for row in self.history(annotator=annotator):  # oldest first: the last one stays
            latest.setdefault((row.hypothesis_id, row.annotator), {})[row.round] = (row.label, row.created_at)
        out: dict[str, dict[str, CurrentAnswer]] = {}
        for (hid, who), rounds in sorted(latest.items()):
            category, stereotype = rounds.get("category"), rounds.get("stereotype")
            updated = max(stamp for _, stamp in rounds.values())
            out.setdefault(hid, {})[who] = CurrentAnswer(
                hid, who, category[0] if category else None, stereotype[0] if stereotype else None, updated
            )
        return out

    # -- suggestions ----------------------------------------------------------------------------

    def put_suggestions(self, suggestions: Iterable[Suggestion]) -> int:
        """Store (or replace) suggestions, keyed by (hypothesis, judge); returns how many."""
        stamp = now_iso()
        rows = [
            (*astuple(s)[:5], json.dumps(dict(s.details), sort_keys=True), s.created_at or stamp)
            for s in suggestions
        ]
        return len(self._insert("suggestions", rows, verb="INSERT OR REPLACE"))

    def suggestions(self) -> dict[str, list[Suggestion]]:
        """hypothesis id → its suggestions (by judge name)."""
        out: dict[str, list[Suggestion]] = {}
        with self._connect() as db:
            for hid, judge, category, stereotype, score, details, stamp in db.execute(
                "SELECT * FROM suggestions ORDER BY hypothesis_id, judge"
            ):
                out.setdefault(hid, []).append(
                    Suggestion(hid, judge, category, stereotype, score, json.loads(details), stamp)
                )
        return out

    # -- the explanations round -----------------------------------------------------------------

    def record_explanation(
        self,
        item_id: str,
        annotator: str,
        label: str,
        *,
        fingerprint: str,
        source: str = "app",
        at: str | None = None,
    ) -> ExplanationJudgement:
        """Append and commit one explanations-round answer given on the explanations ``fingerprint``."""
        check_annotator(annotator)
        check_choice(label, EXPLANATION_LABELS, "explanation label", parameter="label")
        row = (item_id, annotator, label, fingerprint, at or now_iso(), source)
        return ExplanationJudgement(self._insert("explanation_judgements", [row])[0], *row)

    def explanation_history(self, *, annotator: str | None = None) -> list[ExplanationJudgement]:
        """Every explanations-round answer ever given (oldest first), optionally of one annotator."""
        return [ExplanationJudgement(*row) for row in self._rows("explanation_judgements", annotator)]

    def current_explanations(
        self, *, fingerprint: str | None = None, annotator: str | None = None
    ) -> dict[str, dict[str, ExplanationJudgement]]:
        """Latest explanations-round answers: item id → annotator → answer; with ``fingerprint``,
        only those given on a queue of those explanations."""
        latest: dict[str, dict[str, ExplanationJudgement]] = {}
        for row in self.explanation_history(annotator=annotator):
            if fingerprint is None or row.fingerprint == fingerprint:
                latest.setdefault(row.item_id, {})[row.annotator] = row
        return {item: dict(sorted(by.items())) for item, by in sorted(latest.items())}
