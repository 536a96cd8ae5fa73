"""Prediction rows: one pydantic record per predictor kind holding every rule of its rows, whatever
route brings them; a route calls :func:`check_row` and turns :class:`RowRefused` into its own error.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Callable, Mapping, Sequence
from typing import Annotated, Any, NamedTuple

import numpy as np
from pydantic import (
    BaseModel,
    ConfigDict,
    Discriminator,
    PlainValidator,
    Tag,
    TypeAdapter,
    ValidationError,
    ValidationInfo,
    model_validator,
)
from pydantic import field_validator as _field_validator
from pydantic_core import PydanticCustomError

from nlibias.errors import DataError
from nlibias.schema import LABELS, Prediction, row_kind
from nlibias.schema.declared import is_int
from nlibias.schema.outputs import ModelOutputs, ProbabilityRows
from nlibias.schema.problems import problems

PROBABILITY_TOLERANCE = 1e-3  # how far probabilities may sum from 1

ANSWER_SETS: dict[str, dict[str, str]] = {
    "yes/no": {"yes": "entailment", "no": "neutral"},
    "yes/no/maybe": {"yes": "entailment", "no": "contradiction", "maybe": "neutral"},
}
"""A generative row's ``answers`` (answer set) → each answer word's label."""

KINDS = ("classifier", "generative", "sentence-logprob")  # a plug-in kind's rows keep the common rules


class RowRefused(Exception):  # not a ValueError: pydantic lets it through unchanged
    """A prediction row broke a rule: ``field`` (dotted, None: the whole row), ``reason`` and ``fix``."""

    def __init__(self, field: str | None, reason: str, fix: str | None = None) -> None:
        super().__init__(f"{field}: {reason}" if field else reason)
        self.field, self.reason, self.fix = field, reason, fix


def _refuse(field: str | None, reason: str, fix: str | None = None) -> PydanticCustomError:
    return PydanticCustomError("nlibias_row", "{reason}", {"field": field, "reason": reason, "fix": fix})


def is_probability(value: Any) -> bool:
    """A finite number in [0, 1] (within :data:`PROBABILITY_TOLERANCE` above); never a bool."""
    if type(value) is float:  # the usual case first
        return 0.0 <= value <= 1.0 + PROBABILITY_TOLERANCE  # False for NaN
    return (
        isinstance(value, int | float)
        and not isinstance(value, bool)
        and math.isfinite(value)
        and 0.0 <= value <= 1.0 + PROBABILITY_TOLERANCE
    )


def check_distribution(values: Mapping[str, Any], field: str, what: str = "probabilities") -> None:
    """Refuse (:class:`RowRefused`) values that are not probabilities summing to 1.

    >>> check_distribution({"yes": 0.4, "no": 0.2}, "answer_probs")
    Traceback (most recent call last):
    nlibias.schema.prediction_rows.RowRefused: answer_probs: probabilities sum to 0.600000, not 1
    """
    for key, value in values.items():
        if not is_probability(value):
            raise RowRefused(f"{field}.{key}", f"{value!r} is not a probability (a finite number in [0, 1])")
    total = float(sum(values.values()))
    if abs(total - 1.0) > PROBABILITY_TOLERANCE:
        raise RowRefused(
            field,
            f"{what} sum to {total:.6f}, not 1",
            fix=f"normalise them (tolerance {PROBABILITY_TOLERANCE})",
        )


LOG_PROBABILITY_SLACK = 1e-4  # float32 rounding of log(1)


def log_probability_problem(value: Any) -> str | None:
    """What is wrong with ``value`` as a (sum of) log-probability, or None.

    >>> log_probability_problem(-0.5), log_probability_problem(np.float32(0.0))
    (None, None)
    >>> log_probability_problem("-0.5"), log_probability_problem(3.0)
    ("'-0.5' is not a finite number: str, not a number", '3.0 is above 0')
    """
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        return f"{value!r} is not a finite number: {type(value).__name__}, not a number"
    number = float(value)
    if not math.isfinite(number):
        return f"{number} is not a finite number"
    if number > LOG_PROBABILITY_SLACK:
        return f"{number} is above 0"
    return None


def check_loglikelihood(value: Any, field: str) -> float:
    """``value`` as a log-likelihood (:func:`log_probability_problem`), else :class:`RowRefused`."""
    problem = log_probability_problem(value)
    if problem is not None:
        raise RowRefused(field, f"{problem}: a log-likelihood (a sum of log-probabilities) is at most 0")
    return float(value)


def _nested(check: Any, *args: Any) -> None:
    """Run a :class:`RowRefused` check inside a validator, as a pydantic error."""
    try:
        check(*args)
    except RowRefused as refused:
        raise _refuse(refused.field, refused.reason, refused.fix) from None


def _rule(
    allowed: Callable[[Any], bool], reason: str, fix: str | None = None, *, nullable: bool = False
) -> PlainValidator:
    """A field's rule, declared on its type: a value ``allowed`` rejects is refused with ``reason``
    (``{value!r}``: the value); ``nullable``: None passes."""

    def check(value: Any, info: ValidationInfo) -> Any:
        if not (nullable and value is None) and not allowed(value):
            raise _refuse(info.field_name, reason.format(value=value), fix)
        return value

    return PlainValidator(check)


def _is_text(value: Any) -> bool:
    return isinstance(value, str) and bool(value)


_LABEL_FIX = f"use one of {', '.join(LABELS)}"
_TOKENS = _rule(
    lambda v: is_int(v) and v >= 0, "{value!r} is not a number of tokens (a whole number, 0 or more)"
)


class CommonRow(BaseModel):
    """The rules every prediction row keeps (a plug-in kind's rows keep only these)."""

    model_config = ConfigDict(extra="ignore", frozen=True)  # other fields: the backend's, free

    id: Annotated[Any, _rule(_is_text, "missing or not a string")]
    label: Annotated[Any, _rule(LABELS.__contains__, "unknown label {value!r}", _LABEL_FIX, nullable=True)]
    model: Annotated[Any, _rule(_is_text, "must be a non-empty string")] = None  # checked where given
    probs: Any = None

    @_field_validator("probs", mode="plain")
    @classmethod
    def _probs(cls, value: Any) -> Any:
        if value is None:
            return None
        if not isinstance(value, Mapping) or set(value) != set(LABELS):
            raise _refuse("probs", "expected an object with exactly entailment, neutral, contradiction")
        _nested(check_distribution, value, "probs")
        return value

    @model_validator(mode="after")
    def _label_is_argmax(self) -> CommonRow:
        """The label is the most probable of ``probs``."""
        if self.probs is not None and self.label is not None:
            values = [self.probs[name] for name in LABELS]
            if float(self.probs[self.label]) < max(values) - PROBABILITY_TOLERANCE:
                best = LABELS[values.index(max(values))]
                raise _refuse(
                    "label",
                    f"label {self.label} contradicts probs, whose most probable label is {best}",
                    fix="write the argmax of probs as the label, or leave probs out",
                )
        return self


class ClassifierRow(CommonRow):
    """An NLI classifier's row (a null label beside probabilities is ambiguous, so refused)."""

    @model_validator(mode="after")
    def _no_null_label_beside_probs(self) -> ClassifierRow:
        if self.label is None and self.probs is not None:
            raise _refuse(
                "label",
                "label is null beside probs: nlibias does not guess whether that is no answer or the "
                "most probable label",
                fix="write the label (the argmax of probs), or leave probs out for a row with no answer",
            )
        return self


class GenerativeRow(CommonRow):
    """A generative LM's row: the answer word (null: none parsed) and its label."""

    answer: Annotated[
        Any,
        _rule(
            lambda v: isinstance(v, str),
            "{value!r} is not an answer word (a string, or null for no answer)",
            nullable=True,
        ),
    ] = None
    answers: Annotated[
        Any,
        _rule(
            lambda v: isinstance(v, str) and v in ANSWER_SETS,
            "{value!r} is not an answer set",
            f"use one of {', '.join(ANSWER_SETS)}",
            nullable=True,
        ),
    ] = None
    answer_probs: Any = None
    answer_mass: Annotated[
        Any, _rule(is_probability, "{value!r} is not a probability (a number in [0, 1])", nullable=True)
    ] = None

    @_field_validator("answer_probs", mode="plain")
    @classmethod
    def _answer_probs(cls, value: Any) -> Any:
        if value is None:
            return None
        if not isinstance(value, Mapping) or not value:
            raise _refuse("answer_probs", "expected an object of answer word → probability")
        _nested(check_distribution, value, "answer_probs", "the answer probabilities")
        return value

    @model_validator(mode="after")
    def _answer_and_label(self) -> GenerativeRow:
        words = ANSWER_SETS.get(self.answers) if self.answers is not None else None
        known = words or ANSWER_SETS["yes/no/maybe"]
        answer_set = self.answers or "yes/no/maybe"
        unknown = [w for w in (self.answer_probs or {}) if w not in known]
        if unknown:
            raise _refuse("answer_probs", f"{unknown[0]!r} is not an answer word of {answer_set}")
        if self.answer is None:
            if self.label is not None and "answer" in self.model_fields_set:
                raise _refuse("label", f"label {self.label} beside no answer (answer is null)",
                              fix="write null as the label of an answer that could not be parsed")  # fmt: skip
            return self
        if self.answer not in known:
            raise _refuse("answer", f"{self.answer!r} is not an answer word of {answer_set}")
        allowed = (
            {words[self.answer]}
            if words
            else {m[self.answer] for m in ANSWER_SETS.values() if self.answer in m}
        )
        if self.label is None or self.label not in allowed:
            expected = " or ".join(sorted(allowed))
            given = "null" if self.label is None else self.label
            raise _refuse(
                "label",
                f"label {given} contradicts answer {self.answer!r}, which stands for {expected}",
                fix=f"write {expected} as the label (or the answer the model gave)",
            )
        return self


SCORE_FIELDS = ("score_more", "score_less", "tokens_more", "tokens_less")
"""A sentence scorer's row's scores: both sentences' log-likelihoods and their token counts."""


class SentenceLogprobRow(CommonRow):
    """A sentence scorer's row: the log-likelihoods of a pair's two sentences and their token counts
    (a sum over no tokens is 0), or ``no_pair: true`` and no scores (a sample without a pair)."""

    score_more: Any = None
    score_less: Any = None
    tokens_more: Annotated[Any, _TOKENS] = 0
    tokens_less: Annotated[Any, _TOKENS] = 0
    no_pair: Annotated[
        Any, _rule(lambda v: isinstance(v, bool), "{value!r} is not true or false", nullable=True)
    ] = None

    @_field_validator("score_more", "score_less", mode="plain")
    @classmethod
    def _score(cls, value: Any, info: Any) -> Any:
        _nested(check_loglikelihood, value, info.field_name)  # checked only when the row has it
        return value

    @model_validator(mode="after")
    def _scores_fit(self) -> SentenceLogprobRow:
        given = [name for name in SCORE_FIELDS if name in self.model_fields_set]
        if self.no_pair and given:
            raise _refuse(
                "no_pair",
                f"no_pair is true beside {', '.join(given)}: nlibias does not guess whether the sample "
                "has no pair or these are its scores",
                fix="leave the scores out of a sample without a pair, or drop no_pair from a scored one",
            )
        for side in ("more", "less"):
            score, tokens = getattr(self, f"score_{side}"), getattr(self, f"tokens_{side}")
            counted = f"tokens_{side}" in self.model_fields_set  # a missing count: the reader's error
            if counted and tokens == 0 and score is not None and abs(float(score)) > LOG_PROBABILITY_SLACK:
                raise _refuse(
                    f"tokens_{side}",
                    f"score_{side} {score} is a sum over 0 tokens, which is 0",
                    fix=f"write the number of tokens score_{side} sums (or 0 as the score of none)",
                )
        return self


def _tag(raw: Any) -> str | None:
    if not isinstance(raw, Mapping):
        return None
    recorded = raw.get("kind")
    if recorded is not None and recorded not in KINDS:
        return "other"  # a plug-in kind: the common rules
    return row_kind(raw)


PredictionRow = Annotated[
    Annotated[ClassifierRow, Tag("classifier")]
    | Annotated[GenerativeRow, Tag("generative")]
    | Annotated[SentenceLogprobRow, Tag("sentence-logprob")]
    | Annotated[CommonRow, Tag("other")],
    Discriminator(_tag),
]
"""A prediction row of any kind, told apart by :func:`row_kind`."""

_ROWS: TypeAdapter[Any] = TypeAdapter(PredictionRow)

_MISSING_FIX = {"label": f"{_LABEL_FIX} (or null for no answer)"}


def check_row(raw: Any) -> None:
    """Refuse (:class:`RowRefused`) a row that breaks a rule of its kind."""
    try:
        _ROWS.validate_python(raw)
    except ValidationError as error:
        raise _refused(error) from None


def _refused(error: ValidationError) -> RowRefused:
    first = problems(error, drop=1)[0]  # after the kind's tag
    if first.kind == "missing" and first.field:
        reason = "missing or not a string" if first.field == "id" else "missing"
        return RowRefused(first.field, reason, _MISSING_FIX.get(first.field))
    if first.field is None and first.kind != "nlibias_row":
        return RowRefused(None, "expected a JSON object with id and label")
    return RowRefused(first.field, first.reason, first.fix)


def check_prediction(row: Any) -> None:
    """Refuse (:class:`RowRefused`) a predictor's row that is not a
    :class:`~nlibias.schema.Prediction` keeping its kind's rules (:func:`check_row`).

    >>> check_prediction(Prediction("a", "m", "neutral", (0.5, 0.5)))
    Traceback (most recent call last):
    nlibias.schema.prediction_rows.RowRefused: probs: (0.5, 0.5) is not 3 probabilities (entailment, neutral, contradiction)
    """
    if not isinstance(row, Prediction):
        raise RowRefused(None, f"a {type(row).__name__}, not a Prediction", _PREDICTION_FIX)
    probs = row.probs
    if probs is not None and (not hasattr(probs, "__len__") or len(probs) != len(LABELS)):
        reason = f"{probs!r} is not 3 probabilities ({', '.join(LABELS)})"
        raise RowRefused("probs", reason, "give all three, or None for a label alone")
    if not isinstance(row.extra, Mapping):
        raise RowRefused("extra", f"{row.extra!r} is not a mapping", "give the backend's fields as a dict")
    check_row(row.to_dict())


_PREDICTION_FIX = "build each row with nlibias.Prediction(sample_id, model, label, probs)"


def check_predictor_rows(rows: Sequence[Any]) -> None:
    """Refuse the first of a predictor's ``rows`` that breaks a rule (:func:`check_prediction`),
    naming the predictor (its model name), the sample and the field."""
    names = [row.model for row in rows if isinstance(row, Prediction)][:1]
    for i, row in enumerate(rows):
        try:
            check_prediction(row)
        except RowRefused as refused:
            name = row.model if isinstance(row, Prediction) else names[0] if names else None
            sample = row.sample_id if isinstance(row, Prediction) else None
            who = f"predictor {name!r}, " if name is not None else "a predictor's "
            where = f"sample {sample!r}" if sample is not None else f"row {i + 1}"
            field = f"field {refused.field}: " if refused.field else ""
            raise DataError(
                f"{who}{where}: {field}{refused.reason}",
                sample=sample,
                model=name,
                field=refused.field,
                fix=refused.fix,
            ) from None


class _Fault(NamedTuple):
    """What is wrong with a predictor's run, after ``predictor NAME``."""

    reason: str
    fix: str | None = None
    sample: str | None = None
    field: str | None = None


def check_predictor_run(name: Any, kind: str, run: Any, ids: Sequence[str]) -> None:
    """Refuse what a predictor object's ``predict()`` returned unless it is a
    :class:`~nlibias.runtime.contract.PredictorRun` of valid rows, one per sample in order under the
    predictor's name, with outputs that hold the rows' probabilities (a classifier's rows checked
    once per distinct vector)."""
    fault = _run_fault(name, kind, run, ids)
    if fault is not None:
        raise DataError(
            f"predictor {name!r}{fault.reason}",
            sample=fault.sample,
            model=name,
            field=fault.field,
            fix=fault.fix,
        )


def _run_fault(name: Any, kind: str, run: Any, ids: Sequence[str]) -> _Fault | None:
    if not hasattr(run, "predictions") or not isinstance(getattr(run, "outputs", None), ModelOutputs):
        return _Fault(
            f": predict() returned {type(run).__name__}, not a PredictorRun",
            "return PredictorRun.of_probabilities(...) or PredictorRun.of_predictions(...)",
        )
    rows, outputs = run.predictions, run.outputs
    if len(rows) != len(ids) or len(outputs) != len(ids):
        return _Fault(
            f" returned {len(rows)} rows and {len(outputs)} outputs for {len(ids)} samples; a predictor "
            "answers every sample, in order"
        )
    if isinstance(rows, ProbabilityRows):
        checked: Sequence[int] = _distinct_rows(rows)
        row_ids: Sequence[str | None] = rows.ids
        models = [rows.model]
        row_probs = rows.distinct_probs[rows.slot] if len(rows.ids) else np.zeros((0, 3))
    else:
        checked = range(len(rows))
        row_ids = [row.sample_id if isinstance(row, Prediction) else None for row in rows]
        models = [row.model for row in rows if isinstance(row, Prediction)]
        row_probs = np.array([_probs_of(row) for row in rows], dtype=np.float64).reshape(len(rows), 3)
    for i, (row_id, sample_id) in enumerate(zip(row_ids, ids, strict=True)):
        if row_id != sample_id:
            what = (
                f"a row for sample {row_id!r}"
                if row_id is not None
                else f"{type(rows[i]).__name__}, not a Prediction,"
            )
            return _Fault(
                f" returned {what} in the place of sample {sample_id!r} (row {i + 1})",
                "return one row per sample, in the samples' order (samples.columns.ids)",
                sample_id,
            )
    wrong = [m for m in models if m != name]
    if wrong:
        return _Fault(
            f" returned rows under the model name {wrong[0]!r}",
            "name each row with the predictor's name (its key in metrics.json)",
        )
    stats = getattr(run, "stats", None)
    if not isinstance(stats, Mapping):
        return _Fault(
            f" returned stats {stats!r}, a {type(stats).__name__}, not a mapping",
            "return stats as a dict (name → number), or leave them out",
            field="stats",
        )
    for i in checked:
        try:
            check_prediction(rows[i])
        except RowRefused as refused:
            where = f"field {refused.field}: " if refused.field else ""
            return _Fault(f", sample {ids[i]!r}: {where}{refused.reason}", refused.fix, ids[i], refused.field)
    return _outputs_fault(kind, outputs, row_probs, ids)


def _probs_of(row: Prediction) -> tuple[float, float, float]:
    return row.probs if row.probs is not None else (math.nan, math.nan, math.nan)


def _distinct_rows(rows: ProbabilityRows) -> list[int]:
    """The first sample of each distinct probability vector a classifier's rows are made from."""
    if not len(rows.ids):
        return []
    _, first = np.unique(np.asarray(rows.slot), return_index=True)
    return sorted(int(i) for i in first)


def _outputs_fault(
    kind: str, outputs: ModelOutputs, row_probs: np.ndarray, ids: Sequence[str]
) -> _Fault | None:
    """Outputs (what the measures read) that are not the rows (what is written)."""
    if outputs.kind != kind:
        return _Fault(
            f" is of kind {kind!r} but its outputs say {outputs.kind!r}",
            "build the outputs with the predictor's kind",
        )
    probs = np.asarray(outputs.probs, dtype=np.float64)
    same = np.isclose(probs, row_probs, rtol=0.0, atol=1e-6) | (np.isnan(probs) & np.isnan(row_probs))
    differ = np.flatnonzero(~same.all(axis=1)) if probs.shape == row_probs.shape else np.arange(len(ids))
    if not len(differ):
        return None
    at = int(differ[0])
    return _Fault(
        f", sample {ids[at]!r}: its outputs' probabilities {probs[at].tolist()} are not its row's "
        f"{row_probs[at].tolist()}",
        "build the run with PredictorRun.of_probabilities or of_predictions (outputs made from the rows)",
        ids[at],
    )
