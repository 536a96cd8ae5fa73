"""Measuring what a piece of work allocates (for memory tests and ``bench/memory.py``)."""

from __future__ import annotations

import tracemalloc
from collections.abc import Callable


def traced_peak(job: Callable[[], object]) -> int:
    """Peak bytes of Python objects and numpy arrays allocated while ``job()`` runs (tracemalloc)."""
    tracemalloc.start()
    try:
        job()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
