"""README.md and docs/*.md render as their authors meant under CommonMark (issue #39): every
code fence closes where it should, so no fence swallows the sections after it.

A line that starts with three backticks is meant as a fence's opening or closing line; CommonMark
reads "``` `nlibias --version` prints ..." (text after the backticks that holds a backtick) as
neither, and the block then runs on over the headings below.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

markdown_it = pytest.importorskip("markdown_it")

REPO = Path(__file__).resolve().parents[1]
DOCUMENTS = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]
_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
_HEADING = re.compile(r"^ {0,3}#{1,6}\s+\S")


def _problems(text: str) -> list[str]:
    """What in ``text`` CommonMark renders otherwise than its fence lines say (empty: none)."""
    lines = text.splitlines()
    tokens = markdown_it.MarkdownIt("commonmark").parse(text)
    problems: list[str] = []
    for token in tokens:
        if token.type != "fence" or token.map is None:
            continue
        start, end = token.map
        last = lines[end - 1].strip() if end - 1 > start else ""
        closes = bool(last) and set(last) == {token.markup[0]} and len(last) >= len(token.markup)
        if not closes:
            problems.append(f"line {start + 1}: the fence opened here does not close (it runs to line {end})")
        inner = range(start + 1, end - 1 if closes else end)
        problems += [
            f"line {i + 1}: a fence-like line inside a code block" for i in inner if _FENCE.match(lines[i])
        ]
    # headings as the fence lines say: outside the spans between a line opening and one closing a fence
    inside, expected = False, set()
    for i, line in enumerate(lines):
        if _FENCE.match(line):
            inside = not inside
        elif not inside and _HEADING.match(line):
            expected.add(i)
    rendered = {t.map[0] for t in tokens if t.type == "heading_open" and t.map is not None}
    problems += [
        f"line {i + 1}: {lines[i].strip()!r} is not rendered as a heading"
        for i in sorted(expected - rendered)
    ]
    return problems


def test_a_fence_with_text_after_it_is_found() -> None:
    # the README's old line: the block opened on line 1 takes the rest, heading included
    broken = "```bash\npip install x\n``` `nlibias --version` prints it.\n\n## Auditing\n\ntext\n"
    assert _problems(broken) == [
        "line 1: the fence opened here does not close (it runs to line 7)",
        "line 3: a fence-like line inside a code block",
        "line 5: '## Auditing' is not rendered as a heading",
    ]
    assert _problems(broken.replace("``` `nlibias", "```\n\n`nlibias")) == []


@pytest.mark.parametrize("path", DOCUMENTS, ids=lambda p: p.name)
def test_every_fence_closes(path: Path) -> None:
    assert _problems(path.read_text(encoding="utf-8")) == []
