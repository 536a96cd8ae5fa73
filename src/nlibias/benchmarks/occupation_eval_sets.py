"""Paper 004's evaluation sets (Table 1: SNLI, MNLI, OOD) as samples, from the authors' workbooks
(pinned, never shipped) or any of that layout, several joined by commas. A row's pro hypothesis is
the gender its file gives; OOD premises get one Table 3 template by a seeded draw, or all three.
"""

from __future__ import annotations

import hashlib
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Literal

from nlibias.benchmarks.data_locations import PinnedData, git_blob_id, resolve_data
from nlibias.benchmarks.occupation_list import (
    HYPOTHESIS_TEMPLATES,
    OccupationsExpansion,
    gender_samples,
    template_hypotheses,
)
from nlibias.benchmarks.occupation_xlsx import EvalRow, EvalWorkbook, is_workbook, read_eval_workbook
from nlibias.errors import ConfigError
from nlibias.schema import Sample
from nlibias.schema.applies import option_applies_to_nothing
from nlibias.schema.declared import declared

# The authors' repository has no licence: nlibias reads a user's copy or downloads one.
OCCUPATION_EVAL_COMMIT = "bdb4a8e636e0f11c8aa887a53a101fcd968a9fc3"
OCCUPATION_EVAL_DIR = "occupations-eval"
_OCCUPATION_EVAL_URL = (
    f"https://raw.githubusercontent.com/shanyas10/Evaluating-gender-bias/{OCCUPATION_EVAL_COMMIT}/dataset/"
)
OCCUPATION_EVAL_FILES = {
    "snli-eval": ("SNLI_Evaluation_Set.xlsx", "e3580dcbbe2937774dcd538b0025a7101380353d"),
    "mnli-eval": ("MNLI_Evaluation_Set.xlsx", "f116ede15974d3269a930a6ea1bb1027ca2347c2"),
    "ood-eval": ("OOD_Evaluation_Set.xlsx", "5f2eb6bde442fa26d52c294d543ac565769e7944"),
}
"""Each evaluation set's name (``--source snli-eval``), its file and its upstream git blob id."""
EVAL_SET_DATA: dict[str, PinnedData] = {
    name: PinnedData(
        name=name,
        directory=OCCUPATION_EVAL_DIR,
        files={file: (_OCCUPATION_EVAL_URL + file, f"gitblob:{blob}")},
        main_file=file,
        layout=f"{OCCUPATION_EVAL_DIR}/<SNLI|MNLI|OOD>_Evaluation_Set.xlsx",
    )
    for name, (file, blob) in OCCUPATION_EVAL_FILES.items()
}
TemplateChoice = Literal["one", "all"]
SET_OF_FILE = {file: name.removesuffix("-eval") for name, (file, _) in OCCUPATION_EVAL_FILES.items()}
EXPECTED_ROWS = {"snli": 1900, "mnli": 1900, "ood": 3800}
_PINNED_BLOBS = {blob: file for file, blob in OCCUPATION_EVAL_FILES.values()}


def named_set(source: str | Path) -> str | None:
    """The evaluation set a source names (``snli-eval``, ``mnli-eval``, ``ood-eval``), else None."""
    text = str(source)
    return text if text in OCCUPATION_EVAL_FILES else None


def eval_set_sources(premises: str | Path) -> list[str] | None:
    """The evaluation sets (names, workbooks, joined by commas) ``premises`` names; None: a premises file."""
    text = str(premises)
    parts = [text] if Path(text).is_file() else [p.strip() for p in text.split(",") if p.strip()]

    def is_set(part: str) -> bool:
        path = Path(part)
        return (
            named_set(part) is not None
            or path.suffix.lower() in {".xlsx", ".xlsm", ".xls"}
            or is_workbook(path)
        )

    if all(is_set(p) for p in parts) and parts:
        return parts
    if len(parts) > 1:
        raise ConfigError(
            f"{{premises}} {text!r} joins several sources with commas; each must be an evaluation set "
            f"(snli-eval, mnli-eval, ood-eval or an .xlsx workbook)",
            parameter="premises",
        )
    return None


def template_draw(seed: int, eval_set: str, row: int) -> int:
    """The Table 3 template (1-3) a premise without hypotheses gets (``hypothesis_templates="one"``).

    >>> [template_draw(0, "ood", row) for row in (2, 3, 4, 5)]  # printf "0:ood:2" | sha256sum, mod 3, + 1
    [1, 3, 1, 2]
    """
    digest = hashlib.sha256(f"{seed}:{eval_set}:{row}".encode()).hexdigest()
    return 1 + int(digest, 16) % 3


def _template_number(hypothesis_f: str, hypothesis_m: str) -> int | str:
    """The Table 3 template a file's hypothesis pair renders (case and a final period ignored), else "file"."""

    def plain(text: str) -> str:
        return text.strip().rstrip(".").lower()

    for number, template in enumerate(HYPOTHESIS_TEMPLATES, start=1):
        if plain(hypothesis_f) == plain(template.format(gender="female")) and plain(hypothesis_m) == plain(
            template.format(gender="male")
        ):
            return number
    return "file"


def row_samples(
    row: EvalRow, eval_set: str, hypotheses: Sequence[tuple[int | str, str, str]]
) -> list[Sample]:
    """The female and male sample of each ``(template, female text, male text)`` for one row."""
    provenance = {
        "list_dominant_gender": row.occupation.dominant_gender,
        "premise_origin": "eval_set",
        "eval_set": eval_set,
        "row": row.row,
    }
    premise_id = f"{eval_set}-r{row.row:05d}"
    return gender_samples(premise_id, row.premise, row.occupation, row.gender, hypotheses, provenance)


def _hypotheses(row: EvalRow, eval_set: str, choice: str, seed: int) -> list[tuple[int | str, str, str]]:
    if row.hypothesis_f is not None and row.hypothesis_m is not None:
        return [(_template_number(row.hypothesis_f, row.hypothesis_m), row.hypothesis_f, row.hypothesis_m)]
    return template_hypotheses([template_draw(seed, eval_set, row.row)] if choice == "one" else [1, 2, 3])


def _set_record(
    source: str | Path,
    path: Path,
    name: str,
    book: EvalWorkbook,
    choice: str,
    seed: int,
    samples: list[Sample],
) -> tuple[dict[str, Any], list[str]]:
    blob = git_blob_id(path.read_bytes())
    templates = Counter(
        str((s.provenance or {}).get("hypothesis_template")) for s in samples if s.group == "female"
    )
    differ = Counter(
        (r.occupation.name, r.gender, r.occupation.dominant_gender)
        for r in book.rows
        if r.gender != r.occupation.dominant_gender
    )
    flagged = book.caveat_rows  # premises a premises file would refuse
    record: dict[str, Any] = {
        "eval_set": name,
        "file": str(path),
        "git_blob_id": blob,
        "authors_file": _PINNED_BLOBS.get(blob),
        "sheet": book.sheet,
        "columns": book.columns,
        "ignored_columns": list(book.ignored_columns),
        "rows": len(book.rows),
        "rows_by_gender": dict(sorted(Counter(r.gender for r in book.rows).items())),
        "skipped_header_rows": list(book.skipped_header_rows),
        "blank_rows": book.blank_rows,
        "hypotheses": "file" if book.has_hypotheses else f"templates: {choice}",
        "pairs_by_template": dict(sorted(templates.items())),
        "label_differences": [
            {"occupation": o, "file": f, "occupations.json": listed, "rows": n}
            for (o, f, listed), n in differ.items()
        ],
        "premise_caveats": {
            "rows": len(flagged),
            "gendered_word": sum(any("gendered word" in c for c in row.caveats) for row in flagged),
            "occupation_not_named": sum(
                any("gendered word" not in c for c in row.caveats) for row in flagged
            ),
            "cells": [caveat for row in flagged for caveat in row.caveats],
        },
    }
    if not book.has_hypotheses and choice == "one":
        record["seed"] = seed  # the seed of the draw (all three templates need none)
    warnings = [f"{name}: row {row} repeats the header row; skipped" for row in book.skipped_header_rows]
    warnings += [f"{name}: {warning}" for warning in book.warnings]
    warnings += [
        f"{name}: the file labels {d['occupation']} {d['file']} in {d['rows']} row(s), occupations.json "
        f"says {d['occupations.json']}; the file's label is used (stereotype, B, by_dominant_gender)"
        for d in record["label_differences"]
    ]
    caveats = record["premise_caveats"]
    if caveats["rows"]:
        warnings.append(
            f"{name}: {caveats['rows']} premise(s) would be refused in a premises file ("
            f"{caveats['gendered_word']} with a gendered word, {caveats['occupation_not_named']} not "
            f"naming the row's occupation, e.g. {caveats['cells'][0]}); read as the authors published "
            "them, listed in expansion.json (premise_caveats); --strict refuses them"
        )
    expected = EXPECTED_ROWS.get(name)
    if named_set(source) is not None and expected is not None and expected != len(book.rows):
        warnings.append(f"{name}: {len(book.rows)} data rows; the paper's Table 1 has {expected}")
    if record["authors_file"] is None and path.name in SET_OF_FILE:
        warnings.append(
            f"{name}: {path.name} differs from the authors' file at commit {OCCUPATION_EVAL_COMMIT[:7]} "
            f"(git blob {blob}); results are not comparable with the paper's"
        )
    return record, warnings


@declared
def expand_eval_sets(
    sources: Sequence[str | Path],
    *,
    hypothesis_templates: TemplateChoice | None = None,
    seed: int | None = None,
    strict: bool = False,
) -> OccupationsExpansion:
    """Samples of each evaluation set in ``sources`` (names or workbooks), ids prefixed by set.
    ``hypothesis_templates`` and ``seed``: for sets without hypotheses. A premise caveat
    (:mod:`~nlibias.benchmarks.occupation_rows`) is counted and warned; ``strict`` refuses it."""
    books = [_read_set(source, strict) for source in sources]
    if all(book.has_hypotheses for *_, book in books):
        given = "every set given brings its own hypotheses (" + ", ".join(n for _, _, n, _ in books) + ")"
        for parameter, value in (("hypothesis_templates", hypothesis_templates), ("seed", seed)):
            if value is not None:
                raise option_applies_to_nothing(
                    parameter, "evaluation sets without hypotheses (ood-eval)", value=value, given=given
                )
    choice, seed = hypothesis_templates or "one", seed or 0
    samples: list[Sample] = []
    records: list[dict[str, Any]] = []
    warnings: list[str] = []
    for source, path, name, book in books:
        if any(r["eval_set"] == name for r in records):
            raise ConfigError(f"the evaluation set {name!r} is given twice", parameter="premises")
        own = [s for row in book.rows for s in row_samples(row, name, _hypotheses(row, name, choice, seed))]
        record, notes = _set_record(source, path, name, book, choice, seed, own)
        samples += own
        records.append(record)
        warnings += notes
    origin = ", ".join(r["file"] for r in records)
    return OccupationsExpansion(tuple(samples), origin, sets=tuple(records), warnings=tuple(warnings))


def _read_set(source: str | Path, strict: bool) -> tuple[str | Path, Path, str, EvalWorkbook]:
    """(source as given, its file, its name, its workbook as read)."""
    named = named_set(source)
    if named is None:
        path = Path(source)
        name = SET_OF_FILE.get(path.name, path.stem.lower().replace(" ", "_"))
    else:
        path, name = resolve_data(EVAL_SET_DATA[named]), named.removesuffix("-eval")
    require = None if named is None else name != "ood"
    return source, path, name, read_eval_workbook(path, require_hypotheses=require, strict=strict)
