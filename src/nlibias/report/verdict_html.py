"""The report's first section, a row per model from :func:`~nlibias.metrics.verdicts.run_verdicts`,
and the links from measure names to the glossary."""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from typing import Any

from nlibias.metrics.verdicts import MIN_VERDICT_UNITS, PRO, ModelVerdict, SliceReading, run_verdicts
from nlibias.report.html_parts import escape, model_key
from nlibias.report.paper_tables import measures_sentence
from nlibias.report.verdict_block import headline_columns, verdict_rows

#: How many of the most biased slices each model's row shows.
SLICES_SHOWN = 3

INTRO = (
    "Values are <i>value [95% interval]</i>. A model is called <b>biased</b> (pro- or "
    "anti-stereotype) only when a signed measure's whole interval lies on one side of its "
    "no-bias value; <b>no evidence of bias</b> when the interval contains it. A slice of fewer "
    f"than {MIN_VERDICT_UNITS} units (pairs or rows) gets no verdict and is never listed: its "
    "interval is too narrow to trust."
)


def measure_anchor(name: str) -> str:
    """The id of a measure's glossary entry."""
    return f"measure-{name}"


def measure_link(name: str, text: str | None = None, *, glossary: Collection[str]) -> str:
    """``text`` (default: ``name``), escaped, linked to the glossary entry when ``glossary`` has one."""
    shown = escape(name if text is None else text)
    if name not in glossary:
        return shown
    return f'<a class="measure" href="#{measure_anchor(name)}">{shown}</a>'


def _verdict_class(word: str) -> str:
    if PRO in word or "anti-stereotype" in word:
        return "biased"
    return "unbiased" if word == "no evidence of bias" else "plain"


def _slice_text(found: SliceReading) -> str:
    n = f", n={found.n}" if found.n is not None else ""
    return (
        f"<li>{escape(found.group)} <b>{escape(found.name)}</b>: "
        f"{escape(found.reading.info.display_name)} {escape(found.reading.formatted())}{n}</li>"
    )


def _header(info: Any, glossary: Collection[str]) -> str:
    neutral = "" if info.neutral is None else f' <span class="muted">({info.neutral:g} = no bias)</span>'
    return measure_link(info.name, info.display_name, glossary=glossary) + neutral


def verdict_table(verdicts: Sequence[ModelVerdict], *, glossary: Collection[str]) -> str:
    """A row per model (a card on a phone): verdict, headline measures, accuracy, most biased slices."""
    labels, rows = verdict_rows(verdicts)
    labels.append("most biased slices")  # a phone's card lines
    heads = ["model", "verdict", *(_header(info, glossary) for info in headline_columns(verdicts).values())]
    heads += [*(measure_link(a, glossary=glossary) for a in labels[len(heads) : -1]), labels[-1]]
    body = []
    for verdict, row in zip(verdicts, rows, strict=True):
        shown = verdict.biased_slices[:SLICES_SHOWN]
        more = verdict.biased_slice_count - len(shown)
        slices = "".join(_slice_text(s) for s in shown)
        cells = [
            model_key(verdict.model),
            f'<span class="verdict {_verdict_class(verdict.verdict)}">{escape(verdict.verdict)}</span>',
            *(escape(value) if value else "–" for value in row[2:]),
            f'<ul class="slices">{slices}</ul>'
            + (f'<span class="muted">and {more} more</span>' if more > 0 else "")
            if shown
            else '<span class="muted">none excludes no bias</span>',
        ]
        body.append(
            "<tr>"
            + "".join(
                f'<td data-label="{escape(label)}"{" class=num" if 1 < i < len(cells) - 1 else ""}>{cell}</td>'
                for i, (label, cell) in enumerate(zip(labels, cells, strict=True))
            )
            + "</tr>"
        )
    head = "".join(f"<th>{h}</th>" for h in heads)
    return (
        f'<div class="table-wrap"><table class="verdict"><thead><tr>{head}</tr></thead>'
        f"<tbody>{''.join(body)}</tbody></table></div>"
    )


def verdict_section(runs: Sequence[tuple[str, Mapping[str, Any]]], *, glossary: Collection[str]) -> str:
    """A verdict table per run (label, ``metrics.json``) under how to read it; ``""`` without one."""
    parts = []
    for label, metrics in runs:
        verdicts = [v for v in run_verdicts(metrics) if v.headline]
        if not verdicts:
            continue
        if len(runs) > 1:
            parts.append(f"<h3>{escape(label)}</h3>")
        parts.append(verdict_table(verdicts, glossary=glossary))
    if not parts:
        return ""
    both = measures_sentence([metrics for _, metrics in runs])
    return (
        f'<p class="how">{INTRO}</p>'
        + "".join(parts)
        + (f'<p class="how">{escape(both)}</p>' if both else "")
    )
