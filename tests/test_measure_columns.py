"""The token-probability, generative and TP↔NLI agreement measures over columns
(:class:`~nlibias.schema.outputs.ModelOutputs` built from arrays, as a predictor returns them) give
what their object wrappers give on the same rows, and the agreement what an independent count over
the sample objects gives."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from nlibias.errors import DataError
from nlibias.metrics.generative import score_generative, score_generative_columns
from nlibias.metrics.token_probability import (
    TP_GROUPINGS,
    item_agreement,
    preferences,
    score_token_probability,
    score_token_probability_columns,
    wq_nli_item_agreement,
)
from nlibias.report.tp_correlation import item_agreement_of_rows
from nlibias.schema import LABEL_INDEX, Prediction, Sample
from nlibias.schema.columns import SampleColumns
from nlibias.schema.outputs import NO_LABEL, ModelOutputs

_scores = st.one_of(
    st.none(), st.tuples(st.floats(-9, 0), st.floats(-9, 0), st.integers(0, 2), st.integers(0, 2))
)
_tp_rows = st.lists(
    st.tuples(
        _scores,
        st.sampled_from(["pro", "anti", None]),
        st.sampled_from(["race", "age"]),
        st.sampled_from([None, "g1", "g2"]),
        st.sampled_from([None, "Gay", "Trans"]),
    ),
    min_size=1,
    max_size=14,
)


def _nan(n: int) -> np.ndarray:
    return np.full(n, np.nan)


@settings(max_examples=60, deadline=None)
@given(_tp_rows, st.integers(0, 5))
def test_token_probability_columns_equal_the_object_wrapper(rows: list[Any], seed: int) -> None:
    samples, predictions = [], []
    values = {name: _nan(len(rows)) for name in ("score_more", "score_less", "tokens_more", "tokens_less")}
    for i, (scores, stereotype, domain, group, identity) in enumerate(rows):
        provenance = {} if identity is None else {"identity_group": identity}
        samples.append(Sample(f"s{i}", "crows-pairs", domain, "t", f"A{i}.", f"B{i}.", "neutral",
                              stereotype=stereotype, pair_key=f"k{i}", group=group, provenance=provenance))  # fmt: skip
        extra: dict[str, Any] = {"kind": "sentence-logprob", "no_pair": True}
        if scores is not None:
            extra = {"kind": "sentence-logprob"} | dict(zip(values, scores, strict=True))
            for name, value in zip(values, scores, strict=True):
                values[name][i] = value
        predictions.append(Prediction(f"s{i}", "m|tp=shared", None, None, extra))
    columns = SampleColumns.from_samples(samples, provenance_keys=TP_GROUPINGS)
    outputs = ModelOutputs("sentence-logprob", np.full((len(rows), 3), np.nan), values=values)
    if all(scores is None for scores, *_ in rows):
        with pytest.raises(DataError, match="no sentence pair"):
            score_token_probability_columns(columns, outputs, bootstrap=0)
        return
    got = score_token_probability_columns(columns, outputs, model="m|tp=shared", bootstrap=20, seed=seed)
    assert got == score_token_probability(samples, predictions, bootstrap=20, seed=seed)
    scored = [i for i, (scores, *_) in enumerate(rows) if scores is not None]
    assert got["overall"]["n_pairs"] == len(scored)
    assert got["overall"]["samples_without_pair"] == len(rows) - len(scored)
    assert ("by_identity_group" in got) == all(rows[i][4] is not None for i in scored)


def test_token_probability_refuses_outputs_of_another_kind() -> None:
    sample = Sample("a", "crows-pairs", "race", "t", "A.", "B.", "neutral", stereotype="pro", pair_key="a")
    nli = ModelOutputs("classifier", np.array([[0.1, 0.8, 0.1]]))
    with pytest.raises(DataError, match="sentence scores") as error:
        score_token_probability_columns(SampleColumns.from_samples([sample]), nli, model="nli")
    assert (error.value.model, error.value.field) == ("nli", "kind") and "mlm" not in str(error.value)


_answers = st.tuples(
    st.sampled_from(["yes", "no", "maybe", None]),  # None: unparsed
    st.booleans(),  # the answer word recorded
    st.one_of(st.none(), st.floats(0, 1)),  # p(yes), scored answers only
)


@settings(max_examples=60, deadline=None)
@given(
    st.lists(_answers, min_size=1, max_size=6),
    st.booleans(),
    st.sampled_from([None, "yes/no", "yes/no/maybe"]),
)
def test_generative_columns_equal_the_object_wrapper(
    answers: list[Any], three_way: bool, answer_set: Any
) -> None:
    labels: dict[Any, Any] = {
        "yes": "entailment",
        "no": "contradiction" if three_way else "neutral",
        "maybe": "neutral",
        None: None,
    }
    samples: list[Sample] = []
    predictions: list[Prediction] = []
    n = 2 * len(answers) + 1
    codes, words, p_yes, p_maybe = np.full(n, NO_LABEL, dtype=np.int8), [None] * n, _nan(n), _nan(n)
    for k, (word, recorded, yes) in enumerate(answers * 2 + answers[:1]):
        stereotype: Any = ("pro", "anti")[k % 2] if k < n - 1 else None
        samples.append(Sample(f"s{k}", "bbnli", f"d{k % 3}", f"t{k % 4}", f"P{k // 2}.", f"H{k}.",
                              "neutral" if stereotype else "contradiction", stereotype=stereotype,
                              pair_key=f"k{k // 2}" if stereotype else None))  # fmt: skip
        extra: dict[str, Any] = {"kind": "generative", "prompt": "plain", "mode": "scored"}
        if recorded and word is not None:
            extra["answer"], words[k] = word, word
        if yes is not None:
            extra["answer_probs"] = {"yes": yes, "no": 1 - yes} | ({"maybe": 0.0} if three_way else {})
            p_yes[k], p_maybe[k] = yes, 0.0 if three_way else np.nan
        if answer_set is not None and k == 1:
            extra["answers"] = answer_set
        label = labels[word]
        codes[k] = NO_LABEL if label is None else LABEL_INDEX[label]
        predictions.append(Prediction(f"s{k}", "lm|prompt=plain|scored", label, None, extra))
    strings = {"answer": tuple(words), "prompt": ("plain",) * n, "mode": ("scored",) * n}
    if answer_set is not None:
        strings["answers"] = tuple(answer_set if k == 1 else None for k in range(n))
    values = {"answer_probs.yes": p_yes, "answer_probs.no": 1 - p_yes}
    if three_way:
        values["answer_probs.maybe"] = p_maybe
    outputs = ModelOutputs(
        "generative", np.full((n, 3), np.nan), labels=codes, values=values, strings=strings
    )
    got = score_generative_columns(SampleColumns.from_samples(samples), outputs, bootstrap=15, seed=3)
    assert got == score_generative(samples, predictions, bootstrap=15, seed=3)


def _agreement_by_objects(
    samples: list[Sample], tp: list[Prediction], nli: list[Prediction]
) -> dict[str, Any]:
    """The agreement counted over the sample objects, row by row (the code before the columns)."""
    tp_by_id, nli_by_id = {p.sample_id: p for p in tp}, {p.sample_id: p for p in nli}
    rows: dict[str, dict[str, Sample]] = {}
    for sample in samples:
        if sample.pair_key is not None and sample.stereotype is not None:
            rows.setdefault(sample.pair_key, {})[sample.stereotype] = sample
    prefer, m1 = [], []
    for members in rows.values():
        if set(members) != {"pro", "anti"}:
            continue
        score = tp_by_id.get(members["pro"].id)
        stereo, counter = nli_by_id.get(members["pro"].id), nli_by_id.get(members["anti"].id)
        if (
            score is None
            or stereo is None
            or counter is None
            or stereo.probs is None
            or counter.probs is None
        ):
            continue
        prefer += preferences([score.extra["score_more"]], [score.extra["score_less"]])
        m1.append(stereo.probs[0] > counter.probs[0])
    return item_agreement(prefer, m1)


@settings(max_examples=60, deadline=None)
@given(st.data())
def test_agreement_over_columns_equals_a_count_over_objects(data: st.DataObject) -> None:
    samples, tp, nli = [], [], []
    for r in range(data.draw(st.integers(0, 8))):
        for role in ("pro", "anti"):
            if data.draw(st.integers(0, 9)) == 0:
                continue  # a lone sample
            sample = Sample(f"r{r}:{role}", "wq-nli", "d", "t", f"{role}{r}.", f"H{r}.", "neutral",
                            stereotype=role, pair_key=f"r{r}")  # fmt: skip
            samples.append(sample)
            if role == "pro" and data.draw(st.booleans()):
                more, less = data.draw(st.floats(-3, 0)), data.draw(st.floats(-3, 0))
                tp.append(Prediction(sample.id, "lm|tp=shared", None, None,
                                     {"kind": "sentence-logprob", "score_more": more, "score_less": less}))  # fmt: skip
            if data.draw(st.integers(0, 5)):
                e = data.draw(st.floats(0, 1))
                nli.append(Prediction(sample.id, "nli", "neutral", (e, (1 - e) / 2, (1 - e) / 2)))
    want = _agreement_by_objects(samples, tp, nli)
    assert item_agreement_of_rows(samples, tp, nli) == want
    by_id = [{p.sample_id: p for p in rows} for rows in (tp, nli)]
    n = len(samples)
    values = {name: _nan(n) for name in ("score_more", "score_less")}
    probs = np.full((n, 3), np.nan)
    for i, sample in enumerate(samples):
        if (score := by_id[0].get(sample.id)) is not None:
            values["score_more"][i], values["score_less"][i] = (
                score.extra["score_more"],
                score.extra["score_less"],
            )
        if (row := by_id[1].get(sample.id)) is not None:
            probs[i] = row.probs
    columns = SampleColumns.from_samples(samples)
    tp_outputs = ModelOutputs("sentence-logprob", np.full((n, 3), np.nan), values=values)
    assert wq_nli_item_agreement(columns, tp_outputs, ModelOutputs("classifier", probs)) == want
