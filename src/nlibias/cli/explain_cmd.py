"""``nlibias explain``: label the explanations of a run's generated answers with NLI judges."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Annotated, Any

import typer

from nlibias.cli import options
from nlibias.cli.app import app, echo_json
from nlibias.textio.tables import render_table

_SHOWN = ("balanced_rate", "biased_pro_rate", "biased_anti_rate", "invalid_rate", "inconsistent_rate",
          "mean_grounded", "flip_rate")  # fmt: skip


@app.command("explain")
def explain_command(
    run: Annotated[
        Path, typer.Argument(help="Run directory of `nlibias audit --generative ... --mode generated`.")
    ],
    judge: options.NliJudges,
    threshold: Annotated[
        float,
        typer.Option(
            "--threshold", help="Grounded share below which an explanation is invalid (docs/generative.md)."
        ),
    ] = 0.5,
    samples: options.AuditedSamples = None,
    lm_judge: options.LmJudge = None,
    lm_judge_max_new_tokens: Annotated[
        int, typer.Option("--lm-judge-max-new-tokens", help="Token limit of the LM judge's answer.")
    ] = 8,
    device: options.Device = None,
    dtype: options.Dtype = None,
    max_tokens: options.MaxTokens = 8192,
    cache: options.Cache = None,
    no_cache: options.NoCache = False,
    bootstrap: options.Bootstrap = 1000,
    seed: options.DrawSeed = 0,
    quiet: options.Quiet = False,
    as_json: options.Json = False,
) -> None:
    """Label each generated explanation balanced / biased / invalid with NLI judges; write
    RUN/explanations/explanations.jsonl and explanations.json (rates with 95% intervals).

    --lm-judge asks a generative LM for each explanation's label as a second opinion; its agreement
    with each NLI judge (Cohen's kappa) is reported. --device, --dtype and --max-tokens apply to the
    judges."""
    from nlibias.explanations.run_files import fake_judge_warning
    from nlibias.jobs.explain import run_explain

    placing = {name: value for name, value in (("device", device), ("dtype", dtype)) if value is not None}
    result = run_explain(
        run, judge, threshold=threshold, samples=samples, cache=options.cache_setting(cache, no_cache),
        lm_judge=lm_judge, lm_judge_max_new_tokens=lm_judge_max_new_tokens, max_tokens=max_tokens,
        bootstrap=bootstrap, seed=seed, progress=options.show_progress(quiet, as_json), **placing,
    )  # fmt: skip
    if as_json:
        echo_json(result.summary)
        return
    reused = " (reused: same inputs as the finished run)" if result.reused else ""
    if result.redone:
        reused = f" (recomputed: {'; '.join(result.redone)})"
    typer.echo(f"wrote {result.out_dir}{reused}")
    warning = fake_judge_warning(result.summary)
    if warning is not None:
        typer.echo(f"warning: {warning}")
    typer.echo(summary_table(result.summary))
    for model, judges in result.summary.get("lm_agreement", {}).items():
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
    >>> print(summary_table(s))
    model | judge | n | unexplained | invalid_rate
    ------+-------+---+-------------+------------------
    m     | j     | 2 | 0           | 50.0 [0.0, 100.0]
    """
    header = ["model", "judge", "n", "unexplained"]
    rows: list[list[str]] = []
    shown = [name for name in _SHOWN if _any_has(summary, name)]
    for model, judges in summary.get("models", {}).items():
        for judge, slices in judges.items():
            overall = slices["overall"]
            cells = [model, judge, str(overall["n"]), str(overall["n_unexplained"])]
            for name in shown:
                value, ci = overall.get(name), overall.get("ci", {}).get(name)
                cell = "-" if value is None else f"{value:.1f}"
                cells.append(cell if ci is None else f"{cell} [{ci[0]:.1f}, {ci[1]:.1f}]")
            rows.append(cells)
    return render_table(header + shown, rows)


def _any_has(summary: Mapping[str, Any], name: str) -> bool:
    return any(
        name in slices["overall"]
        for judges in summary.get("models", {}).values()
        for slices in judges.values()
    )
