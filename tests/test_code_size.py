"""The project's size rules hold for the library: no module past 500 lines and no function past
80 (STYLE: "A file past ~500 lines or a function past ~80: split it"), so a change that grows one
past the limit fails here instead of waiting for a reviewer to count."""

from __future__ import annotations

import ast
from pathlib import Path

SOURCE = Path(__file__).resolve().parents[1] / "src" / "nlibias"
MAX_MODULE_LINES = 500
MAX_FUNCTION_LINES = 80


def _modules() -> list[Path]:
    return sorted(SOURCE.rglob("*.py"))


def test_no_module_is_longer_than_500_lines() -> None:
    long = {
        str(p.relative_to(SOURCE)): n
        for p in _modules()
        if (n := len(p.read_text().splitlines())) > MAX_MODULE_LINES
    }
    assert not long, f"split these modules: {long}"


def test_no_function_is_longer_than_80_lines() -> None:
    long = {}
    for path in _modules():
        for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                lines = (node.end_lineno or node.lineno) - node.lineno + 1
                if lines > MAX_FUNCTION_LINES:
                    long[f"{path.relative_to(SOURCE)}:{node.lineno} {node.name}"] = lines
    assert not long, f"split these functions: {long}"


def test_the_checks_see_the_library() -> None:
    # a wrong root would make both checks pass on nothing
    assert len(_modules()) > 200 and (SOURCE / "jobs" / "audit.py").is_file()
