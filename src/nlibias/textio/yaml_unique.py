"""YAML read safely: a key given twice in one mapping is refused with both lines.

>>> load_yaml("a: 1\\nb: 2\\na: 3\\n", "config.yaml")
Traceback (most recent call last):
nlibias.errors.SourceError: config.yaml:3: field a: the key is given twice (first on line 1) (keep one of them)
>>> load_yaml("mlm: {top_k: 3, top_k: 50}\\n", "config.yaml")
Traceback (most recent call last):
nlibias.errors.SourceError: config.yaml:1: field top_k: the key is given twice (first on line 1, column 7) (keep one of them)
>>> load_yaml("top_k: 5\\n", "config.yaml")
{'top_k': 5}

Merge keys (``<<: *anchor``) take the anchor's keys; a key written beside them overrides its own:

>>> load_yaml("base: &b {top_k: 5, seed: 1}\\nmlm:\\n  <<: *b\\n  top_k: 9\\n", "config.yaml")["mlm"]
{'top_k': 9, 'seed': 1}
>>> load_yaml("base: &b {seed: 1}\\nmlm:\\n  <<: *b\\n  top_k: 9\\n  top_k: 3\\n", "config.yaml")
Traceback (most recent call last):
nlibias.errors.SourceError: config.yaml:5: field top_k: the key is given twice (first on line 4) (keep one of them)
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from nlibias.errors import SourceError

_MERGE = "tag:yaml.org,2002:merge"


def load_yaml(text: str, path: str | Path, *, parameter: str | None = None) -> Any:
    """The YAML document of ``text`` (read from ``path``). ``parameter``: the setting that named the
    file, a settings file; one with no settings at all (empty, blank or only comments) is refused
    then, since reading it as every default would drop what it was meant to say.

    >>> load_yaml("# margin: 0.5\\n", "gate.yaml", parameter="rules")
    Traceback (most recent call last):
    nlibias.errors.SourceError: gate.yaml: the file holds no settings (it is empty or only comments) (write them, or leave rules out for every default)
    """
    import yaml

    class UniqueKeyLoader(yaml.SafeLoader):
        def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
            seen: dict[Any, tuple[int, int]] = {}
            for key_node, _ in node.value:
                if key_node.tag == _MERGE:  # ``<<: *anchor``: merged by SafeLoader, a key here overrides it
                    continue
                key = self.construct_object(key_node, deep=deep)
                mark = key_node.start_mark
                where = (mark.line + 1, mark.column + 1)
                try:
                    first = seen.setdefault(key, where)
                except TypeError:  # unhashable: PyYAML's own error follows
                    continue
                if first != where:
                    at = f"line {first[0]}" + (f", column {first[1]}" if first[0] == where[0] else "")
                    raise SourceError(
                        path,
                        str(key),
                        f"the key is given twice (first on {at})",
                        line=where[0],
                        fix="keep one of them",
                    )
            return super().construct_mapping(node, deep=deep)

    try:
        document = yaml.load(text, Loader=UniqueKeyLoader)
    except RecursionError:
        raise SourceError(
            path,
            None,
            "invalid YAML: nested too deeply",
            fix="nlibias reads settings a few levels deep: check that this is the file meant",
        ) from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = None if mark is None else mark.line + 1
        problem = getattr(exc, "problem", None) or str(exc)
        raise SourceError(path, None, f"invalid YAML: {problem}", line=line) from None
    if document is None and parameter is not None:
        reason = "the file holds no settings (it is empty or only comments)"
        fix = f"write them, or leave {{{parameter}}} out for every default"
        raise SourceError(path, None, reason, fix=fix, parameter=parameter)
    return document


def yaml_line_of(text: str, loc: Sequence[Any]) -> int | None:
    r"""Line of the YAML node at ``loc`` (or its deepest parent); None when ``text`` does not parse.

    >>> yaml_line_of("a:\n  b: 1\n  c: [1, 2]\n", ["a", "c", 1])
    3
    """
    import yaml

    try:
        node: Any = yaml.compose(text)
    except yaml.YAMLError:
        return None
    line = None
    for part in loc:
        if isinstance(node, yaml.MappingNode):
            match = next(((k, v) for k, v in _pairs(node) if k.value == str(part)), None)
            if match is None:
                break
            line, node = match[0].start_mark.line + 1, match[1]
        elif isinstance(node, yaml.SequenceNode) and isinstance(part, int) and part < len(node.value):
            node = node.value[part]
            line = node.start_mark.line + 1
        else:
            break
    return line


def _pairs(node: Any, seen: frozenset[int] = frozenset()) -> list[tuple[Any, Any]]:
    """A mapping node's key and value nodes, those it merges (``<<``) after its own (which override them).

    >>> yaml_line_of("b: &b\\n  seed: 1\\nm:\\n  <<: *b\\n  k: 2\\n", ["m", "seed"])
    2
    """
    import yaml

    own = [(k, v) for k, v in node.value if k.tag != _MERGE]
    merged = [v for k, v in node.value if k.tag == _MERGE]
    sources = [m for v in merged for m in (v.value if isinstance(v, yaml.SequenceNode) else [v])]
    seen |= {id(node)}  # an anchor merged into itself is read once
    mappings = [m for m in sources if isinstance(m, yaml.MappingNode) and id(m) not in seen]
    return own + [pair for m in mappings for pair in _pairs(m, seen)]
