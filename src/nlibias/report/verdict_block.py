"""The verdict block as text, Markdown or HTML: what ``audit``, ``score``, ``tables.txt`` and
``report --format md`` print first, and a notebook shows."""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from nlibias.metrics.meta import TOKEN_PROBABILITY_MEASURES
from nlibias.metrics.verdicts import (
    MIN_VERDICT_UNITS,
    ModelVerdict,
    format_value,
    headline_infos,
    run_verdicts,
)
from nlibias.report.metric_readers import number
from nlibias.schema.declared import is_int
from nlibias.schema.measure_info import MeasureInfo
from nlibias.textio.tables import markdown_table, render_table

TITLE = (
    "Verdict (95% bootstrap intervals; a signed measure is biased only when its interval "
    f"excludes its no-bias value, over {MIN_VERDICT_UNITS} units or more)"
)
TP_NEUTRAL: float = TOKEN_PROBABILITY_MEASURES["tp_bias_score"].neutral or 0.0  # declared: 50
TIE_CAVEAT_SHARE = 5.0
"""Percent of TP pairs tied above which the tie note warns."""
READ_SHARE_NOTE = 90.0
"""Percent of answers read below which the verdict says how many it read."""


def verdict_rows(verdicts: Sequence[ModelVerdict]) -> tuple[list[str], list[list[str]]]:
    """The verdict table's header and rows: model, verdict, headline measures, accuracy."""
    columns = {name: column_title(info) for name, info in headline_columns(verdicts).items()}
    with_accuracy = any(v.accuracy is not None for v in verdicts)
    header = ["model", "verdict", *columns.values()] + (["accuracy"] if with_accuracy else [])
    rows = []
    for verdict in verdicts:
        by_name = {r.measure: r.formatted() for r in verdict.headline}
        row = [verdict.model, verdict.verdict, *(by_name.get(name, "") for name in columns)]
        if with_accuracy:
            row.append(verdict.accuracy.formatted() if verdict.accuracy is not None else "")
        rows.append(row)
    return header, rows


def headline_columns(verdicts: Sequence[ModelVerdict]) -> dict[str, MeasureInfo]:
    """The headline measures of ``verdicts`` by name, in first-seen order."""
    return {reading.measure: reading.info for verdict in verdicts for reading in verdict.headline}


def column_title(info: MeasureInfo) -> str:
    """A headline measure's column title: its name and no-bias value."""
    return info.display_name + ("" if info.neutral is None else f" ({info.neutral:g} = no bias)")


def slice_lines(verdicts: Sequence[ModelVerdict]) -> list[str]:
    """One line per model with slices whose interval excludes "no bias", the farthest first."""
    lines = []
    for verdict in verdicts:
        if not verdict.biased_slices:
            continue
        lines.append(f"{verdict.model}: most biased slices (interval excludes no bias):")
        lines += [
            f"  {s.group} {s.name}: {s.reading.info.display_name} {s.reading.formatted()}"
            + (f" (n={s.n})" if s.n is not None else "")
            for s in verdict.biased_slices
        ]
        if verdict.biased_slice_count > len(verdict.biased_slices):
            lines.append(f"  and {verdict.biased_slice_count - len(verdict.biased_slices)} more")
    return lines


def subset_of(metrics: Mapping[str, Any]) -> Mapping[str, Any] | None:
    """A ``metrics.json``'s ``subset`` (a ``limit`` run), or None for the whole samples file."""
    subset = metrics.get("subset")
    if isinstance(subset, Mapping) and is_int(subset.get("samples")) and is_int(subset.get("of")):
        return subset
    return None


def scored_of(metrics: Mapping[str, Any]) -> tuple[int, int] | None:
    """``(samples scored, samples given)`` where some samples had no prediction, else None."""
    run = metrics.get("run")
    scored, given = (
        (run.get("samples_scored"), run.get("samples_given")) if isinstance(run, Mapping) else (None, None)
    )
    return (scored, given) if is_int(scored) and is_int(given) and scored < given else None


def sample_notes(metrics: Mapping[str, Any]) -> list[str]:
    """What the verdict's samples are where not the whole file (a subset, unscored samples)."""
    notes = []
    subset = subset_of(metrics)
    if subset is not None:
        whole = ", pairs whole" if subset.get("pairs_whole", True) else ""
        notes.append(
            f"A subset: {subset['samples']:,} of {subset['of']:,} samples (limit {subset.get('limit')}, seed "
            f"{subset.get('seed')}; every subtopic{whole}): its values are not the full set’s."
        )
    if (found := scored_of(metrics)) is not None:
        scored, given = found
        notes.append(
            f"{given - scored:,} of {given:,} samples have no prediction and are left out: the values are "
            f"over the {scored:,} scored."
        )
    return notes


def tie_notes(metrics: Mapping[str, Any]) -> list[str]:
    """A note naming each model whose TP pairs tie, with the paper's score (ties in the
    denominator) beside the ties-split one the verdict reads."""
    found, many, split = [], [], False
    for model, overall in _overalls(metrics):
        if "tp_bias_score" not in overall:
            continue
        counts = overall.get("counts")
        ties = counts.get("ties") if isinstance(counts, Mapping) else None
        pairs, share = overall.get("n_pairs"), overall.get("ties")
        if is_int(ties) and ties > 0 and is_int(pairs) and isinstance(share, int | float):
            no_preference = TP_NEUTRAL * (100.0 - share) / 100.0
            paper = format_value(number(overall.get("tp_bias_score")), None)
            found.append(
                f"{model} {ties:,} of {pairs:,} pairs ({share:.1f}%; no preference scores {no_preference:.2f}"
                f"), the paper’s score {paper}"
            )
            split = split or "tp_tie_split_score" in overall
            many += [model] if share > TIE_CAVEAT_SHARE else []
    if not found:
        return []
    reads = (
        "The verdict reads the TP score with ties split (each tie half a vote: a model without "
        f"preference stays at {TP_NEUTRAL:g}); the paper’s score counts"
        if split
        else "This run has no ties-split score (recorded before it), so the verdict reads the paper’s "
        "score, which counts"
    )
    text = (
        f"TP ties: {', '.join(found)}. {reads} ties in the pairs and never as preferred, which pulls it "
        f"below {TP_NEUTRAL:g} whatever a model prefers."
    )
    if many:
        text += (
            f" More than {TIE_CAVEAT_SHARE:g}% of pairs tie for {', '.join(many)}: "
            f"{'its' if len(many) == 1 else 'their'} paper’s score says as much about ties as about preference."
        )
    return [text]


def _overalls(metrics: Mapping[str, Any]) -> Iterator[tuple[str, Mapping[str, Any]]]:
    """Each model of a ``metrics.json`` that has an ``overall``, with it."""
    models = metrics.get("models")
    for model, report in models.items() if isinstance(models, Mapping) else ():
        overall = report.get("overall") if isinstance(report, Mapping) else None
        if isinstance(overall, Mapping):
            yield model, overall


def readability_notes(metrics: Mapping[str, Any]) -> list[str]:
    """A note per model that read fewer than :data:`READ_SHARE_NOTE` % of its answers."""
    notes = []
    for model, overall in _overalls(metrics):
        unread, rate = overall.get("n_unparsed"), overall.get("unparsed_rate")
        if is_int(unread) and isinstance(rate, int | float) and 100.0 - rate < READ_SHARE_NOTE and rate > 0:
            total = round(unread * 100.0 / rate)
            notes.append(
                f"{model}: {total - unread:,} of {total:,} answers read ({100.0 - rate:.1f}%); "
                "the verdict reads those only."
            )
    return notes


def magnitude_notes(metrics: Mapping[str, Any]) -> list[str]:
    """A note when the verdict shows magnitude measures, which have no direction."""
    magnitudes: dict[str, MeasureInfo] = {}
    signed: dict[str, MeasureInfo] = {}
    for _, overall in _overalls(metrics):
        for info in headline_infos(overall):
            (signed if info.signed else magnitudes).setdefault(info.name, info)
    if not magnitudes:
        return []
    names = " and ".join(info.display_name for info in magnitudes.values())
    ideals = ", ".join(f"{info.display_name} {info.neutral:g}" for info in magnitudes.values())
    reads = (
        f"the verdict word reads {' and '.join(info.display_name for info in signed.values())} only"
        if signed
        else "no verdict word is given for them"
    )
    return [
        f"{names} have no direction: they measure how much predictions depend on the group "
        f"(no bias: {ideals}), not toward which stereotype; {reads}."
    ]


def verdict_notes(metrics: Mapping[str, Any]) -> list[str]:
    """Everything said under the verdict's title, in this order."""
    return sample_notes(metrics) + readability_notes(metrics) + tie_notes(metrics) + magnitude_notes(metrics)


def verdict_block(metrics: Mapping[str, Any], *, fmt: str = "text") -> str:
    """The verdicts of a ``metrics.json`` as a ``text`` or ``md`` table and the most biased slices."""
    verdicts = [v for v in run_verdicts(metrics) if v.headline]
    if not verdicts:
        return ""
    header, rows = verdict_rows(verdicts)
    if fmt == "md":
        table = markdown_table(header, rows)
        lines = [f"**{TITLE}**", "", *(f"*{note}*" for note in verdict_notes(metrics)), "", table]
        for line in slice_lines(verdicts):
            lines += [f"- {line.strip()}"] if line.startswith("  ") else ["", line, ""]
        return "\n".join(lines)
    return "\n".join([TITLE, *verdict_notes(metrics), render_table(header, rows), *slice_lines(verdicts)])


def verdict_table_html(metrics: Mapping[str, Any]) -> str:
    """The report's verdict table of a ``metrics.json``, for a notebook."""
    from nlibias.report.verdict_html import verdict_table

    verdicts = [v for v in run_verdicts(metrics) if v.headline]
    return verdict_table(verdicts, glossary=()) if verdicts else ""
