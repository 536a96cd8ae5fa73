"""BBNLI's own expanded CSV layout (the output of its ``json2csv.py``), read as a source.

Columns: ``domain,name,id,type,unique_id,premise,hypothesis_type,hypothesis,question,true_label,
bias_label,reference`` (an index column in front is ignored). Labels follow BBNLI's
``answer_choices`` order ``[Contradiction, Neutral, Entailment]``.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from pathlib import Path

from nlibias.benchmarks.bbnli import (
    DEFAULT_ANSWER_CHOICES,
    FORMULATIONS,
    SOURCE,
    Expansion,
    degenerate_warning,
    subtopic_id,
)
from nlibias.errors import SourceError
from nlibias.schema import Label, Sample, Stereotype
from nlibias.textio.text_files import csv_header, read_csv_records, read_text

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
_HYPOTHESIS_TYPES: dict[str, Stereotype | None] = {
    "test": None,
    "stereotypical": "pro",
    "anti-stereotypical": "anti",
}


def _csv_rows(path: Path) -> Iterator[tuple[int, dict[str, str]]]:
    text = read_text(path)
    header = csv_header(path, text) or []
    missing = [c for c in CSV_COLUMNS if c not in header]
    if missing:
        raise SourceError(
            path,
            missing[0],
            f"missing column(s) {', '.join(missing)}",
            line=1,
            fix=f"BBNLI's CSV layout has the columns {','.join(CSV_COLUMNS)}",
        )
    rows = 0
    for line, row in read_csv_records(path, text):
        rows += 1
        yield line, row
    if not rows:
        raise SourceError(path, None, "no data rows (only a header)", fix="point at BBNLI's expanded CSV")


def read_bbnli_csv(path: str | Path) -> Expansion:
    """Read BBNLI's expanded CSV (the output of its ``json2csv.py``).

    Pairs are rebuilt from the file's structure: within one subtopic and premise, each block of
    rows (pro rows, then anti rows, for one word combination) pairs its k-th stereotypical row
    with its k-th anti-stereotypical row. Rows with no counterpart are loaded and reported as
    unpaired.
    """
    path = Path(path)
    choices = [c.lower() for c in DEFAULT_ANSWER_CHOICES]
    samples: list[Sample] = []
    pending: dict[str, list[Sample]] = {}
    unpaired: list[str] = []
    degenerate: list[str] = []
    seen_bias: set[tuple[str, str, str, str]] = set()
    seen_test: set[tuple[str, str, str, str]] = set()
    block_of: dict[tuple[str, str], int] = {}
    last_type: dict[tuple[str, str], str] = {}
    position: Counter[tuple[str, str, int, str]] = Counter()

    for line, row in _csv_rows(path):
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
            raise SourceError(
                path, "type", f"unknown value {formulation!r}", line=line, fix="use pro or anti"
            )
        try:
            label_id = int(row["true_label"])
            if not 0 <= label_id < len(choices):  # -1 would index from the end
                raise IndexError(label_id)
            gold: Label = choices[label_id]  # type: ignore[assignment]
        except (ValueError, IndexError):
            raise SourceError(
                path,
                "true_label",
                f"{row['true_label']!r} is not 0, 1 or 2",
                line=line,
                fix="labels follow answer_choices [Contradiction, Neutral, Entailment]",
            ) from None
        for column in ("premise", "hypothesis", "name", "domain"):
            if not row[column].strip():
                raise SourceError(path, column, "empty value", line=line)
        subtopic = subtopic_id(row["name"])
        premise_id = row["id"].strip()
        stereotype = _HYPOTHESIS_TYPES[kind]
        if stereotype is not None and gold != "neutral":
            raise SourceError(
                path,
                "true_label",
                f"a {kind} hypothesis has gold {gold}; BBNLI's bias hypotheses are neutral (1)",
                line=line,
                fix="set true_label to 1, or mark the row as a test hypothesis",
            )
        group_key = (subtopic, premise_id)
        # A pro row after an anti row starts the next word combination's block.
        if formulation == "pro" and last_type.get(group_key) == "anti":
            block_of[group_key] = block_of.get(group_key, 0) + 1
        last_type[group_key] = formulation
        block = block_of.setdefault(group_key, 0)
        provenance = {
            "premise_index": premise_id,
            "block": block,
            "csv_line": line,
            "formulation": formulation,
            "question": row["question"] or None,
            "reference": row["reference"] or None,
            "file": str(path),
        }
        if stereotype is None:
            test_key = (subtopic, row["premise"], row["hypothesis"], gold)
            if test_key in seen_test:
                continue
            seen_test.add(test_key)
            samples.append(
                Sample(
                    id=f"{SOURCE}:{subtopic}:test:csv{line}",
                    source=SOURCE,
                    domain=row["domain"],
                    subtopic=subtopic,
                    premise=row["premise"],
                    hypothesis=row["hypothesis"],
                    gold=gold,
                    provenance=provenance,
                )
            )
            continue
        bias_key = (subtopic, formulation, row["premise"], row["hypothesis"])
        if bias_key in seen_bias:
            continue
        seen_bias.add(bias_key)
        k = position[(subtopic, premise_id, block, stereotype)]
        position[(subtopic, premise_id, block, stereotype)] += 1
        key = f"{SOURCE}:{subtopic}:p{premise_id}:b{block:03d}:h{k}"
        sample = Sample(
            id=f"{key}:{stereotype}",
            source=SOURCE,
            domain=row["domain"],
            subtopic=subtopic,
            premise=row["premise"],
            hypothesis=row["hypothesis"],
            gold=gold,
            stereotype=stereotype,
            pair_key=key,
            provenance={**provenance, "bias_label": row["bias_label"]},
        )
        samples.append(sample)
        pending.setdefault(key, []).append(sample)

    for key, members in pending.items():
        kinds = sorted(s.stereotype or "" for s in members)
        if kinds != ["anti", "pro"]:
            unpaired.extend(s.id for s in members)
        elif members[0].premise == members[1].premise and members[0].hypothesis == members[1].hypothesis:
            degenerate.append(key)
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
