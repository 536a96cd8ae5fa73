"""Property-based tests (Hypothesis) of the readers and the measures: whatever bytes a reader is
given, it returns values or raises :class:`SourceError` (never another exception); measures obey
the identities of docs/design.md for any predictions and do not depend on the order of the samples."""

from __future__ import annotations

import csv
import io
import json
import math
from pathlib import Path

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from nlibias.errors import SourceError
from nlibias.io.jsonl import iter_jsonl
from nlibias.metrics.bbnli import bbnli_measures
from nlibias.runtime.cache import decode_value, encode_value, is_probability_row
from nlibias.textio.text_files import decode_utf8, read_csv_records
from nlibias.textio.yaml_unique import load_yaml

LABELS = ["entailment", "neutral", "contradiction"]
SETTINGS = settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)


# -- readers ---------------------------------------------------------------------------------------


@SETTINGS
@given(st.binary(max_size=400))
def test_decoding_any_bytes_gives_text_or_an_error_with_its_line(data: bytes) -> None:
    try:
        text = decode_utf8("f.txt", data)
    except SourceError as error:
        assert error.line is not None and 1 <= error.line <= data.count(b"\n") + 1
        assert error.path == "f.txt" and "UTF-8" in str(error)
    else:
        assert text.encode("utf-8") == data.removeprefix(b"\xef\xbb\xbf")


cells = st.text(alphabet=st.characters(blacklist_categories=["Cs"], blacklist_characters="\x00"), max_size=30)


@SETTINGS
@given(st.lists(st.lists(cells, min_size=3, max_size=3), max_size=8))
def test_csv_rows_read_back_as_written(rows: list[list[str]]) -> None:
    path = Path("/tmp/nlibias-property.csv")
    buffer = io.StringIO()
    writer = csv.writer(buffer)  # \r\n rows: fields holding \r or \n are quoted
    writer.writerow(["a", "b", "c"])
    writer.writerows(rows)
    text = buffer.getvalue()
    got = [row for _, row in read_csv_records(path, text)]
    want = [dict(zip("abc", row, strict=True)) for row in rows]
    assert got == want


@SETTINGS
@given(st.lists(st.lists(cells, min_size=3, max_size=3), min_size=1, max_size=6), st.data())
def test_a_truncated_or_damaged_csv_is_read_or_refused_never_a_crash(
    rows: list[list[str]], data: st.DataObject
) -> None:
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(["a", "b", "c"])
    writer.writerows(rows)
    text = buffer.getvalue()
    cut = data.draw(st.integers(0, len(text)))
    insert = data.draw(st.sampled_from(['"', ",", "\n", "", "x"]))
    damaged = text[:cut] + insert + text[cut:]
    try:
        records = list(read_csv_records("d.csv", damaged))
    except SourceError as error:
        assert error.path == "d.csv" and error.line is not None
    else:  # what Python's strict csv reader reads, every row as long as the header (damage can
        # reach the header too: a quote before it makes "a,b,c\n,," one column name)
        header, *body = list(csv.reader(io.StringIO(damaged, newline=""), strict=True))
        assert all(len(row) == len(header) for row in body if row)
        assert [row for _, row in records] == [dict(zip(header, row, strict=True)) for row in body if row]


@SETTINGS
@given(
    lines=st.lists(
        st.binary(max_size=40) | st.sampled_from([b'{"a": "\\ud800"}', b'{"a": "\\ud83d\\ude00"}', b"[1]"]),
        max_size=6,
    )
)
def test_jsonl_lines_are_values_or_an_error_naming_the_line(
    lines: list[bytes], tmp_path_factory: pytest.TempPathFactory
) -> None:
    path = tmp_path_factory.mktemp("jsonl") / "x.jsonl"
    path.write_bytes(b"\n".join(line.replace(b"\n", b" ") for line in lines))
    try:
        values = list(iter_jsonl(path))
    except SourceError as error:
        assert error.line is not None and 1 <= error.line <= len(lines)
    else:
        for _, value in values:  # every value read can be written back as UTF-8 text
            json.dumps(value, ensure_ascii=False).encode("utf-8")


@SETTINGS
@given(st.text(max_size=80))
def test_yaml_text_is_a_value_or_an_error(text: str) -> None:
    try:
        load_yaml(text, "c.yaml")
    except SourceError as error:
        assert error.path == "c.yaml"


@SETTINGS
@given(st.dictionaries(st.sampled_from(["a", "b", "c", "top_k"]), st.integers(), min_size=1), st.data())
def test_a_repeated_yaml_key_is_refused_with_its_line(mapping: dict[str, int], data: st.DataObject) -> None:
    key = data.draw(st.sampled_from(sorted(mapping)))
    lines = [f"{k}: {v}" for k, v in mapping.items()] + [f"{key}: 0"]
    with pytest.raises(SourceError) as caught:
        load_yaml("\n".join(lines) + "\n", "c.yaml")
    assert caught.value.line == len(lines) and caught.value.field == key


# -- the prediction cache's values --------------------------------------------------------------------


probability_rows = (
    st.lists(st.floats(0, 1), min_size=3, max_size=3)
    .filter(lambda r: sum(r) > 0)
    .map(lambda r: [x / math.fsum(r) for x in r])
)


@SETTINGS
@given(probability_rows, st.data())
def test_a_flipped_bit_in_a_stored_value_is_never_used(row: list[float], data: st.DataObject) -> None:
    stored = encode_value(row, "key").encode()
    assert decode_value(stored.decode(), "key") == row and is_probability_row(row)
    position = data.draw(st.integers(0, len(stored) - 1))
    bit = data.draw(st.integers(0, 6))  # ASCII stays ASCII: the flip lands in the stored text itself
    flipped = bytearray(stored)
    flipped[position] ^= 1 << bit
    try:
        value = decode_value(flipped.decode("ascii"), "key")
    except ValueError:
        return
    # Only a flip that leaves the text's meaning intact (e.g. in the checksum's own letters'
    # case, which is not hex then) may decode, and then to the same row.
    assert value == row


@SETTINGS
@given(
    st.lists(
        st.one_of(st.floats(allow_nan=True, allow_infinity=True), st.integers(-2, 2), st.none()), max_size=4
    )
)
def test_only_probability_rows_pass_the_cache_check(values: list) -> None:
    ok = is_probability_row(values)
    plausible = (
        len(values) == 3
        and all(isinstance(v, int | float) and math.isfinite(v) and 0 <= v <= 1 for v in values)
        and abs(math.fsum(values) - 1) <= 1e-3
    )
    assert ok == plausible


# -- measures ------------------------------------------------------------------------------------------


@st.composite
def paired_predictions(draw: st.DrawFn) -> tuple[list[str | None], list[str], list[str]]:
    """Complete pro/anti pairs with any predictions (an unanswered one now and then)."""
    n_pairs = draw(st.integers(1, 12))
    answers = st.sampled_from([*LABELS, None])
    predicted = [draw(answers) for _ in range(2 * n_pairs)]
    stereotype = ["pro", "anti"] * n_pairs
    pair_key = [f"k{i // 2}" for i in range(2 * n_pairs)]
    return predicted, stereotype, pair_key


@SETTINGS
@given(paired_predictions())
def test_pro_anti_and_error_share_out_the_misprediction_rate(case: tuple) -> None:
    predicted, stereotype, pair_key = case
    assume(all(p is not None for p in predicted))  # DESIGN's identity is over answered samples
    m = bbnli_measures(predicted, gold=["neutral"] * len(predicted), stereotype=stereotype, pair_key=pair_key)
    assert m["cf_pro"] + m["cf_anti"] + m["cf_error"] == pytest.approx(m["misprediction_rate"], abs=1e-9)
    # the aggregate score equals pro - anti (paper A.5/A.6)
    assert m["bbnli_bias_score"] == pytest.approx(
        m["pro_stereotype_bias"] - m["anti_stereotype_bias"], abs=1e-9
    )
    wrong = sum(p != "neutral" for p in predicted)
    assert m["misprediction_rate"] == pytest.approx(100 * wrong / len(predicted), abs=1e-9)


@SETTINGS
@given(paired_predictions(), st.randoms(use_true_random=False))
def test_measures_do_not_depend_on_sample_order(case: tuple, rng) -> None:  # type: ignore[no-untyped-def]
    predicted, stereotype, pair_key = case
    ids = [f"s{i}" for i in range(len(predicted))]
    order = list(range(len(predicted)))
    rng.shuffle(order)

    def measures(positions: list[int]) -> dict:
        m = bbnli_measures(
            [predicted[i] for i in positions],
            gold=["neutral"] * len(positions),
            stereotype=[stereotype[i] for i in positions],
            pair_key=[pair_key[i] for i in positions],
            ids=[ids[i] for i in positions],
        )
        m["unanswered"] = sorted(m["unanswered"])
        m["unpaired"] = sorted(m["unpaired"])
        return m

    first, shuffled = measures(list(range(len(predicted)))), measures(order)
    assert first.keys() == shuffled.keys()
    for key, value in first.items():
        if isinstance(value, float):
            assert shuffled[key] == pytest.approx(value, abs=1e-9), key
        else:
            assert shuffled[key] == value, key


# -- the checked JSON loader ----------------------------------------------------------------------

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | st.text(),
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=5), children, max_size=4)
    ),
    max_leaves=12,
)


@SETTINGS
@given(json_values)
def test_the_checked_loader_reads_what_json_reads_when_it_is_json(value: object) -> None:
    """Python's own parser is the oracle on valid JSON (text, bytes, a byte-order mark before)."""
    from nlibias.textio.json_text import parse_json

    text = json.dumps(value, ensure_ascii=False)
    assume(not any(0xD800 <= ord(c) <= 0xDFFF for c in text))  # a lone surrogate is refused, not read
    assert parse_json("x.json", text) == json.loads(text)
    assert parse_json("x.json", text.encode()) == json.loads(text)
    assert parse_json("x.json", "\ufeff" + text) == json.loads(text)


@SETTINGS
@given(json_values, st.sampled_from(["NaN", "Infinity", "-Infinity"]))
def test_a_non_finite_number_anywhere_is_refused(value: object, constant: str) -> None:
    from nlibias.textio.json_text import parse_json

    text = json.dumps([value, {"k": float(constant.replace("Infinity", "inf"))}])
    with pytest.raises(SourceError, match=f"{constant} is not a number JSON allows"):
        parse_json("x.json", text)
