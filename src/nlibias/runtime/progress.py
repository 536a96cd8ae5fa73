"""Progress bars: one per command, with a total and an ETA, and only where someone watches.

A job opens one :func:`command_bar` over all its work (an audit: every model's pass over the
samples) and gives each part a :meth:`CommandBar.slot`; the predictors' own bars
(:func:`progress_bar`) then advance their slot of the command's bar instead of drawing a bar of
their own that restarts at 0 for each model or prompt style. Without a command bar,
:func:`progress_bar` is an ordinary ``tqdm`` bar.

Bars are drawn only when asked for and stderr is a terminal (or in a notebook): a log file gets
none, and the Hugging Face libraries' own bars ("Loading weights", downloads) are silenced there
too (:func:`silence_library_bars`).

>>> with command_bar(20, desc="audit", enabled=False) as bar:
...     with bar.slot(10, "model a"):
...         with progress_bar(4, enabled=False) as part:   # 4 pairs stand for the slot's 10 samples
...             part.update(2)
...         first = bar.n
...     with bar.slot(10, "model b"):
...         pass
>>> first, bar.n
(5.0, 20.0)
"""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

_current: ContextVar[CommandBar | None] = ContextVar("nlibias_command_bar", default=None)

MIN_INTERVAL = 0.5
"""Seconds between redraws of a bar (tqdm's ``mininterval``)."""


def bars_wanted(progress: bool = True) -> bool:
    """Whether to draw bars: asked for, and stderr is a terminal or a notebook shows them."""
    if not progress:
        return False
    if "ipykernel" in sys.modules:  # a notebook: tqdm.auto draws a widget there
        return True
    isatty = getattr(sys.stderr, "isatty", None)
    try:
        return bool(isatty and isatty())
    except ValueError:  # a closed stream
        return False


_ENV_SWITCHES = ("HF_HUB_DISABLE_PROGRESS_BARS", "HF_DATASETS_DISABLE_PROGRESS_BARS")
_silenced: dict[str, str | None] = {}
"""What :func:`silence_library_bars` changed (each variable's value before), so that
:func:`restore_library_bars` undoes that and nothing a user set."""


def silence_library_bars() -> None:
    """Turn off the Hugging Face libraries' own progress bars (weights loading, downloads,
    ``datasets``' maps): for runs whose stderr goes to a log. Libraries not imported yet read the
    environment variables.

    The Hub reads its variable once, when it is imported, and then refuses to turn its bars back
    on: imported here first, it keeps the user's own setting, and the switch below turns its bars
    off in a way :func:`restore_library_bars` undoes (``datasets``, imported only by fine-tuning,
    still reads ours if it is imported while bars are off)."""
    with contextlib.suppress(ImportError):  # not installed: no Hub bars to silence
        from huggingface_hub.utils import are_progress_bars_disabled  # noqa: F401  (its module reads it)
    for name in _ENV_SWITCHES:
        _silenced.setdefault(name, os.environ.get(name))
        os.environ[name] = "1"
    _switch_loaded_libraries(on=False)


def restore_library_bars() -> None:
    """Undo :func:`silence_library_bars` (a later job in the same process that draws bars: a
    notebook's second cell, a fine-tuning after an audit written to a log); nothing when it did
    not run."""
    if not _silenced:
        return
    for name, before in _silenced.items():
        if before is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = before
    _silenced.clear()
    _switch_loaded_libraries(on=True)


def _switch_loaded_libraries(*, on: bool) -> None:
    if "datasets" in sys.modules:
        from datasets.utils import logging as datasets_logging

        (datasets_logging.enable_progress_bar if on else datasets_logging.disable_progress_bar)()
    if "huggingface_hub" in sys.modules:
        from huggingface_hub import utils as hub_utils

        (hub_utils.enable_progress_bars if on else hub_utils.disable_progress_bars)()
    if "transformers" in sys.modules:
        from transformers.utils import logging as transformers_logging

        (transformers_logging.enable_progress_bar if on else transformers_logging.disable_progress_bar)()


def prepare_progress(progress: bool) -> bool:
    """What a job calls first: whether it draws bars; when it does not, the libraries' bars are
    silenced too, and when it does, an earlier job's silencing is undone."""
    wanted = bars_wanted(progress)
    if wanted:
        restore_library_bars()
    else:
        silence_library_bars()
    return wanted


class CommandBar:
    """The one bar of a command (a ``tqdm`` bar, disabled where bars are not wanted): parts of
    the work advance their :meth:`slot` of it; used as a context manager, it is closed on leaving.

    >>> with CommandBar(4, "audit", "sample", enabled=False) as bar:
    ...     with bar.slot(2, "m"):
    ...         bar.advance(5)  # never past the slot's end
    >>> bar.n
    2.0
    """

    def __init__(self, total: float, desc: str, unit: str, enabled: bool) -> None:
        from tqdm.auto import tqdm

        self._bar = tqdm(
            total=total,
            desc=desc,
            unit=unit,
            disable=not bars_wanted(enabled),
            mininterval=MIN_INTERVAL,
            dynamic_ncols=True,
        )
        self.desc = desc
        self.n = 0.0
        self._slot: tuple[float, float] | None = None  # (start, size)

    def advance(self, amount: float) -> None:
        """Move by ``amount`` of the command's units, never past the current slot's end."""
        if self._slot is not None:
            start, size = self._slot
            amount = max(0.0, min(amount, start + size - self.n))
        if amount:
            self.n += amount
            whole = int(round(self.n, 6))  # the bar counts whole samples; fractions wait for the rest
            if whole > self._bar.n:
                self._bar.update(whole - self._bar.n)

    @contextmanager
    def slot(self, size: float, name: str = "") -> Iterator[CommandBar]:
        """The next ``size`` units of the bar (a model's pass): inside the block, the parts' bars
        (:func:`progress_bar`) advance it; on leaving, the bar stands at the slot's end whatever
        its part reported."""
        start = self.n
        self._slot = (start, size)
        if name:
            self._bar.set_description(f"{self.desc} {name}", refresh=False)
        token = _current.set(self)
        try:
            yield self
        finally:
            _current.reset(token)
            self.advance(start + size - self.n)
            self._slot = None

    def close(self) -> None:
        self._bar.close()

    def __enter__(self) -> CommandBar:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()  # also when a part fails: the error is printed below a finished bar line


class _SlotView:
    """A part's bar of ``total`` of its own units, mapped onto the command bar's current slot."""

    def __init__(self, command: CommandBar, total: int | None) -> None:
        self._command = command
        slot = command._slot
        size = slot[1] if slot is not None else 0.0
        self._scale = size / total if total else 0.0
        self.n = 0

    def update(self, n: float = 1) -> None:
        self.n += int(n)
        self._command.advance(n * self._scale)

    def set_postfix(self, *args: Any, **kwargs: Any) -> None:
        """Accepted for tqdm's sake; the command's bar shows no part's details."""

    def close(self) -> None:
        """Nothing to close: the command's bar stays."""

    def __enter__(self) -> _SlotView:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


@contextmanager
def command_bar(
    total: float, *, desc: str, unit: str = "sample", enabled: bool = True
) -> Iterator[CommandBar]:
    """The command's one bar for the duration of the block (see the module doc)."""
    bar = CommandBar(total, desc, unit, enabled)
    try:
        yield bar
    finally:
        bar.close()


def progress_bar(
    total: int | None,
    *,
    unit: str = "pair",
    desc: str | None = None,
    enabled: bool = True,
    leave: bool = True,
) -> Any:
    """A bar for ``total`` items: a share of the open command bar's slot when there is one, else a
    ``tqdm`` bar of its own (drawn only where :func:`bars_wanted`)."""
    command = _current.get()
    if command is not None and command._slot is not None:
        return _SlotView(command, total)
    from tqdm.auto import tqdm

    return tqdm(
        total=total,
        unit=unit,
        desc=desc,
        disable=not bars_wanted(enabled),
        leave=leave,
        mininterval=MIN_INTERVAL,
    )
