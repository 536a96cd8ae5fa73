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


# --- what a replaced file keeps (mode, symlink), what a new file gets, and the data on disk first ---


def test_a_replaced_file_keeps_its_mode_and_a_new_file_gets_the_umask_s(tmp_path: Path) -> None:
    import os
    import stat

    kept = tmp_path / "kept.json"
    kept.write_text("{}")
    kept.chmod(0o600)  # a private file stays private (mkstemp's 0600 was set to the umask's 0644)
    atomic_write_text(kept, "[]")
    assert stat.S_IMODE(kept.stat().st_mode) == 0o600 and kept.read_text() == "[]"
    old = os.umask(0o027)
    try:
        atomic_write_text(tmp_path / "new.json", "[]")
    finally:
        os.umask(old)
    assert stat.S_IMODE((tmp_path / "new.json").stat().st_mode) == 0o640  # 0666 & ~0027


def test_a_symlink_is_kept_and_the_file_it_names_written(tmp_path: Path) -> None:
    (tmp_path / "real.txt").write_text("old")
    (tmp_path / "link.txt").symlink_to("real.txt")
    atomic_write_text(tmp_path / "link.txt", "new")
    with PendingFile(tmp_path / "link.txt") as pending:
        pending.handle.write(b"newer")
        pending.commit()
    assert (tmp_path / "link.txt").is_symlink() and (tmp_path / "real.txt").read_text() == "newer"


def test_the_new_file_is_synced_before_the_rename_and_its_folder_after(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A power cut after the rename must not leave an empty file: the data reach the disk first."""
    import os

    from nlibias.io import atomic

    events: list[str] = []
    real_fsync, real_replace = os.fsync, os.replace
    monkeypatch.setattr(atomic.os, "fsync", lambda fd: events.append("fsync") or real_fsync(fd))
    monkeypatch.setattr(atomic.os, "replace", lambda a, b: events.append("replace") or real_replace(a, b))
    atomic_write_text(tmp_path / "a.txt", "x")
    assert events == ["fsync", "replace", "fsync"]
