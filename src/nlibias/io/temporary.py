"""Temporary folders that name themselves when the disk under them is full.

A full ``TMPDIR`` ends in a :class:`~nlibias.errors.FileAccessError` naming the folder and how to
move it, not in a bare ``[Errno 28]``.

>>> import errno
>>> with temporary_folder("nlibias-doc-") as folder:  # doctest: +ELLIPSIS
...     raise OSError(errno.ENOSPC, "No space left on device")
Traceback (most recent call last):
nlibias.errors.FileAccessError: ...nlibias-doc-...: no space left on the device in the temporary folder (set TMPDIR to a folder on a device with free space)
"""

from __future__ import annotations

import errno
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from nlibias.errors import FileAccessError

DISK_FULL = {errno.ENOSPC: "no space left on the device", errno.EDQUOT: "disk quota exceeded"}
"""What an OSError says when the device under a folder is full (every folder that names itself on
it: temporary folders here, checkpoints in :mod:`nlibias.debias.finetune_record`)."""
_FIX = "set TMPDIR to a folder on a device with free space"


def make_temporary_folder(prefix: str) -> Path:
    """A new folder under ``TMPDIR`` (the caller removes it); a full or unwritable ``TMPDIR``
    is a FileAccessError naming it."""
    try:
        return Path(tempfile.mkdtemp(prefix=prefix))
    except OSError as error:
        reason = DISK_FULL.get(error.errno or 0, error.strerror or str(error))
        raise FileAccessError(
            tempfile.gettempdir(), f"cannot make a temporary folder: {reason}", fix=_FIX
        ) from error


@contextmanager
def temporary_folder(prefix: str) -> Iterator[Path]:
    """A temporary folder removed on exit; a write inside it that finds the disk full ends in a
    FileAccessError naming the folder (or the file, when the error names one)."""
    folder = make_temporary_folder(prefix)
    try:
        yield folder
    except OSError as error:
        if error.errno not in DISK_FULL:
            raise
        where = error.filename if error.filename is not None else folder
        raise FileAccessError(where, f"{DISK_FULL[error.errno]} in the temporary folder", fix=_FIX) from error
    finally:
        shutil.rmtree(folder, ignore_errors=True)
