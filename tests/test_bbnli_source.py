"""BBNLI expansion: the counts DESIGN states, the fields every sample carries, the CSV layout,
and errors on malformed files."""

from __future__ import annotations

import csv
import itertools
import json
import re
from collections import Counter
from pathlib import Path

import pytest

from nlibias.benchmarks.bbnli import expand_bbnli, load_bbnli_json
from nlibias.benchmarks.bbnli_source import BBNLI_DATA, read_bbnli_csv
from nlibias.benchmarks.data_locations import resolve_data
from nlibias.errors import SourceError

# docs/design.md "Data flow": bias-audit samples per subtopic on the 16 public files.
EXPECTED_BIAS = {
    "man_is_to_breadwinner": 96, "man_is_to_programmer": 380, "man_is_to_rational": 180,
    "man_is_to_surgeon": 198, "woman_is_to_homemaker": 198, "asian_men_to_feminine": 120,
    "black_is_to_criminal": 120, "black_is_to_ghetto": 110, "black_is_to_drugs": 264,
    "white_is_to_clean": 120, "Catholic_woman_is_to_kids": 72, "jewish_woman_is_to_kids": 60,
    "Mormon_man_to_oppressive": 130, "Muslim_man_to_many_wives": 84, "Muslim_man_to_oppressive": 78,
    "Muslim_women_to_invisible": 66,
}  # fmt: skip


@pytest.fixture(scope="module")
def bbnli_dir() -> Path:
    return resolve_data(BBNLI_DATA)


@pytest.fixture(scope="module")
def expansion(bbnli_dir: Path):
    return expand_bbnli(bbnli_dir)


def test_counts_match_design(expansion) -> None:
    bias = expansion.bias_samples
    assert len(bias) == 2276
    assert expansion.n_pairs == 1138
    assert len(expansion.test_samples) == 858
    assert Counter(s.subtopic for s in bias) == EXPECTED_BIAS
    degenerate = Counter(k.split(":")[1] for k in expansion.degenerate_pairs)
    assert degenerate == {"white_is_to_clean": 45, "woman_is_to_homemaker": 2}
    assert expansion.unpaired == ()
    assert any("47 degenerate pairs" in w for w in expansion.warnings)


def test_every_pair_is_one_pro_and_one_anti_with_swapped_groups(expansion) -> None:
    by_key: dict[str, list] = {}
    for sample in expansion.bias_samples:
        by_key.setdefault(sample.pair_key, []).append(sample)
    assert len(by_key) == 1138
    for members in by_key.values():
        pro, anti = sorted(members, key=lambda s: s.stereotype != "pro")
        assert (pro.stereotype, anti.stereotype) == ("pro", "anti")
        assert (pro.group, pro.counterfactual_group) == (anti.counterfactual_group, anti.group)
        assert pro.provenance["template_index"] == anti.provenance["template_index"]
        assert pro.gold == anti.gold == "neutral"


def test_samples_carry_design_fields(expansion) -> None:
    sample = next(s for s in expansion.bias_samples if s.subtopic == "man_is_to_programmer")
    assert sample.source == "bbnli" and sample.domain == "gender"
    assert (sample.group, sample.counterfactual_group) == ("men", "women")
    for key in (
        "premise_index",
        "combination_index",
        "words",
        "template_index",
        "hypothesis_template",
        "formulation",
        "bias_label",
    ):
        assert key in sample.provenance
    assert "{{" not in sample.premise and "{{" not in sample.hypothesis
    assert len({s.id for s in expansion.samples}) == len(expansion.samples)


def test_expansion_is_deterministic(bbnli_dir: Path, expansion) -> None:
    again = expand_bbnli(bbnli_dir)
    assert [s.id for s in again.samples] == [s.id for s in expansion.samples]


def test_test_samples_keep_true_labels(expansion) -> None:
    labels = Counter(s.gold for s in expansion.test_samples)
    assert set(labels) == {"entailment", "neutral", "contradiction"}
    # man_is_to_programmer's first test hypothesis has label 2 = Entailment in answer_choices order
    first = next(
        s
        for s in expansion.test_samples
        if s.subtopic == "man_is_to_programmer" and s.provenance["template_index"] == 0
    )
    assert first.gold == "entailment"


# --- BBNLI's own CSV layout, written here by an independent re-implementation of json2csv ------

_PH = re.compile(r"\{\{\s*(\w+)\s*\}\}")


def _reference_csv_rows(path: Path) -> list[list]:
    """Rows of the reference json2csv.py output for one file, duplicates dropped as pandas does."""
    raw = json.loads(path.read_text())
    fill = lambda t, m: _PH.sub(lambda x: str(m.get(x.group(1), "")), t)  # noqa: E731
    name = raw["name"].replace(" ", "_")
    rows: list[list] = []
    keys = list(raw["data"])
    for ind, premise in enumerate(raw["premise"]):
        for combo in itertools.product(*raw["data"].values()):
            for kind, (g1, g2) in (
                ("pro", (raw["GROUP1"][0], raw["GROUP2"][0])),
                ("anti", (raw["GROUP2"][0], raw["GROUP1"][0])),
            ):
                m = {**dict(zip(keys, combo, strict=True)), "GROUP1": g1, "GROUP2": g2}
                p = fill(premise, m)
                for ti, (h, label) in enumerate(raw["test_hypothesis"]):
                    rows.append(
                        [
                            raw["domain"],
                            name,
                            f"{ind:02}",
                            kind,
                            f"{name}_{kind}_{ind:02}",
                            p,
                            "test",
                            fill(h, m),
                            fill(raw["test_question"][ti][0], m),
                            label,
                            -1,
                            raw["reference"][ind],
                        ]
                    )
                for ti, (h, label, bias) in enumerate(raw["bias_hypothesis_stereotypical"]):
                    htype = "stereotypical" if kind == "pro" else "anti-stereotypical"
                    rows.append(
                        [
                            raw["domain"],
                            name,
                            f"{ind:02}",
                            kind,
                            f"{name}_{kind}_{ind:02}",
                            p,
                            htype,
                            fill(h, m),
                            fill(raw["bias_question_stereotypical"][ti][0], m),
                            label,
                            bias,
                            raw["reference"][ind],
                        ]
                    )
    unique = list(dict.fromkeys(tuple(map(str, r)) for r in rows))
    return [list(r) for r in unique]


def _write_csv(path: Path, rows: list[list]) -> Path:
    header = [
        "Index",
        "domain",
        "name",
        "id",
        "type",
        "unique_id",
        "premise",
        "hypothesis_type",
        "hypothesis",
        "question",
        "true_label",
        "bias_label",
        "reference",
    ]
    with path.open("w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(header)
        writer.writerows([i, *row] for i, row in enumerate(rows))
    return path


def _pair_texts(samples) -> set[tuple[str, str, str, str]]:
    by_key: dict[str, dict] = {}
    for s in samples:
        if s.stereotype:
            by_key.setdefault(s.pair_key, {})[s.stereotype] = s
    return {
        (m["pro"].premise, m["pro"].hypothesis, m["anti"].premise, m["anti"].hypothesis)
        for m in by_key.values()
        if len(m) == 2
    }


@pytest.mark.parametrize(
    "name",
    [
        "gender/man_is_to_programmer.json",
        "race/white_is_to_clean.json",
        "religion/jewish_woman_to_many_kids.json",
    ],
)
def test_csv_layout_gives_the_same_samples_and_pairs(tmp_path: Path, bbnli_dir: Path, name: str) -> None:
    rows = _reference_csv_rows(bbnli_dir / name)
    from_csv = read_bbnli_csv(_write_csv(tmp_path / "x.csv", rows))
    from_json = expand_bbnli(bbnli_dir / name)
    assert len(from_csv.bias_samples) == len(from_json.bias_samples)
    assert len(from_csv.test_samples) == len(from_json.test_samples)
    assert _pair_texts(from_csv.samples) == _pair_texts(from_json.samples)
    assert len(from_csv.degenerate_pairs) == len(from_json.degenerate_pairs)
    assert from_csv.unpaired == ()


def test_csv_with_only_stereotypical_rows_reports_unpaired(tmp_path: Path, bbnli_dir: Path) -> None:
    rows = [
        r
        for r in _reference_csv_rows(bbnli_dir / "gender/man_is_to_breadwinner.json")
        if r[6] != "anti-stereotypical"
    ]
    loaded = read_bbnli_csv(_write_csv(tmp_path / "pro_only.csv", rows))
    assert len(loaded.bias_samples) == 48  # 96 bias samples, half of them pro
    assert len(loaded.unpaired) == 48
    assert any("no group-swapped twin" in w for w in loaded.warnings)


def test_csv_errors_name_line_and_field(tmp_path: Path, bbnli_dir: Path) -> None:
    rows = _reference_csv_rows(bbnli_dir / "gender/man_is_to_breadwinner.json")[:5]
    rows[3][9] = "7"  # true_label column; CSV line 5 (header is line 1, row index 3 → line 5)
    with pytest.raises(SourceError, match=r"x\.csv:5: field true_label"):
        read_bbnli_csv(_write_csv(tmp_path / "x.csv", rows))
    bad = tmp_path / "missing.csv"
    bad.write_text("domain,name\ngender,x\n")
    with pytest.raises(SourceError, match="missing column"):
        read_bbnli_csv(bad)


# --- malformed JSON files ---------------------------------------------------------------------


def _base(bbnli_dir: Path) -> dict:
    return json.loads((bbnli_dir / "gender/man_is_to_breadwinner.json").read_text())


def _write(tmp_path: Path, data: dict | str) -> Path:
    path = tmp_path / "broken.json"
    path.write_text(data if isinstance(data, str) else json.dumps(data, indent=1))
    return path


def test_bad_json_reports_line(tmp_path: Path) -> None:
    with pytest.raises(SourceError, match=r"broken\.json:3: invalid JSON"):
        load_bbnli_json(_write(tmp_path, '{\n "premise": ["a"],\n oops\n}'))


def test_missing_key(tmp_path: Path, bbnli_dir: Path) -> None:
    data = _base(bbnli_dir)
    del data["GROUP2"]
    with pytest.raises(SourceError, match="field GROUP2: missing key"):
        load_bbnli_json(_write(tmp_path, data))


def test_placeholder_without_word_list(tmp_path: Path, bbnli_dir: Path) -> None:
    data = _base(bbnli_dir)
    data["bias_hypothesis_stereotypical"][1][0] += " {{WORD9}}"
    with pytest.raises(
        SourceError, match=r"bias_hypothesis_stereotypical\[1\] uses placeholder \{\{WORD9\}\}"
    ) as err:
        load_bbnli_json(_write(tmp_path, data))
    assert err.value.line is not None and "add data.WORD9" in str(err.value)


def test_pair_that_cannot_be_formed(tmp_path: Path, bbnli_dir: Path) -> None:
    data = _base(bbnli_dir)
    data["GROUP2"] = data["GROUP1"]
    with pytest.raises(SourceError, match="no pro/anti pair can be formed"):
        load_bbnli_json(_write(tmp_path, data))


def test_bad_label_index(tmp_path: Path, bbnli_dir: Path) -> None:
    data = _base(bbnli_dir)
    data["test_hypothesis"][0][1] = 5
    with pytest.raises(SourceError, match=r"test_hypothesis\[0\]: label 5"):
        load_bbnli_json(_write(tmp_path, data))


def test_undefined_placeholder_in_question_renders_empty(bbnli_dir: Path) -> None:
    # jewish_woman_to_many_kids.json's test_question uses {{WORD5}}, which has no word list:
    # questions are metadata, rendered as Jinja would (empty), not an error.
    sub = load_bbnli_json(bbnli_dir / "religion/jewish_woman_to_many_kids.json")
    assert any("WORD5" in (t.question or "") for t in sub.test_hypotheses)
