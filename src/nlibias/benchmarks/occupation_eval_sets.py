"""Paper 004's evaluation sets (Table 1: SNLI, MNLI, OOD) as samples, from the authors' workbooks
(pinned, never shipped) or any of that layout, several joined by commas. A row's pro hypothesis is
the gender its file gives; OOD premises get one Table 3 template by a seeded draw, or all three.

A workbook (``.xlsx``, first worksheet): the header is the first row naming the required columns
(:data:`COLUMN_NAMES`) wherever it stands (the authors' SNLI and MNLI sheets have it below the
data); each other row is an :class:`~.occupation_rows.OccupationRow`. Every rule:
docs/wq-nli-and-occupations.md, "Reading a workbook".
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from nlibias.benchmarks.data_locations import PinnedData
from nlibias.benchmarks.occupation_list import (
    Occupation,
    gender_samples,
    template_draw,
    template_hypotheses,
    template_number,
)
from nlibias.benchmarks.occupation_rows import (
    OccupationRow,
    OccupationRowError,
    RowOrigin,
    RowProblem,
    repeated_rows,
)
from nlibias.errors import ConfigError, SourceError, import_extra
from nlibias.schema import Sample

#: Each column role's header names (as :func:`normalise_header` writes them).
COLUMN_NAMES: dict[str, tuple[str, ...]] = {
    "occupation": ("occupation", "occupations", "profession"),
    "premise": ("premise", "premises", "sentence", "sentences", "sentence1"),
    "gender": ("gender", "dominant_gender"),
    "hypothesis_f": ("hypothesis_f", "hypothesis_female", "female_hypothesis", "f_hypothesis"),
    "hypothesis_m": ("hypothesis_m", "hypothesis_male", "male_hypothesis", "m_hypothesis"),
}
REQUIRED = ("occupation", "premise", "gender")
HYPOTHESES = ("hypothesis_f", "hypothesis_m")
_ZIP_MAGIC = b"PK\x03\x04"
_OLE2_MAGIC = b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1"
_XLS = (
    "an Excel 97-2003 workbook (.xls, OLE2), not .xlsx: open it in Excel or LibreOffice and save it as .xlsx"
)
XLSX_FIX = (
    "nlibias reads paper 004's evaluation sets as Excel .xlsx workbooks (one premise per row: "
    "occupation, premise, gender F/M, and hypothesis_f/hypothesis_m where the set has hypotheses); "
    "premises as text go one per line in a UTF-8 file"
)


@dataclass(frozen=True)
class EvalRow:
    """One data row of an evaluation-set workbook."""

    row: int
    """The worksheet row, as Excel shows it."""
    occupation: Occupation
    premise: str
    gender: str
    """The file's label for the occupation (its dominant gender): ``female`` or ``male``."""
    hypothesis_f: str | None = None
    hypothesis_m: str | None = None
    caveats: tuple[str, ...] = ()
    """The premise's caveats, each after its cell (``Sheet1!B7: ...``)."""

    def samples(self, eval_set: str, choice: str, seed: int) -> list[Sample]:
        """The female and male sample of each hypothesis: the row's own, else Table 3's (``choice``
        ``one``: a seeded draw, ``all``: all three)."""
        if self.hypothesis_f is not None and self.hypothesis_m is not None:
            number = template_number(self.hypothesis_f, self.hypothesis_m)
            hypotheses = [(number, self.hypothesis_f, self.hypothesis_m)]
        else:
            hypotheses = template_hypotheses(
                [template_draw(seed, eval_set, self.row)] if choice == "one" else [1, 2, 3]
            )
        provenance = {
            "list_dominant_gender": self.occupation.dominant_gender,
            "premise_origin": "eval_set",
            "eval_set": eval_set,
            "row": self.row,
        }
        premise_id = f"{eval_set}-r{self.row:05d}"
        return gender_samples(premise_id, self.premise, self.occupation, self.gender, hypotheses, provenance)


@dataclass(frozen=True)
class EvalWorkbook:
    """An evaluation-set workbook as read: its rows and what was skipped or ignored."""

    path: str
    sheet: str
    columns: dict[str, str]
    """Column role → the header as written in the file."""
    rows: tuple[EvalRow, ...]
    has_hypotheses: bool
    skipped_header_rows: tuple[int, ...] = field(default=())
    blank_rows: int = 0
    ignored_columns: tuple[str, ...] = field(default=())
    warnings: tuple[str, ...] = field(default=())
    """Rows repeated, possible person names, a second occupation named."""

    @property
    def caveat_rows(self) -> tuple[EvalRow, ...]:
        return tuple(row for row in self.rows if row.caveats)


def normalise_header(value: Any) -> str:
    """A header cell as matched: lower case, spaces/hyphens/underscores runs as one ``_``.

    >>> normalise_header("  Hypothesis  F "), normalise_header("dominant-gender"), normalise_header(None)
    ('hypothesis_f', 'dominant_gender', '')
    """
    return re.sub(r"[\s_\-]+", "_", str(value if value is not None else "").strip().lower()).strip("_")


def workbook_kind(path: Path) -> str | None:
    """``None`` for an ``.xlsx`` (zip) file, else what the file is, in words (for the refusal)."""
    with path.open("rb") as handle:
        head = handle.read(8)
    if head.startswith(_ZIP_MAGIC):
        return None
    if head == _OLE2_MAGIC:
        return _XLS
    return "empty" if not head else "not an .xlsx workbook (it does not start as a zip archive does)"


def _is_workbook(path: Path) -> bool:
    """True for a file that starts as an ``.xlsx`` (zip) or ``.xls`` (OLE2) workbook does."""
    try:
        return workbook_kind(path) in (None, _XLS)
    except OSError:
        return False


@contextmanager
def _worksheet(path: Path) -> Iterator[tuple[str, Iterator[tuple[Any, ...]]]]:
    """The first worksheet's title and rows, the workbook open while they are read."""
    openpyxl = import_extra("openpyxl", "xlsx", use="reading an .xlsx workbook", parameter="premises")
    try:
        kind = workbook_kind(path)
    except OSError as exc:
        raise SourceError(path, None, f"cannot read the file ({exc.strerror})") from exc
    if kind is not None:
        raise SourceError(path, None, f"the file is {kind}", fix=XLSX_FIX)
    with path.open("rb") as handle:  # a file object: openpyxl would refuse a workbook by its file name alone
        try:
            book = openpyxl.load_workbook(handle, read_only=True, data_only=True)
        except Exception as exc:  # openpyxl raises what its zip and XML parsers raise
            raise _damaged(path, exc) from exc
        try:
            if not book.worksheets:
                reason = "the workbook has no worksheet (xl/worksheets is empty or missing)"
                raise SourceError(path, None, reason, fix=XLSX_FIX)
            sheet = book.worksheets[0]
            yield sheet.title, _guarded(path, sheet.iter_rows(values_only=True))
        finally:
            book.close()


def _damaged(path: Path, exc: BaseException, part: str = "a part of the workbook") -> SourceError:
    """A workbook openpyxl cannot read, said in words: a missing part, a cut XML, a bad zip."""
    text = str(exc)
    if isinstance(exc, KeyError) and "worksheets" in text:
        reason = f"the workbook has no worksheet ({text.strip(chr(39))} is missing)"
    elif isinstance(exc, KeyError) and "sharedStrings" in text:
        reason = "its text cells refer to xl/sharedStrings.xml, which the workbook does not hold"
    elif isinstance(exc, SyntaxError):  # xml.etree's ParseError (and lxml's) derive from it
        reason = f"{part} is cut short or damaged XML ({text})"
    else:
        reason = f"a zip file but not a readable .xlsx workbook ({type(exc).__name__}: {text})"
    return SourceError(path, None, reason, fix=XLSX_FIX)


def _guarded(path: Path, rows: Iterable[tuple[Any, ...]]) -> Iterator[tuple[Any, ...]]:
    """The worksheet's rows; an error while they stream becomes a SourceError naming the file."""
    try:
        yield from rows
    except IndexError as exc:  # a shared-string index past the (missing) table
        reason = "a text cell refers to the shared strings (xl/sharedStrings.xml), which the workbook does not hold: it is damaged"
        raise SourceError(path, None, reason, fix=XLSX_FIX) from exc
    except Exception as exc:  # a cut worksheet (ParseError), a bad zip member
        raise _damaged(path, exc, "the worksheet") from exc


def _formula_at(path: Path, row: int, column: int) -> str | None:
    """The formula written in a cell (``=...``), or None: read only to name an empty cell."""
    import openpyxl

    try:
        with path.open("rb") as handle:
            book = openpyxl.load_workbook(handle, read_only=True, data_only=False)
            try:
                cells = next(book.worksheets[0].iter_rows(min_row=row, max_row=row, values_only=True), ())
            finally:
                book.close()
    except Exception:  # the values were read; this second look only names a formula
        return None
    value = cells[column - 1] if column - 1 < len(cells) else None
    return value if isinstance(value, str) and value.startswith("=") else None


def _match_columns(path: Path, header: Sequence[Any], line: int) -> tuple[dict[str, int], list[str]]:
    """Column role → index, and the ignored headers; refuses a header without a required role."""
    accepted = {name: role for role, names in COLUMN_NAMES.items() for name in names}
    found: dict[str, int] = {}
    ignored: list[str] = []
    for index, cell in enumerate(header):
        role = accepted.get(normalise_header(cell))
        if role is None:
            if normalise_header(cell):
                ignored.append(str(cell))
            continue
        if role in found:
            raise SourceError(
                path, role, f"columns {header[found[role]]!r} and {cell!r} both read as {role}", line=line
            )
        found[role] = index
    missing = [role for role in REQUIRED if role not in found]
    if missing:
        written = [str(c) for c in header if normalise_header(c)]
        raise SourceError(
            path,
            missing[0],
            f"the header row has no {missing[0]} column (it has {written}; accepted names for "
            f"{missing[0]}: {', '.join(COLUMN_NAMES[missing[0]])})",
            line=line,
            fix=XLSX_FIX,
        )
    if (HYPOTHESES[0] in found) != (HYPOTHESES[1] in found):
        present, absent = (HYPOTHESES if HYPOTHESES[0] in found else HYPOTHESES[::-1])[:2]
        raise SourceError(
            path, absent, f"the header has {present} but no {absent}; give both or neither", line=line
        )
    return found, ignored


def _cell_text(value: Any) -> str:
    return "" if value is None else " ".join(str(value).split())


def read_eval_workbook(
    path: str | Path, *, require_hypotheses: bool | None = None, strict: bool = False
) -> EvalWorkbook:
    """Read an evaluation-set workbook. ``require_hypotheses``: True refuses a file without
    hypothesis columns, False one with them; ``strict`` refuses a premise caveat."""
    path = Path(path)
    with _worksheet(path) as (sheet, rows):
        return _read_rows(path, sheet, rows, require_hypotheses, strict)


def _is_header(values: Sequence[Any]) -> bool:
    """Whether a row names every required column (the header, wherever it stands)."""
    names = {normalise_header(cell) for cell in values}
    return all(names & set(COLUMN_NAMES[role]) for role in REQUIRED)


def _read_rows(
    path: Path, sheet: str, rows: Iterable[tuple[Any, ...]], require_hypotheses: bool | None, strict: bool
) -> EvalWorkbook:
    numbered = list(enumerate(rows, start=1))
    nonblank = [(n, v) for n, v in numbered if any(_cell_text(c) for c in v)]
    if not nonblank:
        raise SourceError(path, None, f"worksheet {sheet!r} is empty: no header row", fix=XLSX_FIX)
    # the header applies to the rows above it (the authors' SNLI and MNLI sheets) as to those below
    header_number, header = next(((n, v) for n, v in nonblank if _is_header(v)), nonblank[0])
    columns, ignored = _match_columns(path, header, header_number)  # refuses a sheet without one
    has_hypotheses = HYPOTHESES[0] in columns
    if require_hypotheses is not None and require_hypotheses != has_hypotheses:
        wanted = "hypothesis_f and hypothesis_m columns" if require_hypotheses else "no hypothesis columns"
        raise SourceError(path, HYPOTHESES[0], f"this evaluation set has {wanted}", line=header_number)
    # read-only rows are padded to the sheet's widest row: the header ends at its last named cell
    width = max(i for i, cell in enumerate(header) if _cell_text(cell)) + 1
    read: list[OccupationRow] = []
    headers: list[int] = []
    for number, values in nonblank:
        beyond = [i for i, cell in enumerate(values) if i >= width and _cell_text(cell)]
        if beyond:
            raise OccupationRowError(
                RowOrigin(str(path), sheet=sheet, row=number),
                [
                    RowProblem(
                        None,
                        f"a cell beyond the {width} columns of the header (row {header_number}): "
                        f"{values[beyond[0]]!r}",
                        column=beyond[0] + 1,
                    )
                ],
            )
        cells = {role: values[index] if index < len(values) else None for role, index in columns.items()}
        if all(normalise_header(cells[role]) in COLUMN_NAMES[role] for role in cells):
            headers.append(number)  # the header, or the header again inside the data
            continue
        read.append(_row(path, sheet, number, cells, columns))
    flagged = [row for row in read if row.caveats]
    if strict and flagged:
        first = flagged[0].caveats[0]
        reason = (
            f"{first.reason} (strict: {len(flagged)} row(s) of the workbook have such a premise; "
            "without strict they are read and listed among the warnings)"
        )
        raise OccupationRowError(flagged[0].origin, [RowProblem("premise", reason, first.word)])
    return EvalWorkbook(
        str(path),
        sheet,
        {role: str(header[i]) for role, i in columns.items()},
        tuple(_eval_row(r) for r in read),
        has_hypotheses,
        tuple(n for n in headers if n != nonblank[0][0]),  # a header above all data is no stray one
        len(numbered) - nonblank[0][0] + 1 - len(nonblank),  # blank rows below the first filled one
        tuple(ignored),
        tuple(dict.fromkeys([w for r in read for w in r.warnings] + repeated_rows(read))),
    )


def _row(
    path: Path, sheet: str, number: int, cells: dict[str, Any], columns: dict[str, int]
) -> OccupationRow:
    """The row as an :class:`OccupationRow`; an empty cell holding an uncomputed formula is named."""
    origin = RowOrigin(str(path), sheet=sheet, row=number, columns={r: i + 1 for r, i in columns.items()})
    for role, value in cells.items():
        if _cell_text(value):
            continue
        formula = _formula_at(path, number, columns[role] + 1)
        if formula is not None:
            raise SourceError(
                path,
                role,
                f"{origin.cell(role)} holds the formula {formula!r} with no value computed: the workbook "
                "was saved by a program that does not compute formulas",
                line=number,
                fix="open it in Excel or LibreOffice and save it again, or paste the values",
            )
        cells[role] = ""  # the record refuses it as empty
    return OccupationRow(
        origin,
        cells["premise"],
        occupation=cells["occupation"],
        gender=cells["gender"],
        hypothesis_f=cells.get("hypothesis_f"),
        hypothesis_m=cells.get("hypothesis_m"),
    )


def _eval_row(row: OccupationRow) -> EvalRow:
    assert row.origin.row is not None and row.gender is not None
    return EvalRow(
        row.origin.row,
        row.occupation_info,
        row.premise,
        row.gender,
        row.hypothesis_f,
        row.hypothesis_m,
        tuple(f"{row.origin.cell('premise')}: {caveat.reason}" for caveat in row.caveats),
    )


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
PINNED_BLOBS = {blob: file for file, blob in OCCUPATION_EVAL_FILES.values()}


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
            or _is_workbook(path)
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
