"""Text tables of token-probability (TP) bias in the layouts of CrowS-Pairs, WinoQueer and paper 003."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from nlibias.schema.model_keys import split_tp_key
from nlibias.textio.tables import render_table

_TP_HEADER = [
    "Model",
    "variant",
    "pairs",
    "TP score",
    "ties",
    "tie %",
    "stereo",
    "antistereo",
    "likelihood_diff",
]


def slice_table(
    models: Mapping[str, Mapping[str, Any]], slicing: str, measure: str, count: str, *, title: str, sort: bool
) -> str:
    """``measure`` per slice of ``slicing`` (rows) and model (columns), with the slice's ``count``."""
    names = list(dict.fromkeys(n for m in models.values() for n in m.get(slicing, {})))
    rows = []
    for name in sorted(names) if sort else names:
        found = [m.get(slicing, {}).get(name) for m in models.values()]
        n = next((part.get(count) for part in found if part is not None), None)
        rows.append([name, *(None if part is None else part.get(measure) for part in found), n])
    return render_table(["Group", *models, count.removeprefix("n_")], rows, title=title)


def format_tp_tables(models: Mapping[str, Mapping[str, Any]], *, by: str = "domain") -> str:
    """The TP summary per model (CrowS-Pairs ``metric.py`` layout) and the score per group."""
    rows = []
    for key, metrics in models.items():
        o = metrics["overall"]
        model, variant = split_tp_key(key) or (key, "")
        rows.append(
            [model, variant, o.get("n_pairs"), o.get("tp_bias_score"), o.get("counts", {}).get("ties"),
             o.get("ties"), o.get("stereo_score"), o.get("antistereo_score"), o.get("likelihood_diff")]
        )  # fmt: skip
    parts = [
        render_table(
            _TP_HEADER,
            rows,
            title="Token-probability bias, % of pairs where the more-stereotypical sentence is preferred "
            "(ideal 50; ties count in the pairs, never as preferred; CrowS-Pairs / WinoQueer metric)",
        )
    ]
    slicing = next((s for s in (f"by_{by}", "by_group", "by_domain", "by_identity_group") if any(
        s in m for m in models.values())), None)  # fmt: skip
    if slicing is not None:
        title = f"TP bias score {slicing.replace('_', ' ')} (%)"
        parts.append(slice_table(models, slicing, "tp_bias_score", "n_pairs", title=title, sort=True))
    notes = [
        f"{key}: {m['overall']['no_shared_tokens']} pairs have no shared scoreable token on a side (scored 0: ties)"
        for key, m in models.items() if m["overall"].get("no_shared_tokens")
    ]  # fmt: skip
    return "\n\n".join(parts + notes)


def format_tp_nli_table(nli: Mapping[str, Mapping[str, Any]], tp: Mapping[str, Mapping[str, Any]]) -> str:
    """Paper 003 Table 3: each model's TP bias score beside its NLI score (M1), per run."""
    rows: list[list[Any]] = [
        [k, "TP", m["overall"].get("tp_bias_score"), m["overall"].get("n_pairs")] for k, m in tp.items()
    ]
    rows += [[k, "NLI", m["overall"].get("M1"), m["overall"].get("n_rows")] for k, m in nli.items()]
    return render_table(
        ["Model", "task", "score", "items"],
        rows,
        title="WinoQueer TP and WinoQueer-NLI M1 bias scores, % (paper 003 Table 3 layout)",
    )


def format_pairs_expansion(summary: Mapping[str, Any]) -> str:
    """What ``nlibias expand crows-pairs|winoqueer|bbnli-tp|sentence-pairs`` prints."""
    groups = [[name, count] for name, count in summary["by_group"].items()]
    lines = [
        f"{summary['pairs']} sentence pairs from {summary['source']} "
        f"({', '.join(f'{k} {v}' for k, v in summary['by_direction'].items())})",
        render_table(["Group", "pairs"], groups),
        *summary.get("warnings", []),
    ]
    if "files" in summary:
        lines.append(f"wrote {summary['files']['jsonl']} and {summary['files']['parquet']}")
    return "\n".join(lines)
