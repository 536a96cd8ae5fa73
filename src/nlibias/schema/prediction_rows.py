"""Prediction rows: one pydantic record per predictor kind holding every rule of its rows, whatever
route brings them; a route calls :func:`check_row` and turns :class:`RowRefused` into its own error.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Callable, Mapping
from typing import Annotated, Any

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

from nlibias.schema import LABELS, row_kind
from nlibias.schema.declared import is_int
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

    >>> import numpy as np
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
