"""Options of ``validate resolve``, ``status`` and ``import`` that leave nothing to do, or that are
not what the file holds, refused naming the option (not reported as a fine, empty result)."""

from __future__ import annotations

import json
import re
import warnings
from pathlib import Path

import pytest
from typer.testing import CliRunner

from nlibias.errors import ConfigError, SourceError
from nlibias.extension.validation_handoff import JUDGEMENTS_CSV
from nlibias.jobs.validation import import_judgements, resolve, status
from nlibias.validation.formats import export_judgements, read_import
from nlibias.validation.resolve import NothingResolvedWarning
from nlibias.validation.store import AnnotationStore
from sample_queue import write_sample_queue
from test_validation_workflow import ANA, BEN, annotate


@pytest.fixture
def run(tmp_path: Path) -> tuple[Path, list]:
    run_dir = tmp_path / "run"
    return run_dir, write_sample_queue(run_dir)


def _judged(run: tuple[Path, list], *who: str) -> Path:
    run_dir, queue = run
    store = AnnotationStore.for_run(run_dir)
    for name, answers in (("ana", ANA), ("ben", BEN)):
        if name in who:
            annotate(store, name, answers, [row.hypothesis_id for row in queue])
    return run_dir


def test_resolve_refuses_more_annotators_than_answered_and_an_unjudged_queue(run: tuple[Path, list]) -> None:
    """Every hypothesis would stay pending: the judgements file (replacing an earlier one) would
    hold no final label, and ``extend --from validate`` would keep none."""
    run_dir = run[0]
    with pytest.raises(SourceError, match=r"queue\.csv: no hypothesis of the queue has been judged yet"):
        resolve(run_dir)
    _judged(run, "ana", "ben")
    with pytest.raises(ConfigError) as refused:
        resolve(run_dir, min_annotators=3)
    assert refused.value.parameter == "min_annotators"
    assert str(refused.value).startswith(
        "min_annotators 3: no hypothesis has answers from 3 annotators (the most any has is 2), so all 6"
    )
    assert not (run_dir / JUDGEMENTS_CSV).exists()
    assert resolve(run_dir, min_annotators=2)["status"] == {"resolved": 4, "dropped": 2}


def test_resolve_warns_when_no_hypothesis_gets_a_final_label(run: tuple[Path, list]) -> None:
    """Enough annotators, all disagreeing: a faithful result, warned of, and no next step printed."""
    from nlibias.cli.main import app

    run_dir, queue = run
    store = AnnotationStore.for_run(run_dir)
    ids = [row.hypothesis_id for row in queue]
    annotate(store, "ana", [("valid", "pro")] * len(ids), ids)
    annotate(store, "ben", [("invalid", None)] * len(ids), ids)
    with pytest.warns(
        NothingResolvedWarning, match=r"no hypothesis of .*queue\.csv got a final label \(dropped 6"
    ):
        resolve(run_dir)
    printed = CliRunner().invoke(app, ["validate", "resolve", str(run_dir)])
    assert printed.exit_code == 0, printed.output
    assert "got a final label" in printed.output and "next:" not in printed.output
    annotate(store, "ana", [("invalid", None)] * len(ids), ids)  # she changed her mind: all agree
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert resolve(run_dir)["status"] == {"resolved": 6}


def test_status_refuses_excluding_every_annotator(run: tuple[Path, list]) -> None:
    run_dir = _judged(run, "ana", "ben")
    assert status(run_dir, exclude="ben")["agreement"]["category"]["annotators"] == ["ana"]
    with pytest.raises(
        ConfigError, match=r"^exclude leaves out every annotator who judged this run \(ana, ben\)"
    ):
        status(run_dir, exclude=["ana", "ben"])


def test_import_checks_the_annotator_option_before_the_file(run: tuple[Path, list], tmp_path: Path) -> None:
    run_dir, queue = run
    path = tmp_path / "j.csv"
    path.write_text(f"hypothesis_id,judgement,stereotype\n{queue[0].hypothesis_id},valid,pro\n")
    for name in ("", " ", "ann\nbob"):
        with pytest.raises(
            ConfigError, match="^" + re.escape(f"annotator name {name!r} is not allowed")
        ) as refused:
            import_judgements(run_dir, path, annotator=name)
        assert refused.value.parameter == "annotator"
    assert import_judgements(run_dir, path, annotator="ann").annotators == ("ann",)


@pytest.mark.parametrize(("written", "read"), [("label-studio", "argilla"), ("argilla", "label-studio")])
def test_import_refuses_the_other_json_format_naming_it(
    run: tuple[Path, list], tmp_path: Path, written: str, read: str
) -> None:
    """Read as the other format, a task's or a record's ids were looked for where they are not
    ("unknown hypothesis '1'"); the file is named in the format it is in."""
    run_dir, queue = run
    _judged(run, "ana")
    store = AnnotationStore.for_run(run_dir)
    path = tmp_path / "export.json"
    path.write_text(export_judgements(queue, store.current(), fmt=written), encoding="utf-8")
    with pytest.raises(SourceError) as refused:
        read_import(path, queue, fmt=read)
    assert (refused.value.field, refused.value.parameter) == ("record 1", "fmt")
    assert f"the file is in {written}'s format (pass fmt {written}, or leave fmt out" in str(refused.value)
    assert len(read_import(path, queue)) == len(queue)  # told from the file
    # a record of the format read that lacks some of its keys is still read as that format
    hid = queue[0].hypothesis_id
    path.write_text(
        json.dumps([{"id": hid, "responses": {"judgement": [{"value": "invalid", "user_id": "x"}]}}])
    )
    assert [a.category for a in read_import(path, queue, fmt="argilla")] == ["invalid"]
