"""Read an NLI training set row by row, streamed: JSONL, CSV/TSV, Parquet, a ``datasets``
directory or a hub name; columns ``premise``/``sentence1``, ``hypothesis``/``sentence2``,
``label``/``gold_label``; labels as names, initials or 0/1/2.

>>> import tempfile, pathlib
>>> path = pathlib.Path(tempfile.mkdtemp()) / "train.jsonl"
>>> _ = path.write_text('{"sentence1": "A man naps.", "sentence2": "He sleeps.", "gold_label": "e"}\\n')
>>> [(r.row, r.premise, r.label) for r in iter_training_rows(path)]
[(0, 'A man naps.', 'entailment')]
"""

from __future__ import annotations

import hashlib
import importlib.util
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from nlibias.errors import ConfigError, DataNotFoundError, SourceError
from nlibias.textio.json_text import parse_json
from nlibias.textio.text_door import enter_text
from nlibias.textio.text_files import (
    check_header,
    check_parquet_columns,
    check_row_width,
    read_csv_records,
    stream_lines,
)

LABELS = ("entailment", "neutral", "contradiction")
"""Label names, in the id order of the Hugging Face SNLI/MNLI sets (0, 1, 2)."""
FIELD_NAMES = {
    "premise": ("premise", "sentence1"),
    "hypothesis": ("hypothesis", "sentence2"),
    "label": ("label", "gold_label"),
}
_LABEL_ALIASES = {
    **{name: name for name in LABELS},
    **{name[0]: name for name in LABELS},
    **{str(i): name for i, name in enumerate(LABELS)},
}
_NO_LABEL = frozenset({"-", "-1", ""})
_BOM = b"\xef\xbb\xbf"
_FILE_KINDS = {
    ".jsonl": "jsonl",
    ".json": "jsonl",
    ".csv": "csv",
    ".tsv": "tsv",
    ".txt": "tsv",  # SNLI's and MNLI's own snli_1.0_train.txt, multinli_1.0_train.txt
    ".parquet": "parquet",
}


@dataclass(frozen=True)
class TrainingRow:
    """One premise/hypothesis pair of a training set."""

    row: int
    """0-based position in the source (skipped records count too)."""
    premise: str
    hypothesis: str
    label: str | None
    """``entailment``/``neutral``/``contradiction``, or None when the row has no gold label."""


def normalise_label(value: Any, path: str, line: int | None, field: str) -> str | None:
    """A label name, or None for "no gold label"; anything else is a :class:`SourceError`.

    >>> normalise_label(2, "t.csv", 3, "label"), normalise_label("N", "t.csv", 3, "label")
    ('contradiction', 'neutral')
    >>> normalise_label("-", "t.csv", 3, "label") is None
    True
    """
    text = "" if value is None else str(value).strip().lower()
    if text in _NO_LABEL:
        return None
    if text not in _LABEL_ALIASES:
        raise SourceError(
            path, field, f"unknown label {value!r}", line=line,
            fix="use entailment/neutral/contradiction, e/n/c or 0/1/2",
        )  # fmt: skip
    return _LABEL_ALIASES[text]


def _pick(record: Mapping[str, Any], name: str, path: str, line: int | None) -> Any:
    for key in FIELD_NAMES[name]:
        if key in record:
            return record[key]
    raise SourceError(path, name, f"missing (looked for {' or '.join(FIELD_NAMES[name])})", line=line)


def _row(record: Any, row: int, path: str, line: int | None) -> TrainingRow:
    if not isinstance(record, Mapping):
        raise SourceError(path, None, f"expected an object, got {type(record).__name__}", line=line)
    texts = []
    for name in ("premise", "hypothesis"):
        value = _pick(record, name, path, line)
        if isinstance(value, str):  # the text door: NFC, format characters removed with a warning
            value = enter_text(value, f"{path}:{line} ({name})", stacklevel=4)
        if not isinstance(value, str) or not value.strip():
            raise SourceError(path, name, f"expected a non-empty string, got {value!r}", line=line)
        texts.append(value)
    label_key = next((k for k in FIELD_NAMES["label"] if k in record), "label")
    label = normalise_label(_pick(record, "label", path, line), path, line, label_key)
    return TrainingRow(row, texts[0], texts[1], label)


def source_kind(source: str | Path) -> tuple[str, Path | str]:
    """``(kind, location)``: a file kind (``jsonl``, ``csv``, ``tsv``, ``parquet``), ``datasets``
    (a saved directory) or ``hub``; a directory with ``train.jsonl`` (``augment``'s) is that file.

    >>> source_kind("snli")
    ('hub', 'snli')
    """
    path = Path(source)
    if path.is_dir():
        if (path / "train.jsonl").is_file():
            return "jsonl", path / "train.jsonl"
        if any((path / name).is_file() for name in ("dataset_info.json", "state.json", "dataset_dict.json")):
            return "datasets", path
        raise SourceError(path, None, "a directory with neither train.jsonl nor a saved `datasets` set")
    if path.is_file():
        kind = _FILE_KINDS.get(path.suffix.lower())
        if kind is None:
            raise SourceError(
                path,
                None,
                f"unknown file type {path.suffix!r}",
                fix="use .jsonl, .csv, .tsv (.txt) or .parquet",
            )
        return kind, path
    text = str(source)
    if path.suffix.lower() in _FILE_KINDS or text.startswith((".", "/", "~")):
        raise SourceError(path, None, "no such file or directory")
    return "hub", text


def iter_training_rows(source: str | Path, *, split: str = "train") -> Iterator[TrainingRow]:
    """The rows of a training set, streamed (``split`` of a ``datasets`` set; ``nyu-mll/glue:mnli``
    names a configuration); a set without a row is a :class:`SourceError`."""
    kind, location = source_kind(source)
    yield from _rows_of(kind, location, split)


def _rows_of(kind: str, location: Path | str, split: str) -> Iterator[TrainingRow]:
    """:func:`iter_training_rows` of a source whose kind is already known."""
    readers = {
        "jsonl": _jsonl_records,
        "csv": read_csv_records,
        "tsv": _tsv_records,
        "parquet": _parquet_records,
    }
    records = readers[kind](Path(location)) if kind in readers else _datasets_records(kind, location, split)
    row = -1
    for row, (line, record) in enumerate(records):
        yield _row(record, row, str(location), line)
    if row < 0:
        where = f" (split {split!r})" if kind in ("datasets", "hub") else ""
        raise SourceError(
            location, None, f"no rows{where}", fix="check that this is the training set you meant"
        )


def _jsonl_records(path: Path) -> Iterator[tuple[int, Any]]:
    """``(line, record)`` of each line that is not blank."""
    with path.open("rb") as handle:
        for number, line in enumerate(handle, start=1):
            if number == 1:
                line = line.removeprefix(_BOM)
            if line.strip():
                yield number, parse_json(path, line.rstrip(b"\r\n"), line=number)


def _tsv_records(path: Path) -> Iterator[tuple[int, Any]]:
    """TSV as SNLI and MNLI ship it: one row per line, split on tabs, no quoting (a quote is text)."""
    header: list[str] | None = None
    for number, line in enumerate(stream_lines(path), start=1):
        fields = line.rstrip("\r\n").split("\t")
        if not line.strip():
            continue
        if header is None:
            header = check_header(path, fields)
            continue
        check_row_width(path, number, fields, header, separators="tabs")
        yield number, dict(zip(header, fields, strict=True))


def _parquet_records(path: Path) -> Iterator[tuple[int, Any]]:
    """``(row, record)``: Parquet has no lines, the 1-based row stands in."""
    import pyarrow.parquet as pq

    try:
        parquet = pq.ParquetFile(path)
    except Exception as exc:  # pyarrow raises several types for a file that is not Parquet
        raise SourceError(path, None, f"not a Parquet file: {exc}") from exc
    check_parquet_columns(path, parquet.schema_arrow.names)
    batches = parquet.iter_batches(batch_size=8192)
    yield from enumerate((record for batch in batches for record in batch.to_pylist()), start=1)


def require_packages(what: str, packages: Sequence[str], parameter: str | None = None) -> None:
    """One clear error when an optional package ``what`` needs (the ``train`` extra) is missing."""
    missing = [p for p in packages if importlib.util.find_spec(p) is None]
    if missing:
        torch = " (and torch for your machine)" if "torch" in packages else ""
        raise ConfigError(
            f"{what} needs {', '.join(missing)}: pip install 'nlibias[train]'{torch}", parameter=parameter
        )


def _datasets_records(kind: str, location: Path | str, split: str) -> Iterator[tuple[int, Any]]:
    require_packages("reading a `datasets` set", ["datasets"], parameter="train")
    import datasets

    if kind == "datasets":
        loaded: Any = datasets.load_from_disk(str(location))
        if isinstance(loaded, datasets.DatasetDict):
            if split not in loaded:
                raise ConfigError(f"{{split}} {split!r} not in {sorted(loaded)}", parameter="split")
            loaded = loaded[split]
    else:
        name, _, config = str(location).partition(":")
        try:
            loaded = datasets.load_dataset(name, config or None, split=split, streaming=True)
        except Exception as exc:  # offline, unknown name: the hub client raises many types
            raise DataNotFoundError(
                f"cannot load the hub dataset {location!r} (split {split!r}): {exc}"
            ) from exc
    yield from enumerate(loaded, start=1)


def _digest_of(kind: str, location: Path | str) -> str | None:
    """SHA-256 of a training file (of every file of a ``datasets`` directory, by name); None for a
    hub name."""
    if kind == "hub":
        return None
    path = Path(location)
    files = sorted(p for p in path.rglob("*") if p.is_file()) if path.is_dir() else [path]
    digest = hashlib.sha256()
    for file in files:
        if path.is_dir():
            digest.update(str(file.relative_to(path)).encode("utf-8") + b"\0")
        with file.open("rb") as handle:
            while chunk := handle.read(1 << 16):
                digest.update(chunk)
    return digest.hexdigest()


@dataclass(frozen=True)
class TrainingSet:
    """A training (or evaluation) set named once, with its kind and SHA-256, so no step finds or
    hashes it again (``rows``: None before a full read, -1 for a hub name, not read ahead)."""

    given: str | Path
    """The source as the caller wrote it."""
    kind: str
    location: Path | str
    sha256: str | None
    split: str = "train"
    rows: int | None = None
    labelled: int | None = None
    labels: tuple[str, ...] = ()
    """The gold labels a full read found (sorted; empty before one, and for a hub name)."""

    @property
    def path(self) -> str:
        """Where the set is, as runs record it: the hub name, else the absolute path."""
        return str(self.given) if self.kind == "hub" else str(Path(self.given).expanduser().absolute())

    def record(self) -> dict[str, Any]:
        """The set in a fine-tune's or a stage's recorded inputs: ``{"path", "sha256"}``."""
        return {"path": self.path, "sha256": self.sha256}

    def iter_rows(self, split: str | None = None) -> Iterator[TrainingRow]:
        """The rows, streamed (:func:`iter_training_rows`); ``split`` defaults to the set's own."""
        return _rows_of(self.kind, self.location, self.split if split is None else split)


def describe_training_set(source: str | Path, split: str = "train") -> TrainingSet:
    """The :class:`TrainingSet` of ``source`` (its kind found and its files hashed; no row read)."""
    kind, location = source_kind(source)
    return TrainingSet(source, kind, location, _digest_of(kind, location), split)
