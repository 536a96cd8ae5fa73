"""``nlibias validate serve|status|resolve|export|import|prescreen|explanations``: human validation of a
run's queue (an extension run's hypotheses; an explained audit run's explanations)."""

from __future__ import annotations

import warnings
from pathlib import Path
from typing import Annotated, Any

import typer

from nlibias.cli import options
from nlibias.cli.app import PLAIN_HELP, app, echo_json, echo_text_or_path, warn
from nlibias.textio.tables import render_table

validate_app = typer.Typer(
    help="Human validation of generated hypotheses: annotation app, agreement, resolution, import/export.",
    no_args_is_help=True,
    rich_markup_mode=PLAIN_HELP,
)
app.add_typer(validate_app, name="validate")

Rule = Annotated[
    str,
    typer.Option(
        "--rule", help="Resolution rule: drop (disagreements dropped) | majority | adjudicator:NAME."
    ),
]
MinAnnotators = Annotated[
    int, typer.Option("--min-annotators", min=1, help="Answers a hypothesis needs before it is resolved.")
]
JudgementsFormat = Annotated[
    str,
    typer.Option(
        "--format", help="csv | label-studio | argilla (import also takes auto: read from the file)."
    ),
]

RUN_ARG = typer.Argument(
    ...,
    help="Run directory of `nlibias extend` (holds validation/queue.csv), or of an explained audit "
    "(validation/explanations_queue.json, drawn by `nlibias validate explanations`).",
)


def _fmt(value: float | None, digits: int = 1) -> str:
    return "-" if value is None else f"{value:.{digits}f}"


def _pct(value: float | None) -> str:
    """A percentage with its sign, ``-`` (not ``-%``) where it is undefined."""
    return "-" if value is None else f"{value:.1f}%"


@validate_app.command("serve")
def serve_command(
    run_dir: Path = RUN_ARG,
    annotator: str | None = typer.Option(
        None, "--annotator", help="Fix the annotator name (else the page asks)."
    ),
    host: str = typer.Option(
        "127.0.0.1", "--host", help="Address to bind; anything but loopback needs a token."
    ),
    port: int = typer.Option(8765, "--port", min=0, max=65535, help="Port to listen on (0: any free port)."),
    token: str | None = typer.Option(
        None,
        "--token",
        envvar="NLIBIAS_VALIDATE_TOKEN",
        help="Access token (generated when --host is not loopback).",
    ),
    blur: bool = typer.Option(
        True, "--blur/--no-blur", help="Blur hypotheses until revealed (offensive content)."
    ),
    break_minutes: float = typer.Option(
        40.0, "--break-minutes", min=0.0, help="Break reminder after this many minutes (0: off)."
    ),
    hints: bool = typer.Option(True, "--hints/--no-hints", help="Show pre-screen suggestions as hints."),
) -> None:
    """Open the annotation app on http://127.0.0.1:PORT (every answer is committed at once)."""
    from nlibias.validation.address import bind_socket, bound_port, check_bind, is_loopback
    from nlibias.validation.app import AppSettings, serve

    token = check_bind(host, token)
    settings = AppSettings(
        annotator=annotator,
        token=token,
        blur=blur,
        break_minutes=break_minutes,
        show_hints=hints,
        loopback_only=is_loopback(host),
    )
    sock = bind_socket(host, port)  # bound first: the URL names the real port (--port 0: a free one)
    shown = (
        "127.0.0.1"
        if host in ("0.0.0.0", "::")
        else f"[{host}]"
        if ":" in host and not host.startswith("[")
        else host
    )
    url = f"http://{shown}:{bound_port(sock)}/" + (f"?token={token}" if token else "")
    typer.echo(f"annotation app for {run_dir}: {url}")
    if token and not is_loopback(host):
        warn("bound beyond localhost: share the URL (with its token) only with your annotators; plain HTTP")
    _warn_stale_explanations(run_dir)
    typer.echo("stop with Ctrl+C (answers are already saved)")
    serve(run_dir, settings, sock=sock)


def _warn_stale_explanations(run_dir: Path) -> None:
    """Warn when the explanations queue was drawn from explanations that `explain` has since replaced."""
    from nlibias.validation.explanation_queue import (
        explanations_fingerprint,
        has_explanation_queue,
        read_explanation_queue,
    )

    if has_explanation_queue(run_dir) and read_explanation_queue(
        run_dir
    ).fingerprint != explanations_fingerprint(run_dir):
        warn(_STALE)


_STALE = (
    "explanations.jsonl changed since the explanations queue was drawn (explain was rerun with other "
    "results): the queue's judge labels are no longer the run's; draw a new queue with "
    "`nlibias validate explanations RUN` (answers on the old one stay stored and are not counted)"
)


def _print_status(report: dict[str, Any]) -> None:
    if "queue" in report:
        _print_hypotheses_status(report)
    if "explanations" in report:
        _print_explanations_status(report["explanations"])


def _print_explanations_status(entry: dict[str, Any]) -> None:
    """The explanations round: progress, human–human agreement, each judge against the humans."""
    if entry["stale"]:
        warn(_STALE)
    typer.echo(
        f"\nexplanations round: {entry['queue']} of {entry['available']} explained answers queued "
        f"(stratified by {entry['stratified_by']}'s label and subtopic, seed {entry['seed']})"
    )
    _warn_unjudged(entry["unjudged"], entry["queue"], "explanations")
    for who, row in entry["progress"].items():
        labels = ", ".join(f"{k} {v}" for k, v in row["labels"].items())
        typer.echo(
            f"  {who:<16} {row['judged']:>6}/{row['total']} judged ({row['percent_complete']:.1f}%)  {labels}"
        )
    rnd = entry["agreement"]
    if rnd["kappa_kind"] is None:
        typer.echo("  human agreement: needs two or more annotators")
    else:
        typer.echo(
            f"  human agreement ({_annotators(len(rnd['annotators']))}, {rnd['items']} items answered by all): "
            f"{_pct(rnd['percent'])}  {rnd['kappa_kind']} kappa {_fmt(rnd['kappa'], 3)}"
        )
    typer.echo(f"  judges against the humans' majority label ({entry['reference']['items']} items)")
    for judge, row in entry["judges"].items():
        per_label = "  ".join(
            f"{label} P {_pct(None if v['precision'] is None else 100 * v['precision'])} "
            f"R {_pct(None if v['recall'] is None else 100 * v['recall'])}"
            for label, v in row["per_label"].items()
        )
        typer.echo(
            f"  {judge} ({row['kind']}): items {row['items']}  {_pct(row['percent'])}  "
            f"kappa {_fmt(row['kappa'], 3)}  {per_label}"
        )


def _warn_unjudged(unjudged: int, queue: int, what: str) -> None:
    if unjudged:
        warn(f"{unjudged} of {queue} queued {what} have no judgement from anyone yet")


def _annotators(count: int) -> str:
    """``1 annotator``, ``3 annotators``."""
    return f"{count} annotator" + ("" if count == 1 else "s")


def _print_hypotheses_status(report: dict[str, Any]) -> None:
    typer.echo(
        f"queue: {report['queue']} hypotheses"
        + (
            f" ({report['stale_judgements']} judged hypotheses are no longer in the queue)"
            if report["stale_judgements"]
            else ""
        )
    )
    _warn_unjudged(report.get("unjudged", 0), report["queue"], "hypotheses")
    typer.echo("\nprogress")
    for who, entry in report["progress"].items() or {}:
        cats = ", ".join(f"{k} {v}" for k, v in sorted(entry["categories"].items()))
        typer.echo(
            f"  {who:<16} {entry['complete']:>6}/{entry['total']} complete ({entry['percent_complete']:.1f}%)  {cats}"
        )
    if not report["progress"]:
        typer.echo("  no answers yet")
    left_out = ", ".join(f"{who} ({why})" for who, why in report.get("left_out_of_agreement", {}).items())
    for name, rnd in report["agreement"].items():
        typer.echo(
            f"\nagreement, {name} round ({_annotators(len(rnd['annotators']))}, {rnd['items']} items answered by all)"
            + (f"; left out: {left_out}" if left_out else "")
        )
        if rnd["kappa_kind"] is None:
            typer.echo("  needs two or more annotators")
            continue
        typer.echo(
            f"  percent agreement {_pct(rnd['percent'])}  {rnd['kappa_kind']} kappa {_fmt(rnd['kappa'], 3)}"
        )
        for label, entry in rnd["per_label"].items():
            typer.echo(
                f"  {label:<12} ratings {entry['ratings']:>5}  specific agreement "
                f"{_pct(None if entry['specific_agreement'] is None else 100 * entry['specific_agreement'])}  "
                f"kappa {_fmt(entry['kappa'], 3)}"
            )
        for sub, entry in rnd["by_subtopic"].items():
            typer.echo(
                f"  {sub:<28} items {entry['items']:>5}  {_pct(entry['percent'])}  kappa {_fmt(entry['kappa'], 3)}"
            )
        if len(rnd["pairwise"]) > 1:
            for pair in rnd["pairwise"]:
                typer.echo(
                    f"  {' vs '.join(pair['annotators']):<28} items {pair['items']:>5}  "
                    f"{_pct(pair['percent'])}  cohen {_fmt(pair['cohen_kappa'], 3)}"
                )
    typer.echo(f"\nresolution preview (rule {report['rule']})")
    typer.echo(_resolution_table(report["resolution"]))
    for judge, entry in report["prescreen"].items():
        typer.echo(
            f"pre-screen {judge}: category agrees with the final label on {entry['category_agree']}/{entry['compared']} "
            f"({_pct(entry['category_percent'])}), stereotype on {entry['stereotype_agree']}/{entry['stereotype_compared']} "
            f"({_pct(entry['stereotype_percent'])})"
        )


def _resolution_table(resolution: dict[str, dict[str, int]]) -> str:
    """The resolution preview as a table of counts (hypotheses per status, final category and
    stereotype), not raw dicts.

    >>> print(_resolution_table({"status": {"pending": 1215}, "categories": {}, "stereotypes": {}}))
    count of | value   | hypotheses
    ---------+---------+-----------
    status   | pending |       1215
    """
    parts = (("status", "status"), ("final category", "categories"), ("stereotype", "stereotypes"))
    rows = [
        [label, value, count]
        for label, key in parts
        for value, count in sorted(resolution.get(key, {}).items())
    ]
    return render_table(["count of", "value", "hypotheses"], rows) if rows else "  nothing to resolve yet"


@validate_app.command("status")
def status_command(
    run_dir: Path = RUN_ARG,
    rule: Rule = "drop",
    min_annotators: MinAnnotators = 1,
    exclude: list[str] = typer.Option(
        [], "--exclude", help="Annotator to leave out of the agreement (repeatable)."
    ),
    quiet: options.Quiet = False,  # nothing to hide: taken as every printing command takes it
    as_json: options.Json = False,
) -> None:
    """Progress per annotator, agreement (percent, Cohen's/Fleiss' kappa) per round, label and subtopic."""
    from nlibias.jobs.validation import status

    report = status(run_dir, rule=rule, min_annotators=min_annotators, exclude=exclude)
    if as_json:
        echo_json(report)
    else:
        _print_status(report)


@validate_app.command("resolve")
def resolve_command(
    run_dir: Path = RUN_ARG,
    rule: Rule = "drop",
    min_annotators: MinAnnotators = 1,
    quiet: options.Quiet = False,  # nothing to hide: taken as every printing command takes it
    as_json: options.Json = False,
) -> None:
    """Write the final labels to RUN/validation/judgements.csv (then: nlibias extend --from validate)."""
    from nlibias.jobs.validation import resolve

    summary = resolve(run_dir, rule=rule, min_annotators=min_annotators)
    if as_json:
        echo_json(summary)
        return
    typer.echo(f"wrote {summary['judgements']}")
    typer.echo(
        f"  {summary['status']}; final categories {summary['categories']}; stereotypes {summary['stereotypes']}"
    )
    if summary["status"].get("resolved"):  # else warned of: extend would keep no hypothesis
        typer.echo(f"next: nlibias extend --out {run_dir} --from validate   (with your usual extend options)")


@validate_app.command("export")
def export_command(
    run_dir: Path = RUN_ARG,
    fmt: JudgementsFormat = "csv",
    out: options.OptionalOut = None,
) -> None:
    """Export the queue with every annotator's current answers (and model suggestions)."""
    from nlibias.jobs.validation import export

    result = export(run_dir, fmt=fmt, out=out)
    echo_text_or_path(result.text, out)


@validate_app.command("import")
def import_command(
    run_dir: Path = RUN_ARG,
    file: Path = typer.Argument(..., help="Judgements: CSV, Label Studio JSON export or Argilla records."),
    fmt: JudgementsFormat = "auto",
    annotator: str | None = typer.Option(None, "--annotator", help="Annotator for rows that name none."),
    quiet: options.Quiet = False,  # nothing to hide: taken as every printing command takes it
    as_json: options.Json = False,
) -> None:
    """Add judgements made elsewhere to the run's annotation database (refuses unknown or duplicate rows)."""
    from nlibias.jobs.validation import import_judgements

    result = import_judgements(run_dir, file, fmt=fmt, annotator=annotator)
    _warn_unjudged(result.unjudged_hypotheses, result.queue, "hypotheses")
    if as_json:
        echo_json(result.to_dict())
    else:
        who = ", ".join(result.annotators) or "nobody"
        typer.echo(f"imported {result.answers} judgements ({result.rows} answers) by {who}")


@validate_app.command("prescreen")
def prescreen_command(
    run_dir: Path = RUN_ARG,
    judge: options.NliJudge = None,
    lm_judge: options.LmJudge = None,
    threshold: float = typer.Option(
        0.5, "--threshold", min=0.0, max=1.0, help="Probability for an entailment/contradiction suggestion."
    ),
    cache: options.Cache = None,
    progress: options.Progress = True,
    quiet: options.Quiet = False,
    as_json: options.Json = False,
) -> None:
    """Store model suggestions, shown as hints in the app and measured by `status`."""
    from nlibias.validation.prescreen import run_prescreen

    shown = progress and options.show_progress(quiet, as_json)
    report = run_prescreen(
        run_dir, judge=judge, lm_judge=lm_judge, cache=cache, threshold=threshold, progress=shown
    )
    if as_json:
        echo_json(report)
        return
    for name, entry in report["judges"].items():
        typer.echo(
            f"{name}: {entry['suggestions']} suggestions ({entry['without_suggestion']} without), "
            f"categories {entry['categories']}, stereotypes {entry['stereotypes']}"
        )


@validate_app.command("explanations")
def explanations_command(
    run_dir: Path = typer.Argument(
        ..., help="Audit run directory after `nlibias explain` (RUN/explanations/)."
    ),
    size: int = typer.Option(200, "--size", min=1, help="Explained answers to queue (all when fewer)."),
    seed: options.Seed = 0,
    judge: str | None = typer.Option(
        None, "--judge", help="NLI judge whose label stratifies the draw (default: the first)."
    ),
    quiet: options.Quiet = False,  # nothing to hide: taken as every printing command takes it
    as_json: options.Json = False,
) -> None:
    """Queue a stratified sample of explained answers (by label and subtopic) for the annotation app."""
    from nlibias.validation.explanation_queue import EXPLANATIONS_QUEUE, draw_explanation_queue

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        queue = draw_explanation_queue(run_dir, size=size, seed=seed, judge=judge)
    for caught_warning in caught:  # a size beyond the answers, answered items left out of a redraw
        warn(str(caught_warning.message))
    summary: dict[str, Any] = {
        "queue": str(run_dir / EXPLANATIONS_QUEUE),
        "items": len(queue.items),
        "available": queue.available,
        "stratified_by": queue.stratified_by,
        "strata": queue.strata(),
        "fingerprint": queue.fingerprint,
    }
    if as_json:
        echo_json(summary)
        return
    typer.echo(f"queued {len(queue.items)} of {queue.available} explained answers in {summary['queue']}")
    for name, count in summary["strata"].items():
        typer.echo(f"  {name:<40} {count:>5}")
    typer.echo(f"next: nlibias validate serve {run_dir}   (then: nlibias validate status {run_dir})")
