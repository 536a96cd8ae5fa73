"""Fine-tuning (nlibias.debias.finetune): a tiny in-process model learns a toy set, resumes after a
kill, and the result is a model directory the audit takes."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from nlibias.debias.finetune import CHECKPOINTS, RECORD_FILE, finetune
from nlibias.errors import ConfigError
from nlibias.testing.nli_sets import learnable_nli_rows
from nlibias.testing.tiny_models import build_tiny_nli_classifier

# a learning rate for a 2-layer, 32-wide model trained for seconds (the paper's 2e-5 is for BERT-base)
FAST = {"learning_rate": 3e-3, "batch_size": 8, "max_length": 32, "progress": False}


@pytest.fixture(autouse=True)
def one_thread() -> Any:
    """One torch thread: on a shared 2-core machine, two threads spin-wait and run 20x slower."""
    import torch

    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


def write_rows(path: Path, rows: list[dict[str, str]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


@pytest.fixture(scope="module")
def toy(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("toy")
    rows = learnable_nli_rows(480, seed=1)
    held_out = learnable_nli_rows(90, seed=2)
    texts = [r["premise"] for r in rows] + [r["hypothesis"] for r in rows + held_out]
    # the base model's labels in another order than ours: the fine-tuned head must keep its own
    base = build_tiny_nli_classifier(
        root / "base",
        texts,
        id2label={0: "contradiction", 1: "entailment", 2: "neutral"},
        seed=3,
        init_std=0.02,
    )
    return {
        "base": base,
        "train": write_rows(root / "train.jsonl", rows),
        "eval": write_rows(root / "eval.jsonl", held_out),
        "root": root,
    }


def test_tiny_model_learns_the_toy_set_above_chance(toy: dict[str, Path], tmp_path: Path) -> None:
    out = tmp_path / "model"
    record = finetune(str(toy["base"]), toy["train"], out, eval_path=toy["eval"], epochs=3, **FAST)
    # chance on three balanced labels is 1/3; the cue words make the set learnable
    assert record["eval_accuracy"] is not None and record["eval_accuracy"] > 0.8
    assert record["train_rows"] == 480 and record["eval_rows"] == 90
    assert record["steps"] == 3 * 480 // 8  # 60 batches per epoch, 3 epochs
    assert record["examples_per_second"] > 0
    assert len(record["train_sha256"] or "") == 64
    saved = json.loads((out / RECORD_FILE).read_text())
    assert saved["settings"]["weight_decay"] == 0.01 and saved["settings"]["adam_beta2"] == 0.999
    config = json.loads((out / "config.json").read_text())
    assert config["id2label"] == {"0": "contradiction", "1": "entailment", "2": "neutral"}


def test_defaults_are_the_papers(toy: dict[str, Path]) -> None:
    from nlibias.debias.finetune import default_learning_rate

    # a model path that does not exist is refused as such, before anything is written
    with pytest.raises(ConfigError, match="does not exist") as missing:
        finetune(str(toy["root"] / "no-such-model"), toy["train"], toy["root"] / "x", **FAST)
    assert missing.value.parameter == "model" and not (toy["root"] / "x").exists()
    assert finetune(str(toy["base"]), toy["train"], toy["root"] / "x", max_steps=1, **FAST)["steps"] == 1

    assert default_learning_rate("FacebookAI/roberta-base") == 1e-5
    assert default_learning_rate("facebook/bart-base") == 2e-5
    with pytest.raises(ConfigError) as error:
        finetune(str(toy["base"]), toy["train"], toy["root"] / "x", batch_size=0)
    assert error.value.parameter == "batch_size"


class Kill(Exception):
    """Stands in for a kill (SIGKILL, a lost machine) in the middle of training."""


def kill_at(step: int) -> Any:
    from transformers import TrainerCallback

    class KillAt(TrainerCallback):
        def on_step_end(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
            if state.global_step == step:
                raise Kill(f"killed at step {step}")

    return KillAt()


def test_a_killed_run_leaves_no_progress_line_printing(toy: dict[str, Path], tmp_path: Path) -> None:
    """Into a log (pytest's stderr is no terminal) the steps are a line thread; a training that
    raised never reaches on_train_end, and its thread went on printing into later commands."""
    import threading

    options = {**FAST, "progress": True, "max_steps": 4}
    with pytest.raises(Kill):
        finetune(str(toy["base"]), toy["train"], tmp_path / "k", callbacks=[kill_at(2)], **options)
    printing = [t for t in threading.enumerate() if t.name == "nlibias-progress-lines"]
    for thread in printing:
        thread.join(timeout=5)  # a stopped thread ends at once; a running one never does
    assert not [t for t in printing if t.is_alive()]


def test_a_killed_run_resumes_from_its_checkpoint(toy: dict[str, Path], tmp_path: Path) -> None:
    import torch
    from transformers import AutoModelForSequenceClassification

    options = {**FAST, "max_steps": 12, "save_steps": 4}
    whole = finetune(str(toy["base"]), toy["train"], tmp_path / "whole", **options)
    out = tmp_path / "killed"
    with pytest.raises(Kill):
        finetune(str(toy["base"]), toy["train"], out, callbacks=[kill_at(10)], **options)
    assert sorted(p.name for p in (out / CHECKPOINTS).glob("checkpoint-*")) == [
        "checkpoint-4",
        "checkpoint-8",
    ]
    assert not (out / RECORD_FILE).exists()
    resumed = finetune(str(toy["base"]), toy["train"], out, **options)
    assert resumed["resumed_from"] == "checkpoint-8" and resumed["steps"] == whole["steps"] == 12
    # the resumed run ends with the same weights as the run that was never stopped
    a = AutoModelForSequenceClassification.from_pretrained(tmp_path / "whole").state_dict()
    b = AutoModelForSequenceClassification.from_pretrained(out).state_dict()
    assert all(torch.allclose(a[k], b[k], atol=1e-6) for k in a)
    # other settings in the same directory are refused rather than mixed in
    with pytest.raises(ConfigError) as error:
        finetune(str(toy["base"]), toy["train"], out, **{**options, "learning_rate": 1e-3})
    assert error.value.parameter == "out_dir"


def test_bart_fine_tunes_and_reports_accuracy(toy: dict[str, Path], tmp_path: Path) -> None:
    # BART returns (logits, encoder states) from predict: the accuracy must read the logits
    from transformers import BartConfig, BartForSequenceClassification

    from nlibias.testing.tiny_models import save_model, train_tiny_tokenizer

    rows = [json.loads(line) for line in toy["train"].read_text().splitlines()]
    tokenizer = train_tiny_tokenizer(
        [r["premise"] for r in rows] + [r["hypothesis"] for r in rows], token_type_ids=False
    )
    special = {"pad_token_id": tokenizer.pad_token_id, "bos_token_id": tokenizer.cls_token_id}
    special |= {
        k: tokenizer.sep_token_id for k in ("eos_token_id", "decoder_start_token_id", "forced_eos_token_id")
    }
    config = BartConfig(
        vocab_size=len(tokenizer), d_model=32, encoder_layers=1, decoder_layers=1, encoder_attention_heads=2,
        decoder_attention_heads=2, encoder_ffn_dim=64, decoder_ffn_dim=64, max_position_embeddings=64,
        num_labels=3, **special,
    )  # fmt: skip
    base = save_model(BartForSequenceClassification(config), tokenizer, tmp_path / "bart")
    record = finetune(str(base), toy["train"], tmp_path / "out", eval_path=toy["eval"], max_steps=3, **FAST)
    assert record["steps"] == 3 and record["eval_accuracy"] is not None
    saved = json.loads((tmp_path / "out" / "config.json").read_text())
    assert saved["id2label"] == {"0": "entailment", "1": "neutral", "2": "contradiction"}  # a new head


def test_missing_training_packages_are_one_clear_error(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    import importlib.util

    real = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util, "find_spec", lambda name, *a: None if name == "datasets" else real(name, *a)
    )
    with pytest.raises(ConfigError, match=r"needs datasets: pip install 'nlibias\[train\]'"):
        finetune("bert-base-uncased", tmp_path / "t.jsonl", tmp_path / "out")


def test_finetune_spells_out_the_training_options_with_their_defaults() -> None:
    import dataclasses
    import inspect

    from nlibias.debias.finetune_record import TrainingOptions

    # nlibias.finetune lists the options for its callers (help, completion); they must not drift
    # from the one declaration debias's finetune_options and the recorded settings use
    parameters = inspect.signature(finetune).parameters
    declared = {field.name: field.default for field in dataclasses.fields(TrainingOptions)}
    assert {name: parameters[name].default for name in declared} == declared
