"""Fine-tuning's seams: options, data and model paths refused before any work, incomplete
checkpoints never resumed from, reruns that reuse, refuse or (forced) redo, and the provenance
``finetune.json`` records."""

from __future__ import annotations

import json
import math
import shutil
from pathlib import Path
from typing import Any

import pytest

from nlibias.debias.finetune import CHECKPOINTS, RECORD_FILE, finetune
from nlibias.debias.finetune_record import is_complete, usable_checkpoint
from nlibias.errors import ConfigError, DamagedFileError, SourceError
from nlibias.testing.nli_sets import learnable_nli_rows
from nlibias.testing.tiny_models import build_tiny_nli_classifier

FAST: dict[str, Any] = {"learning_rate": 3e-3, "batch_size": 8, "max_length": 32, "progress": False}


@pytest.fixture(autouse=True)
def one_thread() -> Any:
    import torch

    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


@pytest.fixture(scope="module")
def toy(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("seams")
    rows = learnable_nli_rows(64, seed=1)
    train = root / "train.jsonl"
    train.write_text("".join(json.dumps(r) + "\n" for r in rows))
    texts = [r["premise"] for r in rows] + [r["hypothesis"] for r in rows]
    base = build_tiny_nli_classifier(root / "base", texts, seed=3, init_std=0.02)
    return {"base": base, "train": train, "root": root}


@pytest.mark.parametrize(
    ("option", "value"),
    [
        ("max_length", 0),
        ("max_steps", 0),
        ("max_steps", -2),
        ("epochs", 0),
        ("epochs", math.nan),
        ("learning_rate", -1.0),
        ("learning_rate", math.inf),
        ("seed", -1),
        ("batch_size", 0),
        ("save_steps", 0),
        ("warmup_ratio", 1.5),
        ("lr_scheduler", "sometimes"),
    ],
)
def test_options_are_refused_by_name_before_any_work(
    toy: dict[str, Path], tmp_path: Path, option: str, value: Any
) -> None:
    out = tmp_path / "out"
    with pytest.raises(ConfigError) as error:
        finetune(str(toy["base"]), toy["train"], out, **{**FAST, option: value})
    assert error.value.parameter == option
    assert not out.exists()  # refused before anything was written


@pytest.mark.parametrize(
    ("audit_options", "named"), [({"devise": "cpu"}, "devise"), ({"device": 3}, "device")]
)
def test_audit_options_are_refused_before_any_step(
    toy: dict[str, Path], tmp_path: Path, audit_options: dict[str, Any], named: str
) -> None:
    # Once checked only when the audit step began, after every fine-tune had run.
    from nlibias.jobs.debias import run_debias

    out = tmp_path / "out"
    with pytest.raises(ConfigError) as error:
        run_debias([str(toy["base"])], toy["train"], out, audit_options=audit_options, progress=False)
    assert error.value.parameter == named
    assert not out.exists()


def bad_file(root: Path, name: str, text: str, encoding: str = "utf-8") -> Path:
    path = root / name
    path.write_text(text, encoding=encoding)
    return path


def test_bad_training_and_eval_data_are_refused_with_file_line_field(
    toy: dict[str, Path], tmp_path: Path
) -> None:
    good = '{"premise": "A man naps.", "hypothesis": "He sleeps.", "label": "entailment"}\n'
    no_label = bad_file(tmp_path, "nolabel.jsonl", '{"premise": "A man naps.", "hypothesis": "He sleeps."}\n')
    maybe = bad_file(tmp_path, "maybe.jsonl", good + good.replace('"entailment"', '"maybe"'))
    empty = bad_file(tmp_path, "empty.jsonl", "")
    other_columns = bad_file(tmp_path, "other.csv", "text,target\nA man naps.,0\n")
    out = tmp_path / "out"
    with pytest.raises(SourceError, match="label: missing"):
        finetune(str(toy["base"]), no_label, out, **FAST)
    with pytest.raises(SourceError) as error:
        finetune(str(toy["base"]), maybe, out, **FAST)
    assert error.value.line == 2 and "unknown label 'maybe'" in str(error.value)
    # the reader refuses a set without rows (SourceError); a set of unlabelled rows is a ConfigError
    with pytest.raises((SourceError, ConfigError), match=r"no rows|is empty"):
        finetune(str(toy["base"]), empty, out, **FAST)
    unlabelled = bad_file(tmp_path, "unlabelled.jsonl", good.replace('"entailment"', '"-"'))
    with pytest.raises(ConfigError, match="none with a gold label") as empty_error:
        finetune(str(toy["base"]), unlabelled, out, **FAST)
    assert empty_error.value.parameter == "train"
    # an evaluation set that cannot be read is refused before training, not after the weights
    with pytest.raises(SourceError, match="premise"):
        finetune(str(toy["base"]), toy["train"], out, eval_path=other_columns, **FAST)
    assert not out.exists()


def test_the_training_set_as_its_own_evaluation_set_is_refused(toy: dict[str, Path], tmp_path: Path) -> None:
    """Its accuracy would be a training accuracy shown as held-out: the file itself, a copy of it
    (the same SHA-256) and the same rows through debias are refused, naming both; other rows pass."""
    from nlibias.jobs.debias import run_debias

    copy = Path(shutil.copy(toy["train"], tmp_path / "copy.jsonl"))
    out = tmp_path / "out"
    for same in (toy["train"], copy):
        with pytest.raises(
            ConfigError, match=r"eval_path .* holds the rows of train .*train\.jsonl"
        ) as error:
            finetune(str(toy["base"]), toy["train"], out, **FAST, eval_path=same)
        assert error.value.parameter == "eval_path" and error.value.names == ("train",)
    with pytest.raises(ConfigError, match="held-out"):
        run_debias([str(toy["base"])], toy["train"], out, eval_path=copy)
    assert not out.exists()
    held_out = tmp_path / "dev.jsonl"
    held_out.write_text("".join(json.dumps(r) + "\n" for r in learnable_nli_rows(6, seed=9)))
    record = finetune(str(toy["base"]), toy["train"], out, eval_path=held_out, max_steps=1, **FAST)
    assert record["eval_rows"] == 6


def test_a_model_path_that_does_not_exist_is_named(toy: dict[str, Path], tmp_path: Path) -> None:
    for missing in (str(tmp_path / "nowhere"), "./nowhere-model", "~/nowhere-model-x"):
        with pytest.raises(ConfigError, match="does not exist") as error:
            finetune(missing, toy["train"], tmp_path / "out", **FAST)
        assert error.value.parameter == "model"


def test_a_model_of_another_role_is_refused_by_its_reference_before_anything_loads(
    toy: dict[str, Path], tmp_path: Path
) -> None:
    """finetune and debias read their model as a Hugging Face checkpoint (one declaration, the
    role "checkpoint"): a server, a GGUF file or a KIND: prefix is refused naming the parameter;
    a masked LM's directory (the paper fine-tunes roberta-base) is a checkpoint like any other."""
    from nlibias import debias_models
    from nlibias.debias.finetune_checks import check_base_model

    gguf = tmp_path / "m.gguf"
    gguf.write_bytes(b"GGUF" + bytes(60))
    for model in ("openai:http://127.0.0.1:9/v1#m", f"gguf:{gguf}", str(gguf), "smollm2", "hf:org/name"):
        with pytest.raises(ConfigError, match="takes a Hugging Face checkpoint") as error:
            finetune(model, toy["train"], tmp_path / "out", **FAST)
        assert error.value.parameter == "model", model
        with pytest.raises(ConfigError, match="takes a Hugging Face checkpoint") as error:
            debias_models([model], toy["train"], tmp_path / "deb", progress=False)
        assert error.value.parameter == "models", model
    assert not (tmp_path / "out").exists() and not (tmp_path / "deb" / "stages").exists()
    masked = tmp_path / "mlm"
    masked.mkdir()
    (masked / "config.json").write_text('{"architectures": ["RobertaForMaskedLM"]}', encoding="utf-8")
    check_base_model(str(masked))  # not refused: any head is fine-tuned as a sequence classifier


def test_a_hub_id_is_not_taken_for_a_path_when_a_folder_of_its_org_exists(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``org/name`` is a hub id even where ./org exists (transformers sends it to the hub when
    ./org/name does not exist); a finetune once refused it as a missing model directory."""
    from nlibias.debias.finetune_checks import check_base_model

    (tmp_path / "FacebookAI").mkdir()
    monkeypatch.chdir(tmp_path)
    check_base_model("FacebookAI/roberta-base")  # not refused
    with pytest.raises(ConfigError, match="does not exist") as error:
        check_base_model("./FacebookAI/roberta-base")
    assert error.value.parameter == "model"


def test_a_truncated_weights_file_names_the_file(toy: dict[str, Path], tmp_path: Path) -> None:
    broken = tmp_path / "broken"
    shutil.copytree(toy["base"], broken)
    weights = broken / "model.safetensors"
    weights.write_bytes(weights.read_bytes()[:1000])
    with pytest.raises(DamagedFileError) as error:
        finetune(str(broken), toy["train"], tmp_path / "out", max_steps=1, **FAST)
    assert error.value.path == str(weights)


def test_checkpoint_completeness_and_resume_from_the_newest_complete_one(
    toy: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # stderr as a terminal (bars wanted): the Trainer's bar is drawn there (in a log it prints
    # lines instead: test_a_fine_tune_into_a_log_prints_its_steps_as_lines)
    monkeypatch.setattr("nlibias.debias.finetune.bars_wanted", lambda wanted=True: wanted)
    out = tmp_path / "m"
    options = {**FAST, "max_steps": 4, "save_steps": 2}
    first = finetune(str(toy["base"]), toy["train"], out, **options)
    assert first["steps"] == 4
    checkpoints = out / CHECKPOINTS
    assert all(is_complete(p) for p in checkpoints.glob("checkpoint-*"))
    # simulate kills while the Trainer wrote checkpoint-6 (only training_args.bin and weights cut
    # short) and checkpoint-8 (everything but trainer_state.json)
    six = checkpoints / "checkpoint-6"
    six.mkdir()
    (six / "training_args.bin").write_bytes(b"x")
    (six / "model.safetensors").write_bytes(
        (checkpoints / "checkpoint-4" / "model.safetensors").read_bytes()[:500]
    )
    eight = checkpoints / "checkpoint-8"
    shutil.copytree(checkpoints / "checkpoint-4", eight)
    (eight / "trainer_state.json").unlink()
    assert not is_complete(six) and not is_complete(eight)
    newest, removed = usable_checkpoint(checkpoints)
    assert newest == checkpoints / "checkpoint-4" and removed == ["checkpoint-6", "checkpoint-8"]
    assert sorted(p.name for p in checkpoints.iterdir() if p.name.startswith("checkpoint")) == [
        "checkpoint-2",
        "checkpoint-4",
    ]
    # a resume after such a kill: the record is gone, the incomplete folder is skipped
    (out / RECORD_FILE).unlink()
    shutil.copytree(checkpoints / "checkpoint-2", eight)
    (eight / "optimizer.pt").unlink()
    capsys.readouterr()
    again = finetune(str(toy["base"]), toy["train"], out, **{**options, "progress": True})
    assert again["resumed_from"] == "checkpoint-4" and again["discarded_checkpoints"] == ["checkpoint-8"]
    printed = capsys.readouterr()
    assert "train_runtime" not in printed.out  # the Trainer's log dicts stay off stdout ...
    assert "it/s" in printed.err or "s/it" in printed.err  # ... while its progress bar stays on stderr


def test_rerun_reuses_refuses_or_with_force_redoes(toy: dict[str, Path], tmp_path: Path) -> None:
    out = tmp_path / "m"
    options = {**FAST, "max_steps": 2, "save_steps": 2}
    first = finetune(str(toy["base"]), toy["train"], out, **options)
    stamp = (out / RECORD_FILE).stat().st_mtime_ns
    assert finetune(str(toy["base"]), toy["train"], out, **options) == first  # reused, not retrained
    assert (out / RECORD_FILE).stat().st_mtime_ns == stamp
    with pytest.raises(ConfigError, match=r"settings.learning_rate: 0.003 -> 0.001") as error:
        finetune(str(toy["base"]), toy["train"], out, **{**options, "learning_rate": 1e-3})
    assert error.value.parameter == "out_dir"
    assert json.loads((out / RECORD_FILE).read_text())["settings"]["learning_rate"] == 0.003
    forced = finetune(str(toy["base"]), toy["train"], out, force=True, **{**options, "learning_rate": 1e-3})
    assert forced["settings"]["learning_rate"] == 1e-3 and forced["resumed_from"] is None
    assert json.loads((out / RECORD_FILE).read_text())["fingerprint"] == forced["fingerprint"]


def test_record_holds_the_provenance(
    toy: dict[str, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import hashlib

    import nlibias
    from nlibias.models.hf_common import hash_local_model

    monkeypatch.chdir(toy["root"])
    record = finetune(
        "base", "train.jsonl", "rel-out", max_steps=1, warmup_steps=1, lr_scheduler="cosine", **FAST
    )
    saved = json.loads((toy["root"] / "rel-out" / RECORD_FILE).read_text())
    assert saved == json.loads(json.dumps(record))
    assert saved["train"] == str(toy["train"]) and saved["out"] == str(toy["root"] / "rel-out")
    assert saved["train_sha256"] == hashlib.sha256(toy["train"].read_bytes()).hexdigest()
    assert saved["train_rows"] == 64 and saved["versions"]["nlibias"] == nlibias.__version__
    assert saved["base_model"] == {
        "name": str(toy["base"]),
        "kind": "local",
        "revision": None,
        "files_sha256": hash_local_model(toy["base"]),
    }
    settings = saved["settings"]
    assert (settings["lr_scheduler"], settings["warmup_steps"], settings["save_steps"]) == ("cosine", 1, 500)
    assert (settings["max_length"], settings["seed"], settings["split"]) == (32, 42, "train")
    # the fine-tuned model's identity is its weights, config and tokenizer: not the record of how
    # long training took (a resumed and an uninterrupted run must share it, and the cache with it)
    out = toy["root"] / "rel-out"
    identity = hash_local_model(out)
    (out / RECORD_FILE).write_text(json.dumps({**saved, "train_seconds": 1e6}))
    assert hash_local_model(out) == identity
    config = json.loads((out / "config.json").read_text())
    (out / "config.json").write_text(json.dumps({**config, "problem_type": "regression"}))
    assert hash_local_model(out) != identity


def test_an_audit_refuses_nan_probabilities_naming_the_model(toy: dict[str, Path], tmp_path: Path) -> None:
    import torch
    from transformers import AutoModelForSequenceClassification

    import nlibias
    from nlibias.errors import DataError

    broken = tmp_path / "nan-model"
    shutil.copytree(toy["base"], broken)
    model = AutoModelForSequenceClassification.from_pretrained(broken)
    with torch.no_grad():
        model.classifier.bias.fill_(float("nan"))  # what a diverged fine-tune leaves
    model.save_pretrained(broken)
    (tmp_path / "premises.txt").write_text("The nurse is sitting on a bench.\n")
    samples = nlibias.expand(
        "occupations", tmp_path / "premises.txt", out_dir=tmp_path / "occ", balance=False
    )
    with pytest.raises(DataError, match="not numbers") as error:
        nlibias.audit(samples.path, [str(broken)], cache=False, device="cpu", bootstrap=0, progress=False)
    assert error.value.model == str(broken)


KILLED_WHILE_SAVING = """
import os, signal, sys
from transformers import Trainer
from nlibias.debias.finetune import finetune

real = Trainer._save_rng_state

def save_then_die(self, output_dir):
    real(self, output_dir)
    if output_dir.endswith("checkpoint-4"):  # weights, optimizer, RNG written; trainer_state.json not yet
        os.kill(os.getpid(), signal.SIGKILL)

Trainer._save_rng_state = save_then_die
base, train, out = sys.argv[1:4]
finetune(base, train, out, learning_rate=3e-3, batch_size=8, max_length=32, max_steps=6, save_steps=2,
         progress=False)
"""


def test_a_real_sigkill_while_saving_a_checkpoint_resumes_from_the_complete_one(
    toy: dict[str, Path], tmp_path: Path
) -> None:
    import os
    import signal
    import subprocess
    import sys

    out = tmp_path / "killed"
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    run = subprocess.run(
        [sys.executable, "-c", KILLED_WHILE_SAVING, str(toy["base"]), str(toy["train"]), str(out)],
        env=env, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert run.returncode == -signal.SIGKILL, run.stderr[-2000:]
    four = out / CHECKPOINTS / "checkpoint-4"
    assert (four / "model.safetensors").is_file() and not (four / "trainer_state.json").exists()
    record = finetune(
        str(toy["base"]), toy["train"], out, max_steps=6, save_steps=2, **FAST
    )  # the same call after the kill
    assert record["resumed_from"] == "checkpoint-2" and record["discarded_checkpoints"] == ["checkpoint-4"]
    assert record["steps"] == 6


def test_a_csv_with_a_byte_order_mark_is_read_like_one_without(tmp_path: Path) -> None:
    from nlibias.debias.finetune_checks import check_training_set

    def counts(path: Path) -> tuple[int | None, int | None, tuple[str, ...]]:
        checked = check_training_set(path, "train", "train")
        return checked.rows, checked.labelled, checked.labels

    text = "premise,hypothesis,label\nA man naps.,He sleeps.,entailment\nA dog runs.,It sits.,contradiction\n"
    plain = bad_file(tmp_path, "plain.csv", text)
    bom = bad_file(tmp_path, "bom.csv", text, encoding="utf-8-sig")
    assert bom.read_bytes()[:3] == b"\xef\xbb\xbf"
    # 2 rows, both labelled, with and without the mark (the mark once made "premise" unknown)
    assert counts(bom) == counts(plain)
    assert counts(bom)[1] == 2


@pytest.mark.parametrize("suffix", ["tsv", "csv"])
def test_a_training_file_that_is_not_utf8_is_refused_at_its_line(tmp_path: Path, suffix: str) -> None:
    from nlibias.debias.finetune_checks import check_training_set
    from nlibias.errors import SourceError

    sep = "\t" if suffix == "tsv" else ","
    rows = [sep.join(("premise", "hypothesis", "label"))] + [
        sep.join(("A man naps.", "He sleeps.", "entailment"))
    ] * 3000
    path = tmp_path / f"train.{suffix}"
    # past the decoder's first chunk: a streamed TSV once escaped as a bare UnicodeDecodeError
    path.write_bytes(
        ("\n".join(rows) + "\n").encode() + sep.join(("Bad \xff", "X.", "neutral")).encode("latin-1") + b"\n"
    )
    with pytest.raises(SourceError) as caught:
        check_training_set(path, "train", "train")
    # header on line 1, 3,000 rows on lines 2-3,001, the bad byte 0xff at column 5 of line 3,002
    assert str(caught.value) == f"{path}:3002: not UTF-8 text: byte 0xff at column 5 (save the file as UTF-8)"


def test_an_audit_stage_killed_before_its_complete_manifest_is_not_finished(tmp_path: Path) -> None:
    """A run directory's manifest exists from the start of its write (``complete: false``); the
    20-kill fault run killed debias just before the complete one was renamed in, and the rerun took
    the audit as done, keeping the first manifest and a stray .part file."""
    from nlibias.io.run_manifest import begin_write, finish_write
    from nlibias.io.stages import Stage
    from nlibias.jobs.debias import _complete_run

    run = tmp_path / "audit"
    run.mkdir()
    stage = Stage("audit", run, run / "manifest.json", {}, complete=lambda: _complete_run(run))
    assert not stage.has_finished()  # nothing written yet
    begin_write(run)
    assert (run / "manifest.json").is_file() and not stage.has_finished()
    (run / "metrics.json").write_text("{}", encoding="utf-8")
    finish_write(run, ["metrics.json"])
    assert stage.has_finished()
    (run / "manifest.json").write_text("not json", encoding="utf-8")
    assert not stage.has_finished()  # a damaged manifest is not a finished stage


def test_a_fine_tune_into_a_log_prints_its_steps_as_lines(
    toy: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # stderr captured here is no terminal, so the Trainer's bar is off; a log still hears of the
    # steps (a line about every 30 s, every step with the interval at 0)
    import nlibias.runtime.progress as progress

    monkeypatch.setattr(progress, "LOG_INTERVAL", 0.0)
    monkeypatch.setattr(progress, "bars_wanted", lambda wanted=True: False)
    monkeypatch.setattr("nlibias.debias.finetune.bars_wanted", lambda wanted=True: False)
    finetune(str(toy["base"]), toy["train"], tmp_path / "m", **{**FAST, "max_steps": 3, "progress": True})
    printed = capsys.readouterr()
    assert "fine-tune: 3/3 steps (100%)" in printed.err and "fine-tune: 0/3 steps" in printed.err
