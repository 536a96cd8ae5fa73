"""Text tables of the WinoQueer-NLI measures in paper 003's layouts (Tables 2-4)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from nlibias.metrics.wq_nli import M_KEYS, metric_r2
from nlibias.report.tp_tables import slice_table
from nlibias.textio.tables import render_table as text_table


def format_wq_nli_tables(models: Mapping[str, Mapping[str, Any]]) -> str:
    """Scores per model (Table 3), M1 per identity group and predicate category, R² (Table 4)."""
    parts = []
    rows = []
    for model, metrics in models.items():
        overall = metrics.get("overall", {})
        rows.append([model, *[overall.get(k) for k in M_KEYS], overall.get("n_rows")])
    parts.append(
        text_table(
            ["Model", *M_KEYS, "rows"],
            rows,
            title="WinoQueer-NLI bias scores, % of rows where the condition holds (paper 003 Tables 2-3)",
        )
    )
    for by, title in (
        ("by_identity_group", "M1 by identity group (%)"),
        ("by_predicate_category", "M1 by predicate category (%)"),
    ):
        parts.append(slice_table(models, by, "M1", "n_rows", title=title, sort=False))
    if len(models) >= 3:
        pairs = metric_r2(models)
        parts.append(
            text_table(
                ["Metric pair", "R2", "models"],
                [[p["pair"], p["r2"], p["n_models"]] for p in pairs],
                title="R2 between NLI metrics across models (paper 003 Table 4 lists pairs with R2 > 0.5)",
            )
        )
    else:
        parts.append("R2 between metrics (paper 003 Table 4) needs at least 3 audited models.")
    return "\n\n".join(parts) + "\n"
