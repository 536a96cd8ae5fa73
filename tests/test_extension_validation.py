"""Validation hand-off (queue, judgements), counterfactual expansion and dataset export."""

from __future__ import annotations

import csv
import json
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from nlibias.errors import SourceError
from nlibias.extension.counterfactual import expand_counterfactuals
from nlibias.extension.dataset import export_dataset
from nlibias.extension.fill import fill_masked_samples
from nlibias.extension.validation_handoff import (
    apply_judgements,
    build_queue,
    hypothesis_id,
    read_judgements,
    read_queue,
    write_validation_queue,
)
from nlibias.models.mlm.mask_filler import FakeMaskFiller
from nlibias.schema import Sample
from test_extension_fill import masked_samples
from test_extension_masks import synthetic

SUBTOPICS = {"syn": synthetic()}


def replace_candidates() -> list[Sample]:
    """The 8 masked samples of "{{GROUP2}} are less <mask> at {{JOB}}." filled with the one word "good".

    Premise 0 names the groups ("men and women work in JOB."), premise 1 does not ("Some people
    work."); jobs coding and surgery; pro and anti formulations: 2 x 2 x 2 = 8 candidates.
    """
    masked = [m for m in masked_samples() if "and <mask>" not in m.hypothesis]
    run = fill_masked_samples(masked, FakeMaskFiller(words=("good",)), None, top_k=1, progress=False)
    assert len(run.candidates) == 8
    return run.candidates


def write_csv(path: Path, rows: list[dict[str, str]]) -> Path:
    with path.open("w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    return path


# --- queue and judgements -----------------------------------------------------------------------


def test_queue_has_one_row_per_unique_hypothesis(tmp_path: Path) -> None:
    kept = replace_candidates()
    path = write_validation_queue(tmp_path, kept)
    assert path == tmp_path / "validation" / "queue.csv"
    rows = read_queue(path)
    # hypotheses: {women, men} x {coding, surgery} = 4 unique texts, each on 2 premises
    assert len(rows) == 4 and {r.samples for r in rows} == {2}
    row = next(r for r in rows if r.hypothesis == "women are less good at coding.")
    assert row.masked_template == "{{GROUP2}} are less <mask> at {{JOB}}."
    assert row.bbnli_template == "{{GROUP2}} are less {{ADJ}} at {{JOB}}."
    assert (row.fill_word, row.suggested_stereotype, row.subtopic) == ("good", "pro", "syn")
    assert row.example_premise in ("men and women work in coding.", "Some people work.")
    assert row.judgement == "" and row.stereotype == ""


def test_a_queue_row_edited_after_the_export_is_refused_naming_its_line(tmp_path: Path) -> None:
    path = write_validation_queue(tmp_path, replace_candidates())
    path.write_text(path.read_text().replace("women are less good at coding.", "women code."))
    with pytest.raises(SourceError) as refused:
        read_queue(path)
    assert (refused.value.field, refused.value.line) == ("hypothesis_id", 4)
    assert "is not the id of this subtopic and hypothesis" in str(refused.value)
    assert "restore the row as the pipeline wrote it" in str(refused.value)


def test_judgements_are_read_by_id_or_by_text_and_empty_rows_are_unjudged(tmp_path: Path) -> None:
    queue = build_queue(replace_candidates())
    by_text = {r.hypothesis: r.hypothesis_id for r in queue}
    path = write_csv(
        tmp_path / "j.csv",
        [
            {
                "hypothesis_id": by_text["women are less good at coding."],
                "subtopic": "",
                "hypothesis": "",
                "judgement": "valid",
                "stereotype": "pro",
            },
            {
                "hypothesis_id": "",
                "subtopic": "syn",
                "hypothesis": "men are less good at coding.",
                "judgement": "Valid",
                "stereotype": "ANTI",
            },
            {
                "hypothesis_id": by_text["women are less good at surgery."],
                "subtopic": "",
                "hypothesis": "",
                "judgement": "incoherent",
                "stereotype": "",
            },
            {
                "hypothesis_id": by_text["men are less good at surgery."],
                "subtopic": "",
                "hypothesis": "",
                "judgement": "",
                "stereotype": "",
            },
        ],
    )
    judgements = read_judgements(path, queue)
    assert {j.judgement for j in judgements.values()} == {"valid", "incoherent"}
    assert judgements[by_text["men are less good at coding."]].stereotype == "anti"
    assert len(judgements) == 3


@pytest.mark.parametrize(
    ("row", "field", "reason"),
    [
        (
            {"hypothesis_id": "h000000000000", "judgement": "valid", "stereotype": "pro"},
            "hypothesis_id",
            "not in the validation queue",
        ),
        (
            {"hypothesis_id": "{women coding}", "judgement": "fine", "stereotype": "pro"},
            "judgement",
            "unknown judgement 'fine'",
        ),
        (
            {"hypothesis_id": "{women coding}", "judgement": "valid", "stereotype": "both"},
            "stereotype",
            "unknown stereotype 'both'",
        ),
        (
            {"hypothesis_id": "{women coding}", "judgement": "valid", "stereotype": ""},
            "stereotype",
            "needs pro or anti",
        ),
        (
            {"hypothesis_id": "{men coding}", "judgement": "invalid", "stereotype": ""},
            "hypothesis_id",
            "duplicate judgement",
        ),
        (  # was accepted, the stereotype dropped without a word
            {"hypothesis_id": "{women coding}", "judgement": "invalid", "stereotype": "pro"},
            "stereotype",
            "an invalid hypothesis takes no stereotype",
        ),
    ],
)
def test_bad_judgements_are_refused_with_line_numbers(
    tmp_path: Path, row: dict[str, str], field: str, reason: str
) -> None:
    queue = build_queue(replace_candidates())
    ids = {
        "{women coding}": hypothesis_id("syn", "women are less good at coding."),
        "{men coding}": hypothesis_id("syn", "men are less good at coding."),
    }
    first = {"hypothesis_id": ids["{men coding}"], "judgement": "valid", "stereotype": "anti"}
    bad = {**row, "hypothesis_id": ids.get(row["hypothesis_id"], row["hypothesis_id"])}
    path = write_csv(tmp_path / "j.csv", [first, bad])
    with pytest.raises(SourceError) as caught:
        read_judgements(path, queue)
    assert (caught.value.line, caught.value.field) == (3, field)  # header is line 1
    assert reason in caught.value.reason


def test_apply_judgements_keeps_valid_hypotheses_with_the_judged_stereotype() -> None:
    kept = replace_candidates()
    queue = build_queue(kept)
    by_text = {r.hypothesis: r.hypothesis_id for r in queue}
    from nlibias.extension.validation_handoff import Judgement

    judgements = {
        by_text["women are less good at coding."]: Judgement(
            by_text["women are less good at coding."], "valid", "anti", 2
        ),
        by_text["men are less good at coding."]: Judgement(
            by_text["men are less good at coding."], "invalid", None, 3
        ),
    }
    result = apply_judgements(kept, judgements)
    # the valid hypothesis is on 2 premises; its samples take the judged stereotype (anti, not pro)
    assert [s.stereotype for s in result.accepted] == ["anti", "anti"]
    assert result.summary["categories"] == {
        "valid": {"hypotheses": 1, "samples": 2},
        "invalid": {"hypotheses": 1, "samples": 2},
        "incoherent": {"hypotheses": 0, "samples": 0},
        "unjudged": {"hypotheses": 2, "samples": 4},
    }
    unvalidated = apply_judgements(kept, None)
    assert len(unvalidated.accepted) == 8 and unvalidated.summary["status"] == "unvalidated"


# --- counterfactual expansion -------------------------------------------------------------------


def test_every_sample_gets_its_twin_by_re_rendering() -> None:
    accepted = apply_judgements(replace_candidates(), None).accepted
    result = expand_counterfactuals(accepted, SUBTOPICS, candidates=accepted)
    # premise 0 names the groups, so the twin (premise kept, groups swapped in the hypothesis) of
    # each of its 4 samples is new: 4 pairs with an added twin. On premise 1 ("Some people work.")
    # the pro and anti samples are each other's twins: 2 pairs, no duplicate.
    assert result.stats["pairs"] == 6 and result.stats["twins_added"] == 4
    assert result.stats["pairs_both_survived"] == 2
    samples = result.samples
    assert len(samples) == 12 and len({s.id for s in samples}) == 12
    assert len({(s.premise, s.hypothesis) for s in samples}) == 12
    pairs: dict[str | None, list[Sample]] = {}
    for sample in samples:
        pairs.setdefault(sample.pair_key, []).append(sample)
    for members in pairs.values():
        assert sorted(str(m.stereotype) for m in members) == ["anti", "pro"]
        assert members[0].premise == members[1].premise
    twin = next(
        s for s in samples if s.premise == "men and women work in coding." and s.provenance["added_as_twin"]
    )
    # "men" is inside "women": string replacement would give "wowomen"/"men are ..." errors
    assert twin.hypothesis == "men are less good at coding."
    assert (twin.stereotype, twin.group, twin.counterfactual_group) == ("anti", "women", "men")
    assert twin.provenance["fill_word"] == "good" and twin.provenance["filter"] is None


def test_pairs_whose_members_were_judged_alike_are_dropped() -> None:
    accepted = [replace(s, stereotype="pro") for s in apply_judgements(replace_candidates(), None).accepted]
    result = expand_counterfactuals(accepted, SUBTOPICS)
    # on premise 1 both members survive and both say "pro": 2 conflicting pairs dropped
    assert result.stats["conflicting_pairs_dropped"] == 2 and result.stats["pairs"] == 4


# --- export -------------------------------------------------------------------------------------


def test_export_writes_loadable_files_whose_counts_match_the_card(tmp_path: Path) -> None:
    accepted = apply_judgements(replace_candidates(), None).accepted
    samples = expand_counterfactuals(accepted, SUBTOPICS).samples
    info = {
        "config": {"mlm": "fake", "top_k": 1, "policy": "any"},
        "fill": {"unique_masked_hypotheses": 4, "candidates": 8, "duplicates_dropped": 0, "short_lists": 0},
        "filter": {"kept": 8, "candidates": 8},
        "validation": {
            "status": "unvalidated",
            "categories": {"unvalidated": {"hypotheses": 4, "samples": 8}},
        },
        "counterfactual": {"pairs": 6},
        "tables": {
            "templates": [{"domain": "gender", "subtopic": "syn", "count": 1}],
            "masked": [{"domain": "gender", "subtopic": "syn", "count": 8}],
            "mispredicted": [],
            "policy_counts": {"any": 8},
        },
    }
    completed = export_dataset(tmp_path / "dataset", samples, info)
    assert set(completed["files"]["rows"].values()) == {12}
    card = (tmp_path / "dataset" / "README.md").read_text()
    assert card.splitlines()[card.splitlines().index("---", 1) + 1].startswith("**UNVALIDATED")
    assert "| gender | syn | 12 |" in card and "| all | Total | 12 |" in card
    from nlibias.io.samples import read_samples

    assert len(read_samples(tmp_path / "dataset")) == 12
    row = json.loads((tmp_path / "dataset" / "data" / "train.jsonl").read_text().splitlines()[0])
    assert row["fill_word"] == "good" and json.loads(row["provenance"])["masked_template"]


def test_a_judgement_column_given_twice_is_refused(tmp_path: Path) -> None:
    """csv.DictReader keeps the last of two same-named columns: ``valid`` here would be read as
    ``invalid``; the header is refused instead (both readers share its check)."""
    from nlibias.validation.formats import read_import

    queue = build_queue(replace_candidates())
    hid = hypothesis_id("syn", "men are less good at coding.")
    path = tmp_path / "j.csv"
    path.write_text(
        f"hypothesis_id,judgement,stereotype,judgement\n{hid},valid,anti,invalid\n", encoding="utf-8"
    )
    with pytest.raises(SourceError, match="column 'judgement' appears twice") as caught:
        read_judgements(path, queue)
    assert (caught.value.line, caught.value.field) == (1, "judgement")
    with pytest.raises(SourceError, match="appears twice"):
        read_import(path, queue, default_annotator="ana")


@pytest.mark.parametrize(
    ("name", "text", "fmt", "found"),
    [
        ("j.csv", "hypothesis_id,annotator,judgement,stereotype\n", "csv", "no judged row under the header"),
        ("e.json", "[]", "label-studio", "an empty list"),
        ("e.json", '[{"id": 1, "data": {}}]', "label-studio", "tasks without a submitted judgement: all 1"),
    ],
)
def test_a_file_with_no_judgement_is_refused_naming_it(
    tmp_path: Path, name: str, text: str, fmt: Any, found: str
) -> None:
    from nlibias.validation.formats import read_import

    queue = build_queue(replace_candidates())
    hid = hypothesis_id("syn", "men are less good at coding.")
    path = tmp_path / name
    path.write_text(text.replace("{}", f'{{"hypothesis_id": "{hid}"}}'), encoding="utf-8")
    with pytest.raises(SourceError, match=f"no judgement to import: {found}") as caught:
        read_import(path, queue, fmt=fmt)
    assert caught.value.path == str(path)
