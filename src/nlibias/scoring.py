"""Which measures apply to which samples: a small, strict registry keyed by ``Sample.source``.

Each benchmark registers a *scorer* (one model's predictions → that model's metrics dict) and,
optionally, a *tables* function (several models' metrics → text tables in the papers' layouts).
Targets may be lazy ``"package.module:function"`` strings so that nothing is imported until a
benchmark is actually scored.

>>> sorted(registered_sources())[:2]
['bbnli', 'bbnli-next']
"""

from __future__ import annotations

import difflib
import importlib
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from nlibias.errors import ConfigError
from nlibias.schema import Prediction, Sample

Scorer = Callable[..., dict[str, Any]]
"""``scorer(samples, predictions, *, bootstrap: int, seed: int) -> {"overall": M, "by_...": {...}}``"""
TablesFormatter = Callable[[Mapping[str, Any]], str]
"""``tables(models) -> str`` where ``models`` maps model key → that model's metrics dict."""


ColumnScorer = Callable[..., dict[str, Any]]
"""``scorer(columns: SampleColumns, probs: ndarray, *, model: str, bootstrap: int, seed: int)``:
a classifier's metrics from the samples' columns and its ``(samples x 3)`` probabilities, equal to
the scorer's on the same samples and predictions (a streamed audit calls it). A scorer that also
takes ``labels=`` (a label code per sample, -1 for none; probabilities NaN where a row gave only
a label) scores predictions files without holding them (``nlibias score``)."""


@dataclass(frozen=True)
class _Entry:
    scorer: Scorer | str
    tables: TablesFormatter | str | None
    provenance: tuple[str, ...] | str | None = None
    """Provenance keys the scorer reads (a lazy ``module:ATTRIBUTE`` string allowed); None: all."""
    columns: ColumnScorer | str | None = None
    """The same measures over columns (:data:`ColumnScorer`); None: objects only."""


# One line per benchmark. Lazy targets keep `import nlibias` light. The BBNLI measures read no
# provenance, so an audit of a BBNLI(-next) run does not hold the samples' provenance records.
_BBNLI = (
    "nlibias.metrics.bbnli_scorer:score_bbnli",
    "nlibias.tables:format_bbnli_tables",
    (),
    "nlibias.metrics.bbnli_scorer:score_bbnli_probabilities",
)
_BUILTIN: dict[str, tuple[str, str | None, tuple[str, ...] | str | None, str | None]] = {
    "bbnli": _BBNLI,
    "bbnli-next": _BBNLI,
    "custom": _BBNLI,
    "wq-nli": (
        "nlibias.metrics.wq_nli:score_wq_nli",
        "nlibias.metrics.wq_nli:format_wq_nli_tables",
        "nlibias.metrics.wq_nli:PROVENANCE_KEYS",
        "nlibias.metrics.wq_nli:score_wq_nli_columns",
    ),
    "occupations": (
        "nlibias.metrics.occupations:score_occupations",
        "nlibias.metrics.occupations:format_occupations_tables",
        "nlibias.metrics.occupations:PROVENANCE_KEYS",
        "nlibias.metrics.occupations:score_occupations_columns",
    ),
}

_REGISTRY: dict[str, _Entry] = {name: _Entry(*targets) for name, targets in _BUILTIN.items()}

# Generative LMs answer yes/no on pro/anti pairs: on these sources their keys
# (`model|prompt=STYLE|MODE`) get the generative measures (yes-rates, Table 8) as well.
_PAIR_SOURCES = ("bbnli", "bbnli-next", "custom")
_GENERATIVE = _Entry(
    "nlibias.metrics.generative:score_generative", "nlibias.metrics.generative:format_generative_tables"
)


def is_generative_key(model: str) -> bool:
    from nlibias.backends.generative import split_model_key

    return split_model_key(model) is not None


def register_scorer(
    source: str,
    scorer: Scorer | str,
    *,
    tables: TablesFormatter | str | None = None,
    provenance_keys: Collection[str] | None = None,
    column_scorer: ColumnScorer | str | None = None,
    replace: bool = False,
) -> None:
    """Register the measures of a benchmark source (refuses duplicates unless ``replace``).

    ``provenance_keys`` names the provenance keys the scorer reads; an audit then loads only
    those (less memory per sample). None (the default) keeps every key. ``column_scorer``
    (:data:`ColumnScorer`) lets classifier audits of the source stream from the run directory.
    """
    if source in _REGISTRY and not replace:
        raise ConfigError(f"a scorer for source {source!r} is already registered (pass replace=True)")
    for target in (scorer, tables, column_scorer):
        if isinstance(target, str) and ":" not in target:
            raise ConfigError(f"lazy target {target!r} must look like 'package.module:function'")
    keys = None if provenance_keys is None else tuple(provenance_keys)
    _REGISTRY[source] = _Entry(scorer, tables, keys, column_scorer)


def registered_sources() -> list[str]:
    return list(_REGISTRY)


def _resolve(target: str) -> Any:
    """The object a lazy ``package.module:attribute`` target names."""
    module_name, _, attribute = target.partition(":")
    return getattr(importlib.import_module(module_name), attribute)


def _load(target: Callable[..., Any] | str) -> Callable[..., Any]:
    if not isinstance(target, str):
        return target
    function = _resolve(target)
    if not callable(function):
        raise ConfigError(f"{target} is not callable")
    return function


def _entry(source: str) -> _Entry:
    if source in _REGISTRY:
        return _REGISTRY[source]
    close = difflib.get_close_matches(source, list(_REGISTRY), n=1)
    hint = f" Did you mean {close[0]!r}?" if close else ""
    raise ConfigError(
        f"no measures are registered for sample source {source!r}.{hint} "
        f"Known sources: {', '.join(_REGISTRY)}. Set the samples' `source` field to one of them."
    )


def scorer_for(source: str, model: str | None = None) -> Scorer:
    """The scorer of a source; for a generative model key on a pair benchmark, the generative one."""
    if model is not None and source in _PAIR_SOURCES and is_generative_key(model):
        return _load(_GENERATIVE.scorer)
    return _load(_entry(source).scorer)


def format_all_tables(metrics: Mapping[str, Any], **options: Any) -> str:
    """Every text table of a ``metrics.json``: the benchmark's own layouts, then the generative ones."""
    models: Mapping[str, Any] = metrics["models"]
    source = metrics["source"]
    generative = {k: v for k, v in models.items() if source in _PAIR_SOURCES and is_generative_key(k)}
    others = {k: v for k, v in models.items() if k not in generative}
    parts: list[str] = []
    formatter = tables_for(source)
    if others and formatter is not None:
        try:
            parts.append(formatter(others, **options))
        except TypeError:  # a formatter without options (e.g. `by=`)
            parts.append(formatter(others))
    if generative and _GENERATIVE.tables is not None:
        parts.append(_load(_GENERATIVE.tables)(generative))
    return "\n\n".join(p for p in parts if p)


def provenance_keys_for(source: str | None) -> frozenset[str] | None:
    """The provenance keys the measures of ``source`` read, or None (keep all: an unknown source,
    or a scorer registered without saying).

    >>> sorted(provenance_keys_for("bbnli")), provenance_keys_for("no-such-source")
    ([], None)
    """
    entry = _REGISTRY.get(source) if source is not None else None
    if entry is None or entry.provenance is None:
        return None
    keys = entry.provenance
    return frozenset(_resolve(keys) if isinstance(keys, str) else keys)


def column_scorer_for(source: str) -> ColumnScorer | None:
    """The columnar scorer of ``source`` (:data:`ColumnScorer`), or None when it has only the
    object one (an audit then holds its samples and predictions as objects).

    >>> column_scorer_for("bbnli").__name__, column_scorer_for("occupations").__name__
    ('score_bbnli_probabilities', 'score_occupations_columns')
    """
    target = _entry(source).columns
    return None if target is None else _load(target)


def tables_for(source: str) -> TablesFormatter | None:
    target = _entry(source).tables
    return _load(target) if target is not None else None


def samples_source(samples: Sequence[Sample]) -> str:
    """The one source of a sample set (mixing benchmarks in one audit is refused: their measures differ)."""
    sources = sorted({s.source for s in samples})
    if len(sources) != 1:
        raise ConfigError(
            f"the samples mix sources {', '.join(sources)}; audit each benchmark separately "
            f"(one samples directory per benchmark)"
        )
    return sources[0]


def score_model(
    samples: Sequence[Sample], predictions: Sequence[Prediction], *, bootstrap: int = 1000, seed: int = 0
) -> dict[str, Any]:
    """One model's metrics on ``samples`` with the measures of their benchmark."""
    return scorer_for(samples_source(samples))(samples, predictions, bootstrap=bootstrap, seed=seed)
