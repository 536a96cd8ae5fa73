"""``nlibias audit`` (run models over samples) and ``nlibias score`` (score existing predictions)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import typer

from nlibias.cli.app import app, echo_json, warn
from nlibias.cli.options import Json, Limit, Quiet, show_progress
from nlibias.models.generative.defaults import DEFAULT_MAX_NEW_TOKENS

if TYPE_CHECKING:
    from nlibias.jobs.results import AuditResult

_BY_HELP = "Slices in the printed tables: domain or subtopic (metrics.json always has both)."
_BOOTSTRAP_OPT = typer.Option(1000, "--bootstrap", help="Bootstrap resamples for the 95% CIs (0: none).")
_SEED_OPT = typer.Option(0, "--seed", help="Seed of the bootstrap.")
_BY_OPT = typer.Option("domain", "--by", help=_BY_HELP)


def _print_result(result: AuditResult, as_json: bool, by: str) -> None:
    if as_json:
        echo_json(result.metrics)
        return
    typer.echo(result.tables(by=by))
    if result.out_dir is not None:
        typer.echo(f"\nwrote {result.out_dir / 'predictions.jsonl'} and {result.out_dir / 'metrics.json'}")


_SAMPLES_OPT = typer.Option(..., "--samples", help="Run directory or samples file from `nlibias expand`.")
_MODEL_OPT = typer.Option(
    [],
    "--model",
    help="NLI classifier: Hugging Face name or local path (repeatable); fake:NAME for a dry run.",
)
_GENERATIVE_OPT = typer.Option(
    [], "--generative", help="Generative LM: smollm2, hf:NAME, gguf:PATH, openai:URL#MODEL (repeatable)."
)
_PROMPT_OPT = typer.Option(
    [], "--prompt", help="Prompt style for generative LMs: true, entailed, or a prompt file (repeatable)."
)
_MLM_OPT = typer.Option(
    [],
    "--mlm",
    help="Masked LM scoring the samples' sentence pairs (token-probability bias, pseudo-log-likelihood): "
    "Hugging Face name or local path (repeatable).",
)
_CAUSAL_OPT = typer.Option(
    [],
    "--causal",
    help="Causal LM scoring the sentence pairs (token-probability bias): smollm2, a .gguf path, a hub "
    "name or local path, or openai-completions:URL#MODEL (a server with echo + logprobs) (repeatable).",
)
_TP_VARIANT_OPT = typer.Option(
    ["shared"],
    "--tp-variant",
    help="Token-probability score: shared (tokens the two sentences share, as CrowS-Pairs/WinoQueer) "
    "or whole (every token, as lm-evaluation-harness) (repeatable).",
)
_MODE_OPT = typer.Option(
    "scored", "--mode", help="Generative answers: scored (one forward pass) or generated."
)
_MAX_NEW_TOKENS_OPT = typer.Option(
    DEFAULT_MAX_NEW_TOKENS, "--max-new-tokens", help="Token limit of generated answers."
)
_CONCURRENCY_OPT = typer.Option(
    None,
    "--concurrency",
    help="Requests in flight to each openai:URL#MODEL server (default 4). Raise it for a GPU server "
    "that batches concurrent requests, such as vLLM (docs/scaling.md).",
)
_OUT_OPT = typer.Option(..., "--out", help="Run directory for predictions.jsonl, metrics.json, tables.txt.")
_LABEL_MAP_OPT = typer.Option(
    None,
    "--label-map",
    help="Override the classifiers' label mapping, e.g. 0=entailment,1=neutral,2=contradiction.",
)
_REVISION_OPT = typer.Option(None, "--revision", help="Hub revision (branch, tag or commit) to pin.")
_DEVICE_OPT = typer.Option(
    None, "--device", help="cpu, cuda, cuda:1, ... Default: GPU when present (or $NLIBIAS_DEVICE)."
)
_DTYPE_HELP = (
    "Weights of local models: auto, float32, bfloat16 or float16. Default auto: the checkpoint's own "
    "(float32 unless its config records another), on every device. bfloat16 is faster on a GPU; its "
    "probabilities move a little from float32's."
)
_DTYPE_OPT = typer.Option(None, "--dtype", help=_DTYPE_HELP)
_MAX_TOKENS_OPT = typer.Option(8192, "--max-tokens", help="Token budget of one batch (padding included).")
_QUANTIZE_OPT = typer.Option(
    None,
    "--quantize",
    help="CPU only: int8 (dynamic int8 Linear layers). Faster, but changes probabilities and can flip "
    "labels: check agreement on your model first. Measured speed and agreement: docs/benchmarks.md "
    "(Optional speed flags).",
)
_COMPILE_OPT = typer.Option(
    False,
    "--compile",
    help="torch.compile the classifiers: tens of seconds of compilation, no reliable gain "
    "measured on CPU (docs/benchmarks.md).",
)
_THREADS_OPT = typer.Option(None, "--threads", help="torch CPU threads (default: one per core).")
_DEVICES_OPT = typer.Option(
    None,
    "--devices",
    help="Shard each classifier over these devices, one worker process each, e.g. "
    "cuda:0,cuda:1 (docs/scaling.md). Same results and cache entries as one process.",
)
_RAY_OPT = typer.Option(
    None,
    "--ray",
    help="Run each classifier on Ray Data actors: 'local' starts a local Ray instance, or a "
    "cluster address ('auto', 'ray://host:10001'). Needs nlibias[ray] (docs/scaling.md).",
)
_RAY_WORKERS_OPT = typer.Option(2, "--ray-workers", help="Ray actors per classifier.")
_RAY_GPUS_OPT = typer.Option(
    0.0, "--ray-gpus-per-worker", help="GPUs each Ray actor asks for (0: CPU actors)."
)
_CACHE_OPT = typer.Option(None, "--cache", help="Prediction cache file. Default: the user cache.")
_NO_CACHE_OPT = typer.Option(False, "--no-cache", help="Do not read or write the prediction cache.")


def _cache_setting(cache: Path | None, no_cache: bool) -> Path | bool:
    """``run_audit``'s ``cache``: False, a file, or True (the user cache); refuses both flags at once."""
    if no_cache and cache is not None:  # one of the two would be ignored without a word
        from nlibias.errors import ConfigError

        raise ConfigError(
            f"no_cache and cache={str(cache)!r} contradict each other; give one of them", parameter="no_cache"
        )
    return False if no_cache else (cache or True)


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
def audit_command(
    samples: Path = _SAMPLES_OPT,
    model: list[str] = _MODEL_OPT,
    generative: list[str] = _GENERATIVE_OPT,
    prompt: list[str] = _PROMPT_OPT,
    mlm: list[str] = _MLM_OPT,
    causal: list[str] = _CAUSAL_OPT,
    tp_variant: list[str] = _TP_VARIANT_OPT,
    mode: str = _MODE_OPT,
    max_new_tokens: int = _MAX_NEW_TOKENS_OPT,
    concurrency: int | None = _CONCURRENCY_OPT,
    out: Path = _OUT_OPT,
    label_map: str | None = _LABEL_MAP_OPT,
    revision: str | None = _REVISION_OPT,
    device: str | None = _DEVICE_OPT,
    dtype: str | None = _DTYPE_OPT,
    max_tokens: int = _MAX_TOKENS_OPT,
    quantize: str | None = _QUANTIZE_OPT,
    compile_model: bool = _COMPILE_OPT,
    threads: int | None = _THREADS_OPT,
    devices: str | None = _DEVICES_OPT,
    ray: str | None = _RAY_OPT,
    ray_workers: int = _RAY_WORKERS_OPT,
    ray_gpus_per_worker: float = _RAY_GPUS_OPT,
    cache: Path | None = _CACHE_OPT,
    no_cache: bool = _NO_CACHE_OPT,
    bootstrap: int = _BOOTSTRAP_OPT,
    seed: int = _SEED_OPT,
    by: str = _BY_OPT,
    limit: Limit = None,
    as_json: Json = False,
    quiet: Quiet = False,
) -> None:
    """Run NLI classifiers, generative LMs and/or sentence-scoring LMs over the samples and report
    the bias measures."""
    from nlibias.jobs.audit import run_audit
    from nlibias.report.tables import check_slice

    check_slice(by)  # before the models run
    result = run_audit(
        samples,
        model,
        generative,
        prompt,
        mlm=mlm,
        causal=causal,
        tp_variants=tp_variant,
        cache=_cache_setting(cache, no_cache),
        out_dir=out,
        bootstrap=bootstrap,
        seed=seed,
        progress=show_progress(quiet, as_json),
        limit=limit,
        mode=mode,
        max_new_tokens=max_new_tokens,
        label_map=label_map,
        revision=revision,
        device=device,
        dtype=dtype,
        max_tokens=max_tokens,
        quantize=quantize,
        compile=compile_model,
        threads=threads,
        devices=devices.split(",") if devices else (),
        ray_address=ray,
        ray_workers=ray_workers,
        ray_gpus_per_worker=ray_gpus_per_worker,
        concurrency=concurrency,
    )
    _print_model_stats(result, as_json or quiet)
    _print_result(result, as_json, by)


@app.command("score")
def score_command(
    samples: Path = typer.Option(..., "--samples", help="Run directory or samples file."),
    predictions: list[str] = typer.Option(
        ...,
        "--predictions",
        help="JSONL with id, label, optional model and probs; or an lm-eval --log_samples file "
        "(samples_TASK_*.jsonl) or an Inspect log (.eval) of an exported task (docs/integrations.md). "
        "Repeat it, or quote a glob pattern ('logs/*.eval'), to score several files together.",
    ),
    out: Path | None = typer.Option(
        None, "--out", help="Run directory for metrics.json (and a copy of predictions)."
    ),
    bootstrap: int = _BOOTSTRAP_OPT,
    seed: int = _SEED_OPT,
    by: str = _BY_OPT,
    as_json: Json = False,
    quiet: Quiet = False,
) -> None:
    """Score predictions files (from nlibias or any other tool) with the benchmark's measures."""
    from nlibias.jobs.score import run_score
    from nlibias.report.tables import check_slice

    check_slice(by)

    result = run_score(samples, predictions, out_dir=out, bootstrap=bootstrap, seed=seed)
    scored, given = result.metrics["run"]["samples_scored"], result.metrics["run"]["samples_given"]
    if scored < given and not as_json:  # a warning, so --quiet keeps it
        warn(f"{given - scored} of {given} samples have no prediction and are left out")
    _print_result(result, as_json, by)
