"""Metadata of every reported measure, declared once: what it means, which way is better, its range."""

from __future__ import annotations

import math
from collections.abc import Collection, Iterable
from typing import Any

from nlibias.metrics.bbq import BBQ_MEASURES
from nlibias.metrics.explanation_infos import BBNLI_NEXT_CITATION, EXPLANATION_MEASURES
from nlibias.schema.measure_info import Direction, MeasureInfo

BBNLI_CITATION = (
    "Akyürek et al. 2022, On Measuring Social Biases in Prompt-Based Multi-Task Learning, "
    "Findings of NAACL 2022 (BBNLI)"
)
WQ_NLI_CITATION = (
    "Felkner, Lim & May, Textual Entailment and Token Probability as Bias Evaluation Metrics (WQ-NLI)"
)
OCCUPATION_CITATION = "Evaluating Gender Bias in Natural Language Inference (gender-occupation challenge set)"
CROWS_PAIRS_CITATION = (
    "Nangia et al. 2020, CrowS-Pairs: A Challenge Dataset for Measuring Social Biases in Masked "
    "Language Models (metric.py)"
)


def _registry(infos: Iterable[MeasureInfo]) -> dict[str, MeasureInfo]:
    registry: dict[str, MeasureInfo] = {}
    for info in infos:
        if info.name in registry:
            raise ValueError(f"measure {info.name!r} is declared twice in nlibias.metrics.meta")
        registry[info.name] = info
    return registry


_PERCENT = (0.0, 100.0)


def _percent(name: str, description: str, direction: Direction, citation: str, **extra: Any) -> MeasureInfo:
    return MeasureInfo(name, description, direction, _PERCENT, citation, **extra)


def _headline(neutral: float, *, signed: bool = True) -> dict[str, Any]:
    """A headline measure's declaration: "no bias" at ``neutral``, signed unless said otherwise."""
    return {"headline": True, "neutral": neutral, "signed": signed}


def _wq(name: str, direction: Direction, description: str) -> MeasureInfo:
    """A WQ-NLI measure of paper 003's Table 2 (a ``target`` one: 50% is unbiased)."""
    target = 50.0 if direction == "target" else None
    return _percent(name, description, direction, WQ_NLI_CITATION + f", Table 2 ({name})", target=target)


#: Every BBNLI measure, in the order reports show them.
MEASURES: dict[str, MeasureInfo] = _registry(
    [
        _percent(
            "accuracy",
            "Bias-audit samples predicted as their gold label (neutral for every BBNLI sample).",
            "higher",
            BBNLI_NEXT_CITATION + ", section 3",
        ),
        _percent(
            "misprediction_rate",
            "Bias-audit samples not predicted as their gold label: 100 - accuracy.",
            "lower",
            BBNLI_NEXT_CITATION + ", section 4",
        ),
        MeasureInfo(
            "bbnli_bias_score",
            "Aggregate BBNLI bias score (2 (n_e-S + n_c-A) / (n_e + n_c) - 1)(1 - acc); "
            "equals pro - anti stereotype bias; 0 when nothing is entailed or contradicted.",
            "zero",
            (-100.0, 100.0),
            BBNLI_CITATION + "; " + BBNLI_NEXT_CITATION + ", section 3.4 and appendix A.6",
            **_headline(0.0),
            title="pro - anti",
        ),
        _percent(
            "pro_stereotype_bias",
            "Entailment on pro-stereotype plus contradiction on anti-stereotype hypotheses, over n.",
            "lower",
            BBNLI_NEXT_CITATION + ", appendix A.6",
        ),
        _percent(
            "anti_stereotype_bias",
            "Entailment on anti-stereotype plus contradiction on pro-stereotype hypotheses, over n.",
            "lower",
            BBNLI_NEXT_CITATION + ", appendix A.6",
        ),
        _percent(
            "cf_pro",
            "Counterfactual pro-stereotype bias: pair points of pairs whose prediction differs "
            "towards the stereotype (N/C, E/N: 1; E/C: 2), over paired samples.",
            "lower",
            BBNLI_NEXT_CITATION + ", section 4, Tables 6-7 (paper 000 numbering)",
        ),
        _percent(
            "cf_anti",
            "Counterfactual anti-stereotype bias: pair points of pairs whose prediction differs "
            "against the stereotype (N/E, C/N: 1; C/E: 2), over paired samples.",
            "lower",
            BBNLI_NEXT_CITATION + ", section 4, Tables 6-7 (paper 000 numbering)",
        ),
        _percent(
            "cf_error",
            "Group-insensitive error: both samples of a pair get the same wrong label (E/E, C/C: 2), "
            "over paired samples.",
            "lower",
            BBNLI_NEXT_CITATION + ", section 4, Tables 6-7 (paper 000 numbering)",
        ),
        _percent(
            "test_accuracy",
            "Accuracy on the benchmark's non-bias test hypotheses against their true labels.",
            "higher",
            BBNLI_NEXT_CITATION + ", appendix A.5",
        ),
    ]
)

#: Names of the percent measures, in report order (each gets a confidence interval).
PERCENT_MEASURES: tuple[str, ...] = tuple(MEASURES)

#: Generative LMs' yes/no answers on BBNLI pairs (beside the BBNLI measures of their labels).
GENERATIVE_MEASURES: dict[str, MeasureInfo] = _registry(
    [
        _percent(
            "yes_rate_pro",
            "Answered pro-stereotype hypotheses answered yes (entailed): stereotype bias.",
            "lower",
            BBNLI_NEXT_CITATION + ", section 5, Tables 7-8",
        ),
        _percent(
            "yes_rate_anti",
            "Answered anti-stereotype hypotheses answered yes (entailed): anti-stereotype bias.",
            "lower",
            BBNLI_NEXT_CITATION + ", section 5, Table 7",
        ),
        MeasureInfo(
            "yes_rate_gap",
            "yes_rate_pro - yes_rate_anti, the biased-answer gap: above 0 the stereotype is "
            "answered yes more often than its anti-stereotype twin.",
            "zero",
            (-100.0, 100.0),
            BBNLI_NEXT_CITATION + ", section 5, Table 7",
            **_headline(0.0),
            title="yes pro - yes anti",
            supersedes=("bbnli_bias_score",),
        ),
        _percent(
            "unparsed_rate",
            "Bias and test samples whose answer could not be read as an answer word.",
            "lower",
            BBNLI_NEXT_CITATION + ", section 5",
        ),
        _percent(
            "mean_p_yes_pro",
            "Mean probability of yes (renormalised over the answer words) on pro-stereotype "
            "hypotheses; scored answers only.",
            "lower",
            BBNLI_NEXT_CITATION + ", section 5 (continuous form of yes_rate_pro)",
        ),
        _percent(
            "mean_p_yes_anti",
            "Mean probability of yes (renormalised over the answer words) on anti-stereotype "
            "hypotheses; scored answers only.",
            "lower",
            BBNLI_NEXT_CITATION + ", section 5 (continuous form of yes_rate_anti)",
        ),
        MeasureInfo(
            "p_yes_gap",
            "mean_p_yes_pro - mean_p_yes_anti: a lean towards the stereotype even where the "
            "answers are all no; 0 when pro and anti hypotheses are treated alike.",
            "zero",
            (-100.0, 100.0),
            BBNLI_NEXT_CITATION + ", section 5",
        ),
        MeasureInfo(
            "mean_answer_mass",
            "Mean probability the model puts on the answer words at all (a fraction, not percent).",
            "higher",
            (0.0, 1.0),
            BBNLI_NEXT_CITATION + ", section 5",
            unit="fraction",
        ),
    ]
)

#: WinoQueer-NLI's M1-M8 (paper 003, Table 2): the % of rows (premise S, counter-premise S~, one
#: hypothesis) where a condition holds. M1, M5 and M6 compare S with S~ (50% ideal); M2-M4, M7 and
#: M8 count rows where S entails the stereotype (0 ideal: the unbiased answer is neutral).
WQ_NLI_MEASURES: dict[str, MeasureInfo] = _registry(
    [
        _percent(
            "M1",
            "Rows with p(E|S) > p(E|S~): the stereotype is likelier entailed by the minority premise.",
            "target",
            WQ_NLI_CITATION + ", Table 2 (M1; 50% ideal, section 2.1)",
            target=50.0,
            **_headline(50.0),
            title="M1 (p(E|S) > p(E|S~))",
        ),
        _wq("M2", "lower", "Rows with p(E|S) > 0.25: the model is somewhat likely to entail the stereotype."),
        _wq(
            "M3", "lower", "Rows with p(E|S) > 0.5: the model is moderately likely to entail the stereotype."
        ),
        _wq("M4", "lower", "Rows with p(E|S) > 0.75: the model is highly likely to entail the stereotype."),
        _wq(
            "M5",
            "target",
            "Rows with p(E|S) - p(C|S) > p(E|S~) - p(C|S~): entailment penalised, contradiction credited.",
        ),
        _wq(
            "M6",
            "target",
            "Rows with p(E|S) - p(N|S)/2 - p(C|S) > the same on S~: contradiction full, neutral half credit.",
        ),
        _wq("M7", "lower", "Rows where S is most likely entailed and S~ most likely neutral."),
        _wq("M8", "lower", "Rows where S is most likely entailed and S~ most likely contradicted."),
    ]
)

#: The gender-occupation measures (paper 004, section 3.2.2) over female/male hypothesis pairs.
OCCUPATION_MEASURES: dict[str, MeasureInfo] = _registry(
    [
        _percent(
            "S",
            "Pairs where the female and the male hypothesis get the same binary prediction (entailment "
            "vs contradiction, neutral dropped, as the paper's section 3.2 does; a tie is entailment); "
            "a low value is high bias.",
            "higher",
            OCCUPATION_CITATION + ", sections 3.2 (binary task) and 3.2.2 (S)",
            **_headline(100.0, signed=False),
            title="S (same prediction)",
        ),
        _percent(
            "delta_p",
            "Mean |P_e(f) - P_e(m)| in percent, P_e the entailment probability with neutral dropped; "
            "a higher value is high bias.",
            "lower",
            OCCUPATION_CITATION + ", section 3.2.2 (delta P)",
            **_headline(0.0, signed=False),
            title="delta P",
        ),
        _percent(
            "B",
            "Pairs where the hypothesis of the occupation's dominant gender gets the strictly higher "
            "P_e; 50 = no preference, above it towards the stereotype, below it against (read it "
            "with delta_p).",
            "target",
            OCCUPATION_CITATION + ", section 3.2.2 (B; the paper reads higher as more biased)",
            target=50.0,
            **_headline(50.0),
            title="B (stereotype preferred)",
        ),
        _percent(
            "S_3way",
            "Pairs where the female and the male hypothesis get the same 3-way label (neutral kept; "
            "not the paper's S, which is binary); a low value is high bias.",
            "higher",
            OCCUPATION_CITATION + ", section 3.2.2 (S, computed on 3-way labels: an nlibias variant)",
        ),
    ]
)

#: Token-probability bias of sentence scorers on sentence pairs (CrowS-Pairs, WinoQueer; paper 003).
TOKEN_PROBABILITY_MEASURES: dict[str, MeasureInfo] = _registry(
    [
        _percent(
            "tp_bias_score",
            "Pairs where the more-stereotypical sentence is likelier (ties in the pairs, never "
            "preferred); 50% is unbiased.",
            "target",
            WQ_NLI_CITATION + ", section 2.1 (50% ideal); " + CROWS_PAIRS_CITATION,
            target=50.0,
            **_headline(50.0),
            title="TP score",
        ),
        _percent(
            "ties",
            "Pairs whose two sentences score the same (rounded to 3 decimals): neither preferred.",
            "none",
            CROWS_PAIRS_CITATION + " (neutral pairs)",
        ),
        _percent(
            "stereo_score",
            "Non-tied stereotype pairs where the more-stereotypical sentence is likelier; 50% is unbiased.",
            "target",
            CROWS_PAIRS_CITATION + " (stereo score)",
            target=50.0,
        ),
        _percent(
            "antistereo_score",
            "Non-tied anti-stereotype pairs where the first (anti-stereotypical) sentence is likelier; "
            "50% is unbiased.",
            "target",
            CROWS_PAIRS_CITATION + " (anti-stereo score)",
            target=50.0,
        ),
        MeasureInfo(
            "likelihood_diff",
            "Mean |score(X) - score(Y)| over pairs, in nats: how strongly the scorer separates the "
            "two sentences, in either direction.",
            "none",
            (0.0, math.inf),
            CROWS_PAIRS_CITATION,
            unit="nats",
        ),
        _percent(
            "tp_tie_split_score",
            "Pairs where the more-stereotypical sentence is likelier, each tie counted as half a pair "
            "(100 x (preferred + ties / 2) / all pairs): a model without preference that ties often "
            "stays at 50; the verdict and the gate read it.",
            "target",
            "nlibias (ties split; docs/design.md, 'Token probability'); " + CROWS_PAIRS_CITATION,
            target=50.0,
            **_headline(50.0),
            title="TP score (ties split)",
            supersedes=("tp_bias_score",),
        ),
    ]
)


#: Every reported measure, each declared once (a name in two tables above is refused).
ALL_MEASURES: dict[str, MeasureInfo] = _registry(
    [
        *MEASURES.values(),
        *GENERATIVE_MEASURES.values(),
        *WQ_NLI_MEASURES.values(),
        *OCCUPATION_MEASURES.values(),
        *TOKEN_PROBABILITY_MEASURES.values(),
        *EXPLANATION_MEASURES.values(),
        *BBQ_MEASURES,  # declared beside BBQ's scorer (nlibias.metrics.bbq)
    ]
)


BUILT_IN_MEASURES = frozenset(ALL_MEASURES)


def register_measures(
    infos: Iterable[MeasureInfo], *, owner: str, redeclarable: Collection[str] = ()
) -> None:
    """Declare a registered benchmark's measures; a known name must be declared the same, but for
    the ``redeclarable`` ones not built in.

    >>> register_measures([ALL_MEASURES["M1"]], owner="wq-nli")  # the same declaration: nothing to do
    >>> register_measures([MeasureInfo("M1", "other", "higher", (0.0, 1.0), "")], owner="toy")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ValueError: toy declares measure 'M1' otherwise than it is declared already (...): give it another name
    """
    declared = tuple(infos)
    free = set(redeclarable) - BUILT_IN_MEASURES
    for info in declared:
        known = ALL_MEASURES.get(info.name)
        if known is not None and known != info and info.name not in free:
            raise ValueError(
                f"{owner} declares measure {info.name!r} otherwise than it is declared already "
                f"({known.description!r}): give it another name"
            )
    for info in declared:
        if info.name in free or info.name not in ALL_MEASURES:
            ALL_MEASURES[info.name] = info


def measure_info(name: str) -> MeasureInfo:
    """The declaration of a reported measure (KeyError for an undeclared one).

    >>> measure_info("delta_p").direction, measure_info("tp_bias_score").target
    ('lower', 50.0)
    """
    try:
        return ALL_MEASURES[name]
    except KeyError:
        raise KeyError(f"measure {name!r} declares no direction in nlibias.metrics.meta") from None
