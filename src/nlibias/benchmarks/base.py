"""The benchmark contract, the only extension point (compare HELM's ``Scenario``): a
:class:`Benchmark`'s expansion, sample sources and, per predictor kind it scores, its
:class:`Measures`. The built-in ones are assembled in :mod:`nlibias.catalog`.

>>> def score(columns, outputs, *, model="", bootstrap=0, seed=0):
...     return {"overall": {"n": len(columns)}}
>>> toy = Benchmark(name="toy", description="a toy", sources=("toy",),
...                 measures={"classifier": Measures(score=score, tables=lambda models: "")})
>>> toy.kinds(), toy.measures_for("classifier").score is score
(('classifier',), True)
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, fields
from functools import cached_property
from pathlib import Path
from typing import Any, Protocol

from nlibias.benchmarks.data_locations import PinnedData
from nlibias.errors import ConfigError, DataError, did_you_mean
from nlibias.schema import Sample
from nlibias.schema.columns import SampleColumns
from nlibias.schema.measure_info import MeasureInfo
from nlibias.schema.model_keys import PREDICTOR_KINDS
from nlibias.schema.outputs import ModelOutputs, RunUnits


@dataclass(frozen=True, slots=True)
class SentencePair:
    """Two sentences that differ only in the identity words, for token-probability bias
    (docs/design.md, "Token probability (TP)").

    >>> SentencePair("Women can't drive.", "Men can't drive.").texts
    ("Women can't drive.", "Men can't drive.")
    """

    more: str
    """The more-stereotypical sentence."""
    less: str
    """The less-stereotypical (counterfactual) sentence."""

    @property
    def texts(self) -> tuple[str, str]:
        return self.more, self.less


def premise_hypothesis_pairs(columns: SampleColumns) -> list[SentencePair | None]:
    """The pair of each sample of a sentence-pair benchmark: (premise, hypothesis)."""
    return [
        SentencePair(p, h) for p, h in zip(columns.premise.tolist(), columns.hypothesis.tolist(), strict=True)
    ]


class Expansion(Protocol):
    """What a benchmark's ``expand`` returns: the samples and a JSON-able summary of the counts."""

    @property
    def samples(self) -> Sequence[Sample]: ...

    def summary(self) -> dict[str, Any]: ...


Expander = Callable[..., Expansion]
"""``expand(source: str | Path | None, **options)``; ``source`` None: the data dir."""
ColumnScorer = Callable[..., dict[str, Any]]
"""``score(columns, outputs, *, model, bootstrap, seed)``: one model's metrics (``{"overall": M, ...}``)."""
TablesFormatter = Callable[..., str]
"""``tables(models, **options)``: the text tables of model key → that model's metrics."""
AnswerRows = Callable[[Path, str, SampleColumns], Iterable[dict[str, Any]]]
"""``answer_rows(path, column, columns)``: a file's answer strings as checked prediction rows."""
SentencePairs = Callable[[SampleColumns], list[SentencePair | None]]
"""The sentence pair each sample stands for (None: none, or scored through another sample)."""
UnitsBuilder = Callable[[SampleColumns, ModelOutputs, str], RunUnits]
"""``units(columns, outputs, model)``: one model's resampling units (what the gate and paired
comparisons draw)."""


@dataclass(frozen=True)
class Measures:
    """What a benchmark computes from the outputs of one predictor kind, and how it shows them."""

    score: ColumnScorer
    tables: TablesFormatter
    across: Callable[[Mapping[str, Any]], Mapping[str, Any]] | None = None
    """``across(models)``: what this kind's models add to ``metrics.json`` together."""
    infos: tuple[MeasureInfo, ...] = ()
    """The measures reported on this kind's outputs, declared once (schema, reports, verdicts)."""
    units: UnitsBuilder | None = None
    """None: its runs cannot be gated or paired."""

    def resampling_units(
        self, columns: SampleColumns, outputs: ModelOutputs, *, model: str, measures: Iterable[str]
    ) -> RunUnits:
        """One model's units, refused where they do not resample every measure of ``measures``."""
        units = None if self.units is None else self.units(columns, outputs, model)
        missing = sorted(set(measures) - set(() if units is None else units.point()))
        if units is None or missing:
            what = ", ".join(missing) if units is not None else "its measures"
            raise DataError(
                f"the paired comparison cannot resample {what} of model {model!r}: its benchmark's "
                "measures declare no resampling units for them (Measures.units)",
                model=model,
            )
        return units


@dataclass(frozen=True)
class Extra:
    """An analysis of several models together, written as ``metrics.json[name]`` when not empty."""

    name: str
    compute: Callable[[SampleColumns, Mapping[str, ModelOutputs]], Any]
    """``compute(columns, outputs_by_model)``."""
    tables: Callable[[Mapping[str, Any]], str] | None = None
    """``tables(metrics)``: its text table from the whole ``metrics.json``."""


@dataclass(frozen=True)
class Benchmark:
    """One benchmark: its expansion, the sample sources it covers, its measures and tables."""

    name: str
    """Registry name (``nlibias expand NAME``), e.g. ``bbnli``."""
    description: str
    """One line for listings."""
    sources: tuple[str, ...]
    """The ``Sample.source`` values whose samples get this benchmark's measures."""
    measures: Mapping[str, Measures] = field(default_factory=dict)
    """The measures of each predictor kind it scores, in table order."""
    expand: Expander | None = None
    """None: its samples are written by another stage (``nlibias extend``)."""
    expand_options: tuple[str, ...] = ()
    summary_table: Callable[[Mapping[str, Any]], str] | None = None
    provenance_keys: Collection[str] | None = ()
    """Provenance keys the measures read; None: all."""
    neutral_gold: tuple[str, ...] = ()
    """Sources whose bias samples must have gold label neutral (BBNLI)."""
    shared_premises: tuple[str, ...] = ()
    """Sources whose pair members must share their premise text."""
    sentence_pairs: SentencePairs | None = None
    extras: tuple[Extra, ...] = ()
    prompt_styles: tuple[str, ...] = ()
    """Its multiple-choice prompt styles (empty: yes/no NLI prompts)."""
    answer_rows: AnswerRows | None = None
    """How ``nlibias score --answer-column`` reads a file of answer strings; None: it cannot."""
    resampling_unit: str = "pair"
    """What its bootstrap resamples (``metrics.json``'s ``bootstrap.unit``)."""
    pinned_data: tuple[PinnedData, ...] = ()
    citation: str = ""
    data: Mapping[str, Any] = field(default_factory=dict)
    """Free-form facts for listings."""

    def __post_init__(self) -> None:
        problem = _measures_problem(self.measures)
        if not self.sources:
            problem = "sources", "sources must name at least one sample source"
        if problem is not None:
            raise ConfigError(f"benchmark {self.name!r}: {problem[1]}", parameter=problem[0])

    def measure_infos(self) -> tuple[MeasureInfo, ...]:
        """Every measure its scorers report, each once, in the order of its kinds (a measure two
        kinds report is declared the same for both: :func:`_measures_problem`)."""
        seen: dict[str, MeasureInfo] = {}
        for measures in self.measures.values():
            for info in measures.infos:
                seen.setdefault(info.name, info)
        return tuple(seen.values())

    def kinds(self) -> tuple[str, ...]:
        """The predictor kinds whose outputs it scores."""
        return tuple(self.measures)

    def measures_for(self, kind: str) -> Measures:
        """The measures of ``kind``'s outputs (:meth:`refusal` says why there are none)."""
        self.check_kinds([("kind", kind)], given="outputs of")
        return self.measures[kind]

    def check_kinds(
        self,
        kinds: Iterable[tuple[str, str]],
        *,
        others: Sequence[Benchmark] = (),
        given: str = "{parameter}= takes",
    ) -> None:
        """Refuse the (parameter, kind) pairs it cannot score, naming ``others`` that do."""
        for parameter, kind in kinds:
            if kind not in self.measures:
                reason = self.refusal(kind, given=given.format(parameter=parameter), others=others)
                raise ConfigError(reason, parameter=parameter)

    def check_prompt_styles(self, styles: Iterable[Any]) -> None:
        """Refuse yes/no styles for multiple-choice samples and multiple-choice styles for NLI ones."""
        choices = bool(self.prompt_styles)
        for style in styles:
            if style.choices != choices:
                wanted = (
                    f"a multiple-choice style ({', '.join(self.prompt_styles)})"
                    if choices
                    else "a yes/no style"
                )
                raise ConfigError(
                    f"prompt style {style.name!r} does not fit {self.name} samples: ask with {wanted}",
                    parameter="prompts",
                )

    def refusal(self, kind: str, *, given: str, others: Sequence[Benchmark] = ()) -> str:
        """Why outputs of ``kind`` cannot be scored and what to use instead (``given``: how they
        were asked for, e.g. ``"models= takes"``)."""
        scored = ", ".join(b.name for b in others if kind in b.measures) or "no registered"
        if kind == "sentence-logprob":
            instead = (
                f"{self.name} samples hold no sentence pairs: "
                "score them with models= (NLI classifiers) or generative= (generative LMs)"
            )
            return f"{instead}; {given} {_KIND_NAMES[kind]}, which score {scored} samples (e.g. `nlibias expand bbnli-tp` for BBNLI's pro/anti hypotheses)"
        if "sentence-logprob" in self.measures and kind in _KIND_NAMES:
            instead = (
                f"{self.name} samples are sentence pairs: score them with mlm= or causal= (token probability)"
            )
        else:
            instead = f"{self.name} samples have no measures for {kind} outputs (they score: {', '.join(self.measures) or 'none'})"
        return (
            f"{instead}; {given} {_KIND_NAMES.get(kind, kind + ' predictors')}, which score {scored} samples"
        )

    def expand_source(self, source: str | Path | None = None, **options: Any) -> Expansion:
        """Expand ``source`` (default: the benchmark's file in the data dir) into samples."""
        unknown = sorted(set(options) - set(self.expand_options))
        if self.expand is None or unknown:
            takes = ", ".join(self.expand_options) or "none"
            reason = (
                "has no expansion: its samples are written by another stage"
                if self.expand is None
                else f"takes no option(s) {', '.join(unknown)} (it takes: {takes})"
            )
            raise ConfigError(
                f"benchmark {self.name!r} {reason}",
                parameter="benchmark" if self.expand is None else unknown[0],
            )
        return self.expand(source, **options)

    def provenance(self) -> frozenset[str] | None:
        """The provenance keys the measures read, or None (keep all)."""
        return None if self.provenance_keys is None else frozenset(self.provenance_keys)


def _measures_problem(measures: Mapping[str, Any]) -> tuple[str, str] | None:
    """What is wrong with a benchmark's measures, as (parameter, reason): a kind that is not a
    Measures, a kind spelt like a built-in one but not it (its samples could never be scored), an
    info that is not a MeasureInfo, one measure declared twice otherwise (the first would win)."""
    seen: dict[str, tuple[str, MeasureInfo]] = {}
    for kind, m in measures.items():
        # a plug-in may score a kind of its own; one spelt almost like a built-in kind is a slip
        close = "" if kind in PREDICTOR_KINDS else did_you_mean(str(kind), PREDICTOR_KINDS, cutoff=0.85)
        if not isinstance(kind, str) or not kind.strip() or any(c.isspace() for c in kind) or close:
            known = close or f"predictor kinds are one word: {', '.join(PREDICTOR_KINDS)} or a plug-in's own"
            return "measures", f"measures of kind {kind!r}: no such predictor kind ({known})"
        if not isinstance(m, Measures):
            return "measures", f"the measures of kind {kind!r} must be a Measures(score=, tables=)"
        for info in m.infos:
            if not isinstance(info, MeasureInfo):
                return (
                    "infos",
                    f"the {kind} measures' infos hold {type(info).__name__} {info!r}, not a MeasureInfo",
                )
            first = seen.setdefault(info.name, (kind, info))
            if first[1] != info:
                one, other = _differences(first[1], info)
                return "infos", (
                    f"measure {info.name!r} is declared twice, differently: for {first[0]} with {one}; "
                    f"for {kind} with {other}. Declare it once (the same MeasureInfo for every kind "
                    "that reports it), or give one of them another name"
                )
    return None


def _differences(a: MeasureInfo, b: MeasureInfo) -> tuple[str, str]:
    """The fields in which ``a`` and ``b`` differ, each's values: ``range (0.0, 1.0), neutral 0.5``."""
    names = [f.name for f in fields(MeasureInfo) if getattr(a, f.name) != getattr(b, f.name)]
    one, other = (", ".join(f"{n} {getattr(info, n)!r}" for n in names) for info in (a, b))
    return one, other


_KIND_NAMES: dict[str, str] = {
    "classifier": "NLI classifiers",
    "generative": "generative LMs answering NLI prompts",
    "sentence-logprob": "language models scoring sentence pairs (token probability)",
}


@dataclass(frozen=True, eq=False)
class BenchmarkSamples:
    """A checked samples file, its benchmark and its columns, read once by the job and passed down."""

    benchmark: Benchmark
    columns: SampleColumns
    path: Path | None = None
    sha256: str | None = None

    def __len__(self) -> int:
        return len(self.columns)

    def texts(self) -> list[tuple[str, str]]:
        """Each sample's (premise, hypothesis)."""
        return list(zip(self.columns.premise.tolist(), self.columns.hypothesis.tolist(), strict=True))

    @cached_property
    def sentence_pairs(self) -> list[SentencePair | None]:
        """The sentence pair each sample stands for, from its benchmark."""
        if self.benchmark.sentence_pairs is None:
            raise ConfigError(
                f"the {self.benchmark.name} samples hold no sentence pairs, so language-model sentence "
                "scores (token-probability bias) do not apply",
                parameter="samples",
            )
        return self.benchmark.sentence_pairs(self.columns)

    def records(self) -> list[Sample]:
        """The samples as objects."""
        return self.columns.records()
