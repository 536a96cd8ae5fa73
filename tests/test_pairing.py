"""The shared pairing helper (:func:`nlibias.metrics.pairing.pair_rows`) names the source it pairs."""

from __future__ import annotations

import pytest

from nlibias.errors import DataError
from nlibias.metrics.pairing import pair_rows
from nlibias.schema import Sample
from nlibias.schema.columns import SampleColumns


def _crows(sample_id: str, role: str, key: str) -> Sample:
    return Sample(sample_id, "crows-pairs", "race", "t", "A.", "B.", "neutral", stereotype=role, pair_key=key)


def test_a_crows_pairs_pairing_error_names_crows_pairs_not_wq_nli() -> None:
    # pair k: s0 and s1 are both pro (s2 is its anti): the second pro (s1) is refused
    columns = SampleColumns.from_samples(
        [_crows("s0", "pro", "k"), _crows("s1", "pro", "k"), _crows("s2", "anti", "k")]
    )
    with pytest.raises(DataError) as refused:
        pair_rows(columns)
    message = str(refused.value)
    assert (
        "pair 'k' has two pro samples ('s0', 's1'); each crows-pairs pair is one pro and one anti" in message
    )
    assert "WQ-NLI" not in message
    assert refused.value.field == "pair_key"


def test_pairs_in_either_order_pair_pro_first() -> None:
    # positions: 0 = k anti, 1 = j pro, 2 = k pro, 3 = j anti -> pairs (pro, anti): k (2, 0), j (1, 3)
    columns = SampleColumns.from_samples(
        [_crows("a", "anti", "k"), _crows("b", "pro", "j"), _crows("c", "pro", "k"), _crows("d", "anti", "j")]
    )
    paired = pair_rows(columns)
    assert sorted(zip(paired.first.tolist(), paired.second.tolist(), strict=True)) == [(1, 3), (2, 0)]
    assert paired.unpaired.tolist() == []
