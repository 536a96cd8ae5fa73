"""The options every command shares, defined once (annotated Typer options).

A command that prints takes ``--quiet`` (no progress bars or progress lines; results still print)
and ``--json`` (its result as JSON on stdout, nothing else there). Progress bars appear only when
stderr is a terminal (:func:`nlibias.runtime.progress.bars_wanted`), so logs never fill with them.

>>> import typer
>>> demo = typer.Typer(add_completion=False)
>>> @demo.command()
... def command(quiet: Quiet = False, as_json: Json = False) -> None: ...
>>> [p.opts for p in typer.main.get_command(demo).params]
[['--quiet', '-q'], ['--json']]
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

Quiet = Annotated[
    bool, typer.Option("--quiet", "-q", help="No progress bars or progress messages (results still print).")
]
Json = Annotated[
    bool, typer.Option("--json", help="Print the result as JSON on stdout (and nothing else there).")
]
Seed = Annotated[int, typer.Option("--seed", help="Seed of the bootstrap (and of any sampling).")]
Limit = Annotated[
    int | None,
    typer.Option(
        "--limit",
        help="Audit a stratified subset of about N samples: pro/anti pairs kept whole, every subtopic, "
        "drawn with --seed (recorded in metrics.json under subset). For a quick first look.",
    ),
]
OptionalOut = Annotated[Path | None, typer.Option("--out", help="Where to write the result.")]


def show_progress(quiet: bool = False, as_json: bool = False) -> bool:
    """Whether a command draws progress bars: not ``--quiet``, not ``--json``, and stderr is a
    terminal (:func:`nlibias.runtime.progress.bars_wanted`)."""
    from nlibias.runtime.progress import bars_wanted

    return bars_wanted(not quiet and not as_json)
