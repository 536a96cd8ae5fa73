"""Samples files: ``samples.jsonl`` (one sample per line) and ``samples.parquet`` in a run directory.

Read in one pass (JSON → the text door for the texts → a validated record → its sample rules →
:class:`~nlibias.schema.Sample`), every error naming the file, line and field. The rules beyond
the fields' types refuse what would change results silently: a key field (id, source, slice
names, pair key) empty or padded with spaces, a blank text, a bias sample of a ``neutral_gold``
source that is not neutral, the two samples of a pair disagreeing on what they share, a second
sample with one id.

>>> padded = {"id": "a", "source": "x", "domain": " d", "subtopic": "t", "premise": "P",
...           "hypothesis": "H", "gold": "neutral", "stereotype": None, "pair_key": None}
>>> SampleRules(Path("s.jsonl")).check(3, padded, {})
Traceback (most recent call last):
...
nlibias.errors.SourceError: s.jsonl:3: field domain: ' d' has spaces around it (it would be a domain of its own, apart from 'd') (remove the spaces)
"""

from __future__ import annotations

import hashlib
import unicodedata
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from itertools import chain
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, ConfigDict, ValidationError

from nlibias.errors import SourceError
from nlibias.io.atomic import atomic_path, write_jsonl
from nlibias.io.fingerprint import file_stamp, sha256_file
from nlibias.io.jsonl import dumps_finite, iter_jsonl
from nlibias.io.string_pool import StringPool
from nlibias.schema import LABELS, Sample
from nlibias.schema.columns import SampleColumns
from nlibias.schema.declared import source_error
from nlibias.textio.json_text import parse_json
from nlibias.textio.text_door import enter_text

__all__ = [
    "SAMPLES_JSONL", "SAMPLES_PARQUET", "ReadColumns", "SampleRecord", "SampleRules", "check_unique_ids",
    "duplicate_id_error",
    "is_blank_text",
    "iter_samples", "parquet_batches", "peek_source", "read_sample_columns", "read_samples",
    "resolve_samples_path", "write_samples",
]  # fmt: skip

if TYPE_CHECKING:
    from nlibias.benchmarks.base import Benchmark

SAMPLES_JSONL = "samples.jsonl"
SAMPLES_PARQUET = "samples.parquet"
_CORE_FIELDS = (
    "id",
    "source",
    "domain",
    "subtopic",
    "premise",
    "hypothesis",
    "gold",
    "stereotype",
    "pair_key",
    "group",
    "counterfactual_group",
)
_KNOWN_KEYS = frozenset((*_CORE_FIELDS, "provenance"))
# Fields whose values repeat across samples (ids and pair keys are unique or nearly so).
_SHARED_FIELDS = tuple(f for f in _CORE_FIELDS if f not in ("id", "pair_key"))


class SampleRecord(BaseModel):
    """One line of a samples JSONL file as users may write it (extra fields go to provenance)."""

    model_config = ConfigDict(extra="allow")

    id: str
    domain: str
    subtopic: str
    premise: str
    hypothesis: str
    gold: Literal["entailment", "neutral", "contradiction"]
    stereotype: Literal["pro", "anti"] | None
    pair_key: str | None
    source: str = "custom"
    group: str | None = None
    counterfactual_group: str | None = None
    provenance: dict[str, Any] = {}


def write_samples(run_dir: str | Path, samples: Sequence[Sample]) -> dict[str, Path]:
    """Write ``samples.jsonl`` and ``samples.parquet`` into ``run_dir``; returns their paths."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    run_dir = Path(run_dir)
    jsonl = run_dir / SAMPLES_JSONL
    write_jsonl(jsonl, [s.to_dict() for s in samples])
    columns: dict[str, list[Any]] = {name: [getattr(s, name) for s in samples] for name in _CORE_FIELDS}
    columns["provenance"] = [dumps_finite(dict(s.provenance), ensure_ascii=False) for s in samples]
    table = pa.table({name: pa.array(values, type=pa.string()) for name, values in columns.items()})
    parquet = run_dir / SAMPLES_PARQUET
    with atomic_path(parquet) as tmp:
        pq.write_table(table, tmp)
    return {"jsonl": jsonl, "parquet": parquet}


_REQUIRED_TEXT = ("id", "domain", "subtopic", "premise", "hypothesis")
_OPTIONAL_TEXT = ("pair_key", "group", "counterfactual_group")
_STEREOTYPES = (None, "pro", "anti")


def _quick_fields(raw: dict[str, Any]) -> dict[str, Any] | None:
    """The core fields of a well-formed record without pydantic (several times faster on the files
    nlibias writes), or None for anything unusual: :class:`SampleRecord` then explains it or
    gives the same fields."""
    get = raw.get
    for name in _REQUIRED_TEXT:
        if type(get(name)) is not str:
            return None
    if get("gold") not in LABELS or "stereotype" not in raw or get("stereotype") not in _STEREOTYPES:
        return None
    for name in _OPTIONAL_TEXT:
        value = get(name)
        if value is not None and type(value) is not str:
            return None
    if type(get("source", "custom")) is not str or type(get("provenance", {})) is not dict:
        return None
    if "pair_key" not in raw or not set(raw) <= _KNOWN_KEYS:
        return None  # pair_key is required (null allowed); extra keys go to provenance via the validator
    fields = {name: get(name) for name in _CORE_FIELDS}
    fields["source"] = get("source", "custom")
    return fields


def _record(path: Path, line: int, raw: Any) -> tuple[dict[str, Any], dict[str, Any]]:
    """The validated core fields and the provenance of one record."""
    if not isinstance(raw, dict):
        raise SourceError(path, None, "expected a JSON object", line=line)
    fields = _quick_fields(raw)
    if fields is not None:
        return fields, raw.get("provenance", {})
    try:
        record = SampleRecord.model_validate(raw)
    except ValidationError as exc:
        fix = "samples need id, domain, subtopic, premise, hypothesis, gold, stereotype, pair_key"
        raise source_error(exc, path, line=line, fix=fix) from None
    return {name: getattr(record, name) for name in _CORE_FIELDS}, {
        **record.provenance,
        **(record.model_extra or {}),
    }


def resolve_samples_path(path: str | Path) -> Path:
    """The samples file of a run directory (JSONL first), or ``path`` itself; errors say what is missing."""
    path = Path(path)
    if path.is_dir():
        for name in (SAMPLES_JSONL, SAMPLES_PARQUET):
            if (path / name).exists():
                return path / name
        raise SourceError(
            path,
            None,
            f"no {SAMPLES_JSONL} or {SAMPLES_PARQUET} in this directory",
            fix="run `nlibias expand ...` first, or point at a samples file",
        )
    if not path.exists():
        raise SourceError(path, None, "file does not exist")
    return path


@dataclass(frozen=True, eq=False)
class ReadColumns:
    """A samples file read once as columns, and the file as it was read."""

    columns: SampleColumns
    sha256: str
    """The SHA-256 of the file's bytes (it did not change while it was read)."""
    benchmark: Benchmark | None = None
    """The benchmark whose rules the samples were read under."""


def read_sample_columns(
    path: str | Path,
    *,
    provenance_keys: Collection[str] | None = (),
    benchmark: Benchmark | None = None,
    benchmark_of: Callable[[str], Benchmark] | None = None,
) -> ReadColumns:
    """Every sample of a run directory or samples file, checked, as columns with ``provenance_keys``
    (None: all), in one pass over the bytes (hashed as read; a file changed meanwhile is refused).
    ``benchmark_of``: the benchmark found from the first sample's ``source``.

    >>> import tempfile
    >>> from nlibias.schema import Sample
    >>> s = Sample(id="a", source="x", domain="d", subtopic="t", premise="P", hypothesis="H", gold="neutral")
    >>> read = read_sample_columns(write_samples(tempfile.mkdtemp(), [s])["jsonl"])
    >>> list(read.columns.ids), read.columns.premise[0], len(read.sha256)
    (['a'], 'P', 64)
    """
    resolved = resolve_samples_path(path)
    stamp = file_stamp(resolved)  # taken first: a change while the file is read is caught too
    digest = hashlib.sha256()
    rules = SampleRules(resolved, benchmark, benchmark_of=benchmark_of)
    passing = iter_samples(resolved, provenance_keys=None, share_strings=False, rules=rules, digest=digest)
    first = next(passing, None)
    if first is None:
        raise SourceError(resolved, None, "no samples in the file", fix="run `nlibias expand ...` first")
    if benchmark_of is not None and rules.benchmark is not None:
        provenance_keys = rules.benchmark.provenance()
    if provenance_keys is None:  # keep every key any sample has: gather them while reading
        samples = [first, *passing]
        keys: Collection[str] = sorted({k for s in samples for k in s.provenance})
        columns = SampleColumns.from_samples(samples, provenance_keys=keys)
    else:
        columns = SampleColumns.from_samples(chain([first], passing), provenance_keys=provenance_keys)
    duplicate = columns.first_duplicate_id()
    if duplicate is not None:
        earlier, later = duplicate
        raise duplicate_id_error(resolved, columns.ids[later], earlier=earlier, later=later)
    if file_stamp(resolved) != stamp:
        raise SourceError(resolved, None, "the file changed while it was being read", fix="read it again")
    sha256 = sha256_file(resolved) if resolved.suffix == ".parquet" else digest.hexdigest()
    return ReadColumns(columns, sha256, rules.benchmark)


def read_samples(
    path: str | Path, *, provenance_keys: Collection[str] | None = None, benchmark: Benchmark | None = None
) -> list[Sample]:
    """Samples from a run directory, a JSONL file or a Parquet file; ids must be unique, and the
    samples follow ``benchmark``'s sample rules (:func:`iter_samples`). ``provenance_keys`` keeps
    only those provenance keys (None: all)."""
    resolved = resolve_samples_path(path)
    rules = SampleRules(resolved, benchmark)
    samples = list(iter_samples(resolved, provenance_keys=provenance_keys, rules=rules))
    check_unique_ids(resolved, samples)
    return samples


def iter_samples(
    path: str | Path,
    *,
    provenance_keys: Collection[str] | None = None,
    share_strings: bool = True,
    rules: SampleRules | None = None,
    digest: Any = None,
) -> Iterator[Sample]:
    """The samples of :func:`read_samples` one at a time (ids not checked for uniqueness): a pass
    over a big run holds one sample. ``share_strings=False``: no table of the texts seen (for a
    caller that keeps no sample). ``rules``: a benchmark's (default: those of every samples
    file). ``digest``: a ``hashlib`` object fed a JSONL file's bytes."""
    path = resolve_samples_path(path)
    records = _parquet_records(path) if path.suffix == ".parquet" else _json_records(path, digest)
    records = _through_the_door(path, records)
    shared = StringPool(_SHARED_FIELDS, provenance_keys, share=share_strings)
    rules = rules or SampleRules(path)
    for line, raw in records:
        fields, provenance = _record(path, line, raw)
        rules.check(line, fields, provenance)
        yield shared.sample(fields, provenance)


def _through_the_door(path: Path, records: Iterator[tuple[int, Any]]) -> Iterator[tuple[int, Any]]:
    """The records with their premises and hypotheses through the text door, which names the line."""
    for line, raw in records:
        for name in ("premise", "hypothesis") if isinstance(raw, dict) else ():
            value = raw.get(name)
            if type(value) is str and not value.isascii():
                raw[name] = enter_text(value, f"{path}:{line} ({name})", stacklevel=4)
        yield line, raw


def _json_records(path: Path, digest: Any) -> Iterator[tuple[int, Any]]:
    """``(line, JSON value)`` of each non-blank line, every byte fed to ``digest``."""
    with path.open("rb") as handle:
        for number, line in enumerate(handle, start=1):
            if digest is not None:
                digest.update(line)
            if line.strip():
                yield number, parse_json(path, line, line=number)


def _parquet_records(path: Path) -> Iterator[tuple[int, Any]]:
    """``(row, record)`` of a Parquet samples file, its provenance column read as JSON."""
    line = 0
    for batch in parquet_batches(path):
        for row in batch.to_pylist():
            line += 1
            provenance = row.get("provenance")
            if not isinstance(provenance, str | None):
                raise SourceError(path, "provenance", "not a JSON object", line=line)
            row["provenance"] = parse_json(path, provenance or "{}", line=line)
            yield line, row


def is_blank_text(text: str) -> bool:
    """Whether ``text`` is empty once whitespace and invisible characters (zero-width spaces,
    joiners, byte-order marks: Unicode categories Z* and Cf, and controls) are taken out.

    >>> is_blank_text("\u200b\u2060\ufeff \u00a0"), is_blank_text(" a\u200b")
    (True, False)
    """
    if text.isprintable():  # the usual case, in C: no control, format or odd space character
        return not text.strip()
    return all(unicodedata.category(c)[0] in "ZC" for c in text)


_KEY_FIELDS = ("id", "source", "domain", "subtopic", "pair_key", "group", "counterfactual_group")
"""Fields that name a slice, a pair or a sample: ``" gender"`` would be a slice of its own."""
_TWIN_FIELDS = ("domain", "subtopic", "premise", "premise_index", "combination_index", "premise_template")
"""What the two samples of a pair share: their slice, and their premise (its text where the
source keeps it, otherwise the premise and word combination it was rendered from)."""


class SampleRules:
    """The rules of one samples file's samples: ``benchmark``'s (or, with ``benchmark_of``, those of
    the benchmark the first sample's ``source`` names) and those of every samples file. A pair's
    first sample waits here until its twin is read (they are usually next to each other)."""

    def __init__(
        self,
        path: Path,
        benchmark: Benchmark | None = None,
        *,
        benchmark_of: Callable[[str], Benchmark] | None = None,
    ) -> None:
        self._path, self._benchmark_of = path, benchmark_of
        self._waiting: dict[str, tuple[int, tuple[Any, ...]]] = {}
        self._use(benchmark)

    def _use(self, benchmark: Benchmark | None) -> None:
        self.benchmark = benchmark
        self._neutral_gold = frozenset(benchmark.neutral_gold) if benchmark is not None else frozenset()
        self._shared_premises = frozenset(benchmark.shared_premises) if benchmark is not None else frozenset()

    def check(self, line: int, fields: Mapping[str, Any], provenance: Any) -> None:
        """Refuse a sample that breaks a rule, naming the file, line and field."""
        if self._benchmark_of is not None:  # the first sample: its benchmark's rules hold for all
            self._use(self._benchmark_of(fields["source"]))
            self._benchmark_of = None
        for name in _KEY_FIELDS:
            value = fields[name]
            if value is not None and (not value or value.strip() is not value):
                self._key_field(line, name, value)
        for name in ("premise", "hypothesis"):
            if is_blank_text(fields[name]):
                raise SourceError(
                    self._path,
                    name,
                    "empty text (nothing visible: only spaces or zero-width characters)",
                    line=line,
                    fix="remove the sample or write its text",
                )
        stereotype, gold, source = fields["stereotype"], fields["gold"], fields["source"]
        if stereotype is not None and gold != "neutral" and source in self._neutral_gold:
            raise SourceError(
                self._path,
                "gold",
                f"a {source} bias sample (stereotype {stereotype}) has gold {gold}; "
                "its bias samples are neutral",
                line=line,
                fix="set gold to neutral, or stereotype to null for a test sample",
            )
        key = fields["pair_key"]
        if key is None or stereotype is None:  # a test sample is no member of a pair
            return
        given = provenance if isinstance(provenance, dict) else {}
        premise = fields["premise"] if source in self._shared_premises else None
        shared = (fields["domain"], fields["subtopic"], premise, *(given.get(k) for k in _TWIN_FIELDS[3:]))
        first = self._waiting.pop(key, None)
        if first is None:
            self._waiting[key] = (line, shared)
            return
        for name, a, b in zip(_TWIN_FIELDS, first[1], shared, strict=True):
            if a != b:  # the first three are the samples' own fields, the rest provenance keys
                raise SourceError(
                    self._path,
                    name if name in _TWIN_FIELDS[:3] else f"provenance.{name}",
                    f"the two samples of pair {key!r} differ in {name}: {a!r} on line {first[0]}, "
                    f"{b!r} on line {line}; a counterfactual pair differs only in its group",
                    line=line,
                    fix="give the two samples the same value, or different pair_keys if they are not a pair",
                )

    def _key_field(self, line: int, name: str, value: str) -> None:
        """Refuse an empty key field or one with spaces around it."""
        if not value.strip():
            fix = {"id": "give every sample its own id"}.get(name, f"write the sample's {name}")
            if name in ("pair_key", "group", "counterfactual_group"):
                fix = "use null where there is none"
            reason = "empty sample id" if name == "id" else "empty text"
            raise SourceError(self._path, name, reason, line=line, fix=fix)
        raise SourceError(
            self._path,
            name,
            f"{value!r} has spaces around it (it would be a {name} of its own, apart from {value.strip()!r})",
            line=line,
            fix="remove the spaces",
        )


def check_unique_ids(path: Path, samples: Iterable[Sample]) -> None:
    """Refuse a second sample with an id already read (:func:`duplicate_id_error`)."""
    seen: dict[str, int] = {}
    for position, sample in enumerate(samples):
        earlier = seen.setdefault(sample.id, position)
        if earlier != position:
            raise duplicate_id_error(path, sample.id, earlier=earlier, later=position)


def duplicate_id_error(path: Path, sample_id: str, *, earlier: int, later: int) -> SourceError:
    """The error for a sample id at positions ``earlier`` and ``later`` (0-based) of a samples file,
    naming the lines both are on (blank lines make a JSONL line differ from a position; a Parquet
    file's rows, or a file that cannot be read again, are numbered from 1)."""
    lines = {earlier: earlier + 1, later: later + 1}
    if path.suffix != ".parquet":
        try:
            for position, (line, _) in enumerate(iter_jsonl(path)):
                if position in lines:
                    lines[position] = line
                if position >= later:
                    break
        except (SourceError, OSError):
            pass
    return SourceError(
        path,
        "id",
        f"duplicate sample id {sample_id!r} (also sample {earlier + 1}); the first is on line {lines[earlier]}",
        line=lines[later],
        fix="every sample needs its own id",
    )


def parquet_batches(path: Path, columns: list[str] | None = None) -> Iterator[Any]:
    """The record batches of a Parquet file; a damaged file or a missing column is refused naming it."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    try:
        yield from pq.ParquetFile(path).iter_batches(batch_size=4096, columns=columns)
    except (pa.ArrowException, OSError, ValueError, KeyError) as exc:
        raise SourceError(
            path,
            None,
            f"not a readable Parquet samples file ({type(exc).__name__}: {exc})",
            fix="write it again with `nlibias expand`, or pass the samples.jsonl file",
        ) from None


def peek_source(path: str | Path) -> str | None:
    """The ``source`` of the first sample in a run directory or samples file (``custom`` when the
    record has none), or None when it cannot be read (:func:`read_samples` then says why)."""
    try:
        resolved = resolve_samples_path(path)
        if resolved.suffix == ".parquet":
            import pyarrow.parquet as pq

            table = pq.read_table(resolved, columns=["source"]).slice(0, 1).to_pylist()
            first: Any = table[0] if table else None
        else:
            first = next((raw for _, raw in iter_jsonl(resolved)), None)
    except (SourceError, OSError, ValueError, KeyError):
        return None
    if not isinstance(first, dict):
        return None
    source = first.get("source", "custom")
    return source if isinstance(source, str) else None
