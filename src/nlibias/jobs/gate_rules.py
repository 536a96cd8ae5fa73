"""The rules of a bias gate (``nlibias gate --rules gate.yaml``; docs/gates.md, Rules).

>>> rules = parse_rules("margin: 0.5\\nmeasures:\\n  bbnli_bias_score: {max_abs: 5}\\n", "gate.yaml")
>>> rules.margin_of("bbnli_bias_score"), rules.max_abs_of("bbnli_bias_score"), rules.max_abs_of("M1")
(0.5, 5.0, None)
>>> parse_rules("margins: 1\\n", "gate.yaml")
Traceback (most recent call last):
nlibias.errors.SourceError: gate.yaml:1: unknown key 'margins'; did you mean 'margin'? (known here: confidence, bootstrap, seed, margin, max_detectable, worse, slices, measures)
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from pathlib import Path
from typing import Annotated, Any

from annotated_types import Le
from pydantic import (
    AfterValidator,
    Field,
    ValidationError,
    ValidationInfo,
    model_validator,
)

from nlibias.errors import SourceError, did_you_mean
from nlibias.metrics.meta import ALL_MEASURES
from nlibias.metrics.paired import AWAY_FROM_NEUTRAL, TOWARDS_STEREOTYPE, Worse
from nlibias.schema.declared import MAX_RESAMPLES, Allowed, OpenUnit, PositiveInt, Seed
from nlibias.schema.measure_info import MeasureInfo
from nlibias.schema.problems import source_error
from nlibias.schema.settings import Settings
from nlibias.textio.text_files import decode_utf8
from nlibias.textio.yaml_unique import load_yaml

OVERALL = "overall"
DEFAULT_SLICES = (OVERALL, "domain")

# pydantic's own finiteness message ("Input should be a finite number") on a rules file's line
Points = Annotated[
    float, Field(strict=True, ge=0.0, allow_inf_nan=False), Allowed("a finite number of 0 or more points")
]
"""A margin or limit in a measure's points (an infinite one would let any candidate pass)."""


def _detectable(points: float) -> float:
    if points == 0:
        raise ValueError(
            "0 points: no audit can detect a change of 0; give the largest change (above 0) a check may miss"
        )
    return points


Detectable = Annotated[Points, AfterValidator(_detectable)]
"""The largest change a check may miss (above 0: no audit could meet 0)."""
Resamples = Annotated[
    PositiveInt,
    Le(MAX_RESAMPLES),
    Field(strict=True),
    Allowed(f"a number of resamples from 1 to {MAX_RESAMPLES:,}"),
]
Confidence = Annotated[OpenUnit, Field(strict=True)]


def _distinct_slices(slices: list[str]) -> list[str]:
    """Each slicing once (``domains`` read as ``domain``), as counted in Holm's family."""
    if not slices:
        raise ValueError("name at least one slice (overall, domain, subtopic, ...)")
    singular = {"domains": "domain", "subtopics": "subtopic"}
    return list(dict.fromkeys(singular.get(s, s) for s in slices))


Slices = Annotated[list[str], AfterValidator(_distinct_slices)]


class MeasureRule(Settings):
    """What one headline measure is held to (unset: the file's defaults)."""

    margin: Points | None = None
    """Points the measure may move away from "no bias" before the change counts."""
    max_detectable: Detectable | None = None
    """Overrides the file's ``max_detectable`` for this measure."""
    max_abs: Points | None = None
    """Largest distance from "no bias" for the candidate's own value (its whole interval beyond fails)."""
    slices: Slices | None = None
    """Overrides the file's ``slices`` for this measure."""
    worse: Worse | None = None
    """Overrides the file's ``worse`` for this measure (``towards_stereotype``: signed ones only)."""


class GateRules(Settings):
    """Every setting of a gate (the defaults: margin 0, overall and domains, 95 %, 1,000 resamples)."""

    confidence: Confidence = 0.95
    bootstrap: Resamples = 1000
    seed: Annotated[Seed, Field(strict=True)] = 0
    margin: Points = 0.0
    max_detectable: Detectable | None = None
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
        """Each measure's rule names a headline measure the runs test (``tested`` in the context, once
        known), ``towards_stereotype`` a signed one, a margin or limit a distance the measure can
        pass, each slicing one of the runs' groupings (``groups``, once known), and the paired
        comparison's settings a baseline (``paired``; where a gate reads them)."""
        context = info.context or {}
        if not context.get("gate"):
            return self
        known = [name for name, m in ALL_MEASURES.items() if m.headline]
        tested = context.get("tested")
        for name, rule in self.measures.items():
            if name not in known:
                hint = f"; {hint}" if (hint := did_you_mean(name, known)) else ""
                reason = f"{name!r} is not a headline measure{hint} (the gate tests {', '.join(known)})"
                raise _RuleError(reason, ("measures", name))
            measure = ALL_MEASURES[name]
            if rule.worse == TOWARDS_STEREOTYPE and not measure.signed:
                reason = f"{name} is a magnitude (no stereotype side): only {AWAY_FROM_NEUTRAL} applies to it"
                raise _RuleError(reason, ("measures", name, "worse"))
            for key in ("margin", "max_abs"):
                _refuse_unreachable(measure, key, getattr(rule, key), self.worse_of(name, measure.signed))
            if tested is not None and name not in tested:
                raise _RuleError(_untested(name, tested), ("measures", name))
        if context.get("groups") is not None:
            self._refuse_ungrouped(context["groups"])
        if context.get("paired") is False:
            self._refuse_paired_only()
        for name in sorted(tested or ()):
            if self.measures.get(name, MeasureRule()).margin is None:
                measure = ALL_MEASURES[name]
                _refuse_unreachable(
                    measure, "margin", self.margin, self.worse_of(name, measure.signed), top=True
                )
        return self

    def _refuse_ungrouped(self, groups: Collection[str]) -> None:
        """Refuse a slicing the runs lack (``groups``: theirs); the default's ``domain`` is dropped
        where they have no domains."""
        given = [(("slices",), self.slices)] + [
            (("measures", name, "slices"), rule.slices)
            for name, rule in self.measures.items()
            if rule.slices is not None
        ]
        known = [OVERALL, *sorted(groups)]
        for at, slices in given:
            missing = [s for s in slices if s not in known]
            if missing and slices != list(DEFAULT_SLICES):
                hint = f"; {hint}" if (hint := did_you_mean(missing[0], known)) else ""
                named = ", ".join(repr(s) for s in missing)
                is_not = "is not a grouping" if len(missing) == 1 else "are not groupings"
                reason = f"{named} {is_not} of these runs{hint} (they have {', '.join(known)})"
                raise _RuleError(reason, at)

    def _refuse_paired_only(self) -> None:
        """Refuse what only the paired comparison reads in rules without a baseline (docs/gates.md)."""
        given: list[tuple[str, ...]] = [(key,) for key in _PAIRED_ONLY if key in self.model_fields_set]
        given += [
            ("measures", name, key)
            for name, rule in self.measures.items()
            for key in _PAIRED_ONLY
            if getattr(rule, key) is not None
        ]
        if given:
            reason = (
                "applies to the paired comparison with a baseline run, and the gate has none; give a "
                f"baseline run, or leave {given[0][-1]} out"
            )
            raise _RuleError(reason, given[0])


_PAIRED_ONLY = ("margin", "worse", "max_detectable")


def _refuse_unreachable(
    measure: MeasureInfo, key: str, value: float | None, worse: Worse, *, top: bool = False
) -> None:
    """Refuse a margin or ``max_abs`` no value of ``measure`` can pass (no check could ever fail)."""
    low, high = measure.range
    far = high - low if key == "margin" and worse == TOWARDS_STEREOTYPE else measure.reach
    if value is not None and value >= far:
        how = "change by" if key == "margin" else "lie"
        reason = (
            f"{value:g} decides nothing: {measure.name} (range [{low:g}, {high:g}], neutral {measure.neutral:g}) "
            f"cannot {how} {far:g} points or more{'' if key == 'margin' else ' from its neutral value'}, so no "
            f"check could fail; give a {key} below {far:g}"
        )
        raise _RuleError(reason, (key,) if top else ("measures", measure.name, key))


def _untested(name: str, tested: Collection[str]) -> str:
    """Why a rule on ``name`` applies to nothing on runs that test ``tested``."""
    for other in sorted(tested):
        if name in ALL_MEASURES[other].supersedes:
            return (
                f"the rules hold {name}, which the gate does not test on these runs: it tests "
                f"{other} in its place; write the rule for {other}"
            )
    return (
        f"the rules hold {name}, which these runs do not report: the rule would apply to nothing "
        f"(the gate tests {', '.join(sorted(tested))} on them); write it for one of those"
    )


GATE: dict[str, Any] = {"gate": True}
"""The validation context of rules a gate reads."""


class _RuleError(ValueError):
    """A measure's rule the gate cannot apply; ``at``: its key in the rules (for the YAML line)."""

    def __init__(self, reason: str, at: tuple[str, ...]) -> None:
        super().__init__(reason)
        self.at = at


def parse_rules(text: str, path: str | Path, context: Mapping[str, Any] = GATE) -> GateRules:
    """The rules in ``text`` (read from ``path``, named in errors with the line)."""
    raw = load_yaml(text, path, parameter="rules")
    if not isinstance(raw, dict):
        raise SourceError(path, None, "expected a mapping of rules at the top level", line=1)
    try:
        return GateRules.model_validate(raw, context=dict(context))
    except ValidationError as exc:
        raise source_error(exc, path, text=text, known_keys=_rule_keys) from None


def _rule_keys(loc: Sequence[Any]) -> list[str]:
    return list((MeasureRule if "measures" in loc[:-1] else GateRules).model_fields)


def load_rules(path: str | Path, context: Mapping[str, Any] = GATE) -> GateRules:
    """Read and check a rules file (SourceError naming the file and line)."""
    path = Path(path)
    if path.is_dir():
        reason = "{rules} names a folder, not a rules file"
        raise SourceError(path, None, reason, fix="name the rules' YAML file", parameter="rules")
    if not path.is_file():
        raise SourceError(path, None, "rules file does not exist")
    return parse_rules(decode_utf8(path, path.read_bytes()), path, context)
