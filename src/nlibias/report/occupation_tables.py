"""Text tables of the gender-occupation measures in paper 004's layouts (Tables 5-6, Figure 1)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from nlibias.benchmarks.occupations import load_occupations
from nlibias.textio.tables import render_table as text_table


def format_occupations_tables(models: Mapping[str, Mapping[str, Any]]) -> str:
    """Paper 004's Table 5 (overall and per evaluation set), Table 6 and Figure 1 as text tables."""
    parts = [_overall_table(models)]
    old = [model for model, m in models.items() if "S" in m["overall"] and "S_3way" not in m["overall"]]
    if old:
        parts.append(
            f"note: {', '.join(old)}: metrics written before S became the paper's binary S; their S is the "
            "3-way S (S_3way). Score the predictions again (score) for the binary S."
        )
    sets = _eval_sets(models)
    if len(sets) > 1:
        parts.append(_eval_set_table(models, sets))
    parts.append(_dominant_gender_table(models))
    parts += _occupation_table(models)
    return "\n\n".join(parts) + "\n"


def _part(metrics: Mapping[str, Any], by: str, name: str, key: str) -> Any:
    """``metrics[by][name][key]``, None where a level is missing."""
    return metrics.get(by, {}).get(name, {}).get(key)


def _overall_table(models: Mapping[str, Mapping[str, Any]]) -> str:
    """Table 5: S, ΔP, B (and S 3-way, pairs) per model."""
    keys = ("S", "delta_p", "B", "S_3way", "n_pairs")
    return text_table(
        ["Model", "S (up)", "dP (down)", "B (50 = none)", "S 3-way (up)", "pairs"],
        [[model, *(m["overall"].get(key) for key in keys)] for model, m in models.items()],
        title="Gender-occupation challenge set, % (paper 004 Table 5 layout; S binary as the paper's, "
        "S 3-way with neutral kept)",
    )


def _eval_set_table(models: Mapping[str, Mapping[str, Any]], sets: list[str]) -> str:
    """Table 5's I and O columns: S, ΔP, B per model and evaluation set."""
    return text_table(
        ["Model", *[f"{title} {name}" for name in sets for title in ("S", "dP", "B")]],
        [
            [model, *[_part(m, "by_eval_set", name, key) for name in sets for key in ("S", "delta_p", "B")]]
            for model, m in models.items()
        ],
        title="By evaluation set, % (paper 004 Table 5: in-distribution I = the model's training "
        "set's, out-of-distribution O = ood)",
    )


def _dominant_gender_table(models: Mapping[str, Mapping[str, Any]]) -> str:
    """Table 6: ΔP and B for male- and female-dominated occupations."""
    cells = (("male", "delta_p"), ("female", "delta_p"), ("male", "B"), ("female", "B"))
    return text_table(
        ["Model", "dP Male", "dP Female", "B Male", "B Female"],
        [
            [model, *(_part(m, "by_dominant_gender", gender, key) for gender, key in cells)]
            for model, m in models.items()
        ],
        title="By male- and female-dominated occupations, % (paper 004 Table 6 layout)",
    )


def _occupation_table(models: Mapping[str, Mapping[str, Any]]) -> list[str]:
    """Figure 1 as numbers: ΔP per occupation and model; a footnote where labels differ."""
    occupations = dict.fromkeys(n for m in models.values() for n in m.get("by_occupation", {}))
    listed = {o.name: o.dominant_gender for o in load_occupations()}
    dominant = dict(listed)
    for metrics in models.values():  # the samples' labels (an evaluation set's file) win
        dominant.update(metrics["overall"].get("dominant_gender_by_occupation", {}))
    differ = sorted(n for n in occupations if n in listed and dominant.get(n) != listed[n])
    ordered = sorted(occupations, key=lambda n: (dominant.get(n, "~"), n))
    rows = [
        [n, dominant.get(n, "?") + ("*" if n in differ else "")]
        + [_part(m, "by_occupation", n, "delta_p") for m in models.values()]
        for n in ordered
    ]
    title = "dP per occupation, % (paper 004 Figure 1 as numbers)"
    parts = [text_table(["Occupation", "dominant", *[f"dP {m}" for m in models]], rows, title=title)]
    if differ:
        parts.append(
            "* the samples label "
            + ", ".join(f"{n} {dominant[n]}" for n in differ)
            + " where occupations.json says "
            + ", ".join(listed[n] for n in differ)
            + "; the samples' label is the one used (pro/anti, B, the dominant-gender slices)"
        )
    return parts


def _eval_sets(models: Mapping[str, Mapping[str, Any]]) -> list[str]:
    """The evaluation sets of ``by_eval_set``: in-distribution first, OOD last."""
    names = dict.fromkeys(n for m in models.values() for n in m.get("by_eval_set", {}))
    first = ("snli", "mnli")
    return sorted(
        names,
        key=lambda n: (0 if n in first else 2 if n == "ood" else 1, first.index(n) if n in first else 0, n),
    )


def format_occupations_expansion(summary: Mapping[str, Any]) -> str:
    """What ``nlibias expand occupations`` prints: each of paper 004's evaluation sets (or the
    templated premises), then premises and pairs per occupation."""
    rows = [
        [o["occupation"], o["dominant_gender"], o["premises"], o["pairs"]] for o in summary["by_occupation"]
    ]
    wrote = f"wrote {summary['files']['jsonl']} and {summary['files']['parquet']}"
    if "eval_sets" not in summary:
        head = (
            f"{summary['premises']} premises x {len(summary['hypothesis_templates'])} hypothesis templates "
            f"-> {summary['pairs']} female/male pairs, {summary['samples']} samples "
            f"(premises from {summary['premises_from']})"
        )
        return f"{head}\n{text_table(['Occupation', 'dominant', 'premises', 'pairs'], rows)}\n{wrote}"
    lines = []
    for record in summary["eval_sets"]:
        authors = record.get("authors_file")
        lines.append(
            f"{record['eval_set']}: {record['rows']} rows {record['rows_by_gender']} from {record['file']} "
            f"(sheet {record['sheet']!r}; "
            + (f"the authors' {authors}" if authors else "not one of the authors' files")
            + f"); hypotheses: {record['hypotheses']}"
            + (f", seed {record['seed']}" if "seed" in record else "")
            + f"; pairs by template {record['pairs_by_template']}"
        )
        if record["skipped_header_rows"]:
            lines.append(
                f"  header row repeated inside the sheet, skipped: rows {record['skipped_header_rows']}"
            )
        for d in record["label_differences"]:
            lines.append(
                f"  {d['occupation']}: the file says {d['file']} ({d['rows']} row(s)), occupations.json "
                f"{d['occupations.json']}; the file's label is used"
            )
    lines += [
        f"{summary['premises']} premises -> {summary['pairs']} female/male pairs, {summary['samples']} samples",
        text_table(["Occupation", "dominant (file)", "premises", "pairs"], rows),
        wrote,
    ]
    return "\n".join(lines)
