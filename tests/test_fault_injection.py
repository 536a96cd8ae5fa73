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

A command that updates a file or run in place (``explain``, ``export model-index --card``,
``validate``) gets a fresh copy of it before each run; the annotation database (SQLite, no
atomic renames: killed after delays only) is compared by its current answers.

``NLIBIAS_FAULT_KILLS`` sets the kills per command (issue #25 asks for 20: run it so, it takes
several minutes per command on a 2-core machine); the normal suite makes 2.
"""

from __future__ import annotations

import csv
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

from bad_input_corpus import QUEUE_HEADER, QUEUE_ROWS
from fault_injection import REPORT_RUN_FIELDS, RUN_FIELDS, differences, read_tree

KILLS = int(os.environ.get("NLIBIAS_FAULT_KILLS", "2"))
SEED = int(os.environ.get("NLIBIAS_FAULT_SEED", "25"))
NLIBIAS = str(Path(sys.executable).parent / "nlibias")
JUDGES = (("ana", "pro"), ("bo", "pro"), ("cy", "anti"))
PREMISES = [
    "The nurse is sitting on a bench.",
    "A carpenter is walking to the store.",
    "The secretary reads a letter.",
    "The mechanic waits outside.",
]


JUNIT_TIMES = (r'(?<= time=)"[0-9.]+"', r'(?<= timestamp=)"[^"]*"', r'(?<= hostname=)"[^"]*"')
"""How long each JUnit testcase and suite took, when and where: run fields of the gate's XML."""
DEMO = (
    "import sys; from nlibias.jobs.demo import run_demo; "
    "run_demo(sys.argv[1], sample_pairs=2, model='fake:smollm2', cache_path=sys.argv[2], bootstrap=40)"
)


@dataclass(frozen=True)
class Inputs:
    root: Path
    bbnli: Path  # expanded BBNLI samples
    audit: Path  # an audit run of them (report's input)
    train: Path  # a small NLI training set
    premises: Path
    model: Path  # a tiny NLI classifier that knows the training set's words
    source: Path  # a BBNLI source folder of 2 subtopics
    small: Path  # its expansion (282 samples)
    runs: Path  # audits of it: a (fake:a), a-copy, b (fake:b), generated (fake:g, generated answers)
    causal: Path  # a tiny causal LM with a chat template (export lm-eval's tokenizer)
    validation: Path  # a run with validation/queue.csv of 3 hypotheses
    judged: Path  # 2 annotators' judgements of them


@dataclass(frozen=True)
class Command:
    name: str
    args: Callable[[Inputs, Path], list[str]]
    """The command line, given the inputs and the work directory (its output goes under it; the
    temporary paths have no spaces, so a command is one string split on spaces)."""
    setup: Callable[[Inputs, Path], None] | None = None
    """Puts what the command updates in place (a run, a card) into the work directory before
    each run."""
    program: tuple[str, ...] = ()
    """The program run (default: the ``nlibias`` command)."""
    view: Callable[[Path], object] | None = None
    """What is compared, read from the work directory (default: its ``compared`` folder's files)."""
    renames: bool = True
    """Whether it writes by atomic renames (fault points); else it is killed after delays only."""
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


def _run(args: list[str], *, program: tuple[str, ...] = (), **extra: str) -> subprocess.CompletedProcess[str]:
    argv = [*(program or (NLIBIAS,)), *args]
    return subprocess.run(argv, capture_output=True, text=True, env=_env(**extra), timeout=300)


@pytest.fixture(scope="module")
def inputs(tmp_path_factory: pytest.TempPathFactory, data_dir: Path) -> Inputs:
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
    return Inputs(root, bbnli, audit, train, premises, model, *_small_inputs(root, data_dir))


def _small_inputs(root: Path, data_dir: Path) -> tuple[Path, ...]:
    """The inputs of the commands that read runs: a 2-subtopic BBNLI, its audits, a tiny causal LM,
    a validation queue and its judgements."""
    from nlibias.models.generative.prompts import PROMPT_STYLES
    from nlibias.testing.tiny_causal import build_tiny_causal_lm

    source, small, runs = root / "source", root / "small", root / "runs"
    for subtopic in ("gender/man_is_to_surgeon.json", "religion/muslim_man_to_many_wives.json"):
        (source / subtopic).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(data_dir / "bbnli" / subtopic, source / subtopic)
    common = f"--samples {small} --no-cache --quiet --bootstrap"
    for args in (
        f"expand bbnli --source {source} --out {small} --quiet",
        f"audit {common} 40 --model fake:a --out {runs}/a",
        f"audit {common} 40 --model fake:b --out {runs}/b",
        f"audit {common} 0 --generative fake:g --prompt true --mode generated --out {runs}/generated",
    ):
        done = _run(args.split())
        assert done.returncode == 0, done.stderr
    shutil.copytree(runs / "a", runs / "a-copy")
    texts = [json.loads(line)["hypothesis"] for line in (small / "samples.jsonl").read_text().splitlines()]
    causal = build_tiny_causal_lm(root / "causal", texts + [s.template for s in PROMPT_STYLES.values()])
    validation = root / "validation"
    (validation / "validation").mkdir(parents=True)
    with (validation / "validation" / "queue.csv").open("w", newline="", encoding="utf-8") as handle:
        csv.writer(handle, lineterminator="\n").writerows([QUEUE_HEADER, *QUEUE_ROWS])
    judged = root / "judged.csv"
    rows = [f"{row[0]},{who},valid,{stereotype}\n" for row in QUEUE_ROWS for who, stereotype in JUDGES]
    judged.write_text("hypothesis_id,annotator,judgement,stereotype\n" + "".join(rows), encoding="utf-8")
    return source, small, runs, causal, validation, judged


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
    # the commands that read runs and write beside them (or update a file in place)
    Command("expand", lambda i, w: f"expand bbnli --source {i.source} --out {w}/out".split()),
    Command(
        "gate",
        lambda i, w: (
            f"gate {i.runs}/a --baseline {i.runs}/a-copy --junit {w}/out/gate.xml "
            f"--markdown {w}/out/gate.md".split()
        ),
        text_patterns=JUNIT_TIMES,
    ),
    Command(
        "explain",
        lambda i, w: f"explain {w}/out --judge fake:j --no-cache --bootstrap 40".split(),
        setup=lambda i, w: _copy(i.runs / "generated", w / "out"),
        fields=RUN_FIELDS | {"fingerprint", "inputs", "outputs"},
    ),
    Command(
        "export-lm-eval",
        lambda i, w: f"export lm-eval --samples {i.small} --out {w}/out --model {i.causal}".split(),
        marks=(pytest.mark.slow,),  # each run loads transformers for the tokenizer: ~4 s
    ),
    Command(
        "export-model-index-card",
        lambda i, w: f"export model-index {i.runs}/a --card {w}/out/README.md".split(),
        setup=lambda i, w: _card(w / "out" / "README.md"),
    ),
    Command(
        "validate-import",
        lambda i, w: f"validate import {w}/out {i.judged}".split(),
        setup=lambda i, w: _copy(i.validation, w / "out"),
        view=lambda w: _current_answers(w / "out"),
        renames=False,  # one SQLite transaction
    ),
    Command(
        "validate-resolve",
        lambda i, w: f"validate resolve {w}/out --rule majority".split(),
        setup=lambda i, w: _imported(i, w / "out"),
        view=lambda w: read_tree(w / "out" / "validation", skip={"annotations.sqlite"}),  # its input
    ),
    Command(
        "report-compare",
        lambda i, w: f"report {i.runs}/a {i.runs}/b --compare --no-plots --out {w}/out/compare.html".split(),
    ),
    Command(
        "demo",  # the command line's model is the embedded SmolLM2: its job, with a fake of it
        lambda i, w: [str(w / "out"), str(w / "cache.sqlite")],
        program=(sys.executable, "-c", DEMO),
        text_patterns=REPORT_RUN_FIELDS,  # its report.html shows the run's timing and cache counts
        marks=(pytest.mark.slow,),  # each run expands all of BBNLI and draws the report's figures
    ),
]


def _copy(source: Path, target: Path) -> None:
    shutil.copytree(source, target)


def _card(path: Path) -> None:
    path.parent.mkdir(parents=True)
    path.write_text("---\nlicense: mit\nmodel_name: org/m\n---\n# m\n\nA model.\n", encoding="utf-8")


def _imported(inputs: Inputs, run: Path) -> None:
    from nlibias.jobs.validation import import_judgements

    shutil.copytree(inputs.validation, run)
    import_judgements(run, inputs.judged)


def _current_answers(run: Path) -> list[dict[str, str]]:
    """Every annotator's current answers in the run's database (when they were given left out)."""
    from nlibias.jobs.validation import export

    rows = csv.DictReader(export(run).text.splitlines())
    return [{k: v for k, v in row.items() if k != "updated_at"} for row in rows]


def _snapshot(command: Command, work: Path) -> dict[str, object]:
    if command.view is not None:
        return {"view": command.view(work)}
    return read_tree(work / command.compared, fields=command.fields, text_patterns=command.text_patterns)


def _fresh(command: Command, inputs: Inputs, work: Path) -> list[str]:
    """An empty work directory (with what the command updates in place); the command's arguments."""
    if work.exists():
        shutil.rmtree(work)
    work.mkdir(parents=True)
    if command.setup is not None:
        command.setup(inputs, work)
    return command.args(inputs, work)


def _kill_at_point(command: Command, args: list[str], point: str) -> int:
    return _run(args, program=command.program, NLIBIAS_FAULT_AT=point).returncode


def _kill_after(command: Command, args: list[str], delay: float) -> int:
    argv = [*(command.program or (NLIBIAS,)), *args]
    process = subprocess.Popen(argv, env=_env(), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
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
    args = _fresh(command, inputs, work)
    started = time.perf_counter()
    clean = _run(args, program=command.program, NLIBIAS_FAULT_LOG=str(log))
    duration = time.perf_counter() - started
    assert clean.returncode == 0, clean.stderr[-2000:]
    labels = [line.split("\t", 1)[1] for line in log.read_text().splitlines()] if log.exists() else []
    assert len(labels) >= 2 or not command.renames, "the command passed no fault point"
    return _snapshot(command, work), labels, duration


def _rerun_and_compare(command: Command, args: list[str], work: Path, expected: object, how: str) -> None:
    rerun = _run(args, program=command.program)
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
        args = _fresh(command, inputs, work)
        if trial % 2 == 0 and points:
            point = points[(trial // 2) % len(points)]
            code = _kill_at_point(command, args, str(point))
            how = f"at fault point {point} of {len(labels)} ({labels[point - 1]}; exit {code})"
        else:
            delay = rng.uniform(0.0, duration)
            code = _kill_after(command, args, delay)
            how = f"after {delay:.2f} s of {duration:.2f} s (exit {code})"
        killed += code == -signal.SIGKILL
        _rerun_and_compare(command, args, work, expected, how)
    assert KILLS == 0 or killed >= 1 or not points  # the fault-point kills always kill


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
    args = _fresh(command, inputs, work)
    assert _kill_at_point(command, args, label) == -signal.SIGKILL
    _rerun_and_compare(command, args, work, expected, f"at {label!r}")
