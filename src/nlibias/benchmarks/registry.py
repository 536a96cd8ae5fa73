"""The benchmark registry: one :class:`~nlibias.benchmarks.base.Benchmark` per name, found by
name (``nlibias expand NAME``) or by the ``source`` field of samples (which measures apply).

Strict: a name or source registered twice is refused unless ``replace=True``; an unknown name
gets the closest known one as a hint. Third-party packages add benchmarks through the entry-point
group ``nlibias.benchmarks`` (each entry names a ``Benchmark`` object), loaded on first lookup.

Which measures a model's predictions get is decided from data: the samples' ``source`` and the
predictor's kind (``classifier`` probabilities or ``generative`` yes/no answers), never from the
model's name.

>>> [b.name for b in benchmarks()][:3]
['bbnli', 'wq-nli', 'occupations']
>>> scorer_for("bbnli", "generative").__name__
'score_generative'
"""

from __future__ import annotations

import difflib
from collections.abc import Sequence
from typing import Any

from nlibias.benchmarks.base import Benchmark, ColumnScorer, Scorer, TablesFormatter, resolve
from nlibias.errors import ConfigError, DataError
from nlibias.schema import Sample
from nlibias.schema.model_keys import PredictorKind

ENTRY_POINT_GROUP = "nlibias.benchmarks"

BUILTIN: tuple[Benchmark, ...] = (
    Benchmark(
        name="bbnli",
        description="BBNLI (Akyürek et al. 2022): templated pro/anti-stereotype NLI pairs and test "
        "hypotheses, from its JSON directory or its expanded CSV; also BBNLI-next and custom pair sets",
        sources=("bbnli", "bbnli-next", "custom"),
        expand="nlibias.benchmarks.bbnli_source:expand_bbnli_source",
        summary_table="nlibias.report.tables:format_bbnli_expansion",
        scorer="nlibias.metrics.bbnli_scorer:score_bbnli",
        tables="nlibias.report.tables:format_bbnli_tables",
        column_scorer="nlibias.metrics.bbnli_scorer:score_bbnli_probabilities",
        provenance_keys=(),  # the BBNLI measures read no provenance: audits do not hold it
        pair_measures_for_generative=True,
    ),
    Benchmark(
        name="wq-nli",
        description="WinoQueer-NLI (paper 003): stereotypical and counter-stereotypical premises "
        "with a shared hypothesis; measures M1-M8",
        sources=("wq-nli",),
        expand="nlibias.benchmarks.wq_nli:expand_wq_nli",
        summary_table="nlibias.report.tables:format_wq_nli_expansion",
        scorer="nlibias.metrics.wq_nli:score_wq_nli",
        tables="nlibias.report.wq_nli_tables:format_wq_nli_tables",
        column_scorer="nlibias.metrics.wq_nli:score_wq_nli_columns",
        provenance_keys="nlibias.metrics.wq_nli:PROVENANCE_KEYS",
        sentence_pairs="nlibias.benchmarks.wq_tp:wq_nli_sentence_pairs",
    ),
    Benchmark(
        name="occupations",
        description="Gender-occupation NLI challenge set (paper 004): occupation premises x "
        "female/male hypotheses, or the authors' evaluation sets (snli-eval, mnli-eval, ood-eval); "
        "measures S (binary), dP, B, S_3way",
        sources=("occupations",),
        expand="nlibias.benchmarks.occupations:expand_occupations",
        expand_options=("balance", "hypothesis_templates", "seed"),
        summary_table="nlibias.report.occupation_tables:format_occupations_expansion",
        scorer="nlibias.metrics.occupations:score_occupations",
        tables="nlibias.report.occupation_tables:format_occupations_tables",
        column_scorer="nlibias.metrics.occupations:score_occupations_columns",
        provenance_keys="nlibias.metrics.occupations:PROVENANCE_KEYS",
    ),
)

_PAIRS = "nlibias.schema.sentence_pairs:premise_hypothesis_pairs"
_TP_SCORER = "nlibias.metrics.token_probability:score_token_probability"
_TP_TABLES = "nlibias.report.tp_tables:format_tp_tables"
_TP_SUMMARY = "nlibias.report.tp_tables:format_pairs_expansion"


def sentence_pair_benchmark(name: str, description: str, expand: str) -> Benchmark:
    """A benchmark of (more, less) sentence pairs scored for token-probability bias: every one
    shares the pairs' reader, scorer, tables and summary and differs only in its source."""
    return Benchmark(
        name=name,
        description=description,
        sources=(name,),
        expand=f"nlibias.benchmarks.sentence_pairs:{expand}",
        summary_table=_TP_SUMMARY,
        scorer=_TP_SCORER,
        tables=_TP_TABLES,
        sentence_pairs=_PAIRS,
        provenance_keys=("direction",),
    )


SENTENCE_PAIR_BENCHMARKS: tuple[Benchmark, ...] = (
    sentence_pair_benchmark(
        "crows-pairs",
        "CrowS-Pairs (Nangia et al. 2020): 1,508 sentence pairs, 9 bias types, stereo and "
        "antistereo directions; token-probability bias of masked and causal LMs",
        "expand_crows_pairs",
    ),
    sentence_pair_benchmark(
        "winoqueer",
        "WinoQueer (Felkner et al. 2023): LGBTQ+ vs counterfactual sentence pairs "
        "(winoqueer_final.csv, pinned by git blob id); token-probability bias",
        "expand_winoqueer",
    ),
    sentence_pair_benchmark(
        "bbnli-tp",
        "BBNLI's pro vs anti hypotheses as sentence pairs (token-probability bias)",
        "expand_bbnli_pairs",
    ),
    sentence_pair_benchmark(
        "sentence-pairs",
        "Your own (more, less) sentence pairs from a CSV or JSONL file (columns more, less, "
        "optional group); token-probability bias",
        "expand_user_pairs",
    ),
)

_GENERATIVE_SCORER = "nlibias.metrics.generative:score_generative"
_GENERATIVE_TABLES = "nlibias.report.generative_tables:format_generative_tables"

_BY_NAME: dict[str, Benchmark] = {}
_BY_SOURCE: dict[str, Benchmark] = {}
_entry_points_loaded = False


def register_benchmark(benchmark: Benchmark, *, replace: bool = False) -> None:
    """Add ``benchmark`` to the registry (a name or sample source taken already is refused
    unless ``replace``)."""
    if not isinstance(benchmark, Benchmark):
        raise ConfigError(
            f"register_benchmark takes a Benchmark, got {type(benchmark).__name__}", parameter="benchmark"
        )
    if not replace:
        if benchmark.name in _BY_NAME:
            raise ConfigError(
                f"a benchmark named {benchmark.name!r} is already registered (pass replace=True)",
                parameter="benchmark",
            )
        taken = [s for s in benchmark.sources if s in _BY_SOURCE]
        if taken:
            raise ConfigError(
                f"benchmark {benchmark.name!r}: sample source(s) {', '.join(taken)} already belong to "
                f"{_BY_SOURCE[taken[0]].name!r} (pass replace=True)",
                parameter="benchmark",
            )
    _BY_NAME[benchmark.name] = benchmark
    for source in benchmark.sources:
        _BY_SOURCE[source] = benchmark


for _builtin in (*BUILTIN, *SENTENCE_PAIR_BENCHMARKS):
    register_benchmark(_builtin)


def _load_entry_points() -> None:
    global _entry_points_loaded
    if _entry_points_loaded:
        return
    _entry_points_loaded = True
    from importlib.metadata import entry_points

    for entry in entry_points(group=ENTRY_POINT_GROUP):
        if entry.name in _BY_NAME:
            continue
        try:
            benchmark = entry.load()
        except Exception as error:  # a broken plug-in must not stop the built-in benchmarks
            raise ConfigError(f"entry point {entry.name!r} ({entry.value}) failed to load: {error}") from None
        register_benchmark(benchmark)


def benchmarks() -> list[Benchmark]:
    """Every registered benchmark, built-in first."""
    _load_entry_points()
    return list(_BY_NAME.values())


def _unknown(kind: str, name: str, known: Sequence[str], fix: str) -> str:
    close = difflib.get_close_matches(name, list(known), n=1)
    hint = f" Did you mean {close[0]!r}?" if close else ""
    return f"no benchmark {kind} {name!r}.{hint} Known: {', '.join(known)}. {fix}"


def get_benchmark(name: str) -> Benchmark:
    """The benchmark registered as ``name``."""
    if name not in _BY_NAME:
        _load_entry_points()
    if name in _BY_NAME:
        return _BY_NAME[name]
    raise ConfigError(
        _unknown("named", name, list(_BY_NAME), "Register it with register_benchmark()."),
        parameter="benchmark",
    )


def benchmark_for_source(source: str) -> Benchmark:
    """The benchmark whose measures apply to samples with this ``source``."""
    if source not in _BY_SOURCE:
        _load_entry_points()
    if source in _BY_SOURCE:
        return _BY_SOURCE[source]
    raise DataError(
        _unknown(
            "for sample source",
            source,
            list(_BY_SOURCE),
            "Set the samples' `source` field to one of them, or register a benchmark for it.",
        ),
        field="source",
    )


def registered_sources() -> list[str]:
    _load_entry_points()
    return list(_BY_SOURCE)


def scorer_for(source: str, kind: PredictorKind = "classifier") -> Scorer:
    """The measures for one model's predictions: the benchmark's own, or the generative pair
    measures for yes/no answers on a pair benchmark."""
    benchmark = benchmark_for_source(source)
    if kind == "sentence-logprob":
        return resolve(_TP_SCORER, benchmark.name)
    if kind == "generative" and benchmark.pair_measures_for_generative:
        return resolve(_GENERATIVE_SCORER, benchmark.name)
    return resolve(benchmark.scorer, benchmark.name)


def tables_for(source: str, kind: PredictorKind = "classifier") -> TablesFormatter:
    """The text tables for the metrics of models of one kind on ``source``."""
    benchmark = benchmark_for_source(source)
    if kind == "sentence-logprob":
        return resolve(_TP_TABLES, benchmark.name)
    if kind == "generative" and benchmark.pair_measures_for_generative:
        return resolve(_GENERATIVE_TABLES, benchmark.name)
    return resolve(benchmark.tables, benchmark.name)


def sentence_pairs_for(samples: Sequence[Sample]) -> list[Any]:
    """The sentence pair each sample stands for (token-probability bias), from its benchmark.

    >>> from nlibias.schema import Sample
    >>> s = Sample(id="c:1", source="crows-pairs", domain="age", subtopic="age", premise="Old A.",
    ...            hypothesis="Young A.", gold="neutral")
    >>> sentence_pairs_for([s])
    [SentencePair(more='Old A.', less='Young A.')]
    """
    if not samples:
        return []
    benchmark = benchmark_for_source(samples_source(samples))
    if benchmark.sentence_pairs is None:
        with_pairs = [b.name for b in benchmarks() if b.sentence_pairs is not None]
        raise ConfigError(
            f"the {benchmark.name} samples hold no sentence pairs, so language-model sentence scores "
            f"(token-probability bias) do not apply; expand one of {', '.join(with_pairs)} "
            f"(e.g. `nlibias expand bbnli-tp` for BBNLI's pro/anti hypotheses)",
            parameter="samples",
        )
    return list(resolve(benchmark.sentence_pairs, benchmark.name)(samples))


def provenance_keys_for(source: str | None) -> frozenset[str] | None:
    """The provenance keys the measures of ``source`` read, or None (keep all: an unknown source,
    or a benchmark registered without saying).

    >>> sorted(provenance_keys_for("bbnli")), provenance_keys_for("no-such-source")
    ([], None)
    """
    if source is None:
        return None
    _load_entry_points()
    benchmark = _BY_SOURCE.get(source)
    return None if benchmark is None else benchmark.provenance()


def column_scorer_for(source: str) -> ColumnScorer:
    """The columnar scorer of ``source``: what every audit and scoring computes the measures with.

    >>> column_scorer_for("bbnli").__name__, column_scorer_for("occupations").__name__
    ('score_bbnli_probabilities', 'score_occupations_columns')
    """
    benchmark = benchmark_for_source(source)
    if benchmark.column_scorer is None:
        raise ConfigError(
            f"benchmark {benchmark.name!r} registers no column_scorer, which audits and scorings "
            "compute the measures with; register one (see nlibias.benchmarks.base.ColumnScorer)"
        )
    return resolve(benchmark.column_scorer, benchmark.name)


def pair_measures_for_generative(source: str) -> bool:
    """Whether generative LMs' yes/no answers on ``source`` get the generative pair measures
    (:mod:`nlibias.metrics.generative`) rather than the benchmark's own.

    >>> pair_measures_for_generative("bbnli"), pair_measures_for_generative("wq-nli")
    (True, False)
    """
    return benchmark_for_source(source).pair_measures_for_generative


_KIND_NAMES: dict[str, str] = {
    "classifier": "NLI classifiers",
    "generative": "generative LMs answering NLI prompts",
    "sentence-logprob": "language models scoring sentence pairs (token probability)",
}


def scorable_kinds(source: str) -> tuple[PredictorKind, ...]:
    """The predictor kinds whose outputs the measures of ``source`` score: ``classifier`` and
    ``generative`` where its benchmark has a column scorer (NLI measures), ``sentence-logprob``
    where it says which sentence pair each sample stands for (:attr:`Benchmark.sentence_pairs`).

    >>> scorable_kinds("bbnli"), scorable_kinds("crows-pairs")
    (('classifier', 'generative'), ('sentence-logprob',))
    >>> scorable_kinds("wq-nli")
    ('classifier', 'generative', 'sentence-logprob')
    """
    return _kinds_of(benchmark_for_source(source))


def _kinds_of(benchmark: Benchmark) -> tuple[PredictorKind, ...]:
    kinds: list[PredictorKind] = []
    if benchmark.column_scorer is not None:
        kinds += ["classifier", "generative"]
    if benchmark.sentence_pairs is not None:
        kinds.append("sentence-logprob")
    return tuple(kinds)


def kind_refusal(source: str, kind: PredictorKind, *, given: str) -> str | None:
    """Why outputs of ``kind`` cannot be scored on samples of ``source``, what to use instead and
    which benchmarks that kind scores (``given``: how the outputs were asked for, e.g.
    ``"models= takes"``); None when they can be scored. A benchmark that scores no kind at all
    (registered without a column scorer or sentence pairs) is refused by :func:`column_scorer_for`.

    >>> for part in kind_refusal("crows-pairs", "classifier", given="models= takes").split("; "):
    ...     print(part)
    crows-pairs samples are sentence pairs: score them with mlm= or causal= (token probability)
    models= takes NLI classifiers, which score bbnli, wq-nli, occupations samples
    >>> kind_refusal("wq-nli", "sentence-logprob", given="mlm= takes") is None
    True
    """
    benchmark = benchmark_for_source(source)
    kinds = _kinds_of(benchmark)
    if kind in kinds:
        return None
    if not kinds:
        column_scorer_for(source)  # raises: says what to register
    hint = ""
    if kind == "sentence-logprob":
        instead = (
            f"{benchmark.name} samples hold no sentence pairs: "
            "score them with models= (NLI classifiers) or generative= (generative LMs)"
        )
        hint = " (e.g. `nlibias expand bbnli-tp` for BBNLI's pro/anti hypotheses)"
    else:
        instead = (
            f"{benchmark.name} samples are sentence pairs: "
            "score them with mlm= or causal= (token probability)"
        )
    scored = ", ".join(b.name for b in benchmarks() if kind in _kinds_of(b))
    return f"{instead}; {given} {_KIND_NAMES[kind]}, which score {scored} samples{hint}"


def check_predictor_kind(source: str, kind: PredictorKind, *, parameter: str) -> None:
    """Refuse predictors of ``kind``, named in the parameter ``parameter``, on samples of
    ``source`` whose benchmark cannot score their outputs (:func:`kind_refusal`): checked before
    any model loads.

    >>> check_predictor_kind("bbnli", "sentence-logprob", parameter="mlm")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    nlibias.errors.ConfigError: bbnli samples hold no sentence pairs: ...
    """
    reason = kind_refusal(source, kind, given=f"{parameter}= takes")
    if reason is not None:
        raise ConfigError(reason, parameter=parameter)


def samples_source(samples: Sequence[Sample]) -> str:
    """The one source of a sample set (mixing benchmarks in one audit is refused: their measures differ)."""
    sources = sorted({s.source for s in samples})
    if len(sources) != 1:
        raise DataError(
            f"the samples mix sources {', '.join(sources)}; audit each benchmark separately "
            f"(one samples directory per benchmark)",
            field="source",
        )
    return sources[0]


def describe_benchmarks() -> list[dict[str, Any]]:
    """Name, description, sources and whether it expands, for listings."""
    return [
        {
            "name": b.name,
            "description": b.description,
            "sources": list(b.sources),
            "expands": b.expand is not None,
            "streams": b.column_scorer is not None,
        }
        for b in benchmarks()
    ]
