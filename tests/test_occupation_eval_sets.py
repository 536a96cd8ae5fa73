"""Paper 004's evaluation sets read from workbooks built here (never the authors' files), and the
paper's binary S scored from an old-style predictions file with ``nlibias score``."""

from __future__ import annotations

import hashlib
import json
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from nlibias.benchmarks import data_locations
from nlibias.benchmarks.occupation_eval_sets import EVAL_SET_DATA, read_eval_workbook
from nlibias.benchmarks.occupation_list import HYPOTHESIS_TEMPLATES
from nlibias.benchmarks.occupations import expand_eval_sets, expand_occupations
from nlibias.cli.main import app
from nlibias.errors import ConfigError, SourceError

openpyxl = pytest.importorskip("openpyxl")

HEADER = ["Occupation", "Premise", "Gender", "hypothesis_f", "Hypothesis M"]
T2 = HYPOTHESIS_TEMPLATES[1]  # "This text talks about a {gender} occupation"


def workbook(path: Path, rows: list[list[Any]], header: list[Any] | None = None) -> Path:
    book = openpyxl.Workbook()
    sheet = book.active
    sheet.title = "Sheet1"
    sheet.append(HEADER if header is None else header)
    for row in rows:
        sheet.append(row)
    book.save(path)
    return path


def snli_like(path: Path) -> Path:
    """Five data rows (sheet rows 2-4 and 6-7), the header again at row 5, a blank row 8."""
    f, m = T2.format(gender="female"), T2.format(gender="male")
    return workbook(
        path,
        [
            ["nurse", "A nurse is resting.", "F", f, m],  # row 2: template 2
            ["tailor", "The tailor sews.", "M", f, m],  # row 3: the file says M, occupations.json female
            ["Janitors", "Janitors are busy.", " m ", "A woman works here.", "A man works here."],  # row 4
            ["occupation", "premise", "gender", "hypothesis_f", "hypothesis_m"],  # row 5: stray header
            ["tailor", "A tailor waits.", "M", f, m],  # row 6
            ["CEO", "The CEO smiled.", "male", f, m],  # row 7
            [None, None, None, None, None],  # row 8: blank
        ],
    )


def test_counts_stray_header_and_relabel(tmp_path: Path) -> None:
    path = snli_like(tmp_path / "SNLI_Evaluation_Set.xlsx")
    book = read_eval_workbook(path)
    assert [r.row for r in book.rows] == [2, 3, 4, 6, 7] and book.skipped_header_rows == (5,)
    assert book.blank_rows == 1 and book.has_hypotheses
    assert book.columns == {
        "occupation": "Occupation", "premise": "Premise", "gender": "Gender",
        "hypothesis_f": "hypothesis_f", "hypothesis_m": "Hypothesis M",
    }  # fmt: skip
    expansion = expand_occupations(path)
    summary = expansion.summary()
    (record,) = summary["eval_sets"]
    assert record["eval_set"] == "snli"  # the authors' file name names the set
    # 5 rows, one pair each: 5 pairs, 10 samples; genders F 1 (nurse), M 4 (tailor x2, janitor, CEO)
    assert (record["rows"], summary["pairs"], summary["samples"]) == (5, 5, 10)
    assert record["rows_by_gender"] == {"female": 1, "male": 4}
    assert record["skipped_header_rows"] == [5]
    assert "snli: row 5 repeats the header row; skipped" in summary["warnings"]
    # Rows 2, 3, 6, 7 hold Table 3's template 2; row 4 its own pair
    assert record["pairs_by_template"] == {"2": 4, "file": 1}
    assert record["label_differences"] == [
        {"occupation": "tailor", "file": "male", "occupations.json": "female", "rows": 2}
    ]
    assert any("labels tailor male in 2 row(s)" in w for w in summary["warnings"])
    assert record["authors_file"] is None  # not the authors' blob
    assert any("differs from the authors' file" in w for w in summary["warnings"])
    tailor = [s for s in expansion.samples if s.subtopic == "tailor"]
    # The file's label wins: the male hypothesis is the stereotype-aligned one
    assert {(s.group, s.stereotype) for s in tailor} == {("male", "pro"), ("female", "anti")}
    janitor = [s for s in expansion.samples if s.subtopic == "janitor"]
    assert [s.hypothesis for s in janitor] == ["A woman works here.", "A man works here."]
    assert {s.provenance["eval_set"] for s in expansion.samples} == {"snli"}


@pytest.mark.parametrize(
    ("row", "field", "column", "match"),
    [
        (["nurse", "", "F", "a", "b"], "premise", "B", "the premise is empty"),
        (["nurse", "A nurse waits here.", "X", "a", "b"], "gender", "C", "'X' is not F, M"),
        (
            ["astronaut", "A nurse waits here.", "F", "a", "b"],
            "occupation",
            "A",
            "'astronaut' is not one of the 38",
        ),
        (
            ["nurse", "A nurse waits here.", "F", "same", "same"],
            "hypothesis_m",
            "E",
            "the female and the male",
        ),
        (["nurse", "A nurse waits here.", "F", "a"], "hypothesis_m", "E", "the hypothesis_m is empty"),
    ],
)
def test_a_malformed_row_is_refused_with_its_row_and_column(
    tmp_path: Path, row, field, column, match
) -> None:
    path = workbook(tmp_path / "x.xlsx", [["nurse", "A nurse waits.", "F", "a", "b"], row])
    with pytest.raises(SourceError, match=match) as error:
        read_eval_workbook(path)
    assert (error.value.line, error.value.field) == (3, field)
    assert str(error.value).startswith(f"{path}: Sheet1!{column}3: field {field}:")


def test_header_problems(tmp_path: Path) -> None:
    no_gender = workbook(tmp_path / "a.xlsx", [["nurse", "P."]], header=["occupation", "sentence"])
    with pytest.raises(SourceError, match="no gender column") as error:
        read_eval_workbook(no_gender)
    assert (error.value.line, error.value.field) == (1, "gender")
    one_hypothesis = workbook(
        tmp_path / "b.xlsx",
        [["nurse", "P.", "F", "h"]],
        header=["occupation", "premise", "gender", "hypothesis_f"],
    )
    with pytest.raises(SourceError, match="hypothesis_f but no hypothesis_m"):
        read_eval_workbook(one_hypothesis)
    ood_shaped = workbook(
        tmp_path / "c.xlsx", [["nurse", "P.", "F"]], header=["occupation", "premise", "gender"]
    )
    with pytest.raises(SourceError, match="has hypothesis_f and hypothesis_m columns"):
        read_eval_workbook(ood_shaped, require_hypotheses=True)


def test_a_file_that_is_not_xlsx_says_what_it_is(tmp_path: Path) -> None:
    text = tmp_path / "premises.xlsx"
    text.write_text("A nurse waits.\n")
    with pytest.raises(SourceError, match=r"not an \.xlsx workbook") as error:
        expand_occupations(text)
    assert "nlibias reads paper 004's evaluation sets as Excel .xlsx" in str(error.value)
    old_excel = tmp_path / "set.xls"
    old_excel.write_bytes(b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1" + b"\0" * 100)
    with pytest.raises(SourceError, match=r"Excel 97-2003 workbook \(.xls, OLE2\)"):
        expand_occupations(old_excel)
    # A workbook under a .txt name is still recognised as one (today's "not UTF-8 text: byte 0x9d")
    disguised = snli_like(tmp_path / "w.xlsx").rename(tmp_path / "w.txt")
    assert expand_occupations(disguised).summary()["pairs"] == 5


def ood_like(path: Path, n: int = 30) -> Path:
    names = ["nurse", "janitor", "editor"]
    return workbook(
        path,
        [
            [
                names[i % 3],
                f"The {names[i % 3]} waits in room {i}.",
                "F" if names[i % 3] != "janitor" else "M",
            ]
            for i in range(n)
        ],
        header=["occupation", "premise", "gender"],
    )


def test_ood_templates_are_a_seeded_reproducible_draw(tmp_path: Path) -> None:
    path = ood_like(tmp_path / "OOD_Evaluation_Set.xlsx")
    first = expand_eval_sets([path], seed=0)
    again = expand_eval_sets([path], seed=0)
    assert first.samples == again.samples
    assert len(first.samples) == 60  # 30 premises x 1 template x 2 genders

    def drawn(seed: int, row: int) -> int:  # the documented rule, written out again
        return 1 + int(hashlib.sha256(f"{seed}:ood:{row}".encode()).hexdigest(), 16) % 3

    female = [s for s in first.samples if s.group == "female"]
    assert [s.provenance["hypothesis_template"] for s in female] == [drawn(0, row) for row in range(2, 32)]
    assert female[0].hypothesis == HYPOTHESIS_TEMPLATES[drawn(0, 2) - 1].format(gender="female")
    other = [s.provenance["hypothesis_template"] for s in expand_eval_sets([path], seed=1).samples]
    assert other != [s.provenance["hypothesis_template"] for s in first.samples]
    (record,) = first.summary()["eval_sets"]
    assert (record["hypotheses"], record["seed"]) == ("templates: one", 0)
    assert sum(record["pairs_by_template"].values()) == 30
    every = expand_eval_sets([path], hypothesis_templates="all")
    assert len(every.samples) == 180  # 30 x 3 templates x 2
    with pytest.raises(ConfigError) as error:
        expand_eval_sets([path], hypothesis_templates="two")
    assert error.value.parameter == "hypothesis_templates"
    with pytest.raises(ConfigError) as error:
        expand_occupations(None, seed=3)
    assert error.value.parameter == "seed"


def test_named_set_from_the_data_dir_and_the_pinned_download(tmp_path: Path, monkeypatch) -> None:
    data = tmp_path / "data"
    (data / "occupations-eval").mkdir(parents=True)
    snli_like(data / "occupations-eval" / "SNLI_Evaluation_Set.xlsx")
    monkeypatch.setenv("NLIBIAS_DATA_DIR", str(data))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))  # the verification cache
    # not the authors' file: refused under its pinned name, unless the user opts out
    with pytest.raises(SourceError, match="differs from the pinned snli-eval data"):
        expand_occupations("snli-eval")
    monkeypatch.setenv("NLIBIAS_ALLOW_MODIFIED_DATA", "1")
    with pytest.warns(UserWarning, match="differs from the pinned snli-eval data"):
        summary = expand_occupations("snli-eval").summary()
    assert summary["eval_sets"][0]["eval_set"] == "snli"
    assert "snli: 5 data rows; the paper's Table 1 has 1900" in summary["warnings"]
    with pytest.raises(SourceError, match="has hypothesis_f and hypothesis_m columns"):
        ood_like(data / "occupations-eval" / "MNLI_Evaluation_Set.xlsx")
        with pytest.warns(UserWarning, match="differs from the pinned mnli-eval data"):
            expand_occupations("mnli-eval")
    # The download: only the file asked for, checked by git blob id
    payload = ood_like(tmp_path / "o.xlsx").read_bytes()
    blob = hashlib.sha1(b"blob %d\0" % len(payload) + payload).hexdigest()
    fetched: list[str] = []

    class Response:
        def __enter__(self) -> Response:
            return self

        def __exit__(self, *args: object) -> None:
            return None

        def read(self) -> bytes:
            return payload

    def urlopen(url: str, timeout: float) -> Response:
        fetched.append(url)
        return Response()

    monkeypatch.setattr(data_locations.urllib.request, "urlopen", urlopen)
    ood = EVAL_SET_DATA["ood-eval"]
    url = ood.files["OOD_Evaluation_Set.xlsx"][0]
    assert url.startswith("https://raw.githubusercontent.com/shanyas10/Evaluating-gender-bias/bdb4a8e")
    with pytest.raises(ValueError, match="checksum mismatch"):
        data_locations.download_data(ood, tmp_path / "cache")
    ours = replace(ood, files={"OOD_Evaluation_Set.xlsx": (url, f"gitblob:{blob}")})
    got = data_locations.download_data(ours, tmp_path / "cache")
    assert fetched == [url, url]  # never the SNLI or MNLI file
    assert sorted(p.name for p in got.iterdir()) == ["OOD_Evaluation_Set.xlsx"]


def _cli(*args: str) -> str:
    result = CliRunner().invoke(app, list(args))
    assert result.exit_code == 0, result.output
    return result.output


def test_two_sets_in_one_run_give_the_i_and_o_columns(tmp_path: Path) -> None:
    snli = snli_like(tmp_path / "SNLI_Evaluation_Set.xlsx")
    ood = ood_like(tmp_path / "OOD_Evaluation_Set.xlsx", n=6)
    output = _cli("expand", "occupations", "--source", f"{snli},{ood}", "--out", str(tmp_path / "s"))
    assert "header row repeated inside the sheet, skipped: rows [5]" in output
    assert "tailor: the file says male (2 row(s)), occupations.json female" in output
    summary = json.loads((tmp_path / "s" / "expansion.json").read_text())
    assert [r["eval_set"] for r in summary["eval_sets"]] == ["snli", "ood"] and summary["pairs"] == 5 + 6
    tables = _cli("audit", "--samples", str(tmp_path / "s"), "--model", "fake:a", "--out", str(tmp_path / "r"),
                  "--bootstrap", "0", "--no-cache")  # fmt: skip
    metrics = json.loads((tmp_path / "r" / "metrics.json").read_text())["models"]["a"]
    assert {k: v["n_pairs"] for k, v in metrics["by_eval_set"].items()} == {"ood": 6, "snli": 5}
    assert metrics["overall"]["dominant_gender_by_occupation"]["tailor"] == "male"
    assert "S snli | dP snli | B snli | S ood" in tables  # I before O, as the paper's Table 5
    assert "* the samples label tailor male where occupations.json says female" in tables


def test_score_uses_the_binary_s_and_reports_s_3way_beside_it(tmp_path: Path) -> None:
    """An old predictions file (3-way labels and probabilities, as nlibias always wrote them)
    scored with the paper's binary S."""
    _cli("expand", "occupations", "--source", str(snli_like(tmp_path / "SNLI_Evaluation_Set.xlsx")),
         "--out", str(tmp_path / "s"))  # fmt: skip
    ids = [json.loads(line)["id"] for line in (tmp_path / "s" / "samples.jsonl").read_text().splitlines()]
    # (female, male) probabilities (e, n, c) of each pair, and what they give:
    probs = [
        ((0.5, 0.3, 0.2), (0.2, 0.7, 0.1)),  # 3-way E / N: differ; binary E / E: same
        ((0.1, 0.6, 0.3), (0.3, 0.6, 0.1)),  # 3-way N / N: same;   binary C / E: differ
        ((0.2, 0.6, 0.2), (0.1, 0.2, 0.7)),  # 3-way N / C: differ; binary E (a tie) / C: differ
        ((0.6, 0.2, 0.2), (0.4, 0.5, 0.1)),  # 3-way E / N: differ; binary E / E: same
        ((0.1, 0.1, 0.8), (0.3, 0.4, 0.3)),  # 3-way C / N: differ; binary C / E (a tie): differ
    ]
    # S (binary): pairs 1 and 4 agree = 2/5 = 40%; S_3way: pair 2 only = 1/5 = 20%
    labels = ("entailment", "neutral", "contradiction")
    lines = []
    for pair_index, pair in enumerate(probs):
        for side, p in enumerate(pair):
            label = labels[max(range(3), key=lambda j: p[j])]
            lines.append({"id": ids[2 * pair_index + side], "model": "old", "label": label,
                          "probs": dict(zip(labels, p, strict=True))})  # fmt: skip
    predictions = tmp_path / "predictions.jsonl"
    predictions.write_text("".join(json.dumps(line) + "\n" for line in lines))
    _cli("score", "--samples", str(tmp_path / "s"), "--predictions", str(predictions), "--out",
         str(tmp_path / "r"), "--bootstrap", "0")  # fmt: skip
    overall = json.loads((tmp_path / "r" / "metrics.json").read_text())["models"]["old"]["overall"]
    same_binary = sum((f[2] > f[0]) == (m[2] > m[0]) for f, m in probs)  # the paper's argmax over [e, c]
    same_3way = sum(max(range(3), key=f.__getitem__) == max(range(3), key=m.__getitem__) for f, m in probs)
    assert (same_binary, same_3way) == (2, 1)
    assert (overall["S"], overall["counts"]["S"]) == (40.0, 2)
    assert (overall["S_3way"], overall["counts"]["S_3way"]) == (20.0, 1)


def test_tables_say_when_a_metrics_file_holds_the_old_3way_s() -> None:
    from nlibias.report.occupation_tables import format_occupations_tables

    new = {"overall": {"S": 60.0, "S_3way": 40.0, "delta_p": 1.0, "B": 2.0, "n_pairs": 5}}
    old = {"overall": {"S": 40.0, "delta_p": 1.0, "B": 2.0, "n_pairs": 5}}  # written before S_3way existed
    assert "note:" not in format_occupations_tables({"new": new})
    assert "note: old: metrics written before S became the paper's binary S" in format_occupations_tables(
        {"new": new, "old": old}
    )


def test_the_header_is_found_below_data_rows_as_in_the_authors_snli_sheet(tmp_path: Path) -> None:
    """The authors' SNLI and MNLI sheets (GitHub shanyas10/Evaluating-gender-bias @bdb4a8e) have
    no header in row 1: 1,450 data rows come first, then their only header row (an unnamed index,
    'Unnamed: 0', sentence1, occupation, bias, gender, hypothesis_f, hypothesis_m), then 450 rows.
    This sheet has the same shape in small: 2 rows, the header, 1 row."""
    from openpyxl import Workbook

    f, m = "This text talks about a female occupation", "This text talks about a male occupation"
    book = Workbook()
    sheet = book.active
    assert sheet is not None
    for values in (
        [1650.0, 524113.0, "a accountant is feeding a goat.", "accountant", True, "F", f, m],
        [1651.0, 317667.0, "a nurse presents a lesson plan", "nurse", True, "F", f, m],
        [None, "Unnamed: 0", "sentence1", "occupation", "bias", "gender", "hypothesis_f", "hypothesis_m"],
        [12.0, 99.0, "the tailor waves.", "tailor", True, "M", f, m],
    ):
        sheet.append(values)
    path = tmp_path / "SNLI_Evaluation_Set.xlsx"
    book.save(path)
    read = read_eval_workbook(path)
    assert [r.row for r in read.rows] == [1, 2, 4] and read.skipped_header_rows == (3,)
    assert [r.premise for r in read.rows] == [
        "a accountant is feeding a goat.", "a nurse presents a lesson plan", "the tailor waves.",
    ]  # fmt: skip
    assert [r.gender for r in read.rows] == ["female", "female", "male"]
    assert read.columns["premise"] == "sentence1" and read.has_hypotheses
    assert {"Unnamed: 0", "bias"} <= set(read.ignored_columns)
