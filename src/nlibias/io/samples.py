"""Samples files: ``samples.jsonl`` (one sample per line) and ``samples.parquet`` in a run directory.

Read side accepts a run directory, a ``.jsonl`` file or a ``.parquet`` file; user-written JSONL
is validated line by line (file, line, field and reason in every error). Premises and hypotheses
enter through :func:`~nlibias.textio.text_door.enter_text` (NFC; format characters such as
zero-width spaces removed with a warning naming the file, line and field).
"""

from __future__ import annotations

import operator
import unicodedata
from collections.abc import Collection, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict, ValidationError, field_validator

from nlibias.errors import SourceError
from nlibias.io.atomic import atomic_path, write_jsonl
from nlibias.io.fingerprint import file_stamp, sha256_file
from nlibias.io.jsonl import dumps_finite, iter_jsonl
from nlibias.schema import LABELS, Sample
from nlibias.schema.columns import SampleColumns
from nlibias.textio.json_text import parse_json
from nlibias.textio.text_door import enter_text

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


_KEY_FIELDS = ("id", "source", "domain", "subtopic", "pair_key", "group", "counterfactual_group")
"""Fields that name a slice, a pair or a sample: ``" gender"`` would be a slice of its own."""


def is_blank_text(text: str) -> bool:
    """Whether ``text`` is empty once whitespace and invisible characters (zero-width spaces,
    joiners, byte-order marks: Unicode categories Z* and Cf, and controls) are taken out.

    >>> is_blank_text("\u200b\u2060\ufeff \u00a0"), is_blank_text(" a\u200b")
    (True, False)
    """
    if text.isprintable():  # the usual case, in C: no control, format or odd space character
        return not text.strip()
    return all(unicodedata.category(c)[0] in "ZC" for c in text)


def _checked(path: Path, line: int, sample: Sample, neutral_gold: Collection[str]) -> Sample:
    """Refuse what would change results silently: an empty id, a key field with spaces around it,
    an empty (or invisible) text, a bias sample of a ``neutral_gold`` source with another gold label."""
    for value in _key_values(sample):  # strip() returns a str with nothing to strip as it is
        if value is not None and (not value or value.strip() is not value):
            _check_key_fields(path, line, sample)
            break
    for name in ("premise", "hypothesis"):
        if is_blank_text(getattr(sample, name)):
            raise SourceError(
                path,
                name,
                "empty text (nothing visible: only spaces or zero-width characters)",
                line=line,
                fix="remove the sample or write its text",
            )
    if sample.stereotype is not None and sample.gold != "neutral" and sample.source in neutral_gold:
        raise SourceError(
            path,
            "gold",
            f"a {sample.source} bias sample (stereotype {sample.stereotype}) has gold {sample.gold}; "
            "its bias samples are neutral",
            line=line,
            fix="set gold to neutral, or stereotype to null for a test sample",
        )
    return sample


_key_values = operator.attrgetter(*_KEY_FIELDS)


def _check_key_fields(path: Path, line: int, sample: Sample) -> None:
    """Refuse an empty key field or one with spaces around it, naming the field."""
    for name in _KEY_FIELDS:
        value = getattr(sample, name)
        if value is None:
            continue
        if not value.strip():
            if name == "id":
                raise SourceError(
                    path, name, "empty sample id", line=line, fix="give every sample its own id"
                )
            if name in ("pair_key", "group", "counterfactual_group"):
                raise SourceError(path, name, "empty text", line=line, fix="use null where there is none")
            raise SourceError(path, name, "empty text", line=line, fix=f"write the sample's {name}")
        if value != value.strip():
            raise SourceError(
                path,
                name,
                f"{value!r} has spaces around it (it would be a {name} of its own, apart from {value.strip()!r})",
                line=line,
                fix="remove the spaces",
            )


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
        return _checked(path, line, quick, neutral_gold)
    try:
        record = SampleRecord.model_validate(raw)
    except ValidationError as exc:
        error = exc.errors()[0]
        field = ".".join(str(p) for p in error["loc"]) or None
        raise SourceError(
            path,
            field,
            error["msg"],
            line=line,
            fix="samples need id, domain, subtopic, premise, hypothesis, gold, stereotype, pair_key",
        ) from None
    provenance = dict(record.provenance)
    provenance.update(record.model_extra or {})
    return _checked(
        path,
        line,
        shared.sample({name: getattr(record, name) for name in _CORE_FIELDS}, provenance),
        neutral_gold,
    )


_TWIN_FIELDS = ("domain", "subtopic", "premise", "premise_index", "combination_index", "premise_template")
"""What the two samples of a pair share: their slice, and their premise (its text where the
source keeps it, otherwise the premise and word combination it was rendered from)."""


class _Twins:
    """Refuses a pair whose two samples disagree on a field they share (:data:`_TWIN_FIELDS`):
    they would be scored as a counterfactual pair while they are not one. Holds only the samples
    whose twin has not been read yet (a pair's samples are usually next to each other); the
    premise text is compared for ``shared_premises`` sources."""

    def __init__(self, path: Path, shared_premises: Collection[str]) -> None:
        self._path = path
        self._shared_premises = shared_premises
        self._waiting: dict[str, tuple[int, Sample, Any]] = {}

    def check(self, line: int, sample: Sample, provenance: Any) -> None:
        key = sample.pair_key
        if key is None or sample.stereotype is None:  # a test sample is no member of a pair
            return
        first = self._waiting.pop(key, None)
        if first is None:
            self._waiting[key] = (line, sample, provenance)
        else:
            self._compare(key, first, (line, sample, provenance))

    def _compare(self, key: str, *members: tuple[int, Sample, Any]) -> None:
        (first_line, *_), (line, *_) = members
        before, now = (self._shared(sample, provenance) for _, sample, provenance in members)
        if before == now:
            return
        for name, a, b in zip(_TWIN_FIELDS, before, now, strict=True):
            if a != b:
                raise SourceError(
                    self._path,
                    name if name in _CORE_FIELDS else f"provenance.{name}",
                    f"the two samples of pair {key!r} differ in {name}: {a!r} on line {first_line}, "
                    f"{b!r} on line {line}; a counterfactual pair differs only in its group",
                    line=line,
                    fix="give the two samples the same value, or different pair_keys if they are not a pair",
                )

    def _shared(self, sample: Sample, provenance: Any) -> tuple[Any, ...]:
        given = provenance if isinstance(provenance, dict) else {}
        premise = sample.premise if sample.source in self._shared_premises else None
        return (sample.domain, sample.subtopic, premise, *(given.get(k) for k in _TWIN_FIELDS[3:]))


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
    _check_unique(resolved, samples)
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
    twins = _Twins(path, frozenset(benchmark.shared_premises) if benchmark is not None else frozenset())
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


def _check_unique(path: Path, samples: Iterable[Sample]) -> None:
    seen: dict[str, int] = {}
    for position, sample in enumerate(samples):
        earlier = seen.setdefault(sample.id, position)
        if earlier != position:
            raise duplicate_id_error(path, sample.id, earlier=earlier, later=position)


def duplicate_id_error(path: Path, sample_id: str, *, earlier: int, later: int) -> SourceError:
    """The error for a sample id at positions ``earlier`` and ``later`` (0-based) of a samples file,
    naming the lines both are on (blank lines make a JSONL line differ from a position)."""
    first, second = _lines_of(path, (earlier, later))
    return SourceError(
        path,
        "id",
        f"duplicate sample id {sample_id!r} (also sample {earlier + 1}); the first is on line {first}",
        line=second,
        fix="every sample needs its own id",
    )


def _lines_of(path: Path, positions: tuple[int, int]) -> tuple[int, int]:
    """The file lines of two sample positions (a Parquet file's row numbers; the positions + 1
    where the file cannot be read again)."""
    wanted = {p: p + 1 for p in positions}
    if path.suffix != ".parquet":
        try:
            for position, (line, _) in enumerate(iter_jsonl(path)):
                if position in wanted:
                    wanted[position] = line
                if position >= max(positions):
                    break
        except (SourceError, OSError):
            pass
    return wanted[positions[0]], wanted[positions[1]]
