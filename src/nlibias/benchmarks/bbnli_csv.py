"""BBNLI's own expanded CSV layout (the output of its ``json2csv.py``), read as a source.

Columns: ``domain,name,id,type,unique_id,premise,hypothesis_type,hypothesis,question,true_label,
bias_label,reference`` (an index column in front is ignored). Labels follow BBNLI's
``answer_choices`` order ``[Contradiction, Neutral, Entailment]``.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from nlibias.benchmarks.bbnli import SOURCE, Expansion, degenerate_warning
from nlibias.benchmarks.bbnli_json import DEFAULT_ANSWER_CHOICES, FORMULATIONS, subtopic_id
from nlibias.errors import SourceError
from nlibias.schema import Label, Sample, Stereotype
from nlibias.textio.text_files import read_csv_with_columns

CSV_COLUMNS = (
    "domain",
    "name",
    "id",
    "type",
    "unique_id",
    "premise",
    "hypothesis_type",
    "hypothesis",
    "question",
    "true_label",
    "bias_label",
    "reference",
)
_LABELS = tuple(c.lower() for c in DEFAULT_ANSWER_CHOICES)
_HYPOTHESIS_TYPES: dict[str, Stereotype | None] = {
    "test": None,
    "stereotypical": "pro",
    "anti-stereotypical": "anti",
}


def _csv_rows(path: Path) -> Iterator[tuple[int, dict[str, str]]]:
    rows = 0
    fix = f"BBNLI's CSV layout has the columns {','.join(CSV_COLUMNS)}"
    for line, row in read_csv_with_columns(path, CSV_COLUMNS, fix=fix):
        rows += 1
        yield line, row
    if not rows:
        raise SourceError(path, None, "no data rows (only a header)", fix="point at BBNLI's expanded CSV")


@dataclass(frozen=True)
class _Row:
    """One validated CSV row."""

    line: int
    fields: dict[str, str]
    kind: str
    """``hypothesis_type``: test, stereotypical or anti-stereotypical."""
    formulation: str
    gold: Label
    subtopic: str
    premise_id: str

    @property
    def stereotype(self) -> Stereotype | None:
        return _HYPOTHESIS_TYPES[self.kind]

    def sample(self, sample_id: str, provenance: dict[str, Any], pair_key: str | None = None) -> Sample:
        return Sample(
            id=sample_id,
            source=SOURCE,
            domain=self.fields["domain"],
            subtopic=self.subtopic,
            premise=self.fields["premise"],
            hypothesis=self.fields["hypothesis"],
            gold=self.gold,
            stereotype=self.stereotype,
            pair_key=pair_key,
            provenance=provenance,
        )


def _gold(path: Path, line: int, row: dict[str, str]) -> Label:
    """The row's ``true_label`` (0, 1 or 2) as a label."""
    try:
        label_id = int(row["true_label"])
        if not 0 <= label_id < len(_LABELS):  # -1 would index from the end
            raise IndexError(label_id)
        gold: Label = _LABELS[label_id]  # type: ignore[assignment]
    except (ValueError, IndexError):
        raise SourceError(
            path,
            "true_label",
            f"{row['true_label']!r} is not 0, 1 or 2",
            line=line,
            fix="labels follow answer_choices [Contradiction, Neutral, Entailment]",
        ) from None
    return gold


def _check_row(path: Path, line: int, row: dict[str, str]) -> _Row:
    """The row validated: known hypothesis type and formulation, a label, no empty text, bias
    hypotheses neutral."""
    kind = row["hypothesis_type"].strip()
    if kind not in _HYPOTHESIS_TYPES:
        raise SourceError(
            path,
            "hypothesis_type",
            f"unknown value {kind!r}",
            line=line,
            fix="use test, stereotypical or anti-stereotypical",
        )
    formulation = row["type"].strip()
    if formulation not in FORMULATIONS:
        raise SourceError(path, "type", f"unknown value {formulation!r}", line=line, fix="use pro or anti")
    gold = _gold(path, line, row)
    for column in ("premise", "hypothesis", "name", "domain"):
        if not row[column].strip():
            raise SourceError(path, column, "empty value", line=line)
    if _HYPOTHESIS_TYPES[kind] is not None and gold != "neutral":
        raise SourceError(
            path,
            "true_label",
            f"a {kind} hypothesis has gold {gold}; BBNLI's bias hypotheses are neutral (1)",
            line=line,
            fix="set true_label to 1, or mark the row as a test hypothesis",
        )
    return _Row(line, row, kind, formulation, gold, subtopic_id(row["name"]), row["id"].strip())


class _Blocks:
    """Word-combination blocks within each subtopic and premise: a pro row after an anti row
    starts the next block; the k-th stereotypical row of a block pairs with its k-th
    anti-stereotypical row."""

    def __init__(self) -> None:
        self._block_of: dict[tuple[str, str], int] = {}
        self._last_type: dict[tuple[str, str], str] = {}
        self._position: Counter[tuple[str, str, int, str]] = Counter()

    def block(self, row: _Row) -> int:
        """The row's block (call once per row, in file order)."""
        group_key = (row.subtopic, row.premise_id)
        if row.formulation == "pro" and self._last_type.get(group_key) == "anti":
            self._block_of[group_key] = self._block_of.get(group_key, 0) + 1
        self._last_type[group_key] = row.formulation
        return self._block_of.setdefault(group_key, 0)

    def next_position(self, row: _Row, block: int, stereotype: str) -> int:
        """The row's rank among its block's rows of the same stereotype."""
        key = (row.subtopic, row.premise_id, block, stereotype)
        self._position[key] += 1
        return self._position[key] - 1


def _pairs_report(pending: dict[str, list[Sample]]) -> tuple[list[str], list[str]]:
    """Ids of the bias samples without a pro/anti counterpart, and the keys of degenerate pairs."""
    unpaired: list[str] = []
    degenerate: list[str] = []
    for key, members in pending.items():
        kinds = sorted(s.stereotype or "" for s in members)
        if kinds != ["anti", "pro"]:
            unpaired.extend(s.id for s in members)
        elif members[0].premise == members[1].premise and members[0].hypothesis == members[1].hypothesis:
            degenerate.append(key)
    return unpaired, degenerate


def read_bbnli_csv(path: str | Path) -> Expansion:
    """Read BBNLI's expanded CSV (the output of its ``json2csv.py``).

    Pairs are rebuilt from the file's row order (:class:`_Blocks`); rows with no counterpart are
    loaded and reported as unpaired.
    """
    path = Path(path)
    samples: list[Sample] = []
    pending: dict[str, list[Sample]] = {}
    seen: set[tuple[str, ...]] = set()
    blocks = _Blocks()
    for line, fields in _csv_rows(path):
        row = _check_row(path, line, fields)
        block = blocks.block(row)
        provenance = {
            "premise_index": row.premise_id,
            "block": block,
            "csv_line": line,
            "formulation": row.formulation,
            "question": fields["question"] or None,
            "reference": fields["reference"] or None,
            "file": str(path),
        }
        stereotype = row.stereotype
        if stereotype is None:
            dedup_key: tuple[str, ...] = (
                "test",
                row.subtopic,
                fields["premise"],
                fields["hypothesis"],
                row.gold,
            )
        else:
            dedup_key = ("bias", row.subtopic, row.formulation, fields["premise"], fields["hypothesis"])
        if dedup_key in seen:
            continue
        seen.add(dedup_key)
        if stereotype is None:
            samples.append(row.sample(f"{SOURCE}:{row.subtopic}:test:csv{line}", provenance))
            continue
        k = blocks.next_position(row, block, stereotype)
        key = f"{SOURCE}:{row.subtopic}:p{row.premise_id}:b{block:03d}:h{k}"
        sample = row.sample(f"{key}:{stereotype}", {**provenance, "bias_label": fields["bias_label"]}, key)
        samples.append(sample)
        pending.setdefault(key, []).append(sample)

    unpaired, degenerate = _pairs_report(pending)
    warnings: list[str] = []
    if degenerate:
        warnings.append(degenerate_warning(degenerate))
    if unpaired:
        warnings.append(
            f"{len(unpaired)} bias samples have no group-swapped twin in {path}; "
            f"they are kept and reported as unpaired (pair measures skip them)"
        )
    return Expansion(
        samples=tuple(samples),
        degenerate_pairs=tuple(degenerate),
        unpaired=tuple(unpaired),
        warnings=tuple(warnings),
        sources=(str(path),),
    )
