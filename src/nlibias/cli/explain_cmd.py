"""``nlibias explain``: label the explanations of a run's generated answers with NLI judges."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import typer

from nlibias.cli.app import app, echo_json
from nlibias.cli.audit_cmd import _CACHE_OPT, _NO_CACHE_OPT, _cache_setting
from nlibias.cli.options import Json, Quiet, show_progress

_SHOWN = ("balanced_rate", "biased_pro_rate", "biased_anti_rate", "invalid_rate", "inconsistent_rate",
          "mean_grounded", "flip_rate")  # fmt: skip


@app.command("explain")
def explain_command(
    run: Path = typer.Argument(
        ..., help="Run directory of `nlibias audit --generative ... --mode generated`."
    ),
    judge: list[str] = typer.Option(
        ...,
        "--judge",
        help="NLI judge: Hugging Face name or local path, prompt:MODEL, fake:NAME (repeatable).",
    ),
    threshold: float = typer.Option(
        0.5, "--threshold", help="Grounded share below which an explanation is invalid (docs/generative.md)."
    ),
    samples: Path | None = typer.Option(
        None, "--samples", help="The samples the audit answered (default: the file the run records)."
    ),
    lm_judge: str | None = typer.Option(
        None,
        "--lm-judge",
        help="A generative LM asked for each explanation's label as a second opinion (smollm2, hf:NAME, "
        "openai:URL#MODEL); its agreement with each NLI judge (Cohen's kappa) is reported.",
    ),
    lm_judge_max_new_tokens: int = typer.Option(
        8, "--lm-judge-max-new-tokens", help="Token limit of the LM judge's answer."
    ),
    device: str | None = typer.Option(None, "--device", help="cpu, cuda, cuda:1, ... for the judges."),
    dtype: str | None = typer.Option(
        None, "--dtype", help="Weights of the judges: float32, bfloat16, float16."
    ),
    max_tokens: int = typer.Option(
        8192, "--max-tokens", help="Token budget of one batch (padding included)."
    ),
    cache: Path | None = _CACHE_OPT,
    no_cache: bool = _NO_CACHE_OPT,
    bootstrap: int = typer.Option(1000, "--bootstrap", help="Bootstrap resamples for the 95% CIs (0: none)."),
    seed: int = typer.Option(0, "--seed", help="Seed of the bootstrap."),
    quiet: Quiet = False,
    as_json: Json = False,
) -> None:
    """Label each generated explanation balanced / biased / invalid with NLI judges; write
    RUN/explanations/explanations.jsonl and explanations.json (rates with 95% intervals)."""
    from nlibias.jobs.explain import run_explain

    options: dict[str, Any] = {"max_tokens": max_tokens}
    if device is not None:
        options["device"] = device
    if dtype is not None:
        options["dtype"] = dtype
    result = run_explain(
        run, judge, threshold=threshold, samples=samples, cache=_cache_setting(cache, no_cache),
        lm_judge=lm_judge, lm_judge_max_new_tokens=lm_judge_max_new_tokens,
        bootstrap=bootstrap, seed=seed, progress=show_progress(quiet, as_json), **options,
    )  # fmt: skip
    if as_json:
        echo_json(result.summary)
        return
    reused = " (reused: same inputs as the finished run)" if result.reused else ""
    typer.echo(f"wrote {result.out_dir}{reused}")
    typer.echo(summary_table(result.summary))
    for model, judges in (result.summary.get("lm_agreement") or {}).items():
        for name, found in judges.items():
            kappa = "-" if found["kappa"] is None else f"{found['kappa']:.3f}"
            typer.echo(
                f"{model}: {name} vs LM judge {result.summary.get('lm_judge')}: kappa {kappa} over "
                f"{found['n']} explanations both labelled ({found['lm_unlabelled']} the LM left unlabelled)"
            )


def summary_table(summary: Mapping[str, Any]) -> str:
    """The overall rates per model and judge, each with its 95% interval.

    >>> s = {"models": {"m": {"j": {"overall": {"n": 2, "n_unexplained": 0, "invalid_rate": 50.0,
    ...      "ci": {"invalid_rate": [0.0, 100.0]}}}}}}
    >>> print(summary_table(s))  # doctest: +NORMALIZE_WHITESPACE
    model  judge  n  unexplained  invalid_rate
    m      j      2  0            50.0 [0.0, 100.0]
    """
    header = ["model", "judge", "n", "unexplained"]
    rows: list[list[str]] = []
    shown = [name for name in _SHOWN if _any_has(summary, name)]
    for model, judges in summary.get("models", {}).items():
        for judge, slices in judges.items():
            overall = slices["overall"]
            cells = [model, judge, str(overall["n"]), str(overall["n_unexplained"])]
            for name in shown:
                value, ci = overall.get(name), (overall.get("ci") or {}).get(name)
                cell = "-" if value is None else f"{value:.1f}"
                cells.append(cell if ci is None else f"{cell} [{ci[0]:.1f}, {ci[1]:.1f}]")
            rows.append(cells)
    table = [header + shown, *rows]
    widths = [max(len(row[i]) for row in table) for i in range(len(table[0]))]
    return "\n".join(
        "  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)).rstrip() for row in table
    )


def _any_has(summary: Mapping[str, Any], name: str) -> bool:
    return any(
        name in slices["overall"]
        for judges in summary.get("models", {}).values()
        for slices in judges.values()
    )
