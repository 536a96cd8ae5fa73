"""bench/gpu_throughput.py in its small mode, end to end on the CPU: a tiny RoBERTa-shaped
classifier and a tiny Llama-shaped LM, in bfloat16 and float32, through every part (classifier
audit, scored yes/no audit beside lm-eval when it is importable and beside one prompt at a time,
generated answers); the printed table's figures are positive and the JSON holds every field.
The real shapes run the same code on a GPU: ``python bench/gpu_throughput.py --device cuda --full``.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("torch")
pytest.importorskip("transformers")

BENCH = Path(__file__).resolve().parents[1] / "bench" / "gpu_throughput.py"
ROW_FIELDS = {"part", "model", "dtype", "items", "seconds", "items_per_s", "tokens", "tokens_per_s",
              "forward_seconds", "flops", "tflops", "tflops_forward", "peak_tflops", "share_of_peak"}  # fmt: skip
FIGURES = ("items", "seconds", "items_per_s", "tokens_per_s", "tflops", "tflops_forward", "share_of_peak")


@pytest.fixture(scope="module")
def small_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[str, dict]:
    out = tmp_path_factory.mktemp("bench") / "gpu_throughput_small.json"
    command = [sys.executable, str(BENCH), "--small", "--models", "roberta-large,llama-1b", "--out", str(out)]
    done = subprocess.run(
        command, capture_output=True, text=True, timeout=900, env={**os.environ, "HF_HUB_OFFLINE": "1"}
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout, json.loads(out.read_text())


def test_every_part_has_a_row_with_every_field(small_run: tuple[str, dict]) -> None:
    import importlib.util

    _, payload = small_run
    parts = {(r["part"], r["model"], r["dtype"]) for r in payload["rows"]}
    lm_eval = importlib.util.find_spec("lm_eval") is not None
    for dtype in ("bfloat16", "float32"):
        assert ("nli", "roberta-large", dtype) in parts
        for part in ("scored", "scored-one-at-a-time", "generated"):
            assert (part, "llama-1b", dtype) in parts
        assert (("scored-lm-eval", "llama-1b", dtype) in parts) == lm_eval
    for row in payload["rows"]:
        assert set(row) >= ROW_FIELDS, ROW_FIELDS - set(row)
    generated = [r for r in payload["rows"] if r["part"] == "generated"]
    for row in generated:  # 8 samples (4 pro/anti pairs), one batch: 8 tokens a forward, <= 64 forwards
        assert row["tokens"] == 8 * row["decode_forwards"] and 1 <= row["decode_forwards"] <= 64
        assert row["bandwidth_bound_seconds"] > 0
    assert payload["mode"] == "small" and payload["samples"] == 32
    assert set(payload["hardware"]["peak_tflops"]) == {"bfloat16", "float32"}
    assert payload["hardware"]["bandwidth_gbs"] > 0
    assert payload["machine"]["device"] == "cpu"


def test_the_printed_figures_are_positive(small_run: tuple[str, dict]) -> None:
    stdout, payload = small_run
    lines = stdout.splitlines()
    header = next(i for i, line in enumerate(lines) if line.startswith("part "))
    columns = lines[header].split()
    table = lines[header + 1 : header + 1 + len(payload["rows"])]
    assert len(table) == len(payload["rows"])
    for line in table:
        cells = dict(zip(columns, line.split(), strict=False))
        for name in FIGURES:
            assert float(cells[name]) > 0, (name, line)
    for row in payload["rows"]:
        for name in FIGURES:
            assert row[name] > 0, (name, row)
