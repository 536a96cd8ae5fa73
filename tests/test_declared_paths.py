"""The declared path types of what a command writes (src/nlibias/schema/paths.py): a file output
spelt as a folder (``DIR/name/``) and a cache path that is a yes/no word are refused on every
route, naming the option or parameter, before anything is written; folder outputs keep taking a
trailing separator."""

from __future__ import annotations

from pathlib import Path

import pytest

import nlibias
from bad_input_corpus import Base, build_base, invoke
from nlibias.errors import ConfigError, NlibiasError
from nlibias.extension.config import load_config
from nlibias.jobs.extend import extend_config
from nlibias.jobs.model_index import export_model_index
from nlibias.runtime.options import RunOptions


@pytest.fixture(scope="module")
def base(tmp_path_factory: pytest.TempPathFactory, data_dir: Path) -> Base:
    return build_base(tmp_path_factory.mktemp("paths-base"), data_dir)


def test_a_file_output_spelt_as_a_folder_is_refused_on_the_command_line(base: Base, tmp_path: Path) -> None:
    for args, flag in [
        (["report", str(base.run), "--format", "md", "--out", f"{tmp_path}/tables/"], "--out"),
        (["export", "model-index", str(base.run), "--out", f"{tmp_path}/tables/"], "--out"),
        # the gate writes its CI files even for a refused command line: not at the folder's name
        (["gate", str(base.run), "--baseline", str(base.run), "--junit", f"{tmp_path}/tables/"], "--junit"),
        (["gate", str(base.run), "--markdown", f"{tmp_path}/tables/."], "--markdown"),
    ]:
        code, text, error = invoke(args)
        assert code == 2 and error is None, text
        assert f"'{flag}'" in text and "names a folder" in " ".join(text.split()), text
        assert not (tmp_path / "tables").exists(), args


def test_a_file_output_spelt_as_a_folder_is_refused_in_python(base: Base, tmp_path: Path) -> None:
    for call, parameter in [
        (lambda: nlibias.make_report(base.run, f"{tmp_path}/tables/", fmt="md"), "out"),
        (lambda: export_model_index(base.run, out=f"{tmp_path}/tables/"), "out"),
        (lambda: nlibias.make_report(base.run, tmp_path, fmt="md"), "out"),  # a folder that is there
    ]:
        with pytest.raises(ConfigError) as caught:
            call()
        assert caught.value.parameter == parameter, str(caught.value)
    assert not (tmp_path / "tables").exists()


def test_a_folder_output_keeps_its_trailing_separator(base: Base, tmp_path: Path) -> None:
    code, text, error = invoke(
        ["audit", "--samples", str(base.samples), "--model", "fake:m", "--out", f"{tmp_path}/run/",
         "--bootstrap", "0", "--no-cache", "--quiet"]
    )  # fmt: skip
    assert code == 0 and error is None, text
    assert (tmp_path / "run" / "metrics.json").is_file()


@pytest.mark.parametrize("word", ["yes", "True", "off", " no "])
def test_a_cache_path_that_is_a_yes_or_no_word_is_refused_on_every_route(
    base: Base, tmp_path: Path, word: str
) -> None:
    refused: list[tuple[str, object]] = []
    for call in (
        lambda: nlibias.audit(base.samples, ["fake:m"], cache=word, bootstrap=0, progress=False),
        lambda: RunOptions(cache=word),
        lambda: extend_config(cache=word),
        lambda: load_config(_yaml(tmp_path, f"cache: '{word}'\n")),
    ):
        with pytest.raises(NlibiasError) as caught:
            call()
        refused.append((str(caught.value), getattr(caught.value, "parameter", None)))
    code, text, _ = invoke(["audit", "--samples", str(base.samples), "--model", "fake:m", "--cache", word,
                            "--out", str(tmp_path / "o"), "--bootstrap", "0", "--quiet"])  # fmt: skip
    assert code == 2 and "'--cache'" in text and "is a yes or no" in " ".join(text.split()), text
    assert all("is a yes or no" in message for message, _ in refused), refused
    assert [parameter for _, parameter in refused[:3]] == ["cache"] * 3
    assert "cache" in refused[3][0] and not (tmp_path / word).exists() and not (tmp_path / "o").exists()


def test_a_cache_file_of_a_yes_or_no_name_is_written_as_a_path(tmp_path: Path) -> None:
    assert RunOptions(cache=f"{tmp_path}/yes").cache == f"{tmp_path}/yes"
    assert RunOptions(cache=Path("yes")).cache == Path("yes")  # a Path is a path, whatever its name


def _yaml(folder: Path, text: str) -> Path:
    path = folder / "extend.yaml"
    path.write_text(text, encoding="utf-8")
    return path
