"""A run directory changes as a unit: ``manifest.json`` lists each output file's size and SHA-256
(and the samples read); a write goes :func:`begin_write`, the files, then :func:`finish_write`, and
readers refuse a directory whose files do not match it.

>>> import tempfile, pathlib
>>> d = pathlib.Path(tempfile.mkdtemp())
>>> begin_write(d)
>>> _ = (d / "a.txt").write_text("new")
>>> finish_write(d, ["a.txt"])
>>> _ = (d / "a.txt").write_text("changed")
>>> check_run_directory(d)  # doctest: +ELLIPSIS
Traceback (most recent call last):
nlibias.errors.SourceError: ...: run directory ... is incomplete or mixed: file a.txt does not match manifest.json (rerun the command that wrote it)
"""

from __future__ import annotations

import functools
import warnings
from collections.abc import Iterable, Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import Annotated, Any, NotRequired, cast

from pydantic import TypeAdapter, with_config
from typing_extensions import TypedDict

from nlibias.errors import SourceError
from nlibias.io.atomic import write_json
from nlibias.io.fingerprint import sha256_file
from nlibias.io.json_schema import JSON_CONFIG, Integer, Range, document_issues, json_schema
from nlibias.io.samples import resolve_samples_path
from nlibias.textio.json_text import parse_json

MANIFEST_JSON = "manifest.json"
MANIFEST_VERSION = 1
_RERUN = "rerun the command that wrote it"


def run_directory(path: str | Path) -> Path:
    """The run directory a run given as its folder or as a file in it (its ``metrics.json``) names:
    the one reading of a run's path, so that one run is one run however it is given.

    >>> import tempfile, pathlib
    >>> d = pathlib.Path(tempfile.mkdtemp())
    >>> _ = (d / "metrics.json").write_text("{}")
    >>> run_directory(d / "metrics.json") == run_directory(d) == d
    True
    """
    path = Path(path)
    return path.parent if path.is_file() else path


def no_run_at(given: str | Path, lacking: str, *, fix: str) -> SourceError:
    """The refusal of a run given where there is none: the directory, ``lacking`` (what a run there
    would hold); a file given as the run named itself, since a run is given as its directory or
    its ``metrics.json`` and the folder holding that file is no run either.

    >>> import tempfile, pathlib
    >>> d = pathlib.Path(tempfile.mkdtemp())
    >>> str(no_run_at(d, "no metrics.json", fix="pass a run")) == f"{d}: no metrics.json here (pass a run)"
    True
    >>> _ = (d / "gate.xml").write_text("<testsuites/>")
    >>> print(str(no_run_at(d / "gate.xml", "no metrics.json", fix="pass a run")).replace(str(d), "D"))
    D/gate.xml: a file where a run belongs (a run is given as its directory or its metrics.json), and D has no metrics.json (pass a run)
    """
    path = Path(given)
    if path.is_file():
        reason = (
            f"a file where a run belongs (a run is given as its directory or its metrics.json), and "
            f"{path.parent} has {lacking}"
        )
        return SourceError(path, None, reason, fix=fix)
    return SourceError(path, None, f"{lacking} here", fix=fix)


Size = Annotated[Integer, Range(0, None)]


@with_config(JSON_CONFIG)
class ManifestEntry(TypedDict):
    """One output file as it was written."""

    bytes: Size
    sha256: str


@with_config(JSON_CONFIG)
class InputEntry(TypedDict):
    """A file the run read (e.g. its samples), as it was when the run was written."""

    path: str
    bytes: Size
    sha256: str


@with_config(JSON_CONFIG)
class RunManifest(TypedDict):
    """``manifest.json``: the run's output files; ``complete`` false while they are being replaced."""

    manifest_version: Integer
    complete: bool
    written: str
    files: dict[str, ManifestEntry]
    inputs: NotRequired[dict[str, InputEntry]]
    """Absent in runs written before inputs were recorded."""


class LegacyRunWarning(UserWarning):
    """A run directory written before manifests, read without checking its files."""


_warned: set[Path] = set()


@functools.cache
def _adapter() -> TypeAdapter[RunManifest]:
    return TypeAdapter(RunManifest)


def manifest_schema() -> dict[str, Any]:
    """The JSON Schema of ``manifest.json`` (``nlibias schema manifest``).

    >>> manifest_schema()["required"]
    ['manifest_version', 'complete', 'written', 'files']
    """
    return json_schema(_adapter(), title=f"nlibias run manifest.json (version {MANIFEST_VERSION})")


def file_entry(path: Path) -> ManifestEntry:
    return {"bytes": path.stat().st_size, "sha256": sha256_file(path)}


def begin_write(directory: str | Path) -> None:
    """Before a run's first output is replaced: mark the manifest incomplete. (Each file's write
    removes the ``.part`` files killed writes of it left, not those of a live one:
    :func:`~nlibias.io.atomic.temporary_file`.)"""
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    write_json(directory / MANIFEST_JSON, _manifest({}, complete=False))


def finish_write(
    directory: str | Path,
    names: Iterable[str],
    *,
    inputs: Mapping[str, str | Path | None] | None = None,
    input_sha256: Mapping[str, str | None] | None = None,
) -> None:
    """After every output file is in place: the complete manifest. ``inputs``: files the run read,
    by role (``{"samples": path}``); ``input_sha256``: an input's checksum as the run read it."""
    directory = Path(directory)
    files = {name: file_entry(directory / name) for name in names if (directory / name).is_file()}
    manifest = _manifest(files, complete=True)
    recorded = {role: _input_entry(path) for role, path in (inputs or {}).items() if path}
    for role, sha256 in (input_sha256 or {}).items():
        entry = recorded.get(role)
        if entry is not None and sha256:
            entry["sha256"] = sha256
    if any(recorded.values()):
        manifest["inputs"] = {role: entry for role, entry in recorded.items() if entry is not None}
    write_json(directory / MANIFEST_JSON, manifest)


def _input_entry(path: str | Path) -> InputEntry | None:
    try:
        found = resolve_samples_path(path)
    except SourceError:
        return None
    return {"path": str(found.resolve()), **file_entry(found)} if found.is_file() else None


def changed_inputs(directory: str | Path) -> list[str]:
    """Each recorded input no longer as the run read it, in words (a file gone is no change).

    >>> import tempfile, pathlib
    >>> d = pathlib.Path(tempfile.mkdtemp())
    >>> _ = (d / "samples.jsonl").write_text("old")
    >>> finish_write(d / "run", [], inputs={"samples": d})
    >>> changed_inputs(d / "run")
    []
    >>> _ = (d / "samples.jsonl").write_text("new")
    >>> changed_inputs(d / "run")  # doctest: +ELLIPSIS
    ['samples file .../samples.jsonl changed after the run (SHA-256 ... when audited, now ...)']
    """
    manifest = read_manifest(directory)
    found: list[str] = []
    for role, entry in (manifest.get("inputs", {}) if manifest else {}).items():
        path = Path(entry["path"])
        now = file_entry(path)["sha256"] if path.is_file() else entry["sha256"]
        if now != entry["sha256"]:
            found.append(
                f"{role} file {path} changed after the run (SHA-256 {entry['sha256'][:12]} when "
                f"audited, now {now[:12]})"
            )
    return found


def _manifest(files: dict[str, ManifestEntry], *, complete: bool) -> RunManifest:
    return {
        "manifest_version": MANIFEST_VERSION,
        "complete": complete,
        "written": datetime.now(UTC).isoformat(timespec="seconds"),
        "files": files,
    }


def read_manifest(directory: str | Path) -> RunManifest | None:
    """The directory's manifest, or None when it has none."""
    path = Path(directory) / MANIFEST_JSON
    if not path.is_file():
        return None
    try:
        data: Any = parse_json(path, path.read_bytes())
    except SourceError as error:
        raise SourceError(
            path, error.field, f"the run's manifest is damaged ({error.reason})", line=error.line, fix=_RERUN
        ) from None
    issues = document_issues(_adapter(), data)
    if issues:
        field, reason = issues[0]
        raise SourceError(path, field, f"the run's manifest is damaged ({reason})", fix=_RERUN)
    return cast(RunManifest, data)


def _mismatch(directory: Path, name: str) -> SourceError:
    return SourceError(
        directory / MANIFEST_JSON,
        None,
        f"run directory {directory} is incomplete or mixed: file {name} does not match {MANIFEST_JSON}",
        fix=_RERUN,
    )


def _check_entry(directory: Path, name: str, entry: ManifestEntry) -> None:
    path = directory / name
    if not path.is_file() or path.stat().st_size != entry["bytes"] or file_entry(path) != entry:
        raise _mismatch(directory, name)


def _complete_manifest(directory: Path) -> RunManifest | None:
    manifest = read_manifest(directory)
    if manifest is not None and not manifest["complete"]:
        raise SourceError(
            directory / MANIFEST_JSON,
            None,
            f"run directory {directory} is incomplete: a write of its files was interrupted",
            fix=_RERUN,
        )
    return manifest


def check_run_directory(directory: str | Path, names: Iterable[str] = ()) -> RunManifest | None:
    """Refuse a run directory whose files (those its manifest lists, and ``names``) are not those
    of one complete write; one without a manifest passes with a :class:`LegacyRunWarning` (None)."""
    directory = Path(directory)
    manifest = _complete_manifest(directory)
    if manifest is None:
        warn_legacy(directory)
        return None
    files = manifest["files"]
    for name in dict.fromkeys([*names, *files]):
        if name in files:
            _check_entry(directory, name, files[name])
        elif (directory / name).exists():
            raise _mismatch(directory, name)
    return manifest


def check_run_file(path: str | Path) -> None:
    """Refuse a file of a run directory that does not match its manifest."""
    path = Path(path)
    if not path.is_file() or not (path.parent / MANIFEST_JSON).is_file():
        return
    manifest = _complete_manifest(path.parent)
    if manifest is not None and path.name in manifest["files"]:
        _check_entry(path.parent, path.name, manifest["files"][path.name])


def warn_legacy(directory: Path) -> None:
    key = directory.resolve()
    if key in _warned:
        return
    _warned.add(key)
    warnings.warn(
        f"{directory}: no {MANIFEST_JSON} (written by an nlibias before run manifests): its files are "
        "read without checking that they come from one run; rerun the command to add one",
        LegacyRunWarning,
        stacklevel=3,
    )
