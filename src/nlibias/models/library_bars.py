"""Whether bars are drawn, and the libraries' loading bars kept out of a log (nothing heavy here)."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager


def in_notebook() -> bool:
    """Whether this runs in a Jupyter kernel's IPython shell."""
    ipython = sys.modules.get("IPython")
    shell = ipython.get_ipython() if ipython is not None else None
    return shell is not None and type(shell).__name__ == "ZMQInteractiveShell"


def bars_wanted(progress: bool = True) -> bool:
    """Whether to draw bars: asked for, and stderr is a terminal or a notebook shows them."""
    if not progress:
        return False
    if in_notebook():
        return True
    isatty = getattr(sys.stderr, "isatty", None)
    try:
        return bool(isatty and isatty())
    except ValueError:  # a closed stream
        return False


@contextmanager
def quiet_loading() -> Iterator[None]:
    """Inside, loading draws no library bars into a log or a notebook (a terminal keeps them)."""
    if bars_wanted() and not in_notebook():
        yield
        return
    from huggingface_hub import utils as hub_utils
    from transformers.utils import logging as transformers_logging

    hub_on = not hub_utils.are_progress_bars_disabled()
    transformers_on = transformers_logging.is_progress_bar_enabled()
    hub_utils.disable_progress_bars()
    transformers_logging.disable_progress_bar()
    try:
        yield
    finally:
        if hub_on:
            hub_utils.enable_progress_bars()
        if transformers_on:
            transformers_logging.enable_progress_bar()
