"""Masked templates (curated file, validation errors, derivation) and masked-sample expansion."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from nlibias.benchmarks.bbnli import BBNLISubtopic, BBNLITemplate, load_bbnli_dir
from nlibias.errors import SourceError
from nlibias.extension.masked_templates import (
    MASK,
    STRATEGIES,
    MaskedTemplate,
    classify_derivation,
    combine_templates,
    default_templates_path,
    derive_masked_templates,
    expand_masked_templates,
    load_masked_templates,
    masked_counts,
    template_counts,
    template_id,
)


@pytest.fixture(scope="module")
def bbnli(data_dir: Path) -> list[BBNLISubtopic]:
    return load_bbnli_dir(data_dir / "bbnli")


def synthetic() -> BBNLISubtopic:
    return BBNLISubtopic(
        path="synthetic.json",
        subtopic="syn",
        name="syn",
        domain="gender",
        premises=("{{GROUP1}} and {{GROUP2}} work in {{JOB}}.", "Some people work."),
        test_hypotheses=(),
        bias_hypotheses=(
            BBNLITemplate(0, "{{GROUP2}} are less {{ADJ}} at {{JOB}}.", "neutral", "entailment"),
            BBNLITemplate(1, "The weather is nice.", "neutral", "entailment"),
        ),
        words={"ADJ": ("talented", "able"), "JOB": ("coding", "surgery")},
        group1="men",
        group2="women",
    )


def curated(subtopic: BBNLISubtopic, index: int, masked: str) -> MaskedTemplate:
    """A template as the loader would build it (strategy found by classify_derivation)."""
    found = classify_derivation(subtopic.bias_hypotheses[index].text, masked)
    assert found is not None
    return MaskedTemplate(
        template_id(subtopic.subtopic, index, masked), subtopic.subtopic, index, masked, *found, "curated"
    )


# --- the curated file ---------------------------------------------------------------------------


def test_curated_file_covers_every_subtopic_with_all_strategies(bbnli: list[BBNLISubtopic]) -> None:
    templates = load_masked_templates(None, bbnli)
    rows = template_counts(templates, bbnli)
    assert len(rows) == 16
    assert len(templates) >= 200
    assert min(row["count"] for row in rows) >= 8
    assert {t.strategy for t in templates} == set(STRATEGIES)
    assert all(t.text.count(MASK) == 1 for t in templates)
    # every template is tied to a real bias hypothesis whose text it derives from
    by_id = {s.subtopic: s for s in bbnli}
    for template in templates:
        source = by_id[template.subtopic].bias_hypotheses[template.template_index].text
        assert classify_derivation(source, template.text) == (template.strategy, template.original)


def test_template_ids_are_stable_and_unique(bbnli: list[BBNLISubtopic]) -> None:
    first = load_masked_templates(default_templates_path(), bbnli)
    second = load_masked_templates(default_templates_path(), bbnli)
    assert [t.id for t in first] == [t.id for t in second]
    assert len({t.id for t in first}) == len(first)


# --- derivation strategies ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("source", "masked", "expected"),
    [
        ("{{GROUP2}} are equipped poorly.", "{{GROUP2}} are <mask> poorly.", ("mask_word", "equipped")),
        (
            "{{GROUP2}} are less {{WORD2}} here.",
            "{{GROUP2}} are less <mask> here.",
            ("replace_placeholder", "{{WORD2}}"),
        ),
        (
            "{{GROUP2}} are less {{WORD2}} here.",
            "{{GROUP2}} are less {{WORD2}} and <mask> here.",
            ("add_beside", "{{WORD2}}"),
        ),
        (
            "{{GROUP2}} are less talented.",
            "{{GROUP2}} are less talented and <mask>.",
            ("add_beside", "talented"),
        ),
        ("{{GROUP2}} are suitable.", "{{GROUP2}} are suit<mask>.", None),  # part of a word
        ("{{GROUP2}} are very able.", "{{GROUP2}} are <mask>.", None),  # two words
        ("{{GROUP2}} are able.", "{{GROUP1}} are <mask>.", None),  # group changed
        ("{{GROUP2}} are able.", "{{GROUP2}} <mask> <mask>.", None),
    ],
)
def test_classify_derivation(source: str, masked: str, expected: tuple[str, str] | None) -> None:
    assert classify_derivation(source, masked) == expected


def test_derive_uses_the_three_strategies_and_skips_stop_words_and_groupless_templates() -> None:
    derived = derive_masked_templates(synthetic())
    # "{{GROUP2}} are less {{ADJ}} at {{JOB}}.": are/less/at are stop words, GROUP2 is never
    # masked, so only the two word-list placeholders give templates: replace + add_beside each.
    # "The weather is nice." names no group: skipped.
    assert sorted((t.strategy, t.text) for t in derived) == sorted(
        [
            ("replace_placeholder", "{{GROUP2}} are less <mask> at {{JOB}}."),
            ("add_beside", "{{GROUP2}} are less {{ADJ}} and <mask> at {{JOB}}."),
            ("replace_placeholder", "{{GROUP2}} are less {{ADJ}} at <mask>."),
            ("add_beside", "{{GROUP2}} are less {{ADJ}} at {{JOB}} and <mask>."),
        ]
    )
    assert all(t.origin == "derived" and t.template_index == 0 for t in derived)


def test_derive_masks_words_when_they_are_not_stop_words() -> None:
    derived = derive_masked_templates(synthetic(), stopwords=(), strategies=["mask_word"])
    # words of length >= 3: "are", "less" (not "at"); capitalised inner words would be kept.
    assert sorted(t.original for t in derived) == ["are", "less"]


def test_derive_never_masks_the_group_names(bbnli: list[BBNLISubtopic]) -> None:
    clean = next(s for s in bbnli if s.subtopic == "white_is_to_clean")  # groups: white / black
    derived = derive_masked_templates(clean)
    # template 5 is "White Christians praise purity and cleanliness more than {{GROUP2}} Christians do."
    assert derived and not any(t.original.lower() in ("white", "black") for t in derived)
    assert any(t.original == "praise" for t in derived)


def test_derived_templates_of_the_real_source_load_as_a_file(
    bbnli: list[BBNLISubtopic], tmp_path: Path
) -> None:
    derived = [t for s in bbnli for t in derive_masked_templates(s)]
    path = tmp_path / "derived.jsonl"
    path.write_text("\n".join(t.file_line() for t in derived) + "\n")
    reloaded = load_masked_templates(path, bbnli)
    assert [t.id for t in reloaded] == [t.id for t in derived]
    combined = combine_templates(load_masked_templates(None, bbnli), derived)
    assert len(combined) < len(derived) + len(load_masked_templates(None, bbnli))  # some coincide, kept once


# --- validation errors --------------------------------------------------------------------------

GOOD = {"subtopic": "syn", "template": 0, "masked": "{{GROUP2}} are less <mask> at {{JOB}}."}


@pytest.mark.parametrize(
    ("line", "field", "reason"),
    [
        (
            {**GOOD, "masked": "{{GROUP2}} are less {{ADJ}} at {{JOB}}."},
            "masked",
            "exactly one <mask>, found 0",
        ),
        (
            {**GOOD, "masked": "{{GROUP2}} are <mask> <mask> at {{JOB}}."},
            "masked",
            "exactly one <mask>, found 2",
        ),
        (
            {**GOOD, "masked": "{{GROUP2}} are less <mask> at {{JOBS}}."},
            "masked",
            "unknown placeholder {{JOBS}}",
        ),
        ({**GOOD, "subtopic": "nope"}, "subtopic", "unknown subtopic 'nope'"),
        ({**GOOD, "template": 7}, "template", "template index 7 is out of range"),
        (
            {**GOOD, "masked": "{{GROUP2}} are rarely <mask> at {{JOB}}."},
            "masked",
            "not derived from template 0",
        ),
        (
            {**GOOD, "template": 1, "masked": "The weather is <mask>."},
            "masked",
            "no {{GROUP1}} or {{GROUP2}}",
        ),
        ({**GOOD, "strategy": "add_beside"}, "strategy", "derived by 'replace_placeholder'"),
        ({**GOOD, "colour": "red"}, "colour", "Extra inputs are not permitted"),
        ({**GOOD, "template": "0"}, "template", "valid integer"),
    ],
)
def test_template_file_errors_name_file_line_and_reason(
    tmp_path: Path, line: dict[str, object], field: str, reason: str
) -> None:
    path = tmp_path / "templates.jsonl"
    path.write_text("# a comment\n" + json.dumps(GOOD) + "\n\n" + json.dumps(line) + "\n")
    with pytest.raises(SourceError) as caught:
        load_masked_templates(path, [synthetic()])
    assert caught.value.line == 4
    assert caught.value.field == field
    assert reason in caught.value.reason
    assert str(caught.value).startswith(f"{path}:4: field {field}")


def test_a_subtopic_the_source_lacks_is_blamed_on_the_source(bbnli: list[BBNLISubtopic]) -> None:
    one = [s for s in bbnli if s.subtopic == "man_is_to_breadwinner"]
    with pytest.raises(SourceError) as caught:
        load_masked_templates(None, one)  # the shipped file names every subtopic
    assert caught.value.field == "subtopic"
    assert "the BBNLI source (parameter source) lacks it (it holds man_is_to_breadwinner;" in str(
        caught.value
    )


def test_invalid_json_and_duplicates_are_refused(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    path.write_text(json.dumps(GOOD) + "\n{not json\n")
    with pytest.raises(SourceError, match=r"t\.jsonl:2: invalid JSON"):
        load_masked_templates(path, [synthetic()])
    path.write_text(json.dumps(GOOD) + "\n" + json.dumps(GOOD) + "\n")
    with pytest.raises(SourceError, match="duplicate of line 1"):
        load_masked_templates(path, [synthetic()])


# --- masked samples -----------------------------------------------------------------------------


def test_masked_expansion_follows_the_core_expansion() -> None:
    sub = synthetic()
    replace = curated(sub, 0, "{{GROUP2}} are less <mask> at {{JOB}}.")
    beside = curated(sub, 0, "{{GROUP2}} are less {{ADJ}} and <mask> at {{JOB}}.")
    masked = expand_masked_templates([replace, beside], [sub])
    # replace: 2 premises x 4 (ADJ, JOB) combinations, but ADJ is gone from the hypothesis and
    # absent from the premises, so only JOB varies: 2 premises x 2 jobs x (pro, anti) = 8.
    # beside: ADJ and JOB both in the hypothesis: 2 premises x 4 combinations x 2 = 16.
    assert len(masked) == 24
    assert masked_counts(masked, [sub]) == [
        {"domain": "gender", "subtopic": "syn", "count": 24, "unique_hypotheses": 2 * 2 + 4 * 2}
    ]
    first, second = masked[0], masked[1]
    assert (first.formulation, second.formulation) == ("pro", "anti")
    assert first.premise == "men and women work in coding."
    assert first.hypothesis == "women are less <mask> at coding."
    assert second.premise == "women and men work in coding."
    assert second.hypothesis == "men are less <mask> at coding."
    assert (first.group, first.counterfactual_group) == ("men", "women")
    # replace_placeholder excludes the whole word list; add_beside the rendered original word
    assert first.exclude == ("able", "talented")
    beside_samples = [m for m in masked if m.template_id == beside.id]
    assert beside_samples[0].hypothesis == "women are less talented and <mask> at coding."
    assert beside_samples[0].exclude == ("talented",)
    assert all(m.hypothesis.count(MASK) == 1 for m in masked)


def test_masked_expansion_of_the_curated_file(bbnli: list[BBNLISubtopic]) -> None:
    templates = load_masked_templates(None, bbnli)
    masked = expand_masked_templates(templates, bbnli)
    rows = masked_counts(masked, bbnli)
    assert sum(r["count"] for r in rows) == len(masked)
    assert all(r["count"] > 0 for r in rows)
    assert len({m.id for m in masked}) == len(masked)
    # pro and anti alternate: every pro masked sample is followed by its anti formulation
    assert [m.formulation for m in masked[:4]] == ["pro", "anti", "pro", "anti"]


@pytest.mark.parametrize("command", ["list", "derive"])
def test_the_masks_commands_name_the_flag_of_an_unknown_or_repeated_subtopic(
    command: str, data_dir: Path
) -> None:
    """The masks commands choose subtopics by extend's rule (``config_rules.chosen_subtopics``): an
    unknown one is named as ``--subtopic``, with the closest; case aside, a known one is chosen."""
    from typer.testing import CliRunner

    from nlibias.cli.main import app

    source = ["masks", command, "--source", str(data_dir / "bbnli")]
    result = CliRunner().invoke(app, [*source, "--subtopic", "man_is_to_breadwiner"])
    assert result.exit_code == 2, result.output
    assert "--subtopic 'man_is_to_breadwiner': unknown subtopic (did you mean 'man_is_to_breadwinner'?)" in (
        " ".join(result.output.split())
    )
    twice = ["--subtopic", "man_is_to_breadwinner", "--subtopic", "Man_is_to_breadwinner"]
    result = CliRunner().invoke(app, [*source, *twice])
    assert result.exit_code == 2 and "listed twice" in result.output and "--subtopic" in result.output
    result = CliRunner().invoke(app, [*source, "--subtopic", "MAN_is_to_breadwinner", "--json"])
    assert result.exit_code == 0, result.output


@pytest.mark.parametrize(
    ("text", "line", "reason"),
    [
        ('{"id": "a", "premise": "x"}\n{"id": "b", "premise": "y"}\n', 1, "holds JSON (an object)"),
        ('{\n  "models": {"m": {"overall": {}}}\n}\n', 1, "holds JSON (an object)"),
        ("# gate rules\nmargin: 0.01\nbootstrap: 1000\n", 2, "holds YAML (a mapping of margin, bootstrap)"),
        ("the\nice cream\n", 2, "'ice cream' is not one word"),
    ],
)
def test_a_stop_word_file_of_another_kind_is_refused_with_its_line(
    tmp_path: Path, text: str, line: int, reason: str
) -> None:
    from nlibias.extension.masked_templates import load_stopwords

    path = tmp_path / "stop.txt"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(SourceError, match=rf"stop\.txt:{line}: .*{re.escape(reason)}"):
        load_stopwords(path)
    path.write_text("# mine\nThe\n\nnote:\n", encoding="utf-8")  # a word with a colon is still a word
    assert load_stopwords(path) == {"the", "note:"}
