"""docs/architecture.md names code by where it lives: every module, file and ``module.name`` it
cites exists (a rename that forgets the doc fails here, as ``predict.cached_outputs`` did after the
prediction loop moved to ``runtime/loop.py``)."""

from __future__ import annotations

import importlib
import re
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).parent.parent
PACKAGE = ROOT / "src" / "nlibias"
DOC = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")

# `io/results.metrics_schema`, `debias/swap.Swapper.plan`: a module by its path, then names in it
_PATH_DOTTED = re.compile(r"`([a-z_]+(?:/[a-z_]+)+)\.(?!py`)([A-Za-z_][\w.]*)`")
# `jobs/audit.py: run_audit`: a file, then a name in it
_PATH_FILE_NAME = re.compile(r"`([a-z_]+(?:/[a-z_]+)*)\.py: ([A-Za-z_][\w.]*)`")
# `io/atomic.py`, `catalog/`, `bench/bad_inputs.py`: a file or folder of the package or the repository
_PATH = re.compile(r"`((?:[a-z_]+/)+(?:[a-z_]+\.py)?)`")
# (predict.cached_outputs) in the diagrams: a module by its file name, then a name in it
# `swap.Swapper`, `occupations.read_premise_rows`: a module by its file name, then names in it
_STEM_DOTTED = re.compile(r"`([a-z_]+)\.(?!(?:py|jsonl?|txt|md|ya?ml|sh|html|csv)`)([A-Za-z_][\w.]*)`")
_DIAGRAM = re.compile(r"\(([a-z_]+)\.(?!py\b)([a-z_]\w*)\)")


def _modules_named(stem: str) -> list[str]:
    return [
        ".".join(path.relative_to(PACKAGE.parent).with_suffix("").parts)
        for path in PACKAGE.rglob(f"{stem}.py")
    ]


def _has(module: str, names: str) -> bool:
    found: Any = importlib.import_module(module)
    for name in names.split("."):
        if not hasattr(found, name):
            return False
        found = getattr(found, name)
    return True


def _citations() -> list[tuple[str, str, str]]:
    """(the text as cited, the module, the dotted names in it)."""
    found = [
        (m[0], "nlibias." + m[1].replace("/", "."), m[2])
        for m in _PATH_DOTTED.finditer(DOC)
        if (PACKAGE / f"{m[1]}.py").exists() or not (ROOT / m[1].split("/")[0]).is_dir()
    ]
    found += [(m[0], "nlibias." + m[1].replace("/", "."), m[2]) for m in _PATH_FILE_NAME.finditer(DOC)]
    return found


def test_the_doc_cites_code_in_each_form() -> None:
    # the patterns find what the doc cites (a pattern that matched nothing would check nothing)
    assert len(_citations()) >= 20
    assert len(_PATH.findall(DOC)) >= 10 and _DIAGRAM.findall(DOC) and _by_file_name()


@pytest.mark.parametrize(("cited", "module", "names"), _citations(), ids=lambda v: str(v))
def test_every_cited_module_name_exists(cited: str, module: str, names: str) -> None:
    assert _has(module, names), f"docs/architecture.md cites {cited}: {module} has no {names}"


def test_every_cited_path_exists() -> None:
    missing = [p for p in _PATH.findall(DOC) if not (PACKAGE / p).exists() and not (ROOT / p).exists()]
    assert missing == []


def _by_file_name() -> list[tuple[str, str]]:
    """Citations of a module by its file name alone: every one in the diagrams, and in backticks
    those whose first part is the name of one of the package's modules (not a file like
    ``predictions.jsonl`` or a configuration key like ``filter.compare_fills``)."""
    named = [(stem, names) for stem, names in _STEM_DOTTED.findall(DOC) if _modules_named(stem)]
    return [*_DIAGRAM.findall(DOC), *named]


def test_every_name_cited_by_its_module_file_name_exists() -> None:
    missing = [
        f"{stem}.{names}"
        for stem, names in _by_file_name()
        if not any(_has(module, names) for module in _modules_named(stem))
    ]
    assert missing == []
