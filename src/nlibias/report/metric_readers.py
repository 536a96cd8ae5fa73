"""Small readers over one model's metrics dict, shared by tables, plots and the HTML report."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypedDict, TypeGuard, Unpack

from nlibias.schema.model_keys import model_parts as model_parts

#: Count-like keys left out of generic measure tables (shown elsewhere as counts).
GENERIC_SKIP = frozenset({"n", "degenerate_pairs"})


def is_number(value: Any) -> TypeGuard[int | float]:
    return isinstance(value, int | float) and not isinstance(value, bool)


def number(value: Any) -> float | None:
    """``value`` as a float, None where it is not a number."""
    return float(value) if is_number(value) else None


def overall_of(metrics: Mapping[str, Any]) -> Mapping[str, Any]:
    """A model's ``overall``, ``{}`` without one."""
    overall = metrics.get("overall")
    return overall if isinstance(overall, Mapping) else {}


def has_measure(models: Mapping[str, Mapping[str, Any]], measure: str) -> bool:
    """Whether some model's ``overall`` holds ``measure``."""
    return any(measure in overall_of(m) for m in models.values())


def numeric_measures(m: Mapping[str, Any], *, skip: frozenset[str] = GENERIC_SKIP) -> list[str]:
    """Keys of ``m`` holding a number that is a measure (not a count such as ``n`` or ``n_pairs``)."""
    return [k for k, v in m.items() if is_number(v) and k not in skip and not k.startswith("n_")]


def slice_kinds(metrics: Mapping[str, Any]) -> list[str]:
    """The ``by_*`` slicings present in a model's metrics, e.g. ``["domain", "subtopic"]``."""
    return [
        key.removeprefix("by_")
        for key, value in metrics.items()
        if key.startswith("by_") and isinstance(value, Mapping) and value
    ]


def slice_groups(
    metrics: Mapping[str, Any], *, kinds: list[str] | None = None
) -> list[tuple[str, Mapping[str, Any]]]:
    """``[("all", overall), (slice name, M), ...]`` over every (or the given) ``by_*`` slicing."""
    rows: list[tuple[str, Mapping[str, Any]]] = []
    if isinstance(metrics.get("overall"), Mapping):
        rows.append(("all", metrics["overall"]))
    chosen = kinds if kinds is not None else slice_kinds(metrics)
    several = len(chosen) > 1
    for kind in chosen:
        group = metrics.get(f"by_{kind}")
        if not isinstance(group, Mapping):
            continue
        for name, m in sorted(group.items()):
            if isinstance(m, Mapping):
                rows.append((f"{kind}: {name}" if several else str(name), m))
    return rows


def interval(m: Mapping[str, Any], measure: str) -> tuple[float, float] | None:
    """The bootstrap interval of ``measure`` in ``m`` (``None`` when absent or malformed)."""
    ci = m.get("ci")
    if not isinstance(ci, Mapping):
        return None
    bounds = ci.get(measure)
    if isinstance(bounds, list | tuple) and len(bounds) == 2 and all(is_number(b) for b in bounds):
        return float(bounds[0]), float(bounds[1])
    return None


class IntervalStyle(TypedDict, total=False):
    """How :func:`format_with_interval` writes a value and its interval."""

    decimals: int
    """For the value and both bounds (default 2)."""
    signed: bool
    """A sign on the value."""
    signed_interval: bool
    """A sign on both bounds."""
    counts: bool
    """An int value shown as an integer (a count)."""
    span: str | None
    """The CSS class of the HTML ``<span>`` around the interval (default ``ci``); ``None``: plain text."""


def value_with_interval(m: Mapping[str, Any], measure: str, **style: Unpack[IntervalStyle]) -> str:
    """``measure``'s value in ``m`` and its 95% interval, by :func:`format_with_interval`."""
    return format_with_interval(m.get(measure), interval(m, measure), **style)


def format_with_interval(
    value: Any,
    bounds: tuple[float, float] | None,
    *,
    decimals: int = 2,
    signed: bool = False,
    signed_interval: bool = False,
    counts: bool = False,
    span: str | None = "ci",
) -> str:
    """A value and its interval as :class:`IntervalStyle` says (``–`` without a value)."""
    if not is_number(value):
        return "–"
    sign = "+" if signed else ""
    text = f"{value:{sign}d}" if counts and isinstance(value, int) else f"{value:{sign}.{decimals}f}"
    if bounds is None:
        return text
    bound = "+" if signed_interval else ""
    shown = f"[{bounds[0]:{bound}.{decimals}f}, {bounds[1]:{bound}.{decimals}f}]"
    return f"{text} {shown}" if span is None else f'{text} <span class="{span}">{shown}</span>'


def measure_n(slice_metrics: Mapping[str, Any], measure: str) -> int | None:
    """How many items a slice's ``measure`` is over (``n_pro_answered`` for ``yes_rate_pro``, else ``n``)."""
    value = slice_metrics.get("n_pro_answered" if measure == "yes_rate_pro" else "n")
    return int(value) if is_number(value) else None
