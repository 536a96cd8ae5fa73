"""``nlibias export model-index``: a run's overall numbers as model-card metadata, read back by
huggingface_hub (``model_index_to_eval_results``), and a card's metadata block updated in place."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from nlibias.cli.main import app

runner = CliRunner()


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A fake model's audit of BBNLI (the baseline of a gate)."""
    root = tmp_path_factory.mktemp("mi")
    assert runner.invoke(app, ["expand", "bbnli", "--out", str(root / "bb")]).exit_code == 0
    audit = ["audit", "--samples", str(root / "bb" / "samples.jsonl"), "--model", "fake:m", "--out",
             str(root / "run"), "--bootstrap", "0", "--cache", str(root / "c.sqlite"), "--quiet"]  # fmt: skip
    done = runner.invoke(app, audit)
    assert done.exit_code == 0, done.output
    return root / "run"


def test_model_index_round_trip(run: Path, tmp_path: Path) -> None:
    from huggingface_hub.repocard_data import model_index_to_eval_results

    out = tmp_path / "mi.yaml"
    done = runner.invoke(app, ["export", "model-index", str(run), "--out", str(out)])
    assert done.exit_code == 0, done.output
    entries = yaml.safe_load(out.read_text())["model-index"]
    name, results = model_index_to_eval_results(entries)
    overall = json.loads((run / "metrics.json").read_text())["models"]["m"]["overall"]
    manifest = json.loads((run / "manifest.json").read_text())
    assert name == "m"
    values = {r.metric_type: r.metric_value for r in results}
    assert values == {"bbnli_bias_score": overall["bbnli_bias_score"], "accuracy": overall["accuracy"]}
    first = results[0]
    assert (first.task_type, first.dataset_type, first.dataset_name) == (
        "text-classification", "nlibias/bbnli", "bbnli (nlibias)",
    )  # fmt: skip
    assert first.dataset_revision == manifest["inputs"]["samples"]["sha256"]
    assert all(r.verified is False for r in results)
    assert first.metric_name == "pro - anti (0 = no bias)"


def test_card_metadata_updated_in_place(run: Path, tmp_path: Path) -> None:
    from huggingface_hub import ModelCard

    card = tmp_path / "README.md"
    card.write_text("---\nlicense: mit\ntags:\n- nli\n---\n# My model\n\nTrained on MNLI.\n")
    done = runner.invoke(app, ["export", "model-index", str(run), "--card", str(card)])
    assert done.exit_code == 0, done.output
    text = card.read_text()
    assert text.endswith("# My model\n\nTrained on MNLI.\n")  # the text is kept
    loaded = ModelCard.load(card)
    assert loaded.data.license == "mit" and loaded.data.tags == ["nli"]
    assert {r.metric_type for r in loaded.data.eval_results} == {"bbnli_bias_score", "accuracy"}


def test_library_and_refusals(run: Path, tmp_path: Path) -> None:
    import nlibias

    entries = nlibias.model_index(run)
    assert [e["name"] for e in entries] == ["m"]
    missing = runner.invoke(app, ["export", "model-index", str(run), "--model", "nope"])
    assert missing.exit_code == 2 and "'nope'" in missing.output and "--model" in missing.output
    no_card = runner.invoke(app, ["export", "model-index", str(run), "--card", str(tmp_path / "none.md")])
    assert no_card.exit_code == 2 and "none.md" in no_card.output
