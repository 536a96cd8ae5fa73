"""Atomic writes: a synced temporary file renamed over the target, its folder synced after; a
replaced file keeps its mode, a symlink is kept. Tests: ``NLIBIAS_FAULT_AT=N`` (or a label such as
``"before finetune.json"``) SIGKILLs at the N-th rename point; ``NLIBIAS_FAULT_LOG=FILE`` lists them.
"""

from __future__ import annotations

import glob
import json
import os
import signal
import stat
import tempfile
import threading
from collections.abc import Iterable, Iterator
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import Any

from nlibias.errors import FileAccessError
from nlibias.io.jsonl import dumps_finite

_fault_points = 0
_umask_lock = threading.Lock()


class _Held(threading.local):
    def __init__(self) -> None:
        self.folders: set[tuple[int, int]] = set()
        """The (device, inode) of each folder this thread holds under :func:`locked_folder`."""


_held = _Held()


def fault_point(label: str) -> None:
    at, log = os.environ.get("NLIBIAS_FAULT_AT"), os.environ.get("NLIBIAS_FAULT_LOG")
    if at is None and log is None:
        return
    global _fault_points
    _fault_points += 1
    if log:
        with open(log, "a", encoding="utf-8") as handle:
            handle.write(f"{_fault_points}\t{label}\n")
    if at is not None and (int(at) == _fault_points if at.isdigit() else at == label):
        os.kill(os.getpid(), signal.SIGKILL)


def current_umask() -> int:
    """The process's umask (from ``/proc/self/status``; elsewhere set and restored under a lock).

    >>> 0 <= current_umask() <= 0o777
    True
    """
    try:
        with open("/proc/self/status", encoding="ascii") as status:
            for line in status:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError, IndexError):
        pass
    with _umask_lock:
        mask = os.umask(0o022)
        os.umask(mask)
    return mask


def file_mode() -> int:
    """The mode ``open()`` gives a new file under the umask (mkstemp's is 0o600).

    >>> file_mode() == 0o666 & ~current_umask()
    True
    """
    return 0o666 & ~current_umask()


def temporary_file(path: Path) -> tuple[int, Path]:
    """A new ``.NAME.PID.RANDOM.part`` next to ``path`` with the umask's mode (those of dead
    writers removed first)."""
    for part in path.parent.glob(f".{glob.escape(path.name)}.*.part"):
        pid = part.name[len(path.name) + 2 :].split(".", 1)[0]
        if pid.isdigit() and int(pid) != os.getpid() and not _alive(int(pid)):
            part.unlink(missing_ok=True)
    fd, name = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.{os.getpid()}.", suffix=".part")
    os.chmod(name, file_mode())
    return fd, Path(name)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's process
        return True
    return True


def write_target(path: str | Path) -> Path:
    """Where a write of ``path`` goes: the file a symlink names (the link is kept), else ``path``.

    >>> import tempfile, pathlib
    >>> d = pathlib.Path(tempfile.mkdtemp())
    >>> (d / "link").symlink_to("card.md")
    >>> write_target(d / "link") == (d / "card.md").resolve()
    True
    >>> write_target("/dev/null")
    Traceback (most recent call last):
    nlibias.errors.FileAccessError: /dev/null: is not a regular file (a device, a pipe or a socket), which writing it would replace (name a file to write, not a special file such as /dev/null)
    """
    path = Path(path)
    target = Path(os.path.realpath(path)) if path.is_symlink() else path
    try:
        kind = target.stat().st_mode
    except OSError:  # a new file (or one the write itself will report)
        return target
    if not (stat.S_ISREG(kind) or stat.S_ISDIR(kind)):  # a rename would replace a device or a pipe
        raise FileAccessError(
            str(path),
            "is not a regular file (a device, a pipe or a socket), which writing it would replace",
            fix="name a file to write, not a special file such as /dev/null",
        )
    return target


def _sync_file(path: Path) -> None:
    # Windows syncs no file opened read-only; a strict umask may forbid opening it for writing
    writable = os.access(path, os.W_OK)
    fd = os.open(path, os.O_RDWR if writable else os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _sync_folder(path: Path) -> None:
    with suppress(OSError):  # a folder some systems cannot open or sync (Windows, network mounts)
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def _replace(tmp: Path, path: Path) -> None:
    """Rename synced ``tmp`` over ``path`` (keeping its mode), then sync the folder."""
    _sync_file(tmp)
    with suppress(FileNotFoundError):  # a new file keeps the umask's mode (temporary_file)
        os.chmod(tmp, stat.S_IMODE(path.stat().st_mode))
    fault_point(f"before {path.name}")
    os.replace(tmp, path)
    fault_point(f"after {path.name}")
    _sync_folder(path.parent)


@contextmanager
def atomic_path(path: str | Path) -> Iterator[Path]:
    """Yield a temporary path next to ``path``; on success it replaces ``path``.

    >>> import tempfile, pathlib
    >>> target = pathlib.Path(tempfile.mkdtemp()) / "out.txt"
    >>> with atomic_path(target) as tmp:
    ...     _ = tmp.write_text("done")
    >>> target.read_text()
    'done'
    """
    with PendingFile(path) as pending:
        pending.handle.close()
        yield pending.temporary_path
        pending.commit()


@contextmanager
def locked_update(path: str | Path) -> Iterator[Path]:
    """Hold an exclusive lock on an existing file (a symlink's target, yielded) while it is read
    and replaced, so two updaters take turns; a read-only file is refused.

    >>> import tempfile, pathlib
    >>> card = pathlib.Path(tempfile.mkdtemp()) / "README.md"
    >>> _ = card.write_text("a")
    >>> with locked_update(card) as target:
    ...     atomic_write_text(target, target.read_text() + "b")
    >>> card.read_text()
    'ab'
    """
    target = write_target(path)
    found = target.stat()
    if not found.st_mode & stat.S_IWUSR:
        via = f" (the file the link {path} names)" if target != Path(path) else ""
        raise FileAccessError(
            target,
            f"is read-only (mode {stat.S_IMODE(found.st_mode):04o}){via}",
            fix="make it writable (chmod u+w) to update it; nothing was changed",
        )
    try:
        import fcntl
    except ImportError:  # no POSIX locks (Windows): one writer at a time is the user's to ensure
        yield target
        return
    while True:
        fd = os.open(target, os.O_RDONLY)
        fcntl.flock(fd, fcntl.LOCK_EX)
        held, now = os.fstat(fd), target.stat()
        if (held.st_dev, held.st_ino) == (now.st_dev, now.st_ino):
            break
        os.close(fd)  # replaced while we waited: lock the new file
    try:
        yield target
    finally:
        os.close(fd)


@contextmanager
def locked_folder(path: str | Path, *, parameter: str = "out_dir") -> Iterator[Path]:
    """Hold an exclusive lock on a folder (made if missing) while a set of files that belong
    together is written into it: two writers at once take turns, and the folder holds one writer's
    files, not a mix. Re-entrant in a thread (a command holding its folder calls a writer that
    locks it too); another thread of the process takes its turn as another process does.

    >>> import tempfile, pathlib
    >>> out = pathlib.Path(tempfile.mkdtemp()) / "samples"
    >>> with locked_folder(out) as folder, locked_folder(out / "."):
    ...     atomic_write_text(folder / "a.txt", "a")
    >>> sorted(p.name for p in out.iterdir())
    ['a.txt']
    """
    folder = Path(path)
    if folder.exists() and not folder.is_dir():
        raise FileAccessError(
            str(folder),
            "is a file, not a folder",
            fix=f"name a folder in {{{parameter}}}",
            parameter=parameter,
            names=(parameter,),
        )
    folder.mkdir(parents=True, exist_ok=True)
    try:
        import fcntl
    except ImportError:  # no POSIX locks (Windows): one writer at a time is the user's to ensure
        yield folder
        return
    found = folder.stat()
    key = (found.st_dev, found.st_ino)
    if key in _held.folders:  # this thread holds it already
        yield folder
        return
    fd = os.open(folder, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)  # each open() its own lock: another thread here waits too
        _held.folders.add(key)
        try:
            yield folder
        finally:
            _held.folders.discard(key)
    finally:
        os.close(fd)


class PendingFile:
    """A file written under a temporary name that replaces ``path`` only on :meth:`commit`;
    leaving the ``with`` block without one deletes it. An :class:`OSError` that names no file (a
    full disk's failed write) is raised again naming ``path``.

    >>> import tempfile, pathlib
    >>> target = pathlib.Path(tempfile.mkdtemp()) / "rows.jsonl"
    >>> with PendingFile(target) as pending:
    ...     _ = pending.handle.write(b"{}\\n")
    ...     before = target.exists()
    ...     pending.commit()
    >>> before, target.read_bytes()
    (False, b'{}\\n')
    """

    def __init__(self, path: str | Path) -> None:
        self.path = write_target(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd, self._tmp = temporary_file(self.path)
        self.handle = os.fdopen(fd, "wb")
        """Binary: write UTF-8 bytes."""
        self.committed = False

    @property
    def temporary_path(self) -> Path:
        return self._tmp

    def commit(self) -> None:
        self.handle.close()
        _replace(self._tmp, self.path)
        self.committed = True

    def __enter__(self) -> PendingFile:
        return self

    def __exit__(self, kind: object, error: BaseException | None, trace: object) -> None:
        if not self.committed:
            with suppress(OSError):  # closing flushes: on a full disk that fails too
                self.handle.close()
            self._tmp.unlink(missing_ok=True)
        if isinstance(error, OSError) and error.filename is None and error.errno is not None:
            # a write() or fsync() that failed (a full disk) names no file: name the one written
            raise OSError(error.errno, error.strerror or str(error), str(self.path)) from error


def atomic_write_text(path: str | Path, text: str) -> None:
    with atomic_path(path) as tmp:
        tmp.write_text(text, encoding="utf-8")


def write_json(path: str | Path, data: Any) -> None:
    """Pretty JSON, atomically; ``NaN`` is refused (JSON has no NaN)."""
    atomic_write_text(path, dumps_finite(data, indent=2, ensure_ascii=False) + "\n")


def json_line(record: Any) -> str:
    """One JSON Lines record as nlibias writes it (``NaN`` refused).

    >>> json_line({"id": "é", "p": 0.5})
    '{"id": "é", "p": 0.5}\\n'
    """
    try:
        return json.dumps(record, ensure_ascii=False, allow_nan=False) + "\n"
    except ValueError:
        return dumps_finite(record, ensure_ascii=False) + "\n"  # refused naming the field


def write_lines(path: str | Path, lines: Iterable[str]) -> None:
    """Text lines (each ending in a newline), atomically."""
    with atomic_path(path) as tmp, tmp.open("w", encoding="utf-8") as handle:
        handle.writelines(lines)


def write_jsonl(path: str | Path, records: Iterable[dict[str, Any]]) -> None:
    write_lines(path, (json_line(record) for record in records))
