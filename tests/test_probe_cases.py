"""Inputs a probe found accepted with a wrong or silently changed result (issue #25, input side),
checked at the library level; the command-line refusals are in the bad-input corpus
(``tests/bad_input_cases_probe.py``)."""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from pathlib import Path

import pytest

from nlibias.errors import ConfigError, DataError, SourceError
from nlibias.io.atomic import json_line, write_json
from nlibias.io.jsonl import iter_jsonl, read_json_file
from nlibias.io.samples import is_blank_text, read_samples
from nlibias.runtime.model_set import ModelSet
from nlibias.runtime.options import ModelOptions
from nlibias.textio.json_text import parse_json
from nlibias.textio.yaml_unique import load_yaml


def _sample(i: int, **changes: object) -> dict:
    row = {
        "id": f"s{i}", "source": "custom", "domain": "gender", "subtopic": "t", "premise": "P.",
        "hypothesis": f"H {i}.", "gold": "neutral", "stereotype": "pro" if i % 2 else "anti",
        "pair_key": f"k{(i + 1) // 2}",
    }  # fmt: skip
    return row | changes


def _jsonl(path: Path, rows: Sequence[dict | str]) -> Path:
    path.write_text(
        "".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in rows), encoding="utf-8"
    )
    return path


# -- JSON read through one checked loader ---------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "needle"),
    [
        ('{"a": 1, "p": NaN}', "field p: NaN is not a number JSON allows"),
        ('{"a": {"q": -Infinity}}', "field q: -Infinity is not a number"),
        ('{"n": ' + "7" * 5000 + "}", "a number with thousands of digits"),
        ("[" * 100_000 + "]" * 100_000, "nested too deeply"),
        ('{"a": "\\ud800"}', "surrogate pair"),
        ('{"a": 1', "invalid JSON"),
    ],
)
def test_json_that_python_reads_wrongly_or_crashes_on_is_refused_with_the_line(
    text: str, needle: str
) -> None:
    with pytest.raises(SourceError, match=r"f\.jsonl:7: ") as caught:
        parse_json("f.jsonl", text, line=7)
    assert needle in str(caught.value)


def test_records_a_few_hundred_levels_deep_still_parse() -> None:
    """Only nesting past Python's recursion limit is refused; brackets inside strings are text."""
    assert parse_json("f", "[" * 200 + "]" * 200) is not None
    assert parse_json("f", '["' + "[" * 5000 + '"]') == ["[" * 5000]


def test_a_byte_order_mark_is_dropped_from_json_files_and_lines(tmp_path: Path) -> None:
    path = tmp_path / "x.jsonl"
    path.write_bytes(b'\xef\xbb\xbf{"a": 1}\n{"a": 2}\n')
    assert list(iter_jsonl(path)) == [(1, {"a": 1}), (2, {"a": 2})]
    whole = tmp_path / "x.json"
    whole.write_bytes(b'\xef\xbb\xbf{"a": [1]}')
    assert read_json_file(whole) == {"a": [1]}


# -- JSON written: NaN named by field --------------------------------------------------------------


def test_nan_on_its_way_into_a_json_output_is_refused_naming_the_field(tmp_path: Path) -> None:
    with pytest.raises(DataError, match=r"probs\.1 is nan") as caught:
        json_line({"id": "a", "probs": [0.5, math.nan]})
    assert caught.value.field == "probs.1"
    with pytest.raises(DataError, match=r"run\.seconds is inf"):
        write_json(tmp_path / "m.json", {"run": {"seconds": math.inf}})
    assert not (tmp_path / "m.json").exists()  # nothing half-written
    assert json_line({"p": 0.25}) == '{"p": 0.25}\n'
    from nlibias.io.predictions import probability_line

    with pytest.raises(DataError, match=r"sample 'a': probs\.contradiction is not a finite number") as caught:
        probability_line("a", '"m"', "neutral", [0.25, 0.5, math.inf])  # repr would write "inf"
    assert caught.value.field == "probs.contradiction"


# -- samples ---------------------------------------------------------------------------------------


def test_invisible_text_is_empty() -> None:
    # zero-width space, word joiner, BOM (category Cf) and no-break / ideographic spaces (Zs)
    assert is_blank_text("\u200b\u2060\ufeff") and is_blank_text("\u00a0 \u3000\t")
    assert not is_blank_text("a\u200b") and not is_blank_text("\u00e9")


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"id": ""}, "id"),
        ({"id": "s1 "}, "id"),
        ({"domain": " gender"}, "domain"),
        ({"subtopic": "t\t"}, "subtopic"),
        ({"pair_key": " k1"}, "pair_key"),
        ({"hypothesis": "\u200b\u200c"}, "hypothesis"),
    ],
)
def test_key_fields_with_spaces_and_invisible_texts_are_refused_at_reading(
    tmp_path: Path, change: dict, field: str
) -> None:
    path = _jsonl(tmp_path / "s.jsonl", [_sample(1, **change), _sample(2)])
    with pytest.raises(SourceError, match=rf"s\.jsonl:1: field {field}: "):
        read_samples(path)


@pytest.mark.parametrize(
    ("second", "field", "source"),
    [
        ({"subtopic": "u"}, "subtopic", "custom"),
        ({"domain": "race"}, "domain", "custom"),
        ({"premise": "Q."}, "premise", "bbnli-next"),  # its twins share the premise
        ({"provenance": {"premise_index": 4}}, "provenance.premise_index", "bbnli"),
    ],
)
def test_pair_twins_that_differ_in_what_they_share_are_refused_with_both_lines(
    tmp_path: Path, second: dict, field: str, source: str
) -> None:
    first = _sample(1, source=source, provenance={"premise_index": 0})
    twin = _sample(2, source=source, provenance={"premise_index": 0}) | second
    path = _jsonl(tmp_path / "s.jsonl", [first, "", twin])  # a blank line: the twin is on line 3
    # read as audit and score read samples: with their benchmark, whose rules say which fields
    # twins share (bbnli-next's share the premise)
    from nlibias.catalog.registry import read_benchmark_samples

    with pytest.raises(
        SourceError, match=rf"s\.jsonl:3: field {field}: the two samples of pair 'k1' differ"
    ) as e:
        read_benchmark_samples(path)
    assert "on line 1" in str(e.value) and "on line 3" in str(e.value)


def test_twins_with_different_premises_are_a_pair_where_the_source_swaps_groups_in_them(
    tmp_path: Path,
) -> None:
    """BBNLI's anti twin swaps the groups in the premise too, and WQ-NLI pairs two premises: their
    premise texts differ by design (what they share is checked through the provenance)."""
    rows = [_sample(1, source="wq-nli"), _sample(2, source="wq-nli", premise="Q.")]
    assert [s.premise for s in read_samples(_jsonl(tmp_path / "s.jsonl", rows))] == ["P.", "Q."]
    tests = [
        _sample(1, stereotype=None, pair_key="t"),
        _sample(2, stereotype=None, pair_key="t", subtopic="u"),
    ]
    assert len(read_samples(_jsonl(tmp_path / "t.jsonl", tests))) == 2  # test samples are no pair


def test_a_duplicate_id_names_the_lines_of_both_occurrences(tmp_path: Path) -> None:
    # lines: 1-3 blank, 4 s1, 5 s2, 6 s1 again -> the error is on line 6, the first on line 4
    path = _jsonl(tmp_path / "s.jsonl", ["", "", "", _sample(1), _sample(2), _sample(1, hypothesis="x")])
    with pytest.raises(SourceError, match=r"s\.jsonl:6: field id: duplicate sample id 's1' .*on line 4"):
        read_samples(path)


# -- configuration ---------------------------------------------------------------------------------


def test_a_key_twice_in_a_yaml_flow_mapping_is_refused() -> None:
    with pytest.raises(
        SourceError, match=r"c\.yaml:2: field top_k: the key is given twice \(first on line 2, column 7\)"
    ):
        load_yaml("seed: 1\nmlm: {top_k: 3, top_k: 50}\n", "c.yaml")
    assert load_yaml("mlm: {top_k: 3, block_list: [a, b]}\n", "c.yaml") == {
        "mlm": {"top_k": 3, "block_list": ["a", "b"]}
    }


def test_extend_overrides_name_the_parameter_and_empty_names_are_refused() -> None:
    from nlibias.extension.config import ExtendConfig
    from nlibias.extension.config_overrides import with_overrides

    with pytest.raises(ConfigError, match=r"^top_k 0: ") as caught:
        with_overrides(ExtendConfig(), {"mlm.top_k": 0, "filter.policy": None})
    assert caught.value.parameter == "top_k"
    with pytest.raises(ConfigError, match=r"^policy 'at_least:9': policy at_least:9 needs") as caught:
        with_overrides(ExtendConfig(), {"filter.policy": "at_least:9", "mlm.top_k": 5})
    assert caught.value.parameter == "policy"
    # mlm.model is the fill model: named as extend names it (--fill-model), not as audit's --mlm
    for key, parameter in (("run_dir", "out_dir"), ("mlm.model", "fill_model")):
        with pytest.raises(ConfigError, match="is empty") as caught:
            with_overrides(ExtendConfig(), {key: " "})
        assert caught.value.parameter == parameter


def test_a_label_map_no_classifier_reads_is_refused() -> None:
    from nlibias.runtime.build import build_predictors

    for models, generative in (([], ["fake:g"]), (["fake:m"], [])):
        with pytest.raises(ConfigError, match="label_map") as caught:
            build_predictors(
                ModelSet.of(models, generative=generative),
                options=ModelOptions(label_map="0=entailment,1=neutral,2=contradiction"),
            )
        assert caught.value.parameter == "label_map"
    with pytest.raises(ConfigError, match="names no model") as caught:  # "" would load the working folder
        build_predictors([""])
    assert caught.value.parameter == "models"


def test_a_dtype_no_model_loads_weights_in_is_refused() -> None:
    from nlibias.runtime.build import build_predictors

    predictor = build_predictors(["fake:o"])[0]  # an object keeping the predictor contract
    server = "openai:http://127.0.0.1:9/v1#m"
    for models, options, named in (
        (["fake:m"], {}, "'fake:m' (a fake)"),
        ([], {"generative": ["fake:g", server]}, f"'fake:g' (a fake), {server!r} (behind a server"),
        ([predictor], {"causal": [server]}, f"'o' (a predictor object, used as it is), {server!r} (behind"),
        (["fake:m"], {"causal": [server]}, f"'fake:m' (a fake), {server!r} (behind a server"),
    ):  # fmt: skip
        with pytest.raises(ConfigError, match=r"^dtype 'bfloat16' applies to models that load") as caught:
            build_predictors(ModelSet.of(models, **options), options=ModelOptions(dtype="bfloat16"))
        assert caught.value.parameter == "dtype"
        assert f"none of those given does: {named}" in str(caught.value)
        assert str(caught.value).endswith("; leave dtype out")


def test_a_dtype_is_named_wrongly_before_it_is_found_to_apply_to_no_model() -> None:
    from nlibias.runtime.build import build_predictors

    with pytest.raises(ConfigError, match=r"^unknown dtype 'flaot32' \(use auto, float32") as caught:
        build_predictors(["fake:m"], options=ModelOptions(dtype="flaot32"))
    assert caught.value.parameter == "dtype"
    assert [p.name for p in build_predictors(["fake:m"], options=ModelOptions(dtype="auto"))] == [
        "m"
    ]  # auto: the default


def test_a_dtype_is_accepted_when_one_model_loads_weights_in_it(
    tiny_nli_dir: Path, tiny_causal_dir: Path, tiny_mlm_dir: Path
) -> None:
    import torch

    from nlibias.runtime.build import build_predictors

    fake, hf = build_predictors(
        ["fake:m", str(tiny_nli_dir)], options=ModelOptions(dtype="float32", device="cpu")
    )
    assert fake.name == "m" and hf.classifier.dtype == torch.float32  # type: ignore[attr-defined]
    generative = build_predictors(
        ModelSet.of(["fake:m"], generative=[str(tiny_causal_dir)], prompts=["true"]),
        options=ModelOptions(dtype="float32", device="cpu"),
    )
    assert [p.kind for p in generative] == ["classifier", "generative"]
    # sentence scorers load in it too (and record it: it keys their cache)
    scorers = build_predictors(
        ModelSet.of([], mlm=[str(tiny_mlm_dir)], causal=[str(tiny_causal_dir)]),
        options=ModelOptions(dtype="bfloat16", device="cpu"),
    )
    assert [p.describe()["dtype"] for p in scorers] == ["bfloat16", "bfloat16"]


@pytest.mark.parametrize("bad", [0, -1])
def test_validation_status_needs_at_least_one_annotator(tmp_path: Path, bad: int) -> None:
    from nlibias.validation.resolve import parse_rule
    from nlibias.validation.status import validation_status

    with pytest.raises(ConfigError, match="min_annotators") as caught:
        validation_status(tmp_path, rule=parse_rule("drop"), min_annotators=bad)
    assert caught.value.parameter == "min_annotators"


@pytest.mark.parametrize("threshold", [2.0, -0.1, math.nan])
def test_prescreen_threshold_is_a_probability(tmp_path: Path, threshold: float) -> None:
    from nlibias.validation.prescreen import run_prescreen

    with pytest.raises(ConfigError, match="threshold") as caught:
        run_prescreen(tmp_path, judge="fake:j", threshold=threshold)
    assert caught.value.parameter == "threshold"


# -- sentence pairs and CSV text -------------------------------------------------------------------


def test_user_pairs_keep_quotes_that_are_data_and_drop_a_bom(tmp_path: Path) -> None:
    from nlibias.benchmarks.sentence_pairs import read_user_pairs

    path = tmp_path / "pairs.csv"
    # A quoted field holding quotes ("" is one quote), after a UTF-8 byte-order mark.
    path.write_bytes('\ufeffmore,less\n"""Men cry,"" she said.","""Women cry,"" she said."\n'.encode())
    (pair,) = read_user_pairs(path)
    assert (pair.premise, pair.hypothesis) == ('"Men cry," she said.', '"Women cry," she said.')
    # A quote opening an unquoted field is refused with its line, not read as something else.
    path.write_text('more,less\nA b.,C b.\n"Men" cry.,"Women" cry.\n', encoding="utf-8")
    with pytest.raises(SourceError, match=r"pairs\.csv:3: malformed CSV"):
        read_user_pairs(path)


def test_a_latin1_pairs_file_is_refused_naming_it(tmp_path: Path) -> None:
    from nlibias.benchmarks.sentence_pairs import read_user_pairs

    path = tmp_path / "pairs.csv"
    path.write_bytes("more,less\nCaf\xe9 men.,Caf\xe9 women.\n".encode("latin-1"))
    with pytest.raises(SourceError, match=r"pairs\.csv:2: not UTF-8 text: byte 0xe9 at column 4"):
        read_user_pairs(path)


def test_the_library_refuses_a_demo_of_no_pairs_and_a_negative_break() -> None:
    """The command line refused these already; the Python API hung (demo) or served a page whose
    break timer never fires (negative minutes)."""
    from nlibias.errors import ConfigError
    from nlibias.jobs.demo import run_demo
    from nlibias.validation.app import AppSettings

    with pytest.raises(ConfigError, match="sample_pairs is 0") as refused:
        run_demo("unused", sample_pairs=0)
    assert refused.value.parameter == "sample_pairs"
    for minutes in (-5.0, float("nan"), float("inf")):
        with pytest.raises(ConfigError, match="break_minutes") as refused:
            AppSettings(break_minutes=minutes)
        assert refused.value.parameter == "break_minutes"
    assert AppSettings(break_minutes=0).break_minutes == 0  # 0: no reminders


@pytest.mark.parametrize(
    ("text", "why"),
    [
        ("[" * 100000 + "]" * 100000, "nested too deeply"),
        ('{"label": ' + "9" * 5000 + "}", "thousands of digits"),
    ],
)
def test_a_training_file_or_tool_log_nested_too_deep_or_with_a_huge_number_is_named(
    tmp_path: Path, text: str, why: str
) -> None:
    """Both ended in an internal error (RecursionError) in augment/finetune and in score's
    format sniffing, which read these files with json.loads."""
    from nlibias.debias.training_rows import iter_training_rows
    from nlibias.io.tool_logs import predictions_format

    path = tmp_path / "train.jsonl"
    path.write_text(text + "\n", encoding="utf-8")
    with pytest.raises(SourceError, match=why) as refused:
        list(iter_training_rows(path))
    assert "train.jsonl:1" in str(refused.value)
    assert predictions_format(path) == "nlibias"  # the native reader then names the problem
