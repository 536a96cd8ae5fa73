"""An output that is one of the command's inputs, or another of its outputs, is refused before
anything is computed (:mod:`nlibias.io.overwrites`), on every route that writes a file the user
names: gate --junit/--markdown, report --out, export model-index --out/--card, score and audit
--out. Each test checks that the input is left byte for byte as it was."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from typer.testing import CliRunner

from nlibias.cli.main import app

runner = CliRunner()


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory, bbnli_samples_run: Path) -> Path:
    """A fake model's audit of BBNLI (few resamples: only the files matter here)."""
    root = tmp_path_factory.mktemp("guard")
    audit = ["audit", "--samples", str(bbnli_samples_run / "samples.jsonl"), "--model", "fake:m",
             "--out", str(root / "run"), "--bootstrap", "50", "--cache", str(root / "c.sqlite"), "--quiet"]  # fmt: skip
    done = runner.invoke(app, audit)
    assert done.exit_code == 0, done.output
    return root / "run"


def _refused(args: list[str], kept: Path, *flags: str) -> str:
    before = kept.read_bytes()
    done = runner.invoke(app, args)
    assert done.exit_code == 2, done.output
    assert kept.read_bytes() == before
    for flag in flags:
        assert flag in done.output, done.output
    return done.output


def test_gate_outputs_may_not_be_the_runs_files_the_rules_or_each_other(run: Path, tmp_path: Path) -> None:
    rules = tmp_path / "rules.yaml"
    rules.write_text("bootstrap: 50\nslices: [overall]\nmeasures:\n  bbnli_bias_score:\n    max_abs: 100\n")
    gate = ["gate", str(run), "--rules", str(rules)]
    _refused([*gate, "--junit", str(run / "metrics.json")], run / "metrics.json", "--junit", "CANDIDATE")
    _refused([*gate, "--markdown", str(rules)], rules, "--markdown", "--rules")
    recorded = Path(json.loads((run / "manifest.json").read_text())["inputs"]["samples"]["path"])
    _refused([*gate, "--markdown", str(recorded)], recorded, "--markdown", "CANDIDATE")  # the samples it read
    link = tmp_path / "link.xml"  # another name of the run's manifest: the same file
    link.symlink_to(run / "manifest.json")
    _refused([*gate, "--junit", str(link)], run / "manifest.json", "--junit")
    folder = tmp_path / "reports"  # refused when the arguments are read, not by the temporary file
    folder.mkdir()
    said = _refused(
        [*gate, "--junit", str(folder)], run / "metrics.json", "'--junit'", f"'{folder}' is a folder"
    )
    assert "name a file" in said and ".part" not in said
    both = tmp_path / "out.txt"
    both.write_text("kept")
    _refused(
        [*gate, "--junit", str(both), "--markdown", str(tmp_path / "." / "out.txt")],
        both,
        "--junit",
        "--markdown",
    )


def test_report_out_may_not_be_a_file_of_a_run(run: Path) -> None:
    _refused(["report", str(run), "--format", "md", "--out", str(run / "predictions.jsonl")],
             run / "predictions.jsonl", "--out", "RUNS")  # fmt: skip
    _refused(["report", str(run), "--out", str(run / "tables.txt")], run / "tables.txt", "--out")
    _refused(["report", str(run / "metrics.json"), "--format", "csv", "--out", str(run / "manifest.json")],
             run / "manifest.json", "--out")  # fmt: skip


def test_export_outputs_may_not_be_the_run_s_files_or_each_other(run: Path, tmp_path: Path) -> None:
    _refused(
        ["export", "model-index", str(run), "--out", str(run / "metrics.json")], run / "metrics.json", "--out"
    )
    card = tmp_path / "README.md"
    card.write_text("# m\n")
    _refused(
        ["export", "model-index", str(run), "--card", str(card), "--out", str(card)], card, "--out", "--card"
    )


def test_score_and_audit_out_may_not_hold_their_inputs(
    run: Path, bbnli_samples_run: Path, tmp_path: Path
) -> None:
    out = tmp_path / "scored"
    out.mkdir()
    # a predictions file that is another file the scoring writes (its own predictions.jsonl is
    # rescoring in place, read to the end before it is replaced: tests/test_streamed_score.py)
    predictions = out / "tables.txt"
    predictions.write_bytes((run / "predictions.jsonl").read_bytes())
    samples = str(bbnli_samples_run / "samples.jsonl")
    score = [
        "score",
        "--samples",
        samples,
        "--predictions",
        str(predictions),
        "--out",
        str(out),
        "--bootstrap",
        "0",
    ]
    _refused(score, predictions, "--out", "--predictions")
    hard = tmp_path / "audited"
    hard.mkdir()
    os.link(bbnli_samples_run / "samples.jsonl", hard / "metrics.json")  # a hard link: one inode
    audit = ["audit", "--samples", str(hard / "metrics.json"), "--model", "fake:m", "--out", str(hard),
             "--bootstrap", "0", "--no-cache", "--quiet"]  # fmt: skip
    _refused(audit, hard / "metrics.json", "--out", "--samples")


def test_distinct_outputs_are_written(run: Path, tmp_path: Path) -> None:
    """The guard refuses only clashes: the gate writes both files beside the run."""
    rules = tmp_path / "rules.yaml"
    rules.write_text("bootstrap: 50\nslices: [overall]\nmeasures:\n  bbnli_bias_score:\n    max_abs: 99\n")
    junit, markdown = tmp_path / "gate.xml", tmp_path / "gate.md"
    done = runner.invoke(
        app, ["gate", str(run), "--rules", str(rules), "--junit", str(junit), "--markdown", str(markdown)]
    )
    assert done.exit_code == 0, done.output
    assert junit.read_text().startswith("<?xml") and markdown.read_text().strip()


def test_expand_out_may_not_hold_its_source(tmp_path: Path) -> None:
    premises = tmp_path / "samples.jsonl"  # the file expand would write into --out
    premises.write_text("The nurse is here.\n")
    expand = ["expand", "occupations", "--out", str(tmp_path)]
    _refused([*expand, "--source", str(premises)], premises, "--out", "--source")
    other = tmp_path / "other.txt"
    other.write_text("The doctor is here.\n")
    joined = f"{other},{tmp_path / '.' / 'samples.jsonl'}"  # one of several sources, spelt otherwise
    _refused([*expand, "--source", joined], premises, "--out", "--source")


def test_expand_out_may_not_be_or_lie_inside_its_source_folder(tmp_path: Path) -> None:
    source = tmp_path / "src"  # refused before it is read: what expand would write would be read next
    (source / "data").mkdir(parents=True)
    kept = source / "data" / "ages.jsonl"
    kept.write_text("x\n")
    expand = ["expand", "bbq", "--source", str(source), "--out"]
    assert "is the folder of option --source" in _refused([*expand, str(source)], kept, "--out")
    inside = _refused([*expand, str(source / "data" / "run")], kept, "--out")
    assert f"lies inside the folder {source} of option --source" in inside
    assert not (source / "data" / "run").exists()


def test_expand_out_may_not_lie_inside_the_data_it_finds_in_the_data_dir(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    data = tmp_path / "data"  # no --source: the folder found through NLIBIAS_DATA_DIR is the input
    (data / "bbq" / "data").mkdir(parents=True)
    kept = data / "bbq" / "data" / "ages.jsonl"
    kept.write_text("x\n")
    monkeypatch.setenv("NLIBIAS_DATA_DIR", str(data))
    inside = _refused(["expand", "bbq", "--out", str(data / "bbq" / "data" / "run")], kept, "--out")
    assert f"lies inside the folder {data / 'bbq'} of the bbq data found in NLIBIAS_DATA_DIR" in inside
    assert "--source" not in inside
    assert not (data / "bbq" / "data" / "run").exists()


def test_finetune_and_debias_out_may_not_hold_their_inputs(tmp_path: Path) -> None:
    """Refused before the model loads: a folder with a config.json stands for the model."""
    model = tmp_path / "model"
    model.mkdir()
    (model / "config.json").write_text("{}")
    train = tmp_path / "data" / "train.jsonl"
    train.parent.mkdir()
    train.write_text('{"premise": "A man naps.", "hypothesis": "He sleeps.", "label": "entailment"}\n')
    finetune = ["finetune", "--model", str(model), "--train", str(train), "--max-steps", "1"]
    _refused([*finetune, "--out", str(model)], model / "config.json", "--out", "--model")
    _refused([*finetune, "--out", str(train.parent)], train, "--out", "--train")  # a folder holding it
    debias = ["debias", "--model", str(model), "--max-steps", "1", "--out", str(tmp_path / "run")]
    augmented = tmp_path / "run" / "augmented" / "train.jsonl"  # the file the first step writes
    augmented.parent.mkdir(parents=True)
    augmented.write_bytes(train.read_bytes())
    _refused([*debias, "--train", str(augmented)], augmented, "--out", "--train")
    _refused([*debias, "--train", str(train), "--eval", str(augmented)], augmented, "--out", "--eval")
    into_model = ["debias", "--model", str(model), "--train", str(train), "--out", str(model)]
    assert f"--out {model} is the folder of option --model" in _refused(into_model, model / "config.json")


def test_python_routes_refuse_the_same_outputs(tmp_path: Path) -> None:
    from nlibias import debias_models, expand
    from nlibias.errors import ConfigError

    model = tmp_path / "models" / "m"  # a model an earlier debias run fine-tuned into OUT/models
    model.mkdir(parents=True)
    (model / "config.json").write_text("{}")
    with pytest.raises(ConfigError, match=r"out_dir .* reads .*parameter models") as refused:
        debias_models(str(model), tmp_path / "t.jsonl", model / ".." / "..")
    assert refused.value.parameter == "out_dir" and refused.value.names == ("models",)
    (tmp_path / "expansion.json").write_text("kept")
    with pytest.raises(ConfigError, match="parameter source"):
        expand("occupations", tmp_path / "expansion.json", out_dir=tmp_path)
    assert (tmp_path / "expansion.json").read_text() == "kept"
