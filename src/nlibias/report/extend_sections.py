"""What the report shows of an extension run: its dataset card and "Fill models compared" table."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from nlibias.report.html_parts import escape, table
from nlibias.report.load import Run, read_json

DATASET_DIR = "dataset"
CARD_FILE = "README.md"
FILL_COMPARE = "filter/fill_compare.json"


def is_extend_run(run: Run) -> bool:
    """An ``nlibias extend`` run directory: a ``run.json`` with its list of stages."""
    return isinstance(run.run_json.get("stages"), list)


def fill_comparison(run: Run) -> Mapping[str, Any] | None:
    """``filter/fill_compare.json`` of an extension run that compared two fills or more."""
    data = read_json(run.path / FILL_COMPARE)
    rows = data.get("rows")
    return (
        data if isinstance(rows, list) and len(rows) >= 2 and all(isinstance(r, dict) for r in rows) else None
    )


def _percent(value: Any) -> str:
    return "-" if not isinstance(value, int | float) or isinstance(value, bool) else f"{100 * value:.1f}%"


def fill_comparison_html(comparison: Mapping[str, Any]) -> str:
    """The "Fill models compared" table (the card's columns) as HTML."""
    headers = ["fill model", "kind", "candidates", "variants per template", "distinct words"]
    headers += ["meaning changed (proxy)", "kept by filter"]
    texts = ("fill_model", "kind", "candidates", "variants_per_template", "distinct_words")
    rows = [
        [
            *(escape(r.get(k, "")) for k in texts),
            *(_percent(r.get(k)) for k in ("meaning_changed", "keep_rate")),
        ]
        for r in comparison["rows"]
    ]
    own = escape(comparison["rows"][0].get("fill_model", ""))
    note = (
        f"<p>The same {escape(comparison.get('masked_samples', '?'))} masked samples filled by each model "
        f"(top-{escape(comparison.get('top_k', '?'))}); only the run's own fill ({own}) makes the dataset.</p>"
    )
    return note + table(headers, rows, numeric_from=2)


def extend_card_html(runs: Sequence[Run]) -> str:
    """Each extension run's dataset card not shown yet, else its "Fill models compared" table."""
    parts = []
    for run in runs:
        if not is_extend_run(run) or run.card_text() is not None:
            continue
        try:  # the card the export stage wrote holds the fill comparison
            card = (run.path / DATASET_DIR / CARD_FILE).read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            card = None
        if card is not None:
            summary = f"{escape(run.label)}: dataset card ({escape(DATASET_DIR + '/' + CARD_FILE)})"
            parts.append(f"<details open><summary>{summary}</summary><pre>{escape(card)}</pre></details>")
            continue
        comparison = fill_comparison(run)
        if comparison is not None:
            parts.append(
                f"<h3>{escape(run.label)}: Fill models compared</h3>{fill_comparison_html(comparison)}"
            )
    return "".join(parts)
