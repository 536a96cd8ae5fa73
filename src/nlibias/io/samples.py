"""Samples files (``samples.jsonl``, ``samples.parquet``), read in one pass and checked by
:class:`SampleRules`; refused, naming file, line and field: an empty or padded key field, a blank
text, a non-neutral bias sample of a ``neutral_gold`` source, pair twins that disagree, a repeated id.

>>> padded = {"id": "a", "source": "x", "domain": " d", "subtopic": "t", "premise": "P",
...           "hypothesis": "H", "gold": "neutral", "stereotype": None, "pair_key": None}
>>> SampleRules(Path("s.jsonl")).check(3, padded)
Traceback (most recent call last):
...
nlibias.errors.SourceError: s.jsonl:3: field domain: ' d' has spaces around it (it would be a domain of its own, apart from 'd') (remove the spaces)
"""

from __future__ import annotations

import hashlib
import unicodedata
from collections.abc import Collection, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from itertools import chain
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, ConfigDict, ValidationError, ValidationInfo, field_validator
from pydantic_core import PydanticCustomError

from nlibias.errors import DataError, SourceError
from nlibias.io.atomic import atomic_path, write_jsonl
from nlibias.io.fingerprint import sha256_file
from nlibias.io.jsonl import dumps_finite, iter_jsonl
from nlibias.schema import LABELS, Sample
from nlibias.schema.columns import SampleColumns
from nlibias.schema.problems import problems, source_error
from nlibias.textio.json_text import parse_json
from nlibias.textio.text_door import enter_text, is_plain
from nlibias.textio.text_files import check_parquet_columns

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
_SHARED_FIELDS = tuple(f for f in _CORE_FIELDS if f not in ("id", "pair_key"))  # values that repeat
_REQUIRED_TEXT = ("id", "domain", "subtopic", "premise", "hypothesis")
_TEXT_FIELDS = (*_REQUIRED_TEXT, "pair_key", "group", "counterfactual_group")
_STEREOTYPES = (None, "pro", "anti")
_TEXTS = ("premise", "hypothesis")
_KEY_FIELDS = ("id", "source", "domain", "subtopic", "pair_key", "group", "counterfactual_group")


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

    @field_validator(*_KEY_FIELDS)
    @classmethod
    def _key_field(cls, value: str | None, info: ValidationInfo) -> str | None:
        name = info.field_name or ""
        if value is None or (value and value.strip() == value):
            return value
        if value.strip():
            reason = f"{value!r} has spaces around it (it would be a {name} of its own, apart from {value.strip()!r})"
            raise _refusal(name, reason, "remove the spaces")
        fix = {"id": "give every sample its own id"}.get(name, f"write the sample's {name}")
        if name in ("pair_key", "group", "counterfactual_group"):
            fix = "use null where there is none"
        raise _refusal(name, "empty sample id" if name == "id" else "empty text", fix)

    @field_validator(*_TEXTS)
    @classmethod
    def _visible(cls, value: str, info: ValidationInfo) -> str:
        if is_blank_text(value):
            reason = "empty text (nothing visible: only spaces or zero-width characters)"
            raise _refusal(info.field_name, reason, "remove the sample or write its text")
        return value


_RECORD_FIX = "samples need id, domain, subtopic, premise, hypothesis, gold, stereotype, pair_key"


def _refusal(field: str | None, reason: str, fix: str) -> PydanticCustomError:
    return PydanticCustomError("nlibias_sample", "{reason}", {"field": field, "reason": reason, "fix": fix})


def write_samples(run_dir: str | Path, samples: Sequence[Sample]) -> dict[str, Path]:
    """Write ``samples.jsonl`` and ``samples.parquet`` into ``run_dir`` (the samples held to a
    samples file's record rules first: :func:`sample_records`)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    run_dir = Path(run_dir)
    jsonl = run_dir / SAMPLES_JSONL
    write_jsonl(jsonl, sample_records(samples))
    columns: dict[str, list[Any]] = {name: [getattr(s, name) for s in samples] for name in _CORE_FIELDS}
    columns["provenance"] = [dumps_finite(dict(s.provenance), ensure_ascii=False) for s in samples]
    table = pa.table({name: pa.array(values, type=pa.string()) for name, values in columns.items()})
    parquet = run_dir / SAMPLES_PARQUET
    with atomic_path(parquet) as tmp:
        pq.write_table(table, tmp)
    return {"jsonl": jsonl, "parquet": parquet}


def sample_records(samples: Sequence[Sample]) -> list[dict[str, Any]]:
    """The records of ``samples`` (Sample objects, built in Python as well as read), each held to
    :class:`SampleRecord`'s rules, as a file's line is, before anything is written: refused
    (:class:`~nlibias.errors.DataError`) naming the sample (position and id) and the field.

    >>> s = Sample(id=5, source="x", domain="d", subtopic="t", premise="P", hypothesis="H", gold="neutral")
    >>> sample_records([s])
    Traceback (most recent call last):
    nlibias.errors.DataError: sample 1 of 1 (id 5): field id: Input should be a valid string (samples need id, domain, subtopic, premise, hypothesis, gold, stereotype, pair_key)
    """
    records = []
    for position, sample in enumerate(samples):
        record = {name: getattr(sample, name) for name in _CORE_FIELDS}
        record["provenance"] = sample.provenance
        try:
            record_fields(record)
        except ValidationError as exc:
            first = problems(exc)[0]
            where = f"field {first.field}: " if first.field else ""
            raise DataError(
                f"sample {position + 1} of {len(samples)} (id {sample.id!r}): {where}{first.reason}",
                sample=str(sample.id),
                field=first.field,
                fix=first.fix or _RECORD_FIX,
            ) from None
        record["provenance"] = dict(sample.provenance)
        records.append(record)
    return records


def resolve_samples_path(path: str | Path) -> Path:
    """The samples file of a run directory (JSONL first), or ``path`` itself."""
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
    """A samples file read once as columns, its SHA-256, the benchmark whose rules it was read
    under and the file itself."""

    columns: SampleColumns
    sha256: str
    benchmark: Benchmark | None = None
    path: Path | None = None


def read_sample_columns(
    path: str | Path,
    *,
    provenance_keys: Collection[str] | None = (),
    benchmark: Benchmark | None = None,
    benchmarks: Mapping[str, Benchmark] | None = None,
) -> ReadColumns:
    """Every sample of a run directory or samples file, checked, as columns with ``provenance_keys``
    (None: all), hashed as read. ``benchmarks``: by sample source (the first sample's rules).

    >>> import tempfile
    >>> s = Sample(id="a", source="x", domain="d", subtopic="t", premise="P", hypothesis="H", gold="neutral")
    >>> read = read_sample_columns(write_samples(tempfile.mkdtemp(), [s])["jsonl"])
    >>> list(read.columns.ids), read.columns.premise[0], len(read.sha256)
    (['a'], 'P', 64)
    """
    resolved = Path(path)
    if not resolved.is_file():
        resolved = resolve_samples_path(resolved)
    before = resolved.stat()
    digest = hashlib.sha256()
    rules = SampleRules(resolved, benchmark, benchmarks)
    passing = iter_samples(resolved, provenance_keys=None, share_strings=False, rules=rules, digest=digest)
    first = next(passing, None)
    if first is None:
        raise SourceError(resolved, None, "no samples in the file", fix="run `nlibias expand ...` first")
    if benchmarks is not None and rules.benchmark is not None:
        provenance_keys = rules.benchmark.provenance_keys
    if provenance_keys is None:  # every key any sample has
        samples = [first, *passing]
        keys: Collection[str] = sorted({k for s in samples for k in s.provenance})
        columns = SampleColumns.from_samples(samples, provenance_keys=keys)
    else:
        columns = SampleColumns.from_samples(chain([first], passing), provenance_keys=provenance_keys)
    duplicate = columns.first_duplicate_id()
    if duplicate is not None:
        earlier, later = duplicate
        raise _duplicate_id(resolved, columns.ids[later], earlier=earlier, later=later)
    after = resolved.stat()
    if (after.st_size, after.st_mtime_ns) != (before.st_size, before.st_mtime_ns):
        raise SourceError(resolved, None, "the file changed while it was being read", fix="read it again")
    sha256 = sha256_file(resolved) if resolved.suffix == ".parquet" else digest.hexdigest()
    return ReadColumns(columns, sha256, rules.benchmark, resolved)


def read_samples(
    path: str | Path,
    *,
    provenance_keys: Collection[str] | None = None,
    benchmark: Benchmark | None = None,
    benchmarks: Mapping[str, Benchmark] | None = None,
) -> list[Sample]:
    """Samples of a run directory, JSONL or Parquet file, with unique ids, under ``benchmark``'s
    rules (or those ``benchmarks`` holds for the first sample's source); ``provenance_keys``: those
    kept (None: all)."""
    resolved = resolve_samples_path(path)
    rules = SampleRules(resolved, benchmark, benchmarks)
    samples = list(iter_samples(resolved, provenance_keys=provenance_keys, rules=rules))
    seen: dict[str, int] = {}
    for position, sample in enumerate(samples):
        earlier = seen.setdefault(sample.id, position)
        if earlier != position:
            raise _duplicate_id(resolved, sample.id, earlier=earlier, later=position)
    return samples


def iter_samples(
    path: str | Path,
    *,
    provenance_keys: Collection[str] | None = None,
    share_strings: bool = True,
    rules: SampleRules | None = None,
    digest: Any = None,
) -> Iterator[Sample]:
    """:func:`read_samples` one at a time (ids not checked). ``share_strings``: one object per
    distinct string (a third of the memory on WQ-NLI); ``digest``: fed a JSONL file's bytes."""
    path = Path(path)
    if not path.is_file():
        path = resolve_samples_path(path)
    rules = rules or SampleRules(path)
    keep = None if provenance_keys is None else frozenset(provenance_keys)
    strings: dict[str, str] = {}
    share = strings.setdefault
    with path.open("rb") as handle:
        for line, raw in _parquet_records(path) if path.suffix == ".parquet" else enumerate(handle, 1):
            if type(raw) is bytes:  # a JSONL line
                if digest is not None:
                    digest.update(raw)
                if not raw.strip():
                    continue
                raw = parse_json(path, raw, line=line, texts=_TEXTS)
            fields, provenance = rules.check(line, raw)
            if keep is not None:
                provenance = {k: v for k, v in provenance.items() if k in keep}
            text = {name: fields[name] for name in _SHARED_FIELDS}
            if share_strings:  # inline: a call per field is 60% slower
                text = {name: share(v, v) if type(v) is str else v for name, v in text.items()}
                provenance = _shared(provenance, share)
            yield Sample(id=fields["id"], pair_key=fields["pair_key"], **text, provenance=provenance)


def _shared(value: Any, share: Any) -> Any:
    """``value`` with every string in it one shared object."""
    if type(value) is str:
        return share(value, value)
    if type(value) is dict:
        return {
            share(k, k): share(v, v)
            if type(v) is str
            else (_shared(v, share) if type(v) in (dict, list) else v)
            for k, v in value.items()
        }
    if type(value) is list:
        return [_shared(v, share) for v in value]
    return value


def _parquet_records(path: Path) -> Iterator[tuple[int, Any]]:
    """``(row, record)`` of a Parquet samples file (provenance parsed, texts through the door)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    line = 0
    try:
        parquet = pq.ParquetFile(path)
        check_parquet_columns(path, parquet.schema_arrow.names)
        for batch in parquet.iter_batches(batch_size=4096):
            for row in batch.to_pylist():
                line += 1
                provenance = row.get("provenance")
                if not isinstance(provenance, str | None):
                    raise SourceError(path, "provenance", "not a JSON object", line=line)
                row["provenance"] = parse_json(path, provenance or "{}", line=line)
                for name in _TEXTS:
                    if type(row.get(name)) is str and not is_plain(row[name]):
                        row[name] = enter_text(row[name], f"{path}:{line} ({name})", stacklevel=4)
                yield line, row
    except (pa.ArrowException, OSError, ValueError, KeyError) as exc:
        raise SourceError(
            path,
            None,
            f"not a readable Parquet samples file ({type(exc).__name__}: {exc})",
            fix="write it again with `nlibias expand`, or pass the samples.jsonl file",
        ) from None


def is_blank_text(text: str) -> bool:
    """Whether ``text`` holds only whitespace and invisible characters (categories Z* and C*).

    >>> is_blank_text("\u200b\u2060\ufeff \u00a0"), is_blank_text(" a\u200b")
    (True, False)
    """
    if text.isprintable():  # the usual case, in C
        return not text.strip()
    return all(unicodedata.category(c)[0] in "ZC" for c in text)


def record_fields(raw: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """The core fields and provenance of one sample record under :class:`SampleRecord`'s rules
    (pydantic's ValidationError when one is broken). A well-formed record is taken as it is
    (several times faster); any other goes through :class:`SampleRecord`."""
    get = raw.get
    source: Any = get("source", "custom")
    quick = (
        get("gold") in LABELS
        and get("stereotype", 0) in _STEREOTYPES
        and "pair_key" in raw
        and type(source) is str
        and source != ""
        and source.strip() is source
        and type(get("provenance", {})) is dict
        and set(raw) <= _KNOWN_KEYS
    )
    for name in _TEXT_FIELDS if quick else ():  # SampleRecord's field rules, inline
        value = get(name)
        if type(value) is not str:
            quick = value is None and name not in _REQUIRED_TEXT
        elif name in _TEXTS:  # is_blank_text, its usual case inline
            quick = bool(value.strip()) if value.isprintable() else not is_blank_text(value)
        else:  # a key field: not empty, no spaces around it
            quick = value != "" and value.strip() is value
        if not quick:
            break
    if quick:
        fields = {name: get(name) for name in _CORE_FIELDS}
        fields["source"] = source
        return fields, get("provenance", {})
    record = SampleRecord.model_validate(raw)
    fields = {name: getattr(record, name) for name in _CORE_FIELDS}
    return fields, {**record.provenance, **(record.model_extra or {})}


_TWIN_FIELDS = ("domain", "subtopic", "premise", "premise_index", "combination_index", "premise_template")
"""What a pair's two samples share: their slice and premise (its text, or what rendered it)."""


@dataclass
class SampleRules:
    """The rules of one samples file: a record's fields, then ``benchmark``'s (or that of the first
    sample's ``source`` in ``benchmarks``); a pair's first sample waits here for its twin."""

    path: Path
    benchmark: Benchmark | None = None
    benchmarks: Mapping[str, Benchmark] | None = None
    _waiting: dict[str, tuple[int, tuple[Any, ...]]] = field(default_factory=dict)

    def check(self, line: int, raw: Any) -> tuple[dict[str, Any], dict[str, Any]]:
        """The fields and provenance of one record (:func:`record_fields`), or the refusal naming
        file, line and field."""
        if not isinstance(raw, dict):
            raise SourceError(self.path, None, "expected a JSON object", line=line)
        try:
            fields, provenance = record_fields(raw)
        except ValidationError as exc:
            raise source_error(exc, self.path, line=line, fix=_RECORD_FIX) from None
        stereotype, gold, source = fields["stereotype"], fields["gold"], fields["source"]
        if self.benchmarks is not None:  # the first sample's benchmark rules them all
            try:
                self.benchmark = self.benchmarks[source]
            except DataError as error:
                raise SourceError(self.path, error.field, error.reason, fix=error.fix) from None
            self.benchmarks = None
        benchmark = self.benchmark
        if stereotype is not None and gold != "neutral" and benchmark and source in benchmark.neutral_gold:
            raise SourceError(
                self.path,
                "gold",
                f"a {source} bias sample (stereotype {stereotype}) has gold {gold}; "
                "its bias samples are neutral",
                line=line,
                fix="set gold to neutral, or stereotype to null for a test sample",
            )
        key = fields["pair_key"]
        if key is None or stereotype is None:
            return fields, provenance
        premise = fields["premise"] if benchmark and source in benchmark.shared_premises else None
        shared = (fields["domain"], fields["subtopic"], premise, *map(provenance.get, _TWIN_FIELDS[3:]))
        first = self._waiting.pop(key, None)
        if first is None:
            self._waiting[key] = (line, shared)
            return fields, provenance
        for name, a, b in zip(_TWIN_FIELDS, first[1], shared, strict=True):
            if a != b:
                raise SourceError(
                    self.path,
                    name if name in _TWIN_FIELDS[:3] else f"provenance.{name}",
                    f"the two samples of pair {key!r} differ in {name}: {a!r} on line {first[0]}, "
                    f"{b!r} on line {line}; a counterfactual pair differs only in its group",
                    line=line,
                    fix="give the two samples the same value, or different pair_keys if they are not a pair",
                )
        return fields, provenance


def _duplicate_id(path: Path, sample_id: str, *, earlier: int, later: int) -> SourceError:
    """The error for an id at 0-based positions ``earlier`` and ``later``, naming both lines."""
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


def peek_source(path: str | Path) -> str | None:
    """The ``source`` of the first sample (``custom`` when absent), or None when unreadable."""
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
