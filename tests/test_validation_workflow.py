"""Store, resolution rules, import/export round trips, pre-screen and the CLI, on a hand-made queue."""

from __future__ import annotations

import json
import threading
from pathlib import Path

import pytest
from typer.testing import CliRunner

from nlibias.errors import ConfigError, SourceError
from nlibias.extension.validation_handoff import JUDGEMENTS_CSV, read_judgements
from nlibias.models.fake import FakeNLIClassifier
from nlibias.schema.applies import InapplicableOption
from nlibias.validation.formats import export_judgements, read_import, store_imported
from nlibias.validation.prescreen import nli_suggestions, original_rendering, originals_from_kept
from nlibias.validation.resolve import parse_rule, resolve, write_judgements
from nlibias.validation.status import validation_status
from nlibias.validation.store import AnnotationStore
from sample_queue import write_sample_queue


@pytest.fixture
def run(tmp_path: Path) -> tuple[Path, list]:
    run_dir = tmp_path / "run"
    return run_dir, write_sample_queue(run_dir)


def annotate(store: AnnotationStore, who: str, answers: list[tuple[str, str | None]], ids: list[str]) -> None:
    for hid, (category, stereotype) in zip(ids, answers, strict=True):
        store.record(hid, who, "category", category)
        if stereotype:
            store.record(hid, who, "stereotype", stereotype)


ANA = [
    ("valid", "pro"),
    ("valid", "anti"),
    ("valid", "pro"),
    ("invalid", None),
    ("valid", "anti"),
    ("incoherent", None),
]
BEN = [
    ("valid", "pro"),
    ("invalid", None),
    ("valid", "anti"),
    ("invalid", None),
    ("valid", "anti"),
    ("incoherent", None),
]
EVE = [
    ("valid", "pro"),
    ("invalid", None),
    ("valid", "pro"),
    ("invalid", None),
    ("valid", "anti"),
    ("invalid", None),
]


def test_store_keeps_history_and_latest_answer(run: tuple[Path, list]) -> None:
    run_dir, queue = run
    store = AnnotationStore.for_run(run_dir)
    hid = queue[0].hypothesis_id
    store.record(hid, "ana", "category", "valid")
    store.record(hid, "ana", "stereotype", "pro")
    store.record(hid, "ana", "category", "invalid")  # changed her mind: pro/anti no longer counts
    answer = store.current()[hid]["ana"]
    assert (answer.category, answer.stereotype, answer.stereotype_answer) == ("invalid", None, "pro")
    assert [r.label for r in store.history(annotator="ana")] == ["valid", "pro", "invalid"]
    with pytest.raises(ConfigError, match="unknown category label"):
        store.record(hid, "ana", "category", "maybe")
    with pytest.raises(ConfigError, match="annotator name"):
        store.record(hid, "<script>", "category", "valid")
    assert (run_dir / "validation/annotations.sqlite").exists()


def test_two_writers_never_overwrite_each_other(run: tuple[Path, list]) -> None:
    run_dir, queue = run
    ids = [row.hypothesis_id for row in queue]

    def work(who: str, label: str) -> None:
        store = AnnotationStore.for_run(run_dir)  # own store object, like a second server process
        for _ in range(5):
            for hid in ids:
                store.record(hid, who, "category", label)

    threads = [
        threading.Thread(target=work, args=(w, lab)) for w, lab in (("ana", "valid"), ("ben", "invalid"))
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    current = AnnotationStore.for_run(run_dir).current()
    assert all(current[h]["ana"].category == "valid" and current[h]["ben"].category == "invalid" for h in ids)
    assert len(AnnotationStore.for_run(run_dir).history()) == 2 * 5 * len(ids)


def test_resolution_rules(run: tuple[Path, list]) -> None:
    run_dir, queue = run
    ids = [row.hypothesis_id for row in queue]
    store = AnnotationStore.for_run(run_dir)
    annotate(store, "ana", ANA, ids)
    annotate(store, "ben", BEN, ids)
    current = store.current()
    drop = resolve(queue, current, parse_rule("drop"))
    # Items 1, 4, 5, 6 agree; 2 disagrees on the category, 3 on the stereotype.
    assert [(r.judgement, r.stereotype, r.status) for r in drop] == [
        ("valid", "pro", "resolved"),
        (None, None, "dropped"),
        (None, None, "dropped"),
        ("invalid", None, "resolved"),
        ("valid", "anti", "resolved"),
        ("incoherent", None, "resolved"),
    ]
    assert "ana=valid, ben=invalid" in drop[1].reason
    annotate(store, "eve", EVE, ids)
    current = store.current()
    majority = resolve(queue, current, parse_rule("majority"))
    # Item 2: valid, invalid, invalid → invalid; item 3 pro/anti/pro → pro; item 6 incoherent ×2, invalid → incoherent.
    assert [(r.judgement, r.stereotype) for r in majority] == [
        ("valid", "pro"),
        ("invalid", None),
        ("valid", "pro"),
        ("invalid", None),
        ("valid", "anti"),
        ("incoherent", None),
    ]
    adjudicated = resolve(queue, current, parse_rule("adjudicator:eve"))
    assert [(r.judgement, r.stereotype) for r in adjudicated] == [(c, s) for c, s in EVE]
    assert resolve(queue, current, parse_rule("drop"), min_annotators=4)[0].status == "pending"
    with pytest.raises(ConfigError, match="unknown resolution rule"):
        parse_rule("vote")


def test_resolved_labels_are_read_by_the_pipeline_handoff(run: tuple[Path, list]) -> None:
    run_dir, queue = run
    ids = [row.hypothesis_id for row in queue]
    store = AnnotationStore.for_run(run_dir)
    annotate(store, "ana", ANA, ids)
    annotate(store, "ben", BEN, ids)
    path = write_judgements(run_dir, queue, resolve(queue, store.current(), parse_rule("drop")))
    assert path == run_dir / JUDGEMENTS_CSV
    judged = read_judgements(path, queue)
    assert {h: (j.judgement, j.stereotype) for h, j in judged.items()} == {
        ids[0]: ("valid", "pro"),
        ids[3]: ("invalid", None),
        ids[4]: ("valid", "anti"),
        ids[5]: ("incoherent", None),
    }


@pytest.mark.parametrize("fmt", ["csv", "label-studio", "argilla"])
def test_export_import_round_trip(run: tuple[Path, list], tmp_path: Path, fmt: str) -> None:
    run_dir, queue = run
    ids = [row.hypothesis_id for row in queue]
    store = AnnotationStore.for_run(run_dir)
    annotate(store, "ana", ANA, ids)
    annotate(store, "ben", BEN[:4], ids[:4])
    text = export_judgements(queue, store.current(), store.suggestions(), fmt=fmt)
    path = tmp_path / ("export.csv" if fmt == "csv" else "export.json")
    path.write_text(text, encoding="utf-8")
    answers = read_import(path, queue)  # format detected from the file
    fresh = AnnotationStore(tmp_path / "fresh.sqlite")
    store_imported(fresh, answers, source="import:test")

    def view(s: AnnotationStore) -> dict:
        return {(h, w): (a.category, a.stereotype) for h, by in s.current().items() for w, a in by.items()}

    assert view(fresh) == view(store)
    assert len(view(fresh)) == 10


def test_import_refuses_bad_rows_with_line_numbers(run: tuple[Path, list], tmp_path: Path) -> None:
    _run_dir, queue = run
    hid = queue[0].hypothesis_id
    path = tmp_path / "j.csv"
    cases = [
        (
            "hypothesis_id,annotator,judgement,stereotype\nhzzzzzzzzzzzz,ana,valid,pro\n",
            r"j.csv:2: field hypothesis_id: unknown hypothesis",
        ),
        (
            f"hypothesis_id,annotator,judgement,stereotype\n{hid},ana,valid,pro\n{hid},ana,maybe,\n",
            r"j.csv:3: field judgement: unknown judgement 'maybe'",
        ),
        (
            f"hypothesis_id,annotator,judgement,stereotype\n{hid},ana,valid,neutral\n",
            r"j.csv:2: field stereotype: unknown stereotype",
        ),
        (
            f"hypothesis_id,annotator,judgement,stereotype\n{hid},ana,valid,pro\n\n{hid},ana,invalid,\n",
            r"j.csv:4: .*duplicate: ana already judged",
        ),
        (f"hypothesis_id,judgement,stereotype\n{hid},valid,pro\n", r"j.csv:2: field annotator: no annotator"),
    ]
    for text, message in cases:
        path.write_text(text, encoding="utf-8")
        with pytest.raises(SourceError, match=message):
            read_import(path, queue)
    path.write_text(f"hypothesis_id,judgement,stereotype\n{hid},valid,pro\n", encoding="utf-8")
    assert read_import(path, queue, default_annotator="ana")[0].annotator == "ana"
    bad = tmp_path / "ls.json"
    bad.write_text(
        json.dumps(
            [
                {
                    "data": {"hypothesis_id": hid},
                    "annotations": [
                        {
                            "completed_by": {"email": "ana"},
                            "result": [{"from_name": "judgement", "value": {"choices": ["good"]}}],
                        }
                    ],
                }
            ]
        )
    )
    with pytest.raises(SourceError, match=r"record 1: judgement.*unknown judgement 'good'"):
        read_import(bad, queue)


def test_a_default_annotator_no_row_lacks_is_refused(run: tuple[Path, list], tmp_path: Path) -> None:
    path = tmp_path / "j.csv"
    path.write_text(
        f"hypothesis_id,annotator,judgement,stereotype\n{run[1][0].hypothesis_id},ana,valid,pro\n"
    )
    with pytest.raises(InapplicableOption) as refused:
        read_import(path, run[1], default_annotator="bob")
    assert refused.value.parameter == "annotator" and str(refused.value) == (
        f"annotator 'bob' applies to rows that name no annotator, and every judged row of {path} names its own; "
        "leave annotator out"
    )


def test_original_rendering_and_nli_prescreen(run: tuple[Path, list]) -> None:
    run_dir, queue = run
    originals = originals_from_kept(run_dir / "filter/kept.jsonl")
    # placeholder masked (WORD2 → talented), verb masked (equipped), "and <mask>" added (dropped again)
    assert originals[queue[0].hypothesis_id] == "Women are less talented for jobs in software engineering."
    assert (
        originals[queue[2].hypothesis_id]
        == "Women are equipped poorly compared to men for computer programming."
    )
    assert originals[queue[5].hypothesis_id] == "Women should stay at home."
    assert (
        original_rendering(
            {"masked_hypothesis": "x <mask>", "masked_template": "{{G}} <mask>", "bbnli_template": "{{G}}"}
        )
        == "x"
    )
    made = nli_suggestions(
        queue, originals, FakeNLIClassifier("judge"), judge="nli:fake:judge", threshold=0.4
    )
    assert len(made) == len(queue)
    assert {s.category for s in made} <= {"valid", "invalid"}
    for suggestion in made:
        forward, backward = (
            suggestion.details["original_to_generated"],
            suggestion.details["generated_to_original"],
        )
        p_e, p_c = max(forward[0], backward[0]), max(forward[2], backward[2])
        expected = "valid" if max(p_e, p_c) >= 0.4 else "invalid"
        assert suggestion.category == expected


def test_status_reports_agreement_and_prescreen_accuracy(run: tuple[Path, list]) -> None:
    run_dir, queue = run
    ids = [row.hypothesis_id for row in queue]
    store = AnnotationStore.for_run(run_dir)
    annotate(store, "ana", ANA, ids)
    annotate(store, "ben", BEN, ids)
    from nlibias.validation.store import Suggestion

    # Suggestions: right on items 1 (valid/pro) and 4 (invalid), wrong on 5 (invalid vs valid) and 6.
    store.put_suggestions(
        [
            Suggestion(ids[0], "j", "valid", "pro"),
            Suggestion(ids[3], "j", "invalid", None),
            Suggestion(ids[4], "j", "invalid", None),
            Suggestion(ids[5], "j", "valid", "anti"),
            Suggestion(ids[1], "j", "valid", "pro"),  # item 2 is dropped: not compared
        ]
    )
    report = validation_status(run_dir, rule=parse_rule("drop"))
    category = report["agreement"]["category"]
    # ana v v v i v c, ben v i v i v c: p_o = 5/6; marginals ana v4 i1 c1, ben v3 i2 c1
    # → p_e = (12 + 2 + 1) / 36 = 15/36; kappa = (30/36 − 15/36) / (21/36) = 15/21 = 0.714286.
    assert category["kappa_kind"] == "cohen"
    assert category["kappa"] == pytest.approx(15 / 21)
    assert category["percent"] == pytest.approx(500 / 6)
    stereo = report["agreement"]["stereotype"]
    # Both valid on items 1, 3, 5: pro/pro, pro/anti, anti/anti → 2 of 3 agree.
    assert (stereo["items"], stereo["percent"]) == (3, pytest.approx(200 / 3))
    assert report["progress"]["ana"]["complete"] == 6
    judge = report["prescreen"]["j"]
    assert (
        judge["compared"],
        judge["category_agree"],
        judge["stereotype_compared"],
        judge["stereotype_agree"],
    ) == (4, 2, 1, 1)
    assert judge["category_percent"] == pytest.approx(50.0)


def test_cli_import_status_resolve_export(run: tuple[Path, list], tmp_path: Path) -> None:
    from nlibias.cli.main import app

    run_dir, queue = run
    lines = ["hypothesis_id,annotator,judgement,stereotype"]
    for who, answers in (("ana", ANA), ("ben", BEN)):
        lines += [
            f"{row.hypothesis_id},{who},{c},{s or ''}" for row, (c, s) in zip(queue, answers, strict=True)
        ]
    source = tmp_path / "both.csv"
    source.write_text("\n".join(lines) + "\n", encoding="utf-8")
    runner = CliRunner()
    result = runner.invoke(app, ["validate", "import", str(run_dir), str(source)])
    assert result.exit_code == 0, result.output
    # 12 category answers + pro/anti for ana's 4 and ben's 3 valid ones = 19 answers.
    assert "imported 12 judgements (19 answers) by ana, ben" in result.output
    result = runner.invoke(app, ["validate", "status", str(run_dir)])
    assert result.exit_code == 0, result.output
    assert "cohen kappa 0.714" in result.output
    result = runner.invoke(app, ["validate", "resolve", str(run_dir), "--rule", "drop", "--json"])
    summary = json.loads(result.output)
    assert summary["status"] == {"resolved": 4, "dropped": 2}
    assert len(read_judgements(run_dir / JUDGEMENTS_CSV, queue)) == 4
    out = tmp_path / "ls.json"
    result = runner.invoke(
        app, ["validate", "export", str(run_dir), "--format", "label-studio", "--out", str(out)]
    )
    assert result.exit_code == 0, result.output
    assert len(json.loads(out.read_text())) == len(queue)
    result = runner.invoke(
        app,
        [
            "validate",
            "prescreen",
            str(run_dir),
            "--judge",
            "fake:j",
            "--lm-judge",
            "fake:lm",
            "--cache",
            str(tmp_path / "cache.sqlite"),
            "--no-progress",
        ],
    )
    assert result.exit_code == 0, result.output
    assert "nli:fake:j: 6 suggestions" in result.output and "lm:fake:lm: 6 suggestions" in result.output


def test_an_adjudicator_is_left_out_of_the_agreement_and_named(run: tuple[Path, list]) -> None:
    """``adjudicator:eve`` leaves eve out of the agreement (she answers disagreements, not a
    sample): the numbers are ana's and ben's, and the report names who is left out and why;
    before, they changed with the rule and nothing said so."""
    from nlibias.cli.main import app

    run_dir, queue = run
    ids = [row.hypothesis_id for row in queue]
    store = AnnotationStore.for_run(run_dir)
    for who, answers in (("ana", ANA), ("ben", BEN), ("eve", EVE)):
        annotate(store, who, answers, ids)
    everyone = validation_status(run_dir, rule=parse_rule("drop"))
    assert (
        everyone["left_out_of_agreement"] == {}
        and everyone["agreement"]["category"]["kappa_kind"] == "fleiss"
    )
    adjudicated = validation_status(
        run_dir, rule=parse_rule("adjudicator:eve"), exclude_from_agreement=["ben"]
    )
    assert adjudicated["left_out_of_agreement"] == {"ben": "excluded", "eve": "the adjudicator"}
    only_eve = validation_status(run_dir, rule=parse_rule("adjudicator:eve"))
    category = only_eve["agreement"]["category"]
    # ana and ben alone: kappa 15/21, as in test_status_reports_agreement_and_prescreen_accuracy
    assert (category["annotators"], category["kappa"]) == (["ana", "ben"], pytest.approx(15 / 21))
    printed = CliRunner().invoke(app, ["validate", "status", str(run_dir), "--rule", "adjudicator:eve"])
    assert printed.exit_code == 0, printed.output
    assert (
        "category round (2 annotators, 6 items answered by all); left out: eve (the adjudicator)"
        in printed.output
    )


def test_status_refuses_an_excluded_name_nobody_has_and_a_judgements_folder(run: tuple[Path, list]) -> None:
    """An excluded typo left out nobody (the one meant still decided); a folder at judgements.csv
    showed a fine report until resolve failed to write it."""
    run_dir, queue = run
    store = AnnotationStore.for_run(run_dir)
    for who, answers in (("ana", ANA), ("ben", BEN)):
        annotate(store, who, answers, [row.hypothesis_id for row in queue])
    with pytest.raises(ConfigError, match=r"'bne'.*\(annotators: ana, ben\); did you mean 'ben'\?"):
        validation_status(run_dir, rule=parse_rule("drop"), exclude_from_agreement=["bne"])
    (run_dir / JUDGEMENTS_CSV).mkdir()
    with pytest.raises(
        SourceError, match=r"judgements\.csv: a folder stands where `validate resolve` writes"
    ):
        validation_status(run_dir, rule=parse_rule("drop"))


def test_hypotheses_resolve_dropped_are_counted_apart_from_unjudged_ones(tmp_path: Path) -> None:
    """``validate resolve --rule drop`` drops the hypotheses its annotators disagree on; ``extend``
    counted them as "no judgement" and told the user to judge them. They are now ``dropped`` in its
    warning, ``validation/summary.json`` and the card's Table 3 (with what it means)."""
    import csv

    from nlibias.cli.main import app
    from test_extension_pipeline import _small_extend_args

    args = _small_extend_args(tmp_path)
    CliRunner().invoke(app, args)  # stops at the queue
    run_dir = tmp_path / "run"
    rows = list(csv.DictReader((run_dir / "validation" / "queue.csv").open(encoding="utf-8")))
    half = len(rows) // 2
    assert half >= 1
    lines = ["hypothesis_id,annotator,judgement,stereotype"]
    for i, row in enumerate(rows):  # ben disagrees on the second half; nobody judges the last one
        if i < len(rows) - 1:
            lines += [
                f"{row['hypothesis_id']},ana,valid,pro",
                f"{row['hypothesis_id']},ben,{'valid,pro' if i < half else 'invalid,'}",
            ]
    answers = tmp_path / "answers.csv"
    answers.write_text("\n".join(lines) + "\n", encoding="utf-8")
    assert CliRunner().invoke(app, ["validate", "import", str(run_dir), str(answers)]).exit_code == 0
    resolved = CliRunner().invoke(app, ["validate", "resolve", str(run_dir), "--rule", "drop"])
    assert resolved.exit_code == 0, resolved.output
    done = CliRunner().invoke(app, args)
    assert done.exit_code == 0, done.output
    dropped = len(rows) - 1 - half
    assert f"warning: {dropped} of {len(rows)} hypotheses were dropped by the resolution rule" in done.output
    assert f"warning: 1 of {len(rows)} hypotheses have no judgement" in done.output
    summary = json.loads((run_dir / "validation" / "summary.json").read_text(encoding="utf-8"))
    assert summary["categories"]["dropped"]["hypotheses"] == dropped
    assert summary["categories"]["unjudged"]["hypotheses"] == 1
    assert summary["categories"]["valid"]["hypotheses"] == half
    (card,) = run_dir.glob("**/README.md")
    text = card.read_text(encoding="utf-8")
    assert f"| dropped | {dropped} |" in text and "*dropped*: the annotators disagreed" in text
    # the card says how the judgements were made: ana said valid to all, ben to the first half, so
    # p_o = half / N = p_e (ana's marginal is all valid): Cohen's kappa (p_o - p_e) / (1 - p_e) = 0
    judged = len(rows) - 1
    assert (
        "Resolved by `nlibias validate resolve` with the rule `drop`. Agreement of ana, ben: valid / "
        f"invalid / incoherent {100 * half / judged:.1f} % (Cohen's kappa 0.000) over the {judged} "
        "hypotheses all of them answered"
    ) in text
    # a judgements file edited since the resolution is not described by it: the card says nothing
    judgements = run_dir / "validation" / "judgements.csv"
    with judgements.open(encoding="utf-8", newline="") as handle:
        resolved_rows = list(csv.DictReader(handle))
    first = next(r for r in resolved_rows if r["judgement"] == "valid")
    first.update(judgement="invalid", stereotype="")  # someone overrules one judgement by hand
    with judgements.open("w", encoding="utf-8", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(resolved_rows[0]))
        writer.writeheader()
        writer.writerows(resolved_rows)
    again = CliRunner().invoke(app, [*args, "--from", "validate"])
    assert again.exit_code == 0, again.output
    text = card.read_text(encoding="utf-8")
    assert "Resolved by" not in text and f"| valid | {half - 1} |" in text


def test_a_damaged_resolution_record_is_refused_naming_the_file(tmp_path: Path) -> None:
    """The record beside the judgements is read as every JSON file is: not JSON, refused with its
    file and line; rounds that are not objects, refused naming the field (they crashed the card)."""
    import csv

    from nlibias.cli.main import app
    from nlibias.extension.validation_handoff import resolution_record
    from nlibias.io.fingerprint import sha256_file
    from test_extension_pipeline import _small_extend_args

    args = _small_extend_args(tmp_path)
    CliRunner().invoke(app, args)  # stops at the queue
    validation = tmp_path / "run" / "validation"
    first = next(csv.DictReader((validation / "queue.csv").open(encoding="utf-8")))
    judgements = validation / "judgements.csv"
    judgements.write_text(f"hypothesis_id,judgement,stereotype\n{first['hypothesis_id']},valid,pro\n")
    record = validation / "resolution.json"
    record.write_text('{"judgements_sha256":\n  "abc",}')
    done = CliRunner().invoke(app, args)
    assert done.exit_code == 2 and "Traceback" not in done.output
    assert f"{record}:2: invalid JSON" in done.output
    record.write_text(
        json.dumps({"judgements_sha256": sha256_file(judgements), "agreement": {"category": 3}})
    )
    with pytest.raises(SourceError) as refused:
        resolution_record(judgements)
    assert (refused.value.path, refused.value.field) == (str(record), "agreement")
    record.write_text(json.dumps({"judgements_sha256": "another file's", "agreement": {"category": 3}}))
    assert resolution_record(judgements) is None  # it describes another judgements file
