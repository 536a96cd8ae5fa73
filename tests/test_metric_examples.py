"""Worked examples of ``nlibias.metrics`` and ``nlibias.schema``, run as doctests (one function per
example, named after the module and the function it shows)."""

from __future__ import annotations


def metrics_bbnli_scorer_bbnli_frame() -> None:
    """Examples of ``nlibias.metrics.bbnli_scorer.bbnli_frame``.

    >>> from nlibias.metrics.bbnli import encode_samples
    >>> from nlibias.metrics.bbnli_scorer import bbnli_frame
    >>> frame = bbnli_frame(encode_samples(["entailment", "neutral", "contradiction", "contradiction"],
    ...     gold=["neutral"] * 4, stereotype=["pro", "anti"] * 2, pair_key=["a", "a", "b", "b"]),
    ...     groups={"domain": ["race", "race", "gender", "gender"]}, bootstrap=0)
    >>> frame.by_group["domain"]["race"]["cf_pro"], frame.by_group["domain"]["gender"]["cf_error"]
    (50.0, 100.0)
    >>> frame.worst_group("cf_error", by="domain"), frame.difference("cf_pro", by="domain")
    (('gender', 100.0), 50.0)
    """


def metrics_bbnli_scorer_module() -> None:
    """Examples of ``nlibias.metrics.bbnli_scorer``.

    >>> from nlibias.metrics.bbnli_scorer import compute_bbnli_report
    >>> report = compute_bbnli_report(
    ...     ["entailment", "neutral"], gold=["neutral"] * 2, stereotype=["pro", "anti"],
    ...     pair_key=["k", "k"], domain=["gender"] * 2, subtopic=["t"] * 2, ids=["a", "b"], bootstrap=0)
    >>> report["by_subtopic"]["t"]["cf_pro"], report["overall"]["ci"]["cf_pro"]
    (50.0, None)
    """


def metrics_bbnli_scorer_score_bbnli_columns() -> None:
    """Examples of ``nlibias.metrics.bbnli_scorer.score_bbnli_columns``.

    >>> import numpy as np
    >>> from nlibias.metrics.bbnli_scorer import score_bbnli_columns
    >>> from nlibias.schema.columns import SampleColumns
    >>> from nlibias.schema import Sample
    >>> pair = [Sample(id=s, source="bbnli", domain="d", subtopic="t", premise="P.",
    ...                hypothesis=f"{s} H.", gold="neutral", stereotype=s, pair_key="k")
    ...         for s in ("pro", "anti")]
    >>> report = score_bbnli_columns(SampleColumns.from_samples(pair), np.array([0, 1]), bootstrap=0)
    >>> report["overall"]["cf_pro"], report["by_domain"]["d"]["n_pairs"]
    (50.0, 1)
    """


def metrics_bbnli_slice_units() -> None:
    """Examples of ``nlibias.metrics.bbnli.slice_units``.

    >>> from nlibias.metrics.bbnli import encode_samples, slice_units
    >>> enc = encode_samples(["neutral", "entailment", "neutral"], gold=["neutral"] * 3,
    ...                      stereotype=["pro", "anti", None], pair_key=["k", "k", None])
    >>> units = slice_units(enc)
    >>> units.matrix.shape, units.n_pairs, units.is_test_unit.tolist()
    ((2, 15), 1, [False, True])
    """


def metrics_bbq_module() -> None:
    """Examples of ``nlibias.metrics.bbq``.

    >>> import numpy as np
    >>> from nlibias.metrics.bbq import BBQExamples, bbq_measures, example_counts
    >>> ex = BBQExamples(correct=np.array([2, 0]), target=np.array([0, 0]), unknown=np.array([2, 2]),
    ...                  ambiguous=np.array([True, False]), negative=np.array([True, True]),
    ...                  unit=np.array([0, 0]))
    >>> m = bbq_measures(example_counts(np.array([0, 0]), ex).sum(axis=0, keepdims=True))
    >>> float(m["bbq_s_amb"][0]), float(m["bbq_s_dis"][0]), float(m["bbq_accuracy_disambig"][0])
    (100.0, 100.0, 100.0)
    """


def metrics_bootstrap_module() -> None:
    """Examples of ``nlibias.metrics.bootstrap``.

    >>> import numpy as np
    >>> from nlibias.metrics.bootstrap import bootstrap_intervals, mean_intervals
    >>> rows = np.array([[1.0], [1.0], [1.0], [1.0]])  # every resample of 4 units sums to 4
    >>> bootstrap_intervals([rows], lambda total: {"sum": total[:, 0]}, resamples=50,
    ...                     rng=np.random.default_rng(0))
    {'sum': [4.0, 4.0]}
    >>> mean_intervals(np.ones((5, 1)), ["ones"], resamples=20, rng=np.random.default_rng(0))
    {'ones': [100.0, 100.0]}
    """


def metrics_explanations_explanationcolumns() -> None:
    """Examples of ``nlibias.metrics.explanations.ExplanationColumns``.

    >>> from nlibias.metrics.explanations import ExplanationColumns
    >>> cols = ExplanationColumns.of_rows([
    ...     {"id": "a", "label": "biased", "stance": "entailment", "consistent": True, "grounded": 1.0,
    ...      "stereotype": "pro", "pair_key": "k", "domain": "d", "subtopic": "t"}])
    >>> cols.label.tolist(), cols.unit.tolist()
    (['biased'], ['k'])
    """


def metrics_explanations_module() -> None:
    """Examples of ``nlibias.metrics.explanations``.

    >>> from nlibias.metrics.explanations import explanation_label
    >>> explanation_label(consistent=True, grounded=0.75, stance="entailment", stereotype="pro")
    'biased'
    >>> explanation_label(consistent=False, grounded=1.0, stance="entailment", stereotype="pro")
    'invalid'
    >>> explanation_label(consistent=True, grounded=0.25, stance="neutral", stereotype="anti")
    'invalid'
    """


def metrics_explanations_slice_rates() -> None:
    """Examples of ``nlibias.metrics.explanations.slice_rates``.

    >>> import numpy as np
    >>> from nlibias.metrics.explanations import ExplanationColumns, slice_rates
    >>> cols = ExplanationColumns.of_rows([
    ...     {"id": "a", "label": "biased", "stance": "entailment", "consistent": True, "grounded": 1.0,
    ...      "stereotype": "pro", "pair_key": "k"},
    ...     {"id": "b", "label": "balanced", "stance": "neutral", "consistent": True, "grounded": 0.5,
    ...      "stereotype": "anti", "pair_key": "k"}])
    >>> r = slice_rates(cols, resamples=0, rng=np.random.default_rng(0))
    >>> r["biased_rate"], r["biased_pro_rate"], r["mean_grounded"], r["flip_rate"], r["n_pairs"]
    (50.0, 100.0, 75.0, 100.0, 1)
    """


def metrics_generative_gap_interval() -> None:
    """Examples of ``nlibias.metrics.generative.gap_interval``.

    >>> import numpy as np
    >>> from nlibias.metrics.generative import gap_interval
    >>> p = np.array([60.0, 40.0, 70.0, 30.0])  # two pairs, each with a gap of 20 and 40
    >>> interval = gap_interval(p, np.array([0, 1, 0, 1]), np.array([7, 7, 9, 9]),
    ...                         resamples=200, rng=np.random.default_rng(0))
    >>> [round(x, 1) for x in interval]  # every resample's gap is 20, 30 or 40
    [20.0, 40.0]
    """


def metrics_generative_score_generative_columns() -> None:
    """Examples of ``nlibias.metrics.generative.score_generative_columns``.

    >>> from nlibias.metrics.generative import score_generative_columns
    >>> from nlibias.schema import Prediction, Sample
    >>> from nlibias.schema.columns import SampleColumns
    >>> from nlibias.schema.outputs import ModelOutputs
    >>> pair = [Sample(id=s, source="bbnli", domain="d", subtopic="t", premise="P.",
    ...                hypothesis=f"{s} H.", gold="neutral", stereotype=s, pair_key="k")
    ...         for s in ("pro", "anti")]
    >>> answers = [Prediction(sample_id=s.id, model="lm|prompt=true|generated", label=label,
    ...                       extra={"answer": word}) for s, label, word in
    ...            zip(pair, ["entailment", "neutral"], ["yes", "no"])]
    >>> outputs = ModelOutputs.of_predictions(answers, "generative")
    >>> report = score_generative_columns(SampleColumns.from_samples(pair), outputs, bootstrap=0)
    >>> report["overall"]["yes_rate_pro"], report["overall"]["cf_pro"], report["answer_set"]
    (100.0, 50.0, 'yes/no')
    """


def metrics_meta_module() -> None:
    """Examples of ``nlibias.metrics.meta``.

    >>> from nlibias.metrics.meta import ALL_MEASURES, MEASURES
    >>> MEASURES["cf_error"].direction
    'lower'
    >>> MEASURES["bbnli_bias_score"].range
    (-100.0, 100.0)
    >>> MEASURES["bbnli_bias_score"].is_better(1.0, -3.0)
    True
    >>> ALL_MEASURES["M1"].ideal, ALL_MEASURES["M1"].is_better(48.0, 53.0)  # 2 from 50 beats 3
    (50.0, True)
    >>> ALL_MEASURES["flip_rate"].reported_in, ALL_MEASURES["flip_rate"].range
    ('explanations.json', (0.0, 100.0))
    """


def metrics_metric_frame_module() -> None:
    """Examples of ``nlibias.metrics.metric_frame``.

    >>> import numpy as np
    >>> from nlibias.metrics.metric_frame import MetricFrame, units_frame
    >>> def share_of_ones(index, rng):
    ...     part = values if index is None else values[index]
    ...     return {"n": len(part), "ones": 100.0 * float(part.mean()), "ci": {"ones": None}}
    >>> values = np.array([1.0, 0.0, 1.0, 1.0])
    >>> frame = MetricFrame(share_of_ones, n_units=4, groups={"g": ["a", "a", "b", "b"]}, seed=0)
    >>> frame.overall["ones"], frame.by_group["g"]["b"]["ones"], frame.difference("ones", by="g")
    (75.0, 100.0, 50.0)
    >>> table = frame.to_frame()
    >>> list(table["slice"]), list(table["value"]), list(table["n"])
    (['all', 'a', 'b'], [75.0, 50.0, 100.0], [4, 2, 2])

    >>> values = np.array([[1.0, 0.2], [0.0, 0.4], [1.0, 0.0]])
    >>> out = units_frame(values, ["hit", "gap"], groups={"g": ["a", "a", "b"]},
    ...                   count_measures={"hit"}, bootstrap=0, seed=0, n_key="n_rows").to_dict()
    >>> out["overall"]["hit"], out["overall"]["counts"]["hit"], round(out["by_g"]["a"]["gap"], 6)
    (66.66666666666667, 2, 30.0)
    """


def jobs_debias_compare_paired_differences() -> None:
    """Examples of ``nlibias.jobs.debias_compare.paired_differences``.

    >>> import numpy as np
    >>> from nlibias.jobs.debias_compare import paired_differences
    >>> before = np.array([[1.0, 0.2, 1.0, 1.0], [0.0, 0.4, 0.0, 1.0]])
    >>> after = np.array([[1.0, 0.1, 0.0, 0.0], [1.0, 0.1, 0.0, 1.0]])
    >>> d = paired_differences(before, after, groups={}, bootstrap=0)["overall"]
    >>> d["S"], round(d["delta_p"], 6), d["B"], d["S_3way"]  # S 50 -> 100, dP 30 -> 10, B 50 -> 0, S3 100 -> 50
    (50.0, -20.0, -50.0, -50.0)
    """


def metrics_occupations_score_occupations_columns() -> None:
    """Examples of ``nlibias.metrics.occupations.score_occupations_columns``.

    >>> import numpy as np
    >>> from nlibias.metrics.occupations import PROVENANCE_KEYS, score_occupations_columns
    >>> from nlibias.schema import Sample
    >>> from nlibias.schema.columns import SampleColumns
    >>> pair = [Sample(id=f"k:{g}", source="occupations", domain="gender", subtopic="nurse",
    ...                premise="A nurse waits.", hypothesis=f"A {g} job.", gold="neutral", group=g,
    ...                stereotype=s, pair_key="k") for g, s in (("female", "pro"), ("male", "anti"))]
    >>> columns = SampleColumns.from_samples(pair, provenance_keys=PROVENANCE_KEYS)
    >>> report = score_occupations_columns(columns, np.array([[0.6, 0.3, 0.1], [0.2, 0.6, 0.2]]),
    ...                                    model="m", bootstrap=0)
    >>> o = report["overall"]  # P_e: f .6/.7 = 6/7, m .2/.4 = 1/2; binary E, E (a tie); 3-way E, N
    >>> o["n_pairs"], o["S"], o["S_3way"], round(o["delta_p"], 4), o["B"], list(report["by_occupation"])
    (1, 100.0, 0.0, 35.7143, 100.0, ['nurse'])
    """


def metrics_paired_bbnli_units() -> None:
    """Examples of ``nlibias.metrics.paired.bbnli_units``.

    >>> from nlibias.metrics.paired import bbnli_units
    >>> from nlibias.metrics.bbnli import encode_samples
    >>> enc = encode_samples(["entailment", None, "neutral"], gold=["neutral"] * 3,
    ...                      stereotype=["pro", "anti", None], pair_key=["k", "k", None])
    >>> units = bbnli_units(enc)  # one pair (its anti sample unanswered) and one test sample
    >>> len(units), units.stratum.tolist(), float(units.statistic(units.blocks[0][:1])["accuracy"][0])
    (2, [0, 1], 0.0)
    """


def metrics_paired_bias_change() -> None:
    """Examples of ``nlibias.metrics.paired.bias_change``.

    >>> import numpy as np
    >>> from nlibias.metrics.paired import AWAY_FROM_NEUTRAL, TOWARDS_STEREOTYPE, bias_change
    >>> from nlibias.schema.measure_info import MeasureInfo
    >>> gap = MeasureInfo("gap", "d", "zero", (-100.0, 100.0), "c", headline=True, neutral=0.0, signed=True)
    >>> bias_change(gap, np.array([-1.5, 0.0]), np.array([1.5, 3.0]), AWAY_FROM_NEUTRAL).tolist()
    [0.0, 3.0]
    >>> bias_change(gap, np.array([-1.5, 0.0]), np.array([1.5, 3.0]), TOWARDS_STEREOTYPE).tolist()
    [3.0, 3.0]
    """


def metrics_paired_module() -> None:
    """Examples of ``nlibias.metrics.paired``.

    >>> import numpy as np
    >>> from nlibias.metrics.paired import compare_units, mean_units
    >>> from nlibias.schema.measure_info import MeasureInfo
    >>> infos = [MeasureInfo("gap", "d", "zero", (-100.0, 100.0), "c", headline=True, neutral=0.0, signed=True)]
    >>> base = mean_units(np.array([[0.0], [0.0], [1.0], [0.0]]), ["gap"])  # 25 %
    >>> cand = mean_units(np.array([[1.0], [0.0], [1.0], [1.0]]), ["gap"])  # 75 %
    >>> found = compare_units(base, cand, infos, resamples=200, seed=0)[0]
    >>> found.baseline, found.candidate, found.delta
    (25.0, 75.0, 50.0)
    """


def metrics_paired_units_model_outputs() -> None:
    """Examples of ``nlibias.metrics.paired_units.model_outputs``.

    >>> from nlibias.metrics.paired_units import model_outputs
    >>> from nlibias.schema.columns import SampleColumns
    >>> from nlibias.schema import Prediction, Sample
    >>> pair = [Sample(id=s, source="bbnli", domain="d", subtopic="t", premise="P.", hypothesis=f"{s} H.",
    ...                gold="neutral", stereotype=s, pair_key="k") for s in ("pro", "anti")]
    >>> kept, outputs = model_outputs(SampleColumns.from_samples(pair), [Prediction(sample_id="anti",
    ...     model="m", label="neutral")], {})
    >>> kept.tolist(), outputs["m"].label_codes().tolist()
    ([1], [1])
    """


def metrics_paired_units_module() -> None:
    """Examples of ``nlibias.metrics.paired_units``.

    >>> import numpy as np
    >>> from nlibias.metrics.paired_units import bbnli_pair_units
    >>> from nlibias.schema.columns import SampleColumns
    >>> from nlibias.schema.outputs import ModelOutputs
    >>> from nlibias.schema import Sample
    >>> pair = [Sample(id=s, source="bbnli", domain="d", subtopic="t", premise="P.", hypothesis=f"{s} H.",
    ...                gold="neutral", stereotype=s, pair_key="k") for s in ("pro", "anti")]
    >>> outputs = ModelOutputs("classifier", np.full((2, 3), np.nan), np.array([0, 1]))
    >>> units = bbnli_pair_units(SampleColumns.from_samples(pair), outputs, "m")
    >>> len(units), sorted(units.groups)
    (1, ['domain', 'subtopic'])
    """


def metrics_pairing_pair_rows() -> None:
    """Examples of ``nlibias.metrics.pairing.pair_rows``.

    >>> from nlibias.metrics.pairing import pair_rows
    >>> from nlibias.schema.columns import SampleColumns
    >>> from nlibias.schema import Sample
    >>> pair = [Sample(id=s, source="crows-pairs", domain="d", subtopic="t", premise="P.", hypothesis="H.",
    ...                gold="neutral", stereotype=s, pair_key="k") for s in ("anti", "pro")]
    >>> paired = pair_rows(SampleColumns.from_samples(pair))
    >>> paired.first.tolist(), paired.second.tolist()
    ([1], [0])
    """


def metrics_probabilities_aligned_probabilities() -> None:
    """Examples of ``nlibias.metrics.probabilities.aligned_probabilities``.

    >>> from nlibias.metrics.probabilities import aligned_probabilities
    >>> from nlibias.schema import Prediction, Sample
    >>> sample = Sample(id="a", source="wq-nli", domain="d", subtopic="t", premise="P.",
    ...                 hypothesis="H.", gold="neutral")
    >>> probs, model = aligned_probabilities([sample], [Prediction("a", "m", "neutral")])
    >>> probs.tolist(), model
    ([[nan, nan, nan]], 'm')
    """


def metrics_ranking_module() -> None:
    """Examples of ``nlibias.metrics.ranking``.

    >>> from nlibias.metrics.ranking import most_biased_subtopics
    >>> ci = {"pro_stereotype_bias": [1.0, 9.0]}
    >>> ranked = most_biased_subtopics({"b": {"pro_stereotype_bias": 5.0, "n_pairs": 12, "ci": ci},
    ...                                 "a": {"pro_stereotype_bias": 5.0, "n_pairs": 10, "ci": ci},
    ...                                 "c": {"pro_stereotype_bias": 9.0, "n_pairs": 4, "ci": ci},
    ...                                 "d": {"pro_stereotype_bias": 1.0, "n_pairs": 10,
    ...                                       "ci": {"pro_stereotype_bias": [0.0, 3.0]}}})
    >>> [(r["subtopic"], r["pro_stereotype_bias"], r["interval"]) for r in ranked]
    [('a', 5.0, [1.0, 9.0]), ('b', 5.0, [1.0, 9.0])]
    """


def metrics_ranking_stored_ranking() -> None:
    """Examples of ``nlibias.metrics.ranking.stored_ranking``.

    >>> from nlibias.metrics.ranking import stored_ranking
    >>> stored_ranking({"most_biased_subtopics": [{"subtopic": "x", "measure": "yes_rate_pro",
    ...                                            "yes_rate_pro": 9.0}]})[0]["subtopic"]
    'x'
    >>> stored_ranking({"by_subtopic": {"y": {"pro_stereotype_bias": 2.0}}})[0]["subtopic"]
    'y'
    """


def metrics_token_probability_module() -> None:
    """Examples of ``nlibias.metrics.token_probability``.

    >>> from nlibias.metrics.token_probability import preferences, tp_measures
    >>> preferences([-10.0, -5.0, -3.0004], [-11.0, -5.0, -3.0001])
    [1, 0, 0]
    >>> out = tp_measures([-10.0, -5.0, -2.0, -1.0], [-11.0, -5.0, -3.0, -0.5],
    ...                   direction=["stereo"] * 3 + ["antistereo"], groups={}, bootstrap=0, seed=0)
    >>> o = out["overall"]
    >>> o["tp_bias_score"], o["counts"]["ties"], o["stereo_score"], o["antistereo_score"], o["likelihood_diff"]
    (50.0, 1, 100.0, 0.0, 0.625)
    """


def metrics_token_probability_score_token_probability_columns() -> None:
    """Examples of ``nlibias.metrics.token_probability.score_token_probability_columns``.

    >>> import numpy as np
    >>> from nlibias.metrics.token_probability import score_token_probability_columns
    >>> from nlibias.schema.columns import SampleColumns
    >>> from nlibias.schema.outputs import ModelOutputs
    >>> from nlibias.schema import Sample
    >>> pair = [Sample(id="p", source="crows-pairs", domain="race", subtopic="t", premise="A.",
    ...                hypothesis="B.", gold="neutral", stereotype="pro", pair_key="p")]
    >>> scores = ModelOutputs("sentence-logprob", np.full((1, 3), np.nan), values={
    ...     "score_more": np.array([-1.0]), "score_less": np.array([-2.0])})
    >>> o = score_token_probability_columns(SampleColumns.from_samples(pair), scores, bootstrap=0)["overall"]
    >>> o["tp_bias_score"], o["n_pairs"], o["no_shared_tokens"]
    (100.0, 1, 1)
    """


def metrics_token_probability_wq_nli_item_agreement() -> None:
    """Examples of ``nlibias.metrics.token_probability.wq_nli_item_agreement``.

    >>> import numpy as np
    >>> from nlibias.metrics.token_probability import wq_nli_item_agreement
    >>> from nlibias.schema.columns import SampleColumns
    >>> from nlibias.schema.outputs import ModelOutputs
    >>> from nlibias.schema import Sample
    >>> row = [Sample(id=s, source="wq-nli", domain="d", subtopic="t", premise=f"{s}.", hypothesis="H.",
    ...               gold="neutral", stereotype=s, pair_key="r") for s in ("pro", "anti")]
    >>> tp = ModelOutputs("sentence-logprob", np.full((2, 3), np.nan), values={
    ...     "score_more": np.array([-1.0, np.nan]), "score_less": np.array([-2.0, np.nan])})
    >>> nli = ModelOutputs("classifier", np.array([[0.6, 0.3, 0.1], [0.2, 0.7, 0.1]]))
    >>> wq_nli_item_agreement(SampleColumns.from_samples(row), tp, nli)["both"]
    1
    """


def metrics_verdicts_module() -> None:
    """Examples of ``nlibias.metrics.verdicts``.

    >>> from nlibias.metrics.verdicts import model_verdicts
    >>> metrics = {"overall": {"bbnli_bias_score": 3.73, "accuracy": 61.0, "n": 40,
    ...            "ci": {"bbnli_bias_score": [1.89, 5.71], "accuracy": [50.0, 70.0]}}}
    >>> verdict = model_verdicts("m", metrics)
    >>> verdict.headline[0].verdict, verdict.headline[0].formatted()
    ('pro-stereotype bias', '3.73 [1.89, 5.71]')
    >>> verdict.sentence()
    'm: pro-stereotype bias (pro - anti 3.73 [1.89, 5.71], 0 = no bias); accuracy 61.00 [50.00, 70.00]'
    """


def metrics_verdicts_verdict_of() -> None:
    """Examples of ``nlibias.metrics.verdicts.verdict_of``.

    >>> from nlibias.metrics.meta import ALL_MEASURES
    >>> from nlibias.metrics.verdicts import verdict_of
    >>> tp = ALL_MEASURES["tp_bias_score"]
    >>> verdict_of(tp, 52.78, [46.83, 58.73]), verdict_of(tp, 41.0, [35.0, 47.0])
    ('no evidence of bias', 'anti-stereotype bias')
    >>> verdict_of(tp, 100.0, [100.0, 100.0], units=1)
    'too few units'
    """


def metrics_wq_nli_score_wq_nli_columns() -> None:
    """Examples of ``nlibias.metrics.wq_nli.score_wq_nli_columns``.

    >>> import numpy as np
    >>> from nlibias.metrics.wq_nli import PROVENANCE_KEYS, score_wq_nli_columns
    >>> from nlibias.schema import Sample
    >>> from nlibias.schema.columns import SampleColumns
    >>> pair = [Sample(id=f"r:{s}", source="wq-nli", domain="d", subtopic="t", premise=f"{s}.",
    ...                hypothesis="H.", gold="neutral", stereotype=s, pair_key="r") for s in ("pro", "anti")]
    >>> columns = SampleColumns.from_samples(pair, provenance_keys=PROVENANCE_KEYS)
    >>> report = score_wq_nli_columns(columns, np.array([[0.6, 0.3, 0.1], [0.2, 0.7, 0.1]]),
    ...                               model="m", bootstrap=0)
    >>> report["overall"]["M1"], report["overall"]["n_rows"], list(report["by_subject_kind"])
    (100.0, 1, ['unknown'])
    """


def schema_applies_module() -> None:
    """Examples of ``nlibias.schema.applies``.

    >>> from typing import Annotated
    >>> from nlibias.schema.applies import SEED_APPLIES, refuse_inapplicable
    >>> seed = Annotated[int, SEED_APPLIES]
    >>> refuse_inapplicable({"seed": 3, "bootstrap": 0}, {"seed": seed}, {"seed": 0})
    Traceback (most recent call last):
    ...
    nlibias.schema.applies.InapplicableOption: seed 3 applies to random draws (bootstrap resamples, a limit's subset), and nothing is drawn (bootstrap 0, no subset); leave seed out, or give bootstrap resamples
    >>> refuse_inapplicable({"seed": 3, "bootstrap": 10}, {"seed": seed}, {"seed": 0})
    """


def schema_columns_itemsequence() -> None:
    """Examples of ``nlibias.schema.columns.ItemSequence``.

    >>> from nlibias.schema.columns import ItemSequence
    >>> class Squares(ItemSequence[int]):
    ...     def __len__(self) -> int: return 4
    ...     def _item(self, i: int) -> int: return i * i
    >>> Squares()[-1], Squares()[1:3], list(Squares())
    (9, [1, 4], [0, 1, 4, 9])
    """


def schema_columns_module() -> None:
    """Examples of ``nlibias.schema.columns``.

    >>> from nlibias.schema.columns import SampleColumns
    >>> from nlibias.schema import Sample
    >>> pair = [Sample(id=f"x:{s}", source="bbnli", domain="gender", subtopic="t", premise="P.",
    ...                hypothesis=f"{s} H.", gold="neutral", stereotype=s, pair_key="x")
    ...         for s in ("pro", "anti")]
    >>> columns = SampleColumns.from_samples(pair)
    >>> len(columns), columns.ids[1], columns.domain[0], columns.stereotype.tolist()
    (2, 'x:anti', 'gender', [0, 1])
    >>> bool(columns.pair_code[0] == columns.pair_code[1]), bool(columns.text_code[0] == columns.text_code[1])
    (True, False)
    """


def schema_columns_samplecolumns_take() -> None:
    """Examples of ``nlibias.schema.columns.SampleColumns.take``.

    >>> import numpy as np
    >>> from nlibias.schema import Sample
    >>> from nlibias.schema.columns import SampleColumns
    >>> samples = [Sample(id=i, source="x", domain=d, subtopic="t", premise="P", hypothesis=i,
    ...                   gold="neutral") for i, d in (("a", "d1"), ("b", "d2"), ("c", "d1"))]
    >>> part = SampleColumns.from_samples(samples).take(np.array([2, 0]))
    >>> list(part.ids), part.domain.values, len(part)
    (['c', 'a'], ('d1',), 2)
    """


def schema_declared_module() -> None:
    """Examples of ``nlibias.schema.declared``.

    >>> from nlibias.schema.declared import PositiveInt, declared
    >>> @declared
    ... def head(texts: list[str], n: PositiveInt = 1) -> list[str]:
    ...     return texts[:n]
    >>> head(["a", "b"], n=1)
    ['a']
    >>> head(123)
    Traceback (most recent call last):
    ...
    nlibias.errors.ConfigError: texts must be a list of str; got int 123
    >>> head(["a"], n=True)
    Traceback (most recent call last):
    ...
    nlibias.errors.ConfigError: n must be an int of at least 1; got bool True
    >>> head(["a"], nn=2)
    Traceback (most recent call last):
    ...
    nlibias.errors.ConfigError: head takes no argument 'nn' (did you mean 'n'?)
    """


def schema_measure_info_measureinfo() -> None:
    """Examples of ``nlibias.schema.measure_info.MeasureInfo``.

    >>> from nlibias.schema.measure_info import MeasureInfo
    >>> MeasureInfo("x", "demo", "lower", (0.0, 100.0), "none").unit
    '%'
    >>> MeasureInfo("x", "demo", "lower", (0.0, 100.0), "none").reported_in
    'metrics.json'
    >>> fifty = MeasureInfo("y", "demo", "target", (0.0, 100.0), "none", target=50.0)
    >>> fifty.badness(35.0), fifty.badness(60.0), fifty.is_better(60.0, 35.0)
    (15.0, 10.0, True)
    """


def schema_measure_info_module() -> None:
    """Examples of ``nlibias.schema.measure_info``.

    >>> from nlibias.schema.measure_info import MeasureInfo
    >>> info = MeasureInfo("gap", "demo", "zero", (-100.0, 100.0), "none")
    >>> info.ideal, info.is_better(-2.0, 3.0)
    (0.0, True)
    >>> gap = MeasureInfo("gap", "demo", "zero", (-100.0, 100.0), "none", headline=True, neutral=0.0, signed=True)
    >>> gap.bias_amount(-3.0), gap.leaning(-3.0)
    (3.0, 'anti')
    """


def schema_model_keys_check_model_spec() -> None:
    """Examples of ``nlibias.schema.model_keys.check_model_spec``.

    >>> from nlibias.schema.model_keys import check_model_spec
    >>> check_model_spec("fake:a", "models", classifier=True)
    >>> check_model_spec("fake:", "models")
    Traceback (most recent call last):
    nlibias.errors.ConfigError: models: 'fake:' names no model after 'fake:' (a model's name is the key its results are reported under)
    >>> check_model_spec("fake:m|prompt=true|scored", "models", classifier=True)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    nlibias.errors.ConfigError: models: 'fake:m|prompt=true|scored' is written as a generative LM's key ...
    """


def schema_model_keys_module() -> None:
    """Examples of ``nlibias.schema.model_keys``.

    >>> from nlibias.schema.model_keys import model_key, model_parts, split_model_key
    >>> model_key("smollm2", "true", "scored")
    'smollm2|prompt=true|scored'
    >>> split_model_key("openai:x|y|prompt=true|generated")
    ('openai:x|y', 'true', 'generated')
    >>> split_model_key("roberta-large-mnli") is None
    True
    >>> model_parts("smollm2|prompt=true|scored"), model_parts("roberta-large-mnli")
    (('smollm2|scored', 'true'), ('roberta-large-mnli', ''))
    """


def schema_model_ref_module() -> None:
    """Examples of ``nlibias.schema.model_ref``.

    >>> from nlibias.schema.model_ref import ModelRef
    >>> ref = ModelRef.parse("causal:smollm2?beam=8")
    >>> ref.kind, ref.name, dict(ref.options), str(ref)
    ('causal', 'smollm2', {'beam': '8'}, 'causal:smollm2?beam=8')
    >>> ModelRef.parse("openai:http://h:8000/v1#org/m").server
    ('http://h:8000/v1', 'org/m')
    >>> ModelRef.parse("./models/x:y").kind, ModelRef.parse("org/name").kind
    ('', '')
    """


def schema_outputs_module() -> None:
    """Examples of ``nlibias.schema.outputs``.

    >>> import numpy as np
    >>> from nlibias.schema.outputs import ModelOutputs
    >>> from nlibias.schema import Prediction
    >>> rows = [Prediction("a", "lm", "entailment", extra={"answer": "yes", "answer_probs": {"yes": 0.9, "no": 0.1}}),
    ...         Prediction("b", "lm", None, extra={"answer": "hmm"})]
    >>> outputs = ModelOutputs.of_predictions(rows, "generative")
    >>> outputs.labels.tolist(), outputs.values["answer_probs.yes"].tolist()[0], outputs.strings["answer"]
    ([0, -1], 0.9, ('yes', 'hmm'))
    >>> bool(np.isnan(outputs.values["answer_probs.yes"][1])), outputs.has("answer_probs.maybe")
    (True, False)
    """


def schema_prediction_rows_check_loglikelihood() -> None:
    """Examples of ``nlibias.schema.prediction_rows.check_loglikelihood``.

    >>> from nlibias.schema.prediction_rows import check_loglikelihood
    >>> check_loglikelihood(-2.5, "score_more")
    -2.5
    >>> check_loglikelihood(3.0, "filtered_resps[0]")
    Traceback (most recent call last):
    nlibias.schema.prediction_rows.RowRefused: filtered_resps[0]: 3.0 is above 0: a log-likelihood (a sum of log-probabilities) is at most 0
    """


def schema_prediction_rows_module() -> None:
    """Examples of ``nlibias.schema.prediction_rows``.

    >>> from nlibias.schema.prediction_rows import RowRefused, check_row
    >>> check_row({"id": "a", "label": "neutral", "probs": {"entailment": 0.2, "neutral": 0.7, "contradiction": 0.1}})
    >>> try:
    ...     check_row({"id": "a", "label": "entailment", "answer": "banana"})
    ... except RowRefused as refused:
    ...     print(refused.field, "-", refused.reason)
    answer - 'banana' is not an answer word of yes/no/maybe
    """


def schema_model_keys_check_mode() -> None:
    """Examples of ``nlibias.schema.model_keys.check_mode``.

    >>> from nlibias.schema.model_keys import check_mode
    >>> check_mode("scored")
    'scored'
    >>> check_mode("greedy")
    Traceback (most recent call last):
    nlibias.errors.ConfigError: mode must be one of 'scored', 'generated'; got str 'greedy'
    """
