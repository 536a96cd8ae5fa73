"""Human validation hand-off: ``validation/queue.csv`` (one row per unique generated hypothesis)
judged in ``validation/judgements.csv``; valid hypotheses survive, unjudged ones are counted."""

from __future__ import annotations

import csv
import hashlib
from collections import Counter
from collections.abc import Callable, Collection, Iterator, Mapping, Sequence
from dataclasses import asdict, dataclass, fields, replace
from pathlib import Path
from typing import Any, Literal, cast

from nlibias.errors import SourceError
from nlibias.io.atomic import atomic_path
from nlibias.io.fingerprint import sha256_file
from nlibias.io.jsonl import read_json_file
from nlibias.schema import Sample, Stereotype
from nlibias.textio.text_files import csv_header, read_csv_records, read_text, require_csv_columns

QUEUE_CSV = "validation/queue.csv"
JUDGEMENTS_CSV = "validation/judgements.csv"
RESOLUTION_JSON = "validation/resolution.json"
"""What ``nlibias validate resolve`` resolved ``judgements.csv`` from: the rule, the annotators and
their agreement per round, and the SHA-256 of the judgements file it wrote."""
Category = Literal["valid", "invalid", "incoherent"]
CATEGORIES: tuple[Category, ...] = ("valid", "invalid", "incoherent")


@dataclass(frozen=True)
class QueueRow:
    """One generated hypothesis to judge."""

    hypothesis_id: str
    subtopic: str
    domain: str
    hypothesis: str
    suggested_stereotype: str
    """The formulation the hypothesis was generated in (``pro`` / ``anti``); the fill may flip it."""
    masked_template: str
    bbnli_template: str
    fill_word: str
    example_premise: str
    samples: int
    """Kept samples (premises) that carry this hypothesis."""
    judgement: str = ""
    stereotype: str = ""
    note: str = ""

    def data(self) -> dict[str, Any]:
        """What a judge reads (the judgement columns left out)."""
        return {k: v for k, v in asdict(self).items() if k not in ("judgement", "stereotype", "note")}


QUEUE_COLUMNS: tuple[str, ...] = tuple(f.name for f in fields(QueueRow))


@dataclass(frozen=True)
class Judgement:
    hypothesis_id: str
    judgement: Category
    stereotype: Stereotype | None
    line: int
    note: str = ""


def hypothesis_id(subtopic: str, hypothesis: str) -> str:
    """A short stable id of a generated hypothesis within its subtopic.

    >>> hypothesis_id("s", "H.")
    'hdcbc62aef761'
    """
    return "h" + hashlib.sha256(f"{subtopic}\0{hypothesis}".encode()).hexdigest()[:12]


def build_queue(kept: Sequence[Sample]) -> list[QueueRow]:
    """One row per unique (subtopic, hypothesis), sorted by subtopic then hypothesis."""
    groups: dict[tuple[str, str], list[Sample]] = {}
    for sample in kept:
        groups.setdefault((sample.subtopic, sample.hypothesis), []).append(sample)
    rows: list[QueueRow] = []
    for (subtopic, hypothesis), members in sorted(groups.items()):
        first = members[0]
        made: dict[str, Any] = {
            key: str(first.provenance.get(key, ""))
            for key in ("masked_template", "bbnli_template", "fill_word")
        }
        rows.append(
            QueueRow(
                hypothesis_id(subtopic, hypothesis),
                subtopic,
                first.domain,
                hypothesis,
                Counter(str(m.stereotype) for m in members).most_common(1)[0][0],
                **made,
                example_premise=first.premise,
                samples=len(members),
            )
        )
    return rows


def write_validation_queue(run_dir: str | Path, kept: Sequence[Sample]) -> Path:
    """Write ``validation/queue.csv`` under ``run_dir`` (atomically); returns its path."""
    return write_queue(Path(run_dir) / QUEUE_CSV, build_queue(kept))


def write_queue(path: Path, rows: Sequence[QueueRow], extra: Sequence[Mapping[str, Any]] = ()) -> Path:
    """Queue rows as a CSV file (atomically), each with its ``extra`` columns when given."""
    with atomic_path(path) as tmp, tmp.open("w", newline="", encoding="utf-8") as handle:
        columns = [*QUEUE_COLUMNS, *(extra[0] if extra else ())]
        writer = csv.DictWriter(handle, fieldnames=columns)
        writer.writeheader()
        for row, more in zip(rows, extra or [{}] * len(rows), strict=True):
            writer.writerow({**asdict(row), **more})
    return path


def read_queue(path: str | Path) -> list[QueueRow]:
    path = Path(path)
    if not path.exists():
        raise SourceError(path, None, "file does not exist", fix="run the pipeline up to the validate stage")
    text = read_text(path)
    require_csv_columns(path, csv_header(path, text), QUEUE_COLUMNS)
    rows: list[QueueRow] = []
    lines: dict[str, int] = {}  # the line of each hypothesis id
    for line, row in read_csv_records(path, text):
        first = lines.setdefault(row["hypothesis_id"], line)
        if first != line:  # counted twice in every status, export and resolution
            reason = f"hypothesis {row['hypothesis_id']!r} is queued twice (first on line {first})"
            raise SourceError(path, "hypothesis_id", reason, line=line, fix="keep one row per hypothesis")
        count = row["samples"].strip()
        if not count.isdigit():
            raise SourceError(path, "samples", f"{count!r} is not a count of samples", line=line)
        made = hypothesis_id(row["subtopic"], row["hypothesis"])
        if row["hypothesis_id"] != made:  # edited since: judgements would go to the exported text
            reason = f"{row['hypothesis_id']!r} is not the id of this subtopic and hypothesis ({made})"
            fix = "restore the row as the pipeline wrote it (the queue is not edited; its ids name samples)"
            raise SourceError(path, "hypothesis_id", reason, line=line, fix=fix)
        fields = {name: row[name] for name in QUEUE_COLUMNS}
        rows.append(QueueRow(**{**fields, "samples": int(count)}))  # type: ignore[arg-type]
    return rows


class QueueIndex:
    """The queue's rows by id and by (subtopic, text): what every judgements reader looks rows up in."""

    def __init__(self, rows: Sequence[QueueRow]) -> None:
        self.by_id = {row.hypothesis_id: row for row in rows}
        self.by_text = {(row.subtopic, row.hypothesis): row.hypothesis_id for row in rows}

    def find(self, hid: str, subtopic: str, hypothesis: str) -> str | tuple[str, str]:
        """The id of the row a judgement names (by id, else by subtopic and text), or the
        ``(field, reason)`` of why it names none."""
        if not hid:
            found = self.by_text.get((subtopic, hypothesis))
            unknown = f"unknown hypothesis {hypothesis!r} in {subtopic!r}: not in the validation queue"
            return ("hypothesis", unknown) if found is None else found
        if hid not in self.by_id:
            return "hypothesis_id", f"unknown hypothesis {hid!r}: not in the validation queue"
        if hypothesis and hypothesis != self.by_id[hid].hypothesis:
            return "hypothesis", f"does not match the queue's text for {hid}"
        return hid


def require_judgement_columns(path: Path, fieldnames: Sequence[str] | None, *, expected: str) -> None:
    """The header of a judgements CSV, checked: a ``judgement`` column and rows identified by
    ``hypothesis_id`` or by ``subtopic`` + ``hypothesis``; ``expected`` lists the columns in the fix."""
    columns = set(fieldnames or [])  # a column named twice: refused as the header is read (textio)
    if "judgement" not in columns:
        raise SourceError(path, "judgement", "missing column", line=1, fix=f"columns: {expected}")
    if "hypothesis_id" not in columns and not {"subtopic", "hypothesis"} <= columns:
        fix = "identify rows by hypothesis_id or by subtopic + hypothesis"
        raise SourceError(path, "hypothesis_id", "missing column", line=1, fix=fix)


def judgement_problem(
    category: str, stereotype: str, *, need_stereotype: bool = True
) -> tuple[str, str, str | None] | None:
    """``(field, reason, fix)`` when a judgement and its stereotype do not go together, else None: the
    one rule of every judgements reader (only a valid hypothesis takes, and with ``need_stereotype``
    needs, a stereotype).

    >>> judgement_problem("valid", "pro") is None, judgement_problem("invalid", "pro")[1]
    (True, 'an invalid hypothesis takes no stereotype (it is pro here)')
    """
    if category not in CATEGORIES:
        return "judgement", f"unknown judgement {category!r}", "use valid, invalid or incoherent"
    if stereotype not in ("", "pro", "anti"):
        return "stereotype", f"unknown stereotype {stereotype!r}", "use pro or anti"
    if stereotype and category != "valid":
        article = "an" if category[0] in "aeiou" else "a"
        return (
            "stereotype",
            f"{article} {category} hypothesis takes no stereotype (it is {stereotype} here)",
            "leave stereotype empty, or judge the hypothesis valid",
        )
    if need_stereotype and category == "valid" and not stereotype:
        return (
            "stereotype",
            "a valid hypothesis needs pro or anti",
            "the queue's suggested_stereotype column holds the template's formulation",
        )
    return None


def judged_rows(
    path: Path, index: QueueIndex, *, expected: str
) -> Iterator[tuple[int, str, Callable[[str], str]]]:
    """``(line, hypothesis id, value of a column)`` of each judged row of a judgements CSV, its header
    checked (``expected``: the columns the fix lists) and its row found in the queue's ``index``."""
    text = read_text(path)
    require_judgement_columns(path, csv_header(path, text), expected=expected)
    for line, row in read_csv_records(path, text):

        def value(name: str, row: Mapping[str, str | None] = row) -> str:
            return (row.get(name) or "").strip()

        if not value("judgement"):
            continue
        key = index.find(value("hypothesis_id"), value("subtopic"), value("hypothesis"))
        if isinstance(key, tuple):
            raise SourceError(path, *key, line=line)
        yield line, key, value


def read_judgements(path: str | Path, queue: Sequence[QueueRow] | str | Path) -> dict[str, Judgement]:
    """Judgements by hypothesis id, validated against the queue (rows name it by id or subtopic +
    text; errors name the line; empty judgements skipped)."""
    path = Path(path)
    index = QueueIndex(read_queue(queue) if isinstance(queue, str | Path) else list(queue))
    if not path.exists():
        fix = "copy validation/queue.csv here and fill judgement/stereotype"
        raise SourceError(path, None, "file does not exist", fix=fix)
    judgements: dict[str, Judgement] = {}
    for line, hid, value in judged_rows(path, index, expected="hypothesis_id, judgement, stereotype"):
        label, stereotype = value("judgement").lower(), value("stereotype").lower()
        problem = judgement_problem(label, stereotype)
        if problem is not None:
            raise SourceError(path, problem[0], problem[1], line=line, fix=problem[2])
        if hid in judgements:
            twice = f"duplicate judgement of {hid} ({index.by_id[hid].hypothesis!r}); first on line {judgements[hid].line}"
            raise SourceError(path, "hypothesis_id", twice, line=line, fix="keep one row per hypothesis")
        judged = cast(Stereotype, stereotype) if label == "valid" else None
        judgements[hid] = Judgement(hid, cast(Category, label), judged, line, value("note"))
    return judgements


def disagreed_hypotheses(path: str | Path) -> frozenset[str]:
    """The ids of a judgements file's rows ``validate resolve`` marked ``dropped`` (empty without a
    ``resolution`` column)."""
    path = Path(path)
    return frozenset(
        (row.get("hypothesis_id") or "").strip()
        for _, row in read_csv_records(path, read_text(path))
        if (row.get("resolution") or "").strip() == "dropped" and not (row.get("judgement") or "").strip()
    )


def resolution_record(judgements: str | Path) -> dict[str, Any] | None:
    """The record ``validate resolve`` wrote beside ``judgements``, when its SHA-256 still matches."""
    path = Path(judgements)
    record_path = path.parent / Path(RESOLUTION_JSON).name
    if not path.is_file() or not record_path.is_file():
        return None
    record = read_json_file(record_path)  # not JSON: refused with its line
    if not isinstance(record, dict) or record.get("judgements_sha256") != sha256_file(path):
        return None  # describes another judgements file (edited or replaced since)
    rounds = record.get("agreement")
    if not isinstance(rounds, dict) or not all(isinstance(r, dict) for r in rounds.values()):
        reason = "expected an object of rounds, each an object (as nlibias validate resolve writes it)"
        fix = "run nlibias validate resolve again, or delete the file"
        raise SourceError(record_path, "agreement", reason, fix=fix)
    return record


@dataclass(frozen=True)
class ValidationResult:
    accepted: list[Sample]
    """Samples whose hypothesis was judged valid (stereotype = the judged one), or all with --unvalidated."""
    summary: dict[str, Any]
    """Paper Table 3: per category, unique hypotheses and samples; plus unjudged."""


def apply_judgements(
    kept: Sequence[Sample], judgements: Mapping[str, Judgement] | None, *, dropped: Collection[str] = ()
) -> ValidationResult:
    """Keep the samples of valid hypotheses (``judgements=None``: all, marked unvalidated); an
    unjudged hypothesis counts as ``dropped`` when in ``dropped``, else ``unjudged``."""
    hypotheses: dict[str, Counter[str]] = {
        name: Counter() for name in (*CATEGORIES, "dropped", "unjudged", "unvalidated")
    }
    accepted: list[Sample] = []
    for sample in kept:
        hid = hypothesis_id(sample.subtopic, sample.hypothesis)
        if judgements is None:
            category, stereotype = "unvalidated", sample.stereotype
        else:
            judged = judgements.get(hid)
            category = judged.judgement if judged else ("dropped" if hid in dropped else "unjudged")
            stereotype = judged.stereotype if judged and judged.stereotype else sample.stereotype
        hypotheses[category][hid] += 1
        if category in ("valid", "unvalidated"):
            validation = {"judgement": category, "hypothesis_id": hid, "stereotype": stereotype}
            provenance = {**dict(sample.provenance), "validation": validation}
            accepted.append(replace(sample, stereotype=stereotype, provenance=provenance))
    summary = {
        "status": "unvalidated" if judgements is None else "validated",
        "categories": {
            name: {"hypotheses": len(counter), "samples": sum(counter.values())}
            for name, counter in hypotheses.items()
            if counter or name in CATEGORIES
        },
        "accepted_samples": len(accepted),
    }
    return ValidationResult(accepted=accepted, summary=summary)
