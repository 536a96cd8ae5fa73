"""A corpus of malformed inputs for every command that reads a file, and the rule each run is
judged by (used by ``tests/test_bad_inputs.py`` and ``bench/bad_inputs.py``).

Each :class:`Case` writes one bad file (or option) into a fresh directory and names the
``nlibias`` arguments that read it. A run is judged from its exit code and its output:

* ``clear``: a non-zero exit, no traceback, the bad file (or option) named in the message;
* ``unclear``: a non-zero exit without a traceback that does not name the file;
* ``internal``: exit code 70 (an unexpected error, reported as a bug);
* ``traceback``: a raw traceback (or an exception that escaped the command);
* ``warned``: a ``warn`` case that exits 0 and prints its warning, naming what the case names (a
  warning printed for another reason, such as the fake judge's, does not count);
* ``silent``: exit 0 where the input should have been refused (or warned about).

Only the standard library and ``nlibias.cli.main.app`` are used, so the bench can run the same
corpus against an older checkout (``PYTHONPATH=/work/main/src``).
"""

from __future__ import annotations

import csv
import io
import json
import shutil
import warnings
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass
from pathlib import Path
from typing import Any

HUGE = 130 * 1024  # past Python's 128 KiB CSV field limit
LATIN1 = "Caf\xe9 au lait.".encode("latin-1")  # one byte that is not UTF-8


@dataclass(frozen=True)
class Case:
    name: str
    """``reader/malformation``."""
    build: Callable[[Path, Base], tuple[list[str] | Callable[[], object], str]]
    """Writes the bad input under the directory; returns the arguments (or, for the Python route, a
    call of the library) and what the message must name."""
    expect: str = "error"
    """``error`` (refused) or ``warn`` (accepted with a warning that contains ``warning``, the output
    naming what :attr:`build` returns as well)."""
    env: Callable[[Path], dict[str, str]] | None = None
    """Environment variables the command runs with (from the case's directory), e.g. a data dir."""
    context: Callable[[], AbstractContextManager[object]] | None = None
    """What the case is built and run inside (e.g. a plug-in benchmark installed, then removed)."""
    known: str = ""
    """A defect found and not yet fixed: why the case is not refused clearly (the test expects it
    to fail, strictly, so the defect stays visible and its fix is noticed)."""


def cases_of(groups: Iterable[Callable[..., None]], known: Mapping[str, str] | None = None) -> list[Case]:
    """The cases each group adds through ``case(name, build, expect="error", **options)``, a known
    defect marked from ``known`` (each of whose names must be a case)."""
    known = known or {}
    found: list[Case] = []

    def case(name: str, build: Any, expect: str = "error", **options: Any) -> None:
        marked = options.pop("known", "") or known.get(name, "")
        found.append(Case(name, build, expect, known=marked, **options))

    for group in groups:
        group(case)
    unknown = set(known) - {case.name for case in found}
    assert not unknown, unknown
    return found


@dataclass(frozen=True)
class Outcome:
    case: str
    verdict: str
    exit_code: int
    message: str


@dataclass(frozen=True)
class Base:
    """Valid inputs the cases start from (built once)."""

    root: Path
    bbnli_dir: Path
    """One BBNLI subtopic file as ``<domain>/<file>.json``."""
    samples: Path
    """A run directory with samples.jsonl and samples.parquet of that subtopic."""
    predictions: Path
    """A predictions.jsonl of a fake classifier on those samples."""
    run: Path
    """The audit's run directory (metrics.json, predictions.jsonl, tables.txt)."""
    cache: Path
    """A prediction cache with the fake classifier's outputs."""
    validation_run: Path
    """A run directory with validation/queue.csv (three hypotheses)."""


# -- running --------------------------------------------------------------------------------------


def invoke(args: list[str], env: dict[str, str] | None = None) -> tuple[int, str, BaseException | None]:
    """Run ``nlibias ARGS`` in process (with ``env`` set for the run); (exit code, stdout + stderr,
    escaped exception)."""
    from typer.testing import CliRunner

    from nlibias.cli.main import app

    result = CliRunner().invoke(app, args, env=env)
    exception = result.exception
    if isinstance(exception, SystemExit):
        exception = None
    text = result.output
    return result.exit_code, text, exception


def call(function: Callable[[], object]) -> tuple[int, str, BaseException | None]:
    """Run one call of the Python API as :func:`invoke` runs a command: (0 when it returns, nlibias's
    warnings as ``warning: ...`` lines, the exception that escaped it)."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            function()
        except Exception as exception:  # judged as the command line's are
            return 1, _warned(caught), exception
    return 0, _warned(caught), None


def _warned(caught: list[warnings.WarningMessage]) -> str:
    """The warnings of nlibias's own classes, as the command line prints them."""
    return "".join(f"warning: {w.message}\n" for w in caught if w.category.__module__.startswith("nlibias."))


def judge(case: Case, base_dir: Path, base: Base) -> Outcome:
    """Build the case's input in ``base_dir`` and judge how ``nlibias`` answers it."""
    from nlibias.errors import NlibiasError

    with case.context() if case.context else nullcontext():
        args, named = case.build(base_dir, base)
        if callable(args):
            code, text, exception = call(args)
        else:
            code, text, exception = invoke(args, case.env(base_dir)) if case.env else invoke(args)
    if exception is not None:
        if isinstance(exception, NlibiasError):  # what the installed command prints without a traceback
            text += f"\nerror: {exception}"
            code = code or 2
        else:
            text += f"\nTraceback (most recent call last):\n{type(exception).__name__}: {exception}"
    if "Traceback (most recent call last)" in text:
        verdict = "traceback"
    elif code == 70:
        verdict = "internal"
    elif code != 0:
        verdict = "clear" if named in " ".join(text.split()) else "unclear"
    elif case.expect == "warn" and "warning" in text.lower() and named in " ".join(text.split()):
        verdict = "warned"
    else:
        verdict = "silent"
    last = [line for line in text.strip().splitlines() if line.strip()][-1:] or [""]
    return Outcome(case.name, verdict, code, last[0][:300])


# -- valid inputs --------------------------------------------------------------------------------


def build_base(root: Path, data_dir: Path) -> Base:
    """Valid inputs every case corrupts a copy of (a few seconds: one small subtopic, a fake model)."""
    source = data_dir / "bbnli" / "gender" / "man_is_to_breadwinner.json"
    bbnli_dir = root / "bbnli" / "gender"
    bbnli_dir.mkdir(parents=True)
    shutil.copy(source, bbnli_dir / source.name)
    samples, run, cache = root / "samples", root / "run", root / "cache.sqlite"
    for args in (
        ["expand", "bbnli", "--source", str(root / "bbnli"), "--out", str(samples)],
        [
            "audit",
            "--samples",
            str(samples),
            "--model",
            "fake:m",
            "--out",
            str(run),
            "--bootstrap",
            "0",
            "--cache",
            str(cache),
            "--quiet",
        ],
    ):
        code, text, exception = invoke(args)
        if code != 0 or exception is not None:
            raise RuntimeError(f"building the valid inputs failed: {args}: {text} {exception!r}")
    validation_run = root / "validation-run"
    (validation_run / "validation").mkdir(parents=True)
    _write_csv(validation_run / "validation" / "queue.csv", QUEUE_HEADER, QUEUE_ROWS)
    return Base(root, root / "bbnli", samples, run / "predictions.jsonl", run, cache, validation_run)


def _queue_header() -> list[str]:
    from nlibias.extension.validation_handoff import QUEUE_COLUMNS

    return list(QUEUE_COLUMNS)


QUEUE_HEADER = _queue_header()


def _hid(subtopic: str, hypothesis: str) -> str:
    import hashlib

    return "h" + hashlib.sha256(f"{subtopic}\0{hypothesis}".encode()).hexdigest()[:12]


QUEUE_ROWS = [
    [_hid("s", h), "s", "gender", h, "pro", "<mask>", "t", "w", "A premise.", "2", "", "", ""]
    for h in ("Men are brave.", "Women are kind.", "Men cook.")
]


def _write_csv(path: Path, header: list[str], rows: list[list[Any]]) -> None:
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(header)
    writer.writerows(rows)
    path.write_text(buffer.getvalue(), encoding="utf-8")


def bbnli_csv_rows(label: str = "1", hypothesis: str = "Men work.") -> list[list[str]]:
    common = ["gender", "man is to worker", "00"]
    premise = "The men and women went to work."
    return [
        [*common, "pro", "u_pro_00", premise, "stereotypical", hypothesis, "q", label, "1", "ref"],
        [*common, "anti", "u_anti_00", premise, "anti-stereotypical", "Women work.", "q", "1", "1", "ref"],
        [*common, "pro", "u_pro_00", premise, "test", "People work.", "q", "2", "-1", "ref"],
    ]


def _bbnli_csv_header() -> list[str]:
    from nlibias.benchmarks.bbnli_source import CSV_COLUMNS

    return list(CSV_COLUMNS)


BBNLI_CSV_HEADER = _bbnli_csv_header()
WQ_HEADER = "stereo_premise,counter_premise,hypothesis\n"
WQ_ROW = "Some people are LGBTQ+.,Some people are straight.,Some people are abnormal.\n"


# -- how a case reads its file ------------------------------------------------------------------


def expand_args(kind: str, flag: str = "--source") -> Callable[[Path, Path], list[str]]:
    return lambda path, out: ["expand", kind, flag, str(path), "--out", str(out / "out")]


def copy_samples(d: Path, base: Base, lines: Callable[[list[str]], list[str]]) -> Path:
    run = d / "samples"
    run.mkdir()
    original = (base.samples / "samples.jsonl").read_text(encoding="utf-8").splitlines()
    (run / "samples.jsonl").write_text("\n".join(lines(original)) + "\n", encoding="utf-8")
    return run / "samples.jsonl"


def edit_first(
    edit: Callable[[dict[str, Any]], None], *, which: str = "pro"
) -> Callable[[list[str]], list[str]]:
    def change(lines: list[str]) -> list[str]:
        for i, line in enumerate(lines):
            record = json.loads(line)
            if which == "any" or record.get("stereotype") == which:
                edit(record)
                lines[i] = json.dumps(record, ensure_ascii=False)
                return lines
        raise AssertionError("no sample to edit")

    return change


def audit_args(samples: Path, d: Path) -> list[str]:
    return [
        "audit",
        "--samples",
        str(samples),
        "--model",
        "fake:m",
        "--out",
        str(d / "o"),
        "--bootstrap",
        "0",
        "--no-cache",
        "--quiet",
    ]


def score_args(base: Base, predictions: Path, d: Path) -> list[str]:
    return [
        "score",
        "--samples",
        str(base.samples),
        "--predictions",
        str(predictions),
        "--out",
        str(d / "o"),
        "--bootstrap",
        "0",
    ]


# -- the corpus -----------------------------------------------------------------------------------


def text_faults(valid: bytes) -> Iterator[tuple[str, bytes]]:
    """Malformations every text file can have."""
    yield "not-utf8", valid[: len(valid) // 2] + LATIN1 + valid[len(valid) // 2 :]
    yield "utf16", valid.decode("utf-8").encode("utf-16")
    yield "binary", bytes(range(256)) * 4
    yield "empty", b""


def adder(
    found: list[Case],
) -> Callable[[str], Callable[[Callable[[Path, Base], tuple[list[str], str]]], None]]:
    def add(name: str) -> Callable[[Callable[[Path, Base], tuple[list[str], str]]], None]:
        def register(build: Callable[[Path, Base], tuple[list[str], str]]) -> None:
            found.append(Case(name, build))

        return register

    return add


def base_queue_text() -> str:
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(QUEUE_HEADER)
    writer.writerows(QUEUE_ROWS)
    return buffer.getvalue()


def run_corpus(work: Path, data_dir: Path, *, only: str = "") -> list[Outcome]:
    """Every case of :func:`bad_input_cases.cases` (those whose names contain ``only``), each in its
    own directory under ``work``."""
    from bad_input_cases import cases

    base = build_base(work / "base", data_dir)
    outcomes = []
    for index, case in enumerate(c for c in cases() if only in c.name):
        case_dir = work / f"case-{index:03d}"
        case_dir.mkdir(parents=True)
        outcomes.append(judge(case, case_dir, base))
    return outcomes
