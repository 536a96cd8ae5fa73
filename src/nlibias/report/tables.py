"""Plain-text tables in the papers' layouts (the report layer builds HTML/LaTeX on the same data)."""

from __future__ import annotations

import inspect
from collections.abc import Mapping, Sequence
from typing import Annotated, Any

from annotated_types import Predicate

from nlibias.benchmarks.base import Benchmark
from nlibias.report.metric_readers import slice_groups
from nlibias.report.tp_correlation import agreement_table
from nlibias.report.tp_tables import format_tp_nli_table
from nlibias.report.verdict_block import verdict_block
from nlibias.schema.declared import Allowed, declared
from nlibias.schema.model_keys import split_model_key
from nlibias.textio.tables import render_table

TABLE5_COLUMNS = {
    "pro_stereotype_bias": "Pro",
    "anti_stereotype_bias": "Anti",
    "bbnli_bias_score": "Aggregate",
}
"""BBNLI-next Table 5's measures and their column titles (text, HTML and paper tables alike)."""
TABLE7_COLUMNS = {"misprediction_rate": "Mispred", "cf_pro": "Pro", "cf_anti": "Anti", "cf_error": "Error"}


def format_bbnli_tables(models: Mapping[str, Mapping[str, Any]], *, by: str = "domain") -> str:
    """BBNLI-next Tables 5 and 7 and accuracy, a row per model and slice, with their counts."""
    table5: list[list[Any]] = []
    table7: list[list[Any]] = []
    accuracy: list[list[Any]] = []
    notes: list[str] = []
    for model, metrics in models.items():
        for name, m in slice_groups(metrics, kinds=[by]):
            table5.append([model, name, *(m[k] for k in ("n", *TABLE5_COLUMNS))])
            table7.append([model, name, *(m[k] for k in ("n_pairs", *TABLE7_COLUMNS))])
            tests = (m.get("n_test"), m.get("test_accuracy"), m.get("n_unanswered", 0))
            accuracy.append([model, name, m["n"], m["accuracy"], *tests])
        overall = metrics["overall"]
        if overall.get("degenerate_pairs"):
            notes.append(
                f"{model}: {overall['degenerate_pairs']} degenerate pairs (identical pro/anti texts) "
                f"are included; they can only count as correct or group-insensitive error."
            )
        if overall.get("unpaired"):
            notes.append(
                f"{model}: {len(overall['unpaired'])} unpaired samples are left out of the pair "
                f"measures (listed in metrics.json)."
            )
    parts = [
        render_table(
            ["Model", "Slice", "n", *TABLE5_COLUMNS.values()],
            table5,
            title="Pro-/anti-stereotype bias and the BBNLI aggregate score, % (BBNLI-next Table 5)",
        ),
        render_table(
            ["Model", "Slice", "pairs", *TABLE7_COLUMNS.values()],
            table7,
            title="Disaggregate counterfactual measures, % (BBNLI-next Table 7)",
        ),
        render_table(
            ["Model", "Slice", "n", "Accuracy", "n test", "Test acc", "no answer"],
            accuracy,
            title="Accuracy on bias-audit samples (gold: neutral) and on the test hypotheses, %",
        ),
    ]
    if notes:
        parts.append("\n".join(notes))
    return "\n\n".join(parts)


def format_expansion_table(rows: Sequence[Mapping[str, Any]]) -> str:
    """Per-subtopic counts of an expansion, with a total row."""
    body = [
        [r["domain"], r["subtopic"], r["bias"], r["pairs"], r["degenerate_pairs"], r["unpaired"], r["test"]]
        for r in rows
    ]
    totals = ["all", "", *(sum(r[i] for r in body) for i in range(2, 7))]
    return render_table(
        ["Domain", "Subtopic", "Bias samples", "Pairs", "Degenerate", "Unpaired", "Test"], [*body, totals]
    )


def format_bbnli_expansion(summary: Mapping[str, Any]) -> str:
    """What ``nlibias expand bbnli`` prints: per-subtopic counts and the totals."""
    totals = summary["totals"]
    return (
        format_expansion_table(summary["subtopics"])
        + f"\n\n{totals['bias']} bias-audit samples in {totals['pairs']} pro/anti pairs "
        f"({totals['degenerate_pairs']} degenerate, {totals['unpaired']} unpaired), "
        f"{totals['test']} test samples → {summary['files']['jsonl']}"
    )


def format_wq_nli_expansion(summary: Mapping[str, Any]) -> str:
    """What ``nlibias expand wq-nli`` prints: rows per identity group, categories, repeats."""
    rows = [
        [
            g["identity_group"],
            g["rows"],
            g["samples"],
            g["repeats"],
            ", ".join(f"{k} {v}" for k, v in g["counterfactuals"].items()),
        ]
        for g in summary["by_identity_group"]
    ]
    lines = [
        f"{summary['rows']} rows -> {summary['samples']} samples ({summary['pairs']} pro/anti pairs) "
        f"from {summary['path']}",
        render_table(["Identity group", "rows", "samples", "repeats", "counterfactuals"], rows),
        f"predicate category assigned to {summary['rows_with_predicate_category']} of {summary['rows']} "
        f"rows ({summary['distinct_predicates']} distinct predicates)",
    ]
    repeats = summary["repeats"]
    if repeats:
        shown = ", ".join(f"{r['row']}={r['repeats_row']}" for r in repeats[:8])
        more = f", ... ({len(repeats) - 8} more; the JSON summary lists all)" if len(repeats) > 8 else ""
        lines.append(f"{len(repeats)} repeated rows kept, each its own pair (row=earlier row): {shown}{more}")
    lines.append(f"wrote {summary['files']['jsonl']} and {summary['files']['parquet']}")
    return "\n".join(lines)


def model_kinds(metrics: Mapping[str, Any]) -> dict[str, str]:
    """Each model's predictor kind (``predictor_kinds``, else from the form of its key)."""
    recorded = metrics.get("predictor_kinds", {})
    return {
        model: recorded.get(model) or ("generative" if split_model_key(model) else "classifier")
        for model in metrics["models"]
    }


SLICES = ("domain", "subtopic")
Slice = Annotated[str, Predicate(SLICES.__contains__), Allowed("domain or subtopic")]
"""What the tables slice by (``by``)."""


@declared
def check_slice(by: Slice) -> None:
    """Refuse a ``by`` the tables do not slice by."""


def format_all_tables(metrics: Mapping[str, Any], benchmark: Benchmark, **options: Any) -> str:
    """Every text table of a ``metrics.json``: the verdict, each predictor kind's tables, the extras'."""
    if "by" in options:
        check_slice(options["by"])
    kinds = model_kinds(metrics)
    parts: list[str] = [verdict_block(metrics)]
    for kind, measures in benchmark.measures.items():
        models = {k: v for k, v in metrics["models"].items() if kinds[k] == kind}
        if not models:
            continue
        accepted = inspect.signature(measures.tables).parameters
        parts.append(measures.tables(models, **{k: v for k, v in options.items() if k in accepted}))
    parts += [extra.tables(metrics) for extra in benchmark.extras if extra.tables is not None]
    return "\n\n".join(p for p in parts if p)


def format_tp_nli(metrics: Mapping[str, Any]) -> str:
    """Paper 003 Table 3 and the item-level agreement, where a run holds NLI and TP models."""
    kinds = model_kinds(metrics)
    tp = {k: v for k, v in metrics["models"].items() if kinds[k] == "sentence-logprob"}
    nli = {k: v for k, v in metrics["models"].items() if kinds[k] == "classifier"}
    if not tp or not nli:
        return ""
    agreement = agreement_table(metrics.get("tp_nli_agreement") or [])
    extra = (
        [] if agreement is None else [render_table(agreement.headers, agreement.rows, title=agreement.title)]
    )
    return "\n\n".join([format_tp_nli_table(nli, tp), *extra])
