"""Files of one item per line (stop words, premises, word and name pairs): the lines that are not
blank or a ``#`` comment, stripped and numbered. A file that plainly holds another kind of data (a
JSON document, JSON lines, a YAML mapping) is refused naming its first line: read line by line, its
lines would become items (``{"id": ...}`` a stop word) and change a result without a word.

>>> list_lines("stop.txt", "# stop words\\nthe\\n\\n a \\n", item="stop word")
[(2, 'the'), (4, 'a')]
>>> list_lines("samples.jsonl", '{"id": "a"}\\n{"id": "b"}\\n', item="stop word")
Traceback (most recent call last):
nlibias.errors.SourceError: samples.jsonl:1: the file holds JSON (an object), not one stop word per line (write each stop word on a line of its own in a plain text file)
>>> list_lines("rules.yaml", "# gate\\nmargin: 0.01\\n", item="premise")
Traceback (most recent call last):
nlibias.errors.SourceError: rules.yaml:2: the file holds YAML (a mapping of margin), not one premise per line (write each premise on a line of its own in a plain text file)
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from nlibias.errors import SourceError


def list_lines(path: str | Path, text: str, *, item: str) -> list[tuple[int, str]]:
    """``(line, text)`` of each line of ``text`` (read from ``path``) that is not blank or a ``#``
    comment, stripped; refused when the file is plainly JSON or YAML (:func:`structured_kind`).
    ``item``: what each line is, in words (``"stop word"``)."""
    numbered = [(number, line.strip()) for number, line in enumerate(text.splitlines(), start=1)]
    lines = [(number, line) for number, line in numbered if line and not line.startswith("#")]
    kind = structured_kind(text)
    if kind is not None:
        raise SourceError(
            path, None, f"the file holds {kind}, not one {item} per line", line=lines[0][0] if lines else 1,
            fix=f"write each {item} on a line of its own in a plain text file",
        )  # fmt: skip
    return lines


def structured_kind(text: str) -> str | None:
    """What ``text`` plainly is when it is not lines of text: a JSON document holding a list or an
    object, JSON lines (its first line an object or a list), or a YAML mapping whose keys are single
    words and that holds a value other than text (a number, a switch, a list, a section); ``None``
    otherwise. Sentences such as ``Note: the nurse arrived.`` are not YAML here.

    >>> structured_kind('["the", "a"]'), structured_kind('{"a": 1}\\n{"a": 2}\\n')
    ('JSON (a list)', 'JSON (an object)')
    >>> structured_kind("templates:\\n  derive: true\\n"), structured_kind("Note: the nurse arrived.\\n")
    ('YAML (a mapping of templates)', None)
    >>> structured_kind("the\\na\\n"), structured_kind("John\\tMary\\n"), structured_kind("")
    (None, None, None)
    """
    lines = (line.strip() for line in text.splitlines())
    first = next((line for line in lines if line and not line.startswith("#")), "")
    if first.startswith(("{", "[")):
        for candidate in (text, first):  # a JSON document, or JSON lines
            value = _json(candidate)
            if isinstance(value, list | dict):
                return f"JSON ({'a list' if isinstance(value, list) else 'an object'})"
    if ":" not in first:
        return None
    value = _yaml(text)
    if not isinstance(value, dict) or not value:
        return None
    words = all(isinstance(key, str) and key and not any(c.isspace() for c in key) for key in value)
    if words and any(not isinstance(v, str) for v in value.values()):
        return f"YAML (a mapping of {', '.join(list(value)[:3])})"
    return None


def _json(text: str) -> Any:
    try:
        return json.loads(text)
    except (ValueError, RecursionError):  # not JSON: read as lines
        return None


def _yaml(text: str) -> Any:
    import yaml

    try:
        return yaml.load(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
    except (yaml.YAMLError, RecursionError, ValueError):  # not YAML: read as lines
        return None
