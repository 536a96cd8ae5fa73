"""Library side of ``nlibias expand``: expand a registered benchmark's source into a run directory.

>>> import tempfile
>>> summary = expand_to_dir("occupations", tempfile.mkdtemp())
>>> summary["samples"] > 0, sorted(summary["files"])
(True, ['jsonl', 'parquet'])
"""

from __future__ import annotations

import shutil
import weakref
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any, SupportsIndex, overload

from nlibias.benchmarks.data_locations import data_checks, locate_data, modified_data_warnings
from nlibias.catalog.registry import described, get_benchmark
from nlibias.errors import SourceError
from nlibias.io.atomic import locked_folder, write_json
from nlibias.io.overwrites import refuse_overwrites, refuse_writing_into
from nlibias.io.samples import (
    SAMPLES_JSONL,
    SAMPLES_PARQUET,
    read_samples,
    resolve_samples_path,
    write_samples,
)
from nlibias.io.temporary import make_temporary_folder
from nlibias.schema.columns import IdPositions
from nlibias.schema.declared import PathArg, declared

if TYPE_CHECKING:
    import pandas as pd

    from nlibias.schema import Sample

SUMMARY_JSON = "expansion.json"


@declared
def expand_to_dir(
    benchmark: str,
    out_dir: PathArg,
    source: PathArg | None = None,
    *,
    allow_modified_data: bool | None = None,
    **options: Any,
) -> dict[str, Any]:
    """Expand the registered ``benchmark`` from ``source`` (default: its file in the data dir) into
    ``out_dir`` (samples and ``expansion.json``); returns the summary. ``allow_modified_data``:
    use pinned data that differs from its pins, warned and recorded (None: the environment's)."""
    written = [Path(out_dir) / name for name in (SAMPLES_JSONL, SAMPLES_PARQUET, SUMMARY_JSON)]
    read = {"source": _source_files(source)} if source is not None else _data_read(benchmark)
    refuse_overwrites({"out_dir": written}, read)
    refuse_writing_into("out_dir", out_dir, read)
    with data_checks(allow_modified_data) as modified:
        expansion = get_benchmark(benchmark).expand_source(source, **options)
    if not expansion.samples:
        origin = getattr(expansion, "origin", None) or source or benchmark
        raise SourceError(
            origin,
            None,
            "the source expands to no samples (no data rows?)",
            fix="check that it is the right file",
        )
    duplicate = IdPositions([sample.id for sample in expansion.samples]).first_duplicate()
    if duplicate is not None:  # the audit would refuse the file, naming no benchmark
        first, second = duplicate
        raise SourceError(
            getattr(expansion, "origin", None) or source or benchmark,
            "id",
            f"{described(get_benchmark(benchmark))} expands to sample id "
            f"{expansion.samples[second].id!r} twice (samples {first + 1} and {second + 1})",
            fix="give each sample its own id",
        )
    with locked_folder(out_dir):  # another expand into this folder at once: one's files, not a mix
        files = write_samples(out_dir, expansion.samples)
        summary = {**expansion.summary(), "files": {name: str(p) for name, p in files.items()}}
        if modified:  # the digests of the modified data it was expanded from
            summary["modified_data"] = modified
            summary["warnings"] = [*summary.get("warnings", []), *modified_data_warnings(modified)]
        write_json(Path(out_dir) / SUMMARY_JSON, summary)
    return summary


def _data_read(benchmark: str) -> dict[str, Path]:
    """The pinned data a benchmark expanded with no source reads from the data dir (as an
    expansion finds it, never downloading), each described by where it was found."""
    found = {data.name: locate_data(data) for data in get_benchmark(benchmark).pinned_data}
    return {f"the {name} data found in {at[0]}": at[1] for name, at in found.items() if at is not None}


def _source_files(source: str | Path | None) -> list[Path]:
    """The files a source names: one path, or several joined by commas (paper 004's workbooks)."""
    if source is None:
        return []
    text = str(source)
    return [Path(text)] if Path(text).exists() else [Path(part.strip()) for part in text.split(",")]


@dataclass(frozen=True)
class Samples(Sequence["Sample"]):
    """An expanded benchmark in a run directory (:func:`nlibias.expand`): its samples as a list.

    >>> samples = expand_samples("occupations")
    >>> first = samples[0]
    >>> len(samples) == len(list(samples)), first in samples, samples[:2] == list(samples)[:2]
    (True, True, True)
    """

    path: Path
    """The run directory holding ``samples.jsonl`` and ``samples.parquet``."""
    benchmark: str
    summary: Mapping[str, Any] = field(repr=False, default_factory=dict)
    """The expansion summary (``expansion.json``): counts per slice, warnings."""

    def __len__(self) -> int:
        with resolve_samples_path(self.path).open("rb") as handle:
            return sum(1 for line in handle if line.strip())

    def __fspath__(self) -> str:
        return str(self.path)

    @cached_property
    def _records(self) -> list[Sample]:
        return read_samples(self.path)

    @overload
    def __getitem__(self, index: SupportsIndex) -> Sample: ...

    @overload
    def __getitem__(self, index: slice) -> list[Sample]: ...

    def __getitem__(self, index: SupportsIndex | slice) -> Sample | list[Sample]:
        return self._records[index]

    def to_frame(self) -> pd.DataFrame:
        """The samples as a pandas DataFrame (one row per sample; provenance as a dict column)."""
        import pandas as pd

        return pd.DataFrame([sample.to_dict() for sample in read_samples(self.path)])


def expand_samples(
    benchmark: str, source: str | Path | None = None, *, out_dir: str | Path | None = None, **options: Any
) -> Samples:
    """:func:`expand_to_dir` into ``out_dir`` (default: a temporary directory, removed with the
    returned :class:`Samples`)."""
    target = make_temporary_folder(f"nlibias-{benchmark}-") if out_dir is None else Path(out_dir)
    try:
        summary = expand_to_dir(benchmark, target, source, **options)
    except BaseException:
        if out_dir is None:
            shutil.rmtree(target, ignore_errors=True)
        raise
    samples = Samples(path=target, benchmark=benchmark, summary=summary)
    if out_dir is None:  # a temporary directory lives as long as the object that names it
        weakref.finalize(samples, shutil.rmtree, target, ignore_errors=True)
    return samples
