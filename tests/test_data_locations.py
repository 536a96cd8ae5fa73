"""Data resolution order: explicit path → NLIBIAS_DATA_DIR → user cache → pinned download; each
benchmark declares its own pinned files, the mechanism names none."""

from __future__ import annotations

import hashlib
import inspect
import io
import re
from pathlib import Path

import pytest

from nlibias.benchmarks import data_locations
from nlibias.benchmarks.bbnli_source import BBNLI_DATA
from nlibias.benchmarks.bbq import BBQ_DATA
from nlibias.benchmarks.data_locations import PinnedData, download_data, resolve_data
from nlibias.benchmarks.occupation_eval_sets import EVAL_SET_DATA
from nlibias.benchmarks.sentence_pairs import CROWS_PAIRS_DATA, WINOQUEER_DATA
from nlibias.benchmarks.wq_nli import WQ_NLI_DATA
from nlibias.catalog.registry import BUILTIN, get_benchmark
from nlibias.errors import DataNotFoundError


def test_explicit_path_wins(tmp_path: Path, data_dir: Path) -> None:
    assert resolve_data(BBNLI_DATA, data_dir) == data_dir / "bbnli"
    assert resolve_data(BBNLI_DATA, data_dir / "bbnli") == data_dir / "bbnli"
    assert resolve_data(WQ_NLI_DATA, data_dir) == data_dir / "wq-nli" / "winoqueer_nli.csv"
    assert resolve_data(WQ_NLI_DATA, data_dir / "wq-nli") == data_dir / "wq-nli" / "winoqueer_nli.csv"
    csv = data_dir / "wq-nli" / "winoqueer_nli.csv"
    assert resolve_data(WQ_NLI_DATA, csv) == csv
    with pytest.raises(DataNotFoundError, match="does not exist"):
        resolve_data(WQ_NLI_DATA, tmp_path / "nowhere")


@pytest.mark.parametrize("data", [WQ_NLI_DATA, CROWS_PAIRS_DATA, WINOQUEER_DATA], ids=lambda d: d.name)
def test_a_folder_without_the_file_is_refused_naming_the_file(tmp_path: Path, data: PinnedData) -> None:
    # not a bare FileNotFoundError from the reader later: the folder and the file looked for
    with pytest.raises(DataNotFoundError, match=rf"{tmp_path} is a folder without {data.main_file}"):
        resolve_data(data, tmp_path)


def test_environment_variable(monkeypatch: pytest.MonkeyPatch, data_dir: Path) -> None:
    monkeypatch.setenv("NLIBIAS_DATA_DIR", str(data_dir))
    assert resolve_data(BBNLI_DATA) == data_dir / "bbnli"


def test_offline_and_missing_says_where_to_put_files(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("NLIBIAS_DATA_DIR", str(tmp_path / "empty"))
    monkeypatch.setattr(data_locations, "user_data_dir", lambda: tmp_path / "cache")

    def offline(*args, **kwargs):
        raise OSError("network is unreachable")

    monkeypatch.setattr(data_locations.urllib.request, "urlopen", offline)
    with pytest.raises(DataNotFoundError) as error:
        resolve_data(BBNLI_DATA)
    message = str(error.value)
    assert "network is unreachable" in message
    assert str(tmp_path / "empty" / "bbnli") in message and "NLIBIAS_DATA_DIR" in message
    assert "bbnli/<domain>/<subtopic>.json" in message and "wq-nli" not in message  # its own layout only
    with pytest.raises(DataNotFoundError, match="downloads disabled") as error:
        resolve_data(WQ_NLI_DATA, download=False)
    assert "layout: wq-nli/winoqueer_nli.csv" in str(error.value)


def test_download_checks_checksums(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, data_dir: Path) -> None:
    # Serve the shared copy as if it were the network; one file is corrupted on the way.
    local = {
        url: data_dir / data.directory / rel
        for data in (BBNLI_DATA, WQ_NLI_DATA)
        for rel, (url, _) in data.files.items()
    }

    def fake_urlopen(url: str, timeout: float = 0):
        return io.BytesIO(local[url].read_bytes())

    monkeypatch.setattr(data_locations.urllib.request, "urlopen", fake_urlopen)
    target = download_data(BBNLI_DATA, tmp_path / "dl")
    assert target == tmp_path / "dl" / "bbnli"
    files = sorted(target.rglob("*.json"))
    assert len(files) == 16
    first = files[0]
    assert (
        hashlib.sha256(first.read_bytes()).hexdigest()
        == BBNLI_DATA.files[f"{first.parent.name}/{first.name}"][1]
    )
    assert not any(p.name.startswith(".part-") for p in target.rglob("*"))  # renamed into place
    assert sorted(p.name for p in (tmp_path / "dl").iterdir()) == ["bbnli"]  # only this data's files

    monkeypatch.setattr(
        data_locations.urllib.request, "urlopen", lambda url, timeout=0: io.BytesIO(b"tampered")
    )
    with pytest.raises(ValueError, match="checksum mismatch"):
        download_data(WQ_NLI_DATA, tmp_path / "dl2")
    assert not (tmp_path / "dl2" / "wq-nli" / "winoqueer_nli.csv").exists()
    assert not (tmp_path / "dl2" / "wq-nli").exists()  # no folder before a file is good


def test_empty_folder_from_a_failed_download_is_not_data(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    (tmp_path / "cache" / "bbnli" / "gender").mkdir(parents=True)
    monkeypatch.delenv("NLIBIAS_DATA_DIR", raising=False)
    monkeypatch.setattr(data_locations, "user_data_dir", lambda: tmp_path / "cache")
    monkeypatch.setattr(
        data_locations.urllib.request,
        "urlopen",
        lambda url, timeout=0: (_ for _ in ()).throw(OSError("offline")),
    )
    with pytest.raises(DataNotFoundError, match="download failed"):
        resolve_data(BBNLI_DATA)


def test_each_benchmark_carries_the_data_its_module_declares() -> None:
    declared = {
        "bbnli": (BBNLI_DATA,),
        "wq-nli": (WQ_NLI_DATA,),
        "occupations": tuple(EVAL_SET_DATA.values()),
        "crows-pairs": (CROWS_PAIRS_DATA,),
        "winoqueer": (WINOQUEER_DATA,),
        "bbnli-tp": (BBNLI_DATA,),
        "sentence-pairs": (),
        "bbq": (BBQ_DATA,),
    }
    for name, expected in declared.items():
        pinned = get_benchmark(name).pinned_data
        assert [id(p) for p in pinned] == [id(e) for e in expected], name  # the very objects declared
    paths = {path for data in {d for b in BUILTIN for d in b.pinned_data} for path in data.paths()}
    single = {
        "wq-nli/winoqueer_nli.csv",
        "crows-pairs/crows_pairs_anonymized.csv",
        "winoqueer/winoqueer_final.csv",
        "occupations-eval/SNLI_Evaluation_Set.xlsx",
        "occupations-eval/MNLI_Evaluation_Set.xlsx",
        "occupations-eval/OOD_Evaluation_Set.xlsx",
    }
    assert len(BBNLI_DATA.files) == 16 and paths == single | set(BBNLI_DATA.paths()) | set(BBQ_DATA.paths())
    assert len(BBQ_DATA.files) == 12  # BBQ's 11 category files and its proper-name vocabulary
    assert {d.name for d in EVAL_SET_DATA.values()} == {"snli-eval", "mnli-eval", "ood-eval"}
    assert {d.directory for d in EVAL_SET_DATA.values()} == {"occupations-eval"}


def test_the_mechanism_names_no_benchmark_and_no_url() -> None:
    source = inspect.getsource(data_locations)
    pinned = {d for b in BUILTIN for d in b.pinned_data}
    names = {b.name for b in BUILTIN} | {d.name for d in pinned} | {d.directory for d in pinned}
    for name in names:
        assert not re.search(rf"(?<![\w-]){re.escape(name)}(?![\w-])", source, re.I), name
    urls = {url for d in pinned for url, _ in d.files.values()}
    assert not any(url in source for url in urls)
    assert "raw.githubusercontent" not in source and "github.com" not in source
    example = "ce013625030ba8dba906f756967f9e9ca394464a"  # git_blob_id's doctest
    assert not re.search(r"\b[0-9a-f]{40,64}\b", source.replace(example, ""))  # no pinned digest


def test_pinned_data_is_read_only_and_checked() -> None:
    with pytest.raises(TypeError):
        WQ_NLI_DATA.files["x"] = ("u", "d")  # type: ignore[index]
    with pytest.raises(ValueError, match="main_file"):
        PinnedData("toy", "toy", {"a.csv": ("https://example.org/a.csv", "0" * 64)}, main_file="b.csv")
