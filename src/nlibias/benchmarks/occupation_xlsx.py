"""Read paper 004's evaluation sets as the authors wrote them: Excel workbooks (``.xlsx``).

The authors' ``SNLI_Evaluation_Set.xlsx`` and ``MNLI_Evaluation_Set.xlsx`` hold one premise per
row with its occupation, the gender the authors assign the occupation (``F`` or ``M``) and the
row's own female and male hypothesis; ``OOD_Evaluation_Set.xlsx`` has no hypothesis columns.
:func:`read_eval_workbook` reads the first worksheet of any such workbook (``openpyxl``, read-only):

- the header is the first row that names the required columns, wherever it stands (the authors'
  SNLI and MNLI sheets have theirs at row 1451, below 1,450 data rows, and their ``sentence1``
  column is the premise); it applies to every row, above it and below; header names match case-, space- and underscore-blind
  (``Hypothesis F`` is ``hypothesis_f``) against the names in :data:`COLUMN_NAMES`; columns
  ``occupation``, ``premise`` and ``gender`` are required, ``hypothesis_f`` and ``hypothesis_m``
  come together or not at all; other columns (an unnamed index, notes) are ignored and listed;
- a header row that is not the sheet's first row (a stray header inside the sheet) is skipped and
  reported; blank rows between the first and the last filled row are skipped and counted;
- any other row must have every required cell: an occupation of the 38 (singular or plural, any
  case), a gender ``F``/``M`` (or ``female``/``male``), a premise and, in a set with hypotheses,
  two different hypotheses; a row that does not is refused with its row number and column.

A file that is not an ``.xlsx`` workbook is refused with what it is (an ``.xls`` of Excel 97-2003,
some other zip, text).
"""

from __future__ import annotations

import re
import zipfile
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from nlibias.benchmarks.occupation_list import Occupation, load_occupations
from nlibias.errors import ConfigError, SourceError

#: The column roles and the header names (normalised: lower case, runs of spaces, hyphens and
#: underscores as one ``_``) each accepts.
COLUMN_NAMES: dict[str, tuple[str, ...]] = {
    "occupation": ("occupation", "occupations", "profession"),
    "premise": ("premise", "premises", "sentence", "sentences", "sentence1"),
    "gender": ("gender", "dominant_gender"),
    "hypothesis_f": ("hypothesis_f", "hypothesis_female", "female_hypothesis", "f_hypothesis"),
    "hypothesis_m": ("hypothesis_m", "hypothesis_male", "male_hypothesis", "m_hypothesis"),
}
REQUIRED = ("occupation", "premise", "gender")
HYPOTHESES = ("hypothesis_f", "hypothesis_m")
GENDER_VALUES = {"f": "female", "female": "female", "m": "male", "male": "male"}
_ZIP_MAGIC = b"PK\x03\x04"
_OLE2_MAGIC = b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1"
XLSX_FIX = (
    "nlibias reads paper 004's evaluation sets as Excel .xlsx workbooks (one premise per row: "
    "occupation, premise, gender F/M, and hypothesis_f/hypothesis_m where the set has hypotheses); "
    "premises as text go one per line in a UTF-8 file"
)


@dataclass(frozen=True)
class EvalRow:
    """One data row of an evaluation-set workbook."""

    row: int
    """The worksheet row number, as Excel shows it (1-based, the header counted)."""
    occupation: Occupation
    premise: str
    gender: str
    """The file's label for the occupation: ``female`` or ``male`` (its dominant gender)."""
    hypothesis_f: str | None = None
    hypothesis_m: str | None = None


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


def normalise_header(value: Any) -> str:
    """A header cell as matched: lower case, spaces/hyphens/underscores runs as one ``_``.

    >>> normalise_header("  Hypothesis  F "), normalise_header("dominant-gender"), normalise_header(None)
    ('hypothesis_f', 'dominant_gender', '')
    """
    return re.sub(r"[\s_\-]+", "_", str(value if value is not None else "").strip().lower()).strip("_")


def workbook_kind(path: Path) -> str | None:
    """``None`` for an ``.xlsx`` (zip) file, else what the file is, in words (for the refusal)."""
    try:
        with path.open("rb") as handle:
            head = handle.read(8)
    except OSError as exc:
        raise SourceError(path, None, f"cannot read the file ({exc.strerror})") from exc
    if head.startswith(_ZIP_MAGIC):
        return None
    if head == _OLE2_MAGIC:
        return "an Excel 97-2003 workbook (.xls, OLE2), not .xlsx: open it in Excel or LibreOffice and save it as .xlsx"
    if not head:
        return "empty"
    return "not an .xlsx workbook (it does not start as a zip archive does)"


def is_workbook(path: Path) -> bool:
    """True for a file that starts as an ``.xlsx`` (zip) or ``.xls`` (OLE2) workbook does."""
    try:
        with path.open("rb") as handle:
            head = handle.read(8)
    except OSError:
        return False
    return head.startswith(_ZIP_MAGIC) or head == _OLE2_MAGIC


def _occupation_index() -> dict[str, Occupation]:
    index: dict[str, Occupation] = {}
    for occupation in load_occupations():
        index[" ".join(occupation.name.lower().split())] = occupation
        index[" ".join(occupation.plural.lower().split())] = occupation
    return index


def _open_rows(path: Path) -> tuple[str, Iterable[tuple[Any, ...]], Any]:
    try:
        import openpyxl
    except ImportError as exc:  # the xlsx extra is not installed
        raise ConfigError(
            "reading an .xlsx workbook needs openpyxl: pip install 'nlibias[xlsx]'", parameter="premises"
        ) from exc
    kind = workbook_kind(path)
    if kind is not None:
        raise SourceError(path, None, f"the file is {kind}", fix=XLSX_FIX)
    from openpyxl.utils.exceptions import InvalidFileException

    handle = path.open("rb")  # a file object: openpyxl would refuse a workbook by its file name alone
    try:
        book = openpyxl.load_workbook(handle, read_only=True, data_only=True)
    except (zipfile.BadZipFile, InvalidFileException, KeyError, OSError, ValueError) as exc:
        handle.close()
        raise SourceError(
            path, None, f"a zip file but not a readable .xlsx workbook ({exc})", fix=XLSX_FIX
        ) from exc
    sheet = book.worksheets[0]
    return sheet.title, sheet.iter_rows(values_only=True), (book, handle)


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


def read_eval_workbook(path: str | Path, *, require_hypotheses: bool | None = None) -> EvalWorkbook:
    """Read an evaluation-set workbook (see the module notes). ``require_hypotheses``: True refuses a
    file without hypothesis columns, False one with them, None takes what the file has."""
    path = Path(path)
    sheet, rows, (book, handle) = _open_rows(path)
    try:
        return _read_rows(path, sheet, rows, require_hypotheses)
    finally:
        book.close()
        handle.close()


def _is_header(values: Sequence[Any]) -> bool:
    """Whether a row names every required column (the header, wherever it stands)."""
    names = {normalise_header(cell) for cell in values}
    return all(names & set(COLUMN_NAMES[role]) for role in REQUIRED)


def _read_rows(
    path: Path, sheet: str, rows: Iterable[tuple[Any, ...]], require_hypotheses: bool | None
) -> EvalWorkbook:
    numbered = list(enumerate(rows, start=1))
    nonblank = [(n, v) for n, v in numbered if any(_cell_text(c) for c in v)]
    if not nonblank:
        raise SourceError(path, None, f"worksheet {sheet!r} is empty: no header row", fix=XLSX_FIX)
    # The authors' SNLI and MNLI sheets were written as two frames one below the other: their only
    # header stands at row 1451, under 1,450 data rows. So the header is the first row that names
    # the columns, wherever it is, and it applies to the rows above it as to those below.
    header_number, header = next(((n, v) for n, v in nonblank if _is_header(v)), nonblank[0])
    columns, ignored = _match_columns(path, header, header_number)  # refuses a sheet without one
    has_hypotheses = HYPOTHESES[0] in columns
    if require_hypotheses is not None and require_hypotheses != has_hypotheses:
        wanted = "hypothesis_f and hypothesis_m columns" if require_hypotheses else "no hypothesis columns"
        raise SourceError(path, HYPOTHESES[0], f"this evaluation set has {wanted}", line=header_number)
    occupations = _occupation_index()
    read: list[EvalRow] = []
    headers: list[int] = []
    for number, values in nonblank:
        cells = [_cell_text(v) for v in values]
        if len(cells) > len(header) and any(cells[len(header) :]):
            raise SourceError(
                path,
                None,
                f"row {number} has cells beyond the {len(header)} columns of the header (row {header_number})",
                line=number,
            )
        row = {role: cells[index] if index < len(cells) else "" for role, index in columns.items()}
        if all(normalise_header(row[role]) in COLUMN_NAMES[role] for role in row):
            headers.append(number)  # the header, or the header again inside the data
            continue
        read.append(_row(path, number, row, occupations))
    return EvalWorkbook(
        str(path),
        sheet,
        {role: str(header[i]) for role, i in columns.items()},
        tuple(read),
        has_hypotheses,
        tuple(n for n in headers if n != nonblank[0][0]),  # a header above all data is no stray one
        len(numbered) - nonblank[0][0] + 1 - len(nonblank),  # blank rows below the first filled one
        tuple(ignored),
    )


def _row(path: Path, number: int, cells: dict[str, str], occupations: dict[str, Occupation]) -> EvalRow:
    for role, text in cells.items():
        if not text:
            raise SourceError(path, role, f"row {number} has an empty {role} cell", line=number)
    occupation = occupations.get(cells["occupation"].lower())
    if occupation is None:
        raise SourceError(
            path,
            "occupation",
            f"row {number}: {cells['occupation']!r} is not one of the 38 occupations of occupations.json",
            line=number,
        )
    gender = GENDER_VALUES.get(cells["gender"].lower())
    if gender is None:
        raise SourceError(
            path, "gender", f"row {number}: {cells['gender']!r} is not F, M, female or male", line=number
        )
    hypothesis_f, hypothesis_m = cells.get("hypothesis_f"), cells.get("hypothesis_m")
    if hypothesis_f is not None and hypothesis_f == hypothesis_m:
        raise SourceError(
            path,
            "hypothesis_m",
            f"row {number}: the female and the male hypothesis are the same text ({hypothesis_f!r})",
            line=number,
        )
    return EvalRow(number, occupation, cells["premise"], gender, hypothesis_f, hypothesis_m)
