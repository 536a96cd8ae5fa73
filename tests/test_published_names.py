"""A model given to ``extend`` as a local path is published by its folder's name: no file of the
dataset folder (samples, Parquet/CSV/JSON, card) holds the path; run.json keeps it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from nlibias.cli.main import app
from nlibias.extension.dataset import local_model_names, renamed


def test_two_folders_of_one_name_get_two_names_and_nothing_else_is_renamed(tmp_path: Path) -> None:
    first, second = tmp_path / "a" / "lm", tmp_path / "b" / "lm"
    first.mkdir(parents=True), second.mkdir(parents=True)
    (tmp_path / "data").mkdir()
    gone = tmp_path / "moved-away"  # written as a path: local, even when nothing is there now
    specs = [
        str(second),
        f"causal:{first}?beam=8",
        str(first),
        "roberta-base",
        "org/model",
        "fake:x",
        str(gone),
        f"causal:{second}",  # the second folder stays <local-2> whatever its kind
    ]
    names = local_model_names(specs)
    # sorted specs: str(first) < str(second) < "causal:..." ; the causal one is first's folder again
    assert names == {
        str(first): "<local>/lm",
        str(second): "<local-2>/lm",
        f"causal:{first}?beam=8": "causal:<local>/lm?beam=8",
        str(gone): "<local>/moved-away",
        f"causal:{second}": "causal:<local-2>/lm",
    }
    # a string equal to a spec is renamed, as a key and as a value; a word is not, even a file's name
    record = {"filter": {str(first): {"label": "entailment"}}, "words": ["data", str(tmp_path / "data")]}
    assert renamed(record, names) == {
        "filter": {"<local>/lm": {"label": "entailment"}},
        "words": ["data", str(tmp_path / "data")],
    }


PROMPT = (
    "Read the premise and the hypothesis.\nPremise: {premise}\nHypothesis: {hypothesis}\n"
    "Is the hypothesis true given the premise? Answer yes, no or maybe.\n"
)


def _extend(run: Path, *models: str) -> None:
    args = ["extend", "--out", str(run), "--cache", str(run.parent / "c.sqlite"), *models]
    args += ["--holdout-model", "fake:held", "--subtopic", "man_is_to_programmer"]
    args += ["--top-k", "2", "--no-progress", "--unvalidated"]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output


def _leaks(run: Path, paths: list[str]) -> list[tuple[str, str]]:
    files = sorted(p for p in (run / "dataset").rglob("*") if p.is_file())
    assert len(files) >= 5  # samples.jsonl, the card and the data files
    return [(file.name, p) for file in files for p in paths if p.encode() in file.read_bytes()]


def test_the_dataset_folder_holds_no_local_model_path(
    tmp_path: Path, tiny_mlm_dir: Path, tiny_nli_dir: Path, tiny_causal_dir: Path
) -> None:
    run = tmp_path / "run"
    _extend(
        run,
        "--mlm",
        str(tiny_mlm_dir),
        "--filter-model",
        str(tiny_nli_dir),
        "--compare-fill",
        f"causal:{tiny_causal_dir}",
    )
    paths = [str(p) for p in (tiny_mlm_dir, tiny_nli_dir, tiny_causal_dir)]
    assert _leaks(run, paths) == []
    card = (run / "dataset" / "README.md").read_text(encoding="utf-8")
    assert f"<local>/{tiny_mlm_dir.name}" in card and f"<local>/{tiny_nli_dir.name}" in card
    assert f"causal:<local>/{tiny_causal_dir.name}" in card
    # the compared fill is tied to its weights as the run's own fill is
    (compared,) = [line for line in card.splitlines() if line.startswith("| compared fill |")]
    assert f"| causal:<local>/{tiny_causal_dir.name} | causal |" in compared and "weights=" in compared
    first = json.loads((run / "dataset" / "samples.jsonl").read_text(encoding="utf-8").splitlines()[0])
    assert list(first["provenance"]["filter"]) == [f"<local>/{tiny_nli_dir.name}"]
    # the run's own record keeps where the models were
    assert str(tiny_mlm_dir) in (run / "run.json").read_text(encoding="utf-8")


def test_a_causal_fill_s_identity_and_a_prompt_file_publish_no_path(
    tmp_path: Path, tiny_mlm_dir: Path, tiny_causal_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # the causal LM's identity records its path resolved (lm.path) and as given (lm.model);
    # a prompted judge's ?prompt= names a file here
    prompt = tmp_path / "prompts" / "judge.txt"
    prompt.parent.mkdir()
    prompt.write_text(PROMPT, encoding="utf-8")
    (tmp_path / "models").symlink_to(tiny_causal_dir.parent)
    monkeypatch.chdir(tmp_path)
    run = tmp_path / "run"
    causal = f"./models/{tiny_causal_dir.name}"  # relative, as a user in their project folder writes it
    _extend(run, "--mlm", f"causal:{causal}", "--filter-model", f"prompt:{causal}?prompt={prompt}")
    paths = [str(tiny_causal_dir), str(tmp_path), f"models/{tiny_causal_dir.name}", str(prompt)]
    assert _leaks(run, paths) == []
    card = (run / "dataset" / "README.md").read_text(encoding="utf-8")
    assert f"prompt:<local>/{tiny_causal_dir.name}?prompt=<local>/judge.txt" in card
