"""The rules of a bias gate (``nlibias gate --rules gate.yaml``): margins, absolute limits, slices.

Every key is checked (unknown ones refused with the line); the format and the ``worse``
directions are in docs/gates.md, Rules.

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

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from nlibias.errors import ConfigError, SourceError, did_you_mean
from nlibias.metrics.meta import ALL_MEASURES
from nlibias.metrics.paired import AWAY_FROM_NEUTRAL, TOWARDS_STEREOTYPE, Worse
from nlibias.schema.declared import OpenUnit, PositiveInt, Seed, source_error
from nlibias.textio.yaml_unique import load_yaml, yaml_line_of

OVERALL = "overall"
DEFAULT_SLICES = (OVERALL, "domain")

# pydantic's own finiteness (not schema.declared's NonNegativeFloat, whose check is a predicate):
# its message, "Input should be a finite number", is what a rules file's line should say
Points = Annotated[float, Field(strict=True, ge=0.0, allow_inf_nan=False)]
"""A margin or limit in a measure's points: a finite number of 0 or more (an infinite one would
let any candidate pass; a YAML ``true`` is no number)."""
Resamples = Annotated[PositiveInt, Field(strict=True)]
Confidence = Annotated[OpenUnit, Field(strict=True)]


def _distinct_slices(slices: list[str]) -> list[str]:
    """Each slicing once (``domains`` read as ``domain``): twice, it would count twice in Holm's family."""
    singular = {"domains": "domain", "subtopics": "subtopic"}
    return list(dict.fromkeys(singular.get(s, s) for s in slices))


class MeasureRule(BaseModel):
    """What one headline measure is held to (unset: the file's defaults)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    margin: Points | None = None
    """Points the measure may move away from "no bias" before the change counts."""
    max_detectable: Points | None = None
    """Overrides the file's ``max_detectable`` for this measure."""
    max_abs: Points | None = None
    """Largest distance from "no bias" allowed for the candidate's own value (its whole interval
    beyond it fails)."""
    slices: list[str] | None = None
    """Overrides the file's ``slices`` for this measure."""
    worse: Worse | None = None
    """Overrides the file's ``worse`` for this measure (``towards_stereotype``: signed ones only)."""

    @field_validator("slices")
    @classmethod
    def _named(cls, value: list[str] | None) -> list[str] | None:
        if value is not None and not value:
            raise ValueError("name at least one slice (overall, domain, subtopic, ...)")
        return None if value is None else _distinct_slices(value)


class GateRules(BaseModel):
    """Every setting of a gate (the defaults: margin 0, overall and domains, 95 %, 1,000 resamples)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    confidence: Confidence = 0.95
    bootstrap: Resamples = 1000
    seed: Annotated[Seed, Field(strict=True)] = 0
    margin: Points = 0.0
    max_detectable: Points | None = None
    """The largest change (points) a check may be blind to: a check that cannot detect a change
    of this size with 80 % power is refused (audit more samples)."""
    worse: Worse = AWAY_FROM_NEUTRAL
    slices: list[str] = Field(default_factory=lambda: list(DEFAULT_SLICES))
    measures: dict[str, MeasureRule] = Field(default_factory=dict)

    @field_validator("slices")
    @classmethod
    def _some_slices(cls, value: list[str]) -> list[str]:
        if not value:
            raise ValueError("name at least one slice (overall, domain, subtopic, ...)")
        return _distinct_slices(value)

    def margin_of(self, measure: str) -> float:
        rule = self.measures.get(measure)
        return self.margin if rule is None or rule.margin is None else rule.margin

    def worse_of(self, measure: str, signed: bool) -> Worse:
        """The direction a change of ``measure`` is tested in (a magnitude: away from its ideal)."""
        rule = self.measures.get(measure)
        chosen = self.worse if rule is None or rule.worse is None else rule.worse
        return chosen if signed else AWAY_FROM_NEUTRAL

    def max_detectable_of(self, measure: str) -> float | None:
        rule = self.measures.get(measure)
        return self.max_detectable if rule is None or rule.max_detectable is None else rule.max_detectable

    def max_abs_of(self, measure: str) -> float | None:
        rule = self.measures.get(measure)
        return None if rule is None else rule.max_abs

    def slices_of(self, measure: str) -> list[str]:
        rule = self.measures.get(measure)
        return self.slices if rule is None or rule.slices is None else rule.slices

    @property
    def has_limits(self) -> bool:
        """Whether any measure has an absolute limit."""
        return any(rule.max_abs is not None for rule in self.measures.values())


def measure_rule_problem(rules: GateRules) -> tuple[list[str], str] | None:
    """The first per-measure rule the gate cannot apply, as (where, reason): no headline measure,
    or ``towards_stereotype`` on a magnitude (rules from a file and from Python alike).

    >>> measure_rule_problem(GateRules(measures={"S": MeasureRule(worse="towards_stereotype")}))
    (['measures', 'S', 'worse'], 'S is a magnitude (no stereotype side): only away_from_neutral applies to it')
    """
    known = [name for name, info in ALL_MEASURES.items() if info.headline]
    for name, rule in rules.measures.items():
        if name not in known:
            hint = f"; {hint}" if (hint := did_you_mean(name, known)) else ""
            return [
                "measures",
                name,
            ], f"{name!r} is not a headline measure{hint} (the gate tests {', '.join(known)})"
        if rule.worse == TOWARDS_STEREOTYPE and not ALL_MEASURES[name].signed:
            reason = f"{name} is a magnitude (no stereotype side): only {AWAY_FROM_NEUTRAL} applies to it"
            return ["measures", name, "worse"], reason
    return None


def parse_rules(text: str, path: str | Path) -> GateRules:
    """The rules in ``text`` (read from ``path``, named in errors with the line)."""
    raw = load_yaml(text, path)
    raw = {} if raw is None else raw
    if not isinstance(raw, dict):
        raise SourceError(path, None, "expected a mapping of rules at the top level", line=1)
    try:
        rules = GateRules.model_validate(raw)
    except ValidationError as exc:
        raise source_error(exc, path, text=text, known_keys=_rule_keys) from None
    problem = measure_rule_problem(rules)
    if problem is not None:
        where, reason = problem
        raise SourceError(path, ".".join(where), reason, line=yaml_line_of(text, where))
    return rules


def _rule_keys(loc: Sequence[Any]) -> list[str]:
    return list((MeasureRule if "measures" in loc[:-1] else GateRules).model_fields)


def load_rules(path: str | Path) -> GateRules:
    """Read and check a rules file (SourceError naming the file and line)."""
    path = Path(path)
    if not path.is_file():
        raise SourceError(path, None, "rules file does not exist")
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as error:
        raise SourceError(path, None, f"not UTF-8 text ({error.reason})") from None
    return parse_rules(text, path)


def refuse_superseded_rules(tested: set[str], rules: GateRules) -> None:
    """Refuse a rule on a measure the gate tests another in place of (the TP score, superseded by
    its tie-split score): it would apply to nothing."""
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
