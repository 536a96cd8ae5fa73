"""Text tables of the generative measures: answers and bias per model key, the most biased subtopics
per prompt style, prompt-style sensitivity."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from nlibias.metrics.generative import group_keys, prompt_sensitivity
from nlibias.metrics.verdicts import format_value
from nlibias.report.paper_tables import biased_subtopics, table8_notes
from nlibias.textio.tables import render_table


def _fmt(value: Any, digits: int = 1) -> str:
    return "-" if value is None else f"{value:.{digits}f}"


_Groups = dict[tuple[str, str], dict[str, str]]
_OVERALL_COLUMNS = {
    "yes:pro": "yes_rate_pro", "yes:anti": "yes_rate_anti", "no-rate": "accuracy", "cf_pro": "cf_pro",
    "cf_anti": "cf_anti", "cf_error": "cf_error", "p(yes):pro": "mean_p_yes_pro",
    "p(yes):anti": "mean_p_yes_anti",
}  # fmt: skip
_OVERALL_HEADER = ["model", "prompt", "mode", "answered", "unparsed", *_OVERALL_COLUMNS]


def format_generative_tables(models: Mapping[str, Mapping[str, Any]]) -> str:
    """Text tables for the generative model keys of ``models`` (others are ignored)."""
    groups = group_keys(models)
    if not groups:
        return ""
    parts = _overall_table(models, groups)
    for (model, mode), keys in groups.items():
        parts += [
            "",
            f"Most biased subtopics: {model} ({mode}) (cf. paper Table 8)",
            _ranking_table(models, keys),
        ]
    parts += table8_notes({"models": models})
    for group, sensitive in prompt_sensitivity(models).items():
        model, _, mode = group.rpartition("|")
        keys = groups[(model, mode)]
        unparsed = ", ".join(f"{p}: {_unparsed(models[keys[p]])}" for p in keys)
        parts += [
            "",
            f"Prompt sensitivity: {model} ({mode}), by prompt style (unparsed {unparsed})",
            _sensitivity_table(list(keys), sensitive),
        ]
    return "\n".join(parts)


def _unparsed(metrics: Mapping[str, Any]) -> Any:
    return metrics["overall"].get("n_unparsed", 0)


def _overall_row(model: str, prompt: str, mode: str, o: Mapping[str, Any]) -> list[str]:
    answered = (o.get("n_pro_answered") or 0) + (o.get("n_anti_answered") or 0)
    counts = [str(answered), str(o.get("n_unparsed", 0))]
    return [model, prompt, mode, *counts, *(_fmt(o.get(name)) for name in _OVERALL_COLUMNS.values())]


def _overall_table(models: Mapping[str, Mapping[str, Any]], groups: _Groups) -> list[str]:
    """Answers and bias per model key (cf. paper Table 7): title, table and legend."""
    rows = [
        _overall_row(model, prompt, mode, models[key]["overall"])
        for (model, mode), keys in groups.items()
        for prompt, key in keys.items()
    ]
    return [
        "Generative LMs: answers on bias-audit hypotheses (percent; yes = entailment, no = not entailed)",
        render_table(_OVERALL_HEADER, rows),
        "answered = bias-audit hypotheses answered; unparsed = answers not read, test hypotheses included; "
        "yes:pro = stereotype bias (yes on pro-stereotype hypotheses), yes:anti = anti-stereotype bias; "
        "no-rate = accuracy (the right answer is always no); cf_* = pair measures (yes/no = pro +1, "
        "no/yes = anti +1, yes/yes = error +2); p(yes) = mean probability of yes (scored answers only).",
    ]


def _ranking_table(models: Mapping[str, Mapping[str, Any]], keys: Mapping[str, str]) -> str:
    """The most biased subtopics of one model and mode, a column group per prompt style (Table 8)."""
    header, columns = ["rank"], []
    for prompt, key in keys.items():
        title = f"prompt={prompt} (unparsed {_unparsed(models[key])})"
        header += [title, "yes:pro [95% CI]", "p(yes):pro", "n"]
        columns.append(biased_subtopics(models[key]))
    rows = []
    for rank in range(max((len(c) for c in columns), default=0)):
        row = [str(rank + 1)]
        for column in columns:
            item = column[rank] if rank < len(column) else None
            row += (
                ["", "", "", ""]
                if item is None
                else [
                    item["subtopic"],
                    format_value(item["value"], item["interval"], digits=1),
                    _fmt(item.get("mean_p_yes_pro")),
                    "-" if item["n"] is None else str(item["n"]),
                ]
            )
        rows.append(row)
    if not rows:
        return "(no subtopic's interval excludes no bias)"
    return render_table(header, rows)


def _sensitivity_table(prompts: list[str], sensitive: list[dict[str, Any]]) -> str:
    """Yes-rates (and p(yes) for scored answers) per prompt style of the most sensitive subtopics."""
    scored = any(row["p_yes_spread"] is not None for row in sensitive)
    header = ["subtopic", *(f"yes:pro {p}" for p in prompts), "spread"]
    if scored:
        header += [*(f"p(yes):pro {p}" for p in prompts), "p(yes) spread"]
    rows = []
    for item in sensitive:
        cells = [
            item["subtopic"],
            *(_fmt(item["yes_rate_pro"].get(p)) for p in prompts),
            _fmt(item["spread"]),
        ]
        if scored:
            cells += [*(_fmt(item["mean_p_yes_pro"].get(p)) for p in prompts), _fmt(item["p_yes_spread"])]
        rows.append(cells)
    return render_table(header, rows)
