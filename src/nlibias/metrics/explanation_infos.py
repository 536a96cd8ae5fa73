"""The rates of generated explanations, reported in ``explanations.json``.

>>> EXPLANATION_MEASURES["flip_rate"].direction, EXPLANATION_MEASURES["flip_rate"].reported_in
('lower', 'explanations.json')
"""

from __future__ import annotations

from nlibias.schema.measure_info import EXPLANATIONS_FILE, Direction, MeasureInfo

BBNLI_NEXT_CITATION = (
    "Keeping Up with the Language Models: Systematic Benchmark Extension for Bias Auditing (BBNLI-next)"
)


def _explained(name: str, description: str, direction: Direction) -> MeasureInfo:
    """One rate of ``explanations.json`` (percent, BBNLI-next's appendix A.7)."""
    citation = BBNLI_NEXT_CITATION + ", section 5 and appendix A.7"
    return MeasureInfo(name, description, direction, (0.0, 100.0), citation, reported_in=EXPLANATIONS_FILE)


#: The rates of ``nlibias explain`` per model, judge and slice.
EXPLANATION_MEASURES: dict[str, MeasureInfo] = {
    info.name: info
    for info in [
        _explained(
            "balanced_rate", "Explained bias-sample answers whose explanation is labelled balanced.", "higher"
        ),
        _explained(
            "biased_rate",
            "Explained bias-sample answers whose explanation endorses the sample's generalisation "
            "(pro- or anti-stereotype).",
            "lower",
        ),
        _explained(
            "biased_pro_rate",
            "Explained pro-stereotype answers whose explanation endorses the stereotype.",
            "lower",
        ),
        _explained(
            "biased_anti_rate",
            "Explained anti-stereotype answers whose explanation endorses the anti-stereotype.",
            "lower",
        ),
        _explained(
            "invalid_rate",
            "Explained bias-sample answers whose explanation is invalid (inconsistent with the short "
            "answer, or grounded share below the threshold).",
            "lower",
        ),
        _explained(
            "inconsistent_rate",
            "Explained bias-sample answers whose explanation rejects a yes or endorses a no.",
            "lower",
        ),
        _explained(
            "mean_grounded",
            "Mean grounded share (sentences the premise entails or that restate the hypothesis) "
            "of the explanations, in percent.",
            "higher",
        ),
        _explained(
            "flip_rate",
            "Pro/anti pairs, both explained, whose two explanations get different stances towards "
            "their hypotheses (the A.7 observation, measured).",
            "lower",
        ),
    ]
}
