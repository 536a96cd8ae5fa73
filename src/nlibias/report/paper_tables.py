"""Paper-ready tables in the papers' layouts, chosen by the measures present, never by ``source``."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

from nlibias.metrics import ranking
from nlibias.metrics.meta import ALL_MEASURES
from nlibias.metrics.ranking import TOP_SUBTOPICS, is_biased_subtopic, stored_ranking
from nlibias.metrics.verdicts import MIN_VERDICT_UNITS, run_verdicts
from nlibias.report.metric_readers import (
    GENERIC_SKIP,
    has_measure,
    measure_n,
    model_parts,
    numeric_measures,
    overall_of,
    slice_groups,
)
from nlibias.report.paper_table_format import TABLE_FORMATS as TABLE_FORMATS
from nlibias.report.paper_table_format import PaperTable as PaperTable
from nlibias.report.paper_table_format import format_table as format_table
from nlibias.report.tables import TABLE5_COLUMNS, TABLE7_COLUMNS
from nlibias.report.tp_correlation import correlation_table
from nlibias.report.verdict_block import verdict_block, verdict_notes

PaperRuns = Sequence[tuple[str, str, Mapping[str, Mapping[str, Any]]]]
"""Each run as ``(label, source, models)``."""
PROMPT_TITLES = {"true": "Prompt 1: True hypothesis", "entailed": "Prompt 2: Entailed hypothesis"}
MEASURE_TITLES = {"delta_p": "ΔP", "S": "S", "B": "B", "S_3way": "S 3-way"}
TABLE8_NOTE = (
    "Ranked, as the paper's Table 8, by the rate of pro-stereotype answers (yes on a pro-stereotype "
    "hypothesis for a generative LM, pro-stereotype bias for a classifier), not by pro - anti: a subtopic "
    "here may lean anti-stereotype in the verdict. Only subtopics whose 95% interval excludes 0 and that "
    f"hold at least {MIN_VERDICT_UNITS} units are listed, the highest first."
)


def table5(models: Mapping[str, Mapping[str, Any]]) -> PaperTable:
    """BBNLI-next Table 5: pro / anti bias and the aggregate score per model and domain."""
    title = "Pro-/Anti-stereotype bias scores and Aggregate bias score across models and bias domains (%)."
    return _by_domain(models, "table5", title, TABLE5_COLUMNS)


def table7(models: Mapping[str, Mapping[str, Any]]) -> PaperTable:
    """BBNLI-next Table 7: misprediction rate split into pro, anti and group-insensitive error."""
    title = (
        "Disaggregate counterfactual measures of bias (%): Pro-/Anti-stereotype bias and model error; "
        "they sum to the misprediction rate of the paired samples (Mispred is over every sample: "
        "the two differ where samples are unpaired or unanswered)."
    )
    return _by_domain(models, "table7", title, TABLE7_COLUMNS)


def _by_domain(
    models: Mapping[str, Mapping[str, Any]], key: str, title: str, columns: Mapping[str, str]
) -> PaperTable:
    """Model | Domain | each measure of ``columns`` under its title, a row per model and domain."""
    rows = [
        [model, name, *(m.get(k) for k in columns)]
        for model, metrics in models.items()
        for name, m in slice_groups(metrics, kinds=["domain"])
    ]
    return PaperTable(key, title, ("Model", "Domain", *columns.values()), rows, group_column=True)


def biased_subtopics(metrics: Mapping[str, Any], *, top: int = TOP_SUBTOPICS) -> list[dict[str, Any]]:
    """The ``top`` most biased subtopics of one model (Table 8) with ``value``, ``interval``, ``n``."""
    by_subtopic = metrics.get("by_subtopic")
    if isinstance(by_subtopic, Mapping) and by_subtopic:
        ranked = ranking.most_biased_subtopics(by_subtopic, top=top)
    else:
        by_subtopic = {}
        stored = stored_ranking(metrics, top=10**6)
        ranked = [e for e in stored if isinstance(e["measure"], str) and is_biased_subtopic(e, e["measure"])][
            :top
        ]
    kept: list[dict[str, Any]] = []
    for entry in ranked:
        measure = str(entry["measure"])
        slice_metrics = by_subtopic.get(entry["subtopic"], {})
        n = measure_n(slice_metrics, measure) if isinstance(slice_metrics, Mapping) else None
        bounds = entry.get("interval")
        kept.append(
            {
                **entry,
                "value": float(entry[measure]),
                "interval": tuple(bounds) if isinstance(bounds, list | tuple) else None,
                "n": measure_n(entry, measure) if n is None else n,
            }
        )
    return kept


def most_biased_subtopics(
    metrics: Mapping[str, Any], *, top: int = TOP_SUBTOPICS
) -> list[tuple[str, float, str]]:
    """``(subtopic, value, measure)`` of :func:`biased_subtopics`."""
    return [(str(e["subtopic"]), e["value"], str(e["measure"])) for e in biased_subtopics(metrics, top=top)]


def measures_sentence(documents: Sequence[Mapping[str, Any]]) -> str:
    """A sentence naming the measures the verdict reads and Table 8 ranks by, where they differ."""
    read = dict.fromkeys(r.measure for m in documents for v in run_verdicts(m) for r in v.headline)
    ranked = dict.fromkeys(
        str(entry["measure"])
        for m in documents
        for model in m.get("models", {}).values()
        for entry in biased_subtopics(model)
    )
    if not ranked or set(ranked) <= set(read):
        return ""

    def names(measures: Mapping[str, None]) -> str:
        return ", ".join(ALL_MEASURES[n].display_name if n in ALL_MEASURES else n for n in measures)

    return (
        f"The verdict reads {names(read)}; Table 8 ranks subtopics by {names(ranked)}, another "
        "measure, so a subtopic listed there does not contradict a verdict of no evidence of bias."
    )


def table8(models: Mapping[str, Mapping[str, Any]], *, top: int = TOP_SUBTOPICS) -> PaperTable | None:
    """BBNLI-next Table 8: the ``top`` most biased subtopics per model, one column pair per prompt."""
    grouped: dict[str, dict[str, list[tuple[str, float, str]]]] = {}
    prompts: list[str] = []
    for key, metrics in models.items():
        base, prompt = model_parts(key)
        if isinstance(metrics.get("prompt"), str) and metrics["prompt"]:
            prompt = metrics["prompt"]  # generative audits record their prompt style
        ranked = most_biased_subtopics(metrics, top=top)
        if not ranked:
            continue
        grouped.setdefault(base, {})[prompt] = ranked
        if prompt not in prompts:
            prompts.append(prompt)
    if not grouped:
        return None
    known = list(PROMPT_TITLES)
    prompts.sort(key=lambda p: (known.index(p) if p in known else len(known), p))
    headers: list[str] = ["LM"]
    for prompt in prompts:
        title = PROMPT_TITLES.get(prompt, f"Prompt: {prompt}" if prompt else "Subtopic")
        headers += [title, "%"]
    rows: list[list[Any]] = []
    for base, by_prompt in grouped.items():
        for rank in range(top):
            row: list[Any] = [base]
            for prompt in prompts:
                ranked = by_prompt.get(prompt, [])
                row += [ranked[rank][0], ranked[rank][1]] if rank < len(ranked) else ["", None]
            if any(v not in ("", None) for v in row[1:]):
                rows.append(row)
    measures = sorted(
        {r[2] for by_prompt in grouped.values() for ranked in by_prompt.values() for r in ranked}
    )
    return PaperTable(
        "table8",
        f"The {top} most biased subtopics per model and prompt style ({', '.join(measures)}, %): "
        "only subtopics whose 95% interval excludes no bias (0).",
        tuple(headers),
        rows,
        group_column=True,
        notes=table8_notes({"models": {k: v for k, v in models.items() if "overall" in v}}),
    )


def table8_notes(metrics: Mapping[str, Any]) -> list[str]:
    """What Table 8 says under it."""
    return [TABLE8_NOTE] + [sentence for sentence in [measures_sentence([metrics])] if sentence]


def wq_table3(runs: Sequence[tuple[str, Mapping[str, Mapping[str, Any]]]]) -> PaperTable | None:
    """WinoQueer-NLI Table 3: Model | TP <run> | NLI <run> (TP bias score, M1) per run."""
    labels = [label for label, _ in runs]
    model_names: list[str] = []
    for _, models in runs:
        model_names += [m for m in models if m not in model_names]
    with_tp = any("tp_bias_score" in overall_of(m) for _, models in runs for m in models.values())
    rows: list[list[Any]] = []
    for model in model_names:
        row: list[Any] = [model]
        for _, models in runs:
            overall = overall_of(models.get(model, {}))
            row += [overall.get("tp_bias_score")] if with_tp else []
            row.append(overall.get("M1"))
        rows.append(row)
    if not any(v is not None for r in rows for v in r[1:]):
        return None
    several = len(labels) > 1
    headers: list[str] = ["Model"]
    for label in labels:
        headers += [f"TP {label}" if several else "TP"] if with_tp else []
        headers.append(f"NLI {label}" if several else "NLI")
    return PaperTable(
        "wq_table3",
        "WinoQueer TP bias scores and WinoQueer-NLI bias scores measured by M1 (%)"
        if with_tp
        else "WinoQueer-NLI bias scores measured by M1 (%).",
        tuple(headers),
        rows,
    )


def generic_measures(models: Mapping[str, Mapping[str, Any]]) -> list[str]:
    """Every numeric measure in the models' ``overall``, in order of appearance."""
    found = (
        m for metrics in models.values() for m in numeric_measures(overall_of(metrics), skip=GENERIC_SKIP)
    )
    return list(dict.fromkeys(found))


def measures_title(name: str, measures: Sequence[str]) -> str:
    """A generic table's title from its measures and their declared units."""
    units = {m: ALL_MEASURES[m].unit for m in measures if m in ALL_MEASURES}
    stated = (["%"] if "%" in units.values() else []) + [f"{m} in {u}" for m, u in units.items() if u != "%"]
    stated += [f"{m} a count" for m in measures if m not in units]
    names = _name_list([MEASURE_TITLES.get(m, m) for m in measures])
    return f"{name} measures {names}" + (f" ({'; '.join(stated)})" if stated else "")


_NUMBERED = re.compile(r"(.*?)(\d+)")


def _name_list(names: Sequence[str]) -> str:
    """``names`` joined by commas, three or more consecutive numbered ones as a range."""
    parts: list[str] = []
    run: list[str] = []

    def flush() -> None:
        parts.extend([f"{run[0]}–{run[-1]}"] if len(run) >= 3 else run)
        run.clear()

    for name in names:
        match, last = _NUMBERED.fullmatch(name), _NUMBERED.fullmatch(run[-1]) if run else None
        follows = (
            match is not None
            and last is not None
            and match[1] == last[1]
            and int(match[2]) == int(last[2]) + 1
        )
        if not follows:
            flush()
        run.append(name)
    flush()
    return ", ".join(parts)


def generic_table(models: Mapping[str, Mapping[str, Any]], *, key: str, title: str) -> PaperTable | None:
    """Model | Slice | every numeric measure present (overall first, then every ``by_*`` slice)."""
    measures = generic_measures(models)
    if not measures:
        return None
    rows: list[list[Any]] = []
    for model, metrics in models.items():
        for slice_name, m in slice_groups(metrics):
            rows.append([model, slice_name, *(m.get(name) for name in measures)])
    headers = ("Model", "Slice", *(MEASURE_TITLES.get(m, m) for m in measures))
    return PaperTable(key, title, headers, rows, group_column=True)


def paper_tables(runs: PaperRuns) -> list[PaperTable]:
    """Every paper table the runs' measures support."""
    tables: list[PaperTable] = []
    several = len(runs) > 1
    for label, _source, models in runs:
        if _is_bbnli(models):
            found = [t for t in (table5(models), table7(models), table8(models)) if t is not None and t.rows]
            tables += [_relabel(t, label, f"{t.title} [{label}]") if several else t for t in found]
    # WinoQueer-NLI: the runs reporting M1 and every run of their sources (the sentence scorers')
    wq_sources = {source for _label, source, models in runs if has_measure(models, "M1")}
    wq = [(label, models) for label, source, models in runs if source in wq_sources]
    if wq:
        for table in (wq_table3(wq), correlation_table(wq)):
            if table is not None:
                tables.append(table)
    for label, source, models in runs:
        if _is_bbnli(models):
            continue
        title = measures_title(source, generic_measures(models)) + (f" [{label}]" if several else "")
        table = generic_table(models, key=f"{source}_measures", title=title)
        if table is not None:
            tables.append(_relabel(table, label, title) if several else table)
    return tables


def _relabel(table: PaperTable, label: str, title: str) -> PaperTable:
    """``table`` keyed by its run's ``label`` too, and retitled."""
    key = f"{table.key}_{''.join(ch if ch.isalnum() else '_' for ch in label)}" if label else table.key
    return replace(table, key=key, title=title)


def _is_bbnli(models: Mapping[str, Mapping[str, Any]]) -> bool:
    return has_measure(models, "cf_pro") or has_measure(models, "pro_stereotype_bias")


def verdict_blocks(runs: PaperRuns, documents: Mapping[str, Mapping[str, Any]]) -> list[str]:
    """The Markdown verdict block of each run (``documents``: label → its ``metrics.json``)."""
    blocks = []
    for label, _source, models in runs:
        block = verdict_block({**documents.get(label, {}), "models": models}, fmt="md")
        if block:
            blocks.append(f"**{label}**\n\n{block}" if len(runs) > 1 else block)
    return blocks


def comment_notes(runs: PaperRuns, fmt: str, documents: Mapping[str, Mapping[str, Any]]) -> list[str]:
    """The verdict notes as CSV (``#``) or LaTeX (``%``) comment lines."""
    mark = "#" if fmt == "csv" else "%"
    lines = [
        f"{mark} {label}: {note}"
        for label, _source, models in runs
        for note in verdict_notes({**documents.get(label, {}), "models": models})
    ]
    return ["\n".join(lines)] if lines else []


def render_tables(runs: PaperRuns, fmt: str, documents: Mapping[str, Mapping[str, Any]] | None = None) -> str:
    """All paper tables of ``runs`` in one format, after the verdict blocks (or their notes)."""
    if fmt not in TABLE_FORMATS:
        raise ValueError(f"unknown table format {fmt!r}; use one of {', '.join(TABLE_FORMATS)}")
    documents = documents or {}
    parts = verdict_blocks(runs, documents) if fmt == "md" else comment_notes(runs, fmt, documents)
    for table in paper_tables(runs):
        body = format_table(table, fmt)
        if fmt == "md":
            parts.append(f"**{table.title}**\n\n{body}" + "".join(f"\n\n*{note}*" for note in table.notes))
        else:
            mark = "#" if fmt == "csv" else "%"
            title = [f"# {table.title}"] if fmt == "csv" else []
            parts.append("\n".join([*title, body, *(f"{mark} {note}" for note in table.notes)]))
    return "\n\n".join(parts) + ("\n" if parts else "")
