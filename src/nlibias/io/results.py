"""``metrics.json`` typed (TypedDicts), its JSON Schema (``docs/metrics.schema.json``) and reader;
versions 0-2 load, a newer one is refused; each measure must be finite and in its declared range.

>>> schema = metrics_schema()
>>> schema["$defs"]["SliceMetrics"]["properties"]["accuracy"]["anyOf"][0]
{'maximum': 100.0, 'minimum': 0.0, 'type': 'number'}
>>> check_metrics({"source": "bbnli", "models": {"a": {"overall": {"accuracy": -5000.0}}}},
...               path="runs/x/metrics.json")  # doctest: +ELLIPSIS
Traceback (most recent call last):
nlibias.errors.SourceError: runs/x/metrics.json: field models.a.overall.accuracy: -5000.0 is outside [0, 100] (...)
"""

from __future__ import annotations

import functools
import json
import math
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Annotated, Any, Literal, NotRequired, cast

from pydantic import Field, TypeAdapter, with_config
from typing_extensions import TypedDict, get_type_hints

from nlibias.errors import SourceError
from nlibias.io.json_schema import (
    JSON_CONFIG,
    OPEN_CONFIG,
    Integer,
    Issue,
    Pair,
    Range,
    document_issues,
    json_schema,
)
from nlibias.metrics.meta import ALL_MEASURES
from nlibias.schema.declared import is_int
from nlibias.schema.measure_info import METRICS_FILE, MeasureInfo
from nlibias.textio.json_text import parse_json

SCHEMA_VERSION = 2  # files without the field are version 0

Count = Annotated[Integer, Range(0, None)]
Fraction = Annotated[float, Range(0.0, 1.0)]


def declared(measure: str) -> Range:
    """The range declared for ``measure``, as the schema's bounds.

    >>> declared("bbnli_bias_score"), declared("likelihood_diff")
    (Range(low=-100.0, high=100.0), Range(low=0.0, high=None))
    """
    low, high = ALL_MEASURES[measure].range
    return Range(None if math.isinf(low) else low, None if math.isinf(high) else high)


@with_config(JSON_CONFIG)
class SliceMetrics(TypedDict, total=False):
    """The measures of one slice (overall, a domain, a subtopic, a group...), with counts, 95%
    intervals (``ci``) and the numerators/denominators (``counts``). Which measures a slice holds
    depends on the benchmark and the predictor kind."""

    # the measure fields are added from the declarations (measure_fields); these are the others

    # BBNLI / BBNLI-next (classifiers and generative LMs)
    n: Count
    n_pairs: Count
    n_test: Count
    n_unanswered: Count
    n_unpaired: Count
    degenerate_pairs: Count
    unpaired: list[str]
    unanswered: list[str]
    # generative LMs (yes/no answers)
    n_pro_answered: Count
    n_anti_answered: Count
    n_yes_pro: Count
    n_yes_anti: Count
    n_unparsed: Count
    answers: dict[str, Count]
    # BBQ
    n_units: Annotated[Count, Field(description="Filled templates (BBQ's resampling units) in the slice.")]
    n_changed: Annotated[
        Count, Field(description="Imported answers whose example's annotation changed since: not scored.")
    ]
    # WinoQueer-NLI
    n_rows: Count
    repeated_rows: Count
    # gender-occupation
    n_defined: dict[str, Count]
    dominant_gender_by_occupation: Annotated[
        dict[str, str],
        Field(description="Overall only: each occupation's dominant gender as the samples label it."),
    ]
    # token probability (sentence scorers)
    n_stereo: Annotated[
        Count | None,
        Field(description="Pairs of the stereotypical direction that stereo_score reads: its ties left out."),
    ]
    n_antistereo: Annotated[
        Count | None,
        Field(
            description="Pairs of the anti-stereotypical direction that antistereo_score reads: its ties left out."
        ),
    ]
    no_shared_tokens: Count
    samples_without_pair: Annotated[
        Count,
        Field(
            description="Samples neither scored as a sentence pair nor the partner (same pair_key) of one."
        ),
    ]
    # every benchmark
    ci: dict[str, Pair | None]
    counts: dict[str, Count]


class _WithMeasures:
    def __get_pydantic_core_schema__(self, source: Any, handler: Any) -> Any:
        return handler.generate_schema(_slice_type(_measures_key()))


Slice = Annotated[SliceMetrics, _WithMeasures()]


@with_config(JSON_CONFIG)
class RankedSubtopic(TypedDict):
    """One of a model's most biased subtopics (:mod:`nlibias.metrics.ranking`): the value of the
    ranking ``measure`` under the measure's own name, with its details."""

    subtopic: str
    domain: str | None
    measure: NotRequired[Literal["yes_rate_pro", "pro_stereotype_bias"]]
    """Absent in version 0 files (the measure is then the one whose value the entry holds)."""
    yes_rate_pro: NotRequired[Annotated[float, declared("yes_rate_pro")]]
    mean_p_yes_pro: NotRequired[Annotated[float, declared("mean_p_yes_pro")] | None]
    n_pro_answered: NotRequired[Count | None]
    pro_stereotype_bias: NotRequired[Annotated[float, declared("pro_stereotype_bias")]]
    n: NotRequired[Count | None]
    interval: NotRequired[Pair | None]
    """The 95% interval of the ranking measure (absent before version 2; None without bootstrap)."""


@with_config(JSON_CONFIG)
class ModelMetrics(TypedDict):
    """One model's measures: ``overall`` and one mapping of slices per ``by_*`` slicing."""

    overall: Slice
    by_domain: NotRequired[dict[str, Slice]]
    by_subtopic: NotRequired[dict[str, Slice]]
    by_counterfactual: NotRequired[dict[str, Slice]]
    by_identity_group: NotRequired[dict[str, Slice]]
    by_predicate_category: NotRequired[dict[str, Slice]]
    by_subject_kind: NotRequired[dict[str, Slice]]
    by_dominant_gender: NotRequired[dict[str, Slice]]
    by_occupation: NotRequired[dict[str, Slice]]
    by_hypothesis_template: NotRequired[dict[str, Slice]]
    by_eval_set: NotRequired[dict[str, Slice]]
    by_polarity: NotRequired[dict[str, Slice]]
    by_label_type: NotRequired[dict[str, Slice]]
    most_biased_subtopics: NotRequired[list[RankedSubtopic]]
    prompt: NotRequired[str]
    mode: NotRequired[str]
    answer_set: NotRequired[str]


@with_config(JSON_CONFIG)
class BootstrapInfo(TypedDict):
    """How the 95% intervals were computed (``resamples`` 0: no intervals)."""

    resamples: Count
    seed: Integer
    confidence: Fraction
    unit: str


@with_config(JSON_CONFIG)
class RunStats(TypedDict, total=False):
    """What one model's prediction loop did (``run.models.MODEL.stats``)."""

    unique_inputs: Count
    cached: Count
    computed: Count
    cache_rejected: Count
    truncated_pairs: Count
    seconds: Annotated[float, Range(0.0, None)]
    wall_seconds: Annotated[float, Range(0.0, None)]
    pairs_per_second: Annotated[float, Range(0.0, None)]
    real_tokens: Count
    padded_tokens: Count
    padding_efficiency: Annotated[float, Range(0.0, None)]
    n_unparsed: Count
    mode: str
    prompt: str


@with_config(OPEN_CONFIG)
class ModelRun(TypedDict, total=False):
    """A model's description as its backend gives it (backend-specific keys allowed) and stats."""

    backend: str
    model: str
    kind: str
    device: str
    dtype: str
    revision: str
    seed: Integer
    stats: RunStats


@with_config(JSON_CONFIG)
class RunInfo(TypedDict, total=False):
    """Versions, machine and inputs of the run (``models`` for an audit; ``predictions``,
    ``samples_scored`` and ``samples_given`` for a scoring)."""

    nlibias: str
    python: str
    platform: str
    finished: str
    samples: str | None
    torch: str
    transformers: str
    models: dict[str, ModelRun]
    cache: str | None
    predictions: str | None
    samples_scored: Count
    samples_given: Count


@with_config(JSON_CONFIG)
class PromptSensitivityRow(TypedDict):
    """A subtopic whose ``yes_rate_pro`` differs between one model's prompt styles."""

    subtopic: str
    yes_rate_pro: dict[str, Annotated[float, declared("yes_rate_pro")] | None]
    spread: Annotated[float, Range(0.0, 100.0)]
    mean_p_yes_pro: dict[str, Annotated[float, declared("mean_p_yes_pro")] | None]
    p_yes_spread: Annotated[float, Range(0.0, 100.0)] | None


@with_config(JSON_CONFIG)
class GenerativeSection(TypedDict):
    """Comparisons across a generative model's prompt styles (``MODEL|MODE`` keys)."""

    prompt_sensitivity: dict[str, list[PromptSensitivityRow]]


@with_config(OPEN_CONFIG)
class MetricsDocument(TypedDict):
    """``metrics.json``: what an audit or a scoring measured, per model, and how it ran.
    Keys beyond these are allowed (``extra`` of an audit, e.g. ``demo``)."""

    schema_version: NotRequired[Integer]
    """Absent: version 0 (written before nlibias recorded it)."""
    source: str
    n_samples: NotRequired[Count]
    bootstrap: NotRequired[BootstrapInfo]
    models: dict[str, ModelMetrics]
    predictor_kinds: NotRequired[dict[str, str]]
    """Each model's predictor kind: ``classifier``, ``generative``, ``sentence-logprob`` or a kind a
    registered benchmark scores."""
    generative: NotRequired[GenerativeSection]
    tp_nli_agreement: NotRequired[list[dict[str, Any]]]
    """WinoQueer-NLI: item-level agreement of each sentence scorer's TP preference with each
    classifier's M1 (:func:`nlibias.metrics.token_probability.wq_nli_item_agreement`)."""
    run: NotRequired[RunInfo]
    demo: NotRequired[dict[str, Any]]


def metrics_schema() -> dict[str, Any]:
    """The JSON Schema of ``metrics.json`` (``nlibias schema metrics``).

    >>> metrics_schema()["required"]
    ['source', 'models']
    """
    title = f"nlibias metrics.json (schema version {SCHEMA_VERSION})"
    return json_schema(_adapter(_measures_key()), title=title)


def measure_fields() -> dict[str, Any]:
    """A slice's measure fields: each declared measure, a number in its range or null.

    >>> measure_fields()["M1"]  # doctest: +ELLIPSIS
    typing.Annotated[typing.Optional[typing.Annotated[float, Range(low=0.0, high=100.0)]], FieldInfo(...)]
    """
    fields: dict[str, Any] = {}
    for name, info in _in_metrics():
        number = Annotated[float, declared(name)]
        fields[name] = Annotated[number | None, Field(description=f"{info.description} ({info.unit})")]
    return fields


def _in_metrics() -> list[tuple[str, MeasureInfo]]:
    return [(name, info) for name, info in sorted(ALL_MEASURES.items()) if info.reported_in == METRICS_FILE]


def _measures_key() -> tuple[tuple[str, Any, str, str], ...]:
    """What the schema takes from the declared measures (changed by a registration)."""
    return tuple((name, info.range, info.description, info.unit) for name, info in _in_metrics())


@functools.lru_cache(maxsize=8)
def _slice_type(key: tuple[tuple[str, Any, str, str], ...]) -> Any:
    fields = {**get_type_hints(SliceMetrics, include_extras=True), **measure_fields()}
    made: Any = TypedDict("SliceMetrics", fields, total=False)  # type: ignore[misc]
    made.__doc__ = SliceMetrics.__doc__
    return with_config(JSON_CONFIG)(made)


@functools.lru_cache(maxsize=8)
def _adapter(key: tuple[tuple[str, Any, str, str], ...]) -> TypeAdapter[MetricsDocument]:
    return TypeAdapter(MetricsDocument)


def metrics_issues(document: Any, *, strict: bool = False) -> list[str]:
    """Every way ``document`` breaks the schema, as ``field.path: reason``; ``strict``: also
    fields the types do not declare."""
    return [f"{field}: {reason}" for field, reason in _issues(document, strict=strict)]


def _issues(document: Any, *, strict: bool = False) -> list[Issue]:
    issues = document_issues(_adapter(_measures_key()), document, strict=strict)
    version = document.get("schema_version") if isinstance(document, dict) else None
    if is_int(version) and version > SCHEMA_VERSION:
        issues.insert(0, ("schema_version", f"{version} is newer than this nlibias reads ({SCHEMA_VERSION})"))
    return issues


def check_metrics(document: Any, *, path: str | Path) -> MetricsDocument:
    """``document`` as a typed ``metrics.json``, or the first bad field (and a count of others)."""
    issues = _issues(document)
    if issues:
        field, reason = issues[0]
        more = f"; {len(issues) - 1} more problem(s)" if len(issues) > 1 else ""
        newer = field == "schema_version"
        raise SourceError(path, field, reason + more, fix="upgrade nlibias to read it" if newer else _FIX)
    return cast(MetricsDocument, document)


_FIX = "this file was not written by nlibias as it is: rerun the audit or score"
SUM_TOLERANCE = 0.01  # points by which accuracy + misprediction rate may miss 100 (rounding)


class _Keys(dict[str, Any]):
    """A JSON object that remembers the keys it was given more than once."""

    def __init__(self, pairs: list[tuple[str, Any]]) -> None:
        super().__init__(pairs)
        keys = [key for key, _ in pairs]
        self.repeated = {key: keys.count(key) for key in self if keys.count(key) > 1}


def _repeated(value: Any, where: str = "") -> Iterator[tuple[str, int]]:
    items = value.items() if isinstance(value, dict) else enumerate(value) if isinstance(value, list) else ()
    for key, n in getattr(value, "repeated", {}).items():
        yield f"{where}.{key}".lstrip("."), n
    for key, item in items:
        yield from _repeated(
            item, f"{where}[{key}]" if isinstance(value, list) else f"{where}.{key}".lstrip(".")
        )


def check_consistent(document: MetricsDocument, *, path: str | Path) -> None:
    """Refuse what the schema lets through: no models, an interval upside down, accuracy and
    misprediction rate that do not sum to 100.

    >>> check_consistent({"source": "bbnli", "models": {"m": {"overall": {"accuracy": 70.0,
    ...     "misprediction_rate": 20.0}}}}, path="run/metrics.json")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    nlibias.errors.SourceError: run/metrics.json: field models.m.overall: accuracy 70 + misprediction_rate 20 = 90, not 100 (...)
    """
    if not document["models"]:
        raise SourceError(path, "models", "no models: the file holds no results to report", fix=_FIX)
    for model, metrics in document["models"].items():
        slices: dict[str, Mapping[str, Any]] = {f"models.{model}.overall": metrics["overall"]}
        for key in ModelMetrics.__annotations__:
            if key.startswith("by_"):
                slices |= {
                    f"models.{model}.{key}.{name}": m
                    for name, m in cast(Mapping, metrics).get(key, {}).items()
                }
        for where, m in slices.items():
            for measure, bounds in m.get("ci", {}).items():
                if bounds is not None and bounds[0] > bounds[1]:
                    reason = f"the interval's lower end {bounds[0]:g} is above its upper end {bounds[1]:g}"
                    raise SourceError(path, f"{where}.ci.{measure}", reason, fix=_FIX)
            accuracy, wrong = m.get("accuracy"), m.get("misprediction_rate")
            if accuracy is not None and wrong is not None and abs(accuracy + wrong - 100.0) > SUM_TOLERANCE:
                reason = (
                    f"accuracy {accuracy:g} + misprediction_rate {wrong:g} = {accuracy + wrong:g}, not 100"
                )
                raise SourceError(path, where, reason, fix=_FIX)


def read_metrics(path: str | Path) -> MetricsDocument:
    """Read and check a ``metrics.json``, errors naming the file and what is wrong.

    >>> import tempfile, pathlib
    >>> bad = pathlib.Path(tempfile.mkdtemp()) / "metrics.json"
    >>> _ = bad.write_text('{"source": "bbnli", "models": {')
    >>> read_metrics(bad)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    nlibias.errors.SourceError: .../metrics.json:1: not valid JSON: ... (... rerun the audit or score)
    """
    path = Path(path)
    data = path.read_bytes()
    fix = "the file is damaged or was not written by nlibias: rerun the audit or score"
    if not data.strip():
        raise SourceError(path, None, "the file is empty", fix=fix)
    if data.startswith(b"\xef\xbb\xbf"):
        reason = "starts with a byte-order mark (BOM), which JSON does not allow"
        raise SourceError(path, None, reason, fix="save it without one")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as error:
        raise SourceError(path, None, f"not UTF-8 (byte {error.start}: {error.reason})", fix=fix) from None
    try:  # NaN / Infinity parse, and the schema refuses them by field
        document = json.loads(text, object_pairs_hook=_Keys)
    except json.JSONDecodeError as error:
        reason = f"not valid JSON: {error.msg.removesuffix(' at')} at column {error.colno}"
        raise SourceError(path, None, reason, line=error.lineno, fix=fix) from None
    except (RecursionError, ValueError):  # nested too deep, a number past the digit limit
        parse_json(path, text, allow_nan=True)  # raises a SourceError saying which, with the line
        raise
    checked = check_metrics(document, path=path)
    for field, n in _repeated(document):
        raise SourceError(
            path, field, f"given {n} times in one object; a JSON reader keeps only the last one", fix=_FIX
        )
    return checked
