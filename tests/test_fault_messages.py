"""Fault paths end in a clear message: a full disk while fine-tuning says "no space left on the
device" and names the folder (torch's own write error included), and a max_length the model
cannot read is refused before training, naming both numbers."""

from __future__ import annotations

import errno
import json
from pathlib import Path
from typing import Any

import pytest

from nlibias.errors import ConfigError, FileAccessError

pytest.importorskip("transformers")
pytest.importorskip("datasets")

FAST = {"learning_rate": 3e-3, "batch_size": 8, "max_length": 32, "max_steps": 2, "progress": False}


@pytest.fixture(scope="module")
def toy(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    from nlibias.testing.nli_sets import learnable_nli_rows
    from nlibias.testing.tiny_models import build_tiny_nli_classifier

    root = tmp_path_factory.mktemp("toy")
    rows = learnable_nli_rows(24, seed=1)
    rows[0] = {**rows[0], "premise": " ".join(["word"] * 700)}  # longer than the model's 512 positions
    train = root / "train.jsonl"
    train.write_text("".join(json.dumps(r) + "\n" for r in rows))
    texts = [r["premise"] for r in rows] + [r["hypothesis"] for r in rows]
    return {"base": build_tiny_nli_classifier(root / "base", texts, init_std=0.02), "train": train}


@pytest.fixture(autouse=True)
def one_thread() -> Any:
    import torch

    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


def full_disk(*args: Any, **kwargs: Any) -> None:
    raise OSError(errno.ENOSPC, "No space left on device")  # a write() fails: no file name


def torch_write_failed(*args: Any, **kwargs: Any) -> None:
    # what torch.save raises when its stream writer cannot write (a full disk), not an OSError
    raise RuntimeError(
        "[enforce fail at inline_container.cc:664] . PytorchStreamWriter failed writing file data/0: file write failed"
    )


@pytest.mark.parametrize("failure", [full_disk, torch_write_failed], ids=["oserror", "torch-runtimeerror"])
def test_a_full_disk_while_saving_names_the_folder(
    toy: dict[str, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch, failure: Any
) -> None:
    from transformers import Trainer

    from nlibias.debias.finetune import finetune

    monkeypatch.setattr(Trainer, "save_model", failure)
    out = tmp_path / "model"
    with pytest.raises(FileAccessError, match="no space left on the device") as caught:
        finetune(str(toy["base"]), toy["train"], out, **FAST)
    assert str(out) in str(caught.value)


def test_the_command_line_says_it_too(
    toy: dict[str, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from transformers import Trainer
    from typer.testing import CliRunner

    from nlibias.cli.main import app

    monkeypatch.setattr(Trainer, "save_model", full_disk)
    out = tmp_path / "cli-model"
    args = [
        "finetune",
        "--model",
        str(toy["base"]),
        "--train",
        str(toy["train"]),
        "--out",
        str(out),
        "--max-steps",
        "2",
    ]
    result = CliRunner().invoke(app, [*args, "--batch-size", "8", "--max-length", "32"])
    assert result.exit_code == 2, result.output
    assert "no space left on the device" in result.output and str(out) in result.output
    assert "internal error" not in result.output


def test_max_length_beyond_the_models_positions_is_refused_before_training(
    toy: dict[str, Path], tmp_path: Path
) -> None:
    from nlibias.debias.finetune import finetune

    out = tmp_path / "model"
    with pytest.raises(ConfigError, match=r"1000.*512") as caught:  # within max_length's bound (8192)
        finetune(str(toy["base"]), toy["train"], out, **{**FAST, "max_length": 1000})
    assert caught.value.parameter == "max_length"
    assert not list(out.glob("checkpoints/checkpoint-*"))  # nothing trained


# -- messages that name the parameter the user gave ------------------------------------------------


def run_cli(args: list[str]) -> tuple[int, str]:
    from typer.testing import CliRunner

    from nlibias.cli.main import app

    result = CliRunner().invoke(app, args)
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    return result.exit_code, result.output


EXTEND = ["extend", "--subtopic", "man_is_to_programmer", "--filter-model", "fake:a", "--no-progress"]


@pytest.mark.parametrize(
    ("options", "flag", "said"),
    [
        (["--fill-model", "/no/such/mlm"], "--fill-model", "/no/such/mlm does not exist"),
        (["--fill-model", "causal:./no/such-lm"], "--fill-model", "./no/such-lm does not exist"),
        (["--mlm", "fake", "--compare-fill", "/no/such/lm"], "--compare-fill", "/no/such/lm does not exist"),
        (
            ["--mlm", "fake", "--filter-model", "/no/such/nli"],
            "--filter-model",
            "/no/such/nli does not exist",
        ),
        (["--mlm", "fake", "--compare-fill", "fake"], "--compare-fill", "is the fill model itself"),
        # malformed ?options, refused before any stage (the export read them; a fake ignored them)
        (
            ["--mlm", "fake", "--compare-fill", "fake:b?x"],
            "--compare-fill",
            "options look like NAME?key=value",
        ),
        (
            ["--mlm", "fake", "--holdout-model", "fake:h?z"],
            "--holdout-model",
            "options look like NAME?key=value",
        ),
    ],
    ids=[
        "fill-model-path",
        "causal-fill-path",
        "compare-fill-path",
        "filter-model-path",
        "compare-fill-same",
        "compare-fill-options",
        "holdout-options",
    ],
)
def test_extend_model_errors_name_the_option_given(
    tmp_path: Path, options: list[str], flag: str, said: str
) -> None:
    code, output = run_cli([*EXTEND, "--out", str(tmp_path / "run"), *options])
    assert code == 2 and said in output and flag in output, output
    assert "Repo id" not in output and "--mlm)" not in output and "--causal" not in output
    assert not (tmp_path / "run").exists()  # refused before any stage ran


def test_a_compare_fill_that_fails_to_load_is_named_as_such(tmp_path: Path) -> None:
    # the served spec's own error names its parameter fill_model; here the user gave it as --compare-fill
    args = [*EXTEND, "--out", str(tmp_path / "run"), "--mlm", "fake", "--compare-fill", "openai:ftp://x"]
    code, output = run_cli([*args, "--until", "filter"])
    assert code == 2 and "openai:ftp://x" in output and "--compare-fill" in output, output


def test_stopwords_with_only_masked_fills_apply_to_nothing(tmp_path: Path) -> None:
    stop = tmp_path / "stop.txt"
    stop.write_text("the\n")
    config = tmp_path / "next.yaml"
    config.write_text(f"mlm:\n  model: fake\n  stopwords: {stop}\n")
    code, output = run_cli(["extend", "--config", str(config), "--out", str(tmp_path / "run")])
    assert code == 2 and f"{config}:3: field mlm.stopwords" in output and "causal fill only" in output, output
    # the file's fill is causal (smollm2), so its stop words apply; a masked fill given on the
    # command line leaves them applying to nothing: named under the option that changed it
    config.write_text(f"mlm:\n  model: smollm2\n  stopwords: {stop}\n")
    code, output = run_cli(
        ["extend", "--config", str(config), "--out", str(tmp_path / "run"), "--fill-model", "fake"]
    )
    assert code == 2 and "causal fill only" in output and "--fill-model" in output, output


def test_her_model_without_her_lm_applies_to_nothing(tmp_path: Path) -> None:
    train = tmp_path / "train.jsonl"
    train.write_text(
        json.dumps({"premise": "She is a nurse.", "hypothesis": "She helps.", "label": "neutral"}) + "\n"
    )
    code, output = run_cli(
        ["augment", "gender-swap", "--train", str(train), "--out", str(tmp_path / "o"), "--her-model", "x"]
    )
    assert code == 2 and "applies to nothing" in output and "--her-model" in output, output
    # with --her lm, a path that does not exist is named under --her-model (not --causal, not the hub's words)
    lm = ["--her", "lm", "--her-model", "./no/such.gguf"]
    code, output = run_cli(
        ["augment", "gender-swap", "--train", str(train), "--out", str(tmp_path / "o"), *lm]
    )
    assert code == 2 and "does not exist" in output and "--her-model" in output, output
    assert "--causal" not in output


def test_validate_serve_prints_the_bound_port_and_refuses_an_unknown_host(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import re

    import nlibias.validation.app as validation_app

    served: list[Any] = []
    monkeypatch.setattr(validation_app, "serve", lambda *args, **kwargs: served.append(kwargs))
    code, output = run_cli(["validate", "serve", str(tmp_path), "--port", "0"])
    assert code == 0, output
    port = int(re.search(r"http://127\.0\.0\.1:(\d+)/", output).group(1))  # type: ignore[union-attr]
    assert port > 0 and served[0]["sock"].getsockname()[1] == port
    served[0]["sock"].close()
    code, output = run_cli(["validate", "serve", str(tmp_path), "--host", "no-such-host.invalid"])
    assert code == 2 and "'no-such-host.invalid' cannot be resolved" in output and "--host" in output
    assert ":0/" not in output


# -- leftovers: a benchmark source with a key twice ------------------------------------------------


def test_a_bbnli_source_with_a_key_twice_is_refused(tmp_path: Path) -> None:
    from nlibias.benchmarks.bbnli import load_bbnli_json
    from nlibias.errors import SourceError

    source = Path(__import__("os").environ["NLIBIAS_DATA_DIR"]) / "bbnli"
    good = next(iter(sorted(source.glob("*/*.json"))))
    record = json.loads(good.read_text(encoding="utf-8"))
    text = json.dumps(record, indent=1)
    # the same key again at the end of the object: json keeps this last value, silently
    twice = text[: text.rindex("}")].rstrip() + ',\n "premise": ["Somebody else."]\n}\n'
    path = tmp_path / "gender" / good.name
    path.parent.mkdir()
    path.write_text(twice, encoding="utf-8")
    with pytest.raises(SourceError, match="appears twice") as caught:
        load_bbnli_json(path)
    assert caught.value.field == "premise" and caught.value.line == twice.count("\n") - 1


def test_a_full_temporary_folder_is_named(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """Before: a full TMPDIR ended in a bare '[Errno 28] No space left on device' naming nothing."""
    import errno
    import tempfile

    from nlibias.errors import FileAccessError
    from nlibias.io.temporary import make_temporary_folder, temporary_folder

    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    with pytest.raises(FileAccessError) as error, temporary_folder("nlibias-x-") as folder:
        assert folder.parent == tmp_path
        raise OSError(errno.ENOSPC, "No space left on device")
    assert str(folder) in str(error.value) and "no space left" in str(error.value)
    assert "TMPDIR" in str(error.value) and not folder.exists()

    def full(*args: object, **kwargs: object) -> str:
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(tempfile, "mkdtemp", full)
    with pytest.raises(FileAccessError, match=str(tmp_path)):
        make_temporary_folder("nlibias-y-")


# -- a file named .gguf that is no GGUF model ---------------------------------------------------------


@pytest.mark.parametrize(
    ("content", "why"),
    [
        (b"not a model\n", "does not start with the GGUF magic bytes"),  # a text file
        (b"GGUF\x03\x00\x00\x00cut", "is cut short: 11 bytes"),  # the magic, then cut: a struct error
    ],
)
def test_a_gguf_name_that_is_no_gguf_file_is_refused_before_any_stage(
    tmp_path: Path, content: bytes, why: str
) -> None:
    from nlibias.errors import SourceError
    from nlibias.models.generative.sources import CausalLMSource

    model = tmp_path / "m.gguf"
    model.write_bytes(content)
    for flags in (
        ["--fill-model", str(model)],
        ["--fill-model", "fake:a", "--compare-fill", f"gguf:{model}"],
    ):
        code, output = run_cli(["extend", "--out", str(tmp_path / "run"), *flags, "--filter-model", "fake:a"])
        assert code == 2 and why in output and flags[-1] in output, output
        assert not (tmp_path / "run" / "masks").exists()  # refused before the first stage
    with pytest.raises(SourceError, match=why):  # the generative and causal routes read it here
        CausalLMSource.from_gguf(model)


def torch_short_write(*args: Any, **kwargs: Any) -> None:
    # torch's zip writer on a full disk, when a write came up short rather than failing
    raise RuntimeError("[enforce fail at inline_container.cc:595] . unexpected pos 4416 vs 4304")


@pytest.mark.parametrize("failure", [full_disk, torch_short_write], ids=["oserror", "torch-short-write"])
def test_a_full_disk_during_debias_says_no_space_left(
    toy: dict[str, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch, failure: Any
) -> None:
    import torch

    (tmp_path / "premises.txt").write_text("The nurse is sitting on a bench.\n")
    monkeypatch.setattr(torch, "save", failure)  # every checkpoint's optimizer and state write
    code, output = run_cli(
        ["debias", "--model", str(toy["base"]), "--train", str(toy["train"]), "--out", str(tmp_path / "out"),
         "--premises", str(tmp_path / "premises.txt"), "--max-steps", "2", "--save-steps", "1",
         "--batch-size", "8", "--max-length", "32", "--device", "cpu", "--no-cache", "--bootstrap", "0"]
    )  # fmt: skip
    assert code == 2 and "no space left on the device" in output, output
    assert str(tmp_path / "out" / "models") in output and "internal error" not in output


def test_a_finetune_record_cut_short_by_a_power_cut_is_finished_again_not_refused(
    toy: dict[str, Path], tmp_path: Path
) -> None:
    from nlibias.debias.finetune import finetune

    out = tmp_path / "model"
    first = finetune(str(toy["base"]), toy["train"], out, save_steps=1, **FAST)
    weights = (out / "model.safetensors").read_bytes()
    for cut in (300, 0):  # cut inside the JSON; an empty file (renamed before its data reached the disk)
        text = (out / "finetune.json").read_text(encoding="utf-8")
        (out / "finetune.json").write_text(text[:cut], encoding="utf-8")
        with pytest.warns(UserWarning, match="finetune.json is not valid JSON.*finished again"):
            again = finetune(str(toy["base"]), toy["train"], out, save_steps=1, **FAST)
        assert again["fingerprint"] == first["fingerprint"] and again["steps"] == first["steps"] == 2
        assert again["resumed_from"] == "checkpoint-2"  # from the last checkpoint: no step trained again
        assert (out / "model.safetensors").read_bytes() == weights


@pytest.mark.parametrize("edit", ["weights", "record"])
def test_a_finetune_whose_weights_or_record_changed_since_is_finished_again_not_reused(
    toy: dict[str, Path], tmp_path: Path, edit: str
) -> None:
    """Reuse compares the hashes of the outputs as well as the inputs: weights replaced by the base
    model's, or the record's numbers edited by hand, are finished again from the last checkpoint
    (with a warning naming the file), never returned as the fine-tuned model."""
    import shutil

    from nlibias.debias.finetune import finetune

    out = tmp_path / "model"
    first = finetune(str(toy["base"]), toy["train"], out, save_steps=1, **FAST)
    weights = (out / "model.safetensors").read_bytes()
    assert (
        set(first["outputs"]) >= {"model.safetensors", "config.json"}
        and "finetune.json" not in first["outputs"]
    )
    if edit == "weights":
        shutil.copy(toy["base"] / "model.safetensors", out / "model.safetensors")
        why = "model.safetensors changed since the stage wrote it"
    else:
        record = json.loads((out / "finetune.json").read_text(encoding="utf-8"))
        (out / "finetune.json").write_text(json.dumps({**record, "steps": 999, "train_rows": 1000}))
        why = "the record was edited since it was written"
    with pytest.warns(UserWarning, match=f"finetune.json does not check out: {why}.*finished again"):
        again = finetune(str(toy["base"]), toy["train"], out, save_steps=1, **FAST)
    assert again["steps"] == first["steps"] == 2 and again["train_rows"] == first["train_rows"]
    assert again["resumed_from"] == "checkpoint-2"  # from the last checkpoint: no step trained again
    assert (out / "model.safetensors").read_bytes() == weights
    assert finetune(str(toy["base"]), toy["train"], out, save_steps=1, **FAST) == again  # now it checks out


def test_a_debias_model_whose_weights_were_replaced_is_redone_by_the_rerun(
    toy: dict[str, Path], tmp_path: Path
) -> None:
    import shutil

    (tmp_path / "premises.txt").write_text("The nurse is sitting on a bench.\n")
    out = tmp_path / "out"
    args = ["debias", "--model", str(toy["base"]), "--train", str(toy["train"]), "--out", str(out),
            "--premises", str(tmp_path / "premises.txt"), "--max-steps", "2", "--save-steps", "1",
            "--batch-size", "8", "--max-length", "32", "--device", "cpu", "--no-cache", "--bootstrap", "0"]  # fmt: skip
    assert run_cli(args)[0] == 0
    model = out / "models" / "base-aug-s42"
    weights = (model / "model.safetensors").read_bytes()
    shutil.copy(toy["base"] / "model.safetensors", model / "model.safetensors")
    code, output = run_cli(args)
    assert code == 0, output
    assert "finetune.json does not check out: model.safetensors changed since" in " ".join(output.split())
    assert (model / "model.safetensors").read_bytes() == weights


def test_a_debias_model_record_cut_short_is_redone_by_the_rerun(toy: dict[str, Path], tmp_path: Path) -> None:
    (tmp_path / "premises.txt").write_text("The nurse is sitting on a bench.\n")
    out = tmp_path / "out"
    args = ["debias", "--model", str(toy["base"]), "--train", str(toy["train"]), "--out", str(out),
            "--premises", str(tmp_path / "premises.txt"), "--max-steps", "2", "--save-steps", "1",
            "--batch-size", "8", "--max-length", "32", "--device", "cpu", "--no-cache", "--bootstrap", "0"]  # fmt: skip
    assert run_cli(args)[0] == 0
    record = out / "models" / "base-base-s42" / "finetune.json"
    record.write_text(record.read_text(encoding="utf-8")[:200], encoding="utf-8")
    code, output = run_cli(args)
    assert code == 0, output
    assert "finetune.json is not valid JSON" in " ".join(output.split())
    assert json.loads(record.read_text(encoding="utf-8"))["steps"] == 2


def test_fine_tuning_on_a_set_whose_every_row_has_one_label_warns(
    toy: dict[str, Path], tmp_path: Path
) -> None:
    from nlibias.debias.finetune import finetune
    from nlibias.debias.finetune_checks import OneLabelWarning

    rows = [json.loads(line) for line in toy["train"].read_text().splitlines()]
    one = tmp_path / "one.jsonl"
    one.write_text("".join(json.dumps({**r, "label": "neutral"}) + "\n" for r in rows))
    with pytest.warns(OneLabelWarning, match=f"every one of the {len(rows)} labelled rows .* is 'neutral'"):
        finetune(str(toy["base"]), one, tmp_path / "model", **FAST)
    code, output = run_cli(
        ["finetune", "--model", str(toy["base"]), "--train", str(one), "--out", str(tmp_path / "cli"),
         "--max-steps", "2", "--batch-size", "8", "--max-length", "32"]
    )  # fmt: skip
    assert code == 0 and "warning: every one of the" in " ".join(output.split()), output
