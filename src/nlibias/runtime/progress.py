"""Progress: one bar per command whose slots the parts advance; a log gets lines instead."""

from __future__ import annotations

import contextlib
import importlib.util
import os
import sys
import threading
import time
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any, TextIO

from nlibias.models.library_bars import bars_wanted, in_notebook

_current: ContextVar[CommandBar | None] = ContextVar("nlibias_command_bar", default=None)

MIN_INTERVAL = 0.5  # seconds between redraws of a bar
LOG_INTERVAL = 30.0  # seconds between two progress lines where stderr is not a terminal


def _settle_tqdm_auto() -> None:
    if in_notebook() and "tqdm.autonotebook" not in sys.modules:
        from tqdm.std import TqdmWarning

        with warnings.catch_warnings():
            warnings.simplefilter("ignore", TqdmWarning)
            import tqdm.autonotebook  # noqa: F401


def _tqdm_class() -> Any:
    _settle_tqdm_auto()
    if in_notebook() and importlib.util.find_spec("ipywidgets") is not None:
        from tqdm.notebook import tqdm as notebook_tqdm

        return notebook_tqdm
    from tqdm.std import tqdm

    return tqdm


_ENV_SWITCHES = ("HF_HUB_DISABLE_PROGRESS_BARS", "HF_DATASETS_DISABLE_PROGRESS_BARS")
_silenced: dict[str, str | None] = {}


def silence_library_bars() -> None:
    """Turn off the Hugging Face libraries' own bars."""
    _settle_tqdm_auto()  # the Hub imports tqdm.auto
    with contextlib.suppress(ImportError):
        from huggingface_hub.utils import are_progress_bars_disabled  # noqa: F401  (its module reads it)
    for name in _ENV_SWITCHES:
        _silenced.setdefault(name, os.environ.get(name))
        os.environ[name] = "1"
    _switch_loaded_libraries(on=False)


def restore_library_bars() -> None:
    if not _silenced:
        return
    for name, before in _silenced.items():
        if before is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = before
    _silenced.clear()
    _switch_loaded_libraries(on=True)


_LIBRARY_SWITCHES = {  # a loaded library: the module of its bar switches, the switch on, off
    "datasets": ("datasets.utils.logging", "enable_progress_bar", "disable_progress_bar"),
    "huggingface_hub": ("huggingface_hub.utils", "enable_progress_bars", "disable_progress_bars"),
    "transformers": ("transformers.utils.logging", "enable_progress_bar", "disable_progress_bar"),
}


def _switch_loaded_libraries(*, on: bool) -> None:
    for library, (module, enable, disable) in _LIBRARY_SWITCHES.items():
        if library in sys.modules:
            getattr(importlib.import_module(module), enable if on else disable)()


def prepare_progress(progress: bool) -> bool:
    """Whether a job draws bars (the libraries' silenced where it does not, or in a notebook)."""
    wanted = bars_wanted(progress)
    if wanted and not in_notebook():
        restore_library_bars()
    else:
        silence_library_bars()
    return wanted


def _duration(seconds: float) -> str:
    """``seconds`` for a progress line: ``45 s``, ``2 min 36 s``, ``1 h 05 min``.

    >>> _duration(45.4), _duration(156), _duration(3900)
    ('45 s', '2 min 36 s', '1 h 05 min')
    """
    seconds = round(seconds)
    if seconds < 60:
        return f"{seconds} s"
    if seconds < 3600:
        return f"{seconds // 60} min {seconds % 60:02d} s"
    return f"{seconds // 3600} h {seconds % 3600 // 60:02d} min"


class ProgressLines:
    """A command's progress for a log: a line about every ``interval`` seconds (a daemon thread).

    >>> now = [0.0]
    >>> lines = ProgressLines(100, "audit", "sample", clock=lambda: now[0], thread=False)
    >>> now[0] = 31.0; lines.line(25)
    'audit: 25/100 samples (25%), 0.8 samples/s, about 1 min 33 s left'
    """

    def __init__(
        self,
        total: float,
        stage: str,
        unit: str,
        *,
        clock: Any = time.monotonic,
        interval: float | None = None,
        thread: bool = True,
    ) -> None:
        self.total, self.stage, self.unit, self.n = total, stage, unit, 0.0
        self._clock = clock
        self._interval = LOG_INTERVAL if interval is None else interval
        self._started = self._last = clock()
        self._first_move: tuple[float, float] | None = None  # (when, units done then)
        self._stop = threading.Event()
        self._lock = threading.Lock()
        if thread:
            threading.Thread(target=self._beat, name="nlibias-progress-lines", daemon=True).start()

    def _beat(self) -> None:
        while not self._stop.wait(max(self._interval / 2, 0.01)):
            self.tick()

    def line(self, done: float) -> str:
        elapsed = self._clock() - self._started
        head = f"{self.stage}: {int(done)}{f'/{int(self.total)}' if self.total else ''} {self.unit}s"
        if done <= 0 or elapsed <= 0:
            return f"{head}, {_duration(elapsed)} so far (loading or the first batch)"
        since, before = self._first_move or (self._started, 0.0)
        moving = self._clock() - since
        # the rate since the first units came: a model's loading is no part of it
        rate = (done - before) / moving if done > before and moving > 0 else done / elapsed
        share = f" ({100 * done / self.total:.0f}%)" if self.total else ""
        left = f", about {_duration((self.total - done) / rate)} left" if self.total > done else ""
        return f"{head}{share}, {rate:.1f} {self.unit}s/s{left}"

    def moved_to(self, done: float) -> None:
        if self._first_move is None and done > 0:
            self._first_move = (self._clock(), done)
        self.n = done
        self.tick()

    def tick(self, stream: TextIO | None = None) -> bool:
        """Print a line when the last one is ``interval`` seconds old."""
        with self._lock:
            if self._stop.is_set() or self._clock() - self._last < self._interval:
                return False
            self._last = self._clock()
            print(self.line(self.n), file=stream or sys.stderr, flush=True)
            return True

    def close(self) -> None:
        self._stop.set()


class CommandBar:
    """The one bar of a command (``tqdm``, else :class:`ProgressLines`); parts advance their slot.

    >>> with CommandBar(4, "audit", "sample", enabled=False) as bar:
    ...     with bar.slot(2, "m"):
    ...         bar.advance(5)  # never past the slot's end
    >>> bar.n
    2.0
    """

    def __init__(
        self, total: float, desc: str, unit: str, enabled: bool, *, clock: Any = time.monotonic
    ) -> None:
        drawn = bars_wanted(enabled)
        self._bar = _tqdm_class()(
            total=total,
            desc=desc,
            unit=unit,
            disable=not drawn,
            mininterval=MIN_INTERVAL,
            dynamic_ncols=True,
        )
        self.lines = ProgressLines(total, desc, unit, clock=clock) if enabled and not drawn else None
        self.desc = desc
        self.n = 0.0
        self._slot: tuple[float, float] | None = None  # (start, size)

    def advance(self, amount: float) -> None:
        """Move by ``amount``, never past the current slot's end."""
        if self._slot is not None:
            start, size = self._slot
            amount = max(0.0, min(amount, start + size - self.n))
        if amount:
            self.n += amount
            whole = int(round(self.n, 6))  # the bar counts whole samples
            if whole > self._bar.n:
                self._bar.update(whole - self._bar.n)
            if self.lines is not None:
                self.lines.moved_to(whole)

    def update(self, n: float = 1) -> None:
        self.advance(n)

    def stage(self, name: str) -> None:
        self._bar.set_description(f"{self.desc} {name}", refresh=False)
        if self.lines is not None:
            self.lines.stage = f"{self.desc} {name}"

    @contextmanager
    def slot(self, size: float, name: str = "") -> Iterator[CommandBar]:
        """The next ``size`` units; on leaving, the bar stands at the slot's end."""
        start = self.n
        self._slot = (start, size)
        if name:
            self.stage(name)
        token = _current.set(self)
        try:
            yield self
        finally:
            _current.reset(token)
            self.advance(start + size - self.n)
            self._slot = None

    def close(self) -> None:
        self._bar.close()
        if self.lines is not None:
            self.lines.close()

    def __enter__(self) -> CommandBar:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class _SlotView:
    """A part's bar of ``total`` units, mapped onto the command bar's current slot."""

    def __init__(self, command: CommandBar, total: int | None) -> None:
        self._command = command
        slot = command._slot
        size = slot[1] if slot is not None else 0.0
        self._scale = size / total if total else 0.0
        self.n = 0

    def update(self, n: float = 1) -> None:
        self.n += int(n)
        self._command.advance(n * self._scale)

    def close(self) -> None:
        pass

    def __enter__(self) -> _SlotView:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def progress_bar(
    total: int | None,
    *,
    unit: str = "pair",
    desc: str | None = None,
    enabled: bool = True,
    leave: bool = True,
) -> Any:
    """A bar for ``total`` items: a share of the command bar's slot, else lines in a log, else tqdm."""
    command = _current.get()
    if command is not None and command._slot is not None:
        return _SlotView(command, total)
    if enabled and not bars_wanted(enabled):  # a log
        return CommandBar(total or 0, desc or unit, unit, enabled)
    return _tqdm_class()(
        total=total,
        unit=unit,
        desc=desc,
        disable=not bars_wanted(enabled),
        leave=leave,
        mininterval=MIN_INTERVAL,
    )
