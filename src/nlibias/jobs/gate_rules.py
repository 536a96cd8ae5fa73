"""The rules of a bias gate (``nlibias gate --rules gate.yaml``; docs/gates.md, Rules).

>>> rules = parse_rules("margin: 0.5\\nmeasures:\\n  bbnli_bias_score: {max_abs: 5}\\n", "gate.yaml")
>>> rules.margin_of("bbnli_bias_score"), rules.max_abs_of("bbnli_bias_score"), rules.max_abs_of("M1")
(0.5, 5.0, None)
>>> parse_rules("margins: 1\\n", "gate.yaml")
Traceback (most recent call last):
nlibias.errors.SourceError: gate.yaml:1: unknown key 'margins'; did you mean 'margin'? (known here: confidence, bootstrap, seed, margin, max_detectable, worse, slices, measures)
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Annotated, Any

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    ValidationInfo,
    model_validator,
)

from nlibias.errors import ConfigError, SourceError, did_you_mean
from nlibias.metrics.meta import ALL_MEASURES
from nlibias.metrics.paired import AWAY_FROM_NEUTRAL, TOWARDS_STEREOTYPE, Worse
from nlibias.schema.declared import Allowed, OpenUnit, PositiveInt, Seed, source_error
from nlibias.textio.text_files import decode_utf8
from nlibias.textio.yaml_unique import load_yaml

OVERALL = "overall"
DEFAULT_SLICES = (OVERALL, "domain")

# pydantic's own finiteness message ("Input should be a finite number") on a rules file's line
Points = Annotated[
    float, Field(strict=True, ge=0.0, allow_inf_nan=False), Allowed("a finite number of 0 or more points")
]
"""A margin or limit in a measure's points (an infinite one would let any candidate pass)."""
Resamples = Annotated[PositiveInt, Field(strict=True)]
Confidence = Annotated[OpenUnit, Field(strict=True)]


def _distinct_slices(slices: list[str]) -> list[str]:
    """Each slicing once (``domains`` read as ``domain``), as counted in Holm's family."""
    if not slices:
        raise ValueError("name at least one slice (overall, domain, subtopic, ...)")
    singular = {"domains": "domain", "subtopics": "subtopic"}
    return list(dict.fromkeys(singular.get(s, s) for s in slices))


Slices = Annotated[list[str], AfterValidator(_distinct_slices)]


class MeasureRule(BaseModel):
    """What one headline measure is held to (unset: the file's defaults)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    margin: Points | None = None
    """Points the measure may move away from "no bias" before the change counts."""
    max_detectable: Points | None = None
    """Overrides the file's ``max_detectable`` for this measure."""
    max_abs: Points | None = None
    """Largest distance from "no bias" for the candidate's own value (its whole interval beyond fails)."""
    slices: Slices | None = None
    """Overrides the file's ``slices`` for this measure."""
    worse: Worse | None = None
    """Overrides the file's ``worse`` for this measure (``towards_stereotype``: signed ones only)."""


class GateRules(BaseModel):
    """Every setting of a gate (the defaults: margin 0, overall and domains, 95 %, 1,000 resamples)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    confidence: Confidence = 0.95
    bootstrap: Resamples = 1000
    seed: Annotated[Seed, Field(strict=True)] = 0
    margin: Points = 0.0
    max_detectable: Points | None = None
    """The largest change (points) a check may miss: one that cannot detect it with 80 % power is refused."""
    worse: Worse = AWAY_FROM_NEUTRAL
    slices: Slices = Field(default_factory=lambda: list(DEFAULT_SLICES))
    measures: dict[str, MeasureRule] = Field(default_factory=dict)

    def _own(self, measure: str, key: str) -> Any:
        """The measure's own setting ``key``, else the file's."""
        rule = self.measures.get(measure)
        value = None if rule is None else getattr(rule, key)
        return getattr(self, key) if value is None else value

    def margin_of(self, measure: str) -> float:
        return float(self._own(measure, "margin"))

    def worse_of(self, measure: str, signed: bool) -> Worse:
        """The direction a change of ``measure`` is tested in (a magnitude: away from its ideal)."""
        return self._own(measure, "worse") if signed else AWAY_FROM_NEUTRAL

    def max_detectable_of(self, measure: str) -> float | None:
        return self._own(measure, "max_detectable")

    def max_abs_of(self, measure: str) -> float | None:
        rule = self.measures.get(measure)
        return None if rule is None else rule.max_abs

    def slices_of(self, measure: str) -> list[str]:
        return list(self._own(measure, "slices"))

    @property
    def has_limits(self) -> bool:
        """Whether any measure has an absolute limit."""
        return any(rule.max_abs is not None for rule in self.measures.values())

    @model_validator(mode="after")
    def _applicable(self, info: ValidationInfo) -> GateRules:
        """Each measure's rule names a headline measure, and ``towards_stereotype`` a signed one
        (checked where a gate reads the rules: :data:`GATE`)."""
        if not (info.context or {}).get("gate"):
            return self
        known = [name for name, info in ALL_MEASURES.items() if info.headline]
        for name, rule in self.measures.items():
            if name not in known:
                hint = f"; {hint}" if (hint := did_you_mean(name, known)) else ""
                reason = f"{name!r} is not a headline measure{hint} (the gate tests {', '.join(known)})"
                raise _RuleError(reason, ("measures", name))
            if rule.worse == TOWARDS_STEREOTYPE and not ALL_MEASURES[name].signed:
                reason = f"{name} is a magnitude (no stereotype side): only {AWAY_FROM_NEUTRAL} applies to it"
                raise _RuleError(reason, ("measures", name, "worse"))
        return self


GATE: dict[str, bool] = {"gate": True}
"""The validation context of rules a gate reads."""


class _RuleError(ValueError):
    """A measure's rule the gate cannot apply; ``at``: its key in the rules (for the YAML line)."""

    def __init__(self, reason: str, at: tuple[str, ...]) -> None:
        super().__init__(reason)
        self.at = at


def parse_rules(text: str, path: str | Path) -> GateRules:
    """The rules in ``text`` (read from ``path``, named in errors with the line)."""
    raw = load_yaml(text, path)
    raw = {} if raw is None else raw
    if not isinstance(raw, dict):
        raise SourceError(path, None, "expected a mapping of rules at the top level", line=1)
    try:
        return GateRules.model_validate(raw, context=GATE)
    except ValidationError as exc:
        raise source_error(exc, path, text=text, known_keys=_rule_keys) from None


def _rule_keys(loc: Sequence[Any]) -> list[str]:
    return list((MeasureRule if "measures" in loc[:-1] else GateRules).model_fields)


def load_rules(path: str | Path) -> GateRules:
    """Read and check a rules file (SourceError naming the file and line)."""
    path = Path(path)
    if not path.is_file():
        raise SourceError(path, None, "rules file does not exist")
    return parse_rules(decode_utf8(path, path.read_bytes()), path)


def refuse_superseded_rules(tested: set[str], rules: GateRules) -> None:
    """Refuse a rule on a measure the gate tests another in place of (it would apply to nothing)."""
    for name in rules.measures:
        if name in tested:
            continue
        for other in sorted(tested):
            if name in ALL_MEASURES[other].supersedes:
                raise ConfigError(
                    f"the rules hold {name}, which the gate does not test on these runs: it tests "
                    f"{other} in its place; write the rule for {other}",
                    parameter="rules",
                )
