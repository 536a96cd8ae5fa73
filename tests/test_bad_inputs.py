"""Every malformed input of the corpus (tests/bad_input_corpus.py) ends in a clear refusal
through the command line: a non-zero exit, no traceback, the file (or option) named; the inputs a
user may mean are accepted with a warning. ``bench/bad_inputs.py`` prints the same counts."""

from __future__ import annotations

from pathlib import Path

import pytest

from bad_input_cases import cases
from bad_input_corpus import Base, Case, Outcome, build_base, judge

CASES = cases()
PARAMS = [
    pytest.param(
        case, id=case.name, marks=[pytest.mark.xfail(strict=True, reason=case.known)] if case.known else []
    )
    for case in CASES
]


@pytest.fixture(scope="module")
def base(tmp_path_factory: pytest.TempPathFactory, data_dir: Path) -> Base:
    return build_base(tmp_path_factory.mktemp("bad-inputs-base"), data_dir)


def test_the_corpus_covers_every_reader() -> None:
    readers = {case.name.split("/")[0] for case in CASES}
    assert readers >= {
        "bbnli-json",
        "bbnli-csv",
        "wq-nli-csv",
        "premises",
        "samples-jsonl",
        "samples-parquet",
        "predictions-jsonl",
        "metrics-json",
        "prompt-file",
        "extend-config",
        "extend-input",
        "masks-file",
        "validation",
        "validate-explanations",
        "cache",
        "options",
        "output",
        "bbq-jsonl",
        "export-lm-eval",
        "option-score",
        "answer-column",
        "plugin-gate",
    }
    assert len(CASES) >= 140 and len({case.name for case in CASES}) == len(CASES)


@pytest.mark.parametrize("case", PARAMS)
def test_bad_input_is_refused_clearly(case: Case, base: Base, tmp_path: Path) -> None:
    outcome: Outcome = judge(case, tmp_path, base)
    expected = "warned" if case.expect == "warn" else "clear"
    assert outcome.verdict == expected, (
        f"{case.name}: {outcome.verdict} (exit {outcome.exit_code}): {outcome.message}"
    )


def test_the_judge_tells_a_traceback_and_a_silent_acceptance(base: Base, tmp_path: Path) -> None:
    """The harness itself can fail: an exception that escapes a command is a traceback, and a
    command that succeeds on an input meant to be refused is a silent acceptance."""

    def escaped(d: Path, b: Base) -> tuple[list[str], str]:
        return ["validate", "status", str(d / "missing-run")], "missing-run"

    def accepted(d: Path, b: Base) -> tuple[list[str], str]:
        return ["benchmarks"], "nothing"

    assert judge(Case("x/accepted", accepted), tmp_path, base).verdict == "silent"
    assert judge(Case("x/named", escaped), tmp_path, base).verdict == "clear"
    import bad_input_corpus

    original = bad_input_corpus.invoke
    try:
        bad_input_corpus.invoke = lambda args: (1, "", KeyError("boom"))  # type: ignore[assignment]
        assert judge(Case("x/escaped", accepted), tmp_path, base).verdict == "traceback"
        bad_input_corpus.invoke = lambda args: (70, "error: internal error", None)  # type: ignore[assignment]
        assert judge(Case("x/internal", accepted), tmp_path, base).verdict == "internal"
        # a warn case is warned only by a warning naming what it names: the fake judge's own warning
        # on a rerun that reused everything is a silent acceptance
        recomputed = lambda d, b: (["explain", "RUN"], "recomput")  # noqa: E731
        fake = "warning: Judge fake:j is a fake: a deterministic stand-in for tests and dry runs."
        bad_input_corpus.invoke = lambda args: (0, f"wrote RUN (reused: same inputs)\n{fake}", None)  # type: ignore[assignment]
        assert judge(Case("x/reused", recomputed, "warn"), tmp_path, base).verdict == "silent"
        bad_input_corpus.invoke = lambda args: (0, f"wrote RUN (recomputed: damaged)\n{fake}", None)  # type: ignore[assignment]
        assert judge(Case("x/recomputed", recomputed, "warn"), tmp_path, base).verdict == "warned"
    finally:
        bad_input_corpus.invoke = original  # type: ignore[assignment]
