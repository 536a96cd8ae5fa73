"""Mapping a model's id2label to entailment / neutral / contradiction, and --label-map parsing."""

from __future__ import annotations

import numpy as np
import pytest

from nlibias.errors import ConfigError, LabelMappingError
from nlibias.models.nli.labels import canonical_label, parse_label_map, resolve_label_order

YNIE = {0: "entailment", 1: "neutral", 2: "contradiction"}
ROBERTA_LARGE_MNLI = {0: "CONTRADICTION", 1: "NEUTRAL", 2: "ENTAILMENT"}


@pytest.mark.parametrize(
    ("id2label", "expected"),
    [
        (YNIE, [0, 1, 2]),
        # entailment is column 2, neutral 1, contradiction 0
        (ROBERTA_LARGE_MNLI, [2, 1, 0]),
        # config.json keys are strings; cross-encoder/nli-* order: C, E, N -> E=1, N=2, C=0
        ({"0": "contradiction", "1": "entailment", "2": "neutral"}, [1, 2, 0]),
        ({0: "Entailment", 1: "Neutral", 2: "Contradiction"}, [0, 1, 2]),
        ({0: "contradict", 1: "entail", 2: "neutral"}, [1, 2, 0]),
    ],
)
def test_known_label_orders(id2label: dict, expected: list[int]) -> None:
    assert resolve_label_order(id2label) == expected


def test_order_reorders_columns_into_labels_order() -> None:
    # roberta-large-mnli columns are (C, N, E); picking [2, 1, 0] gives (E, N, C).
    raw = np.array([[0.7, 0.2, 0.1]])
    order = resolve_label_order(ROBERTA_LARGE_MNLI)
    assert raw[:, order].tolist() == [[0.1, 0.2, 0.7]]


@pytest.mark.parametrize("name", ["ENTAILMENT", "Entailment", "entail", "entails", " entailment "])
def test_entailment_spellings(name: str) -> None:
    assert canonical_label(name) == "entailment"


@pytest.mark.parametrize("name", ["LABEL_0", "not_entailment", "yes", ""])
def test_unknown_spellings(name: str) -> None:
    assert canonical_label(name) is None


def test_generic_labels_are_refused_with_labels_and_fix() -> None:
    with pytest.raises(LabelMappingError) as caught:
        resolve_label_order({0: "LABEL_0", 1: "LABEL_1", 2: "LABEL_2"}, model_name="some/model")
    message = str(caught.value)
    assert "some/model" in message
    assert "'LABEL_0'" in message and "'LABEL_2'" in message
    assert "label_map='0=entailment,1=neutral,2=contradiction' (the command line's --label-map)" in message


def test_two_way_model_is_refused() -> None:
    with pytest.raises(LabelMappingError, match=r"2 output label.*not_entailment.*2-way"):
        resolve_label_order({0: "entailment", 1: "not_entailment"})


@pytest.mark.parametrize(
    ("id2label", "needle"),
    [
        ({0: "entailment", 1: "entailment", 2: "contradiction"}, "more than once"),
        ({0: "entailment", 1: "neutral", 3: "contradiction"}, "ids 0, 1, 2"),
        ({0: "entailment", 1: "neutral", 2: "contradiction", 3: "other"}, "4 output label"),
    ],
)
def test_duplicate_or_missing_ids_are_refused(id2label: dict, needle: str) -> None:
    with pytest.raises(LabelMappingError, match=needle):
        resolve_label_order(id2label)


def test_override_replaces_the_models_names() -> None:
    generic = {0: "LABEL_0", 1: "LABEL_1", 2: "LABEL_2"}
    # the override says column 0 is contradiction, 1 entailment, 2 neutral -> E=1, N=2, C=0
    override = {0: "contradiction", 1: "entailment", 2: "neutral"}
    assert resolve_label_order(generic, override) == [1, 2, 0]
    # an override also wins over names that would have mapped
    assert resolve_label_order(YNIE, override) == [1, 2, 0]


def test_override_must_fit_the_model() -> None:
    with pytest.raises(LabelMappingError, match="covers ids"):
        resolve_label_order(YNIE, {0: "entailment", 1: "neutral"})
    with pytest.raises(LabelMappingError, match="does not fit"):
        resolve_label_order(YNIE, {0: "entailment", 1: "neutral", 7: "contradiction"})


def test_parse_label_map() -> None:
    assert parse_label_map("0=entailment,1=neutral,2=contradiction") == YNIE
    assert parse_label_map(" 2 = ENTAILMENT , 1=Neutral,0=contradict ") == {
        2: "entailment",
        1: "neutral",
        0: "contradiction",
    }


@pytest.mark.parametrize(
    ("text", "needle"),
    [
        ("", "empty"),
        ("0:entailment,1=neutral,2=contradiction", "has no '='"),
        ("a=entailment,1=neutral,2=contradiction", "not an integer id"),
        ("0=yes,1=neutral,2=contradiction", "not one of entailment, neutral, contradiction"),
        ("0=entailment,0=neutral,2=contradiction", "id 0 twice"),
        ("0=entailment,1=entailment,2=contradiction", "names entailment more than once"),
        ("0=entailment,1=neutral", "does not name contradiction"),
    ],
)
def test_parse_label_map_errors(text: str, needle: str) -> None:
    with pytest.raises(ConfigError, match=needle) as caught:
        parse_label_map(text)
    assert "e.g. '0=entailment,1=neutral,2=contradiction'" in str(caught.value)
    assert caught.value.parameter == "label_map"  # the command line names --label-map
