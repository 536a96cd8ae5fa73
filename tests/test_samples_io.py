"""Reading samples files: the plain-Python fast path and the pydantic validator agree."""

from __future__ import annotations

import json
import tracemalloc
from pathlib import Path
from typing import Any

import pytest

import nlibias.io.samples as samples_io
from nlibias.errors import DataError, SourceError
from nlibias.io.fingerprint import sha256_file
from nlibias.io.samples import read_samples, write_samples
from nlibias.schema import Sample


def _sample(i: int, **changes: object) -> Sample:
    fields: dict[str, object] = dict(
        id=f"s{i}",
        source="wq-nli",
        domain="sexuality",
        subtopic="gay",
        premise=f"Premise {i}.",
        hypothesis="Hypothesis.",
        gold="neutral",
        stereotype="pro" if i % 2 else "anti",
        pair_key=f"p{i // 2}",
        group="gay" if i % 3 else None,
        counterfactual_group="straight",
        provenance={"row": i, "subject": "Some people"},
    )
    fields.update(changes)
    return Sample(**fields)  # type: ignore[arg-type]


def _read_with_validator_only(path: Path, monkeypatch: pytest.MonkeyPatch, **options: Any) -> list[Sample]:
    with monkeypatch.context() as patch:
        patch.setattr(samples_io, "_KNOWN_KEYS", frozenset())  # no record is taken as it is
        return read_samples(path, **options)


def _read(
    which: str, paths: dict[str, Path], monkeypatch: pytest.MonkeyPatch, **options: Any
) -> list[Sample]:
    """The samples file ``which`` (jsonl, parquet, or the jsonl through the validator only)."""
    if which == "validator":
        return _read_with_validator_only(paths["jsonl"], monkeypatch, **options)
    return read_samples(paths[which], **options)


def test_fast_path_reads_what_nlibias_wrote_exactly_as_the_validator(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    written = [_sample(i) for i in range(6)] + [_sample(6, stereotype=None, pair_key=None, source="custom")]
    paths = write_samples(tmp_path, written)
    for path in (paths["jsonl"], paths["parquet"]):
        fast = read_samples(path)
        slow = _read_with_validator_only(path, monkeypatch)
        assert fast == slow == written
        # provenance is left out of dataclass equality: compare it on its own
        assert [s.provenance for s in fast] == [s.provenance for s in slow] == [s.provenance for s in written]


def test_user_records_with_extra_keys_still_fold_them_into_provenance(tmp_path: Path) -> None:
    record = _sample(1).to_dict() | {"annotator": "a1"}
    path = tmp_path / "mine.jsonl"
    path.write_text(json.dumps(record) + "\n", encoding="utf-8")
    (sample,) = read_samples(path)
    assert sample.provenance["annotator"] == "a1"
    assert sample.provenance["row"] == 1


@pytest.mark.parametrize(
    ("change", "field"),
    [({"premise": 3}, "premise"), ({"gold": "yes"}, "gold"), ({"stereotype": "both"}, "stereotype")],
)
def test_bad_records_are_still_explained_with_line_and_field(
    tmp_path: Path, change: dict[str, object], field: str
) -> None:
    good = _sample(0).to_dict()
    bad = good | change
    path = tmp_path / "bad.jsonl"
    path.write_text(json.dumps(good) + "\n" + json.dumps(bad | {"id": "x"}) + "\n", encoding="utf-8")
    with pytest.raises(SourceError) as caught:
        read_samples(path)
    message = str(caught.value)
    assert "bad.jsonl:2:" in message and f"field {field}" in message


def test_a_missing_required_field_is_reported(tmp_path: Path) -> None:
    record = _sample(0).to_dict()
    del record["pair_key"]
    path = tmp_path / "missing.jsonl"
    path.write_text(json.dumps(record) + "\n", encoding="utf-8")
    with pytest.raises(SourceError, match="pair_key"):
        read_samples(path)


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"id": 5}, "id"),
        ({"pair_key": 3}, "pair_key"),
        ({"group": 1.5}, "group"),
        ({"gold": "maybe"}, "gold"),
        ({"provenance": [1, 2]}, "provenance"),
    ],
)
def test_sample_objects_that_break_a_record_rule_are_refused_before_anything_is_written(
    tmp_path: Path, change: dict[str, object], field: str
) -> None:
    bad = _sample(2, **change)
    with pytest.raises(DataError) as caught:
        write_samples(tmp_path, [_sample(0), _sample(1), bad])
    assert caught.value.field == field and caught.value.sample == str(bad.id)
    assert f"sample 3 of 3 (id {bad.id!r}): field {field}: " in str(caught.value)
    assert list(tmp_path.iterdir()) == []  # neither file written


def _wq_like(i: int) -> Sample:
    """A WQ-NLI-shaped sample: repeated labels and texts, an 11-key provenance record."""
    return _sample(
        i,
        id=f"wq-nli:{i:05d}:{'pro' if i % 2 else 'anti'}",
        premise=f"Some people are {'LGBTQ+' if i % 2 else 'straight'}.",
        hypothesis=f"Some people are abnormal number {i // 2}.",
        provenance={
            "row": i // 2,
            "line": i // 2 + 1,
            "subject": "Some people",
            "subject_kind": "some_people",
            "identity": "LGBTQ+",
            "identity_group": "LGBTQ",
            "counterfactual": "Straight",
            "predicate": "are abnormal",
            "predicate_category": "naturalness/normalness",
            "repeat_of": None,
            "premise_role": "stereotypical" if i % 2 else "counter-stereotypical",
            "words": {"WORD1": "breadwinner"},
        },
    )


@pytest.mark.parametrize("which", ["jsonl", "parquet", "validator"])
def test_repeated_text_is_one_object_across_samples(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, which: str
) -> None:
    paths = write_samples(tmp_path, [_wq_like(i) for i in range(4)])
    first, second, third, _ = _read(which, paths, monkeypatch)
    assert first.premise is third.premise  # same premise text, one object
    assert first.hypothesis is second.hypothesis
    assert first.domain is second.domain and first.gold is second.gold
    assert first.provenance["subject"] is second.provenance["subject"]
    assert first.provenance["words"]["WORD1"] is second.provenance["words"]["WORD1"]
    key_objects = {id(k) for s in (first, second, third) for k in s.provenance}
    assert len(key_objects) == len(first.provenance)  # the keys are shared too
    assert first.id is not second.id and first.id != second.id


def test_reading_shares_strings_so_a_sample_costs_a_third(tmp_path: Path) -> None:
    # Measured with tracemalloc on these 4,000 WQ-shaped samples: 0.99 kB each with shared
    # strings and slotted records, 2.8 kB each with json's per-line strings and a __dict__
    # per record (the code before); the bound sits between the two.
    n = 4000
    paths = write_samples(tmp_path, [_wq_like(i) for i in range(n)])
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        samples = read_samples(paths["jsonl"])
        held = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    assert len(samples) == n
    assert held / n < 1500, f"{held / n:.0f} bytes a sample"


@pytest.mark.parametrize("which", ["jsonl", "parquet", "validator"])
def test_provenance_keys_keep_only_those_keys(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, which: str
) -> None:
    paths = write_samples(tmp_path, [_wq_like(i) for i in range(3)])
    samples = _read(which, paths, monkeypatch, provenance_keys=["identity_group", "repeat_of", "absent"])
    assert [s.provenance for s in samples] == [{"identity_group": "LGBTQ", "repeat_of": None}] * 3
    assert [s.premise for s in samples] == [_wq_like(i).premise for i in range(3)]  # the rest is intact
    assert read_samples(paths["jsonl"], provenance_keys=[])[0].provenance == {}


@pytest.mark.parametrize("keys", [None, ["identity_group", "words", "absent"]])
def test_reading_without_sharing_gives_the_same_samples(tmp_path: Path, keys: list[str] | None) -> None:
    """``share_strings=False`` (a pass that keeps no sample) skips the string table, nothing else."""
    records = [_wq_like(i) for i in range(6)]
    path = write_samples(tmp_path, records)["jsonl"]
    shared = list(samples_io.iter_samples(path, provenance_keys=keys))
    unshared = list(samples_io.iter_samples(path, provenance_keys=keys, share_strings=False))
    assert unshared == shared
    assert [s.provenance for s in unshared] == [s.provenance for s in shared]  # not part of ==
    if keys is not None:
        assert unshared[0].provenance == {"identity_group": "LGBTQ", "words": {"WORD1": "breadwinner"}}
    assert unshared[0].premise is not unshared[2].premise  # nothing shared


def test_sample_columns_hold_the_samples_in_both_formats(tmp_path: Path) -> None:
    """Read once as columns (texts and pair keys included), a file gives back its samples, from
    JSONL and Parquet alike, with the provenance keys asked for."""
    records = [_wq_like(i) for i in range(5)] + [_sample(9, pair_key=None)]
    paths = write_samples(tmp_path, records)
    keep = ("identity_group",)
    expected = [
        Sample.from_dict({**s.to_dict(), "provenance": {k: v for k, v in s.provenance.items() if k in keep}})
        for s in records
    ]
    for name in ("jsonl", "parquet"):
        read = samples_io.read_sample_columns(paths[name], provenance_keys=keep)
        assert read.columns.records() == expected, name
        assert [s.provenance for s in read.columns.records()] == [s.provenance for s in expected], name
        assert list(read.columns.pair_keys)[5] is None
    assert samples_io.read_sample_columns(paths["jsonl"]).sha256 == sha256_file(paths["jsonl"])


def test_peek_source_reads_the_first_record_only(tmp_path: Path) -> None:
    paths = write_samples(tmp_path / "run", [_wq_like(0), _sample(1, source="bbnli")])
    assert samples_io.peek_source(tmp_path / "run") == "wq-nli"
    assert samples_io.peek_source(paths["parquet"]) == "wq-nli"
    record = _sample(0).to_dict()
    del record["source"]
    (tmp_path / "mine.jsonl").write_text(json.dumps(record) + "\n", encoding="utf-8")
    assert samples_io.peek_source(tmp_path / "mine.jsonl") == "custom"  # read_samples' default
    (tmp_path / "bad.jsonl").write_text("not json\n", encoding="utf-8")
    assert samples_io.peek_source(tmp_path / "bad.jsonl") is None  # read_samples explains it
    assert samples_io.peek_source(tmp_path / "missing.jsonl") is None
    (tmp_path / "empty.jsonl").write_text("", encoding="utf-8")
    assert samples_io.peek_source(tmp_path / "empty.jsonl") is None
