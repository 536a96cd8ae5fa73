"""Samples files: ``samples.jsonl`` (one sample per line) and ``samples.parquet`` in a run directory.

Read side accepts a run directory, a ``.jsonl`` file or a ``.parquet`` file; user-written JSONL
is validated line by line (file, line, field and reason in every error). Premises and hypotheses
enter through :func:`~nlibias.textio.text_door.enter_text` (NFC; format characters such as
zero-width spaces removed with a warning naming the file, line and field). The rules every
sample follows beyond its fields' types (key fields, blank texts, neutral gold, pairs, unique
ids) are in :mod:`nlibias.io.sample_rules`.
"""

from __future__ import annotations

from collections.abc import Collection, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict, ValidationError, field_validator

from nlibias.errors import SourceError
from nlibias.io.atomic import atomic_path, write_jsonl
from nlibias.io.fingerprint import file_stamp, sha256_file
from nlibias.io.jsonl import dumps_finite, iter_jsonl
from nlibias.io.sample_rules import (
    PairTwins,
    check_sample,
    check_unique_ids,
    duplicate_id_error,
    is_blank_text,
)
from nlibias.schema import LABELS, Sample
from nlibias.schema.columns import SampleColumns
from nlibias.schema.declared import source_error
from nlibias.textio.json_text import parse_json
from nlibias.textio.text_door import enter_text

__all__ = [
    "SAMPLES_JSONL", "SAMPLES_PARQUET", "ReadColumns", "SampleRecord", "duplicate_id_error", "is_blank_text",
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
    gold: str
    stereotype: str | None
    pair_key: str | None
    source: str = "custom"
    group: str | None = None
    counterfactual_group: str | None = None
    provenance: dict[str, Any] = {}

    @field_validator("gold")
    @classmethod
    def _known_label(cls, value: str) -> str:
        if value not in LABELS:
            raise ValueError(f"{value!r} is not one of {', '.join(LABELS)}")
        return value

    @field_validator("stereotype")
    @classmethod
    def _known_stereotype(cls, value: str | None) -> str | None:
        if value not in (None, "pro", "anti"):
            raise ValueError(f"{value!r} is not pro, anti or null")
        return value


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


class _StringPool:
    """One shared object per distinct string value (like ``sys.intern``, freed with the samples).

    Samples repeat most of their text: domain, subtopic, gold label and every provenance key on
    every line, a premise for each of its hypotheses, a hypothesis for each premise. ``json``
    makes a new string object for each occurrence; sharing them cut what an audit holds per
    WQ-NLI sample from 2.5 kB to about 0.8 kB (``tracemalloc``, docs/benchmarks.md). Ids are
    unique and stay out of the pool.
    """

    def __init__(self, provenance_keys: Collection[str] | None = None, *, share: bool = True) -> None:
        self._strings: dict[str, str] = {}
        self._share = share
        self._keys = None if provenance_keys is None else frozenset(provenance_keys)

    def value(self, value: Any) -> Any:
        """``value`` with every string in it (dict keys, list items, nested) shared."""
        if type(value) is str:
            return self._strings.setdefault(value, value)
        if type(value) is dict:
            share = self._strings.setdefault
            # Strings and numbers inline: a call per value made reading WQ-NLI 60% slower.
            return {
                share(k, k): share(v, v)
                if type(v) is str
                else (self.value(v) if type(v) in (dict, list) else v)
                for k, v in value.items()
            }
        if type(value) is list:
            return [self.value(v) for v in value]
        return value

    def sample(self, fields: Mapping[str, Any], provenance: dict[str, Any]) -> Sample:
        """The sample of already-checked ``fields`` (every core field), its text shared when the
        pool shares (otherwise a call per field to a table that keeps nothing was a third of a read)."""
        if self._keys is not None:
            provenance = {k: v for k, v in provenance.items() if k in self._keys}
        text = {name: fields[name] for name in _SHARED_FIELDS}
        if self._share:
            share = self._strings.setdefault  # inline, not a call to self.value per field (slower)
            text = {name: share(v, v) if type(v) is str else v for name, v in text.items()}
            provenance = self.value(provenance)
        return Sample(id=fields["id"], pair_key=fields["pair_key"], **text, provenance=provenance)


def _quick_sample(raw: dict[str, Any], shared: _StringPool) -> Sample | None:
    """The sample of a well-formed record without pydantic, or None to let the validator explain.

    Files nlibias wrote itself are always well-formed; checking them field by field in plain
    Python reads WQ-NLI's 76k samples several times faster. Anything unusual (a missing or
    non-string field, an unknown label, extra keys) returns None and goes through
    :class:`SampleRecord`, which produces the error message or the same sample.
    """
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
    source = get("source", "custom")
    provenance = get("provenance", {})
    if type(source) is not str or type(provenance) is not dict:
        return None
    if "pair_key" not in raw or not set(raw) <= _KNOWN_KEYS:
        return None  # pair_key is required (null allowed); extra keys go to provenance via the validator
    fields: dict[str, Any] = {name: get(name) for name in _CORE_FIELDS}
    fields["source"] = source
    return shared.sample(fields, provenance)


def _from_record(
    path: Path, line: int, raw: Any, shared: _StringPool, neutral_gold: Collection[str]
) -> Sample:
    if not isinstance(raw, dict):
        raise SourceError(path, None, "expected a JSON object", line=line)
    for name in ("premise", "hypothesis"):  # the text door, here so that its warning names the line
        value = raw.get(name)
        if type(value) is str and not value.isascii():
            raw[name] = enter_text(value, f"{path}:{line} ({name})", stacklevel=5)
    quick = _quick_sample(raw, shared)
    if quick is not None:
        return check_sample(path, line, quick, neutral_gold)
    try:
        record = SampleRecord.model_validate(raw)
    except ValidationError as exc:
        fix = "samples need id, domain, subtopic, premise, hypothesis, gold, stereotype, pair_key"
        raise source_error(exc, path, line=line, fix=fix) from None
    provenance = dict(record.provenance)
    provenance.update(record.model_extra or {})
    return check_sample(
        path,
        line,
        shared.sample({name: getattr(record, name) for name in _CORE_FIELDS}, provenance),
        neutral_gold,
    )


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


def read_sample_columns(
    path: str | Path, *, provenance_keys: Collection[str] | None = (), benchmark: Benchmark | None = None
) -> ReadColumns:
    """Every sample of a run directory or samples file, checked (each line, unique ids, and the
    sample rules of ``benchmark``: :func:`iter_samples`) and kept as
    :class:`~nlibias.schema.columns.SampleColumns` with ``provenance_keys`` (None: all). A file
    that changes while it is read is refused.

    >>> import tempfile
    >>> from nlibias.schema import Sample
    >>> s = Sample(id="a", source="x", domain="d", subtopic="t", premise="P", hypothesis="H", gold="neutral")
    >>> read = read_sample_columns(write_samples(tempfile.mkdtemp(), [s])["jsonl"])
    >>> list(read.columns.ids), read.columns.premise[0], len(read.sha256)
    (['a'], 'P', 64)
    """
    resolved = resolve_samples_path(path)
    stamp = file_stamp(resolved)  # taken first: a change while the file is hashed or read is caught too
    sha256 = sha256_file(resolved)
    passing = iter_samples(
        resolved, provenance_keys=provenance_keys, share_strings=False, benchmark=benchmark
    )
    if provenance_keys is None:  # keep every key any sample has: gather them while reading
        samples = list(passing)
        keys: Collection[str] = sorted({k for s in samples for k in s.provenance})
        columns = SampleColumns.from_samples(samples, provenance_keys=keys)
    else:
        columns = SampleColumns.from_samples(passing, provenance_keys=provenance_keys)
    if not len(columns):
        raise SourceError(resolved, None, "no samples in the file", fix="run `nlibias expand ...` first")
    duplicate = columns.first_duplicate_id()
    if duplicate is not None:
        earlier, later = duplicate
        raise duplicate_id_error(resolved, columns.ids[later], earlier=earlier, later=later)
    if file_stamp(resolved) != stamp:
        raise SourceError(resolved, None, "the file changed while it was being read", fix="read it again")
    return ReadColumns(columns, sha256)


def read_samples(
    path: str | Path, *, provenance_keys: Collection[str] | None = None, benchmark: Benchmark | None = None
) -> list[Sample]:
    """Samples from a run directory, a JSONL file or a Parquet file; ids must be unique, and the
    samples follow ``benchmark``'s sample rules (:func:`iter_samples`).

    ``provenance_keys`` keeps only those keys of each sample's provenance (an audit loads what
    its measures read: :meth:`nlibias.benchmarks.base.Benchmark.provenance`); None keeps everything.
    """
    resolved = resolve_samples_path(path)
    samples = list(iter_samples(resolved, provenance_keys=provenance_keys, benchmark=benchmark))
    check_unique_ids(resolved, samples)
    return samples


def iter_samples(
    path: str | Path,
    *,
    provenance_keys: Collection[str] | None = None,
    share_strings: bool = True,
    benchmark: Benchmark | None = None,
) -> Iterator[Sample]:
    """The samples of :func:`read_samples` one at a time (ids not checked for uniqueness), so
    that a pass over a big run holds one sample, not all of them (a Parquet file is read one
    record batch at a time). Errors name the file and line as :func:`read_samples`' do.

    ``share_strings=False``: for a caller that keeps no sample, no table of every distinct text
    seen so far (it would grow with the file).

    ``benchmark``: the benchmark the samples are read for (the caller resolves it), whose sample
    rules are refused when broken: a bias sample of one of its ``neutral_gold`` sources with
    another gold label, a pair of a ``shared_premises`` source with two premises. Without one,
    only the rules every samples file follows.
    """
    path = resolve_samples_path(path)
    shared = _StringPool(provenance_keys, share=share_strings)
    neutral_gold = frozenset(benchmark.neutral_gold) if benchmark is not None else frozenset()
    twins = PairTwins(path, frozenset(benchmark.shared_premises) if benchmark is not None else frozenset())
    if path.suffix == ".parquet":
        line = 0
        for batch in parquet_batches(path):
            for row in batch.to_pylist():
                line += 1
                provenance = row.get("provenance")
                if not isinstance(provenance, str | None):
                    raise SourceError(path, "provenance", "not a JSON object", line=line)
                row["provenance"] = parse_json(path, provenance or "{}", line=line)
                sample = _from_record(path, line, row, shared, neutral_gold)
                twins.check(line, sample, row["provenance"])
                yield sample
    else:
        for line_number, raw in iter_jsonl(path):
            sample = _from_record(path, line_number, raw, shared, neutral_gold)
            twins.check(line_number, sample, raw.get("provenance"))
            yield sample


def parquet_batches(path: Path, columns: list[str] | None = None) -> Iterator[Any]:
    """The record batches of a Parquet file; a damaged file or a missing column is refused with
    the path (pyarrow's own errors name neither)."""
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
