"""augment -> finetune (baseline and augmented) -> audit -> report --debias, on the CPU with a tiny
in-process model and a synthetic training set, through the command line as a user runs it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

import nlibias
from nlibias.cli.main import app
from nlibias.testing.nli_sets import learnable_nli_rows
from nlibias.testing.tiny_models import build_tiny_nli_classifier

runner = CliRunner()
PREMISES = [
    "The nurse is sitting on a bench.",
    "A carpenter is walking to the store.",
    "The secretary reads a letter.",
    "The mechanic waits outside.",
]


@pytest.fixture(autouse=True)
def one_thread() -> Any:
    """One torch thread: on a shared 2-core machine, two threads spin-wait and run 20x slower."""
    import torch

    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


def invoke(args: list[str]) -> str:
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    return result.stdout


def test_augment_finetune_audit_report(tmp_path: Path) -> None:
    rows = learnable_nli_rows(240, seed=1)
    train = tmp_path / "train.jsonl"
    train.write_text("".join(json.dumps(r) + "\n" for r in rows))
    dev = tmp_path / "dev.jsonl"  # held out: the training file itself is refused as --eval
    dev.write_text("".join(json.dumps(r) + "\n" for r in learnable_nli_rows(60, seed=2)))
    (tmp_path / "premises.txt").write_text("\n".join(PREMISES) + "\n")
    samples = nlibias.expand(
        "occupations", tmp_path / "premises.txt", out_dir=tmp_path / "occ", balance=False
    )
    texts = [r["premise"] for r in rows] + [r["hypothesis"] for r in rows]
    frame = samples.to_frame()
    texts += list(frame["premise"]) + list(frame["hypothesis"])
    base = build_tiny_nli_classifier(tmp_path / "base", texts, seed=3, init_std=0.02)

    output = invoke(["augment", "gender-swap", "--train", str(train), "--out", str(tmp_path / "aug")])
    assert "swapped rows" in output and "she->he" in output
    common = ["--eval", str(dev), "--learning-rate", "3e-3", "--batch-size", "8", "--epochs", "1", "--json"]
    for name, data in (("before", train), ("after", tmp_path / "aug")):
        record = json.loads(
            invoke(
                [
                    "finetune",
                    "--model",
                    str(base),
                    "--train",
                    str(data),
                    "--out",
                    str(tmp_path / name),
                    *common,
                ]
            )
        )
        assert record["eval_accuracy"] is not None
    after = json.loads((tmp_path / "after" / "finetune.json").read_text())
    assert after["train_rows"] > 240  # the originals and their swapped copies

    models = [str(tmp_path / "before"), str(tmp_path / "after")]
    invoke(["audit", "--samples", str(tmp_path / "occ"), "--model", models[0], "--model", models[1],
            "--out", str(tmp_path / "audit"), "--no-cache", "--device", "cpu", "--bootstrap", "50"])  # fmt: skip
    output = invoke(["report", str(tmp_path / "audit"), "--debias"])
    assert "paper 004 Table 7 layout" in output and "dP Male" in output
    comparison = json.loads((tmp_path / "audit" / "debias_comparison.json").read_text())
    [pair] = comparison["pairs"]
    assert (pair["before"], pair["after"]) == tuple(models)  # found from finetune.json
    metrics = json.loads((tmp_path / "audit" / "metrics.json").read_text())["models"]
    for key in ("S", "delta_p", "B"):  # the paired difference is the difference of the two models' values
        expected = metrics[models[1]]["overall"][key] - metrics[models[0]]["overall"][key]
        assert pair["difference"]["overall"][key] == pytest.approx(expected, abs=1e-9)
        low, high = pair["difference"]["overall"]["ci"][key]
        assert low <= pair["difference"]["overall"][key] <= high
    assert pair["accuracy"]["before"] is not None and set(pair["difference"]["by_dominant_gender"]) == {
        "female",
        "male",
    }


def test_debias_recipe_with_two_seeds_skips_finished_steps_and_refuses_changes(tmp_path: Path) -> None:
    rows = learnable_nli_rows(60, seed=4)
    train = tmp_path / "train.jsonl"
    train.write_text("".join(json.dumps(r) + "\n" for r in rows))
    dev = tmp_path / "dev.jsonl"
    dev.write_text("".join(json.dumps(r) + "\n" for r in learnable_nli_rows(20, seed=6)))
    (tmp_path / "premises.txt").write_text("\n".join(PREMISES) + "\n")
    texts = [r["premise"] for r in rows] + [r["hypothesis"] for r in rows] + PREMISES
    base = build_tiny_nli_classifier(tmp_path / "tiny", texts, seed=3, init_std=0.02)
    out = tmp_path / "out"
    args = ["debias", "--model", str(base), "--train", str(train), "--out", str(out),
            "--premises", str(tmp_path / "premises.txt"), "--max-steps", "2", "--batch-size", "8",
            "--learning-rate", "3e-3", "--device", "cpu", "--no-cache", "--bootstrap", "40",
            "--seeds", "2", "--eval", str(dev)]  # fmt: skip
    output = invoke(args)
    assert "paper 004 Table 7 layout" in output and "tiny-aug-s42 - tiny-base-s42" in output
    assert "tiny-aug-s43 - tiny-base-s43" in output and "mean (min–max) of 2 seeds" in output
    assert "train_runtime" not in output
    comparison = json.loads((out / "audit" / "debias_comparison.json").read_text())
    [group] = comparison["seed_groups"]
    assert group["seeds"] == [42, 43]
    s_values = group["measures"]["S"]["before"]["values"]
    # independent: the per-seed S values are each model's own overall S in metrics.json
    metrics = json.loads((out / "audit" / "metrics.json").read_text())["models"]
    assert s_values == [metrics[str(out / "models" / f"tiny-base-s{s}")]["overall"]["S"] for s in (42, 43)]
    assert group["measures"]["S"]["before"]["mean"] == pytest.approx(sum(s_values) / 2)
    finished = {
        p: p.stat().st_mtime_ns
        for p in [
            out / "augmented" / "train.jsonl",
            out / "audit" / "metrics.json",
            out / "audit" / "debias_comparison.json",
            *out.glob("models/*/finetune.json"),
        ]
    }
    assert len(finished) == 7  # augmented data, audit, comparison, 2 models x 2 seeds
    assert invoke(args) == output  # a second run reuses every step and prints the same tables
    assert {p: p.stat().st_mtime_ns for p in finished} == finished

    # another learning rate: refused before any work, naming what changed; the old models stay
    changed = ["--learning-rate" if a == "--learning-rate" else a for a in args]
    changed[changed.index("--learning-rate") + 1] = "1e-3"
    refused = runner.invoke(app, changed)
    assert refused.exit_code == 2, refused.output
    assert "learning_rate: 0.003 -> 0.001" in refused.output and "--force" in refused.output
    record = json.loads((out / "models" / "tiny-base-s42" / "finetune.json").read_text())
    assert record["settings"]["learning_rate"] == 0.003
    # another training set: refused too (augmentation and both models would be stale)
    other = tmp_path / "other.jsonl"
    other.write_text("".join(json.dumps(r) + "\n" for r in learnable_nli_rows(60, seed=5)))
    moved = [
        str(other) if a == str(train) and i == args.index("--train") + 1 else a for i, a in enumerate(args)
    ]
    refused = runner.invoke(app, moved)
    assert refused.exit_code == 2 and "augment: train.path" in refused.output, refused.output
    assert "train.sha256" in refused.output and "models/tiny-base-s42" in refused.output
    assert {p: p.stat().st_mtime_ns for p in finished} == finished  # nothing was redone or mixed
    # with --force, only the stages whose inputs changed (and those that read them) are redone
    invoke([*changed, "--force"])
    record = json.loads((out / "models" / "tiny-base-s42" / "finetune.json").read_text())
    assert record["settings"]["learning_rate"] == 0.001
    assert (out / "augmented" / "train.jsonl").stat().st_mtime_ns == finished[
        out / "augmented" / "train.jsonl"
    ]


def test_debias_refuses_bad_options_before_any_work(tmp_path: Path) -> None:
    train = tmp_path / "train.jsonl"
    train.write_text("".join(json.dumps(r) + "\n" for r in learnable_nli_rows(8, seed=4)))
    for option, value in (("--epochs", "0"), ("--seeds", "0"), ("--max-length", "0"), ("--seed", "-1"),
                          ("--max-steps", "0"), ("--learning-rate", "inf"), ("--batch-size", "0"), ("--her", "maybe")):  # fmt: skip
        result = runner.invoke(
            app, ["debias", "--model", str(tmp_path / "no-model"), "--train", str(train), "--out",
                  str(tmp_path / "out"), option, value],
        )  # fmt: skip
        assert result.exit_code == 2, result.output
        # the option, not the missing model, is named; by its flag only, never its Python name (issue #39)
        name = option.lstrip("-").replace("-", "_")
        assert option in result.output and name not in result.output.replace(option, ""), result.output
        assert not (tmp_path / "out").exists()
    # a match rule with every row selected was ignored by the augment step (one check, augment's)
    result = runner.invoke(
        app, ["debias", "--model", str(tmp_path / "no-model"), "--train", str(train), "--out", str(tmp_path / "out"),
              "--select", "all", "--match", "paper"],
    )  # fmt: skip
    assert (
        result.exit_code == 2 and "--match 'paper' applies to selecting rows by occupation" in result.output
    )
    assert not (tmp_path / "out").exists()


def test_report_debias_finds_pairs_and_accuracy_from_any_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from nlibias.debias.augment import augment_gender_swap
    from nlibias.debias.finetune import finetune

    work = tmp_path / "work"
    (work / "runs").mkdir(parents=True)
    monkeypatch.chdir(work)  # every path below is relative to work/, as a user types them
    rows = learnable_nli_rows(60, seed=4)
    Path("runs/train.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    Path("runs/dev.jsonl").write_text("".join(json.dumps(r) + "\n" for r in learnable_nli_rows(20, seed=6)))
    Path("premises.txt").write_text("\n".join(PREMISES) + "\n")
    nlibias.expand("occupations", "premises.txt", out_dir="runs/occ", balance=False)
    texts = [r["premise"] for r in rows] + [r["hypothesis"] for r in rows] + PREMISES
    build_tiny_nli_classifier(Path("runs/tiny"), texts, seed=3, init_std=0.02)
    augment_gender_swap("runs/train.jsonl", "runs/aug", progress=False)
    fast = {"learning_rate": 3e-3, "batch_size": 8, "max_steps": 2, "progress": False}
    for name, data in (("before", "runs/train.jsonl"), ("after", "runs/aug")):
        finetune("runs/tiny", data, f"runs/{name}", eval_path="runs/dev.jsonl", **fast)
    invoke(["audit", "--samples", "runs/occ", "--model", "runs/before", "--model", "runs/after",
            "--out", "runs/audit", "--no-cache", "--device", "cpu", "--bootstrap", "40"])  # fmt: skip
    # an older finetune.json held the paths as typed: relative to the directory it ran from
    after_record = work / "runs" / "after" / "finetune.json"
    old = json.loads(after_record.read_text())
    after_record.write_text(json.dumps({**old, "train": "runs/aug", "eval": "runs/dev.jsonl"}))

    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    audit = str(work / "runs" / "audit")
    found = invoke(["report", audit, "--debias"])
    comparison = json.loads((work / "runs" / "audit" / "debias_comparison.json").read_text())
    [pair] = comparison["pairs"]
    assert (pair["before"], pair["after"]) == ("runs/before", "runs/after")
    accuracy = {r: 100 * json.loads((work / "runs" / r / "finetune.json").read_text())["eval_accuracy"]
                for r in ("before", "after")}  # fmt: skip
    assert pair["accuracy"] == pytest.approx({"before": accuracy["before"], "after": accuracy["after"]})
    assert f"{accuracy['before']:.2f}" in found
    named = invoke(["report", audit, "--pair", "runs/before=runs/after"])
    assert named == found  # the same pair, the same numbers
    # a comparison that would lose what the file holds (here: no finetune.json, no accuracy) is not written
    (work / "runs" / "before" / "finetune.json").rename(work / "runs" / "before-record.json")
    kept = runner.invoke(app, ["report", audit, "--pair", "runs/before=runs/after"])
    assert kept.exit_code == 0 and "kept" in kept.output
    assert json.loads((work / "runs" / "audit" / "debias_comparison.json").read_text()) == comparison
