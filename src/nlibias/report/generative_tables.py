"""Text tables of the generative measures: answers and bias per model key (cf. paper 000 Table 7),
the most biased subtopics per prompt style (Table 8 layout), prompt-style sensitivity."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from nlibias.metrics.generative import group_keys, prompt_sensitivity
from nlibias.metrics.ranking import stored_ranking
from nlibias.report.text_table import render_table


def _fmt(value: Any, digits: int = 1) -> str:
    return "-" if value is None else f"{value:.{digits}f}"


def format_generative_tables(models: Mapping[str, Mapping[str, Any]]) -> str:
    """Text tables for the generative model keys of ``models`` (others are ignored):
    overall answers and bias per key (cf. paper Table 7), the four most biased subtopics per model
    and prompt style (Table 8 layout), and prompt-style sensitivity. Unparsed answers appear in
    every table.
    """
    groups = group_keys(models)
    if not groups:
        return ""
    overall_rows = []
    for (model, mode), keys in groups.items():
        for prompt, key in keys.items():
            o = models[key]["overall"]
            answered = (o.get("n_pro_answered") or 0) + (o.get("n_anti_answered") or 0)
            overall_rows.append(
                [
                    model,
                    prompt,
                    mode,
                    str(answered),
                    str(o.get("n_unparsed", 0)),
                    _fmt(o.get("yes_rate_pro")),
                    _fmt(o.get("yes_rate_anti")),
                    _fmt(o.get("accuracy")),
                    _fmt(o.get("cf_pro")),
                    _fmt(o.get("cf_anti")),
                    _fmt(o.get("cf_error")),
                    _fmt(o.get("mean_p_yes_pro")),
                    _fmt(o.get("mean_p_yes_anti")),
                ]
            )
    parts = [
        "Generative LMs: answers on bias-audit hypotheses (percent; yes = entailment, no = not entailed)",
        render_table(
            [
                "model",
                "prompt",
                "mode",
                "answered",
                "unparsed",
                "yes:pro",
                "yes:anti",
                "no-rate",
                "cf_pro",
                "cf_anti",
                "cf_error",
                "p(yes):pro",
                "p(yes):anti",
            ],
            overall_rows,
        ),
        "yes:pro = stereotype bias (yes on pro-stereotype hypotheses), yes:anti = anti-stereotype bias; "
        "no-rate = accuracy (the right answer is always no); cf_* = pair measures (yes/no = pro +1, "
        "no/yes = anti +1, yes/yes = error +2); p(yes) = mean probability of yes (scored answers only).",
    ]
    for (model, mode), keys in groups.items():
        prompts = list(keys)
        header, columns = ["rank"], []
        for prompt in prompts:
            metrics = models[keys[prompt]]
            unparsed = metrics["overall"].get("n_unparsed", 0)
            header += [f"prompt={prompt} (unparsed {unparsed})", "yes:pro", "p(yes):pro"]
            columns.append(stored_ranking(metrics))
        rows = []
        for rank in range(max((len(c) for c in columns), default=0)):
            row = [str(rank + 1)]
            for column in columns:
                item = column[rank] if rank < len(column) else None
                row += (
                    ["", "", ""]
                    if item is None
                    else [item["subtopic"], _fmt(item.get("yes_rate_pro")), _fmt(item.get("mean_p_yes_pro"))]
                )
            rows.append(row)
        parts += [
            "",
            f"Most biased subtopics: {model} ({mode}) (cf. paper Table 8)",
            render_table(header, rows),
        ]
    for group, sensitive in prompt_sensitivity(models).items():
        model, _, mode = group.rpartition("|")
        prompts = list(groups[(model, mode)])
        unparsed = ", ".join(
            f"{p}: {models[groups[(model, mode)][p]]['overall'].get('n_unparsed', 0)}" for p in prompts
        )
        scored = any(row["p_yes_spread"] is not None for row in sensitive)
        header = ["subtopic", *(f"yes:pro {p}" for p in prompts), "spread"]
        if scored:
            header += [*(f"p(yes):pro {p}" for p in prompts), "p(yes) spread"]
        table_rows = []
        for item in sensitive:
            cells = [
                item["subtopic"],
                *(_fmt(item["yes_rate_pro"].get(p)) for p in prompts),
                _fmt(item["spread"]),
            ]
            if scored:
                cells += [*(_fmt(item["mean_p_yes_pro"].get(p)) for p in prompts), _fmt(item["p_yes_spread"])]
            table_rows.append(cells)
        parts += [
            "",
            f"Prompt sensitivity: {model} ({mode}), by prompt style (unparsed {unparsed})",
            render_table(header, table_rows),
        ]
    return "\n".join(parts)
