"""``nlibias extend`` (the BBNLI-next extension pipeline) and ``nlibias masks list|derive|validate``."""

from __future__ import annotations

import functools
import shlex
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer

from nlibias.cli import options
from nlibias.cli.app import PLAIN_HELP, app, echo_json, warn
from nlibias.io.atomic import atomic_write_text
from nlibias.textio.tables import render_table

if TYPE_CHECKING:
    from nlibias.benchmarks.bbnli import BBNLISubtopic
    from nlibias.extension.masked_templates import MaskedTemplate
    from nlibias.extension.pipeline import PipelineResult, StageReport

masks_app = typer.Typer(
    help="Masked hypothesis templates: per-subtopic counts, automatic derivation, file validation.",
    no_args_is_help=True,
    rich_markup_mode=PLAIN_HELP,
)
app.add_typer(masks_app, name="masks")

#: Exit code of ``nlibias extend`` when it stopped to wait for human judgements.
EXIT_AWAITING_JUDGEMENTS = 3


def _stage_line(report: StageReport) -> str:
    shown = {k: v for k, v in report.counts.items() if not isinstance(v, dict)}
    counts = ", ".join(f"{k}={v}" for k, v in shown.items())
    return f"{report.name:<15} {report.status:<8} {report.seconds:8.2f}s  {counts}"


_CONFIG_OPT = typer.Option(
    None, "--config", help="YAML run configuration (see configs/bbnli-next.yaml); flags override it."
)
_FILL_MODEL_OPT = typer.Option(
    None,
    "--fill-model",
    "--mlm",
    help="Fill model: a masked LM (hub id or path; default bert-large-cased-whole-word-masking) or a "
    "causal LM (smollm2, FILE.gguf, causal:NAME; see docs/extension.md).",
)
_COMPARE_FILL_OPT = typer.Option(
    [],
    "--compare-fill",
    help="Another fill model to compare with --fill-model on the same masked samples (repeatable; "
    "the card shows the table; its fills never enter the dataset).",
)
_TOP_K_OPT = typer.Option(None, "--top-k", help="Whole-word fills per masked hypothesis (default 20).")
_FILTER_MODEL_OPT = typer.Option(
    [],
    "--filter-model",
    help="Filter NLI model: hub id, path or prompt:MODEL (repeatable; replaces the config's list).",
)
_HOLDOUT_MODEL_OPT = typer.Option(
    [],
    "--holdout-model",
    help="Held-out model, never used to filter (repeatable; replaces the config's list).",
)
_POLICY_OPT = typer.Option(
    None, "--policy", help="Keep a candidate when: any | all | at_least:K filter models mispredict."
)
_UNVALIDATED_OPT = typer.Option(
    False,
    "--unvalidated",
    help="Go on without human judgements (the dataset card says so in its first line).",
)
_JUDGEMENTS_OPT = typer.Option(
    None, "--judgements", help="Judgements CSV (default <run dir>/validation/judgements.csv)."
)
_TEMPLATES_OPT = typer.Option(
    None,
    "--templates",
    help="Masked-template file ('default' = the curated file shipped with nlibias; 'none').",
)
_DERIVE_OPT = typer.Option(
    None, "--derive/--no-derive", help="Also derive masked templates automatically from the source."
)
_UNTIL_OPT = typer.Option(None, "--until", help="Stop after this stage.")
_FROM_OPT = typer.Option(None, "--from", help="Rerun from this stage on (earlier ones must be done).")


def _show_stage(report: StageReport, *, as_json: bool) -> None:
    """A finished stage: its line on stderr, and a warning when judgements are missing."""
    if not as_json:
        typer.echo(_stage_line(report), err=True)
    if report.status == "ran" and report.message:
        warn(f"{report.name} ran again: {report.message}")
    if report.name != "validate":
        return
    queued = report.counts.get("queued_hypotheses")
    if report.counts.get("unjudged_hypotheses"):
        warn(
            f"{report.counts['unjudged_hypotheses']} of {queued} hypotheses have no judgement and are "
            "left out of the dataset (judge them and rerun, or accept a smaller dataset)"
        )
    if report.counts.get("dropped_hypotheses"):
        warn(
            f"{report.counts['dropped_hypotheses']} of {queued} hypotheses were dropped by the resolution "
            "rule (their annotators disagreed) and are left out of the dataset"
        )


def awaiting_message(run_dir: Path, detail: str) -> str:
    """What ``extend`` says when it stops for judgements: the annotation app first.

    >>> print(awaiting_message(Path("runs/ext"), "12 generated hypotheses await judgement."))
    the run waits for human judgements: judge them in the browser with `nlibias validate serve runs/ext`, then rerun this command (`nlibias validate status runs/ext` shows how far the judging is). 12 generated hypotheses await judgement.
    """
    run = shlex.quote(str(run_dir))
    return (
        f"the run waits for human judgements: judge them in the browser with `nlibias validate serve {run}`, "
        f"then rerun this command (`nlibias validate status {run}` shows how far the judging is). {detail}"
    )


def _print_outcome(result: PipelineResult, as_json: bool) -> None:
    """The run's outcome; exits with :data:`EXIT_AWAITING_JUDGEMENTS` when it waits for judgements."""
    if as_json:
        echo_json(
            {
                "status": result.status,
                "run_dir": str(result.run_dir),
                "message": result.message,
                "stages": [r.__dict__ for r in result.stages],
            }
        )
    if result.status == "awaiting_judgements":
        warn(awaiting_message(result.run_dir, result.message))
        sys.exit(EXIT_AWAITING_JUDGEMENTS)
    if result.status == "complete" and not as_json:
        card = result.run_dir / "dataset" / "README.md"
        typer.echo(f"dataset: {card.parent} (card: {card}; run record: {result.run_dir / 'run.json'})")


@app.command("extend")
def extend_command(
    config_file: Path | None = _CONFIG_OPT,
    out: options.OptionalOutDir = None,
    source: options.BbnliSource = None,
    mlm: str | None = _FILL_MODEL_OPT,
    compare_fill: list[str] = _COMPARE_FILL_OPT,
    top_k: int | None = _TOP_K_OPT,
    filter_model: list[str] = _FILTER_MODEL_OPT,
    holdout_model: list[str] = _HOLDOUT_MODEL_OPT,
    policy: str | None = _POLICY_OPT,
    subtopic: options.Subtopics = [],  # noqa: B006 (Typer copies it)
    unvalidated: bool = _UNVALIDATED_OPT,
    judgements: Path | None = _JUDGEMENTS_OPT,
    templates: str | None = _TEMPLATES_OPT,
    derive: bool | None = _DERIVE_OPT,
    until: str | None = _UNTIL_OPT,
    from_stage: str | None = _FROM_OPT,
    force: options.Force = False,
    cache: options.Cache = None,
    device: options.Device = None,
    progress: options.Progress = True,
    quiet: options.Quiet = False,
    as_json: options.Json = False,
) -> None:
    """Extend BBNLI the BBNLI-next way: masks → masked → fill → filter → validate → counterfactual → export.

    --out is the run directory (config: run_dir; default runs/next); --device places the fill and
    filter models. Every stage writes named files in the run directory and is skipped when they
    exist and its inputs did not change, so rerunning the same command resumes a killed run. A run
    directory whose stages were run with other settings is refused (use a new --out, --force or --from).
    Exits with code 3 when it stops to wait for human judgements.
    """
    from nlibias.jobs.extend import extend

    result = extend(
        config_file, out_dir=out, source=source, fill_model=mlm, top_k=top_k, classifiers=filter_model,
        compare_fill=compare_fill, holdout=holdout_model, policy=policy, subtopics=subtopic,
        unvalidated=unvalidated, judgements=judgements, templates=templates, derive=derive, cache=cache,
        device=device, from_stage=from_stage, until=until, force=force,
        progress=progress and options.show_progress(quiet, as_json),
        on_stage=functools.partial(_show_stage, as_json=as_json or quiet),
    )  # fmt: skip
    _print_outcome(result, as_json)


# ---------------------------------------------------------------------------------------------
# nlibias masks ...


def _source_dir(source: Path | None) -> Path:
    """The BBNLI JSON directory ``--source`` names (default: the resolved data dir)."""
    from nlibias.benchmarks.bbnli_source import BBNLI_DATA
    from nlibias.benchmarks.data_locations import resolve_data

    return resolve_data(BBNLI_DATA, source)


def _subtopics(source: Path | None, names: Sequence[str]) -> tuple[list[BBNLISubtopic], list[BBNLISubtopic]]:
    from nlibias.benchmarks.bbnli import load_bbnli_dir
    from nlibias.extension.config_rules import chosen_subtopics

    everything = load_bbnli_dir(_source_dir(source))
    return everything, chosen_subtopics(everything, names)  # extend's rule for its subtopics


def _count_table(rows: Sequence[Mapping[str, Any]], columns: Sequence[str]) -> str:
    """Paper Table 9 layout: domain, subtopic, counts; a Total row per domain and an ``all`` row."""
    table: list[list[Any]] = []
    for domain in sorted({r["domain"] for r in rows}):
        members = [r for r in rows if r["domain"] == domain]
        table.extend([domain, r["subtopic"], *(r[c] for c in columns)] for r in members)
        table.append([domain, "Total", *(sum(r[c] for r in members) for c in columns)])
    table.append(["all", "Total", *(sum(r[c] for r in rows) for c in columns)])
    return render_table(["Domain", "Subtopic", *columns], table)


def _print_counts(
    templates: Sequence[MaskedTemplate],
    subtopics: Sequence[BBNLISubtopic],
    as_json: bool,
    *,
    listed: bool = False,
) -> None:
    """The counts per subtopic (Table 9); as JSON, with the templates themselves when ``listed``."""
    from nlibias.extension.masked_templates import STRATEGIES, template_counts

    rows = template_counts(templates, subtopics)
    if as_json:
        document: dict[str, Any] = {"subtopics": rows, "total": len(templates)}
        if listed:
            document["templates"] = [template.to_dict() for template in templates]
        echo_json(document)
    else:
        typer.echo(_count_table(rows, ["count", *STRATEGIES, "curated", "derived"]))


@masks_app.command("list")
def masks_list(
    templates: Path | None = typer.Option(
        None, "--templates", help="Masked-template file (default: the curated one)."
    ),
    derive: bool = typer.Option(False, "--derive", help="Add the templates derived automatically."),
    source: options.BbnliSource = None,
    subtopic: options.Subtopics = [],  # noqa: B006 (Typer copies it)
    show: bool = typer.Option(
        False,
        "--show",
        help="Print the templates themselves, not only counts (with --json: under 'templates').",
    ),
    quiet: options.Quiet = False,  # nothing to hide: taken as every printing command takes it
    as_json: options.Json = False,
) -> None:
    """Masked templates per subtopic (paper Table 9 layout), by strategy and origin."""
    from nlibias.extension.masked_templates import (
        combine_templates,
        derive_masked_templates,
        load_masked_templates,
    )

    everything, chosen = _subtopics(source, subtopic)
    names = {s.subtopic for s in chosen}
    curated = load_masked_templates(templates, everything)
    derived = [t for s in chosen for t in derive_masked_templates(s)] if derive else []
    combined = [t for t in combine_templates(curated, derived) if t.subtopic in names]
    if show and not as_json:
        for template in combined:
            typer.echo(f"{template.id}\t{template.strategy}\t{template.text}")
        return
    _print_counts(combined, chosen, as_json, listed=show)


@masks_app.command("derive")
def masks_derive(
    out: options.OptionalOut = None,
    source: options.BbnliSource = None,
    stopwords: Path | None = typer.Option(
        None, "--stopwords", help="Stop-word file (default: the shipped one)."
    ),
    subtopic: options.Subtopics = [],  # noqa: B006 (Typer copies it)
    quiet: options.Quiet = False,  # nothing to hide: taken as every printing command takes it
    as_json: options.Json = False,
) -> None:
    """Derive masked templates automatically (mask a word, replace a placeholder, add 'and <mask>');
    without --out, the template file's lines go to stdout (with --json, one document of counts and templates)."""
    from nlibias.extension.masked_templates import derive_masked_templates, load_stopwords
    from nlibias.io.overwrites import refuse_overwrites  # it reads manifests: numpy

    refuse_overwrites({"out": out}, {"stopwords": stopwords, "source": _source_dir(source) if out else None})
    _, chosen = _subtopics(source, subtopic)
    words = load_stopwords(stopwords)
    derived = [t for s in chosen for t in derive_masked_templates(s, stopwords=words)]
    if out is None:  # the file's lines on stdout; as JSON, one document holding them
        if as_json:
            _print_counts(derived, chosen, as_json, listed=True)
        else:
            typer.echo("".join(t.file_line() + "\n" for t in derived), nl=False)
        return
    text = "\n".join(t.file_line() for t in derived) + "\n"
    atomic_write_text(out, text)
    _print_counts(derived, chosen, as_json)
    if not as_json:
        typer.echo(f"\n{len(derived)} derived templates → {out}")


@masks_app.command("validate")
def masks_validate(
    path: Path = typer.Argument(..., help="Masked-template JSONL file to check."),
    source: options.BbnliSource = None,
    quiet: options.Quiet = False,  # nothing to hide: taken as every printing command takes it
    as_json: options.Json = False,
) -> None:
    """Check a masked-template file (one <mask>, known placeholders and subtopic, derivation); print counts."""
    from nlibias.extension.masked_templates import load_masked_templates

    everything, _ = _subtopics(source, [])
    loaded = load_masked_templates(path, everything)
    _print_counts(loaded, everything, as_json)
    if not as_json:
        typer.echo(f"\n{path}: {len(loaded)} masked templates, all valid")
