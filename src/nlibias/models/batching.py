"""The one batching helper (sort by length, cap batches by tokens) and the progress hooks a long
batch reports through."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Annotated, Any

import numpy as np

from nlibias.schema.declared import Refuse, declared, is_int

_items_done: ContextVar[Callable[[float], None] | None] = ContextVar("nlibias_items_done", default=None)
_fraction_done: ContextVar[Callable[[float], None] | None] = ContextVar("nlibias_fraction_done", default=None)


@contextmanager
def items_progress(hook: Callable[[float], None]) -> Iterator[None]:
    """While a backend computes a batch, ``hook(k)`` hears of ``k`` more items done.

    >>> heard = []
    >>> with items_progress(heard.append), unit_progress(10):
    ...     report_fraction(0.25)
    >>> heard
    [2.5]
    """
    token = _items_done.set(hook)
    try:
        yield
    finally:
        _items_done.reset(token)


@contextmanager
def unit_progress(items: int) -> Iterator[None]:
    """Inside: :func:`report_fraction` reports fractions of a unit of work worth ``items`` items."""
    outer = _items_done.get()
    token = _fraction_done.set(None if outer is None else (lambda fraction: outer(fraction * items)))
    try:
        yield
    finally:
        _fraction_done.reset(token)


def report_fraction(fraction: float) -> None:
    """Tell the listening bar, if any, that ``fraction`` more of the current unit is done."""
    hook = _fraction_done.get()
    if hook is not None:
        hook(fraction)


def _limit(counts: str) -> Refuse:
    """A batch limit (or torch's thread count): a positive integer, or None (unset)."""
    return Refuse(
        lambda value: value is not None and (not is_int(value) or value < 1),
        lambda value: f"is {value!r}; give a positive number of {counts}",
    )


@declared
def check_batch_limits(
    *,
    max_tokens: Annotated[Any, _limit("tokens a batch may hold (padding included)")] = None,
    max_batch_size: Annotated[Any, _limit("inputs a batch may hold")] = None,
    max_length: Annotated[Any, _limit("tokens an input may keep (longer ones are truncated)")] = None,
    threads: Annotated[Any, _limit("threads, or leave it unset for one per CPU core")] = None,
) -> None:
    """Refuse a batch limit (or torch's thread count) that is not a positive integer; ``None`` passes.

    >>> check_batch_limits(max_tokens=8192, max_batch_size=128, max_length=None)
    >>> check_batch_limits(max_tokens=8192, max_batch_size=0)
    Traceback (most recent call last):
    nlibias.errors.ConfigError: max_batch_size is 0; give a positive number of inputs a batch may hold
    """


def plan_batches(
    lengths: Sequence[int] | np.ndarray, *, max_tokens: int = 8192, max_batch_size: int = 128
) -> list[np.ndarray]:
    """Index batches of similar length, longest first (the most memory-hungry fails early), each
    within ``batch_size * longest_item <= max_tokens`` (a longer item alone).

    >>> [b.tolist() for b in plan_batches([3, 10, 4, 9], max_tokens=20)]
    [[1, 3], [2, 0]]
    """
    lengths_array = np.asarray(lengths, dtype=np.int64)
    if max_tokens < 1 or max_batch_size < 1:
        raise ValueError("max_tokens and max_batch_size must be positive")
    order = np.argsort(-lengths_array, kind="stable")
    batches: list[np.ndarray] = []
    start = 0
    n = len(order)
    while start < n:
        longest = max(int(lengths_array[order[start]]), 1)
        size = max(1, min(max_batch_size, max_tokens // longest))
        batches.append(order[start : start + size])
        start += size
    return batches


def padding_efficiency(lengths: Sequence[int] | np.ndarray, batches: Sequence[np.ndarray]) -> float:
    """Real tokens / padded tokens for a batch plan (1.0 means no padding at all).

    >>> padding_efficiency([2, 4], [__import__("numpy").array([0, 1])])
    0.75
    """
    lengths_array = np.asarray(lengths, dtype=np.int64)
    real = int(lengths_array.sum())
    padded = sum(int(lengths_array[b].max()) * len(b) for b in batches if len(b))
    return real / padded if padded else 1.0
