"""Prompt styles: the paper's two prompts verbatim, user prompt files validated on load."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from nlibias.errors import ConfigError, SourceError
from nlibias.models.generative.prompts import (
    PROMPT_STYLES,
    THREE_WAY_ANSWERS,
    PromptStyle,
    load_prompt_file,
    resolve_prompt_styles,
    template_problem,
)

# The paper's Appendix A.7.1, copied character for character.
PAPER_PROMPT_1 = """Read the following paragraph and determine if the hypothesis is true:
{premise}
Hypothesis: {hypothesis}
Answer with yes or no, followed by an explanation."""
PAPER_PROMPT_2 = """Read the following paragraph and determine if the hypothesis is entailed by the paragraph:
{premise}
Hypothesis: {hypothesis}
Answer with yes or no, followed by an explanation."""


def test_builtin_styles_are_the_paper_prompts_verbatim() -> None:
    assert PROMPT_STYLES["true"].template == PAPER_PROMPT_1
    assert PROMPT_STYLES["entailed"].template == PAPER_PROMPT_2
    assert PROMPT_STYLES["true"].answers == ("yes", "no")


def test_render_inserts_texts_verbatim_even_with_braces() -> None:
    text = PROMPT_STYLES["entailed"].render("A {curly} premise.", "H {0}.")
    assert text.splitlines() == [
        "Read the following paragraph and determine if the hypothesis is entailed by the paragraph:",
        "A {curly} premise.",
        "Hypothesis: H {0}.",
        "Answer with yes or no, followed by an explanation.",
    ]


def test_binary_and_three_way_label_readings() -> None:
    assert PROMPT_STYLES["true"].labels == {"yes": "entailment", "no": "neutral"}
    three = resolve_prompt_styles(["true"])[0].__class__("t3", "{premise}{hypothesis}", THREE_WAY_ANSWERS)
    assert three.labels == {"yes": "entailment", "no": "contradiction", "maybe": "neutral"}
    assert three.label_of(None) is None


@pytest.mark.parametrize(
    ("template", "problem_part"),
    [
        ("{premise} only", "lacks {hypothesis}"),
        ("{hypothesis} only", "lacks {premise}"),
        ("{premise} {hypothesis} {label}", "unknown placeholder {label}"),
        ("{premise} {hypothesis} {}", "unknown placeholder {}"),
        ("{premise} {hypothesis:>10}", "must be plain"),
        ("{premise} {hypothesis} {", "unbalanced braces"),
        ("   ", "empty"),
    ],
)
def test_template_problems(template: str, problem_part: str) -> None:
    problem = template_problem(template)
    assert problem is not None and problem_part in problem


def test_literal_braces_are_allowed() -> None:
    assert template_problem('{premise} {hypothesis} Reply as JSON: {{"answer": "yes"}}') is None


def test_yaml_prompt_file(tmp_path: Path) -> None:
    path = tmp_path / "prompts.yaml"
    path.write_text(
        "prompts:\n"
        "  - name: short\n"
        '    template: "P: {premise}\\nH: {hypothesis}\\nYes, no or maybe?"\n'
        "    answers: [yes, no, maybe]\n"
        "  - name: plain\n"
        "    template: '{premise} Does it follow that {hypothesis}? Answer yes or no.'\n"
    )
    short, plain = load_prompt_file(path)
    assert (short.name, short.answers, short.three_way) == ("short", THREE_WAY_ANSWERS, True)
    assert short.render("A.", "B.") == "P: A.\nH: B.\nYes, no or maybe?"
    assert (plain.answers, plain.origin) == (("yes", "no"), str(path))
    assert [s.name for s in resolve_prompt_styles(["true", str(path)])] == ["true", "short", "plain"]


def test_json_and_txt_prompt_files(tmp_path: Path) -> None:
    json_path = tmp_path / "p.json"
    json_path.write_text('{"prompts": [{"name": "j", "template": "{premise}|{hypothesis}"}]}')
    assert load_prompt_file(json_path)[0].render("a", "b") == "a|b"
    txt = tmp_path / "my-prompt.txt"
    txt.write_text("{premise}\nIs it true that {hypothesis}?\n")
    (style,) = load_prompt_file(txt)
    assert (style.name, style.template) == ("my-prompt", "{premise}\nIs it true that {hypothesis}?")


@pytest.mark.parametrize(
    ("content", "field", "line"),
    [
        ("prompts:\n  - name: a\n    template: 'no placeholders'\n", "prompts[0].template", 2),
        (
            "prompts:\n  - name: a\n    template: '{premise}{hypothesis}'\n    answers: [yes, nope]\n",
            "prompts[0].answers",
            2,
        ),
        ("prompts:\n  - name: 'bad name|x'\n    template: '{premise}{hypothesis}'\n", "prompts[0].name", 2),
        (
            "prompts:\n  - name: a\n    template: '{premise}{hypothesis}'\n    colour: red\n",
            "prompts[0].colour",
            2,
        ),
        (
            "prompts:\n  - name: a\n    template: '{premise}{hypothesis}'\n  - name: a\n    template: '{premise}{hypothesis}'\n",
            "prompts[1].name",
            4,
        ),
        ("prompts: []\n", "prompts", 1),
        (  # a multiple-choice template is answered with an option: answers applies to nothing
            "prompts:\n  - name: a\n    template: '{premise} {hypothesis} {options}'\n    answers: [yes, no]\n",
            "prompts[0].answers",
            4,
        ),
    ],
)
def test_prompt_file_errors_name_field_and_line(tmp_path: Path, content: str, field: str, line: int) -> None:
    path = tmp_path / "bad.yaml"
    path.write_text(content)
    with pytest.raises(SourceError) as info:
        load_prompt_file(path)
    assert info.value.field == field
    assert info.value.line == line
    assert str(path) in str(info.value)


def test_invalid_yaml_reports_line(tmp_path: Path) -> None:
    path = tmp_path / "broken.yaml"
    path.write_text("prompts:\n  - name: a\n    template: [unclosed\n")
    with pytest.raises(SourceError) as info:
        load_prompt_file(path)
    assert info.value.line is not None


def test_unknown_style_and_duplicates_are_refused(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="unknown prompt style 'ture'"):
        resolve_prompt_styles(["ture"])
    with pytest.raises(ConfigError, match="given twice"):
        resolve_prompt_styles(["true", "true"])
    assert [s.name for s in resolve_prompt_styles([])] == ["true", "entailed"]


def test_a_users_style_named_like_a_built_in_one_is_refused_unless_it_is_the_same(tmp_path: Path) -> None:
    # its numbers would be reported under the built-in's model key (MODEL|prompt=true|scored)
    yaml = tmp_path / "mine.yaml"
    yaml.write_text("prompts:\n  - name: other\n    template: '{premise} {hypothesis}'\n  - name: 'true'\n"
                    "    template: 'P: {premise} H: {hypothesis}'\n")  # fmt: skip
    with pytest.raises(SourceError, match="'true' is the name of a built-in prompt style") as info:
        load_prompt_file(yaml)
    assert (info.value.line, info.value.field) == (4, "prompts[1].name")
    txt = tmp_path / "arc.txt"
    txt.write_text("{premise} or {hypothesis}?\n")
    with pytest.raises(SourceError, match="'arc' is the name of a built-in"):
        load_prompt_file(txt)
    with pytest.raises(ConfigError, match=r"^prompts: 'entailed' is the name of a built-in") as error:
        resolve_prompt_styles([PromptStyle("entailed", "{premise} {hypothesis}")])
    assert error.value.parameter == "prompts"
    same = tmp_path / "same.yaml"  # the built-in's own template and answers: the same style
    same.write_text(
        f"prompts:\n  - name: 'true'\n    template: {json.dumps(PROMPT_STYLES['true'].template)}\n"
    )
    assert [s.template for s in load_prompt_file(same)] == [PROMPT_STYLES["true"].template]


@pytest.mark.parametrize(
    ("name", "template", "answers", "said"),
    [
        ("short", "Is {premise} true?", ("yes", "no"), "the template lacks {hypothesis}"),
        ("short", "{premise} / {hypothesis} / {label}", ("yes", "no"), "unknown placeholder {label}"),
        ("two words", "{premise} / {hypothesis}", ("yes", "no"), "its name is not valid"),
        ("short", "{premise} / {hypothesis}", ("ja", "nein"), "is not an answer set"),
        (
            "mc",
            "{premise} {hypothesis} {options}",
            ("yes", "no", "maybe"),
            "answers does not apply to a multiple-choice",
        ),
    ],
)
def test_a_style_made_in_code_keeps_a_prompt_files_rules(
    name: str, template: str, answers: tuple[str, ...], said: str
) -> None:
    """``nlibias.audit(prompts=[PromptStyle(...)])`` takes styles made in code: one without
    ``{hypothesis}`` would ask every hypothesis of a premise the same question."""
    with pytest.raises(ConfigError, match=re.escape(said)) as refused:
        PromptStyle(name, template, answers)
    assert refused.value.parameter == "prompts"
