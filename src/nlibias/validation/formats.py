"""Export the queue with its judgements, and import judgements made elsewhere: ``csv`` (one row
per hypothesis and annotator), ``label-studio`` (tasks; :func:`label_studio_config` is the
interface) and ``argilla`` (2.x record dicts); a bad import is refused naming its line or record."""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from importlib.resources import files
from pathlib import Path
from typing import Annotated, Any

from annotated_types import Predicate

from nlibias.errors import SourceError
from nlibias.extension.validation_handoff import (
    QUEUE_COLUMNS,
    QueueIndex,
    QueueRow,
    judged_rows,
    judgement_problem,
)
from nlibias.io.jsonl import read_json_file
from nlibias.schema.applies import option_applies_to_nothing
from nlibias.schema.declared import Allowed, PathArg, declared
from nlibias.validation.store import (
    ANNOTATOR_PATTERN,
    AnnotationStore,
    Annotator,
    CurrentAnswer,
    Suggestion,
)

FORMATS = ("csv", "label-studio", "argilla")
ExportFormat = Annotated[str, Predicate(FORMATS.__contains__), Allowed(f"one of {str(FORMATS)[1:-1]}")]
ImportFormat = Annotated[
    str,
    Predicate(("auto", *FORMATS).__contains__),
    Allowed(f"one of 'auto', {str(FORMATS)[1:-1]}"),
]
CSV_COLUMNS: tuple[str, ...] = (
    *(c for c in QUEUE_COLUMNS if c not in ("judgement", "stereotype", "note")),
    "annotator",
    "judgement",
    "stereotype",
    "updated_at",
)


@dataclass(frozen=True)
class ImportedAnswer:
    """One annotator's answers to one hypothesis, read from a file."""

    hypothesis_id: str
    annotator: str
    category: str
    stereotype: str | None
    where: str
    """``line N`` (CSV) or ``record N`` (JSON), for messages."""


@declared
def export_judgements(
    queue: Sequence[QueueRow],
    current: Mapping[str, Mapping[str, CurrentAnswer]],
    suggestions: Mapping[str, Sequence[Suggestion]] | None = None,
    *,
    fmt: ExportFormat = "csv",
) -> str:
    """The queue and every annotator's current answers as text in ``fmt``."""
    if fmt == "csv":
        return _export_csv(queue, current)
    export = _label_studio_tasks if fmt == "label-studio" else _argilla_records
    return json.dumps(export(queue, current, suggestions or {}), indent=1, ensure_ascii=False) + "\n"


def _export_csv(queue: Sequence[QueueRow], current: Mapping[str, Mapping[str, CurrentAnswer]]) -> str:
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=CSV_COLUMNS, lineterminator="\n")
    writer.writeheader()
    for row in queue:
        answers = current.get(row.hypothesis_id, {})
        if not answers:
            writer.writerow(row.data())  # the answer columns empty
        for who, answer in sorted(answers.items()):
            judged = {"judgement": answer.category or "", "stereotype": answer.stereotype or ""}
            writer.writerow({**row.data(), "annotator": who, **judged, "updated_at": answer.updated_at})
    return out.getvalue()


def _judged(
    current: Mapping[str, Mapping[str, CurrentAnswer]], row: QueueRow
) -> list[tuple[str, CurrentAnswer]]:
    """``(annotator, answer)`` for each annotator who judged the row, by name."""
    return [
        (who, a) for who, a in sorted(current.get(row.hypothesis_id, {}).items()) if a.category is not None
    ]


def _questions(category: str | None, stereotype: str | None) -> list[tuple[str, str]]:
    """``(question, value)`` of the judgement and the stereotype, each when given."""
    return [
        (question, value)
        for question, value in (("judgement", category), ("stereotype", stereotype))
        if value
    ]


def _choices(category: str | None, stereotype: str | None) -> list[dict[str, Any]]:
    """An answer's or a suggestion's Label Studio ``result``: a ``choices`` item per question."""
    return [
        {"from_name": question, "to_name": "hypothesis", "type": "choices", "value": {"choices": [value]}}
        for question, value in _questions(category, stereotype)
    ]


def _label_studio_tasks(
    queue: Sequence[QueueRow],
    current: Mapping[str, Mapping[str, CurrentAnswer]],
    suggestions: Mapping[str, Sequence[Suggestion]],
) -> list[dict[str, Any]]:
    tasks = []
    for index, row in enumerate(queue, start=1):
        annotations = [
            {
                "completed_by": {"email": who},
                "result": _choices(answer.category, answer.stereotype),
                "updated_at": answer.updated_at,
            }
            for who, answer in _judged(current, row)
        ]
        predictions = [
            {
                "model_version": suggestion.judge,
                "score": suggestion.score,
                "result": _choices(suggestion.category, suggestion.stereotype),
            }
            for suggestion in suggestions.get(row.hypothesis_id, [])
        ]
        tasks.append(
            {"id": index, "data": row.data(), "annotations": annotations, "predictions": predictions}
        )
    return tasks


def label_studio_config() -> str:
    """The Label Studio labeling interface that matches the ``label-studio`` export."""
    return (files("nlibias.validation") / "static" / "label_studio.xml").read_text(encoding="utf-8")


_ARGILLA_FIELDS = ("hypothesis", "bbnli_template", "masked_template", "example_premise")
_ARGILLA_METADATA = ("subtopic", "domain", "fill_word", "suggested_stereotype", "samples")


def _argilla_records(
    queue: Sequence[QueueRow],
    current: Mapping[str, Mapping[str, CurrentAnswer]],
    suggestions: Mapping[str, Sequence[Suggestion]],
) -> list[dict[str, Any]]:
    records = []
    for row in queue:
        responses: dict[str, list[dict[str, Any]]] = {"judgement": [], "stereotype": []}
        for who, answer in _judged(current, row):
            for question, value in _questions(answer.category, answer.stereotype):
                responses[question].append({"value": value, "user_id": who, "status": "submitted"})
        suggested: dict[str, dict[str, Any]] = {}
        for suggestion in suggestions.get(row.hypothesis_id, [])[:1]:  # Argilla keeps one per question
            for question, value in _questions(suggestion.category, suggestion.stereotype):
                suggested[question] = {"value": value, "score": suggestion.score, "agent": suggestion.judge}
        records.append(
            {
                "id": row.hypothesis_id,
                "fields": {name: getattr(row, name) for name in _ARGILLA_FIELDS},
                "metadata": {name: getattr(row, name) for name in _ARGILLA_METADATA},
                "responses": {k: v for k, v in responses.items() if v},
                "suggestions": suggested,
            }
        )
    return records


SHAPES: dict[str, tuple[str, tuple[str, ...]]] = {
    "label-studio": ("a Label Studio task", ("data", "annotations")),
    "argilla": ("an Argilla record", ("fields", "responses", "metadata", "suggestions")),
}
"""Each JSON format's item, and the keys that are its own (a Label Studio task's, an Argilla 2.x
record's; ``id`` they share)."""


def _shape(item: Mapping[str, Any]) -> str | None:
    """The JSON format whose own keys ``item`` has (Label Studio first: its ``data`` is required)."""
    return next((fmt for fmt, (_, keys) in SHAPES.items() if any(key in item for key in keys)), None)


def detect_format(path: Path) -> str:
    """``csv`` for .csv files; for JSON, ``label-studio`` (tasks with ``data``) or ``argilla``."""
    if path.suffix.lower() == ".csv":
        return "csv"
    data = read_json_file(path)
    if isinstance(data, list) and data and isinstance(data[0], dict):
        return "label-studio" if _shape(data[0]) == "label-studio" else "argilla"
    reason = "cannot tell the format: expected a JSON list of tasks or records"
    raise SourceError(path, None, reason, fix="name the format: label-studio, argilla or csv")


class _Checker:
    """Validates imported answers against the queue and collects them."""

    def __init__(self, path: Path, queue: Sequence[QueueRow], default_annotator: str | None) -> None:
        self.path = path
        self.index = QueueIndex(queue)
        self.default_annotator = default_annotator
        self.defaulted = False
        self.seen: dict[tuple[str, str], str] = {}
        self.answers: list[ImportedAnswer] = []

    def fail(self, where: str, field: str, reason: str, fix: str | None = None) -> SourceError:
        if where.startswith("line "):
            return SourceError(self.path, field, reason, line=int(where[5:]), fix=fix)
        return SourceError(self.path, f"{where}: {field}", reason, fix=fix)

    def resolve_id(self, where: str, hid: Any, subtopic: Any, hypothesis: Any) -> str:
        found = self.index.find(*(str(value or "") for value in (hid, subtopic, hypothesis)))
        if isinstance(found, tuple):
            raise self.fail(where, *found)
        return found

    def add(self, where: str, hid: str, annotator: str, category: str, stereotype: str) -> None:
        self.defaulted |= not annotator
        annotator = annotator or (self.default_annotator or "")
        if not annotator:
            fix = "add an annotator column or name a default annotator"
            raise self.fail(where, "annotator", "no annotator", fix=fix)
        if not ANNOTATOR_PATTERN.fullmatch(annotator):
            reason = f"annotator name {annotator!r} is not allowed"
            raise self.fail(where, "annotator", reason, fix="letters, digits, _.@-")
        category, stereotype = category.lower(), stereotype.lower()
        problem = judgement_problem(category, stereotype, need_stereotype=False)  # the one rule
        if problem is not None:
            raise self.fail(where, *problem)
        key = (hid, annotator)
        if key in self.seen:
            twice = f"duplicate: {annotator} already judged {hid} ({self.seen[key]})"
            raise self.fail(where, "hypothesis_id", twice, fix="keep one row per hypothesis and annotator")
        self.seen[key] = where
        self.answers.append(ImportedAnswer(hid, annotator, category, stereotype or None, where))


@declared
def read_import(
    path: PathArg,
    queue: Sequence[QueueRow],
    *,
    fmt: ImportFormat = "auto",
    default_annotator: Annotator | None = None,
) -> list[ImportedAnswer]:
    """Answers in a CSV / Label Studio / Argilla file, validated against ``queue`` (see module doc)."""
    path = Path(path)
    if not path.exists():
        raise SourceError(path, None, "file does not exist")
    fmt = detect_format(path) if fmt == "auto" else fmt
    checker = _Checker(path, queue, default_annotator)
    found = "no judged row under the header"
    if fmt == "csv":
        _read_csv(path, checker)
    else:
        data = read_json_file(path)
        if not isinstance(data, list):
            raise SourceError(path, None, "expected a JSON list")
        reader = _read_label_studio if fmt == "label-studio" else _read_argilla
        for number, item in enumerate(data, start=1):
            if not isinstance(item, dict):
                raise SourceError(path, f"record {number}", "expected an object")
            _refuse_other_shape(path, f"record {number}", item, fmt)
            reader(f"record {number}", item, checker)
        noun = "tasks" if fmt == "label-studio" else "records"
        found = f"{noun} without a submitted judgement: all {len(data)}" if data else "an empty list"
    if not checker.answers:
        fix = "import the file that holds the judgements (Label Studio: export the tasks with their annotations)"
        raise SourceError(path, None, f"no judgement to import: {found}", fix=fix)
    if default_annotator is not None and not checker.defaulted:  # the judgements would go to the rows' own
        given = f"every judged row of {path} names its own"
        raise option_applies_to_nothing(
            "annotator", "rows that name no annotator", value=default_annotator, given=given
        )
    return checker.answers


def _refuse_other_shape(path: Path, where: str, item: Mapping[str, Any], fmt: str) -> None:
    """Refuse an item of the other JSON format (none of ``fmt``'s own keys, some of the other's): read
    as ``fmt``, its ids and answers would be looked for where they are not."""
    shape = _shape(item)
    if shape is None or shape == fmt or any(key in item for key in SHAPES[fmt][1]):
        return
    (other, keys), (expected, own) = SHAPES[shape], SHAPES[fmt]
    has = ", ".join(key for key in keys if key in item)
    reason = (
        f"{other} (it has {has}), not {expected} ({', '.join(own)}) as {{fmt}} {fmt} reads: "
        f"the file is in {shape}'s format"
    )
    fix = f"pass {{fmt}} {shape}, or leave {{fmt}} out to tell the format from the file"
    raise SourceError(path, where, reason, fix=fix, parameter="fmt")


def _read_csv(path: Path, checker: _Checker) -> None:
    expected = "hypothesis_id, annotator, judgement, stereotype"
    for line, hid, value in judged_rows(path, checker.index, expected=expected):
        checker.add(f"line {line}", hid, value("annotator"), value("judgement"), value("stereotype"))


def _typed(checker: _Checker, where: str, field: str, value: Any, kind: type, default: Any) -> Any:
    """``value`` when it is a ``kind`` (``default`` when missing); another type is refused."""
    if value is None:
        return default
    if not isinstance(value, kind):
        expected = "an object" if kind is dict else "a list" if kind is list else kind.__name__
        raise checker.fail(where, field, f"expected {expected}, got {type(value).__name__}")
    return value


def _objects(checker: _Checker, where: str, field: str, value: Any) -> list[Mapping[str, Any]]:
    items = _typed(checker, where, field, value, list, [])
    for index, item in enumerate(items):
        if not isinstance(item, dict):
            raise checker.fail(where, f"{field}[{index}]", f"expected an object, got {type(item).__name__}")
    return items


def _first_choice(result: Any, name: str) -> str:
    for entry in result if isinstance(result, list) else []:
        if isinstance(entry, dict) and entry.get("from_name") == name:
            choices = (entry.get("value") or {}).get("choices") or []
            return str(choices[0]) if choices else ""
    return ""


def _ls_annotator(annotation: Mapping[str, Any]) -> str:
    who = annotation.get("completed_by")
    if isinstance(who, dict):
        return str(who.get("email") or who.get("username") or who.get("id") or "")
    if isinstance(who, int):
        return f"ls-user-{who}"
    return str(who or "")


def _read_label_studio(where: str, task: Mapping[str, Any], checker: _Checker) -> None:
    data = _typed(checker, where, "data", task.get("data"), dict, {})
    hid = checker.resolve_id(where, data.get("hypothesis_id"), data.get("subtopic"), data.get("hypothesis"))
    for annotation in _objects(checker, where, "annotations", task.get("annotations")):
        if annotation.get("was_cancelled"):
            continue
        category = _first_choice(annotation.get("result"), "judgement")
        if category:
            stereotype = _first_choice(annotation.get("result"), "stereotype")
            checker.add(where, hid, _ls_annotator(annotation), category, stereotype)


def _read_argilla(where: str, record: Mapping[str, Any], checker: _Checker) -> None:
    fields = _typed(checker, where, "fields", record.get("fields"), dict, {})
    metadata = _typed(checker, where, "metadata", record.get("metadata"), dict, {})
    hid = checker.resolve_id(where, record.get("id"), metadata.get("subtopic"), fields.get("hypothesis"))
    responses = _typed(checker, where, "responses", record.get("responses"), dict, {})
    stereotypes = {
        str(r.get("user_id")): str(r.get("value") or "")
        for r in _objects(checker, where, "responses.stereotype", responses.get("stereotype"))
        if r.get("status", "submitted") == "submitted"
    }
    for response in _objects(checker, where, "responses.judgement", responses.get("judgement")):
        if response.get("status", "submitted") != "submitted":
            continue
        who = str(response.get("user_id") or "")
        checker.add(where, hid, who, str(response.get("value") or ""), stereotypes.get(who, ""))


def store_imported(store: AnnotationStore, answers: Sequence[ImportedAnswer], *, source: str) -> int:
    """Append imported answers to the store in one transaction; returns how many answers (rows)."""
    rows: list[tuple[str, str, str, str]] = []
    for answer in answers:
        rows.append((answer.hypothesis_id, answer.annotator, "category", answer.category))
        if answer.stereotype:
            rows.append((answer.hypothesis_id, answer.annotator, "stereotype", answer.stereotype))
    store.record_many(rows, source=source)
    return len(rows)
