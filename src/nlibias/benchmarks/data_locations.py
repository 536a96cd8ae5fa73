r"""Where a benchmark's data comes from: explicit path → ``$NLIBIAS_DATA_DIR`` → user cache → pinned
download, each copy checked against its :class:`PinnedData` digests (a changed one refused unless
:func:`allow_modified_data`, then warned and recorded).

>>> git_blob_id(b"hello\n")  # `printf 'hello\n' | git hash-object --stdin`
'ce013625030ba8dba906f756967f9e9ca394464a'
"""

from __future__ import annotations

import hashlib
import json
import os
import secrets
import urllib.request
import warnings
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Any

from platformdirs import user_cache_dir

from nlibias.errors import ConfigError, DataNotFoundError, SourceError
from nlibias.schema.applies import option_applies_to_nothing
from nlibias.textio.env_paths import env_path

ALLOW_ENV = "NLIBIAS_ALLOW_MODIFIED_DATA"
"""The environment variable of the opt-out (``1``/``true``/``yes``: use modified data, warned)."""
_ALLOW: ContextVar[bool | None] = ContextVar("nlibias_allow_modified_data", default=None)
_MODIFIED: ContextVar[list[dict[str, str]] | None] = ContextVar("nlibias_modified_data", default=None)
_CHECKED: ContextVar[list[str] | None] = ContextVar("nlibias_checked_data", default=None)


@dataclass(frozen=True)
class PinnedData:
    """One data set's upstream files, pinned and checked.

    >>> mine = PinnedData("mine", "mine", {"mine.csv": ("https://example.org/mine.csv", "0" * 64)}, main_file="mine.csv")
    >>> mine.layout, mine.paths()
    ('mine/mine.csv', ('mine/mine.csv',))
    """

    name: str
    """What errors call it (``nlibias expand`` source names, ``nlibias doctor`` rows)."""
    directory: str
    """Its folder under a data dir (several data sets may share one)."""
    files: Mapping[str, tuple[str, str]] = field(default_factory=dict)
    """Path relative to ``directory`` → (URL, digest: bare SHA-256 or ``gitblob:<sha1>``)."""
    main_file: str | None = None
    """The file the benchmark reads (single-file data); None: it reads the folder."""
    layout: str = ""
    """How its files lie under a data dir, e.g. ``name/file.csv``; default: the main file's path."""

    def __post_init__(self) -> None:
        if self.main_file is not None and self.files and self.main_file not in self.files:
            raise ValueError(f"{self.name}: main_file {self.main_file!r} is not one of its files")
        object.__setattr__(self, "files", MappingProxyType(dict(self.files)))
        if not self.layout:
            object.__setattr__(self, "layout", f"{self.directory}/{self.main_file or '...'}")

    def __hash__(self) -> int:  # files is a read-only mapping: hash its items
        return hash((self.name, self.directory, tuple(self.files.items()), self.main_file, self.layout))

    def paths(self) -> tuple[str, ...]:
        """Its files' paths relative to a data dir."""
        return tuple(f"{self.directory}/{rel}" for rel in self.files)


def user_data_dir() -> Path:
    """The user cache folder that downloads go to."""
    return Path(user_cache_dir("nlibias")) / "data"


def candidate_data_dirs(explicit: str | Path | None = None) -> list[tuple[str, Path]]:
    """The places searched, in order, each with why."""
    found: list[tuple[str, Path]] = []
    if explicit is not None:
        found.append(("the path you gave", Path(explicit)))
    env = env_path("NLIBIAS_DATA_DIR")
    if env is not None:
        found.append(("NLIBIAS_DATA_DIR", env))
    found.append(("the user cache", user_data_dir()))
    return found


def resolve_data(data: PinnedData, explicit: str | Path | None = None, *, download: bool = True) -> Path:
    """Path of ``data`` (its main file, else its folder): ``explicit`` (the data, another file of
    its benchmark's, or a data dir holding its folder), else the first place holding it, else a
    verified download; the refusal lists where the files may go."""
    allow_modified_data()  # its variable's value is checked whenever data is looked for, not only on a change
    if explicit is not None:
        path = Path(explicit)
        if not path.exists():
            raise DataNotFoundError(f"{path} does not exist")
        inner = path / data.directory
        if inner.exists():
            path = inner
        pinned_folder = _pinned_folder_holding(data, path)
        if pinned_folder is not None:
            verify_data(data, pinned_folder)
        given = _data_path(data, path)
        if not given.exists():  # a folder without the file its benchmark reads
            raise DataNotFoundError(
                f"{explicit} is a folder without {data.main_file}, the {data.name} file (layout: "
                f"{data.layout}): pass the file itself, a folder holding it, or a data dir holding "
                f"{data.directory}/{data.main_file}"
            )
        return given
    found = locate_data(data)
    if found is not None:
        verify_data(data, found[1] if data.main_file is None else found[1].parent)
        return found[1]
    if download:
        try:
            return _data_path(data, download_data(data))
        except (OSError, ValueError) as exc:
            reason = f"download failed ({exc})"
    else:
        reason = "downloads disabled"
    places = "\n".join(f"  - {why}: {p / data.directory}" for why, p in candidate_data_dirs())
    raise DataNotFoundError(
        f"no {data.name} data found and {reason}.\nLooked in:\n{places}\n"
        f"Put the files there (layout: {data.layout}), set NLIBIAS_DATA_DIR to a folder with that "
        f"layout, or pass the path explicitly."
    )


def locate_data(data: PinnedData) -> tuple[str, Path] | None:
    """(why, path) of the first :func:`candidate_data_dirs` holding ``data``, or None; never downloads."""
    for why, base in candidate_data_dirs():
        path = base / data.directory
        if _has_data(data, path):
            return why, _data_path(data, path)
    return None


def _pinned_folder_holding(data: PinnedData, path: Path) -> Path | None:
    """The data's folder in a data dir that ``path`` is or lies in; None: the user's own copy."""
    resolved = path.resolve()
    for _, base in candidate_data_dirs():
        folder = (base / data.directory).resolve()
        if resolved == folder or folder in resolved.parents:
            return folder
    return None


def _has_data(data: PinnedData, path: Path) -> bool:
    """Whether ``path`` holds its main file, else any file of the kinds it pins."""
    if data.main_file is not None:
        return (path / data.main_file).is_file()
    suffixes = {Path(rel).suffix for rel in data.files}
    return path.is_dir() and any(p.suffix in suffixes and p.is_file() for p in path.rglob("*"))


def _data_path(data: PinnedData, path: Path) -> Path:
    if data.main_file is not None and path.is_dir():
        return path / data.main_file
    return path


def git_blob_id(content: bytes) -> str:
    r"""The git blob id of ``content``: SHA-1 of ``"blob <size>\0"`` + content."""
    return hashlib.sha1(b"blob %d\0" % len(content) + content).hexdigest()


def content_digest(content: bytes, pinned: str) -> str:
    """``content``'s digest in the form of ``pinned`` (``gitblob:<sha1>`` or a bare SHA-256)."""
    if pinned.startswith("gitblob:"):
        return "gitblob:" + git_blob_id(content)
    return hashlib.sha256(content).hexdigest()


def download_data(data: PinnedData, target: Path | None = None) -> Path:
    """Download ``data``'s pinned files into ``target`` (default: the user cache), returning its
    folder: each checked, then renamed into place (never a partial file); a good one is kept."""
    folder = (target or user_data_dir()) / data.directory
    _note_checked(data)
    for rel, (url, digest) in data.files.items():
        dest = folder / rel
        if dest.exists() and verified_digests([(dest, digest)]) == [digest]:
            continue
        with urllib.request.urlopen(url, timeout=30) as response:
            payload = response.read()
        actual = content_digest(payload, digest)
        if actual != digest:
            raise ValueError(f"checksum mismatch for {url}: expected {digest}, got {actual}")
        dest.parent.mkdir(parents=True, exist_ok=True)
        tmp = dest.parent / f".part-{os.getpid()}-{secrets.token_hex(6)}"
        with open(tmp, "xb") as handle:  # the umask's mode, not mkstemp's 0o600
            handle.write(payload)
        os.replace(tmp, dest)
        _remember({_state_key(dest, digest): actual})
    return folder


def allow_modified_data() -> bool:
    """Whether modified pinned data is used (warned): :func:`data_checks`' setting, else :data:`ALLOW_ENV`."""
    chosen = _ALLOW.get()
    if chosen is not None:
        return chosen
    value = os.environ.get(ALLOW_ENV, "").strip().lower()
    if value in {"", "0", "false", "no", "off"}:
        return False
    if value in {"1", "true", "yes", "on"}:
        return True
    raise ConfigError(
        f"{{{ALLOW_ENV}}} is {value!r}; set it to 1 (use modified data) or 0", parameter=ALLOW_ENV
    )


@contextmanager
def data_checks(allow_modified_data: bool | None = None) -> Iterator[list[dict[str, str]]]:
    """Within: modified pinned data is used (warned) when ``allow_modified_data`` (None: the
    environment's); the list yielded receives each modified file used, for the run's record.
    ``allow_modified_data=True`` where nothing read was checked against pins (a source of the
    user's own, a benchmark without pinned data) is refused: it applies to nothing."""
    allow_token = _ALLOW.set(allow_modified_data)
    used: list[dict[str, str]] = []
    checked: list[str] = []
    used_token, checked_token = _MODIFIED.set(used), _CHECKED.set(checked)
    try:
        yield used
        if allow_modified_data and not checked:
            raise option_applies_to_nothing(
                "allow_modified_data",
                "pinned benchmark data (found in the data dir, or a copy under a pinned file's name)",
                value=True,
                given="nothing read here is (a file of your own is never checked against the pins)",
            )
    finally:
        _CHECKED.reset(checked_token)
        _MODIFIED.reset(used_token)
        _ALLOW.reset(allow_token)


def modified_data_warnings(modified: list[dict[str, str]]) -> list[str]:
    """The warning of each modified file a run used (:func:`data_checks`)."""
    return [
        f"{m['file']} differs from the pinned data (expected digest {m['expected']}, found {m['found']}); "
        "used as it is (allow_modified_data)"
        for m in modified
    ]


def _note_checked(data: PinnedData) -> None:
    """Record, for :func:`data_checks`, that data checked against ``data``'s pins were read."""
    checked = _CHECKED.get()
    if checked is not None:
        checked.append(data.name)


def verify_data(data: PinnedData, folder: Path) -> None:
    """:func:`verify_files` of the pinned files present under ``folder``."""
    present = [(folder / rel, digest) for rel, (_, digest) in data.files.items() if (folder / rel).is_file()]
    verify_files(
        data,
        present,
        remedy="delete it (or restore it) and nlibias downloads the pinned file again into the user cache",
    )


def verify_files(data: PinnedData, present: list[tuple[Path, str]], *, remedy: str) -> None:
    """Refuse each (path, pinned digest) that differs, or (:func:`allow_modified_data`) warn and
    record it; ``remedy``: the fix offered first."""
    if present:
        _note_checked(data)
    found_digests = verified_digests(present)
    for (path, digest), found in zip(present, found_digests, strict=True):
        if found == digest:
            continue
        if not allow_modified_data():
            raise SourceError(
                path,
                None,
                f"differs from the pinned {data.name} data: expected digest {digest}, found {found}",
                fix=f"{remedy}; to use it as it is, pass allow_modified_data=True (nlibias expand "
                f"--allow-modified-data) or set {ALLOW_ENV}=1",
            )
        warnings.warn(
            f"{path} differs from the pinned {data.name} data: expected {digest}, found {found}; used as it is ({ALLOW_ENV} / allow_modified_data)",
            UserWarning,
            stacklevel=2,
        )
        record = _MODIFIED.get()
        entry = {"file": str(path), "expected": digest, "found": found}
        if record is not None and entry not in record:
            record.append(entry)


def file_digest(path: Path, pinned: str) -> str:
    """``path``'s digest in the form of ``pinned`` (the one place a data file is hashed)."""
    return content_digest(path.read_bytes(), pinned)


def verified_cache_path() -> Path:
    """The cache of each verified data file's digest by its state."""
    return Path(user_cache_dir("nlibias")) / "data-verified.json"


def _state_key(path: Path, pinned: str) -> str:
    stat = path.stat()
    kind = "gitblob" if pinned.startswith("gitblob:") else "sha256"
    # the change time too: ``touch -r`` or ``cp -p`` cannot set it back
    return json.dumps([str(path.resolve()), stat.st_size, stat.st_mtime_ns, stat.st_ctime_ns, kind])


def verified_digests(files: list[tuple[Path, str]]) -> list[str]:
    """The digest of each ``(path, pinned)``, hashed only when the file's state is new (cached)."""
    known = _load_verified()
    fresh: dict[str, str] = {}
    found: list[str] = []
    for path, pinned in files:
        key = _state_key(path, pinned)
        digest = known.get(key)
        if not isinstance(digest, str):
            digest = fresh[key] = file_digest(path, pinned)
        found.append(digest)
    if fresh:
        _remember(fresh)
    return found


def _load_verified() -> dict[str, Any]:
    try:
        loaded = json.loads(verified_cache_path().read_text(encoding="utf-8"))
    except (OSError, ValueError):  # none yet, or damaged: hash again and rewrite it
        return {}
    return loaded if isinstance(loaded, dict) else {}


def _still_there(key: str) -> bool:
    try:
        return os.path.exists(json.loads(key)[0])
    except (ValueError, IndexError, TypeError):
        return False


def _remember(entries: Mapping[str, str]) -> None:
    """Add digests to the cache, atomically (one that cannot be written costs only hashing)."""
    path = verified_cache_path()
    merged = {key: digest for key, digest in _load_verified().items() if _still_there(key)}
    merged.update(entries)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.parent / f".data-verified-{os.getpid()}-{secrets.token_hex(6)}"  # the umask's mode
        try:
            with open(tmp, "x", encoding="utf-8") as handle:
                json.dump(merged, handle)
            os.replace(tmp, path)
        except BaseException:
            tmp.unlink(missing_ok=True)
            raise
    except OSError:
        return
