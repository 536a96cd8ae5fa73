"""Do token-probability (TP) and NLI bias scores agree? (paper 003, Tables 3–4): R², r and n over
runs of one sentence scorer and one NLI classifier, and item by item (:func:`item_agreements`)."""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from nlibias.metrics.token_probability import r_and_r2, wq_nli_item_agreement
from nlibias.metrics.wq_nli import M_KEYS
from nlibias.report.figure_kit import OKABE_ITO, ModelsByRun, Plot, new_figure, render
from nlibias.report.metric_readers import has_measure, is_number, number, overall_of
from nlibias.report.paper_table_format import PaperTable
from nlibias.schema import Prediction, Sample
from nlibias.schema.columns import SampleColumns
from nlibias.schema.outputs import ModelOutputs

if TYPE_CHECKING:
    from nlibias.report.load import Run


def _paired_models(models: Mapping[str, Mapping[str, Any]]) -> tuple[dict[str, float], dict[str, Any]]:
    """A run's sentence scorers with a TP score and its models reporting M1."""
    tp = {
        k: score
        for k, m in models.items()
        if (score := number(overall_of(m).get("tp_bias_score"))) is not None
    }
    return tp, {k: overall_of(m) for k, m in models.items() if "M1" in overall_of(m)}


def correlation_points(runs: ModelsByRun) -> list[dict[str, Any]]:
    """``{"label", "TP", "M1", ..., "M8"}`` per run of exactly one TP and one NLI model (which
    belong together is otherwise unknown); the same point in several runs counts once."""
    points, seen = [], set()
    for label, models in runs:
        tp, nli = _paired_models(models)
        if len(tp) != 1 or len(nli) != 1:
            continue
        (tp_key, tp_score), (nli_key, overall) = next(iter(tp.items())), next(iter(nli.items()))
        measures = {k: number(overall.get(k)) for k in M_KEYS}
        identity = (tp_key, nli_key, tp_score, *measures.values())
        if identity in seen:
            continue
        seen.add(identity)
        name = f"{label} · {nli_key} / {tp_key}" if len(runs) > 1 else f"{nli_key} / {tp_key}"
        points.append({"label": name, "TP": tp_score, **measures})
    return points


def runs_not_paired(runs: ModelsByRun) -> list[str]:
    """The runs holding TP and NLI models that give no point: several of either kind."""
    found = []
    for label, models in runs:
        tp, nli = _paired_models(models)
        if tp and nli and (len(tp) > 1 or len(nli) > 1):
            found.append(label)
    return found


def correlation_rows(runs: ModelsByRun) -> list[dict[str, Any]]:
    """R², r and n for TP vs each of M1–M8 (over :func:`correlation_points`), then for every pair
    of NLI measures over the distinct NLI models."""

    def fit(a: str, b: str, items: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
        both = [(o[a], o[b]) for o in items if is_number(o.get(a)) and is_number(o.get(b))]
        return {"pair": f"{a} vs. {b}", "a": a, "b": b} | r_and_r2([x for x, _ in both], [y for _, y in both])

    distinct = {
        (name, *(repr(o.get(k)) for k in M_KEYS)): o
        for _, models in runs
        for name, m in models.items()
        if "M1" in (o := overall_of(m))
    }
    points, nli = correlation_points(runs), list(distinct.values())
    return [fit("TP", key, points) for key in M_KEYS] + [
        fit(a, b, nli) for a, b in itertools.combinations(M_KEYS, 2)
    ]


def correlation_table(runs: ModelsByRun) -> PaperTable | None:
    """Paper 003 Table 4 (metric pair, R², r, n); the caption names the runs that gave no point."""
    left_out = runs_not_paired(runs)
    if not correlation_points(runs) and not left_out:
        return None
    rows = [[r["pair"], r["r2"], r["r"], r["n"]] for r in correlation_rows(runs)]
    note = (
        f"; left out of TP vs NLI: {', '.join(left_out)} (several TP or NLI models in one run: which "
        "belong together is not known; audit each TP model with its NLI model in a run of its own)"
        if left_out
        else ""
    )
    return PaperTable(
        "tp_nli_r2",
        "R² between TP and NLI bias scores and among the NLI measures across models "
        "(paper 003: TP vs NLI ≤ 0.328; Table 4 lists the NLI pairs with R² > 0.5); a point of TP vs "
        f"NLI is a run of one TP and one NLI model, n counts distinct models{note}",
        ("Metric pair", "R²", "r", "n"),
        rows,
    )


def item_agreements(runs: Sequence[Run]) -> list[dict[str, Any]]:
    """TP preference vs M1 on the same rows for every (TP model, NLI model) of the runs, matched
    by sample id (possibly across runs); runs take part by their measures, not their ``source``."""
    rows = {
        i: {s.id: s for s in run.samples()} for i, run in enumerate(runs) if has_measure(run.models, "M1")
    }
    pairs = {
        (i, j)
        for i, own in rows.items()
        if own
        for j, run in enumerate(runs)
        if i == j
        or (has_measure(run.models, "tp_bias_score") and any(own.get(s.id) == s for s in run.samples()))
    }
    shown = sorted({k for pair in pairs for k in pair})
    prefix = {k: f"{runs[k].label} · " if len(shown) > 1 else "" for k in shown}
    tp: dict[int, dict[str, list[Any]]] = {k: {} for k in shown}
    nli: dict[int, dict[str, list[Any]]] = {k: {} for k in shown}
    for k in shown:
        for prediction in runs[k].predictions():
            if prediction.kind == "sentence-logprob":
                tp[k].setdefault(prediction.model, []).append(prediction)
            elif prediction.probs is not None and k in rows:
                nli[k].setdefault(prediction.model, []).append(prediction)
    return [
        {
            "tp_model": prefix[j] + t,
            "nli_model": prefix[i] + n,
            **item_agreement_of_rows(list(rows[i].values()), tp_rows, nli_rows),
        }
        for j in shown
        for t, tp_rows in tp[j].items()
        for i in shown
        if (i, j) in pairs
        for n, nli_rows in nli[i].items()
    ]


def item_agreement_of_rows(
    samples: Sequence[Sample], tp: Sequence[Prediction], nli: Sequence[Prediction]
) -> dict[str, Any]:
    """:func:`~nlibias.metrics.token_probability.wq_nli_item_agreement` of predictions matched
    to ``samples`` by id."""
    by_id = [{p.sample_id: p for p in rows} for rows in (tp, nli)]
    aligned = [[rows.get(s.id) for s in samples] for rows in by_id]
    return wq_nli_item_agreement(
        SampleColumns.from_samples(samples),
        ModelOutputs.of_predictions(aligned[0], "sentence-logprob"),
        ModelOutputs.of_predictions(aligned[1], "classifier"),
    )


def agreement_table(agreements: Sequence[Mapping[str, Any]]) -> PaperTable | None:
    if not agreements:
        return None
    rows = [
        [a["tp_model"], a["nli_model"], a["n"], a["agreement"], a["both"], a["tp_only"], a["m1_only"],
         a["neither"], a["kappa"]]
        for a in agreements
    ]  # fmt: skip
    return PaperTable(
        "tp_m1_items",
        "Item-level agreement of TP preference and M1 on the same WinoQueer-NLI rows (%; counts of rows)",
        ("TP model", "NLI model", "rows", "agree %", "both", "TP only", "M1 only", "neither", "kappa"),
        rows,
    )


def plot_tp_vs_nli(runs: ModelsByRun, *, measure: str = "M1", name: str = "tp_vs_nli") -> Plot | None:
    """Scatter of TP bias score against an NLI measure per model pair, with its least-squares line."""
    points = [p for p in correlation_points(runs) if p.get(measure) is not None]
    if not points:
        return None
    fit = r_and_r2([p["TP"] for p in points], [p[measure] for p in points])

    def draw() -> Any:
        fig = new_figure(3.4, 3.0)
        ax = fig.add_subplot()
        xs = np.array([p["TP"] for p in points], dtype=float)
        ys = np.array([p[measure] for p in points], dtype=float)
        ax.scatter(xs, ys, color=OKABE_ITO[4], s=18, zorder=3)
        for p in points:
            ax.annotate(
                p["label"], (p["TP"], p[measure]), fontsize=5, xytext=(3, 3), textcoords="offset points"
            )
        if fit["r2"] is not None:
            slope, intercept = np.polyfit(xs, ys, 1)
            grid = np.linspace(xs.min(), xs.max(), 2)
            ax.plot(grid, slope * grid + intercept, color=OKABE_ITO[5], linewidth=1)
        ax.axvline(50, color="#999999", linewidth=0.5, linestyle=":")
        ax.set_xlabel("TP bias score (%)")
        ax.set_ylabel(f"NLI {measure} (%)")
        return fig

    r2 = "n/a (fewer than 3 points)" if fit["r2"] is None else f"{fit['r2']:.3f}"
    return render(name, f"TP bias score vs {measure} across models (n = {fit['n']}, R² = {r2})", draw)
