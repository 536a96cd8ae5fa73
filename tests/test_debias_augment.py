"""Gender-swap augmentation: occupation matching, readers, de-duplication, summary, streaming, CLI."""

from __future__ import annotations

import json
import tracemalloc
import unicodedata
from collections.abc import Mapping, Sequence
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from nlibias.cli.main import app
from nlibias.debias.augment import SUMMARY_FILE, TRAIN_FILE, augment_gender_swap, occupations_in
from nlibias.debias.training_rows import iter_training_rows
from nlibias.errors import ConfigError, SourceError
from nlibias.testing.nli_sets import write_snli_shaped

runner = CliRunner()


@pytest.mark.parametrize(
    ("premise", "words", "paper"),
    [
        ("A nurse.", ["nurse"], []),  # the authors' split keeps "nurse." whole: missed
        ("Two Nurses chat", ["nurse"], ["nurse"]),
        ("The nurse's bag", ["nurse"], []),
        ("A construction worker rests.", ["construction worker"], []),
        ("Construction-workers and a CEO,", ["construction worker", "CEO"], []),
        ("The salespeople and the secretaries", ["salesperson", "secretary"], ["secretary"]),
        ("A nursery and a cooking pot", [], []),  # inside longer words: no match
        ("A baker, a guard and guards", ["baker", "guard"], ["guard"]),
    ],
)
def test_occupation_matching(premise: str, words: list[str], paper: list[str]) -> None:
    assert occupations_in(premise) == words
    assert occupations_in(premise, rule="paper") == paper


ROWS = [
    # 0: selected (nurse), swapped: her -> his, woman -> man
    {"premise": "The nurse helps her patient.", "hypothesis": "A woman works.", "label": "neutral"},
    # 1: not selected (no occupation) but gendered: its key is kept for de-duplication
    {"premise": "The nurse helps his patient.", "hypothesis": "A man works.", "label": "neutral"},
    # 2: selected, no gendered word: no swapped copy
    {"premise": "A teacher reads.", "hypothesis": "Someone reads.", "label": "entailment"},
    # 3: no gold label: left out
    {"premise": "A teacher and a man.", "hypothesis": "A man.", "label": "-"},
    # 4 and 5: the same swapped copy twice: written once
    {"premise": "A lawyer and his son.", "hypothesis": "He talks.", "label": "contradiction"},
    {"premise": "A lawyer and his son.", "hypothesis": "He talks.", "label": "contradiction"},
]


def write_rows(path: Path, rows: Sequence[Mapping[str, object]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def read_out(out: Path) -> list[dict[str, object]]:
    return [json.loads(line) for line in (out / TRAIN_FILE).open()]


def test_augment_writes_originals_then_deduplicated_swaps(tmp_path: Path) -> None:
    source = write_rows(tmp_path / "train.jsonl", ROWS)
    summary = augment_gender_swap(source, tmp_path / "aug", progress=False)
    rows = read_out(tmp_path / "aug")
    originals = [r for r in rows if not r["swapped"]]
    swaps = [r for r in rows if r["swapped"]]
    assert [r["source_row"] for r in originals] == [0, 1, 2, 4, 5]
    # row 0's swap equals row 1 (dropped); rows 4 and 5 give one swap, linked to row 4
    assert [(r["source_row"], r["premise"], r["hypothesis"], r["label"]) for r in swaps] == [
        (4, "A lawyer and her daughter.", "She talks.", "contradiction")
    ]
    # selected: rows 0, 2, 4, 5 (row 1's premise also names the nurse: 5 in all); swapped: 0, 1, 4, 5
    assert summary["rows_read"] == 6 and summary["rows_without_label"] == 1
    assert summary["rows_selected"] == 5 and summary["rows_swapped"] == 4
    # words changed: row 0: her, woman (2); row 1: his, man (2); rows 4, 5: his, son, he (3 each) = 10
    assert summary["words_changed"] == 10
    assert summary["swapped_rows_written"] == 1 and summary["swapped_duplicates_dropped"] == 3
    assert dict(summary["top_swaps"])["his->her"] == 3
    assert summary["selected_by_occupation"] == {"lawyer": 2, "nurse": 2, "teacher": 1}
    on_disk = json.loads((tmp_path / "aug" / SUMMARY_FILE).read_text())
    assert on_disk == json.loads(json.dumps(summary))
    assert summary["word_list"] == "winobias" and len(summary["word_list_sha256"]) == 64


def test_select_all_and_paper_options(tmp_path: Path) -> None:
    rows = [{"premise": "A man naps.", "hypothesis": "A lady sleeps.", "label": "entailment"}]
    source = write_rows(tmp_path / "t.jsonl", rows)
    assert augment_gender_swap(source, tmp_path / "a", progress=False)["rows_selected"] == 0
    summary = augment_gender_swap(source, tmp_path / "b", select="all", word_list="paper", progress=False)
    assert summary["match"] == "none" and summary["word_list"] == "paper"
    assert read_out(tmp_path / "b")[1]["hypothesis"] == "A man sleeps."  # the paper's lady -> man
    with pytest.raises(ConfigError) as error:
        augment_gender_swap(source, tmp_path / "c", select="some", progress=False)
    assert error.value.parameter == "select"
    # a match rule with every row selected was ignored (the record said match "none")
    with pytest.raises(ConfigError, match=r"^match 'paper' applies to selecting rows by occupation") as error:
        augment_gender_swap(source, tmp_path / "d", select="all", match="paper", progress=False)
    assert error.value.parameter == "match" and not (tmp_path / "d").exists()
    result = runner.invoke(
        app, ["augment", "gender-swap", "--train", str(source), "--out", str(tmp_path / "e"), "--select", "all",
              "--match", "paper"],
    )  # fmt: skip
    assert (
        result.exit_code == 2 and "--match 'paper' applies to selecting rows by occupation" in result.output
    )
    assert "give 'occupation' as --select" in result.output, result.output


def test_csv_parquet_and_datasets_directory_read_like_jsonl(tmp_path: Path) -> None:
    import datasets
    import pandas as pd

    frame = pd.DataFrame(ROWS)
    frame.to_csv(tmp_path / "t.csv", index=False)
    frame.to_csv(tmp_path / "t.tsv", index=False, sep="\t")
    frame.to_parquet(tmp_path / "t.parquet")
    datasets.Dataset.from_pandas(frame).save_to_disk(str(tmp_path / "saved"))
    expected = [
        (r.row, r.premise, r.hypothesis, r.label)
        for r in iter_training_rows(write_rows(tmp_path / "t.jsonl", ROWS))
    ]
    for source in ("t.csv", "t.tsv", "t.parquet", "saved"):
        got = [(r.row, r.premise, r.hypothesis, r.label) for r in iter_training_rows(tmp_path / source)]
        assert got == expected, source


def test_a_parquet_column_named_twice_is_refused_as_a_csv_header_is(tmp_path: Path) -> None:
    """pyarrow allows two fields of one name; a row read as a dict would keep the last one's value."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from nlibias.io.samples import iter_samples

    columns = [pa.array(["A man drives."]), pa.array(["A person drives."]), pa.array(["entailment"])]
    table = pa.Table.from_arrays(
        [*columns, pa.array(["contradiction"])], ["premise", "hypothesis", "label", "label"]
    )
    pq.write_table(table, tmp_path / "t.parquet")
    with pytest.raises(
        SourceError, match="field label: column 'label' appears twice in the file's columns"
    ) as error:
        list(iter_training_rows(tmp_path / "t.parquet"))
    assert str(tmp_path / "t.parquet") in str(error.value)
    pq.write_table(pa.Table.from_arrays(columns, ["premise", "hypothesis", "label"]), tmp_path / "t.parquet")
    assert [r.label for r in iter_training_rows(tmp_path / "t.parquet")] == ["entailment"]
    # a samples file written as Parquet: the same rule, by the same check
    table = pa.Table.from_arrays([pa.array(["a"]), pa.array(["b"])], ["id", "id"])
    pq.write_table(table, tmp_path / "samples.parquet")
    with pytest.raises(SourceError, match="column 'id' appears twice in the file's columns"):
        list(iter_samples(tmp_path / "samples.parquet"))


def test_snli_field_names_and_integer_labels(tmp_path: Path) -> None:
    rows = [
        {"sentence1": "A man.", "sentence2": "A person.", "gold_label": 0},
        {"sentence1": "x", "sentence2": "y", "gold_label": -1},
    ]
    got = list(iter_training_rows(write_rows(tmp_path / "s.jsonl", rows)))
    assert [(r.premise, r.label) for r in got] == [("A man.", "entailment"), ("x", None)]


@pytest.mark.parametrize(
    ("content", "line", "field", "reason"),
    [
        ('{"premise": "a", "hypothesis": "b", "label": "e"}\n{"premise": "a"\n', 2, None, "invalid JSON"),
        ('{"premise": "a", "label": "e"}\n', 1, "hypothesis", "missing"),
        ('{"premise": "a", "hypothesis": "b", "label": "maybe"}\n', 1, "label", "unknown label"),
        ('{"premise": "", "hypothesis": "b", "label": "e"}\n', 1, "premise", "non-empty string"),
    ],
)
def test_bad_rows_name_file_line_and_field(
    tmp_path: Path, content: str, line: int, field: str | None, reason: str
) -> None:
    path = tmp_path / "bad.jsonl"
    path.write_text(content)
    with pytest.raises(SourceError) as error:
        augment_gender_swap(path, tmp_path / "out", progress=False)
    assert (error.value.path, error.value.line, error.value.field) == (str(path), line, field)
    assert reason in error.value.reason
    assert not (tmp_path / "out" / TRAIN_FILE).exists()  # nothing half-written


def test_bad_csv_row_names_its_line(tmp_path: Path) -> None:
    path = tmp_path / "bad.csv"
    path.write_text("premise,hypothesis,label\na,b,e\nc,d,x\n")
    with pytest.raises(SourceError) as error:
        list(iter_training_rows(path))
    assert (error.value.line, error.value.field) == (3, "label")


def test_unknown_file_type_and_missing_file(tmp_path: Path) -> None:
    (tmp_path / "t.xlsx").write_text("")
    with pytest.raises(SourceError, match="unknown file type"):
        list(iter_training_rows(tmp_path / "t.xlsx"))
    with pytest.raises(SourceError, match="no such file"):
        list(iter_training_rows(tmp_path / "none.jsonl"))


def test_streaming_keeps_memory_far_below_the_file(tmp_path: Path) -> None:
    # 30,000 SNLI-shaped rows (~3.5 MB of JSONL), nearly all gendered: the rows are never held;
    # what grows is one 8-byte hash per gendered row (240 kB here) and its sorted copy at the end
    warm_up = write_snli_shaped(tmp_path / "small.jsonl", 10)
    augment_gender_swap(warm_up, tmp_path / "warm", progress=False)  # imports are not the point
    path = write_snli_shaped(tmp_path / "big.jsonl", 30_000)
    size = path.stat().st_size
    tracemalloc.start()
    summary = augment_gender_swap(path, tmp_path / "aug", progress=False)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert summary["rows_read"] == 30_000
    assert summary["original_rows_written"] == 30_000 - summary["rows_without_label"]
    assert peak < size / 4, (peak, size)
    lines = sum(1 for _ in (tmp_path / "aug" / TRAIN_FILE).open())
    assert lines == summary["original_rows_written"] + summary["swapped_rows_written"]


def test_cli_prints_the_summary_and_errors_without_traceback(tmp_path: Path) -> None:
    source = write_rows(tmp_path / "train.jsonl", ROWS)
    result = runner.invoke(
        app, ["augment", "gender-swap", "--train", str(source), "--out", str(tmp_path / "aug")]
    )
    assert result.exit_code == 0, result.output
    assert "selected 5 rows" in result.output and "his->her (3)" in result.output
    result = runner.invoke(
        app, ["augment", "gender-swap", "--train", str(source), "--out", str(tmp_path / "a2"), "--json"]
    )
    assert json.loads(result.stdout)["swapped_rows_written"] == 1


def test_hub_name_offline_is_a_clear_error(tmp_path: Path) -> None:
    from nlibias.errors import DataNotFoundError

    # the tests run offline (conftest): a hub name fails at once, naming the set and the split
    with pytest.raises(DataNotFoundError, match="'stanfordnlp/snli' \\(split 'train'\\)"):
        augment_gender_swap("stanfordnlp/snli", tmp_path / "aug", progress=False)


# texts as the text door leaves them (NFC, no format character): the readers agree on those
texts = (
    st.text(alphabet=st.characters(blacklist_categories=("Cs", "Cc", "Cf")), min_size=1, max_size=30)
    .map(lambda t: unicodedata.normalize("NFC", t))
    .filter(lambda t: t.strip() != "" and t == t.strip())
)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    st.lists(
        st.tuples(texts, texts, st.sampled_from(["entailment", "neutral", "contradiction", "-"])),
        min_size=1,
        max_size=8,
    )
)
def test_jsonl_csv_and_parquet_readers_agree(tmp_path: Path, rows: list[tuple[str, str, str]]) -> None:
    import csv

    import pandas as pd

    records = [{"premise": p, "hypothesis": h, "label": lab} for p, h, lab in rows]
    write_rows(tmp_path / "p.jsonl", records)
    with (tmp_path / "p.csv").open("w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, fieldnames=["premise", "hypothesis", "label"])
        writer.writeheader()
        writer.writerows(records)
    pd.DataFrame(records).to_parquet(tmp_path / "p.parquet")
    expected = [(i, p, h, None if lab == "-" else lab) for i, (p, h, lab) in enumerate(rows)]
    for name in ("p.jsonl", "p.csv", "p.parquet"):
        got = [(r.row, r.premise, r.hypothesis, r.label) for r in iter_training_rows(tmp_path / name)]
        assert got == expected, name


# --- issue #25: readers and command seams ---------------------------------------------------


@pytest.mark.parametrize(
    ("name", "content"),
    [("e.jsonl", ""), ("e.jsonl", "\n\n"), ("e.csv", "premise,hypothesis,label\n"), ("e.tsv", "")],
)
def test_an_empty_training_file_is_refused_naming_it(tmp_path: Path, name: str, content: str) -> None:
    path = tmp_path / name
    path.write_text(content)
    with pytest.raises(SourceError) as error:
        augment_gender_swap(path, tmp_path / "out", progress=False)
    assert error.value.path == str(path) and error.value.reason == "no rows"
    assert not (tmp_path / "out" / TRAIN_FILE).exists()


def test_a_file_without_one_labelled_row_is_refused(tmp_path: Path) -> None:
    path = write_rows(tmp_path / "t.jsonl", [{"premise": "a", "hypothesis": "b", "label": "-"}] * 2)
    with pytest.raises(SourceError, match=r"no rows with a gold label \(2 rows read"):
        augment_gender_swap(path, tmp_path / "out", progress=False)
    assert not (tmp_path / "out" / TRAIN_FILE).exists()


def test_out_over_the_inputs_directory_is_refused_before_writing(tmp_path: Path) -> None:
    (tmp_path / "data").mkdir()
    source = write_rows(tmp_path / "data" / TRAIN_FILE, ROWS)
    before = source.read_bytes()
    for train, out in [
        (source, tmp_path / "data"),
        (tmp_path / "data", tmp_path / "data" / "."),
        (source, source.parent / ".." / "data"),
    ]:
        with pytest.raises(ConfigError) as error:
            augment_gender_swap(train, out, progress=False)
        assert error.value.parameter == "out_dir" and "holds the training set" in str(error.value)
    assert source.read_bytes() == before and sorted(p.name for p in source.parent.iterdir()) == [TRAIN_FILE]
    # a sibling directory is fine
    assert augment_gender_swap(source, tmp_path / "aug", progress=False)["rows_read"] == len(ROWS)


def test_out_naming_the_training_file_is_refused_asking_for_a_folder(tmp_path: Path) -> None:
    source = write_rows(tmp_path / "train.jsonl", ROWS)
    before = source.read_bytes()
    result = runner.invoke(app, ["augment", "gender-swap", "--train", str(source), "--out", str(source)])
    assert result.exit_code == 2 and source.read_bytes() == before
    assert (
        f"--out {source} is a file the command reads (option --train); --out takes a folder" in result.output
    )


def test_tsv_keeps_quotes_as_text_and_counts_fields_per_line(tmp_path: Path) -> None:
    path = tmp_path / "q.tsv"
    # SNLI/MNLI TSVs are not CSV-quoted: a premise may start with a quote, a quote may stay open
    path.write_text(
        'premise\thypothesis\tlabel\n"Hi," said the nurse.\tShe talks.\te\nA "stray quote\tb\tn\nc\td\tc\ne\tf\te\n'
    )
    got = [(r.row, r.premise, r.hypothesis, r.label) for r in iter_training_rows(path)]
    assert got == [
        (0, '"Hi," said the nurse.', "She talks.", "entailment"),
        (1, 'A "stray quote', "b", "neutral"),
        (2, "c", "d", "contradiction"),
        (3, "e", "f", "entailment"),
    ]
    bad = tmp_path / "bad.tsv"
    bad.write_text("premise\thypothesis\tlabel\na\tb\te\nc\td\n")
    with pytest.raises(SourceError) as error:
        list(iter_training_rows(bad))
    assert error.value.line == 3 and "2 fields, the header has 3" in error.value.reason


def test_snli_txt_is_read_as_tsv(tmp_path: Path) -> None:
    # SNLI's own layout (snli_1.0_dev.txt): 14 tab-separated columns, no quoting, gold_label first
    header = (
        "gold_label\tsentence1_binary_parse\tsentence2_binary_parse\tsentence1_parse\tsentence2_parse\t"
        "sentence1\tsentence2\tcaptionID\tpairID\tlabel1\tlabel2\tlabel3\tlabel4\tlabel5"
    )
    lines = [
        'neutral\t( x )\t( y )\t(ROOT x)\t(ROOT y)\t"Stop," the nurse said.\tShe talks.\tc1\tp1\tneutral\t\t\t\t',
        "-\t( x )\t( y )\t(ROOT x)\t(ROOT y)\tA man naps.\tHe sleeps.\tc2\tp2\tneutral\tentailment\t\t\t",
    ]
    path = tmp_path / "snli_1.0_dev.txt"
    path.write_text("\n".join([header, *lines]) + "\n")
    got = [(r.row, r.premise, r.hypothesis, r.label) for r in iter_training_rows(path)]
    assert got == [
        (0, '"Stop," the nurse said.', "She talks.", "neutral"),
        (1, "A man naps.", "He sleeps.", None),
    ]


def test_csv_rows_are_read_strictly(tmp_path: Path) -> None:
    short = tmp_path / "short.csv"
    short.write_text("premise,hypothesis,label\na,b,e\nc,d\n")
    with pytest.raises(SourceError) as error:
        list(iter_training_rows(short))
    assert error.value.line == 3 and "2 fields" in error.value.reason
    unclosed = tmp_path / "unclosed.csv"
    unclosed.write_text('premise,hypothesis,label\na,b,e\n"c,d,e\nf,g,n\n')
    with pytest.raises(SourceError) as error:
        list(iter_training_rows(unclosed))
    assert error.value.line == 3 and "not closed" in error.value.reason


@pytest.mark.parametrize("suffix", ["jsonl", "csv", "tsv"])
def test_a_byte_order_mark_is_dropped_in_every_text_format(tmp_path: Path, suffix: str) -> None:
    plain = {
        "jsonl": '{"premise": "A man naps.", "hypothesis": "He sleeps.", "label": "e"}\n',
        "csv": "premise,hypothesis,label\nA man naps.,He sleeps.,e\n",
        "tsv": "premise\thypothesis\tlabel\nA man naps.\tHe sleeps.\te\n",
    }[suffix]
    path = tmp_path / f"bom.{suffix}"
    path.write_bytes(b"\xef\xbb\xbf" + plain.encode("utf-8"))
    got = [(r.row, r.premise, r.hypothesis, r.label) for r in iter_training_rows(path)]
    assert got == [(0, "A man naps.", "He sleeps.", "entailment")]


def test_an_empty_word_list_or_names_file_is_refused(tmp_path: Path) -> None:
    source = write_rows(tmp_path / "t.jsonl", ROWS)
    for content in ("", "# only a comment\n\n"):
        empty = tmp_path / "words.tsv"
        empty.write_text(content)
        with pytest.raises(SourceError) as error:
            augment_gender_swap(source, tmp_path / "a", word_list=empty, progress=False)
        assert error.value.path == str(empty) and "no word pairs" in error.value.reason
        with pytest.raises(SourceError, match="no word pairs"):
            augment_gender_swap(source, tmp_path / "b", names=empty, progress=False)


def test_cli_error_starts_its_own_line_after_the_progress_bar(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    path.write_text('{"premise": "a", "hypothesis": "b", "label": "e"}\n{"premise": "a"\n')
    result = runner.invoke(
        app, ["augment", "gender-swap", "--train", str(path), "--out", str(tmp_path / "o")]
    )
    assert result.exit_code == 2, result.output
    before, _, after = result.output.partition("error:")
    assert "t.jsonl:2" in after and "Traceback" not in result.output
    # the bar (if drawn) was cleared: what precedes the message ends with a carriage return or newline
    assert before == "" or before.endswith(("\r", "\n")), repr(before)
