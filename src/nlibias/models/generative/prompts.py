"""Prompt styles for yes/no questions to generative LMs: the paper's two built in, users' own
from a YAML/JSON file or a ``.txt`` template."""

from __future__ import annotations

import re
import string
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from nlibias.errors import ConfigError, SourceError
from nlibias.schema import Label
from nlibias.textio.json_text import parse_json
from nlibias.textio.text_files import read_text
from nlibias.textio.yaml_unique import load_yaml, yaml_line_of

PROMPT_1_TRUE = (
    "Read the following paragraph and determine if the hypothesis is true:\n"
    "{premise}\n"
    "Hypothesis: {hypothesis}\n"
    "Answer with yes or no, followed by an explanation."
)
"""The paper's Prompt 1 ("true hypothesis"), verbatim."""

PROMPT_2_ENTAILED = (
    "Read the following paragraph and determine if the hypothesis is entailed by the paragraph:\n"
    "{premise}\n"
    "Hypothesis: {hypothesis}\n"
    "Answer with yes or no, followed by an explanation."
)
"""The paper's Prompt 2 ("entailed hypothesis"), verbatim."""

BINARY_ANSWERS: tuple[str, ...] = ("yes", "no")
THREE_WAY_ANSWERS: tuple[str, ...] = ("yes", "no", "maybe")

#: Answer word → NLI label (binary: "no" only says "not entailed", read as neutral).
BINARY_LABELS: dict[str, Label] = {"yes": "entailment", "no": "neutral"}
THREE_WAY_LABELS: dict[str, Label] = {"yes": "entailment", "no": "contradiction", "maybe": "neutral"}

ANSWER_LABELS: dict[tuple[str, ...], dict[str, Label]] = {
    BINARY_ANSWERS: BINARY_LABELS,
    THREE_WAY_ANSWERS: THREE_WAY_LABELS,
}
"""Each answer set and what its words mean."""

_REQUIRED_FIELDS = ("premise", "hypothesis")
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")
_NAME_FIX = "use letters, digits, '_', '.', '-' (it becomes part of the model key)"


def template_problem(template: str, *, options: bool = False) -> str | None:
    """Why ``template`` is not a valid prompt template, or ``None`` (``options``: ``{options}``
    allowed).

    >>> template_problem("{premise} / {hypothesis} / {label}")
    'unknown placeholder {label}; only {premise} and {hypothesis} are filled in (write {{ and }} for literal braces)'
    """
    if not isinstance(template, str) or not template.strip():
        return "the template is empty"
    try:
        fields = list(string.Formatter().parse(template))
    except ValueError as exc:
        return f"unbalanced braces ({exc}); write {{{{ and }}}} for literal braces"
    seen: set[str] = set()
    allowed = (*_REQUIRED_FIELDS, "options") if options else _REQUIRED_FIELDS
    for _, name, spec, conversion in fields:
        if name is None:
            continue
        if name not in allowed:
            shown = "{" + name + "}" if name else "{}"
            filled = "{premise}, {hypothesis} and {options}" if options else "{premise} and {hypothesis}"
            return f"unknown placeholder {shown}; only {filled} are filled in (write {{{{ and }}}} for literal braces)"
        if spec or conversion:
            return f"placeholder {{{name}}} must be plain (no format spec or conversion)"
        seen.add(name)
    missing = [f"{{{name}}}" for name in _REQUIRED_FIELDS if name not in seen]
    if missing:
        return f"the template lacks {' and '.join(missing)}"
    return None


TEMPLATE_KEYS: dict[str, tuple[str, ...]] = {
    "yes/no": ("name", "template", "answers"),
    "multiple-choice": ("name", "template"),
}
"""The keys a prompt file's entry may hold for each kind of template: a multiple-choice template
(it lists ``{options}``) is answered with one of the options, so ``answers`` applies only to
yes/no templates."""
_CHOICE_FIX = "remove answers (the model answers with an option), or drop {options} to ask yes/no"


def template_kind(template: str) -> str:
    """``multiple-choice`` when ``template`` lists ``{options}``, else ``yes/no``.

    >>> template_kind("{premise} {hypothesis} {options}"), template_kind("{premise} {hypothesis}?")
    ('multiple-choice', 'yes/no')
    """
    try:
        listed = any(name == "options" for _, name, _, _ in string.Formatter().parse(template))
    except ValueError:  # unbalanced braces: template_problem says so
        listed = False
    return "multiple-choice" if listed else "yes/no"


def _style_problem(name: Any, template: Any, answers: Any) -> tuple[str, str, str | None] | None:
    """``(field, problem, fix)`` of the first rule a prompt style breaks (``None``: it keeps them)."""
    if not isinstance(name, str) or not _NAME.match(name):
        return "name", f"its name is not valid ({name!r})", _NAME_FIX
    if answers not in tuple(ANSWER_LABELS):
        return "answers", f"answers {answers!r} is not an answer set", "use [yes, no] or [yes, no, maybe]"
    if not isinstance(template, str):
        return "template", "template must be a string", None
    problem = template_problem(template, options=True)
    if problem is None and answers != BINARY_ANSWERS and template_kind(template) == "multiple-choice":
        return "answers", "answers does not apply to a multiple-choice template", _CHOICE_FIX
    return None if problem is None else ("template", problem, None)


@dataclass(frozen=True)
class PromptStyle:
    """One way of asking a generative LM whether a hypothesis follows from a premise.

    >>> style = PromptStyle("short", "P: {premise} H: {hypothesis} Yes, no or maybe?", THREE_WAY_ANSWERS)
    >>> style.render("A.", "B."), style.label_of("maybe"), style.three_way
    ('P: A. H: B. Yes, no or maybe?', 'neutral', True)
    """

    name: str
    """Short id used in model keys (``smollm2|prompt=NAME|scored``): letters, digits, ``_.-``."""
    template: str
    """User message with ``{premise}`` and ``{hypothesis}`` (``{{``/``}}`` for literal braces)."""
    answers: tuple[str, ...] = BINARY_ANSWERS
    """``("yes", "no")`` or ``("yes", "no", "maybe")``."""
    origin: str = "builtin"
    """``builtin`` or the file the style was read from."""

    def __post_init__(self) -> None:
        """Held to a prompt file's rules.

        >>> PromptStyle("short", "Is {premise} true?")
        Traceback (most recent call last):
        nlibias.errors.ConfigError: prompt style 'short': the template lacks {hypothesis}
        """
        problem = _style_problem(self.name, self.template, self.answers)
        if problem is not None:
            _, said, fix = problem
            raise ConfigError(
                f"prompt style {self.name!r}: {said}{f'; {fix}' if fix else ''}", parameter="prompts"
            )

    @property
    def three_way(self) -> bool:
        return "maybe" in self.answers

    @property
    def choices(self) -> bool:
        """Whether it asks a multiple-choice question (its template lists ``{options}``)."""
        return template_kind(self.template) == "multiple-choice"

    @property
    def labels(self) -> dict[str, Label]:
        return dict(ANSWER_LABELS[self.answers])

    def label_of(self, answer: str | None) -> Label | None:
        """The NLI label an answer word stands for (``None`` for no answer)."""
        return None if answer is None else self.labels[answer]

    def render(self, premise: str, hypothesis: str, options: Sequence[str] = ()) -> str:
        """The user message for one sample (options as ``(a) ... (b) ...``).

        >>> CHOICE_STYLES["race"].render("C.", "Who?", ["X", "Y", "Unknown"])
        'Who?\\n(a) X (b) Y (c) Unknown\\nC.'
        """
        listed = " ".join(
            f"({letter}) {option}" for letter, option in zip(string.ascii_lowercase, options, strict=False)
        )
        return self.template.format(premise=premise, hypothesis=hypothesis, options=listed)


PROMPT_STYLES: dict[str, PromptStyle] = {
    "true": PromptStyle("true", PROMPT_1_TRUE),
    "entailed": PromptStyle("entailed", PROMPT_2_ENTAILED),
}

CHOICE_STYLES: dict[str, PromptStyle] = {
    "race": PromptStyle("race", "{hypothesis}\n{options}\n{premise}"),
    "arc": PromptStyle("arc", "{premise} {hypothesis}\n{options}"),
}
"""The BBQ paper's RACE and ARC multiple-choice formats."""


def _normalise_answers(raw: Any) -> tuple[str, ...] | None:
    if raw is None:
        return BINARY_ANSWERS
    if not isinstance(raw, list | tuple):
        return None
    # YAML 1.1 reads unquoted yes/no as booleans
    raw = ["yes" if a is True else "no" if a is False else a for a in raw]
    if not all(isinstance(a, str) for a in raw):
        return None
    words = {a.strip().lower() for a in raw}
    return next(
        (a for a in (BINARY_ANSWERS, THREE_WAY_ANSWERS) if words == set(a) and len(raw) == len(a)), None
    )


def load_prompt_file(path: str | Path) -> list[PromptStyle]:
    """Prompt styles from a YAML/JSON file (``prompts: [{name, template, answers}]``) or a ``.txt``
    template; a problem is a SourceError naming file, line, field."""
    path = Path(path)
    try:
        text = read_text(path)
    except OSError as exc:
        raise SourceError(path, None, f"cannot read the prompt file ({exc})") from exc
    if path.suffix.lower() == ".txt":
        problem = template_problem(text.strip("\n"), options=True)
        if problem:
            raise SourceError(path, "template", problem)
        name = path.stem
        if not _NAME.match(name):
            raise SourceError(
                path, None, f"the file name {name!r} is not a usable prompt name", fix="rename the file"
            )
        clash = builtin_clash(name, text.strip("\n"), BINARY_ANSWERS)
        if clash is not None:
            raise SourceError(path, None, clash, fix="rename the file")
        return [PromptStyle(name, text.strip("\n"), BINARY_ANSWERS, str(path))]
    data = parse_json(path, text, allow_nan=True) if path.suffix.lower() == ".json" else load_yaml(text, path)
    entries = data.get("prompts") if isinstance(data, dict) else None
    if isinstance(data, dict) and set(data) - {"prompts"}:
        extra = sorted(set(data) - {"prompts"})
        raise SourceError(path, extra[0], "unknown top-level key", fix="the file holds only 'prompts:'")
    if not isinstance(entries, list) or not entries:
        raise SourceError(path, "prompts", "expected a non-empty list of {name, template, answers}", line=1)
    styles: list[PromptStyle] = []
    names: set[str] = set()
    for index, entry in enumerate(entries):
        styles.append(_style_from_entry(path, text, index, entry, names))
        names.add(styles[-1].name)
    return styles


def _style_from_entry(path: Path, text: str, index: int, entry: Any, taken: set[str]) -> PromptStyle:
    field, line = f"prompts[{index}]", yaml_line_of(text, ["prompts", index])
    if not isinstance(entry, dict):
        raise SourceError(
            path, field, "expected a mapping with name, template and optional answers", line=line
        )
    name, template = entry.get("name"), entry.get("template")
    answers = _normalise_answers(entry.get("answers"))
    unknown = sorted(set(entry) - {"name", "template", "answers"})
    if unknown:
        raise SourceError(
            path,
            f"{field}.{unknown[0]}",
            "unknown key",
            line=line,
            fix="allowed keys: name, template, answers",
        )
    kind = template_kind(template) if isinstance(template, str) else "yes/no"
    idle = sorted(set(entry) - set(TEMPLATE_KEYS[kind]))
    if idle:
        raise SourceError(
            path,
            f"{field}.{idle[0]}",
            f"{idle[0]} does not apply to a {kind} template (it lists {{options}})",
            line=yaml_line_of(text, ["prompts", index, idle[0]]),
            fix=_CHOICE_FIX,
        )
    if isinstance(name, str) and name in taken:
        raise SourceError(path, f"{field}.name", f"duplicate prompt name {name!r}", line=line)
    problem = _style_problem(name, template, entry.get("answers") if answers is None else answers)
    if problem is not None:
        key, said, fix = problem
        raise SourceError(path, f"{field}.{key}", said, line=line, fix=fix)
    clash = builtin_clash(str(name), str(template), answers or BINARY_ANSWERS)
    if clash is not None:
        raise SourceError(path, f"{field}.name", clash, line=line, fix="give the style a name of its own")
    return PromptStyle(str(name), str(template), answers or BINARY_ANSWERS, str(path))


def builtin_clash(name: str, template: str, answers: tuple[str, ...]) -> str | None:
    """Why a user's style cannot take ``name``: a built-in style's name with another template or
    answers (its numbers would be reported under the built-in's model key); ``None``: no clash.

    >>> builtin_clash("true", PROMPT_1_TRUE, BINARY_ANSWERS) is None, builtin_clash("mine", "{premise}", ()) is None
    (True, True)
    >>> builtin_clash("arc", "{premise} {hypothesis}?", BINARY_ANSWERS)
    "'arc' is the name of a built-in prompt style with another template or answers (its results would be reported as the built-in's)"
    """
    builtin = (PROMPT_STYLES | CHOICE_STYLES).get(name)
    if builtin is None or (builtin.template, builtin.answers) == (template, answers):
        return None
    return (
        f"{name!r} is the name of a built-in prompt style with another template or answers "
        "(its results would be reported as the built-in's)"
    )


def resolve_prompt_styles(specs: Sequence[str | PromptStyle]) -> list[PromptStyle]:
    """Prompt styles from built-in names, prompt files or styles (none: the paper's two).
    >>> [s.name for s in resolve_prompt_styles(["true", "entailed"])]
    ['true', 'entailed']
    """
    known = PROMPT_STYLES | CHOICE_STYLES
    styles: list[PromptStyle] = []
    unknown = None
    for spec in specs or ["true", "entailed"]:
        if isinstance(spec, PromptStyle):
            clash = builtin_clash(spec.name, spec.template, spec.answers)
            if clash is not None:
                raise ConfigError(
                    f"{{prompts}}: {clash}; give the style a name of its own", parameter="prompts"
                )
            styles.append(spec)
        elif spec in known:
            styles.append(known[spec])
        elif Path(spec).is_file():
            styles.extend(load_prompt_file(spec))
        else:
            unknown = spec
            break
    names = [style.name for style in styles]
    twice = next((name for name in names if names.count(name) > 1), None)
    if unknown is not None or twice is not None:
        raise ConfigError(
            f"unknown prompt style {unknown!r} in {{prompts}}: use {', '.join(sorted(known))} or the path of a prompt file "
            "(.yaml/.json with 'prompts:', or .txt with one template)"
            if unknown is not None
            else f"prompt style {twice!r} given twice in {{prompts}}; each style runs once",
            parameter="prompts",
        )
    return styles
