"""``nlibias audit`` (run models over samples), ``nlibias score`` (score existing predictions) and
``nlibias explain`` (label the explanations of a run's generated answers with NLI judges)."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from nlibias.cli import options
from nlibias.cli.app import app, echo_json, warn
from nlibias.runtime.options import ModelOptions
from nlibias.textio.tables import render_table

if TYPE_CHECKING:
    from nlibias.jobs.results import AuditResult


def _print_result(result: AuditResult, as_json: bool, by: str) -> None:
    if as_json:
        echo_json(result.metrics)
        return
    typer.echo(result.tables(by=by))
    if result.out_dir is not None:
        typer.echo(f"\nwrote {result.out_dir / 'predictions.jsonl'} and {result.out_dir / 'metrics.json'}")


_MODEL_OPT = typer.Option(
    "--model", help="NLI classifier: Hugging Face name or local path (repeatable); fake:NAME for a dry run."
)
_GENERATIVE_OPT = typer.Option(
    "--generative", help="Generative LM: smollm2, hf:NAME, gguf:PATH, openai:URL#MODEL (repeatable)."
)
_PROMPT_OPT = typer.Option(
    "--prompt", help="Prompt style for generative LMs: true, entailed, or a prompt file (repeatable)."
)
_MLM_OPT = typer.Option(
    "--mlm",
    help="Masked LM scoring the samples' sentence pairs (token-probability bias, pseudo-log-likelihood): "
    "Hugging Face name or local path (repeatable).",
)
_CAUSAL_OPT = typer.Option(
    "--causal",
    help="Causal LM scoring the sentence pairs (token-probability bias): smollm2, a .gguf path, a hub "
    "name or local path, or openai-completions:URL#MODEL (a server with echo + logprobs) (repeatable).",
)
_TP_VARIANT_OPT = typer.Option(
    "--tp-variant",
    help="Token-probability score: shared (tokens the two sentences share, as CrowS-Pairs/WinoQueer) "
    "or whole (every token, as lm-evaluation-harness) (repeatable).",
)
_PREDICTIONS_OPT = typer.Option(
    "--predictions",
    help="JSONL with id, label, optional model and probs; or an lm-eval --log_samples file "
    "(samples_TASK_*.jsonl) or an Inspect log (.eval) of an exported task (docs/integrations.md). "
    "Repeat it, or quote a glob pattern ('logs/*.eval'), to score several files together.",
)
_ANSWER_COLUMN_OPT = typer.Option(
    "--answer-column",
    help="The files hold answer strings in this column (BBQ: the upstream results files, e.g. "
    "unifiedqa-t5-11b_pred_race), read as the sample's options; the column names the model.",
)


def _print_model_stats(result: AuditResult, as_json: bool) -> None:
    """Per model: what was computed and read from the cache (stderr), and warnings on truncated
    pairs and rejected cache entries."""
    for name, info in result.metrics["run"]["models"].items():
        stats = info.get("stats", {})
        if not as_json and stats:
            typer.echo(
                f"{name}: {stats.get('computed', 0)} computed, {stats.get('cached', 0)} from cache"
                + (f", {stats['pairs_per_second']} pairs/s" if stats.get("computed") else "")
                + (
                    f", padding efficiency {stats['padding_efficiency']}"
                    if stats.get("padded_tokens")
                    else ""
                ),
                err=True,
            )
        if stats.get("truncated_pairs"):
            warn(
                f"{name}: {stats['truncated_pairs']} pairs are longer than the model's maximum length and were "
                "truncated to it (counted in metrics.json run.models.*.stats.truncated_pairs)"
            )
        if stats.get("cache_rejected"):
            warn(
                f"{name}: {stats['cache_rejected']} cache entries were recomputed (not used): damaged, moved "
                "from another key, or written by an older nlibias without a checksum of their key"
            )


@app.command("audit")
@options.with_fields(ModelOptions, after="tp_variant", skip=["compile", "devices", "ray_address"])
def audit_command(
    samples: options.Samples,
    out: options.Out,
    model: Annotated[list[str], _MODEL_OPT] = [],  # noqa: B006 (Typer reads the default, never mutates it)
    generative: Annotated[list[str], _GENERATIVE_OPT] = [],  # noqa: B006
    prompt: Annotated[list[str], _PROMPT_OPT] = [],  # noqa: B006
    mlm: Annotated[list[str], _MLM_OPT] = [],  # noqa: B006
    causal: Annotated[list[str], _CAUSAL_OPT] = [],  # noqa: B006
    tp_variant: Annotated[list[str], _TP_VARIANT_OPT] = ["shared"],  # noqa: B006
    compile_model: options.Compile = False,
    devices: options.Devices = None,
    ray: options.Ray = None,
    cache: options.Cache = None,
    no_cache: options.NoCache = False,
    bootstrap: options.Bootstrap = 1000,
    seed: options.DrawSeed = 0,
    by: options.By = "domain",
    limit: options.Limit = None,
    as_json: options.Json = False,
    quiet: options.Quiet = False,
    **model_settings: Any,
) -> None:
    """Run NLI classifiers, generative LMs and/or sentence-scoring LMs over the samples and report
    the bias measures: predictions.jsonl, metrics.json and tables.txt go into --out."""
    given = locals()
    given |= given.pop("model_settings")
    options.refuse_inapplicable_options(audit_command, given)
    from nlibias.jobs.audit import run_audit
    from nlibias.report.tables import check_slice
    from nlibias.runtime.model_set import ModelSet
    from nlibias.runtime.options import RunOptions

    check_slice(by)  # before the models run
    given |= {
        "compile": compile_model,
        "ray_address": ray,
        "devices": tuple(devices.split(",")) if devices is not None else (),
        "cache": options.cache_setting(cache, no_cache),
        "progress": options.show_progress(quiet, as_json),
    }
    model_options = ModelOptions.of(**{field: given[field] for field in ModelOptions.model_fields})
    run = RunOptions.of(**{field: given[field] for field in RunOptions.model_fields})
    models = ModelSet.of(model, generative, prompt, mlm=mlm, causal=causal, tp_variants=tp_variant)
    result = run_audit(samples, models, options=model_options, run=run, out_dir=out)
    _print_model_stats(result, as_json or quiet)
    _print_result(result, as_json, by)


@app.command("score")
def score_command(
    samples: options.Samples,
    predictions: Annotated[list[str], _PREDICTIONS_OPT],
    answer_column: Annotated[str | None, _ANSWER_COLUMN_OPT] = None,
    out: options.OptionalOutDir = None,
    bootstrap: options.Bootstrap = 1000,
    seed: options.DrawSeed = 0,
    by: options.By = "domain",
    as_json: options.Json = False,
    quiet: options.Quiet = False,
) -> None:
    """Score predictions files (from nlibias or any other tool) with the benchmark's measures
    (--out: a run directory for metrics.json and a copy of the predictions)."""
    options.refuse_inapplicable_options(score_command, locals())
    from nlibias.jobs.score import run_score
    from nlibias.report.tables import check_slice

    check_slice(by)

    result = run_score(
        samples, predictions, out_dir=out, bootstrap=bootstrap, seed=seed, answer_column=answer_column
    )
    scored, given = result.metrics["run"]["samples_scored"], result.metrics["run"]["samples_given"]
    if scored < given and not as_json:  # a warning, so --quiet keeps it
        warn(f"{given - scored} of {given} samples have no prediction and are left out")
    _print_result(result, as_json, by)


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
    options.refuse_inapplicable_options(explain_command, locals())
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
    typer.echo(f"wrote {result.out_dir}{reused}")  # what was recomputed: the library's warning, above
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
