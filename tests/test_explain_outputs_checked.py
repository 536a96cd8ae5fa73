"""``explain`` reuses its outputs only when they are the files it wrote (their SHA-256 in the
stage record): a file cut mid-line or another run's file put in its place is recomputed, and the
result says why; ``validate explanations`` queues no explanations that the report calls stale, and
the report leaves them out with a warning."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from nlibias.errors import SourceError
from nlibias.io.stages import RecomputedWarning
from nlibias.jobs.explain import run_explain
from test_explain import RuleJudge, canned_run

pytest.importorskip("pysbd")  # the sentence splitter explain uses (an optional extra)


@pytest.fixture()
def explained(tmp_path: Path) -> Path:
    run = canned_run.__wrapped__(tmp_path)  # type: ignore[attr-defined]
    first = run_explain(run, [RuleJudge()], cache=False, bootstrap=0, progress=False)
    assert not first.reused and first.redone == ()
    return run


def test_rows_cut_mid_line_are_recomputed_and_said_so(explained: Path) -> None:
    rows = explained / "explanations" / "explanations.jsonl"
    whole = rows.read_bytes()
    rows.write_bytes(whole[: len(whole) // 2])  # a copy or a disk that stopped half-way
    with pytest.warns(RecomputedWarning, match=r"outputs do not check out \(recomputed: explanations/expl"):
        again = run_explain(explained, [RuleJudge()], cache=False, bootstrap=0, progress=False)
    assert not again.reused
    assert again.redone == (
        "explanations/explanations.jsonl changed since the stage wrote it (damaged or replaced)",
    )
    assert rows.read_bytes() == whole  # the same inputs give the same rows again
    assert run_explain(explained, [RuleJudge()], cache=False, bootstrap=0, progress=False).reused


def test_another_run_s_summary_is_recomputed(explained: Path, tmp_path: Path) -> None:
    """A summary of other settings (another threshold) copied in: a readable file, so only its
    hash tells it is not this stage's."""
    other = tmp_path / "other"
    shutil.copytree(explained, other)
    with pytest.warns(RecomputedWarning, match=r"written with other inputs \(recomputed: settings.threshold"):
        run_explain(other, [RuleJudge()], threshold=0.9, cache=False, bootstrap=0, progress=False)
    summary = explained / "explanations" / "explanations.json"
    shutil.copy(other / "explanations" / "explanations.json", summary)
    with pytest.warns(RecomputedWarning, match="explanations.json changed since the stage wrote it"):
        again = run_explain(explained, [RuleJudge()], cache=False, bootstrap=0, progress=False)
    assert not again.reused and again.summary["threshold"] == 0.5
    assert "explanations/explanations.json changed" in again.redone[0]


def test_the_command_line_says_recomputed(explained: Path) -> None:
    from typer.testing import CliRunner

    from nlibias.cli.main import app

    explain = ["explain", str(explained), "--judge", "fake:j", "--no-cache", "--bootstrap", "0"]
    assert CliRunner().invoke(app, explain).exit_code == 0  # fake:j's outputs, recorded
    rows = explained / "explanations" / "explanations.jsonl"
    rows.write_bytes(rows.read_bytes()[:-10])
    done = CliRunner().invoke(app, explain)
    assert done.exit_code == 0, done.output
    assert "(recomputed: explanations/explanations.jsonl changed since the stage wrote it" in done.output
    assert "reused" not in done.output
    # the library's warning, printed once as a warning (not again beside "wrote")
    assert done.output.count("recomputed") == 1 and "warning: " in done.output, done.output


def test_the_queue_refuses_explanations_the_report_calls_stale(explained: Path) -> None:
    from nlibias.report.explanation_sections import explanations_html
    from nlibias.report.load import load_runs
    from nlibias.validation.explanation_queue import draw_explanation_queue

    rows = explained / "explanations" / "explanations.jsonl"
    lines = rows.read_text(encoding="utf-8").splitlines()
    rows.write_text("\n".join(lines[:-1]) + "\n", encoding="utf-8")  # whole lines, so every row still reads
    assert "were replaced since explain wrote them" in explanations_html(load_runs([explained]))
    with pytest.raises(
        SourceError, match=r"not current: .*explanations\.jsonl changed since the stage wrote it"
    ):
        draw_explanation_queue(explained, size=10, seed=0)


def test_the_report_leaves_damaged_explanations_out_and_says_so(explained: Path, tmp_path: Path) -> None:
    """The report reads explanations through explain's own check: rows cut mid-line are left out,
    named in a warning (the terminal's, not only the page's) that says to run explain again."""
    import nlibias
    from nlibias.report.explanation_sections import ExplanationsLeftOutWarning

    rows = explained / "explanations" / "explanations.jsonl"
    rows.write_bytes(rows.read_bytes()[: rows.stat().st_size // 2])
    with pytest.warns(ExplanationsLeftOutWarning) as caught:
        nlibias.make_report(explained, tmp_path / "r.html", plots=False)
    said = str(caught[0].message)
    assert str(rows) in said and "run nlibias explain again" in said, said
    page = (tmp_path / "r.html").read_text(encoding="utf-8")
    assert f"{rows} changed since the stage wrote it" in page


def test_the_stage_engine_reuses_a_stage_only_while_its_recorded_outputs_check_out(tmp_path: Path) -> None:
    """Any stage (debias' augmentation records its files so): the same inputs and intact outputs
    are done; an output cut short or replaced makes the stage run again, saying which."""
    from nlibias.io.stages import DONE, RUN, Stage, begin_stage, finish_stage, stage_status

    stage = Stage("augment", tmp_path / "augmented", tmp_path / "augmented" / "summary.json", {"train": "ab"})
    begin_stage(tmp_path, stage, RUN)
    stage.output.mkdir()
    (stage.output / "train.jsonl").write_text('{"a": 1}\n{"a": 2}\n')
    stage.finished.write_text("{}")
    finish_stage(tmp_path, stage, ["augmented/train.jsonl", "augmented/summary.json"])
    assert stage_status(tmp_path, stage) == (DONE, [])
    (stage.output / "train.jsonl").write_text('{"a": 1}\n{"a"')
    assert stage_status(tmp_path, stage) == (
        RUN, ["augmented/train.jsonl changed since the stage wrote it (damaged or replaced)"],
    )  # fmt: skip
    (stage.output / "train.jsonl").write_text('{"a": 1}\n{"a": 2}\n')  # the same bytes again: intact
    stage.finished.unlink()
    assert stage_status(tmp_path, stage) == (RUN, ["augmented/summary.json is missing"])
