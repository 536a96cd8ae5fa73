"""Inspect AI, both directions: ``inspect eval nlibias/bbnli -T prompt=true --model ...`` runs the
tasks nlibias registers through Inspect's ``inspect_ai`` entry point, and ``nlibias score
--predictions LOG.eval`` reads the log back, its generated answers parsed as nlibias parses its
own. Tested with Inspect's built-in mock model, and with SmolLM2 behind llama.cpp's
OpenAI-compatible server where llama-cpp-python is installed."""

from __future__ import annotations

import glob
import json
import math
import os
import subprocess
import sys
import tomllib
from importlib.metadata import entry_points
from pathlib import Path
from typing import Any

import pytest

from nlibias.io.samples import read_samples, write_samples
from nlibias.io.tool_logs import predictions_format
from nlibias.jobs.score import run_score
from nlibias.models.generative.prompts import PROMPT_STYLES
from nlibias.runtime.model_set import ModelSet
from nlibias.runtime.options import ModelOptions, RunOptions

pytest.importorskip("inspect_ai", reason='inspect-ai is not installed (pip install "nlibias[inspect]")')

REPO = Path(__file__).resolve().parents[1]
INSPECT = Path(sys.executable).parent / "inspect"

# No stand-in for tiktoken: nlibias' tasks make Inspect's token count work offline when Inspect
# loads them (nlibias.integrations.offline). The environment below makes sure tiktoken's download
# fails (an empty cache, a proxy that refuses), on a machine with a network too.


@pytest.fixture(scope="module")
def bbnli_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Six BBNLI bias samples: three pro/anti pairs."""
    from nlibias.catalog.registry import get_benchmark

    samples = [s for s in get_benchmark("bbnli").expand_source(None).samples if s.stereotype]
    run = tmp_path_factory.mktemp("bbnli-run")
    write_samples(run, samples[:2] + samples[400:402] + samples[1500:1502])
    return run


def inspect_environment(extra: Path) -> dict[str, str]:
    """The environment of an ``inspect`` command: this checkout's sources, no network for
    tiktoken (an empty cache and a proxy that refuses), and the pyproject's entry point where the
    installed nlibias predates it (an editable install registers entry points when it is
    installed, not when pyproject changes). ``extra``: an empty directory for the stand-ins."""
    declared = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["entry-points"]["inspect_ai"]
    if not any(ep.name == "nlibias" for ep in entry_points(group="inspect_ai")):
        dist = extra / "nlibias_inspect_entry_point-0.dist-info"
        dist.mkdir()
        (dist / "METADATA").write_text(
            "Metadata-Version: 2.1\nName: nlibias-inspect-entry-point\nVersion: 0\n"
        )
        lines = "".join(f"{name} = {target}\n" for name, target in declared.items())
        (dist / "entry_points.txt").write_text("[inspect_ai]\n" + lines)
    # REPO/src is not put first: a plain src/nlibias.egg-info there (left by `pip install -e .`)
    # would then hide the editable install's metadata, and Inspect names a task "nlibias/..." only
    # for a package installed (or installed editable); the inherited PYTHONPATH decides the code.
    path = os.pathsep.join(p for p in [str(extra), os.environ.get("PYTHONPATH", "")] if p)
    (extra / "tiktoken-cache").mkdir(exist_ok=True)
    offline = {"TIKTOKEN_CACHE_DIR": str(extra / "tiktoken-cache"), "HTTPS_PROXY": "http://127.0.0.1:9",
               "https_proxy": "http://127.0.0.1:9", "NO_PROXY": "", "no_proxy": ""}  # fmt: skip
    return {**os.environ, **offline, "PYTHONPATH": path, "INSPECT_LOG_LEVEL": "warning", "NO_COLOR": "1"}


@pytest.fixture(scope="module")
def inspect_env(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    return inspect_environment(tmp_path_factory.mktemp("inspect-path"))


def test_pyproject_registers_the_tasks_module_for_inspect() -> None:
    declared = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["entry-points"]["inspect_ai"]
    assert declared == {"nlibias": "nlibias.integrations.inspect_tasks"}


def inspect_eval_cli(args: list[str], env: dict[str, str], log_dir: Path) -> Path:
    command = [str(INSPECT), "eval", *args, "--log-dir", str(log_dir), "--display", "none"]
    finished = subprocess.run(command, capture_output=True, text=True, env=env, timeout=1500)
    assert finished.returncode == 0, finished.stdout[-2000:] + finished.stderr[-3000:]
    logs = glob.glob(str(log_dir / "*.eval"))
    assert len(logs) == 1, logs
    return Path(logs[0])


@pytest.mark.timeout(1800)
def test_inspect_eval_cli_runs_the_registered_task_and_nlibias_scores_its_log(
    bbnli_run: Path, inspect_env: dict[str, str], tmp_path: Path
) -> None:
    log = inspect_eval_cli(
        ["nlibias/bbnli", "-T", "prompt=true", "-T", f"samples={bbnli_run}", "--model", "mockllm/model"],
        inspect_env,
        tmp_path / "logs",
    )
    assert predictions_format(log) == "inspect"
    from typer.testing import CliRunner

    from nlibias.cli.main import app

    scored = CliRunner().invoke(
        app,
        ["score", "--samples", str(bbnli_run), "--predictions", str(log), "--out", str(tmp_path / "scored"),
         "--bootstrap", "0", "--json"],
    )  # fmt: skip
    assert scored.exit_code == 0, scored.output
    metrics = json.loads((tmp_path / "scored" / "metrics.json").read_text())
    key = "inspect:mockllm/model|prompt=true|generated"
    assert metrics["predictor_kinds"] == {key: "generative"}
    # the mock model's default reply ("Default output from mockllm/model") answers nothing
    rows = [json.loads(line) for line in (tmp_path / "scored" / "predictions.jsonl").open()]
    assert len(rows) == 6 and all(r["label"] is None and r["answer_rule"] == "no-answer" for r in rows)
    assert metrics["models"][key]["overall"]["counts"]["n_unanswered_bias"] == 6


@pytest.mark.timeout(1800)
def test_the_default_task_expands_bbnli_from_the_data_dir(
    inspect_env: dict[str, str], tmp_path: Path
) -> None:
    from nlibias.jobs.expand import expand_to_dir

    expand_to_dir("bbnli", tmp_path / "bbnli")
    log = inspect_eval_cli(
        ["nlibias/bbnli", "-T", "prompt=entailed", "--model", "mockllm/model", "--limit", "4"],
        inspect_env,
        tmp_path / "logs",
    )
    result = run_score(tmp_path / "bbnli", log, bootstrap=0)
    assert result.metrics["run"]["samples_scored"] == 4
    first = read_samples(tmp_path / "bbnli")[0]
    assert result.predictions[0].sample_id == first.id  # the same ids as `nlibias expand bbnli`
    assert list(result.metrics["models"]) == ["inspect:mockllm/model|prompt=entailed|generated"]


def _replies(by_hypothesis: dict[str, str]) -> Any:
    """A mock model that answers by the hypothesis in the prompt (samples run concurrently)."""
    from inspect_ai.model import ModelOutput, ModelUsage

    def reply(messages: list[Any], *_: Any) -> ModelOutput:
        text = messages[-1].text
        content = next(r for hypothesis, r in by_hypothesis.items() if f"Hypothesis: {hypothesis}\n" in text)
        output = ModelOutput.from_content("mockllm/model", content)
        output.usage = ModelUsage(input_tokens=1, output_tokens=1, total_tokens=2)
        return output

    return reply


def test_answers_are_parsed_as_nlibias_parses_them(bbnli_run: Path, tmp_path: Path) -> None:
    from inspect_ai import eval as inspect_eval
    from inspect_ai.model import get_model

    import nlibias.integrations.inspect_tasks  # noqa: F401  (registers nlibias/bbnli, as the entry point does)

    samples = read_samples(bbnli_run)
    pro = [s for s in samples if s.stereotype == "pro"]
    anti = [s for s in samples if s.stereotype == "anti"]
    replies = {s.hypothesis: "**Yes**. The paragraph says so." for s in pro}  # leading word: yes
    replies.update({anti[0].hypothesis: "The hypothesis is false.", anti[1].hypothesis: "No, it is not."})
    replies[anti[2].hypothesis] = "Not necessarily."  # a hedge: unparsed for a yes/no prompt
    model = get_model("mockllm/model", custom_outputs=_replies(replies))
    [log] = inspect_eval(
        "nlibias/bbnli",
        task_args={"prompt": True, "samples": str(bbnli_run)},  # -T prompt=true arrives as True
        model=model,
        log_dir=str(tmp_path / "logs"),
        display="none",
    )
    assert log.status == "success"
    # the yes_no scorer: correct when the parsed answer is the gold word ("no" for neutral)
    assert log.results is not None and log.results.scores[0].metrics["accuracy"].value == pytest.approx(2 / 6)
    result = run_score(bbnli_run, log.location, out_dir=tmp_path / "scored", bootstrap=0)
    labels = {p.sample_id: p.label for p in result.predictions}
    assert [labels[s.id] for s in pro] == ["entailment"] * 3
    assert [labels[s.id] for s in anti] == ["neutral", "neutral", None]
    # cross-check: the same answers written as nlibias' own predictions give the same measures
    native = tmp_path / "native.jsonl"
    rows = []
    for p in result.predictions:
        extra = {k: p.extra[k] for k in ("kind", "prompt", "mode", "answer", "answer_rule", "answers")}
        rows.append({"id": p.sample_id, "model": p.model, "label": p.label, **extra})
    native.write_text("".join(json.dumps(r) + "\n" for r in rows))
    again = run_score(bbnli_run, native, bootstrap=0)
    key = "inspect:mockllm/model|prompt=true|generated"
    assert again.metrics["models"][key]["overall"] == result.metrics["models"][key]["overall"]
    overall = result.metrics["models"][key]["overall"]
    # pairs: (yes, no), (yes, no) → pro +1 each; (yes, unparsed) is not a scored pair
    assert overall["counts"]["cf_pro"] == 2 and overall["counts"]["n_unanswered_bias"] == 1


def test_the_task_refuses_a_prompt_it_does_not_know(bbnli_run: Path) -> None:
    from nlibias.errors import ConfigError
    from nlibias.integrations.inspect_tasks import bbnli

    with pytest.raises(ConfigError):
        bbnli(prompt="nonsense", samples=str(bbnli_run))
    assert PROMPT_STYLES["true"].name == "true"


# --- offline: Inspect's token count, and local models through the nlibias provider ----------------


def test_the_token_count_needs_no_download(monkeypatch: pytest.MonkeyPatch) -> None:
    import tiktoken
    from inspect_ai.model import _model, _tokens

    from nlibias.errors import ConfigError
    from nlibias.integrations import offline

    def no_network(name: str) -> Any:
        raise ConnectionError("no network")

    monkeypatch.setattr(tiktoken, "get_encoding", no_network)
    monkeypatch.setattr(offline, "_encoding", None)  # not tried yet in this process
    monkeypatch.setattr(_tokens, "count_text_tokens", _tokens.count_text_tokens)  # restored after
    monkeypatch.setattr(_model, "count_text_tokens", _model.count_text_tokens)
    text = "Is the hypothesis true? Answer yes or no."  # 41 characters → ceil(41 / 3) = 14
    assert offline.use_offline_token_count("auto") == "auto"
    assert _model.count_text_tokens(text) == 14 == math.ceil(len(text) / 3)  # tiktoken failed: estimate
    assert offline.use_offline_token_count("tiktoken") == "tiktoken"
    with pytest.raises(ConnectionError):  # Inspect's own counter, which downloads
        _model.count_text_tokens(text)
    monkeypatch.setenv(offline.TOKEN_COUNT_ENV, "estimate")
    assert offline.use_offline_token_count() == "estimate" and _tokens.count_text_tokens(text) == 14
    monkeypatch.setenv(offline.TOKEN_COUNT_ENV, "words")
    with pytest.raises(ConfigError, match="not one of auto, estimate, tiktoken"):
        offline.use_offline_token_count()


def _same_generated_answers(theirs: Any, ours: Any) -> None:
    mine = {p.sample_id: p for p in ours.predictions}
    other = {p.sample_id: p for p in theirs.predictions}
    assert mine.keys() == other.keys() and len(mine) == 6
    assert any(p.extra["text"] for p in mine.values())  # the model said something
    for sample_id, p in mine.items():
        assert other[sample_id].extra["text"] == p.extra["text"]
        assert other[sample_id].label == p.label and other[sample_id].extra["answer"] == p.extra["answer"]


@pytest.mark.timeout(1800)
def test_inspect_eval_cli_with_an_nlibias_model_answers_as_an_audit(
    bbnli_run: Path, inspect_env: dict[str, str], tmp_path: Path
) -> None:
    from nlibias.jobs.audit import run_audit

    log = inspect_eval_cli(
        ["nlibias/bbnli", "-T", "prompt=true", "-T", f"samples={bbnli_run}", "--model", "nlibias/fake:x"],
        inspect_env,
        tmp_path / "logs",
    )
    theirs = run_score(bbnli_run, log, bootstrap=0)
    assert list(theirs.metrics["models"]) == ["inspect:nlibias/fake:x|prompt=true|generated"]
    ours = run_audit(
        bbnli_run,
        ModelSet.of(generative=["fake:x"], prompts=["true"]),
        run=RunOptions(cache=False, bootstrap=0, progress=False),
        options=ModelOptions(mode="generated"),
    )
    _same_generated_answers(theirs, ours)
    assert {p.extra["answer_rule"] for p in theirs.predictions} != {"no-answer"}  # real answers


@pytest.mark.timeout(1800)
def test_a_local_model_directory_through_the_nlibias_provider(
    bbnli_run: Path, tiny_causal_dir: Path, tmp_path: Path
) -> None:
    from inspect_ai import eval as inspect_eval

    import nlibias.integrations.inspect_tasks  # noqa: F401  (registers the provider and the tasks)
    from nlibias.integrations.offline import local_model_dir, main
    from nlibias.jobs.audit import run_audit

    [log] = inspect_eval(
        "nlibias/bbnli",
        task_args={"prompt": "true", "samples": str(bbnli_run), "max_tokens": 8},
        model=f"nlibias/{tiny_causal_dir}",
        model_args={"device": "cpu"},
        log_dir=str(tmp_path / "logs"),
        display="none",
    )
    assert log.status == "success"
    theirs = run_score(bbnli_run, log.location, bootstrap=0)
    ours = run_audit(
        bbnli_run,
        ModelSet.of(generative=[str(tiny_causal_dir)], prompts=["true"]),
        run=RunOptions(cache=False, bootstrap=0, progress=False),
        options=ModelOptions(mode="generated", max_new_tokens=8, device="cpu"),
    )
    _same_generated_answers(theirs, ours)
    assert local_model_dir(str(tiny_causal_dir), device="cpu") == tiny_causal_dir  # not a GGUF: itself
    assert main(["fake:x"]) == 2  # not a local causal LM: refused, no traceback


@pytest.mark.slow
@pytest.mark.timeout(1800)
def test_smollm2_offline_through_the_nlibias_provider(bbnli_run: Path, tmp_path: Path) -> None:
    from inspect_ai import eval as inspect_eval

    import nlibias.integrations.inspect_tasks  # noqa: F401
    from nlibias.jobs.audit import run_audit

    [log] = inspect_eval(
        "nlibias/bbnli",
        task_args={"prompt": "true", "samples": str(bbnli_run)},
        model="nlibias/smollm2",
        model_args={"device": "cpu"},
        log_dir=str(tmp_path / "logs"),
        display="none",
    )
    assert log.status == "success"
    theirs = run_score(bbnli_run, log.location, bootstrap=0)
    ours = run_audit(
        bbnli_run,
        ModelSet.of(generative=["smollm2"], prompts=["true"]),
        run=RunOptions(cache=False, bootstrap=0, progress=False),
        options=ModelOptions(mode="generated", device="cpu"),
    )
    _same_generated_answers(theirs, ours)


# --- SmolLM2 behind llama.cpp's OpenAI-compatible server ------------------------------------------

try:
    from test_openai_http import llama_cpp_missing, llama_server  # noqa: F401  (a fixture)
except ImportError:  # pragma: no cover - the HTTP tests moved
    llama_cpp_missing = True


@pytest.mark.server
@pytest.mark.slow
@pytest.mark.skipif(
    llama_cpp_missing,
    reason="no OpenAI-compatible server here: llama-cpp-python is not installed "
    "(pip install 'llama-cpp-python[server]', or a wheel from scripts/build-llamacpp-wheel.sh)",
)
def test_smollm2_through_a_local_server_answers_as_nlibias_does(
    llama_server: Any, bbnli_run: Path, tmp_path: Path
) -> None:
    from inspect_ai import eval as inspect_eval

    import nlibias.integrations.inspect_tasks  # noqa: F401
    from nlibias.jobs.audit import run_audit

    [log] = inspect_eval(
        "nlibias/bbnli",
        task_args={"prompt": "true", "samples": str(bbnli_run)},
        model="llama-cpp-python/smollm2-gguf",
        model_base_url=llama_server.url,
        log_dir=str(tmp_path / "logs"),
        display="none",
    )
    assert log.status == "success"
    theirs = {p.sample_id: p for p in run_score(bbnli_run, log.location, bootstrap=0).predictions}
    ours = run_audit(
        bbnli_run,
        ModelSet.of(generative=[f"openai:{llama_server.url}#smollm2-gguf"], prompts=["true"]),
        run=RunOptions(cache=False, bootstrap=0, progress=False),
        options=ModelOptions(mode="generated", max_new_tokens=64),
    )
    # both decode greedily (temperature 0, 64 tokens) from the same server and the same message.
    # The server reuses the evaluated prompt of the previous request, and the two routes send their
    # requests in different orders, so the numbers differ in the last bits and a long greedy
    # continuation can part after a while (seen once under load: 163 equal characters, then not).
    # The answer, and how it starts, must agree.
    for mine in ours.predictions:
        their_text, my_text = theirs[mine.sample_id].extra["text"].strip(), mine.extra["text"].strip()
        assert their_text[:40] == my_text[:40]
        assert theirs[mine.sample_id].label == mine.label
