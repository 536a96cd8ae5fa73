"""The benchmark contract: one object per benchmark (compare HELM's ``Scenario``).

A :class:`Benchmark` knows how to expand its source into samples, which sample ``source`` values
it covers, which provenance keys its measures read, which measures apply (a scorer over sample
objects and one over sample columns, which audits and scorings use), and how its results
are laid out as text tables. Its functions are named by lazy ``"package.module:attribute"``
targets, so that registering a benchmark imports nothing and this layer depends on no other:
the measures live in :mod:`nlibias.metrics`, the tables in :mod:`nlibias.report`.

Adding a benchmark is one module (its source reader) plus one :class:`Benchmark` registered in
:mod:`nlibias.benchmarks.registry` (or, from another package, an entry point in the group
``nlibias.benchmarks`` that names the object).

>>> from nlibias.benchmarks.registry import get_benchmark
>>> bbnli = get_benchmark("bbnli")
>>> bbnli.sources, bbnli.pair_measures_for_generative
(('bbnli', 'bbnli-next', 'custom'), True)
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from nlibias.errors import ConfigError
from nlibias.schema import Sample

LazyTarget = str
"""``"package.module:attribute"``, imported when first used."""


class Expansion(Protocol):
    """What a benchmark's ``expand`` returns: the samples and a JSON-able summary of the counts."""

    @property
    def samples(self) -> Sequence[Sample]: ...

    def summary(self) -> dict[str, Any]: ...


Expander = Callable[..., Expansion]
"""``expand(source: str | Path | None, **options) -> Expansion``; ``source`` None: the data dir."""
Scorer = Callable[..., dict[str, Any]]
"""``scorer(samples, predictions, *, bootstrap: int, seed: int) -> {"overall": M, "by_...": {...}}``"""
ColumnScorer = Callable[..., dict[str, Any]]
"""``scorer(columns: SampleColumns, probs: ndarray, *, model: str, bootstrap: int, seed: int)``:
a classifier's metrics from the samples' columns and its ``(samples x 3)`` probabilities, equal to
the scorer's on the same samples and predictions (a streamed audit calls it). A scorer that also
takes ``labels=`` (a label code per sample, -1 for none; probabilities NaN where a row gave only
a label) scores predictions files without holding them (``nlibias score``)."""
SentencePairs = Callable[..., list[Any]]
"""``pairs(samples) -> [SentencePair | None, ...]``, one per sample (None: the sample is scored
through another sample of its item, or its pair could not be recovered)."""
TablesFormatter = Callable[..., str]
"""``tables(models, **options) -> str`` where ``models`` maps model key → that model's metrics."""


def resolve(target: LazyTarget | Callable[..., Any], what: str) -> Any:
    """The object a lazy ``package.module:attribute`` target names (a callable passes through)."""
    if not isinstance(target, str):
        return target
    module_name, _, attribute = target.partition(":")
    try:
        return getattr(importlib.import_module(module_name), attribute)
    except (ImportError, AttributeError) as error:
        raise ConfigError(f"{what}: cannot load {target!r} ({error})", parameter="target") from None


@dataclass(frozen=True)
class Benchmark:
    """One benchmark: its expansion, the sample sources it covers, its measures and tables."""

    name: str
    """Registry name (``nlibias expand NAME``), e.g. ``bbnli``."""
    description: str
    """One line for listings."""
    sources: tuple[str, ...]
    """The ``Sample.source`` values whose samples get this benchmark's measures."""
    scorer: LazyTarget | Scorer
    """Measures of one model's predictions on sample objects (:data:`Scorer`): the same numbers
    as ``column_scorer`` for a list of samples in a notebook, and the tests' reference."""
    tables: LazyTarget | TablesFormatter
    """Text tables of several models' metrics in the papers' layouts (:data:`TablesFormatter`)."""
    expand: LazyTarget | Expander | None = None
    """Source → samples (:data:`Expander`); None for sample sets written by another stage (e.g.
    ``nlibias extend``'s datasets)."""
    expand_options: tuple[str, ...] = ()
    """Keyword options ``expand`` takes besides ``source`` (others are refused by name)."""
    summary_table: LazyTarget | Callable[[Mapping[str, Any]], str] | None = None
    """The expansion summary as text (what ``nlibias expand`` prints)."""
    column_scorer: LazyTarget | ColumnScorer | None = None
    """The measures over columns (:data:`ColumnScorer`): what every audit and scoring computes
    them with (a benchmark without one can be expanded and listed, not audited)."""
    provenance_keys: Collection[str] | LazyTarget | None = ()
    """Provenance keys the measures read (a lazy ``module:ATTRIBUTE`` allowed); None: all."""
    pair_measures_for_generative: bool = False
    """Generative LMs' yes/no answers get the pair measures of :mod:`nlibias.metrics.generative`
    (pro/anti pairs); otherwise they get this benchmark's own measures."""
    sentence_pairs: LazyTarget | SentencePairs | None = None
    """The sentence pair each sample stands for, for token-probability bias (:data:`SentencePairs`);
    None: its samples hold no sentence pairs (a language model's sentence scores do not apply)."""
    citation: str = ""
    data: Mapping[str, Any] = field(default_factory=dict)
    """Free-form facts for listings (licence, paper, counts)."""

    def __post_init__(self) -> None:
        targets = {
            "scorer": self.scorer,
            "tables": self.tables,
            "expand": self.expand,
            "summary_table": self.summary_table,
            "column_scorer": self.column_scorer,
            "sentence_pairs": self.sentence_pairs,
        }
        for name, target in targets.items():
            if isinstance(target, str) and ":" not in target:
                raise ConfigError(
                    f"benchmark {self.name!r}: lazy target {target!r} must look like 'package.module:function'",
                    parameter=name,
                )
        if not self.sources:
            raise ConfigError(
                f"benchmark {self.name!r}: sources must name at least one sample source", parameter="sources"
            )

    def expand_source(self, source: str | Path | None = None, **options: Any) -> Expansion:
        """Expand ``source`` (default: the benchmark's file in the data dir) into samples."""
        if self.expand is None:
            raise ConfigError(
                f"benchmark {self.name!r} has no expansion: its samples are written by another stage",
                parameter="benchmark",
            )
        unknown = sorted(set(options) - set(self.expand_options))
        if unknown:
            takes = ", ".join(self.expand_options) or "none"
            raise ConfigError(
                f"benchmark {self.name!r} takes no option(s) {', '.join(unknown)} (it takes: {takes})",
                parameter=unknown[0],
            )
        expander: Expander = resolve(self.expand, f"benchmark {self.name!r}")
        return expander(source, **options)

    def provenance(self) -> frozenset[str] | None:
        """The provenance keys the measures read, or None (keep all)."""
        keys = self.provenance_keys
        if keys is None:
            return None
        return frozenset(resolve(keys, self.name) if isinstance(keys, str) else keys)
