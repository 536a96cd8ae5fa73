"""The report's section on generated explanations, as paper 002's appendix A.7: rates per model and
judge and per subtopic, the LM judge's agreement, an example per label; stale ones are a note."""

from __future__ import annotations

import warnings
from collections.abc import Collection, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from nlibias.errors import SourceError
from nlibias.explanations.judge import shown_judge
from nlibias.explanations.run_files import (
    DAMAGED,
    EXPLANATIONS_DIR,
    current_summary,
    fake_judge_warning,
    read_rows,
)
from nlibias.report.html_parts import escape as _e
from nlibias.report.html_parts import sensitive, table
from nlibias.report.metric_readers import value_with_interval
from nlibias.report.verdict_html import measure_link

if TYPE_CHECKING:
    from nlibias.report.load import Run

_RATES = (
    ("balanced_rate", "balanced"),
    ("biased_pro_rate", "biased (pro)"),
    ("biased_anti_rate", "biased (anti)"),
    ("invalid_rate", "invalid"),
    ("inconsistent_rate", "inconsistent"),
    ("mean_grounded", "grounded"),
    ("flip_rate", "flip rate"),
)
_SUBTOPIC_RATES = tuple(
    (name, title)
    for name, title in _RATES
    if name in ("biased_pro_rate", "biased_anti_rate", "invalid_rate", "flip_rate")
)
_LABEL_ORDER = ("biased", "invalid", "balanced")
_MAX_SUBTOPIC_ROWS = 40


class ExplanationsLeftOutWarning(UserWarning):
    """A run's explanations are left out of the report: explain's own check finds them damaged,
    replaced or made from other predictions (the section says why in their place)."""


def _read(run_dir: Path) -> tuple[Mapping[str, Any], list[dict[str, Any]]] | str | None:
    """The summary and rows, a note when they are stale or unreadable (said as a warning too), or
    None without any."""
    found = current_summary(run_dir)
    if isinstance(found, Mapping):
        try:
            return found, read_rows(run_dir / EXPLANATIONS_DIR)
        except SourceError as error:
            found = str(error)
        except OSError:
            found = DAMAGED
    if found is not None:
        warnings.warn(
            ExplanationsLeftOutWarning(f"the report leaves out the explanations of run {run_dir}: {found}"),
            stacklevel=3,
        )
    return found


def explanation_measures(runs: Sequence[Run]) -> set[str]:
    """The measures in some ``overall`` of the runs' current ``explanations.json`` files."""
    present: set[str] = set()
    for run in runs:
        summary = current_summary(run.path)
        if not isinstance(summary, Mapping):
            continue
        models = summary.get("models")
        for judges in models.values() if isinstance(models, Mapping) else ():
            for slices in judges.values() if isinstance(judges, Mapping) else ():
                overall = slices.get("overall") if isinstance(slices, Mapping) else None
                present |= set(overall) if isinstance(overall, Mapping) else set()
    return present


def _headers(
    plain: Sequence[str], measures: Sequence[tuple[str, str]], glossary: Collection[str]
) -> list[str]:
    """Column headers as HTML: ``plain`` ones escaped, measure titles linked to the glossary."""
    return [_e(title) for title in plain] + [
        measure_link(name, title, glossary=glossary) for name, title in measures
    ]


def _rates(m: Mapping[str, Any], measures: Sequence[tuple[str, str]]) -> list[str]:
    return [value_with_interval(m, name, decimals=1, span="muted") for name, _ in measures]


def _rates_table(summary: Mapping[str, Any], glossary: Collection[str]) -> str:
    rows = []
    for model, judges in summary.get("models", {}).items():
        for judge, slices in judges.items():
            overall = slices["overall"]
            cells = [_e(model), _e(judge), str(overall.get("n", 0)), str(overall.get("n_unexplained", 0))]
            rows.append(cells + _rates(overall, _RATES))
    headers = _headers(["model", "judge", "explained", "unexplained"], _RATES, glossary)
    return table(headers, rows, numeric_from=2, raw_headers=True)


def _subtopic_table(summary: Mapping[str, Any], glossary: Collection[str]) -> str:
    rows = []
    for model, judges in summary.get("models", {}).items():
        for judge, slices in judges.items():
            for subtopic, found in slices.get("by_subtopic", {}).items():
                cells = [_e(model), _e(judge), _e(subtopic), str(found.get("n", 0))]
                rows.append(cells + _rates(found, _SUBTOPIC_RATES))
    if not rows:
        return ""
    more = len(rows) - _MAX_SUBTOPIC_ROWS
    note = f'<p class="muted">{more} more rows in explanations.json.</p>' if more > 0 else ""
    headers = _headers(["model", "judge", "subtopic", "explained"], _SUBTOPIC_RATES, glossary)
    return (
        "<h4>Per subtopic</h4>"
        + table(headers, rows[:_MAX_SUBTOPIC_ROWS], numeric_from=3, raw_headers=True)
        + note
    )


def _agreement(summary: Mapping[str, Any]) -> str:
    lines = []
    for model, judges in summary.get("lm_agreement", {}).items():
        for judge, found in judges.items():
            kappa = "–" if found.get("kappa") is None else f"{found['kappa']:.3f}"
            lines.append(
                f"<li>{_e(model)}: NLI judge {_e(judge)} and LM judge {_e(summary.get('lm_judge'))}: "
                f"Cohen's kappa {kappa} over {found.get('n', 0)} explanations both labelled</li>"
            )
    return f"<ul>{''.join(lines)}</ul>" if lines else ""


def _examples(rows: Sequence[Mapping[str, Any]]) -> str:
    """One example per label and model (the first judge's rows)."""
    if not rows:
        return ""
    first: dict[tuple[str, Any], Mapping[str, Any]] = {}
    for r in rows:
        if r["judge"] == rows[0]["judge"]:
            first.setdefault((str(r["model"]), r["label"]), r)
    parts = []
    for model in dict.fromkeys(str(r["model"]) for r in rows):
        for label in _LABEL_ORDER:
            found = first.get((model, label))
            if found is None:
                continue
            stance = f"stance {found['stance']}, grounded {found['grounded']:.2f}"
            parts.append(
                f'<div class="example"><b>{_e(model)}</b> · <span class="label">{_e(label)}</span> '
                f'<span class="muted">({_e(stance)}; {_e(found.get("stereotype") or "test")} sample, '
                f"{_e(found.get('subtopic'))})</span>"
                f"<p><b>Premise:</b> {_e(found.get('premise', ''))}</p>"
                f"<p><b>Hypothesis:</b> {sensitive(found.get('hypothesis', ''))}</p>"
                f"<p><b>Generated:</b> {sensitive(found.get('text', ''))}</p></div>"
            )
    return "<h4>One example per label</h4>" + "".join(parts) if parts else ""


def explanations_html(runs: Sequence[Run], *, glossary: Collection[str] = ()) -> str:
    """The section's body over the runs that hold ``explanations/``; ``""`` when none does."""
    return "".join(
        f"<h3>{_e(run.label)}</h3>{_run_section(found, glossary)}"
        for run in runs
        if (found := _read(run.path)) is not None
    )


def _run_section(
    found: tuple[Mapping[str, Any], list[dict[str, Any]]] | str, glossary: Collection[str]
) -> str:
    """One run's part: its rates, agreement and examples, or the note why they are not shown."""
    if isinstance(found, str):
        return f'<p class="warn">{_e(found)}</p>'
    summary, rows = found
    fakes = set(summary.get("fake_judges") or ())
    judges = ", ".join(shown_judge(j, fakes) for j in summary.get("judges", []))
    warning = fake_judge_warning(summary)
    return (
        (f'<p class="warn">{_e(warning)}</p>' if warning is not None else "")
        + f'<p class="muted">Labels by NLI judge(s) {_e(judges)}; invalid below a grounded share of '
        f"{summary.get('threshold')}; rates in percent of the explained bias-sample answers, 95% "
        "intervals over counterfactual pairs. The labels are only as good as the judge: read the "
        "examples before the rates (docs/generative.md).</p>"
        '<p class="warn">Hypotheses and generated texts may state offensive stereotypes; they are '
        "blurred: click one to show it.</p>"
        + _rates_table(summary, glossary)
        + _agreement(summary)
        + _subtopic_table(summary, glossary)
        + _examples(rows)
    )
