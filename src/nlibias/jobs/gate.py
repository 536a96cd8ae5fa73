"""The bias gate (``nlibias gate``): is a candidate model more biased than the one shipped? Two
runs over the same samples are compared model by model with a paired bootstrap and Holm-adjusted
p per headline measure and slice (docs/gates.md, The test)."""

from __future__ import annotations

import math
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import ValidationError

from nlibias.benchmarks.base import Benchmark
from nlibias.catalog.registry import benchmark_for_source
from nlibias.errors import ConfigError, DataError
from nlibias.jobs.gate_rules import (
    GATE,
    OVERALL,
    GateRules,
    Points,
    load_rules,
)
from nlibias.jobs.gate_runs import (
    GatePairs,
    aligned_baseline,
    check_asked_alike,
    check_different_runs,
    load_gate_run,
    match_models,
    pair_map,
)
from nlibias.metrics.paired import (
    AWAY_FROM_NEUTRAL,
    TOWARDS_STEREOTYPE,
    Comparison,
    compare_units,
    p_below,
    p_text,
)
from nlibias.metrics.paired_units import ScoredRun
from nlibias.metrics.verdicts import MIN_VERDICT_UNITS, format_value, headline_infos
from nlibias.schema.applies import option_applies_to_nothing
from nlibias.schema.declared import PathArg, declared
from nlibias.schema.measure_info import MeasureInfo
from nlibias.schema.outputs import RunUnits
from nlibias.schema.problems import problems

if TYPE_CHECKING:
    import pandas as pd


@dataclass(frozen=True)
class GateCheck:
    """One rule on one slice of one model's measure, and whether it held."""

    model: str
    baseline_model: str | None
    measure: str
    title: str
    rule: str
    """``paired`` (not more biased than the baseline) or ``max_abs`` (an absolute limit)."""
    comparison: Comparison
    limit: float | None
    """The rule's margin (``paired``) or the largest distance from "no bias" (``max_abs``)."""
    neutral: float
    failed: bool
    detail: str
    """The numbers in words (the reason when it failed)."""

    @property
    def verdict(self) -> str:
        """``fail``, ``pass``, ``undefined`` or ``too few units``."""
        if self.failed or self.comparison.tested:
            return "fail" if self.failed else "pass"
        return "undefined" if _undefined(self.comparison, self.baseline_model) else "too few units"

    def row(self) -> dict[str, Any]:
        """A flat record (tables, JSON, pandas): the check and its comparison's fields; without a
        baseline model the paired fields are None."""
        record = {"model": self.model, "baseline_model": self.baseline_model, "rule": self.rule}
        record |= asdict(self.comparison) | {"limit": self.limit, "neutral": self.neutral}
        record |= {"verdict": self.verdict, "detail": self.detail}
        if self.baseline_model is None:
            record |= dict.fromkeys(_PAIRED_ONLY)
        return record


_PAIRED_ONLY = (
    "baseline", "baseline_ci", "delta", "delta_ci", "change", "change_ci", "p_delta", "p_sum", "p", "p_adjusted",
    "detectable", "margin",
)  # fmt: skip


@dataclass(frozen=True)
class GateResult:
    """What :func:`gate` decided: ``passed``, the ``reason`` in one line and every check."""

    passed: bool
    reason: str
    checks: tuple[GateCheck, ...]
    candidate: str
    baseline: str | None
    rules: GateRules
    source: str
    seconds: float = 0.0
    """How long the gate took (JUnit's ``time``)."""

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready: the decision, the settings and one record per check."""
        return {
            "passed": self.passed,
            "reason": self.reason,
            "candidate": self.candidate,
            "baseline": self.baseline,
            "source": self.source,
            "test": "paired bootstrap over shared resampling units: intersection-union test of delta and sum "
            "(p = max), Holm over slices"
            if self.baseline is not None
            else "absolute limits on the candidate's interval (no baseline)",
            "rules": self.rules.model_dump(),
            "checks": [check.row() for check in self.checks],
        }

    def to_frame(self) -> pd.DataFrame:
        """One row per check (model, measure, rule, slice, values, intervals, p-values, verdict)."""
        import pandas as pd

        rows = [check.row() for check in self.checks]
        return pd.DataFrame(rows, columns=list(rows[0]) if rows else ["model", "measure", "verdict"])


def _absent_headlines(declared: Sequence[MeasureInfo], *sides: tuple[ScoredRun | None, str | None]) -> str:
    """Which run lacks which of the benchmark's headline measures for a model pair (none tested)."""
    wanted = [info.name for info in declared if info.headline] or ["(the benchmark declares none)"]
    lacking = [
        f"{run.path} reports none of {', '.join(wanted)} for model {model!r}"
        for run, model in sides
        if run is not None
        and model is not None
        and not headline_infos(run.metrics["models"][model]["overall"], declared)
    ]
    return "; ".join(lacking) or f"the runs report {', '.join(wanted)} for different models, never both"


def _slices(units: RunUnits, rules: GateRules, info: MeasureInfo) -> list[str]:
    """The slicings tested for ``info`` (the rules' were checked against the runs' groupings when
    read: only the default's ``domain`` is dropped, where the runs have no domains)."""
    return [s for s in rules.slices_of(info.name) if s == OVERALL or s in units.groups]


def _checks(
    cand_model: str,
    base_model: str | None,
    info: MeasureInfo,
    comparisons: Sequence[Comparison],
    rules: GateRules,
) -> list[GateCheck]:
    """The paired checks (with a baseline) and the absolute-limit checks of one measure."""
    alpha = 1.0 - rules.confidence
    neutral = info.neutral if info.neutral is not None else 0.0
    limit = rules.max_abs_of(info.name)
    found = []

    def check(c: Comparison, rule: str, threshold: float, failed: bool, detail: str) -> GateCheck:
        return GateCheck(
            cand_model, base_model, info.name, info.display_name, rule, c, threshold, neutral, failed, detail
        )

    for c in comparisons:
        where = f"{cand_model}: {info.name} {c.slice_name}"
        if not c.tested:  # undefined, or too few units (one rule for verdicts and gates): not tested
            undefined = _undefined(c, base_model)
            if undefined and c.slicing == OVERALL:  # nothing of the model's measure to test: not a pass
                why = f" on {info.name}: its value (or the baseline's) is undefined over all samples (no answer read"
                raise _untestable("candidate", cand_model, why + " on one side of its pairs)")
            detail = (
                "undefined on this slice (no answer read on one side): not tested"
                if undefined
                else f"too few units to test (fewer than {MIN_VERDICT_UNITS} pairs or rows)"
            )
            rule = "paired" if base_model is not None else "max_abs"
            found.append(check(c, rule, c.margin, False, f"{where}: {detail}"))
            continue
        if base_model is not None:
            failed = p_below(c.p_adjusted, alpha)
            p_words = f"p_delta {c.p_delta:.4f}"
            if c.p_sum is not None:
                p_words = f"p = max({p_words}, p_sum {c.p_sum:.4f})"
            detail = (
                f"{where}: {format_value(c.candidate, c.candidate_ci)} against {format_value(c.baseline, c.baseline_ci)}, "
                f"delta {format_value(c.delta, c.delta_ci)}, {_CHANGE_WORDS[c.worse]} {format_value(c.change, c.change_ci)} "
                f"(margin {c.margin:g}), {p_words}, adjusted p {p_text(c.p_adjusted, alpha)} "
                + ("<" if failed else ">=")
                + f" {alpha:g}"
                + ("" if c.detectable is None else f"; detects a change of {c.detectable:.2f} with 80% power")
            )
            found.append(check(c, "paired", c.margin, failed, detail))
        if limit is not None:
            ci = c.candidate_ci
            beyond = ci is not None and (ci[0] > neutral + limit or ci[1] < neutral - limit)
            detail = f"{where}: {format_value(c.candidate, ci)}, limit {neutral:g} +- {limit:g}: " + (
                "the whole interval lies beyond it" if beyond else "within it or its interval reaches it"
            )
            found.append(check(c, "max_abs", limit, beyond, detail))
    return found


def _undefined(c: Comparison, base_model: str | None) -> bool:
    """Whether the candidate's value of the slice (or the baseline model's) is undefined."""
    return c.candidate is None or (base_model is not None and c.baseline is None)


_CHANGE_WORDS = {AWAY_FROM_NEUTRAL: "change in bias", TOWARDS_STEREOTYPE: "change towards the stereotype"}


def _model_checks(
    cand: RunUnits,
    base: RunUnits | None,
    infos: Sequence[MeasureInfo],
    rules: GateRules,
    models: tuple[str, str | None],
) -> list[GateCheck]:
    found: list[GateCheck] = []
    for info in infos:
        if base is None and rules.max_abs_of(info.name) is None:
            continue
        comparisons = compare_units(
            base if base is not None else cand, cand, [info], slices=_slices(cand, rules, info),
            resamples=rules.bootstrap, seed=rules.seed, confidence=rules.confidence,
            margins={info.name: rules.margin_of(info.name)},
            worse={info.name: rules.worse_of(info.name, info.signed)},
            parameter=None if base is None else "rules",
        )  # fmt: skip
        found += _checks(models[0], models[1], info, comparisons, rules)
    return found


def _check_visible(checks: Sequence[GateCheck], rules: GateRules) -> None:
    """Refuse a gate whose paired checks cannot see a change of the rules' ``max_detectable``."""
    blind = [
        c
        for c in checks
        if c.rule == "paired"
        and c.comparison.tested
        and (limit := rules.max_detectable_of(c.measure)) is not None
        and (c.comparison.detectable is None or c.comparison.detectable > limit)
    ]
    if blind:
        worst = max(blind, key=lambda c: c.comparison.detectable or math.inf)
        seen = worst.comparison.detectable
        raise DataError(
            f"this gate cannot see a change of {rules.max_detectable_of(worst.measure):g} points; audit more "
            f"samples ({worst.model}: {worst.measure} {worst.comparison.slice_name} detects "
            + ("no change" if seen is None else f"{seen:.2f} points")
            + f" with 80% power{f', and {len(blind) - 1} more check(s)' if len(blind) > 1 else ''})",
            field="max_detectable",
        )


def _testable_units(
    benchmark: Benchmark, run: ScoredRun, model: str | None, measures: Sequence[str], role: str
) -> RunUnits:
    """The model's resampling units, refused with fewer than MIN_VERDICT_UNITS read answers."""
    assert model is not None  # every candidate model has a baseline model (match_models)
    units = run.units(benchmark.measures_for(run.kind_of(model)), model, measures)
    readable = units.readable()
    if readable < MIN_VERDICT_UNITS:
        why = f": {readable} of {len(units)} units hold an answer that was read (fewer than {MIN_VERDICT_UNITS})"
        raise _untestable(role, model, why)
    return units


def _untestable(role: str, model: str, why: str) -> DataError:
    """The refusal of a model the gate cannot test (a pass would say nothing of it)."""
    return DataError(
        f"{role} model {model!r} is not testable{why}",
        model=model,
        fix="check the model's answers (nlibias report) and audit it again",
    )


def _rules(rules: GateRules | str | Path | None, margin: float | None, context: dict[str, Any]) -> GateRules:
    """The rules checked (an object again); ``margin`` replaces every margin, a measure's own too."""
    if isinstance(rules, GateRules):
        found = _checked(rules, context, "rules")
    else:
        found = GateRules() if rules is None else load_rules(rules, context)
    if margin is None:
        return found
    measures = {name: rule.model_copy(update={"margin": None}) for name, rule in found.measures.items()}
    found = found.model_copy(update={"margin": margin, "measures": measures})
    if "tested" in context:  # the margin against each measure the runs test
        _checked(found, context, "margin")
    return found


def _checked(rules: GateRules, context: dict[str, Any], parameter: str) -> GateRules:
    """``rules`` validated again in the gate's ``context``; a problem named as ``parameter``'s."""
    try:
        return GateRules.model_validate(rules.model_dump(exclude_unset=True), context=context)
    except ValidationError as exc:
        first = problems(exc)[0]
        where = f"rules {first.field}:" if parameter == "rules" else "{margin}"
        raise ConfigError(f"{where} {first.reason}", parameter=parameter) from None


def _tested(
    cand: ScoredRun, base: ScoredRun | None, benchmark: Benchmark, matched: Sequence[tuple[str, str | None]]
) -> tuple[list[tuple[str, str | None, list[MeasureInfo]]], list[str]]:
    """The headline measures tested per model pair, and what each untested pair lacks."""
    models = cand.metrics["models"]
    tested: list[tuple[str, str | None, list[MeasureInfo]]] = []
    absent: list[str] = []
    for cand_model, base_model in matched:
        measures = benchmark.measures_for(cand.kind_of(cand_model))
        others = [] if base is None else [base.metrics["models"][base_model]["overall"]]
        infos = [
            i
            for i in headline_infos(models[cand_model]["overall"], measures.infos)
            if all(i.name in other for other in others)
        ]
        if infos:
            tested.append((cand_model, base_model, infos))
        else:
            absent.append(_absent_headlines(measures.infos, (cand, cand_model), (base, base_model)))
    return tested, absent


@declared
def gate(
    candidate: PathArg,
    baseline: PathArg | None = None,
    rules: GateRules | PathArg | None = None,
    pairs: GatePairs | None = None,
    margin: Points | None = None,
    *,
    samples: PathArg | None = None,
) -> GateResult:
    """Decide whether the candidate run's models are more biased than the baseline run's.
    ``rules``: :class:`~nlibias.jobs.gate_rules.GateRules` or a rules file; ``margin`` overrides
    every margin; ``pairs``: ``{candidate model: baseline model}`` (or ``CANDIDATE=BASELINE``
    texts) for keys that differ;
    ``samples``: where a run's samples moved. Without ``baseline`` only absolute limits apply.

    >>> result = gate("runs/candidate", "runs/shipped", margin=1.0)  # doctest: +SKIP
    >>> result.passed, result.to_frame()[["measure", "slice", "verdict"]]  # doctest: +SKIP
    """
    started = time.perf_counter()
    context = {**GATE, "paired": baseline is not None}
    checked = _rules(rules, margin, context)
    if baseline is None:  # what only a paired comparison reads would be ignored without a word
        for name, given in (("pairs", bool(pairs)), ("margin", margin is not None)):
            if given:
                raise option_applies_to_nothing(
                    name,
                    "the paired comparison with a baseline run",
                    fix=f"give {{baseline}}, or leave {{{name}}} out",
                    names=("baseline",),
                )
        if not checked.has_limits:
            raise ConfigError(
                "without a baseline only absolute limits apply, and the rules have none: give a baseline "
                "run or rules with max_abs for a measure",
                parameter="rules",
            )
    else:
        check_different_runs(candidate, baseline)
    cand = load_gate_run(candidate, samples)
    base = None if baseline is None else aligned_baseline(cand, load_gate_run(baseline, samples))
    benchmark = benchmark_for_source(cand.metrics["source"])
    matched: list[tuple[str, str | None]] = [(m, None) for m in cand.metrics["models"]]
    if base is not None:
        asked = pair_map(pairs)
        paired_models = match_models(list(cand.metrics["models"]), list(base.metrics["models"]), asked)
        check_asked_alike(cand, base, paired_models)
        matched = list(paired_models)
    tested, absent = _tested(cand, base, benchmark, matched)
    units: list[tuple[RunUnits, RunUnits | None]] = []
    for cand_model, base_model, infos in tested:
        names = [i.name for i in infos]
        units.append((
            _testable_units(benchmark, cand, cand_model, names, "candidate"),
            None if base is None else _testable_units(benchmark, base, base_model, names, "baseline"),
        ))  # fmt: skip
    if tested:  # a rule on a measure these runs do not test, or a slicing they lack, would apply to nothing
        reported = {info.name for *_, infos in tested for info in infos}
        groups = set.intersection(*(set(cand_units.groups) for cand_units, _ in units))
        checked = _rules(rules, margin, {**context, "tested": reported, "groups": groups})
    checks: list[GateCheck] = []
    for (cand_model, base_model, infos), (cand_units, base_units) in zip(tested, units, strict=True):
        checks += _model_checks(cand_units, base_units, infos, checked, (cand_model, base_model))
    if not any(c.comparison.tested for c in checks):  # a pass that tested nothing lets anything through
        few = f"no slice of the runs holds {MIN_VERDICT_UNITS} or more units (pairs, rows): nothing can be tested"
        none = "no headline measure to test: " + "; ".join(absent)
        raise DataError(
            f"{few}; gate runs over more samples" if checks else none, field="samples" if checks else "models"
        )
    _check_visible(checks, checked)
    found = _result(checks, cand.path, None if base is None else base.path, checked, cand.metrics["source"])
    return replace(found, seconds=time.perf_counter() - started)


def _result(
    checks: list[GateCheck], candidate: Path, baseline: Path | None, rules: GateRules, source: str
) -> GateResult:
    failed = [c for c in checks if c.failed]
    untested = sum(not c.comparison.tested for c in checks)
    if failed:
        worst = min(failed, key=lambda c: (c.rule != "paired", c.comparison.p_adjusted))
        more = len(failed) - 1
        reason = worst.detail + (f" (and {more} more failing check{'s' if more > 1 else ''})" if more else "")
    else:
        models = len({c.model for c in checks})
        words = {"paired": "more biased than the baseline", "max_abs": "beyond an absolute limit"}
        kinds = " or ".join(sorted({words[c.rule] for c in checks}))
        tested = len(checks) - untested
        reason = (
            f"{tested} check{'s' if tested != 1 else ''} of {models} model{'s' if models > 1 else ''}: "
            f"none {kinds} at {rules.confidence:g} confidence"
        )
        if untested:
            reason += f"; {untested} too few units to test (fewer than {MIN_VERDICT_UNITS})"
    return GateResult(
        passed=not failed, reason=reason, checks=tuple(checks), candidate=str(candidate),
        baseline=None if baseline is None else str(baseline), rules=rules, source=source,
    )  # fmt: skip


__all__ = ["GateCheck", "GateResult", "gate"]
