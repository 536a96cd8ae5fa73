"""SampleColumns against the samples it was built from: every column read back equals the field,
codes are equal exactly when the values are, and the checks name what is wrong."""

from __future__ import annotations

import itertools
from dataclasses import replace

import numpy as np
import pytest

from nlibias.errors import DataError
from nlibias.schema import LABEL_INDEX, Sample
from nlibias.schema.columns import Categorical, IdPositions, SampleColumns, StringColumn, smallest_int_type


@pytest.fixture(scope="module")
def bbnli() -> list[Sample]:
    from nlibias.benchmarks.bbnli import expand_bbnli
    from nlibias.benchmarks.bbnli_source import BBNLI_DATA
    from nlibias.benchmarks.data_locations import resolve_data

    return list(expand_bbnli(resolve_data(BBNLI_DATA)).samples)


def test_columns_read_back_every_field(bbnli: list[Sample]) -> None:
    columns = SampleColumns.from_samples(bbnli)
    assert (columns.source, len(columns)) == ("bbnli", 3134)
    assert list(columns.ids) == [s.id for s in bbnli]
    assert list(columns.pair_keys) == [s.pair_key for s in bbnli]  # None for the test samples
    for name in ("domain", "subtopic", "group", "counterfactual_group"):
        assert getattr(columns, name).tolist() == [getattr(s, name) for s in bbnli], name
    assert columns.gold.tolist() == [LABEL_INDEX[s.gold] for s in bbnli]
    assert columns.stereotype.tolist() == [{"pro": 0, "anti": 1, None: -1}[s.stereotype] for s in bbnli]
    assert columns.domain.codes.dtype == np.int8  # 3 domains: a byte a sample


def test_codes_are_equal_exactly_when_values_are(bbnli: list[Sample]) -> None:
    columns = SampleColumns.from_samples(bbnli)
    # Every pair of samples among the first 400 (and the last 400): 160k comparisons each way.
    for part in (range(400), range(len(bbnli) - 400, len(bbnli))):
        for i, j in itertools.combinations(part, 2):
            a, b = bbnli[i], bbnli[j]
            same_key = a.pair_key is not None and a.pair_key == b.pair_key
            assert (columns.pair_code[i] == columns.pair_code[j] != -1) == same_key
            same_text = (a.premise, a.hypothesis) == (b.premise, b.hypothesis)
            assert (columns.text_code[i] == columns.text_code[j]) == same_text
    # BBNLI's 47 degenerate pairs have identical pro/anti texts: equal text codes.
    pro = {s.pair_key: i for i, s in enumerate(bbnli) if s.stereotype == "pro"}
    anti = {s.pair_key: i for i, s in enumerate(bbnli) if s.stereotype == "anti"}
    degenerate = sum(columns.text_code[pro[k]] == columns.text_code[anti[k]] for k in pro)
    assert degenerate == 47


def test_provenance_keys_kept_and_missing_values() -> None:
    base = Sample(id="a", source="x", domain="d", subtopic="t", premise="P", hypothesis="H", gold="neutral")
    samples = [
        replace(base, id="a", provenance={"k": "v", "n": 1}),
        replace(base, id="b", provenance={"k": "v"}),
        replace(base, id="c", provenance={"n": True, "other": [1]}),
    ]
    columns = SampleColumns.from_samples(samples, provenance_keys=("k", "n"))
    assert set(columns.provenance) == {"k", "n"}
    assert columns.provenance["k"].tolist() == ["v", "v", None]
    # 1 and True are different JSON values: kept apart although 1 == True in Python.
    assert columns.provenance["n"].tolist() == [1, None, True]
    assert [type(v) for v in columns.provenance["n"].tolist()] == [int, type(None), bool]


def test_mixed_sources_and_duplicate_ids() -> None:
    base = Sample(
        id="a", source="bbnli", domain="d", subtopic="t", premise="P", hypothesis="H", gold="neutral"
    )
    with pytest.raises(DataError, match="mix sources bbnli, wq-nli"):
        SampleColumns.from_samples([base, replace(base, id="b", source="wq-nli")])
    ids = ["a", "b", "c", "b", "a", "c"]
    columns = SampleColumns.from_samples([replace(base, id=i) for i in ids])
    # Scanning in order, the first repeat met is "b" at position 3 (first seen at 1).
    assert columns.first_duplicate_id() == (1, 3)
    assert SampleColumns.from_samples([replace(base, id=i) for i in "abc"]).first_duplicate_id() is None
    empty = SampleColumns.from_samples([])
    assert (len(empty), empty.source) == (0, "")


def test_string_column_and_categorical_details() -> None:
    texts = ["", "é", "日本語", "a" * 1000]
    column = StringColumn.from_strings(texts)
    assert list(column) == texts and column[-1] == texts[-1] and column[1:3] == texts[1:3]
    assert column.nbytes == sum(len(t.encode()) for t in texts) + 8 * (len(texts) + 1)
    with pytest.raises(IndexError):
        column[4]
    values = [str(i % 300) for i in range(1000)]
    categorical = Categorical.from_values(values)
    assert categorical.codes.dtype == np.int16 and categorical.tolist() == values
    members = categorical.members()
    assert members["7"].tolist() == [7, 307, 607, 907]
    assert [smallest_int_type(n).__name__ for n in (1, 127, 128, 32767, 32768)] == [
        "int8", "int8", "int16", "int16", "int32",
    ]  # fmt: skip


def test_id_positions_in_any_order_repeated_and_absent() -> None:
    ids = StringColumn.from_strings([f"id-{i}" for i in range(50)])
    positions = IdPositions(ids)
    # In sample order (an nlibias predictions file: the remembered next position answers),
    # then shuffled, repeated and unknown ids (the digest search answers).
    assert [positions(f"id-{i}") for i in range(50)] == list(range(50))
    order = [7, 7, 3, 49, 0, 1, 2, 48, 48, 10]
    assert [positions(f"id-{i}") for i in order] == order
    assert positions("id-50") == -1 and positions("") == -1
    assert positions("id-11") == 11  # after a miss, and right after 10: the remembered position
    assert IdPositions(["a", "b", "a"]).first_duplicate() == (0, 2)
