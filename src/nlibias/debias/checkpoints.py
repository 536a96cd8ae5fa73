"""The Trainer's checkpoints, as a resume may trust them: :func:`usable_checkpoint` removes every
incomplete ``checkpoint-*`` folder (a kill mid-save leaves one) and returns the newest complete one.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from nlibias.errors import FileAccessError
from nlibias.io.temporary import DISK_FULL

PREFIX = "checkpoint-"
_DISCARDED = ".removing-"
_WEIGHTS = ("model.safetensors", "pytorch_model.bin")
_STATES = ("optimizer.pt", "scheduler.pt")


def step_of(folder: Path) -> int | None:
    """The step in a ``checkpoint-N`` folder name (None for another name).

    >>> step_of(Path("checkpoint-10")), step_of(Path("checkpoint-x")), step_of(Path("data"))
    (10, None, None)
    """
    number = folder.name[len(PREFIX) :] if folder.name.startswith(PREFIX) else ""
    return int(number) if number.isdigit() else None


def _weights_read(path: Path) -> bool:
    if path.suffix != ".safetensors":
        return path.stat().st_size > 0
    try:
        with path.open("rb") as handle:
            header_size = int.from_bytes(handle.read(8), "little")
            header = json.loads(handle.read(header_size)) if 0 < header_size < (1 << 27) else None
    except (OSError, ValueError):
        return False
    if not isinstance(header, dict):
        return False
    ends = [int(t["data_offsets"][1]) for k, t in header.items() if k != "__metadata__"]
    return path.stat().st_size >= 8 + header_size + max(ends, default=0)


def _trainer_state(folder: Path) -> dict[str, Any]:
    """The folder's ``trainer_state.json``, or {} when it is missing or unreadable."""
    try:
        state = json.loads((folder / "trainer_state.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return state if isinstance(state, dict) else {}


def is_complete(folder: Path) -> bool:
    """Whether ``folder`` holds a whole checkpoint: its ``trainer_state.json`` names its step, its
    weights read, its optimizer and scheduler states are not empty."""
    state = _trainer_state(folder)
    if not state or state.get("global_step") != step_of(folder):
        return False
    weights = [folder / name for name in _WEIGHTS if (folder / name).is_file()]
    if not weights or not all(_weights_read(w) for w in weights):
        return False
    return all((folder / name).is_file() and (folder / name).stat().st_size > 0 for name in _STATES)


def usable_checkpoint(checkpoints: Path) -> tuple[Path | None, list[str]]:
    """``(newest complete checkpoint or None, names of the incomplete ones removed)``."""
    if not checkpoints.is_dir():
        return None, []
    for leftover in checkpoints.glob(f"{_DISCARDED}*"):  # a kill during an earlier removal
        shutil.rmtree(leftover, ignore_errors=True)
    found = sorted(
        (p for p in checkpoints.iterdir() if p.is_dir() and step_of(p) is not None),
        key=lambda p: step_of(p) or 0,
    )
    removed = []
    for folder in [p for p in found if not is_complete(p)]:
        remove_folder(folder)
        removed.append(folder.name)
    complete = [p for p in found if p.name not in removed]
    return (complete[-1] if complete else None), removed


def remove_folder(folder: Path) -> None:
    """Delete ``folder`` as a unit: renamed first (atomic), so a kill mid-way leaves no half of it
    where a reader would look."""
    if folder.exists():
        doomed = folder.with_name(f"{_DISCARDED}{folder.name}-{os.getpid()}")
        folder.rename(doomed)
        shutil.rmtree(doomed, ignore_errors=True)


def final_step(checkpoint: str | Path | None) -> int | None:
    """The step of a checkpoint saved at the end of training (``max_steps`` reached: it is the
    finished model), else None."""
    state = {} if checkpoint is None else _trainer_state(Path(checkpoint))
    step, last = state.get("global_step"), state.get("max_steps")
    if isinstance(step, int) and isinstance(last, int) and 0 < last <= step:
        return step
    return None


# what torch's RuntimeError and safetensors' SafetensorError (no OSError) say when a write fails
_WRITE_FAILED = (
    "file write failed",
    "PytorchStreamWriter failed",
    "unexpected pos",  # torch's zip writer when a write came up short: "unexpected pos 64 vs 0"
    "No space left",
    "StorageFull",
    "os error 28",
)


@contextlib.contextmanager
def disk_full_named(folder: Path) -> Iterator[None]:
    """A full device while writing into ``folder`` is a :class:`~nlibias.errors.FileAccessError`
    naming it, not torch's internal error.

    >>> import errno, pathlib
    >>> with disk_full_named(pathlib.Path("/runs/m")):  # doctest: +ELLIPSIS
    ...     raise OSError(errno.ENOSPC, "No space left on device")
    Traceback (most recent call last):
    nlibias.errors.FileAccessError: /runs/m: no space left on the device ...
    """
    try:
        yield
    except Exception as error:  # an OSError; torch's RuntimeError, safetensors' SafetensorError
        if isinstance(error, OSError):
            if error.errno not in DISK_FULL:
                raise
            where = error.filename if error.filename is not None else folder
            reason = f"{DISK_FULL[error.errno]} while writing into {folder}"
        elif any(text in str(error) for text in _WRITE_FAILED):
            where = folder
            reason = f"no space left on the device: a file write failed ({str(error).strip()[:200]})"
        else:
            raise
        raise FileAccessError(
            where,
            reason,
            fix="free some space on that device or choose another {out_dir}, then rerun: training resumes",
            parameter="out_dir",
        ) from error
