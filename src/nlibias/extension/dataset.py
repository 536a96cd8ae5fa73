"""Dataset export: ``README.md`` (the card), ``samples.jsonl``/``samples.parquet`` (Sample
records, audit input) and ``data/train.{parquet,jsonl,csv}`` (flat columns, for ``datasets.load_dataset``).
A local model path is published by its folder under ``<local>/`` (the paths stay in ``run.json``)."""

from __future__ import annotations

import csv
import json
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import fields
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from nlibias.errors import NlibiasError
from nlibias.extension.card import render_card
from nlibias.io.atomic import atomic_path, atomic_write_text, write_jsonl
from nlibias.io.samples import write_samples
from nlibias.schema import Sample
from nlibias.schema.model_ref import ModelRef

DATA_FILES = {"parquet": "data/train.parquet", "jsonl": "data/train.jsonl", "csv": "data/train.csv"}
_SAMPLE_COLUMNS = tuple(f.name for f in fields(Sample) if f.name != "provenance")
#: Column name → pyarrow type name of the flat data files.
FLAT_COLUMNS: dict[str, str] = {
    **dict.fromkeys(_SAMPLE_COLUMNS, "string"),
    "added_as_twin": "bool_",
    "template_id": "string",
    "template_index": "int64",
    "masked_template": "string",
    "bbnli_template": "string",
    "fill_word": "string",
    "fill_rank": "int64",
    "lm_score": "float64",
    "premise_index": "int64",
    "combination_index": "int64",
    "validation": "string",
    "mispredicted_by": "int64",
    "filter_labels": "string",
    "provenance": "string",
}


class _Label(BaseModel):
    label: str


class _Judged(BaseModel):
    judgement: str | None = None


class _Provenance(BaseModel):
    """What the flat columns read of a provenance (a generated twin's ``filter`` and ``validation`` are null)."""

    filter: dict[str, _Label] | None = None
    validation: _Judged | None = None
    twin_judgement: str | None = None
    added_as_twin: bool | None = False


def flat_record(sample: Sample) -> dict[str, Any]:
    """One row of the flat data files: the sample's fields, then its provenance's (nested as JSON text)."""
    p = sample.provenance
    record = {name: getattr(sample, name) for name in _SAMPLE_COLUMNS}
    record |= {name: p.get(name) for name in FLAT_COLUMNS if name not in record}
    known = _Provenance.model_validate(dict(p))
    labels = {model: r.label for model, r in known.filter.items()} if known.filter else {}
    judged = known.validation.judgement if known.validation else None
    record.update(
        added_as_twin=bool(known.added_as_twin),
        validation=judged or known.twin_judgement,
        filter_labels=json.dumps(labels, ensure_ascii=False),
        provenance=json.dumps(dict(p), ensure_ascii=False),
    )
    return record


def write_data_files(out_dir: str | Path, samples: Sequence[Sample]) -> dict[str, Path]:
    """The flat Parquet, JSONL and CSV files under ``out_dir/data``."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    out_dir = Path(out_dir)
    records = [flat_record(s) for s in samples]
    schema = pa.schema([(name, getattr(pa, kind)()) for name, kind in FLAT_COLUMNS.items()])
    table = pa.Table.from_pylist(records, schema=schema)
    paths = {kind: out_dir / rel for kind, rel in DATA_FILES.items()}
    with atomic_path(paths["parquet"]) as tmp:
        pq.write_table(table, tmp)
    write_jsonl(paths["jsonl"], records)
    with atomic_path(paths["csv"]) as tmp, tmp.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(FLAT_COLUMNS))
        writer.writeheader()
        writer.writerows(records)
    return paths


def count_rows(out_dir: str | Path) -> dict[str, int]:
    """Rows in each written file (read back from disk)."""
    import pyarrow.parquet as pq

    out_dir = Path(out_dir)
    counts: dict[str, int] = {}
    for rel in ("samples.jsonl", DATA_FILES["jsonl"]):
        with (out_dir / rel).open(encoding="utf-8") as handle:
            counts[rel] = sum(1 for line in handle if line.strip())
    for rel in ("samples.parquet", DATA_FILES["parquet"]):
        counts[rel] = pq.read_metadata(out_dir / rel).num_rows
    with (out_dir / DATA_FILES["csv"]).open(newline="", encoding="utf-8") as handle:
        counts[DATA_FILES["csv"]] = sum(1 for _ in csv.DictReader(handle))
    return counts


def final_counts(out_dir: str | Path) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Per-domain (Table 4) and per-subtopic (Table 12) counts of ``data/train.parquet`` rows."""
    import pyarrow.parquet as pq

    table = pq.read_table(Path(out_dir) / DATA_FILES["parquet"], columns=["domain", "subtopic"])
    rows = list(zip(table.column("domain").to_pylist(), table.column("subtopic").to_pylist(), strict=True))
    by_subtopic = Counter(rows)
    by_domain = Counter(domain for domain, _ in rows)
    domain_rows = [{"domain": d, "count": by_domain[d]} for d in sorted(by_domain)]
    domain_rows.append({"domain": "all", "count": len(rows)})
    subtopic_rows = [{"domain": d, "subtopic": s, "count": c} for (d, s), c in sorted(by_subtopic.items())]
    return domain_rows, subtopic_rows


def check_pairs(samples: Sequence[Sample]) -> None:
    """Every pair key has exactly one pro and one anti member, with the same premise; ids unique."""
    members: dict[str | None, list[Sample]] = {}
    for sample in samples:
        members.setdefault(sample.pair_key, []).append(sample)
    ids = Counter(s.id for s in samples)
    repeated = [i for i, n in ids.items() if n > 1]
    if repeated:
        raise NlibiasError(f"duplicate sample id {repeated[0]!r} in the dataset")
    for key, group in members.items():
        kinds = sorted(str(s.stereotype) for s in group)
        if key is None or kinds != ["anti", "pro"] or group[0].premise != group[1].premise:
            raise NlibiasError(
                f"pair {key!r} is not one pro and one anti sample on the same premise: {[s.id for s in group]}"
            )


def export_dataset(out_dir: str | Path, samples: Sequence[Sample], info: Mapping[str, Any]) -> dict[str, Any]:
    """Write every file of the dataset directory, then the card from the files read back; returns
    ``info`` (config and earlier stages' statistics) with row counts and Tables 4 and 12 added."""
    check_pairs(samples)
    out_dir = Path(out_dir)
    write_samples(out_dir, samples)
    write_data_files(out_dir, samples)
    rows = count_rows(out_dir)
    if len(set(rows.values())) != 1 or next(iter(rows.values())) != len(samples):
        raise NlibiasError(f"the written files do not all hold {len(samples)} rows: {rows}")
    by_domain, by_subtopic = final_counts(out_dir)
    completed = {
        **dict(info),
        "files": {"rows": rows},
        "tables": {**dict(info["tables"]), "final_by_domain": by_domain, "final_by_subtopic": by_subtopic},
    }
    atomic_write_text(out_dir / "README.md", render_card(completed))
    return completed


_PATH_PREFIXES = ("/", "./", "../", "~")


def _local(written: str, *, bare_word: bool) -> Path | None:
    """The local file or folder ``written`` names, or None (a path-like name even when gone; another
    one when it exists and, unless ``bare_word``, holds a ``/``)."""
    path = Path(written).expanduser()
    if written.startswith(_PATH_PREFIXES):
        return path
    return path if (bare_word or "/" in written) and path.exists() else None


def _path_forms(written: str) -> set[str]:
    """How records write a local path (as given, normalised, ``~`` expanded, resolved), each with a ``/``."""
    path = Path(written).expanduser()
    return {form for form in (written, str(Path(written)), str(path), str(path.resolve())) if "/" in form}


class _Places:
    """``<local>/FOLDER``, ``<local-2>/FOLDER``, ...: one place per resolved path."""

    def __init__(self) -> None:
        self.taken: dict[str, str] = {}  # place → the resolved path it stands for

    def of(self, path: Path) -> str:
        resolved = path.resolve()
        number = 1
        while True:
            place = f"{'<local>' if number == 1 else f'<local-{number}>'}/{resolved.name}"
            if self.taken.setdefault(place, str(resolved)) == str(resolved):
                return place
            number += 1


def local_model_names(specs: Iterable[str]) -> dict[str, str]:
    """``{written: published name}`` for each of ``specs`` naming a local path (also in an option)
    and for the path's own forms: ``<local>/FOLDER`` (``<local-2>/`` for a second with that name)."""
    names: dict[str, str] = {}
    places = _Places()
    for spec in sorted(set(specs)):
        ref = ModelRef.parse(spec, parameter="model")
        if ref.is_fake or ref.is_server or not ref.name:
            continue
        items = list(ref.option_items)
        for index, (key, value) in enumerate(items):
            if (path := _local(value, bare_word=False)) is not None:
                items[index] = (key, places.of(path))
                names.update(dict.fromkeys(_path_forms(value), items[index][1]))
        name = ref.name
        if (path := _local(ref.name, bare_word=True)) is not None:
            name = places.of(path)
            names.update(dict.fromkeys(_path_forms(ref.name), name))
        published = ModelRef(ref.kind, name, tuple(items))
        if published != ref:
            names[spec] = str(published)
    return names


def renamed(value: Any, names: Mapping[str, str]) -> Any:
    """``value`` with every string and key equal to a spec of ``names`` replaced by its published name."""
    if isinstance(value, str):
        return names.get(value, value)
    if isinstance(value, Mapping):
        return {names.get(k, k) if isinstance(k, str) else k: renamed(v, names) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return type(value)(renamed(v, names) for v in value)
    return value
