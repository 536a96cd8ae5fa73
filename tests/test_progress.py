"""Progress (issue #39): one bar per command with a total (no restart at 0 for each model or
prompt style), drawn only when stderr is a terminal; the Hugging Face libraries' bars are off
when it is not."""

from __future__ import annotations

import io
import json
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from nlibias.jobs.audit import run_audit
from nlibias.runtime.model_set import ModelSet
from nlibias.runtime.options import RunOptions


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


class _LogFile(io.StringIO):
    def isatty(self) -> bool:
        return False


def _samples(tmp_path: Path) -> Path:
    rows = [
        {"id": f"{k}:{s}", "domain": "gender", "subtopic": f"t{i % 2}", "premise": f"P {k}.",
         "hypothesis": f"{s} H {k}.", "gold": "neutral", "stereotype": s, "pair_key": k}
        for i, k in enumerate("abcd") for s in ("pro", "anti")
    ]  # fmt: skip
    path = tmp_path / "samples.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def test_one_bar_for_the_whole_audit_on_a_terminal(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    terminal = _Terminal()
    monkeypatch.setattr(sys, "stderr", terminal)
    monkeypatch.delitem(sys.modules, "ipykernel", raising=False)
    # two classifiers and a generative LM asked with two prompt styles: 4 passes over 8 samples
    run_audit(
        _samples(tmp_path),
        ModelSet.of(["fake:m1", "fake:m2"], prompts=["true", "entailed"], generative=["fake:lm"]),
        run=RunOptions(cache=False, bootstrap=0),
    )
    shown = terminal.getvalue()
    assert "/32" in shown and "32/32" in shown  # one bar: 4 × 8 = 32 samples, with its total
    assert "/8 " not in shown and "/16" not in shown  # no bar of a model or prompt style of its own
    assert "0/8" not in shown


def test_the_bar_is_closed_when_a_model_fails(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # it was left open (closed only after the loop): the error printed beside a half-drawn bar, and
    # tqdm kept the dead bar among its instances for the rest of the process
    from nlibias.models.base import BatchResult
    from nlibias.models.fake import FakeNLIClassifier
    from nlibias.runtime.classifier import ClassifierPredictor
    from nlibias.runtime.progress import CommandBar

    closed: list[str] = []
    close = CommandBar.close

    def recorded_close(bar: CommandBar) -> None:
        closed.append(bar.desc)
        close(bar)  # still closed: its line thread would print into later tests' output

    monkeypatch.setattr(CommandBar, "close", recorded_close)

    class Failing(FakeNLIClassifier):
        def predict_batches(self, pairs: object) -> Iterator[BatchResult]:
            raise RuntimeError("out of memory")

    with pytest.raises(RuntimeError, match="out of memory"):
        run_audit(
            _samples(tmp_path), [ClassifierPredictor(Failing())], run=RunOptions(cache=False, bootstrap=0)
        )
    assert closed == ["audit"]


def test_no_bars_and_no_library_bars_when_stderr_is_a_log(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    log = _LogFile()
    monkeypatch.setattr(sys, "stderr", log)
    monkeypatch.delitem(sys.modules, "ipykernel", raising=False)
    monkeypatch.delenv("HF_HUB_DISABLE_PROGRESS_BARS", raising=False)
    from huggingface_hub.utils import are_progress_bars_disabled, enable_progress_bars

    enable_progress_bars()
    try:
        run_audit(
            _samples(tmp_path),
            ["fake:m1", "fake:m2"],
            run=RunOptions(cache=False, bootstrap=0, progress=True),
        )
        assert log.getvalue() == ""
        assert are_progress_bars_disabled()
    finally:
        enable_progress_bars()


def test_a_slot_maps_a_part_of_other_units_onto_the_command_bar() -> None:
    from nlibias.runtime.progress import CommandBar, progress_bar

    with CommandBar(20, "audit", "sample", enabled=False) as bar:
        with bar.slot(10, "a"), progress_bar(4, enabled=False) as part:  # 4 pairs stand for 10 samples
            part.update(1)
            assert bar.n == 2.5
            part.update(9)  # a part that over-reports stays inside its slot
            assert bar.n == 10
        with bar.slot(10, "b"):  # a part that reports nothing (all cached): the slot is filled on exit
            pass
        assert bar.n == 20


def test_the_command_line_silences_library_bars_when_stderr_is_not_a_terminal(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import os

    from typer.testing import CliRunner

    from nlibias.cli.main import app

    monkeypatch.delenv("HF_HUB_DISABLE_PROGRESS_BARS", raising=False)
    monkeypatch.delitem(sys.modules, "ipykernel", raising=False)
    out = tmp_path / "run"
    args = [
        "audit",
        "--samples",
        str(_samples(tmp_path)),
        "--model",
        "fake:a",
        "--out",
        str(out),
        "--no-cache",
    ]
    result = CliRunner().invoke(app, [*args, "--bootstrap", "0"])
    assert result.exit_code == 0, result.output
    assert os.environ.get("HF_HUB_DISABLE_PROGRESS_BARS") == "1"
    assert "sample/s" not in result.output and "%|" not in result.output  # no bar in the captured stderr


def test_a_long_batch_moves_the_bar_before_it_ends() -> None:
    # a scorer's chunk of 4 pairs in two inner batches: the bar hears 2 pairs after the first
    # inner batch (0.5 of the chunk), before the chunk is returned, and the rest at its end
    from nlibias.models.batching import report_fraction, unit_progress
    from nlibias.runtime.loop import ComputedBatch, cached_outputs

    class Bar:
        def __init__(self) -> None:
            self.updates: list[float] = []

        def update(self, n: float) -> None:
            self.updates.append(n)

    bar, seen_mid_batch = Bar(), []

    def compute(todo: list[tuple[str, ...]]):  # type: ignore[no-untyped-def]
        with unit_progress(len(todo)):
            report_fraction(0.5)
            seen_mid_batch.append(list(bar.updates))
            report_fraction(0.5)
        yield ComputedBatch(range(len(todo)), [t[0] for t in todo])

    run = cached_outputs(
        "m", [("a",), ("b",), ("c",), ("d",)], {"m": 1}, compute, None, to_json=str, from_json=str, bar=bar
    )
    assert run.outputs == ["a", "b", "c", "d"]
    assert seen_mid_batch == [[0, 2]]  # 0 cached, then 2 of 4 pairs while the chunk was computed
    assert sum(bar.updates) == 4


def test_commands_draw_bars_only_on_a_terminal_and_never_with_quiet_or_json(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from nlibias.cli.options import show_progress
    from nlibias.runtime.progress import bars_wanted

    monkeypatch.delitem(sys.modules, "ipykernel", raising=False)
    monkeypatch.setattr(sys, "stderr", _Terminal())
    assert show_progress() and not show_progress(quiet=True) and not show_progress(as_json=True)
    monkeypatch.setattr(sys, "stderr", _LogFile())
    # a log gets progress lines, not bars (test_a_log_gets_a_line_every_30_s_...)
    assert show_progress() and not bars_wanted() and not show_progress(quiet=True)


def test_a_job_that_draws_bars_undoes_an_earlier_silencing_and_nothing_the_user_set(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A run written to a log silences the libraries' bars for the process; a later job that
    draws bars (a notebook's next cell, a fine-tuning) turns them back on, and a variable the user
    set stays as they set it."""
    import os

    from huggingface_hub.utils import are_progress_bars_disabled

    from nlibias.runtime import progress

    progress.restore_library_bars()  # an earlier test's silencing, undone first
    monkeypatch.setenv("HF_DATASETS_DISABLE_PROGRESS_BARS", "0")  # the user's own
    monkeypatch.delenv("HF_HUB_DISABLE_PROGRESS_BARS", raising=False)
    monkeypatch.setattr(progress, "bars_wanted", lambda wanted=True: wanted)
    assert progress.prepare_progress(False) is False
    assert os.environ["HF_HUB_DISABLE_PROGRESS_BARS"] == "1" and are_progress_bars_disabled()
    assert progress.prepare_progress(True) is True
    assert "HF_HUB_DISABLE_PROGRESS_BARS" not in os.environ and not are_progress_bars_disabled()
    assert os.environ["HF_DATASETS_DISABLE_PROGRESS_BARS"] == "0"


def test_bars_silenced_before_the_hub_is_imported_come_back() -> None:
    """A quiet job that runs before anything imports the Hub (a notebook's first cell written to a
    log) must not freeze the Hub's bars off for the rest of the process: the Hub reads its
    variable once, at import, and then refuses to turn them back on (with a warning)."""
    import subprocess
    import sys

    script = (
        "import os, warnings; warnings.simplefilter('error')\n"
        "os.environ.pop('HF_HUB_DISABLE_PROGRESS_BARS', None)\n"
        "from nlibias.runtime import progress\n"
        "progress.silence_library_bars()\n"
        "from huggingface_hub.utils import are_progress_bars_disabled\n"
        "assert are_progress_bars_disabled()\n"
        "progress.restore_library_bars()\n"
        "print(are_progress_bars_disabled(), 'HF_HUB_DISABLE_PROGRESS_BARS' in os.environ)\n"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["False", "False"]


class _Clock:
    """A fake clock: the progress lines read the time from it, the test moves it."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_a_log_gets_a_line_every_30_s_with_stage_done_total_rate_and_time_left(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from nlibias.runtime.progress import CommandBar

    log, clock = _LogFile(), _Clock()
    monkeypatch.setattr(sys, "stderr", log)
    monkeypatch.delitem(sys.modules, "ipykernel", raising=False)
    with CommandBar(400, "audit", "sample", True, clock=clock) as bar, bar.slot(200, "m1"):
        clock.now += 20  # loading the model, then a first batch of 40
        bar.advance(40)
        clock.now += 9
        bar.advance(20)
        assert log.getvalue() == ""  # under 30 s: nothing yet (a quick command prints no line)
        clock.now += 1
        bar.advance(20)
        # since the first 40 (at 20 s): 40 more in 10 s = 4.0 samples/s; 320 left / 4.0 = 80 s
        assert log.getvalue() == "audit m1: 80/400 samples (20%), 4.0 samples/s, about 1 min 20 s left\n"
        clock.now += 10
        bar.advance(20)  # 10 s after the line: no new one
        assert log.getvalue().count("\n") == 1


def test_a_stage_that_does_not_move_still_prints_a_line(monkeypatch: pytest.MonkeyPatch) -> None:
    """A model loading moves nothing; the lines' own thread still prints within the interval."""
    import time

    from nlibias.runtime.progress import ProgressLines

    log, clock = _LogFile(), _Clock()
    monkeypatch.setattr(sys, "stderr", log)
    lines = ProgressLines(480, "audit smollm2", "sample", clock=clock, interval=0.02)
    try:
        clock.now += 75  # the fake clock says 75 s passed with no sample done
        deadline = time.monotonic() + 10
        while not log.getvalue() and time.monotonic() < deadline:
            time.sleep(0.01)
    finally:
        lines.close()
    assert (
        log.getvalue().splitlines()[0]
        == "audit smollm2: 0/480 samples, 1 min 15 s so far (loading or the first batch)"
    )


def test_a_long_run_written_to_a_log_is_never_silent_for_a_minute(monkeypatch: pytest.MonkeyPatch) -> None:
    """Ten simulated minutes at a sample every 7 s: a line at least every 30 s + one tick."""
    from nlibias.runtime.progress import ProgressLines

    log, clock = _LogFile(), _Clock()
    lines = ProgressLines(100, "audit", "sample", clock=clock, thread=False)
    printed_at = []
    for second in range(1, 601):
        clock.now += 1
        if second % 7 == 0:
            lines.n += 1
        if lines.tick(log):  # the thread ticks twice an interval; here every second
            printed_at.append(second)
    gaps = [b - a for a, b in zip([0, *printed_at], printed_at, strict=False)]
    assert len(printed_at) == 20 and max(gaps) == 30  # 600 s / 30 s
    assert (
        log.getvalue().splitlines()[-1] == "audit: 85/100 samples (85%), 0.1 samples/s, about 1 min 46 s left"
    )
    # 85 samples in 600 s = 0.1417/s; 15 left / 0.1417 = 105.9 s -> 1 min 46 s


def test_the_command_line_prints_progress_lines_to_a_log(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from typer.testing import CliRunner

    from nlibias.cli.main import app
    from nlibias.runtime import progress

    monkeypatch.delitem(sys.modules, "ipykernel", raising=False)
    monkeypatch.setattr(progress, "LOG_INTERVAL", 0.0)  # every move prints a line
    args = ["audit", "--samples", str(_samples(tmp_path)), "--model", "fake:a", "--out", str(tmp_path / "r")]
    result = CliRunner().invoke(app, [*args, "--no-cache", "--bootstrap", "0"])
    assert result.exit_code == 0, result.output
    assert "audit a: 8/8 samples (100%)" in result.output and "%|" not in result.output, result.output


def test_the_gguf_conversion_bar_is_off_while_transformers_bars_are(monkeypatch: pytest.MonkeyPatch) -> None:
    """transformers' "Converting and de-quantizing GGUF tensors" bar ignored its own switch: it
    reached logs and stood beside a notebook's audit bar on the first SmolLM2 load."""
    from transformers import modeling_gguf_pytorch_utils as gguf_utils
    from transformers.utils import logging as transformers_logging

    from nlibias.models.generative.hf_causal import _gguf_bar_follows_transformers

    calls: list[dict] = []
    monkeypatch.setattr(gguf_utils, "tqdm", lambda *args, **kwargs: calls.append(kwargs))
    transformers_logging.disable_progress_bar()
    try:
        with _gguf_bar_follows_transformers():
            gguf_utils.tqdm([], desc="Converting")
        transformers_logging.enable_progress_bar()
        with _gguf_bar_follows_transformers():
            gguf_utils.tqdm([], desc="Converting")
    finally:
        transformers_logging.enable_progress_bar()
    assert calls == [{"desc": "Converting", "disable": True}, {"desc": "Converting"}]
