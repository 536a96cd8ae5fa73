"""Bad inputs of issue #34 (part B), part of the corpus of ``bad_input_cases``: occupation
workbooks that a premises file's rules refuse (named by file and cell), damaged workbooks, an
option that applies to nothing, and pinned benchmark data edited in ``NLIBIAS_DATA_DIR``."""

from __future__ import annotations

import datetime
import shutil
import zipfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from bad_input_corpus import Base, Case

HEADER = ["occupation", "premise", "gender", "hypothesis_f", "hypothesis_m"]
F, M = "This text speaks of a female profession", "This text speaks of a male profession"
GOOD = ["nurse", "A nurse waits.", "F", F, M]


def _workbook(path: Path, rows: list[list[Any]], header: list[str] = HEADER) -> Path:
    import openpyxl

    book = openpyxl.Workbook()
    sheet = book.active
    assert sheet is not None
    sheet.title = "Sheet1"
    sheet.append(header)
    for row in rows:
        sheet.append(row)
    book.save(path)
    return path


def _expand(path: Path, d: Path, *extra: str) -> list[str]:
    return ["expand", "occupations", "--source", str(path), *extra, "--out", str(d / "out")]


def _rewrite(source: Path, target: Path, *, drop: str | None = None, cut: str | None = None) -> Path:
    with zipfile.ZipFile(source) as old, zipfile.ZipFile(target, "w") as new:
        for name in old.namelist():
            if name == drop:
                continue
            data = old.read(name)
            new.writestr(name, data[: len(data) // 2] if name == cut else data)
    return target


def _shared_strings_missing(d: Path) -> Path:
    """Text cells that refer to xl/sharedStrings.xml (as Excel writes them), that part left out."""
    good = _workbook(d / "inline.xlsx", [GOOD])
    cells = "".join(
        f'<row r="{r + 1}">'
        + "".join(f'<c r="{"ABCDE"[c]}{r + 1}" t="s"><v>{r * 5 + c}</v></c>' for c in range(5))
        + "</row>"
        for r in range(2)
    )
    sheet = f'<worksheet xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"><sheetData>{cells}</sheetData></worksheet>'
    path = d / "shared.xlsx"
    with zipfile.ZipFile(good) as old, zipfile.ZipFile(path, "w") as new:
        for name in old.namelist():
            new.writestr(name, sheet if name == "xl/worksheets/sheet1.xml" else old.read(name))
    return path


def workbook_cases() -> list[Case]:
    """Occupation workbooks: each row passes the premises file's rules, named by sheet and cell."""
    rows: dict[str, tuple[list[list[Any]], str]] = {
        "gendered-premise": ([GOOD, ["nurse", "The nurse said she was tired.", "F", F, M]], "Sheet1!B3"),
        "other-occupation": ([GOOD, ["janitor", "The nurse is resting.", "M", F, M]], "Sheet1!B3"),
        "number-premise": ([GOOD, ["nurse", 12345, "F", F, M]], "Sheet1!B3"),
        "date-premise": ([GOOD, ["nurse", datetime.datetime(2021, 3, 4), "F", F, M]], "Sheet1!B3"),
        "cell-beyond-header": ([GOOD, ["nurse", "A nurse is resting.", "F", F, M, "stray"]], "Sheet1!F3"),
        "swapped-hypotheses": ([GOOD, ["nurse", "A nurse is resting.", "F", M, F]], "Sheet1!D3"),
        "formula-without-value": ([GOOD, ["nurse", '=CONCAT("A nurse ", "waits.")', "F", F, M]], "formula"),
    }
    # issue #48: the published sets have such premises, read and listed by default; --strict refuses
    strict = {"gendered-premise", "other-occupation"}
    found: list[Case] = []
    for name, (content, cell) in rows.items():

        def build(
            d: Path, base: Base, content: list[list[Any]] = content, cell: str = cell, name: str = name
        ) -> tuple[list[str], str]:
            path = _workbook(d / "set.xlsx", content)
            extra = ["--strict"] if name in strict else []
            return _expand(path, d, *extra), f"{path}: {cell}" if "!" in cell else str(path)

        found.append(Case(f"occupations-xlsx/{name}", build))

    def repeated(d: Path, base: Base) -> tuple[list[str], str]:
        path = _workbook(d / "set.xlsx", [GOOD, ["janitor", "A janitor waits.", "M", F, M], GOOD])
        return _expand(path, d), "row 4 repeats row 2"

    found.append(Case("occupations-xlsx/repeated-row", repeated, expect="warn"))
    damaged: dict[str, Callable[[Path], Path]] = {
        "no-worksheet": lambda d: _rewrite(
            _workbook(d / "g.xlsx", [GOOD]), d / "set.xlsx", drop="xl/worksheets/sheet1.xml"
        ),
        "cut-worksheet": lambda d: _rewrite(
            _workbook(d / "g.xlsx", [GOOD]), d / "set.xlsx", cut="xl/worksheets/sheet1.xml"
        ),
        "no-shared-strings": _shared_strings_missing,
    }
    for name, make in damaged.items():

        def build_damaged(d: Path, base: Base, make: Callable[[Path], Path] = make) -> tuple[list[str], str]:
            path = make(d)
            return _expand(path, d), str(path)

        found.append(Case(f"occupations-xlsx/{name}", build_damaged))

    def own_hypotheses(d: Path, base: Base) -> tuple[list[str], str]:
        path = _workbook(d / "set.xlsx", [GOOD])
        return _expand(path, d, "--hypothesis-templates", "all"), "--hypothesis-templates"

    found.append(Case("options/hypothesis-templates-with-own-hypotheses", own_hypotheses))
    return found


def _data_copy(d: Path, folder: str) -> Path:
    """The shared data's ``folder`` copied into the case's own data dir (``d/data``)."""
    target = d / "data" / folder
    shutil.copytree(_shared_data() / folder, target)
    return target


def _shared_data() -> Path:
    import os

    return Path(os.environ.get("NLIBIAS_DATA_DIR", Path(__file__).resolve().parents[2] / "shared" / "data"))


def _data_env(d: Path) -> dict[str, str]:
    return {
        "NLIBIAS_DATA_DIR": str(d / "data"),
        "XDG_CACHE_HOME": str(d / "cache"),
        "NLIBIAS_ALLOW_MODIFIED_DATA": "",
    }


def pinned_data_cases() -> list[Case]:
    """Pinned benchmark data edited in NLIBIAS_DATA_DIR: refused, naming the file."""

    def bbnli_word(d: Path, base: Base) -> tuple[list[str], str]:
        path = _data_copy(d, "bbnli") / "gender" / "man_is_to_breadwinner.json"
        path.write_text(path.read_text(encoding="utf-8").replace(" the ", " a ", 1), encoding="utf-8")
        return ["expand", "bbnli", "--out", str(d / "out")], str(path)

    def crows_row(d: Path, base: Base) -> tuple[list[str], str]:
        path = _data_copy(d, "crows-pairs") / "crows_pairs_anonymized.csv"
        lines = path.read_text(encoding="utf-8").split("\n")
        lines[2] = lines[2].replace("poor", "rich", 1)
        path.write_text("\n".join(lines), encoding="utf-8")
        return ["expand", "crows-pairs", "--out", str(d / "out")], str(path)

    return [
        Case("pinned-data/bbnli-word-altered", bbnli_word, env=_data_env),
        Case("pinned-data/crows-pairs-row-edited", crows_row, env=_data_env),
    ]


def cases() -> list[Case]:
    return [*workbook_cases(), *pinned_data_cases()]
