"""An extend configuration's values refused at the YAML line of the item at fault, with the reason."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from nlibias.errors import ConfigError, SourceError
from nlibias.extension.config import ExtendConfig, load_config
from nlibias.jobs.extend import extend_config


def _refused(tmp_path: Path, text: str) -> str:
    path = tmp_path / "config.yaml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(SourceError) as refused:
        load_config(path)
    return str(refused.value).removeprefix(f"{path}:")


def test_a_negative_seed_is_refused_like_every_other_seed(tmp_path: Path) -> None:
    refused = _refused(tmp_path, "run_dir: x\nseed: -4\n")
    assert refused == "2: field seed: Input should be greater than or equal to 0"


def test_a_subtopic_listed_twice_is_refused_at_its_second_place(tmp_path: Path) -> None:
    refused = _refused(tmp_path, "subtopics:\n  - man_is_to_surgeon\n  - man_is_to_surgeon\n")
    assert refused == "3: field subtopics.1: 'man_is_to_surgeon' is listed twice; list each once"
    with pytest.raises(ConfigError, match=r"^subtopics \['a', 'a'\]: 'a' is listed twice") as caught:
        extend_config(None, subtopics=["a", "a"])
    assert caught.value.parameter == "subtopics"


def test_a_filter_model_twice_or_also_held_out_is_refused_at_the_item(tmp_path: Path) -> None:
    twice = _refused(tmp_path, "filter:\n  models:\n    - fake:a\n    - fake:a\n")
    assert (
        twice
        == "4: field filter.models.1: filter model 'fake:a' is listed twice (give each a distinct name:)"
    )
    held = _refused(tmp_path, "filter:\n  models: [fake:a, fake:b]\n  holdout:\n    - fake:c\n    - fake:b\n")
    assert held.startswith("5: field filter.holdout.1: 'fake:b' is both a filter model and a held-out model")
    with pytest.raises(ConfigError, match=r"^classifiers \['fake:a', 'fake:a'\]: filter model 'fake:a' is"):
        extend_config(None, classifiers=["fake:a", "fake:a"])
    with pytest.raises(ConfigError, match=r"^holdout \['fake:a'\]: 'fake:a' is both") as caught:
        extend_config(None, classifiers=["fake:a"], holdout=["fake:a"])
    assert caught.value.parameter == "holdout"
    spaced = _refused(tmp_path, "filter:\n  models: [fake:a]\n  compare_fills: ['fake:m ']\n")
    assert (
        spaced
        == "3: field filter.compare_fills.0: 'fake:m ' has spaces around the model name; remove them ('fake:m')"
    )
    with pytest.raises(
        ConfigError, match=r"^classifiers \['fake:a', 'fake:a '\]: 'fake:a ' has spaces"
    ) as caught:
        extend_config(None, classifiers=["fake:a", "fake:a "])
    assert caught.value.parameter == "classifiers"


def test_a_held_out_model_twice_is_refused_however_it_is_named(tmp_path: Path) -> None:
    """The card names held-out models: one listed twice (under another ``name:`` too) is refused at
    its second place."""
    named = _refused(tmp_path, "filter:\n  holdout:\n    - fake:h\n    - {model: fake:h, name: h2}\n")
    assert named == "4: field filter.holdout.1: 'fake:h' is listed twice; list each once"
    with pytest.raises(
        ConfigError, match=r"^holdout \['fake:h', 'fake:h'\]: 'fake:h' is listed twice"
    ) as caught:
        extend_config(None, holdout=["fake:h", "fake:h"])
    assert caught.value.parameter == "holdout"
    assert [m.model for m in ExtendConfig().filter.holdout] == [
        "ynie/albert-xxlarge-v2-snli_mnli_fever_anli_R1_R2_R3-nli"
    ]


def test_an_nli_classifier_folder_as_the_fill_model_is_refused_when_read(tmp_path: Path) -> None:
    folder = tmp_path / "nli"
    folder.mkdir()
    architecture = {"architectures": ["RobertaForSequenceClassification"], "model_type": "roberta"}
    (folder / "config.json").write_text(json.dumps(architecture), encoding="utf-8")
    refused = _refused(tmp_path, f"run_dir: x\nmlm:\n  model: {folder}\n")
    assert refused.startswith(
        f"3: field mlm.model: '{folder}' is an NLI classifier (a sequence-classification"
    )
    assert refused.endswith("a classifier filters as one of filter.models")
    with pytest.raises(ConfigError, match=r"^fill_model '.*nli' is an NLI classifier") as caught:
        extend_config(None, fill_model=str(folder))
    assert caught.value.parameter == "fill_model"


def test_a_causal_lm_folder_as_a_filter_model_is_refused_when_read(tmp_path: Path) -> None:
    folder = tmp_path / "lm"
    folder.mkdir()
    architecture = {"architectures": ["LlamaForCausalLM"], "model_type": "llama"}
    (folder / "config.json").write_text(json.dumps(architecture), encoding="utf-8")
    refused = _refused(tmp_path, f"run_dir: x\nfilter:\n  models: [{folder}]\n")
    assert refused.startswith(f"3: field filter.models: '{folder}' is a causal LM, not an NLI classifier")
    with pytest.raises(ConfigError, match=r"^classifiers '.*lm' is a causal LM") as caught:
        extend_config(None, classifiers=[str(folder)])
    assert caught.value.parameter == "classifiers"


def test_stopwords_without_derive_are_refused_at_their_line(tmp_path: Path) -> None:
    """templates.stopwords feed only derivation: without templates.derive nothing read them."""
    refused = _refused(tmp_path, "run_dir: x\ntemplates:\n  stopwords: words.txt\n")
    assert refused == (
        "3: field templates.stopwords: stopwords 'words.txt' applies to derived templates "
        "(templates.derive: true), and templates.derive is false; leave stopwords out"
    )
    (tmp_path / "derived.yaml").write_text(
        "templates:\n  derive: true\n  stopwords: w.txt\n", encoding="utf-8"
    )
    with pytest.raises(
        ConfigError, match=r"^derive False: templates.stopwords of the configuration"
    ) as caught:
        extend_config(tmp_path / "derived.yaml", derive=False)
    assert caught.value.parameter == "derive"


def test_one_fill_model_spelt_two_ways_is_compared_once(tmp_path: Path) -> None:
    itself = _refused(
        tmp_path, "mlm:\n  model: bert-base-cased\nfilter:\n  compare_fills: ['mlm:bert-base-cased']\n"
    )
    assert itself.startswith("4: field filter.compare_fills: 'mlm:bert-base-cased' is the fill model itself")
    twice = _refused(tmp_path, "filter:\n  compare_fills: ['smollm2', 'causal:smollm2']\n")
    assert twice.startswith(
        "2: field filter.compare_fills: 'smollm2' and 'causal:smollm2' name one fill model"
    )
    other = tmp_path / "other.yaml"
    other.write_text("filter:\n  compare_fills: ['smollm2', 'causal:smollm2?beam=4']\n", encoding="utf-8")
    assert load_config(other).filter.compare_fills == ["smollm2", "causal:smollm2?beam=4"]  # another fill
    with pytest.raises(ConfigError, match=r"'causal:smollm2' is the fill model itself") as caught:
        extend_config(None, fill_model="smollm2", compare_fill="causal:smollm2")
    assert caught.value.parameter == "compare_fill"


def test_a_held_out_model_must_be_an_nli_classifier(tmp_path: Path) -> None:
    refused = _refused(tmp_path, "filter:\n  holdout: [smollm2]\n")
    assert refused.startswith(
        "2: field filter.holdout: 'smollm2' is a causal LM, not an NLI classifier to hold out"
    )
    assert load_config_text(tmp_path, "filter:\n  holdout: ['prompt:smollm2', 'fake:h']\n").filter.holdout


def test_a_dtype_no_backend_knows_is_refused_when_read(tmp_path: Path) -> None:
    refused = _refused(tmp_path, "filter:\n  models: [org/nli]\n  dtype: fp8\n")
    assert refused == "3: field filter.dtype: unknown dtype 'fp8' (use auto, float32, bfloat16 or float16)"
    assert load_config_text(tmp_path, "mlm:\n  dtype: BF16\n").mlm.dtype == "BF16"  # the backends' spelling


def test_templates_none_means_no_file_and_needs_derived_ones(tmp_path: Path) -> None:
    refused = _refused(tmp_path, "templates:\n  curated: none\n")
    assert refused.startswith("2: field templates.curated: no curated templates (none) and none derived")
    assert (
        load_config_text(tmp_path, "templates:\n  curated: none\n  derive: true\n").templates.curated is None
    )


def load_config_text(tmp_path: Path, text: str) -> ExtendConfig:
    path = tmp_path / "accepted.yaml"
    path.write_text(text, encoding="utf-8")
    return load_config(path)
