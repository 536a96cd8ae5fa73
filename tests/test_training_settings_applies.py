"""A training setting that nothing reads is refused before any model or row loads, never recorded
as if it had been used: ``epochs`` beside ``max_steps`` (the Trainer's ``max_steps`` overrides
the epochs), a warm-up with the ``constant`` schedule (it has none), a ``split`` of a file (read
whole) and an ``eval_split`` with no evaluation set. Each is named by its parameter in the Python
API (``finetune``, ``augment``, ``debias_models``) and by its option on the command line (exit 2, no
traceback); the combinations that do take effect still pass the checks."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from nlibias.cli.main import app
from nlibias.debias.augment import augment_gender_swap
from nlibias.debias.finetune import finetune
from nlibias.debias.finetune_checks import check_split_applies
from nlibias.debias.training_rows import describe_training_set
from nlibias.errors import ConfigError
from nlibias.jobs.debias import run_debias
from nlibias.schema.applies import InapplicableOption

runner = CliRunner()
ROW = {"premise": "The nurse helps her patient.", "hypothesis": "A woman works.", "label": "neutral"}


class Reached(Exception):
    """The checks passed: the run went on to read the data."""


@pytest.fixture
def inputs(tmp_path: Path) -> dict[str, Path]:
    train = tmp_path / "train.jsonl"
    train.write_text(json.dumps(ROW) + "\n", encoding="utf-8")
    base = tmp_path / "base"  # a model directory as check_base_model sees it; never loaded here
    base.mkdir()
    (base / "config.json").write_text("{}", encoding="utf-8")
    return {"train": train, "base": base, "out": tmp_path / "out"}


@pytest.fixture
def nothing_loads(monkeypatch: pytest.MonkeyPatch) -> None:
    """Reading a row or loading a model fails loudly: a refusal that comes after either is too late.
    Reading the training set first raises :class:`Reached` (the checks passed)."""

    def loaded(*args: object, **kwargs: object) -> None:
        raise AssertionError("a model or the data was about to be loaded")

    def reached(*args: object, **kwargs: object) -> None:
        raise Reached

    monkeypatch.setattr("nlibias.debias.finetune.check_training_set", reached)
    monkeypatch.setattr("nlibias.jobs.debias.check_training_set", reached)
    monkeypatch.setattr("nlibias.debias.augment.describe_training_set", reached)
    for target in (
        "nlibias.debias.finetune._load_model",
        "nlibias.debias.finetune._train",
        "nlibias.debias.augment.HerResolver.load",
        "nlibias.jobs.debias.augment_gender_swap",
        "nlibias.jobs.debias.finetune",
        "nlibias.jobs.debias.check_stages",
    ):
        monkeypatch.setattr(target, loaded)


# (options, the parameter refused, words the message holds)
FINETUNE_CASES = [
    ({"max_steps": 5, "epochs": 7.0}, "epochs", ["epochs 7.0", "max_steps"]),
    ({"lr_scheduler": "constant", "warmup_steps": 10}, "warmup_steps", ["warmup_steps 10", "'constant'"]),
    ({"lr_scheduler": "constant", "warmup_ratio": 0.1}, "warmup_ratio", ["warmup_ratio 0.1", "'constant'"]),
    ({"warmup_steps": 10, "warmup_ratio": 0.1}, "warmup_steps", ["warmup_steps 10", "warmup_ratio is 0.1"]),
    ({"split": "validation"}, "split", ["split 'validation'", "JSONL file"]),
    ({"eval_split": "test"}, "eval_split", ["eval_split 'test'", "eval_path"]),
]


@pytest.mark.parametrize(("options", "parameter", "words"), FINETUNE_CASES)
def test_finetune_refuses_a_setting_nothing_reads(
    inputs: dict[str, Path], nothing_loads: None, options: dict[str, Any], parameter: str, words: list[str]
) -> None:
    with pytest.raises(InapplicableOption) as error:
        finetune(str(inputs["base"]), inputs["train"], inputs["out"], progress=False, **options)
    assert error.value.parameter == parameter
    for word in words:
        assert word in str(error.value)
    assert not inputs["out"].exists()


def test_max_length_is_held_to_its_bound_and_to_a_local_models_positions(
    inputs: dict[str, Path], nothing_loads: None
) -> None:
    with pytest.raises(ConfigError, match=r"max_length must be a whole number from 1 to 8192 \(.*ModernBERT"):
        finetune(str(inputs["base"]), inputs["train"], inputs["out"], max_length=10**9, progress=False)
    config = {"model_type": "roberta", "max_position_embeddings": 514, "pad_token_id": 1}
    (inputs["base"] / "config.json").write_text(json.dumps(config), encoding="utf-8")
    with pytest.raises(ConfigError, match=r"max_length is 1000, but the model .* reads at most 512 tokens"):
        finetune(str(inputs["base"]), inputs["train"], inputs["out"], max_length=1000, progress=False)
    with pytest.raises(Reached):
        finetune(str(inputs["base"]), inputs["train"], inputs["out"], max_length=512, progress=False)
    assert not inputs["out"].exists()


def test_finetune_refuses_an_eval_split_of_an_evaluation_file(
    inputs: dict[str, Path], nothing_loads: None
) -> None:
    with pytest.raises(InapplicableOption, match="eval_split 'test'") as error:
        finetune(
            str(inputs["base"]), inputs["train"], inputs["out"], eval_path=inputs["train"], eval_split="test",
            progress=False,
        )  # fmt: skip
    assert error.value.parameter == "eval_split"


@pytest.mark.parametrize(
    "options",
    [
        {"max_steps": 5},
        {"epochs": 7.0},
        {"max_steps": 5, "lr_scheduler": "constant"},
        {"lr_scheduler": "linear", "warmup_steps": 10},
        {"lr_scheduler": "constant_with_warmup", "warmup_ratio": 0.1},
        {"lr_scheduler": "cosine", "warmup_steps": 10},
    ],
)
def test_settings_that_take_effect_pass_the_checks(
    inputs: dict[str, Path], nothing_loads: None, options: dict[str, Any]
) -> None:
    with pytest.raises(Reached):
        finetune(str(inputs["base"]), inputs["train"], inputs["out"], progress=False, **options)


def test_a_split_of_a_set_with_splits_passes_the_checks(
    inputs: dict[str, Path], nothing_loads: None, tmp_path: Path
) -> None:
    # a hub name is not looked up by the check: the split picks its rows
    with pytest.raises(Reached):
        finetune(
            str(inputs["base"]),
            "nyu-mll/glue:mnli",
            inputs["out"],
            split="validation_matched",
            progress=False,
        )
    with pytest.raises(Reached):
        finetune(
            str(inputs["base"]), "nyu-mll/glue:mnli", inputs["out"], eval_path="nyu-mll/glue:mnli",
            eval_split="validation_mismatched", progress=False,
        )  # fmt: skip
    with pytest.raises(Reached):
        augment_gender_swap("nyu-mll/glue:mnli", tmp_path / "aug", split="validation_matched", progress=False)
    saved = tmp_path / "saved-dict"  # a saved DatasetDict has splits
    saved.mkdir()
    (saved / "dataset_dict.json").write_text('{"splits": ["train", "validation"]}', encoding="utf-8")
    check_split_applies(saved, "validation")


def test_a_split_of_a_saved_dataset_without_splits_is_refused(tmp_path: Path) -> None:
    saved = tmp_path / "saved"
    saved.mkdir()
    (saved / "dataset_info.json").write_text("{}", encoding="utf-8")
    with pytest.raises(InapplicableOption, match="without splits") as error:
        check_split_applies(saved, "validation")
    assert error.value.parameter == "split"


def test_a_training_set_described_for_its_split_is_taken_as_it_is(inputs: dict[str, Path]) -> None:
    # nlibias debias hands the augmented file to finetune described for the original set's split
    check_split_applies(describe_training_set(inputs["train"], "validation"), "validation")
    with pytest.raises(InapplicableOption):
        check_split_applies(describe_training_set(inputs["train"]), "validation")


def test_augment_refuses_a_split_of_a_file(
    inputs: dict[str, Path], nothing_loads: None, tmp_path: Path
) -> None:
    with pytest.raises(InapplicableOption, match="split 'validation'") as error:
        augment_gender_swap(inputs["train"], tmp_path / "aug", split="validation", progress=False)
    assert error.value.parameter == "split"
    assert not (tmp_path / "aug").exists()


@pytest.mark.parametrize(
    ("augment_options", "finetune_options", "parameter"),
    [
        (None, {"max_steps": 5, "epochs": 7.0}, "epochs"),
        (None, {"lr_scheduler": "constant", "warmup_steps": 10}, "warmup_steps"),
        (None, {"split": "validation"}, "split"),
        (None, {"eval_split": "test"}, "eval_split"),
        ({"split": "validation"}, None, "split"),
    ],
)
def test_debias_refuses_a_setting_nothing_reads_before_any_step(
    inputs: dict[str, Path],
    nothing_loads: None,
    augment_options: dict[str, Any] | None,
    finetune_options: dict[str, Any] | None,
    parameter: str,
) -> None:
    with pytest.raises(InapplicableOption) as error:
        run_debias(
            [str(inputs["base"])], inputs["train"], inputs["out"], augment_options=augment_options,
            finetune_options=finetune_options, progress=False,
        )  # fmt: skip
    assert error.value.parameter == parameter
    assert not inputs["out"].exists()


def test_debias_refuses_an_augment_split_other_than_the_fine_tunes(
    inputs: dict[str, Path], nothing_loads: None
) -> None:
    # the augment step read its own split (default train) while the fine-tunes read theirs: with
    # finetune_options={"split": "validation_matched"} the original model learnt from other rows
    # than the augmented one, and the comparison measured the split, not the augmentation
    with pytest.raises(ConfigError, match="augment_options' split 'train' differs") as error:
        run_debias(
            [str(inputs["base"])], "nyu-mll/glue:mnli", inputs["out"], augment_options={"split": "train"},
            finetune_options={"split": "validation_matched"}, progress=False,
        )  # fmt: skip
    assert error.value.parameter == "augment_options" and not inputs["out"].exists()
    with pytest.raises(Reached):  # one split, given once: the augment step reads it too (_augment_split)
        run_debias(
            [str(inputs["base"])], "nyu-mll/glue:mnli", inputs["out"],
            finetune_options={"split": "validation_matched"}, progress=False,
        )  # fmt: skip


@pytest.mark.parametrize(
    ("command", "args", "words"),
    [
        ("finetune", ["--max-steps", "5", "--epochs", "7"], ["--epochs 7.0", "--max-steps"]),
        ("finetune", ["--lr-scheduler", "constant", "--warmup-steps", "10"], ["--warmup-steps 10", "--lr-scheduler"]),
        ("finetune", ["--lr-scheduler", "constant", "--warmup-ratio", "0.1"], ["--warmup-ratio 0.1", "--lr-scheduler"]),
        ("finetune", ["--split", "validation"], ["--split 'validation'", "JSONL file"]),
        ("finetune", ["--eval-split", "test"], ["--eval-split 'test'", "--eval"]),
        ("augment", ["--split", "validation"], ["--split 'validation'", "JSONL file"]),
        ("debias", ["--max-steps", "5", "--epochs", "7"], ["--epochs 7.0", "--max-steps"]),
        ("debias", ["--lr-scheduler", "constant", "--warmup-steps", "10"], ["--warmup-steps 10", "--lr-scheduler"]),
    ],
)  # fmt: skip
def test_the_command_line_refuses_it_by_its_option(
    inputs: dict[str, Path], nothing_loads: None, command: str, args: list[str], words: list[str]
) -> None:
    given = ["--train", str(inputs["train"]), "--out", str(inputs["out"])]
    if command == "augment":
        argv = ["augment", "gender-swap", *given, *args]
    else:
        argv = [command, "--model", str(inputs["base"]), *given, *args]
    result = runner.invoke(app, argv)
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output
    for word in words:
        assert word in result.output, result.output
    assert "max_steps" not in result.output and "lr_scheduler" not in result.output  # options, not parameters
    assert not inputs["out"].exists()
