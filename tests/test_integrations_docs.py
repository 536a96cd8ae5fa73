"""The command blocks of docs/integrations.md run as written, in a fresh directory: the lm-eval
block with a tiny causal LM in place of ``smollm2`` (and verbatim, ``slow``), the Inspect block
with Inspect's mock model and no network for tiktoken, the local-model Inspect block with the tiny
model in place of ``smollm2`` (and verbatim, ``slow``)."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import skip_without_smollm2
from test_integrations_inspect import inspect_environment

DOC = Path(__file__).resolve().parents[1] / "docs" / "integrations.md"
BIN = Path(sys.executable).parent


def doc_block(name: str) -> list[str]:
    """The command lines of the bash block after ``<!-- tested: NAME -->``."""
    match = re.search(rf"<!-- tested: {name} -->\n```bash\n(.*?)```", DOC.read_text(), re.S)
    assert match, f"no tested block {name!r} in {DOC}"
    return [line for line in match.group(1).splitlines() if line.strip()]


def run_lines(lines: list[str], cwd: Path, env: dict[str, str]) -> None:
    env = {**env, "PATH": f"{BIN}{os.pathsep}{env['PATH']}", "HF_DATASETS_OFFLINE": "1"}
    for line in lines:
        done = subprocess.run(
            ["bash", "-c", line], cwd=cwd, env=env, capture_output=True, text=True, timeout=900
        )
        assert done.returncode == 0, f"{line}\n{done.stdout[-2000:]}\n{done.stderr[-3000:]}"


def scored_models(run_dir: Path) -> dict[str, str]:
    return json.loads((run_dir / "metrics.json").read_text())["predictor_kinds"]


@pytest.mark.skipif(
    not (BIN / "lm_eval").exists(), reason='lm-eval is not installed (pip install "nlibias[lm-eval]")'
)
@pytest.mark.timeout(1800)
def test_lm_eval_block_runs(tiny_causal_dir: Path, tmp_path: Path) -> None:
    lines = [line.replace("--model smollm2", f"--model {tiny_causal_dir}") for line in doc_block("lm-eval")]
    assert any(str(tiny_causal_dir) in line for line in lines)
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(DOC.parents[1] / "src"), os.environ.get("PYTHONPATH", "")]),
    }
    run_lines(lines, tmp_path, env)
    metrics = json.loads((tmp_path / "bbnli-lm-eval-scored" / "metrics.json").read_text())
    assert metrics["run"]["samples_scored"] == 12
    assert scored_models(tmp_path / "bbnli-lm-eval-scored") == {
        f"lm-eval:{tiny_causal_dir.name}|prompt=true|scored": "generative"
    }


@pytest.mark.slow
@pytest.mark.skipif(
    not (BIN / "lm_eval").exists(), reason='lm-eval is not installed (pip install "nlibias[lm-eval]")'
)
@pytest.mark.timeout(1800)
def test_lm_eval_block_runs_verbatim_with_smollm2(tmp_path: Path) -> None:
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(DOC.parents[1] / "src"), os.environ.get("PYTHONPATH", "")]),
    }
    run_lines(doc_block("lm-eval"), tmp_path, env)
    [model] = scored_models(tmp_path / "bbnli-lm-eval-scored")
    assert model.startswith("lm-eval:SmolLM2") and model.endswith("|prompt=true|scored")


@pytest.mark.timeout(1800)
def test_inspect_block_runs(tmp_path: Path) -> None:
    work = _run_inspect_block("inspect", tmp_path)  # no network for tiktoken: nlibias' token count
    metrics = json.loads((work / "bbnli-inspect-scored" / "metrics.json").read_text())
    assert metrics["run"]["samples_scored"] == 12
    assert metrics["predictor_kinds"] == {"inspect:mockllm/model|prompt=true|generated": "generative"}


def _run_inspect_block(name: str, tmp_path: Path, replace: dict[str, str] | None = None) -> Path:
    pytest.importorskip("inspect_ai", reason='inspect-ai is not installed (pip install "nlibias[inspect]")')
    (tmp_path / "stand-ins").mkdir()
    (tmp_path / "work").mkdir()
    lines = doc_block(name)
    for old, new in (replace or {}).items():
        assert any(old in line for line in lines), old
        lines = [line.replace(old, new) for line in lines]
    run_lines(lines, tmp_path / "work", inspect_environment(tmp_path / "stand-ins"))
    return tmp_path / "work"


@pytest.mark.timeout(1800)
def test_inspect_local_model_block_runs(tiny_causal_dir: Path, tmp_path: Path) -> None:
    work = _run_inspect_block("inspect-local", tmp_path, {"nlibias/smollm2": f"nlibias/{tiny_causal_dir}"})
    metrics = json.loads((work / "bbnli-inspect-local-scored" / "metrics.json").read_text())
    assert metrics["run"]["samples_scored"] == 4
    assert metrics["predictor_kinds"] == {
        f"inspect:nlibias/{tiny_causal_dir}|prompt=true|generated": "generative"
    }


@pytest.mark.slow
@pytest.mark.timeout(1800)
def test_inspect_local_model_block_runs_verbatim_with_smollm2(tmp_path: Path) -> None:
    work = _run_inspect_block("inspect-local", tmp_path)
    metrics = json.loads((work / "bbnli-inspect-local-scored" / "metrics.json").read_text())
    assert metrics["run"]["samples_scored"] == 4
    assert metrics["predictor_kinds"] == {"inspect:nlibias/smollm2|prompt=true|generated": "generative"}


def test_the_documented_local_model_command_prints_a_model_directory() -> None:
    from nlibias.models.generative.sources import smollm2_gguf_path

    skip_without_smollm2()
    smollm2_gguf_path()
    match = re.search(r"```bash\n(python -m nlibias\.integrations\.offline [^\n]*)\n```", DOC.read_text())
    assert match, "the local-model command is not in the docs"
    done = subprocess.run(["bash", "-c", match.group(1)], capture_output=True, text=True, timeout=900,
                          env={**os.environ, "PATH": f"{BIN}{os.pathsep}{os.environ['PATH']}"})  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    folder = Path(done.stdout.strip())
    assert (folder / "config.json").is_file() and (folder / "model.safetensors").is_file()
