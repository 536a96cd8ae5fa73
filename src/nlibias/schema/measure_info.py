"""What a reported measure is: its name, meaning, which way is better, its range and unit."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

Direction = Literal["higher", "lower", "zero", "target", "none"]

METRICS_FILE = "metrics.json"
EXPLANATIONS_FILE = "explanations.json"  # where ``nlibias explain`` writes its rates


@dataclass(frozen=True)
class MeasureInfo:
    """What a reported measure is. Values are in percent unless ``unit`` says otherwise."""

    name: str
    description: str
    """One sentence a report can show."""
    direction: Direction
    """Which value is better: ``higher``, ``lower``, closer to ``zero`` or ``target``, or ``none``."""
    range: tuple[float, float]
    citation: str
    unit: str = "%"
    target: float | None = None
    headline: bool = False
    """One of the measures that answer "is this model biased?" (verdicts, the gate)."""
    neutral: float | None = None
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
        if (self.headline or self.signed) and self.neutral is None:
            raise ValueError(f"measure {self.name!r}: a headline or signed measure needs its neutral value")
        if self.neutral is not None and not self.range[0] <= self.neutral <= self.range[1]:
            raise ValueError(
                f"measure {self.name!r}: neutral {self.neutral} is outside its range {self.range}"
            )
        if (self.direction == "target") != (self.target is not None):
            raise ValueError(f"measure {self.name!r}: give a target exactly when the direction is 'target'")
        if self.target is not None and not self.range[0] <= self.target <= self.range[1]:
            raise ValueError(f"measure {self.name!r}: target {self.target} is outside its range {self.range}")

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
