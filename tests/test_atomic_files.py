"""Atomic writes: a target is replaced whole or not at all, and no temporary file stays behind."""

from __future__ import annotations

from contextlib import nullcontext
from pathlib import Path

import pytest

from nlibias.io.atomic import PendingFile, atomic_write_text


def _leftovers(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if p.name.endswith(".part"))


def test_a_pending_file_replaces_its_target_only_on_commit(tmp_path: Path) -> None:
    target = tmp_path / "sub" / "rows.jsonl"
    atomic_write_text(target, "old\n")
    with PendingFile(target) as pending:
        pending.handle.write(b"new\n")
        pending.handle.flush()
        assert target.read_text() == "old\n"  # still the old file while the new one is written
        assert len(_leftovers(target.parent)) == 1
        pending.commit()
    assert target.read_text() == "new\n"
    assert pending.committed and _leftovers(target.parent) == []


@pytest.mark.parametrize("ending", ["error", "no commit"])
def test_a_pending_file_not_committed_is_deleted_and_the_target_kept(tmp_path: Path, ending: str) -> None:
    target = tmp_path / "rows.jsonl"
    atomic_write_text(target, "old\n")
    stopping = pytest.raises(RuntimeError) if ending == "error" else nullcontext()
    with stopping, PendingFile(target) as pending:
        pending.handle.write(b"half a file")
        if ending == "error":
            raise RuntimeError("stopped")
    assert target.read_text() == "old\n"
    assert not pending.committed and _leftovers(tmp_path) == []
    assert pending.handle.closed
