"""BBNLI's own expanded CSV (the output of its ``json2csv.py``): :data:`CSV_COLUMNS` (an index
column in front is ignored), labels in ``answer_choices`` order ``[Contradiction, Neutral, Entailment]``.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import BaseModel, BeforeValidator, ConfigDict, model_validator

from nlibias.benchmarks.bbnli import SOURCE, Expansion, degenerate_warning
from nlibias.benchmarks.bbnli_json import DEFAULT_ANSWER_CHOICES, Formulation, subtopic_id
from nlibias.benchmarks.rows import Text, check_row, refuse
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
_STEREOTYPES: dict[str, Stereotype | None] = {
    "test": None,
    "stereotypical": "pro",
    "anti-stereotypical": "anti",
}


def _label(value: str) -> str:
    """``true_label`` 0, 1 or 2 as its label (-1 would index from the end)."""
    index = int(value) if value.strip().lstrip("+-").isdigit() else -1
    if not 0 <= index < len(_LABELS):
        raise refuse(
            f"{value!r} is not 0, 1 or 2", "labels follow answer_choices [Contradiction, Neutral, Entailment]"
        )
    return _LABELS[index]


class CsvRow(BaseModel):
    """One CSV row, checked: known hypothesis type and formulation, a label, no empty text, bias
    hypotheses neutral."""

    model_config = ConfigDict(extra="ignore", frozen=True)
    hypothesis_type: Annotated[
        Literal["test", "stereotypical", "anti-stereotypical"], BeforeValidator(str.strip)
    ]
    type: Annotated[Formulation, BeforeValidator(str.strip)]
    true_label: Annotated[Label, BeforeValidator(_label)]
    premise: Text
    hypothesis: Text
    name: Text
    domain: Text
    id: Annotated[str, BeforeValidator(str.strip)]
    question: str
    bias_label: str
    reference: str

    @model_validator(mode="after")
    def _bias_neutral(self) -> CsvRow:
        if self.stereotype is not None and self.true_label != "neutral":
            raise refuse(
                f"a {self.hypothesis_type} hypothesis has gold {self.true_label}; BBNLI's bias hypotheses are neutral (1)",
                "set true_label to 1, or mark the row as a test hypothesis",
                "true_label",
            )
        return self

    @property
    def stereotype(self) -> Stereotype | None:
        return _STEREOTYPES[self.hypothesis_type]

    @property
    def subtopic(self) -> str:
        return subtopic_id(self.name)

    def sample(self, sample_id: str, provenance: dict[str, Any], pair_key: str | None = None) -> Sample:
        return Sample(
            id=sample_id,
            source=SOURCE,
            domain=self.domain,
            subtopic=self.subtopic,
            premise=self.premise,
            hypothesis=self.hypothesis,
            gold=self.true_label,
            stereotype=self.stereotype,
            pair_key=pair_key,
            provenance=provenance,
        )


def _csv_rows(path: Path) -> Iterator[tuple[int, CsvRow]]:
    fix = f"BBNLI's CSV layout has the columns {','.join(CSV_COLUMNS)}"
    rows = 0
    for line, raw in read_csv_with_columns(path, CSV_COLUMNS, fix=fix):
        rows += 1
        yield line, check_row(CsvRow, path, line, raw)
    if not rows:
        raise SourceError(path, None, "no data rows (only a header)", fix="point at BBNLI's expanded CSV")


class _Blocks:
    """Word-combination blocks within each subtopic and premise: a pro row after an anti row
    starts the next block; the k-th stereotypical row of a block pairs with its k-th
    anti-stereotypical row."""

    def __init__(self) -> None:
        self._block_of: dict[tuple[str, str], int] = {}
        self._last_type: dict[tuple[str, str], str] = {}
        self._position: Counter[tuple[str, str, int, str]] = Counter()

    def block(self, row: CsvRow) -> int:
        """The row's block (call once per row, in file order)."""
        group_key = (row.subtopic, row.id)
        if row.type == "pro" and self._last_type.get(group_key) == "anti":
            self._block_of[group_key] = self._block_of.get(group_key, 0) + 1
        self._last_type[group_key] = row.type
        return self._block_of.setdefault(group_key, 0)

    def next_position(self, row: CsvRow, block: int, stereotype: str) -> int:
        """The row's rank among its block's rows of the same stereotype."""
        key = (row.subtopic, row.id, block, stereotype)
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
    """Read BBNLI's expanded CSV, its pairs rebuilt from the row order (:class:`_Blocks`); rows with
    no counterpart are kept and reported as unpaired."""
    path = Path(path)
    samples: list[Sample] = []
    pending: dict[str, list[Sample]] = {}
    seen: set[tuple[str, ...]] = set()
    blocks = _Blocks()
    for line, row in _csv_rows(path):
        block = blocks.block(row)
        provenance = {
            "premise_index": row.id,
            "block": block,
            "csv_line": line,
            "formulation": row.type,
            "question": row.question or None,
            "reference": row.reference or None,
            "file": str(path),
        }
        stereotype = row.stereotype
        texts = (row.subtopic, row.premise, row.hypothesis)
        dedup_key = ("test", *texts, row.true_label) if stereotype is None else ("bias", row.type, *texts)
        if dedup_key in seen:
            continue
        seen.add(dedup_key)
        if stereotype is None:
            samples.append(row.sample(f"{SOURCE}:{row.subtopic}:test:csv{line}", provenance))
            continue
        k = blocks.next_position(row, block, stereotype)
        key = f"{SOURCE}:{row.subtopic}:p{row.id}:b{block:03d}:h{k}"
        sample = row.sample(f"{key}:{stereotype}", {**provenance, "bias_label": row.bias_label}, key)
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
