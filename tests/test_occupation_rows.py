"""One gate for an occupation row (issue #34): a premise, its occupation, its gender label and its
hypotheses pass the same rules whether they come from a premises file or a workbook, and the
refusal says where the row came from (``file:line``, or the workbook's sheet and cell)."""

from __future__ import annotations

import datetime
import zipfile
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from nlibias.benchmarks.occupation_eval_sets import read_eval_workbook
from nlibias.benchmarks.occupation_rows import OccupationRow, OccupationRowError, RowOrigin
from nlibias.benchmarks.occupations import PremiseFileError, expand_occupations, read_premise_lines
from nlibias.cli.main import app
from nlibias.errors import SourceError

openpyxl = pytest.importorskip("openpyxl")

HEADER = ["occupation", "premise", "gender", "hypothesis_f", "hypothesis_m"]
F, M = "This text speaks of a female profession", "This text speaks of a male profession"
GOOD = ["nurse", "A nurse waits.", "F", F, M]


def workbook(path: Path, rows: list[list[Any]], header: list[Any] | None = None) -> Path:
    book = openpyxl.Workbook()
    sheet = book.active
    sheet.title = "Sheet1"
    sheet.append(HEADER if header is None else header)
    for row in rows:
        sheet.append(row)
    book.save(path)
    return path


def refusal(path: Path, *, strict: bool = False) -> SourceError:
    with pytest.raises(SourceError) as caught:
        read_eval_workbook(path, strict=strict)
    return caught.value


# -- the rules a premises file has, on the workbook route ------------------------------------------


def test_a_gendered_word_in_a_workbook_premise_is_refused_naming_the_cell(tmp_path: Path) -> None:
    path = workbook(tmp_path / "w.xlsx", [GOOD, ["nurse", "The nurse said she was tired.", "F", F, M]])
    error = refusal(path, strict=True)
    # row 3 (header row 1, GOOD row 2), premise in column B
    assert str(error).startswith(f"{path}: Sheet1!B3: field premise:")
    assert "gendered word 'she'" in str(error) and (error.line, error.field) == (3, "premise")


def test_a_premise_naming_another_occupation_than_its_label_is_refused(tmp_path: Path) -> None:
    path = workbook(tmp_path / "w.xlsx", [GOOD, ["janitor", "The nurse is resting.", "M", F, M]])
    error = refusal(path, strict=True)
    assert "Sheet1!B3" in str(error) and error.field == "premise"
    assert "labelled 'janitor'" in str(error) and "'nurse'" in str(error)


def test_the_published_sets_premise_findings_are_read_counted_and_listed(tmp_path: Path) -> None:
    # the authors' sets hold such rows (SNLI C39 "females", OOD B28 "prince", SNLI C1553 "a person
    # salespersons rice."): rows 3-5 here are read, and each is listed by its cell
    rows = [
        GOOD,
        ["accountant", "two accountants are robbing some females.", "F", F, M],  # row 3: gendered
        ["salesperson", "a person salespersons rice.", "M", F, M],  # row 4: names no occupation
        ["janitor", "The nurse is resting.", "M", F, M],  # row 5: names another occupation
    ]
    book = read_eval_workbook(workbook(tmp_path / "w.xlsx", rows))
    assert len(book.rows) == 4 and [r.row for r in book.caveat_rows] == [3, 4, 5]
    assert book.caveat_rows[0].caveats == ("Sheet1!B3: contains the gendered word 'females'",)
    assert book.caveat_rows[1].caveats == (
        "Sheet1!B4: names no occupation; the row is labelled 'salesperson'",
    )
    assert "labelled 'janitor' and its premise names 'nurse'" in book.caveat_rows[2].caveats[0]
    error = refusal(tmp_path / "w.xlsx", strict=True)  # the first, naming how many there are
    assert str(error).startswith(f"{tmp_path / 'w.xlsx'}: Sheet1!B3: field premise: contains the gendered")
    assert "3 row(s)" in str(error)


def test_the_expansion_counts_and_lists_the_premise_caveats_and_strict_refuses(tmp_path: Path) -> None:
    rows = [
        GOOD,
        ["nurse", "The nurse said she was tired.", "F", F, M],
        ["nurse", "A nurse sits.", "F", F, M],
    ]
    path = workbook(tmp_path / "w.xlsx", rows)
    expansion = expand_occupations(str(path))
    record = expansion.summary()["eval_sets"][0]
    assert len(expansion.samples) == 6  # 3 rows x (female, male)
    assert record["premise_caveats"] == {
        "rows": 1,
        "gendered_word": 1,
        "occupation_not_named": 0,
        "cells": ["Sheet1!B3: contains the gendered word 'she'"],
    }
    assert any("1 premise(s) would be refused" in w for w in expansion.warnings)
    with pytest.raises(SourceError, match="Sheet1!B3"):
        expand_occupations(str(path), strict=True)
    done = CliRunner().invoke(
        app, ["expand", "occupations", "--source", str(path), "--out", str(tmp_path / "r"), "--strict"]
    )
    assert done.exit_code == 2 and "Sheet1!B3" in done.output and "Traceback" not in done.output
    done = CliRunner().invoke(app, ["expand", "occupations", "--out", str(tmp_path / "t"), "--strict"])
    assert done.exit_code == 2 and "--strict" in done.output  # applies to evaluation sets only


@pytest.mark.parametrize(
    ("value", "word"),
    [(12345, "a number"), (datetime.datetime(2021, 3, 4), "a date"), ("12345", "not a sentence")],
)
def test_a_number_or_a_date_is_not_a_premise(tmp_path: Path, value: Any, word: str) -> None:
    path = workbook(tmp_path / "w.xlsx", [GOOD, ["nurse", value, "F", F, M]])
    error = refusal(path)
    assert "Sheet1!B3" in str(error) and word in str(error) and error.field == "premise"


def test_a_date_as_a_hypothesis_is_refused(tmp_path: Path) -> None:
    path = workbook(
        tmp_path / "w.xlsx", [GOOD, ["nurse", "A nurse waits here.", "F", datetime.date(2021, 3, 4), M]]
    )
    error = refusal(path)
    assert "Sheet1!D3" in str(error) and "a date" in str(error) and error.field == "hypothesis_f"


def test_a_cell_beyond_the_header_is_refused(tmp_path: Path) -> None:
    path = workbook(tmp_path / "w.xlsx", [GOOD, [*GOOD[:1], "A nurse is resting.", *GOOD[2:], "stray"]])
    error = refusal(path)
    assert "Sheet1!F3" in str(error) and "beyond the 5 columns of the header" in str(error)


def test_a_repeated_row_is_warned_about(tmp_path: Path) -> None:
    path = workbook(tmp_path / "w.xlsx", [GOOD, ["janitor", "A janitor waits.", "M", F, M], GOOD])
    summary = expand_occupations(path).summary()
    assert any("row 4 repeats row 2" in w for w in summary["warnings"]), summary["warnings"]


def test_swapped_hypotheses_are_refused(tmp_path: Path) -> None:
    path = workbook(tmp_path / "w.xlsx", [GOOD, ["nurse", "A nurse is resting.", "F", M, F]])
    error = refusal(path)
    assert "Sheet1!D3" in str(error) and "swapped" in str(error) and error.field == "hypothesis_f"
    # one side unmarked, the other marked with the wrong gender: swapped too
    path = workbook(tmp_path / "v.xlsx", [GOOD, ["nurse", "A nurse is resting.", "F", "Someone works.", F]])
    assert "swapped" in str(refusal(path))


def test_a_formula_without_a_cached_value_is_named_as_such(tmp_path: Path) -> None:
    path = workbook(tmp_path / "w.xlsx", [GOOD, ["nurse", '=CONCAT("A nurse ", "waits.")', "F", F, M]])
    error = refusal(path)
    assert "Sheet1!B3" in str(error) and "formula" in str(error) and "empty" not in str(error)


# -- damaged workbooks: clear refusals, not internal errors ---------------------------------------


def _rewrite(source: Path, target: Path, *, drop: tuple[str, ...] = (), cut: str | None = None) -> Path:
    with zipfile.ZipFile(source) as old, zipfile.ZipFile(target, "w") as new:
        for name in old.namelist():
            data = old.read(name)
            if name in drop:
                continue
            if name == cut:
                data = data[: len(data) // 2]
            new.writestr(name, data)
    return target


def _shared_strings_book(path: Path) -> Path:
    """A workbook whose text cells refer to xl/sharedStrings.xml (as Excel writes them), the file
    itself left out (and not listed among the parts)."""
    good = workbook(path.with_name("inline.xlsx"), [GOOD])
    texts = [*HEADER, *GOOD]
    cells = "".join(
        f'<row r="{r + 1}">'
        + "".join(f'<c r="{"ABCDE"[c]}{r + 1}" t="s"><v>{r * 5 + c}</v></c>' for c in range(5))
        + "</row>"
        for r in range(2)
    )
    sheet = (
        '<worksheet xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main">'
        f"<sheetData>{cells}</sheetData></worksheet>"
    )
    assert len(texts) == 10
    with zipfile.ZipFile(good) as old, zipfile.ZipFile(path, "w") as new:
        for name in old.namelist():
            new.writestr(name, sheet if name == "xl/worksheets/sheet1.xml" else old.read(name))
    return path


@pytest.mark.parametrize("damage", ["no-worksheet", "cut-worksheet", "no-shared-strings"])
def test_a_damaged_workbook_is_a_source_error_naming_the_file(tmp_path: Path, damage: str) -> None:
    good = workbook(tmp_path / "good.xlsx", [GOOD])
    path = tmp_path / f"{damage}.xlsx"
    if damage == "no-worksheet":
        _rewrite(good, path, drop=("xl/worksheets/sheet1.xml",))
    elif damage == "cut-worksheet":
        _rewrite(good, path, cut="xl/worksheets/sheet1.xml")
    else:
        _shared_strings_book(path)
    error = refusal(path)
    assert error.path == str(path)
    word = {
        "no-worksheet": "worksheet",
        "cut-worksheet": "cut short",
        "no-shared-strings": "sharedStrings.xml",
    }
    assert word[damage] in str(error)
    result = CliRunner().invoke(
        app, ["expand", "occupations", "--source", str(path), "--out", str(tmp_path / "o")]
    )
    assert result.exit_code not in (0, 70) and str(path) in " ".join(result.output.split())


# -- the same record on the premises-file route ----------------------------------------------------


def test_a_number_line_in_a_premises_file_is_not_a_sentence(tmp_path: Path) -> None:
    path = tmp_path / "premises.txt"
    path.write_text("The nurse is resting.\n12345\n2021-03-04 00:00:00\n", encoding="utf-8")
    with pytest.raises(PremiseFileError) as caught:
        read_premise_lines(path)
    assert [(p.line, "not a sentence" in p.reason) for p in caught.value.problems] == [(2, True), (3, True)]


def test_a_repeated_premise_line_is_warned_about(tmp_path: Path) -> None:
    path = tmp_path / "premises.txt"
    path.write_text(
        "The nurse is resting.\nThe janitor is eating.\nThe nurse is resting.\n", encoding="utf-8"
    )
    warnings = expand_occupations(path).warnings
    assert any(f"{path}:3 repeats line 1" in w for w in warnings), warnings


def test_the_record_names_where_it_came_from() -> None:
    with pytest.raises(OccupationRowError) as caught:
        OccupationRow(RowOrigin("p.txt", line=4), "The nurse thanked her colleague.")
    assert str(caught.value).startswith("p.txt:4: field premise: contains the gendered word 'her'")
    cell = RowOrigin("w.xlsx", sheet="Data", row=7, columns={"premise": 2})
    with pytest.raises(OccupationRowError) as caught:  # a labelled row keeps a gendered word (a caveat)
        OccupationRow(cell, "12345", occupation="nurse", gender="female")
    assert str(caught.value).startswith("w.xlsx: Data!B7: field premise:")
    kept = OccupationRow(cell, "The nurse thanked her colleague.", occupation="nurse", gender="female")
    assert [c.reason for c in kept.caveats] == ["contains the gendered word 'her'"]
    row = OccupationRow(
        cell, "A nurse waits.", occupation="nurse", gender="female", hypothesis_f=F, hypothesis_m=M
    )
    assert (row.occupation, row.gender) == ("nurse", "female")


def test_the_audit_report_lists_the_published_premise_caveats(tmp_path: Path) -> None:
    import nlibias
    from nlibias.report.load import load_run
    from nlibias.report.run_notes import run_caveats

    rows = [
        GOOD,
        ["nurse", "The nurse said she was tired.", "F", F, M],
        ["janitor", "The nurse rests.", "M", F, M],
    ]
    samples = nlibias.expand("occupations", str(workbook(tmp_path / "w.xlsx", rows)), out_dir=tmp_path / "s")
    nlibias.audit(
        samples, models=["fake:a"], bootstrap=0, cache=False, progress=False, out_dir=tmp_path / "run"
    )
    notes = [c.text for c in run_caveats(load_run(tmp_path / "run")) if c.kind == "published-premises"]
    # rows 3 (gendered word) and 4 (labelled janitor, names nurse) of the one set, named "w"
    assert notes == [
        "2 premises of the w set would be refused in a premises file (1 with a gendered word, 1 not "
        "naming their row's occupation): read as the authors published them; expansion.json lists "
        "them (premise_caveats)."
    ]
