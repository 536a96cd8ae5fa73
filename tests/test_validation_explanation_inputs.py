"""What the explanations round of ``nlibias validate`` does with inputs a user can get wrong, in the
library (the command line's answers are the bad-input corpus' ``validate-explanations`` cases):
damaged rows of ``explanations.jsonl`` named by line and field, sizes beyond the answers and
redraws that leave answered items out warned about, a redraw with the same settings kept as it
was, and the hypotheses-only functions on an explained run refused saying what to do instead."""

from __future__ import annotations

import json
import warnings
from pathlib import Path
from typing import Any

import pytest

from nlibias.errors import SourceError
from nlibias.explanations.run_files import read_rows, row_problem
from nlibias.jobs.validation import export, import_judgements, resolve, status
from nlibias.validation.explanation_queue import (
    QueueWarning,
    draw_explanation_queue,
    explanations_fingerprint,
    read_explanation_queue,
)
from nlibias.validation.store import AnnotationStore
from test_validation_explanations import grid_rows, row, write_explanations


@pytest.mark.parametrize(
    ("edit", "field", "reason"),
    [
        ({"judge": None}, "judge", "expected non-empty text, got null"),
        ({"premise": 3}, "premise", "expected text, got 3"),
        ({"label": "great"}, "label", '"great" is not one of balanced, biased, invalid (or null)'),
        ({"lm_label": 2}, "lm_label", "2 is not one of balanced, biased, invalid (or null)"),
        ({"stereotype": "both"}, "stereotype", '"both" is not one of pro, anti (or null)'),
        ({"subtopic": ["t"]}, "subtopic", 'expected text or null, got ["t"]'),
        ({"grounded": 1.5}, "grounded", "expected a share between 0 and 1 or null, got 1.5"),
        ({"consistent": "yes"}, "consistent", 'expected true, false or null, got "yes"'),
    ],
)
def test_a_damaged_row_is_named_by_line_and_field(
    tmp_path: Path, edit: dict[str, Any], field: str, reason: str
) -> None:
    rows = grid_rows()
    assert all(row_problem(r) is None for r in rows)  # what explain writes (and the tests' rows) pass
    rows[4] = {**rows[4], **edit}
    run = write_explanations(tmp_path / "G", rows)
    with pytest.raises(SourceError) as caught:
        read_rows(run / "explanations")
    assert (caught.value.line, caught.value.field, caught.value.reason) == (5, field, reason)
    assert "run explain on the audit run again" in str(caught.value)
    with pytest.raises(SourceError, match=f"explanations.jsonl:5: field {field}"):
        draw_explanation_queue(run, size=3)


def test_a_missing_field_and_a_row_that_is_no_object(tmp_path: Path) -> None:
    rows: list[Any] = grid_rows()
    del rows[0]["explanation"]
    assert row_problem(rows[0]) == ("explanation", "missing")
    assert row_problem("text") == (None, 'expected a JSON object, got "text"')
    empty = write_explanations(tmp_path / "E", [])
    with pytest.raises(SourceError, match=r"explanations\.jsonl: no rows"):
        draw_explanation_queue(empty)
    with pytest.raises(SourceError, match="no such run directory"):
        explanations_fingerprint(tmp_path / "nowhere")


def test_a_size_beyond_the_answers_queues_them_all_with_a_warning(tmp_path: Path) -> None:
    run = write_explanations(tmp_path / "G", grid_rows())
    with pytest.warns(QueueWarning, match="size is 500 but .* holds 27 explained answers: all 27 are queued"):
        queue = draw_explanation_queue(run, size=500)
    assert len(queue.items) == queue.available == 27
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no warning for a size the answers fill
        draw_explanation_queue(run, size=27)


def test_a_redraw_with_the_same_settings_keeps_the_queue_and_its_answers(tmp_path: Path) -> None:
    run = write_explanations(tmp_path / "G", grid_rows())
    first = draw_explanation_queue(run, size=9, seed=3)
    store = AnnotationStore.for_run(run)
    for item in first.items:
        store.record_explanation(item.item_id, "ana", "biased", fingerprint=first.fingerprint)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        again = draw_explanation_queue(run, size=9, seed=3)
    assert again == first and read_explanation_queue(run) == first
    assert status(run)["explanations"]["progress"]["ana"]["judged"] == 9


def test_a_redraw_that_leaves_answered_items_out_warns_with_the_settings_to_get_them_back(
    tmp_path: Path,
) -> None:
    run = write_explanations(tmp_path / "G", grid_rows())
    first = draw_explanation_queue(run, size=9, seed=3)
    store = AnnotationStore.for_run(run)
    for item in first.items[:4]:
        store.record_explanation(item.item_id, "ana", "invalid", fingerprint=first.fingerprint)
    with pytest.warns(QueueWarning) as caught:
        smaller = draw_explanation_queue(run, size=1, seed=3)
    left_out = {it.item_id for it in first.items[:4]} - {it.item_id for it in smaller.items}
    assert len(left_out) in (3, 4) and len(caught) == 1
    assert str(caught[0].message).startswith(
        f"{len(left_out)} answered items of the queue drawn before (size=9, seed=3, judge='j')"
    )
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # back to the first settings: nothing answered is left out
        assert draw_explanation_queue(run, size=9, seed=3) == first


def test_the_hypotheses_functions_on_an_explained_run_say_what_to_do_instead(tmp_path: Path) -> None:
    run = write_explanations(tmp_path / "G", grid_rows())
    judged = tmp_path / "judged.csv"
    judged.write_text("item_id,annotator,label\nx0,ana,biased\n", encoding="utf-8")
    calls = (lambda: resolve(run), lambda: export(run), lambda: import_judgements(run, judged))
    for call in calls:  # no queue drawn yet: draw it
        with pytest.raises(
            SourceError, match=r"validation/queue\.csv: file does not exist: this is an explained"
        ):
            call()
    with pytest.raises(SourceError, match="draw it first with `nlibias validate explanations RUN`"):
        status(run)
    draw_explanation_queue(run, size=3)
    for call in calls:  # a queue drawn: its answers are given in the app, and status reads them
        with pytest.raises(
            SourceError, match=r"validation is of explained answers \(validation/explanations_queue"
        ):
            call()
    assert set(status(run)) == {"run_dir", "explanations"}


def test_status_refuses_a_damaged_queue_and_explanations_gone(tmp_path: Path) -> None:
    run = write_explanations(tmp_path / "G", [row("a", "t", "biased")])
    draw_explanation_queue(run, size=1)
    queue = run / "validation" / "explanations_queue.json"
    text = queue.read_text(encoding="utf-8")
    queue.write_text(json.dumps({"items": []}), encoding="utf-8")
    with pytest.raises(SourceError, match=r"explanations_queue\.json: not an explanations queue"):
        status(run)
    queue.write_text(text, encoding="utf-8")
    (run / "explanations" / "explanations.jsonl").unlink()
    with pytest.raises(SourceError, match=r"explanations\.jsonl: no explanations here"):
        status(run)
