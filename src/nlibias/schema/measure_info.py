"""What a reported measure is: its name, meaning, which way is better, its range and unit.

Each field's rule is declared on it (a finite neutral and target, a range of numbers from low to
high, a direction of :data:`Direction`), so every way of building one is checked: a broken rule is a
:class:`~nlibias.errors.ConfigError` naming the measure and the field.

>>> MeasureInfo("gap", "d", "sideways", (-100.0, 100.0), "c")  # doctest: +ELLIPSIS
Traceback (most recent call last):
nlibias.errors.ConfigError: measure 'gap': direction is 'sideways'; pass one of 'higher', 'lower', ...
>>> MeasureInfo("gap", "d", "zero", (100.0, -100.0), "c")
Traceback (most recent call last):
nlibias.errors.ConfigError: measure 'gap': range is (100.0, -100.0): its low end must be below its high end
"""

from __future__ import annotations

import dataclasses
import functools
import math
import typing
from dataclasses import dataclass
from typing import Annotated, Any, Literal

from annotated_types import Predicate

from nlibias.errors import ConfigError
from nlibias.schema.declared import Allowed, FiniteFloat, Refuse, settings_error

Direction = Literal["higher", "lower", "zero", "target", "none"]

METRICS_FILE = "metrics.json"
EXPLANATIONS_FILE = "explanations.json"  # where ``nlibias explain`` writes its rates

MeasureName = Annotated[
    str,
    Predicate(lambda name: bool(name) and not any(c.isspace() for c in name)),
    Allowed("one word (a key of metrics.json and of gate rules): not blank, no spaces"),
]
"""A measure's name: one word, not blank."""
MeasureRange = Annotated[
    tuple[float, float],
    Refuse(
        lambda span: any(math.isnan(end) for end in span),
        lambda span: f"is {span}: its ends must be numbers, not NaN",
    ),
    Refuse(
        lambda span: not span[0] < span[1], lambda span: f"is {span}: its low end must be below its high end"
    ),
    Allowed("a tuple (low, high) of numbers, low below high"),
]
"""``(low, high)``: numbers, low below high (an end may be infinite: nats from 0 to inf)."""


@dataclass(frozen=True)
class MeasureInfo:
    """What a reported measure is. Values are in percent unless ``unit`` says otherwise."""

    name: MeasureName
    description: str
    """One sentence a report can show."""
    direction: Direction
    """Which value is better: ``higher``, ``lower``, closer to ``zero`` or ``target``, or ``none``."""
    range: MeasureRange
    citation: str
    unit: str = "%"
    target: FiniteFloat | None = None
    headline: bool = False
    """One of the measures that answer "is this model biased?" (verdicts, the gate)."""
    neutral: FiniteFloat | None = None
    """The value that means "no bias"; None for a measure that is not a bias measure."""
    signed: bool = False
    """True when a value above :attr:`neutral` leans towards the stereotype, below it against;
    False for a magnitude."""
    title: str = ""
    supersedes: tuple[str, ...] = ()
    """Headline measures this one answers for where a slice reports both."""
    reported_in: str = METRICS_FILE
    """The run file whose slices hold it."""

    def __post_init__(self) -> None:
        given = {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}
        from pydantic import ValidationError

        model = _declaration()
        try:
            checked = model.model_validate(given)
        except ValidationError as error:
            raise _named(self.name, settings_error(error, model, given)) from None
        for name in given:  # as validated: (0, 100) is (0.0, 100.0)
            object.__setattr__(self, name, getattr(checked, name))
        problem = self._problem()
        if problem is not None:
            raise ConfigError(f"measure {self.name!r}: {problem[1]}", parameter=problem[0])

    def _problem(self) -> tuple[str, str] | None:
        """The rule between fields it breaks, as (field, reason); None: none."""
        low, high = self.range
        if (self.headline or self.signed) and self.neutral is None:
            return "neutral", "a headline or signed measure needs its neutral value (the value of no bias)"
        if self.headline and not (math.isfinite(low) and math.isfinite(high)):
            return "range", (
                f"range is {self.range}: a headline measure needs a finite range (verdicts and the gate "
                "are scaled by how far a value can lie from neutral)"
            )
        if self.neutral is not None and not low <= self.neutral <= high:
            return "neutral", f"neutral {self.neutral} is outside its range {self.range}"
        if (self.direction == "target") != (self.target is not None):
            return "target", "give a target exactly when the direction is 'target'"
        if self.target is not None and not low <= self.target <= high:
            return "target", f"target {self.target} is outside its range {self.range}"
        return None

    @property
    def ideal(self) -> float | None:
        """The best value: the top or bottom of the range, zero, the target; None for ``none``."""
        return {
            "higher": self.range[1],
            "lower": self.range[0],
            "zero": 0.0,
            "target": self.target,
            "none": None,
        }[self.direction]

    @property
    def display_name(self) -> str:
        return self.title or self.name

    @property
    def reach(self) -> float:
        """The farthest a value can lie from :attr:`neutral` (0 for a measure without one)."""
        return (
            0.0 if self.neutral is None else max(self.neutral - self.range[0], self.range[1] - self.neutral)
        )

    def bias_amount(self, value: float) -> float:
        """How far ``value`` lies from "no bias": ``|value - neutral|``.

        >>> MeasureInfo("S", "d", "higher", (0.0, 100.0), "c", headline=True, neutral=100.0).bias_amount(72.0)
        28.0
        """
        if self.neutral is None:
            raise ValueError(f"measure {self.name!r} declares no neutral value")
        return abs(value - self.neutral)

    def leaning(self, value: float) -> str:
        """``pro``, ``anti`` or ``none``: the side of neutral a signed measure's ``value`` lies on."""
        if not self.signed or self.neutral is None:
            raise ValueError(f"measure {self.name!r} is not signed: it has no direction of bias")
        if value > self.neutral:
            return "pro"
        return "anti" if value < self.neutral else "none"

    def is_better(self, a: float, b: float) -> bool:
        """True when value ``a`` is strictly better than value ``b``."""
        if self.direction == "none":
            return False
        return self.badness(a) < self.badness(b)

    def badness(self, value: float) -> float:
        """A number that grows as ``value`` gets worse (ValueError for direction ``none``)."""
        if self.direction == "higher":
            return -value
        if self.direction == "lower":
            return value
        if self.direction == "zero":
            return abs(value)
        if self.direction == "target" and self.target is not None:
            return abs(value - self.target)
        raise ValueError(f"measure {self.name!r} has no better value (direction {self.direction!r})")


@functools.cache
def _declaration() -> Any:
    """The pydantic model of :class:`MeasureInfo`'s fields, made from their hints (built once)."""
    from pydantic import ConfigDict, create_model

    hints = typing.get_type_hints(MeasureInfo, include_extras=True)
    fields: dict[str, Any] = {
        f.name: (hints[f.name], ... if f.default is dataclasses.MISSING else f.default)
        for f in dataclasses.fields(MeasureInfo)
    }
    config = ConfigDict(strict=True, extra="forbid")
    return create_model("MeasureInfo", __config__=config, **fields)


def _named(measure: Any, error: ConfigError) -> ConfigError:
    """``error`` said of the measure named ``measure``."""
    return ConfigError(f"measure {measure!r}: {error.args[0]}", parameter=error.parameter, names=error.names)
