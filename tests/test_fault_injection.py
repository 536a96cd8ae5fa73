"""Fault injection: every long command, SIGKILLed at a random point and rerun, ends as if never killed.

Each command runs as a subprocess on small inputs with fake or tiny models. Its uninterrupted run
gives the expected output directory, the number of fault points it passes (each atomic rename,
before and after: ``NLIBIAS_FAULT_AT`` in :mod:`nlibias.io.atomic`) and its duration. Each trial
then starts from a clean work directory (and a cold prediction cache), kills the command — at a
seeded random fault point on even trials, after a seeded random delay within the measured
duration on odd ones (kills inside writes that are not atomic renames: the HF Trainer's
checkpoints, SQLite, a figure) — reruns the same command, and compares the output directory with
the uninterrupted run's, apart from the run fields of :data:`fault_injection.RUN_FIELDS` (how
long, when, how much came from the cache).

``NLIBIAS_FAULT_KILLS`` sets the kills per command (issue #25 asks for 20: run it so, it takes
several minutes per command on a 2-core machine); the normal suite makes 2.
"""

from __future__ import annotations

import json
import os
import random
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from fault_injection import RUN_FIELDS, differences, read_tree

KILLS = int(os.environ.get("NLIBIAS_FAULT_KILLS", "2"))
SEED = int(os.environ.get("NLIBIAS_FAULT_SEED", "25"))
NLIBIAS = str(Path(sys.executable).parent / "nlibias")
PREMISES = [
    "The nurse is sitting on a bench.",
    "A carpenter is walking to the store.",
    "The secretary reads a letter.",
    "The mechanic waits outside.",
]


@dataclass(frozen=True)
class Inputs:
    root: Path
    bbnli: Path  # expanded BBNLI samples (2 subtopics)
    audit: Path  # an audit run of them (report's input)
    train: Path  # a small NLI training set
    premises: Path
    model: Path  # a tiny NLI classifier that knows the training set's words


@dataclass(frozen=True)
class Command:
    name: str
    args: Callable[[Inputs, Path], list[str]]
    """The command line, given the inputs and the work directory (its output goes under it; the
    temporary paths have no spaces, so a command is one string split on spaces)."""
    compared: str = "out"
    """What of the work directory is compared (the cache is not)."""
    fields: frozenset[str] = RUN_FIELDS
    text_patterns: tuple[str, ...] = ()
    marks: tuple[pytest.MarkDecorator, ...] = field(default_factory=tuple)


def _env(**extra: str) -> dict[str, str]:
    env = {**os.environ, "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1", "TOKENIZERS_PARALLELISM": "false"}
    env.pop("NLIBIAS_FAULT_AT", None)
    env.pop("NLIBIAS_FAULT_LOG", None)
    return {**env, **extra}


def _run(args: list[str], **extra: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([NLIBIAS, *args], capture_output=True, text=True, env=_env(**extra), timeout=300)


@pytest.fixture(scope="module")
def inputs(tmp_path_factory: pytest.TempPathFactory) -> Inputs:
    from nlibias.testing.nli_sets import learnable_nli_rows
    from nlibias.testing.tiny_models import build_tiny_nli_classifier

    root = tmp_path_factory.mktemp("fault-inputs")
    rows = learnable_nli_rows(48, seed=2)
    train = root / "train.jsonl"
    train.write_text("".join(json.dumps(r) + "\n" for r in rows))
    premises = root / "premises.txt"
    premises.write_text("\n".join(PREMISES) + "\n")
    texts = [r["premise"] for r in rows] + [r["hypothesis"] for r in rows] + PREMISES
    model = build_tiny_nli_classifier(root / "tiny", texts, seed=3, init_std=0.02)
    bbnli = root / "bbnli"
    expanded = _run(["expand", "bbnli", "--out", str(bbnli)])
    assert expanded.returncode == 0, expanded.stderr
    audit = root / "audit"
    audited = _run(f"audit --samples {bbnli} --model fake:a --out {audit} --no-cache --bootstrap 40".split())
    assert audited.returncode == 0, audited.stderr
    return Inputs(root, bbnli, audit, train, premises, model)


COMMANDS = [
    Command(
        "audit",
        lambda i, w: (
            f"audit --samples {i.bbnli} --model fake:a --model fake:b --out {w}/out "
            f"--cache {w}/cache.sqlite --bootstrap 50".split()
        ),
    ),
    Command(
        "score",
        lambda i, w: (
            f"score --samples {i.bbnli} --predictions {i.audit}/predictions.jsonl --out {w}/out "
            "--bootstrap 50".split()
        ),
    ),
    Command(
        "extend",
        lambda i, w: (
            f"extend --out {w}/out --cache {w}/cache.sqlite --mlm fake --top-k 3 --filter-model fake:a "
            "--filter-model fake:b --holdout-model fake:held --subtopic Muslim_man_to_many_wives "
            "--subtopic jewish_woman_is_to_kids --unvalidated --no-progress".split()
        ),
        # the markers hash stage files that hold run fields (stage seconds, cache counts)
        fields=RUN_FIELDS | {"fingerprint", "inputs", "outputs"},
    ),
    Command(
        "augment",
        lambda i, w: f"augment gender-swap --train {i.train} --out {w}/out".split(),
    ),
    Command(
        "finetune",
        lambda i, w: (
            f"finetune --model {i.model} --train {i.train} --out {w}/out --max-steps 6 "
            "--save-steps 2 --batch-size 8 --learning-rate 3e-3".split()
        ),
    ),
    Command(
        "debias",
        lambda i, w: (
            f"debias --model {i.model} --train {i.train} --out {w}/out --premises {i.premises} "
            "--max-steps 2 --batch-size 8 --device cpu --no-cache --bootstrap 40".split()
        ),
    ),
    Command("report", lambda i, w: f"report {i.audit} --out {w}/out/report.html".split()),
]


def _snapshot(command: Command, work: Path) -> dict[str, object]:
    return read_tree(work / command.compared, fields=command.fields, text_patterns=command.text_patterns)


def _kill_at_point(args: list[str], point: str) -> int:
    return _run(args, NLIBIAS_FAULT_AT=point).returncode


def _kill_after(args: list[str], delay: float) -> int:
    process = subprocess.Popen(
        [NLIBIAS, *args], env=_env(), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    try:
        process.wait(timeout=delay)
    except subprocess.TimeoutExpired:
        os.kill(process.pid, signal.SIGKILL)
        process.wait(timeout=60)
    return process.returncode


def _uninterrupted(
    command: Command, inputs: Inputs, work: Path
) -> tuple[dict[str, object], list[str], float]:
    """The expected output, the fault points' labels in order, and the duration."""
    log = work.parent / "points.log"
    log.unlink(missing_ok=True)
    started = time.perf_counter()
    clean = _run(command.args(inputs, work), NLIBIAS_FAULT_LOG=str(log))
    duration = time.perf_counter() - started
    assert clean.returncode == 0, clean.stderr[-2000:]
    labels = [line.split("\t", 1)[1] for line in log.read_text().splitlines()]
    assert len(labels) >= 2, "the command passed no fault point"
    return _snapshot(command, work), labels, duration


def _rerun_and_compare(command: Command, args: list[str], work: Path, expected: object, how: str) -> None:
    rerun = _run(args)
    assert rerun.returncode == 0, f"{command.name} killed {how}: the rerun failed:\n{rerun.stderr[-3000:]}"
    found = differences(expected, _snapshot(command, work))  # type: ignore[arg-type]
    assert found == [], f"{command.name} killed {how}: the rerun's output differs: {found}"


@pytest.mark.parametrize("command", [pytest.param(c, id=c.name, marks=c.marks) for c in COMMANDS])
def test_a_killed_command_reruns_to_the_uninterrupted_output(
    command: Command, inputs: Inputs, tmp_path: Path
) -> None:
    work = tmp_path / "work"  # one path for every trial: paths recorded in outputs are equal
    expected, labels, duration = _uninterrupted(command, inputs, work)
    rng = random.Random(f"{SEED}:{command.name}")
    points = rng.sample(range(1, len(labels) + 1), len(labels))  # each point once before any twice
    killed = 0
    for trial in range(KILLS):
        shutil.rmtree(work)
        args = command.args(inputs, work)
        if trial % 2 == 0:
            point = points[(trial // 2) % len(points)]
            code = _kill_at_point(args, str(point))
            how = f"at fault point {point} of {len(labels)} ({labels[point - 1]}; exit {code})"
        else:
            delay = rng.uniform(0.0, duration)
            code = _kill_after(args, delay)
            how = f"after {delay:.2f} s of {duration:.2f} s (exit {code})"
        killed += code == -signal.SIGKILL
        _rerun_and_compare(command, args, work, expected, how)
    assert KILLS == 0 or killed >= 1  # the fault-point kills always kill


@pytest.mark.parametrize(
    ("name", "label"),
    [
        pytest.param("finetune", "before finetune.json"),  # fixed: problem_type and truncation set explicitly
        pytest.param("augment", "before train.jsonl"),  # fixed: the spill file is named as atomic writes'
        pytest.param("debias", "before finetune.json"),  # fixed: the last checkpoint is the finished model
        pytest.param("debias", "before expansion.json"),  # fixed: the occupations stage ends with it
        pytest.param("extend", "before filter.json"),
        pytest.param("audit", "before metrics.json"),
    ],
)
def test_a_kill_at_a_known_point_reruns_to_the_uninterrupted_output(
    name: str, label: str, inputs: Inputs, tmp_path: Path
) -> None:
    """The defects the random kills found, at the point that shows them (deterministic)."""
    command = next(c for c in COMMANDS if c.name == name)
    work = tmp_path / "work"
    expected, labels, _ = _uninterrupted(command, inputs, work)
    assert label in labels
    shutil.rmtree(work)
    args = command.args(inputs, work)
    assert _kill_at_point(args, label) == -signal.SIGKILL
    _rerun_and_compare(command, args, work, expected, f"at {label!r}")
