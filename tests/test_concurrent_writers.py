"""Two writers of one output at once, and a full disk, on the commands that write beside runs
(issue #48): two ``validate import`` into one run keep every answer, two gates writing one JUnit
and Markdown file leave one gate's whole files, two ``expand``, ``export lm-eval``, ``augment``
or ``demo`` into one folder and two scorings, limited audits or ``extend`` runs into one run
directory leave one's files (not a mix: each holds its output folder's lock,
``io/atomic.locked_folder``, which a killed writer does not keep); a full disk names the file and
leaves the previous outputs as they were.

The writers are forked children that wait for each other (a barrier) where the work starts and
then take turns unevenly before their renames (:data:`PACES`: what a slow disk or a busy machine
does), so their writes interleave every round."""

from __future__ import annotations

import csv
import errno
import json
import multiprocessing
import os
import re
import shutil
import signal
import sqlite3
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from bad_input_corpus import QUEUE_HEADER, QUEUE_ROWS
from nlibias.cli.main import app

runner = CliRunner()
ROUNDS = 4
SUBTOPICS = ("gender/man_is_to_surgeon.json", "religion/muslim_man_to_many_wives.json")


def _invoke(args: list[str]) -> str:
    done = runner.invoke(app, args)
    assert done.exit_code == 0, done.output
    return done.output


@pytest.fixture(scope="module")
def inputs(tmp_path_factory: pytest.TempPathFactory, data_dir: Path) -> dict[str, Path]:
    """Two BBNLI sources (2 subtopics, 1 subtopic), the first's expansion, fake models' audits
    (a, its copy, b; generated answers of g), a tiny causal LM, a validation queue of 3 hypotheses
    and two annotators' judgements of it."""
    from nlibias.models.generative.prompts import PROMPT_STYLES
    from nlibias.testing.tiny_causal import build_tiny_causal_lm

    root = tmp_path_factory.mktemp("writers")
    for name, subtopics in (("two", SUBTOPICS), ("one", SUBTOPICS[:1])):
        for subtopic in subtopics:
            (root / name / subtopic).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy(data_dir / "bbnli" / subtopic, root / name / subtopic)
    _invoke(["expand", "bbnli", "--source", str(root / "two"), "--out", str(root / "samples")])
    for model in ("a", "b"):
        _invoke(["audit", "--samples", str(root / "samples"), "--model", f"fake:{model}", "--out",
                 str(root / model), "--no-cache", "--bootstrap", "40", "--quiet"])  # fmt: skip
    shutil.copytree(root / "a", root / "a-copy")
    (root / "vrun" / "validation").mkdir(parents=True)
    with (root / "vrun" / "validation" / "queue.csv").open("w", newline="", encoding="utf-8") as handle:
        csv.writer(handle, lineterminator="\n").writerows([QUEUE_HEADER, *QUEUE_ROWS])
    for who, stereotype in (("ana", "pro"), ("bo", "anti")):
        rows = "".join(f"{row[0]},{who},valid,{stereotype}\n" for row in QUEUE_ROWS)
        (root / f"{who}.csv").write_text("hypothesis_id,annotator,judgement,stereotype\n" + rows)
    _invoke(["audit", "--samples", str(root / "samples"), "--generative", "fake:g", "--prompt", "true", "--mode",
             "generated", "--out", str(root / "generated"), "--no-cache", "--bootstrap", "0", "--quiet"])  # fmt: skip
    texts = [
        json.loads(line)["hypothesis"]
        for line in (root / "samples" / "samples.jsonl").read_text().splitlines()
    ]
    build_tiny_causal_lm(root / "causal", texts + [style.template for style in PROMPT_STYLES.values()])
    names = ("two", "one", "samples", "a", "a-copy", "b", "vrun", "generated", "causal")
    return {name: root / name for name in names} | {
        "ana": root / "ana.csv",
        "bo": root / "bo.csv",
        "root": root,
    }


# -- two writers at once ---------------------------------------------------------------------------


PACES = ((0.05, 0.45), (0.25, 0.05))
"""Seconds each child takes before its renames, in turn: the first writes its first file before
the other's and its second after it (a busy machine's order)."""


def _slowly(start: Any, pace: tuple[float, ...], module: Any, name: str) -> None:
    """In a child: wait for the other child at ``module.name`` (a function the work starts with),
    then take ``pace``'s seconds, in turn, before each rename."""
    from nlibias.io import atomic

    first, point, renames = getattr(module, name), atomic.fault_point, [0]

    def at_once(*args: Any, **kwargs: Any) -> Any:
        start.wait(30)
        return first(*args, **kwargs)

    def slow(label: str) -> None:
        if label.startswith("before "):
            time.sleep(pace[renames[0] % len(pace)])
            renames[0] += 1
        point(label)

    setattr(module, name, at_once)
    atomic.fault_point = slow  # type: ignore[assignment]


def _child(start: Any, pace: tuple[float, ...], work: Callable[[], Any], module: Any, name: str) -> None:
    from nlibias.errors import NlibiasError

    _slowly(start, pace, module, name)
    try:
        work()
    except NlibiasError as error:  # a clear refusal
        print(f"refused: {error}")
        raise SystemExit(2) from None


def _at_once(
    *works: tuple[Callable[[], Any], Any, str], paces: tuple[tuple[float, ...], ...] = PACES
) -> list[int | None]:
    """Run each ``(work, module, name)`` in a forked child, all starting at once; their exit codes.
    ``paces``: as :data:`PACES` (a command with a rename before ``name``: a leading 0 for it)."""
    context = multiprocessing.get_context("fork")
    start = context.Barrier(len(works))
    children = [
        context.Process(target=_child, args=(start, paces[i % len(paces)], *work))
        for i, work in enumerate(works)
    ]
    for child in children:
        child.start()
    for child in children:
        child.join(120)
    return [child.exitcode for child in children]


def _current(run: Path) -> set[tuple[str, str, str, str]]:
    from nlibias.jobs.validation import export

    rows = csv.DictReader(export(run).text.splitlines())
    return {(r["hypothesis_id"], r["annotator"], r["judgement"], r["stereotype"]) for r in rows}


def test_two_validate_imports_at_once_into_one_run_keep_every_answer(
    inputs: dict[str, Path], tmp_path: Path
) -> None:
    """Both create the annotation database (schema, WAL) and append at once."""
    from nlibias.jobs.validation import import_judgements
    from nlibias.validation import store

    expected = {
        (row[0], who, "valid", s) for row in QUEUE_ROWS for who, s in (("ana", "pro"), ("bo", "anti"))
    }
    for round_ in range(ROUNDS):
        run = tmp_path / f"run{round_}"
        shutil.copytree(inputs["vrun"], run)  # no database yet
        works = [
            (lambda who=who, run=run: import_judgements(run, inputs[who]), store.AnnotationStore, "__init__")
            for who in ("ana", "bo")
        ]
        assert _at_once(*works) == [0, 0], f"round {round_}"
        assert _current(run) == expected, f"round {round_}"


_TIMES = re.compile(r' (time|timestamp|hostname)="[^"]*"')


def _junit(path: Path) -> str:
    import xml.etree.ElementTree as ET

    text = path.read_text(encoding="utf-8")
    ET.fromstring(text)  # a whole XML document
    return _TIMES.sub("", text)


def test_two_gates_writing_one_junit_file_leave_one_gates_whole_file(
    inputs: dict[str, Path], tmp_path: Path
) -> None:
    """Also its Markdown file beside it: the pair is one gate's (not one's XML, the other's summary)."""
    from nlibias.jobs import gate_output

    def gate(candidate: str, junit: Path) -> Callable[[], Any]:
        args = ["gate", str(inputs[candidate]), "--baseline", str(inputs["a-copy"]), "--junit", str(junit),
                "--markdown", str(junit.with_suffix(".md"))]  # fmt: skip
        return lambda: runner.invoke(app, args, catch_exceptions=False)

    alone = {}
    for candidate in ("a", "b"):
        gate(candidate, tmp_path / f"{candidate}.xml")()
        alone[candidate] = _junit(tmp_path / f"{candidate}.xml"), (tmp_path / f"{candidate}.md").read_text()
    assert alone["a"][0] != alone["b"][0] and alone["a"][1] != alone["b"][1]
    for round_ in range(ROUNDS):
        junit = tmp_path / f"gate{round_}.xml"
        codes = _at_once(*[(gate(c, junit), gate_output, "gate_junit") for c in ("a", "b")])
        assert codes == [0, 0], f"round {round_}"
        assert _junit(junit) in [xml for xml, _ in alone.values()], f"round {round_}"
        pair = _junit(junit), junit.with_suffix(".md").read_text()
        assert pair in alone.values(), f"round {round_}: one gate's JUnit file, the other's Markdown"
        assert not list(tmp_path.glob(".*.part")), f"round {round_}"


def _expansion(out: Path) -> tuple[int, int, int]:
    """The rows of samples.jsonl and samples.parquet, and the samples expansion.json counts."""
    import pyarrow.parquet as pq

    summary = json.loads((out / "expansion.json").read_text(encoding="utf-8"))
    counted = summary["totals"]["bias"] + summary["totals"]["test"]
    lines = (out / "samples.jsonl").read_text(encoding="utf-8").splitlines()
    return len(lines), pq.read_table(out / "samples.parquet").num_rows, counted


def test_two_expands_into_one_folder_leave_one_expansions_files(
    inputs: dict[str, Path], tmp_path: Path
) -> None:
    from nlibias.jobs import expand

    alone = {}
    for name in ("two", "one"):
        expand.expand_to_dir("bbnli", tmp_path / name, inputs[name])
        alone[name] = _expansion(tmp_path / name)
    assert alone["two"] != alone["one"] and all(len(set(counts)) == 1 for counts in alone.values())
    for round_ in range(ROUNDS):
        out = tmp_path / f"out{round_}"
        works = [
            (
                lambda name=name, out=out: expand.expand_to_dir("bbnli", out, inputs[name]),
                expand,
                "get_benchmark",
            )
            for name in ("two", "one")
        ]
        assert _at_once(*works) == [0, 0], f"round {round_}"
        assert _expansion(out) in alone.values(), f"round {round_}: the files of two expansions mixed"


def _rerun_alone(
    out: Path, works: dict[str, Callable[[], Any]], read: Callable[[Path], Any]
) -> dict[str, Any]:
    """Each writer's files written alone into ``out`` (emptied first), as ``read`` gives them: the
    sets a mix is told from."""
    alone = {}
    for name, work in works.items():
        shutil.rmtree(out, ignore_errors=True)
        work()
        alone[name] = read(out)
    assert len({repr(files) for files in alone.values()}) == len(works)
    return alone


def test_two_lm_eval_exports_into_one_folder_leave_one_exports_files(
    inputs: dict[str, Path], tmp_path: Path
) -> None:
    """One task name, two prompts: the task's documents, config, script and record are one export's."""
    from nlibias.integrations import lm_eval

    out = tmp_path / "out"
    works = {
        prompt: lambda prompt=prompt: lm_eval.export_lm_eval(
            inputs["samples"], out, prompt=prompt, model=str(inputs["causal"]), task="bbnli_task"
        )
        for prompt in ("true", "entailed")
    }
    alone = _rerun_alone(out, works, _files)
    for round_ in range(ROUNDS):
        shutil.rmtree(out)
        codes = _at_once(*[(work, lm_eval, "local_causal_lm") for work in works.values()])
        assert codes == [0, 0], f"round {round_}"
        assert _files(out) in alone.values(), f"round {round_}: the files of two exports mixed"


def _run_files(run: Path) -> dict[str, bytes]:
    """A run directory's files, its manifest checked (a mixed set it lists would pass), the run
    fields of metrics.json left out."""
    from nlibias.io.run_dir import read_run

    read = read_run(run)
    files = _files(run)
    metrics = json.loads(files.pop("metrics.json"))
    metrics.pop("run")
    files.pop("manifest.json")
    assert set(read.metrics["models"]) == {
        row["model"] for row in map(json.loads, files["predictions.jsonl"].splitlines())
    }
    return files | {"metrics.json": json.dumps(metrics, sort_keys=True).encode()}


def test_two_scorings_into_one_run_directory_leave_one_scorings_files(
    inputs: dict[str, Path], tmp_path: Path
) -> None:
    """Two ``score --out RUN`` of different models' predictions at once: the run's predictions,
    metrics, tables and manifest are one scoring's (its manifest lists the files it wrote)."""
    from nlibias.jobs import score

    out = tmp_path / "out"
    works = {
        model: lambda model=model: score.run_score(
            inputs["samples"], inputs[model] / "predictions.jsonl", out_dir=out, bootstrap=40
        )
        for model in ("a", "b")
    }
    alone = _rerun_alone(out, works, _run_files)
    for round_ in range(ROUNDS):
        shutil.rmtree(out)
        codes = _at_once(*[(work, score, "check_run_file") for work in works.values()])
        assert codes == [0, 0], f"round {round_}"
        assert _run_files(out) in alone.values(), f"round {round_}: the files of two scorings mixed"


def test_two_explains_into_one_run_leave_one_explanations_files(
    inputs: dict[str, Path], tmp_path: Path
) -> None:
    """Two ``explain RUN`` with different judges at once: explanations.jsonl and its summary are one's."""
    from nlibias.jobs import explain

    run = tmp_path / "run"
    works = {
        judge: lambda judge=judge: runner.invoke(
            app,
            ["explain", str(run), "--no-cache", "--bootstrap", "0", "--judge", judge],
            catch_exceptions=False,
        )
        for judge in ("fake:j", "fake:k")
    }

    def fresh(out: Path) -> None:
        shutil.rmtree(out, ignore_errors=True)
        shutil.copytree(inputs["generated"], out)

    alone = {}
    for judge, work in works.items():
        fresh(run)
        work()
        alone[judge] = _files(run / "explanations")
    assert alone["fake:j"] != alone["fake:k"]
    for round_ in range(ROUNDS):
        fresh(run)
        paces = tuple((0.0, *pace) for pace in PACES)  # explain.json's rename comes before the judging
        codes = _at_once(*[(work, explain, "judge_answers") for work in works.values()], paces=paces)
        assert codes == [0, 0], f"round {round_}"
        assert _files(run / "explanations") in alone.values(), f"round {round_}: two explains' files mixed"


def test_two_augmentations_into_one_folder_leave_one_augmentations_files(tmp_path: Path) -> None:
    """Two ``augment gender-swap --out DIR`` selecting other rows at once: train.jsonl and its
    summary are one augmentation's."""
    from nlibias.debias import augment

    train = tmp_path / "train.jsonl"
    rows = [("The nurse helps her patient.", "A woman works."), ("A man naps.", "He sleeps.")]
    train.write_text(
        "".join(json.dumps({"premise": p, "hypothesis": h, "label": "neutral"}) + "\n" for p, h in rows)
    )
    out = tmp_path / "out"
    works = {
        select: lambda select=select: augment.augment_gender_swap(train, out, select=select, progress=False)
        for select in ("occupation", "all")
    }
    alone = _rerun_alone(out, works, _files)
    for round_ in range(ROUNDS):
        shutil.rmtree(out)
        codes = _at_once(*[(work, augment, "swap_list_named") for work in works.values()])
        assert codes == [0, 0], f"round {round_}"
        assert _files(out) in alone.values(), f"round {round_}: two augmentations' files mixed"


def test_two_extends_into_one_run_directory_leave_one_runs_files(tmp_path: Path) -> None:
    """Two ``extend --out RUN`` with other settings at once: the stages' files, their records and
    the dataset are one run's; the second waits for the first and is refused for its other
    settings (as it is after the first has finished), changing nothing."""
    from fault_injection import RUN_FIELDS, read_tree
    from nlibias.jobs import extend

    run = tmp_path / "run"

    def extended(top_k: int) -> Callable[[], Any]:
        settings: Any = {"fill_model": "fake", "classifiers": ["fake:a", "fake:b"], "holdout": ["fake:held"],
                         "subtopics": ["Muslim_man_to_many_wives", "jewish_woman_is_to_kids"], "unvalidated": True}  # fmt: skip
        cache = tmp_path / f"cache{top_k}.sqlite"
        return lambda: extend.extend(out_dir=run, top_k=top_k, cache=cache, progress=False, **settings)

    def read(out: Path) -> dict[str, Any]:
        return read_tree(out, fields=RUN_FIELDS | {"fingerprint", "inputs", "outputs"})

    works = {top_k: extended(top_k) for top_k in (2, 3)}
    alone = _rerun_alone(run, works, read)
    for round_ in range(ROUNDS):
        shutil.rmtree(run)
        codes = _at_once(*[(work, extend, "run_pipeline") for work in works.values()])
        assert read(run) in alone.values(), f"round {round_}: two extend runs' files mixed"
        assert sorted(codes) == [0, 2], f"round {round_}"  # type: ignore[type-var]


def test_two_demos_into_one_folder_leave_one_demos_files(tmp_path: Path) -> None:
    """Two ``demo --out DIR`` with other seeds at once: the sample each writes is the one it audits
    and records, and the run and its report are one demo's."""
    from fault_injection import REPORT_RUN_FIELDS, read_tree
    from nlibias.jobs import demo

    out = tmp_path / "out"
    works = {
        seed: lambda seed=seed: demo.run_demo(
            out,
            sample_pairs=2,
            seed=seed,
            model="fake:smollm2",
            cache_path=tmp_path / "c.sqlite",
            bootstrap=40,
        )
        for seed in (1, 2)
    }

    def read(out: Path) -> dict[str, Any]:
        return read_tree(out, text_patterns=REPORT_RUN_FIELDS)

    alone = _rerun_alone(out, works, read)
    for round_ in range(2):  # each demo expands all of BBNLI and draws its report's figures
        shutil.rmtree(out)
        codes = _at_once(*[(work, demo, "expand_bbnli") for work in works.values()])
        assert codes == [0, 0], f"round {round_}"
        assert read(out) in alone.values(), f"round {round_}: two demos' files mixed"


def test_a_writer_killed_holding_its_folder_lock_blocks_no_later_writer(tmp_path: Path) -> None:
    """The lock is the kernel's (``flock``): it goes with the process, so no lock file is left."""
    from nlibias.io.atomic import locked_folder

    def hold() -> None:
        with locked_folder(tmp_path / "out"):
            os.kill(os.getpid(), signal.SIGKILL)

    def take() -> None:
        with locked_folder(tmp_path / "out"):
            pass

    context = multiprocessing.get_context("fork")
    for target, code in ((hold, -signal.SIGKILL), (take, 0)):
        child = context.Process(target=target)
        child.start()
        child.join(30)
        if child.is_alive():  # still waiting for the killed writer's lock
            child.kill()
        assert child.exitcode == code, target.__name__
    assert [p.name for p in tmp_path.rglob("*")] == ["out"]


def test_a_folder_lock_is_taken_again_by_its_thread_and_waited_for_by_another(tmp_path: Path) -> None:
    """A command holding its folder calls a writer that locks it too (audit --limit: its subset,
    then the run): no deadlock; another thread of the process waits its turn as a process does."""
    import threading

    from nlibias.io.atomic import locked_folder

    order: list[str] = []
    held = threading.Event()

    def other() -> None:
        held.wait(30)
        with locked_folder(tmp_path / "out"):
            order.append("other")

    thread = threading.Thread(target=other)
    thread.start()
    with locked_folder(tmp_path / "out"), locked_folder(tmp_path / "out" / "."):
        held.set()
        time.sleep(0.3)
        order.append("holder")
    thread.join(30)
    assert order == ["holder", "other"]


# -- a full disk -----------------------------------------------------------------------------------


def _full(*args: Any, **kwargs: Any) -> None:
    raise OSError(errno.ENOSPC, "No space left on device")  # a write or fsync fails: no file name


def _files(folder: Path) -> dict[str, bytes]:
    return {
        p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()
    }


def _runs(inputs: dict[str, Path], out: Path) -> dict[str, tuple[list[str], list[str]]]:
    """Each command's first run into ``out``, and a run that changes its outputs."""
    gate = [
        "--baseline",
        str(inputs["a-copy"]),
        "--junit",
        str(out / "gate.xml"),
        "--markdown",
        str(out / "gate.md"),
    ]
    lm_eval = [
        "export",
        "lm-eval",
        "--samples",
        str(inputs["samples"]),
        "--out",
        str(out),
        "--model",
        str(inputs["causal"]),
    ]
    explain = ["explain", str(out), "--no-cache", "--bootstrap", "0", "--judge"]
    card = ["export", "model-index", "--card", str(out / "README.md")]
    compare = ["report", "--compare", "--no-plots", "--out", str(out / "compare.html")]
    return {
        "expand": (["expand", "bbnli", "--source", str(inputs["two"]), "--out", str(out)],
                   ["expand", "bbnli", "--source", str(inputs["one"]), "--out", str(out)]),
        "gate": (["gate", str(inputs["a"]), *gate], ["gate", str(inputs["b"]), *gate]),
        "explain": ([*explain, "fake:j"], [*explain, "fake:k"]),
        "export-lm-eval": (lm_eval, [*lm_eval, "--prompt", "entailed"]),
        "export-model-index-card": ([*card, str(inputs["a"])], [*card, str(inputs["b"])]),
        "validate-resolve": (["validate", "resolve", str(out)], ["validate", "resolve", str(out), "--rule", "majority"]),
        "report-compare": ([*compare, str(inputs["a"]), str(inputs["b"])], [*compare, str(inputs["b"]), str(inputs["a"])]),
    }  # fmt: skip


def _setup(name: str, inputs: dict[str, Path], out: Path) -> None:
    if name == "explain":
        shutil.copytree(inputs["generated"], out)
    elif name == "validate-resolve":
        from nlibias.jobs.validation import import_judgements

        shutil.copytree(inputs["vrun"], out)
        for who in ("ana", "bo"):
            import_judgements(out, inputs[who])
    elif name == "export-model-index-card":
        out.mkdir()
        (out / "README.md").write_text("---\nlicense: mit\n---\n# m\n", encoding="utf-8")


@pytest.mark.parametrize(
    "name",
    [
        "expand",
        "gate",
        "explain",
        "export-lm-eval",
        "export-model-index-card",
        "validate-resolve",
        "report-compare",
    ],
)
def test_a_full_disk_names_the_file_and_leaves_the_previous_outputs(
    name: str, inputs: dict[str, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from nlibias.io import atomic

    out = tmp_path / "out"
    _setup(name, inputs, out)
    first, again = _runs(inputs, out)[name]
    _invoke(first)
    before = _files(out)
    monkeypatch.setattr(atomic, "_sync_file", _full)  # each atomic write's data reaches the disk here
    done = runner.invoke(app, again)
    assert done.exit_code == 2 and "no space left on the device" in done.output, done.output
    assert re.search(re.escape(str(out)) + r"/\S+: no space left", " ".join(done.output.split())), done.output
    assert _files(out) == before  # no temporary file left either


def test_a_full_disk_under_the_annotation_database_says_no_space_left(
    inputs: dict[str, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """SQLite says "disk I/O error" when its shared-memory index cannot grow on a full disk, and
    "database or disk is full" when a page cannot be written."""
    from nlibias.runtime import sqlite_wal
    from nlibias.validation import store

    run = tmp_path / "run"
    shutil.copytree(inputs["vrun"], run)
    _invoke(["validate", "import", str(run), str(inputs["ana"])])
    before = _current(run)
    for message, free, full in (
        ("database or disk is full", 1 << 30, True),
        ("disk I/O error", 4096, True),
        ("disk I/O error", 1 << 30, False),  # with space left: not put down to a full disk
    ):

        def fails(*args: Any, message: str = message, **kwargs: Any) -> None:
            raise sqlite3.OperationalError(message)

        monkeypatch.setattr(store, "enable_wal", fails)
        monkeypatch.setattr(sqlite_wal, "_space_left", lambda path, free=free: free)
        done = runner.invoke(app, ["validate", "import", str(run), str(inputs["bo"])])
        assert done.exit_code == 2 and "Traceback" not in done.output, done.output
        assert f"{run}/validation/annotations.sqlite" in done.output
        assert ("no space left on the device" in done.output) == full, done.output
        monkeypatch.undo()
        assert _current(run) == before


def test_two_reports_into_one_file_leave_one_reports_page_and_figures(
    inputs: dict[str, Path], tmp_path: Path
) -> None:
    """Two ``report RUN --out F`` of different runs at once: the page and its figures folder are one
    report's (both name their figures alike)."""
    pytest.importorskip("matplotlib")
    from nlibias.jobs import report

    out = tmp_path / "out"
    works = {
        model: lambda model=model: report.make_report(inputs[model], out / "report.html")
        for model in ("a", "b")
    }
    alone = _rerun_alone(out, works, _files)
    for round_ in range(ROUNDS):
        shutil.rmtree(out)
        codes = _at_once(*[(work, report, "load_runs") for work in works.values()])
        assert codes == [0, 0], f"round {round_}"
        assert _files(out) in alone.values(), f"round {round_}: two reports' files mixed"


def test_two_limited_audits_into_one_folder_audit_their_own_subsets(
    inputs: dict[str, Path], tmp_path: Path
) -> None:
    """Two ``audit --limit N --out RUN`` with other limits and seeds at once: the subset each writes
    into the run is the one it audits and records (its lock is held from the subset to the manifest)."""
    from nlibias.jobs import audit
    from nlibias.runtime.options import RunOptions

    out = tmp_path / "out"

    def audited(limit: int) -> Callable[[], Any]:
        options = RunOptions(cache=False, bootstrap=0, seed=limit, limit=limit, progress=False)
        return lambda: audit.run_audit(inputs["samples"], ["fake:a"], out_dir=out, run=options)

    works = {limit: audited(limit) for limit in (8, 20)}
    alone = _rerun_alone(out, works, _run_files)
    for round_ in range(ROUNDS):
        shutil.rmtree(out)
        codes = _at_once(*[(work, audit, "refuse_run_overwrites") for work in works.values()])
        assert codes == [0, 0], f"round {round_}"
        assert _run_files(out) in alone.values(), f"round {round_}: one audit's subset, the other's record"
