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


def test_a_url_given_as_the_model_s_name_is_refused(run: Path, tmp_path: Path) -> None:
    """The model-index names the model (huggingface_hub's ``model_name``: the repo's name by
    default); a URL would be shown as the name. A Hub URL's ``org/model`` part is suggested."""
    import nlibias
    from nlibias.errors import ConfigError
    from nlibias.jobs.model_index import export_model_index

    card = tmp_path / "README.md"
    card.write_text("---\nlicense: mit\n---\n# m\n")
    hub = "https://huggingface.co/org/m/tree/main"
    with pytest.raises(
        ConfigError, match=r"^name 'https://huggingface\.co/org/m/tree/main' is a URL, not"
    ) as refused:
        export_model_index(run, card=card, name=hub)
    assert refused.value.parameter == "name" and str(refused.value).endswith(
        "pass name org/m, the model part of it"
    )
    assert card.read_text() == "---\nlicense: mit\n---\n# m\n"
    with pytest.raises(
        ConfigError, match=r"is a URL, not the model's name on the Hub .*; pass the model's name on the Hub$"
    ):
        nlibias.model_index(run, name="http://example.org/m")
    assert [e["name"] for e in nlibias.model_index(run, name="org/m")] == ["org/m"]


@pytest.fixture(scope="module")
def subset_run(tmp_path_factory: pytest.TempPathFactory, run: Path) -> Path:
    """Two fake models audited on a ``--limit 40`` subset of the same samples."""
    root = tmp_path_factory.mktemp("mi_subset")
    audit = ["audit", "--samples", str(run.parent / "bb" / "samples.jsonl"), "--model", "fake:a", "--model",
             "fake:b", "--limit", "40", "--out", str(root / "run"), "--bootstrap", "0", "--no-cache", "--quiet"]  # fmt: skip
    done = runner.invoke(app, audit)
    assert done.exit_code == 0, done.output
    return root / "run"


def test_a_subset_or_a_partial_scoring_says_so_in_the_dataset(
    subset_run: Path, run: Path, tmp_path: Path
) -> None:
    """The dataset's name and ``args`` say when the values are not over the whole samples file; the
    revision alone (a SHA-256) said nothing, and a scoring of 150 of 3,134 samples named the full set."""
    from huggingface_hub.repocard_data import model_index_to_eval_results

    subset = json.loads((subset_run / "metrics.json").read_text())["subset"]
    done = runner.invoke(app, ["export", "model-index", str(subset_run), "--model", "a"])
    assert done.exit_code == 0, done.output
    _, results = model_index_to_eval_results(yaml.safe_load(done.output)["model-index"])
    assert {r.dataset_name for r in results} == {
        f"bbnli (nlibias; a subset: {subset['samples']} of 3,134 samples)"
    }
    assert results[0].dataset_args == {"subset_samples": subset["samples"], "samples_in_set": 3134, "limit": 40,
                                       "seed": subset["seed"]}  # fmt: skip

    rows = (run / "predictions.jsonl").read_text().splitlines()
    partial = tmp_path / "partial.jsonl"
    partial.write_text("\n".join(rows[:150]) + "\n")  # 150 of the 3,134 samples
    scored = runner.invoke(app, ["score", "--samples", str(run.parent / "bb" / "samples.jsonl"), "--predictions",
                                 str(partial), "--out", str(tmp_path / "scored"), "--bootstrap", "0"])  # fmt: skip
    assert scored.exit_code == 0, scored.output
    done = runner.invoke(app, ["export", "model-index", str(tmp_path / "scored")])
    assert done.exit_code == 0, done.output
    _, results = model_index_to_eval_results(yaml.safe_load(done.output)["model-index"])
    assert {r.dataset_name for r in results} == {"bbnli (nlibias; 150 of 3,134 samples scored)"}
    assert results[0].dataset_args == {"samples_scored": 150, "samples_given": 3134}


def test_a_run_of_several_models_needs_one_for_a_card(subset_run: Path) -> None:
    """huggingface_hub reads one model name per model-index: a YAML of models a and b was read as
    b's, with a's values among them."""
    import nlibias

    refused = runner.invoke(app, ["export", "model-index", str(subset_run)])
    assert refused.exit_code == 2 and "holds models a, b; a model card describes one" in refused.output
    assert "--model" in refused.output
    assert [e["name"] for e in nlibias.model_index(subset_run)] == ["a", "b"]  # the data, for code


def test_a_card_keeps_its_name_and_its_other_results(run: Path, tmp_path: Path) -> None:
    """``--card`` replaced the card's results and name: an MNLI accuracy was lost, the name became
    the run's key. Now only this benchmark's results are replaced, and a second export adds none twice."""
    from huggingface_hub import ModelCard

    card = tmp_path / "README.md"
    card.write_text(
        "---\nmodel-index:\n- name: my-org/my-nli\n  results:\n  - task:\n      type: text-classification\n"
        "    dataset:\n      type: nyu-mll/multi_nli\n      name: MNLI\n    metrics:\n    - type: accuracy\n"
        "      value: 88.1\n---\n# My model\n"
    )
    for _ in range(2):
        done = runner.invoke(app, ["export", "model-index", str(run), "--card", str(card)])
        assert done.exit_code == 0, done.output
    loaded = ModelCard.load(card)
    assert loaded.data.model_name == "my-org/my-nli"
    found = [(r.dataset_type, r.metric_type, r.metric_value) for r in loaded.data.eval_results]
    overall = json.loads((run / "metrics.json").read_text())["models"]["m"]["overall"]
    assert found == [("nyu-mll/multi_nli", "accuracy", 88.1), ("nlibias/bbnli", "bbnli_bias_score",
                     overall["bbnli_bias_score"]), ("nlibias/bbnli", "accuracy", overall["accuracy"])]  # fmt: skip
    (accuracy,) = [
        r
        for r in loaded.data.eval_results
        if r.dataset_type == "nlibias/bbnli" and r.metric_type == "accuracy"
    ]
    assert accuracy.metric_name == "Accuracy on the bias-audit samples (gold neutral)"


def test_a_generative_model_s_prompt_and_mode_are_in_the_task_name() -> None:
    """A generative LM asked with one prompt is named by its model alone (``lm``): the prompt and
    the answer mode, which its values depend on, were lost; the task's name now carries them."""
    import nlibias

    run = Path(__file__).parent / "fixtures" / "regression" / "bbnli-generative-fake" / "audit"
    with pytest.warns(UserWarning):  # a fixture written before run manifests
        (entry,) = nlibias.model_index(run, model="lm|prompt=true|scored")
    tasks = {r["task"]["name"] for r in entry["results"]}
    assert tasks == {"Natural Language Inference (yes/no questions), prompt true, scored answers"}


def test_a_card_whose_model_index_huggingface_hub_cannot_read_is_refused(run: Path, tmp_path: Path) -> None:
    """``ModelCard`` drops a model-index it cannot read (a warning only), and writing ours then
    deleted it: the card is now left as it was and the export refused, naming the field."""
    card = tmp_path / "README.md"
    text = "---\nlicense: mit\nmodel-index: oops\n---\n# My model\n"
    card.write_text(text)
    done = runner.invoke(app, ["export", "model-index", str(run), "--card", str(card)])
    assert done.exit_code == 2 and "Traceback" not in done.output
    assert f"{card}: field model-index: huggingface_hub cannot read the card's model-index" in done.output
    assert card.read_text() == text
