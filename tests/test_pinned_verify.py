"""Pinned benchmark data is verified where it is read (issue #34): a file in ``NLIBIAS_DATA_DIR``
or the user cache whose digest differs from the pinned one is refused, naming the file and both
digests; with the explicit opt-out it is used with a warning and its digest recorded; a file is
hashed once per state (path, size, mtime), not on every read."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import warnings
from pathlib import Path

import pytest
from typer.testing import CliRunner

import nlibias
from nlibias.benchmarks import data_locations
from nlibias.benchmarks.bbnli_source import BBNLI_DATA
from nlibias.benchmarks.data_locations import resolve_data
from nlibias.benchmarks.sentence_pairs import CROWS_PAIRS_DATA
from nlibias.cli.main import app
from nlibias.errors import SourceError
from nlibias.schema.applies import InapplicableOption

BBNLI_FILE = "gender/man_is_to_breadwinner.json"
CROWS_FILE = "crows_pairs_anonymized.csv"


@pytest.fixture
def copy(tmp_path: Path, data_dir: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A copy of the shared BBNLI and CrowS-Pairs data as NLIBIAS_DATA_DIR, with its own user cache."""
    target = tmp_path / "data"
    for folder in ("bbnli", "crows-pairs"):
        shutil.copytree(data_dir / folder, target / folder)
    monkeypatch.setenv("NLIBIAS_DATA_DIR", str(target))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.delenv("NLIBIAS_ALLOW_MODIFIED_DATA", raising=False)
    return target


def _alter_bbnli(copy: Path) -> Path:
    path = copy / "bbnli" / BBNLI_FILE
    text = path.read_text(encoding="utf-8")
    assert " the " in text
    path.write_text(text.replace(" the ", " a ", 1), encoding="utf-8")  # one word altered
    return path


def _edit_crows(copy: Path) -> Path:
    path = copy / "crows-pairs" / CROWS_FILE
    lines = path.read_text(encoding="utf-8").split("\n")
    lines[1] = lines[1].replace("He", "She", 1) if "He" in lines[1] else lines[1] + " "  # one row edited
    path.write_text("\n".join(lines), encoding="utf-8")
    return path


def test_the_shared_data_is_the_pinned_data(data_dir: Path) -> None:
    """Every pinned file present in the shared data dir has its pinned digest (else every test
    reading it would now be refused)."""
    checked = 0
    for data in (BBNLI_DATA, CROWS_PAIRS_DATA):
        for rel, (_, digest) in data.files.items():
            checked += 1
            assert hashlib.sha256((data_dir / data.directory / rel).read_bytes()).hexdigest() == digest, rel
    assert checked == 16 + 1  # BBNLI's 16 subtopic files, CrowS-Pairs' CSV


def test_a_bbnli_file_with_one_word_altered_is_refused(copy: Path) -> None:
    assert resolve_data(BBNLI_DATA) == copy / "bbnli"  # the unaltered copy is accepted
    path = _alter_bbnli(copy)
    found = hashlib.sha256(path.read_bytes()).hexdigest()
    with pytest.raises(SourceError) as caught:
        resolve_data(BBNLI_DATA)
    message = str(caught.value)
    assert caught.value.path == str(path)
    assert BBNLI_DATA.files[BBNLI_FILE][1] in message and found in message
    assert (
        "download" in message
        and "allow_modified_data" in message
        and "NLIBIAS_ALLOW_MODIFIED_DATA" in message
    )


def test_a_crows_pairs_row_edited_is_refused_by_expand_and_the_command(copy: Path, tmp_path: Path) -> None:
    path = _edit_crows(copy)
    with pytest.raises(SourceError, match="differs from the pinned"):
        nlibias.expand("crows-pairs", out_dir=tmp_path / "lib")
    result = CliRunner().invoke(app, ["expand", "crows-pairs", "--out", str(tmp_path / "cli")])
    assert result.exit_code not in (0, 70) and str(path) in " ".join(result.output.split())


def test_the_opt_out_uses_the_file_with_a_warning_and_records_its_digest(
    copy: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = _edit_crows(copy)
    found = hashlib.sha256(path.read_bytes()).hexdigest()
    with pytest.warns(UserWarning, match="differs from the pinned"):
        samples = nlibias.expand("crows-pairs", out_dir=tmp_path / "lib", allow_modified_data=True)
    assert samples.summary["modified_data"] == [
        {"file": str(path), "expected": CROWS_PAIRS_DATA.files[CROWS_FILE][1], "found": found}
    ]
    written = json.loads((tmp_path / "lib" / "expansion.json").read_text(encoding="utf-8"))
    assert written["modified_data"][0]["found"] == found
    assert any("differs from the pinned" in w for w in written["warnings"])
    # the environment variable, and the command's flag
    monkeypatch.setenv("NLIBIAS_ALLOW_MODIFIED_DATA", "1")
    with pytest.warns(UserWarning):
        nlibias.expand("crows-pairs", out_dir=tmp_path / "env")
    monkeypatch.delenv("NLIBIAS_ALLOW_MODIFIED_DATA")
    result = CliRunner().invoke(
        app, ["expand", "crows-pairs", "--allow-modified-data", "--out", str(tmp_path / "cli")]
    )
    assert result.exit_code == 0, result.output
    assert "UserWarning" not in result.output  # said as the command's own warning, not Python's
    assert f"warning: {path} differs from the pinned" in " ".join(result.output.split())


def test_an_unchanged_file_is_hashed_once(copy: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[Path] = []
    original = data_locations.file_digest

    def counting(path: Path, pinned: str) -> str:
        calls.append(path)
        return original(path, pinned)

    monkeypatch.setattr(data_locations, "file_digest", counting)
    resolve_data(BBNLI_DATA)
    assert len(calls) == 16  # every pinned file, the first time
    resolve_data(BBNLI_DATA)
    assert len(calls) == 16  # unchanged (path, size, mtime): nothing hashed again
    path = copy / "bbnli" / BBNLI_FILE
    stat = path.stat()
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000_000))  # touched: its state changed
    resolve_data(BBNLI_DATA)
    assert calls[16:] == [path]


def test_a_damaged_verification_cache_is_rebuilt(copy: Path, tmp_path: Path) -> None:
    resolve_data(BBNLI_DATA)
    cache = data_locations.verified_cache_path()
    assert cache.is_file() and str(tmp_path / "cache") in str(cache)
    cache.write_text("{not json", encoding="utf-8")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert resolve_data(BBNLI_DATA) == copy / "bbnli"
    assert json.loads(cache.read_text(encoding="utf-8"))  # rewritten


@pytest.mark.parametrize("named", ["file", "folder", "data dir"])
def test_the_pinned_copy_named_explicitly_is_verified_too(copy: Path, tmp_path: Path, named: str) -> None:
    """``--source $NLIBIAS_DATA_DIR/crows-pairs/crows_pairs_anonymized.csv`` names the pinned copy,
    not the user's own data: an edit is refused as on the default route."""
    path = _edit_crows(copy)
    source = {"file": path, "folder": path.parent, "data dir": copy}[named]
    with pytest.raises(SourceError, match="differs from the pinned crows-pairs data") as caught:
        nlibias.expand("crows-pairs", str(source), out_dir=tmp_path / "lib")
    assert caught.value.path == str(path)
    result = CliRunner().invoke(
        app, ["expand", "crows-pairs", "--source", str(source), "--out", str(tmp_path / "cli")]
    )
    assert result.exit_code == 2 and "differs from the pinned" in result.output


def test_a_copy_outside_the_data_dirs_is_the_users_own_data(copy: Path, tmp_path: Path) -> None:
    mine = tmp_path / "mine" / CROWS_FILE
    mine.parent.mkdir()
    shutil.copy(_edit_crows(copy), mine)
    assert len(nlibias.expand("crows-pairs", str(mine), out_dir=tmp_path / "lib")) == 1508
    # so the opt-out applies to nothing there, nor to a benchmark without pinned data: refused, unwritten
    pairs = tmp_path / "pairs.csv"
    pairs.write_text("more,less\nMen are strong.,Women are strong.\n", encoding="utf-8")
    for name, source in (("crows-pairs", mine), ("sentence-pairs", pairs)):
        with pytest.raises(
            InapplicableOption, match="allow_modified_data True applies to pinned benchmark data"
        ):
            nlibias.expand(name, str(source), out_dir=tmp_path / "opt-out", allow_modified_data=True)
    assert not (tmp_path / "opt-out").exists()


def test_an_edit_that_keeps_the_size_and_the_modification_time_is_seen(copy: Path) -> None:
    resolve_data(CROWS_PAIRS_DATA)  # verified, its state remembered
    path = copy / "crows-pairs" / CROWS_FILE
    before = path.stat()
    data = path.read_bytes()
    at = data.index(b"He ")
    path.write_bytes(data[:at] + b"We " + data[at + 3 :])  # one word, the same size
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))  # the modification time put back
    assert (path.stat().st_size, path.stat().st_mtime_ns) == (before.st_size, before.st_mtime_ns)
    with pytest.raises(SourceError, match="differs from the pinned"):
        resolve_data(CROWS_PAIRS_DATA)
