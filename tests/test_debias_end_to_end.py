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
    common = ["--eval", str(train), "--learning-rate", "3e-3", "--batch-size", "8", "--epochs", "1", "--json"]
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


def test_debias_recipe_chains_the_steps_and_skips_finished_ones(tmp_path: Path) -> None:
    rows = learnable_nli_rows(60, seed=4)
    train = tmp_path / "train.jsonl"
    train.write_text("".join(json.dumps(r) + "\n" for r in rows))
    (tmp_path / "premises.txt").write_text("\n".join(PREMISES) + "\n")
    texts = [r["premise"] for r in rows] + [r["hypothesis"] for r in rows] + PREMISES
    base = build_tiny_nli_classifier(tmp_path / "tiny", texts, seed=3, init_std=0.02)
    args = ["debias", "--model", str(base), "--train", str(train), "--out", str(tmp_path / "out"),
            "--premises", str(tmp_path / "premises.txt"), "--max-steps", "2", "--batch-size", "8",
            "--device", "cpu", "--no-cache", "--bootstrap", "20"]  # fmt: skip
    output = invoke(args)
    assert "paper 004 Table 7 layout" in output and "tiny-aug - tiny-base" in output
    out = tmp_path / "out"
    finished = {
        p: p.stat().st_mtime_ns
        for p in [out / "augmented" / "train.jsonl", *out.glob("models/*/finetune.json")]
    }
    assert len(finished) == 3
    invoke(args)  # a second run redoes only the audit and the comparison
    assert {p: p.stat().st_mtime_ns for p in finished} == finished
    comparison = json.loads((out / "audit" / "debias_comparison.json").read_text())
    assert [(Path(p["before"]).name, Path(p["after"]).name) for p in comparison["pairs"]] == [
        ("tiny-base", "tiny-aug")
    ]
