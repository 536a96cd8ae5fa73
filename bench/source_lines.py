"""What the lines of src/ are (issue 49's count, and what is left to cut): each line of every module
under ``src/nlibias`` is put in one class, by the first that fits:

* ``blank``, ``comment`` (a line that is only a comment);
* ``docstring`` (inside a module, class or function docstring, doctest examples included);
* ``import`` (inside an ``import`` or ``from ... import`` statement);
* ``refusal text`` (inside a string literal of a ``raise`` statement, or of a call building an
  ``...Error``/``...Warning`` anywhere: a lower bound of the messages, which tests pin word for
  word, as a message assembled in a variable first counts as code);
* ``signature`` (a ``def``/``class`` header, its parameters and decorators included);
* ``code``: the rest.

    python bench/source_lines.py            # per package, then the whole of src/
"""

from __future__ import annotations

import ast
import io
import tokenize
from collections import Counter
from pathlib import Path

SOURCE = Path(__file__).resolve().parents[1] / "src" / "nlibias"
CLASSES = ("blank", "comment", "docstring", "import", "refusal text", "signature", "code")


def _span(node: ast.AST) -> range:
    return range(node.lineno, (node.end_lineno or node.lineno) + 1)  # type: ignore[attr-defined]


def _is_error(call: ast.Call) -> bool:
    name = call.func.id if isinstance(call.func, ast.Name) else getattr(call.func, "attr", "")
    return name.endswith(("Error", "Exception", "Warning"))


def classify(text: str) -> Counter[str]:
    """Lines of one module by class (see the module's docstring)."""
    lines = text.splitlines()
    kind: dict[int, str] = {}
    tree = ast.parse(text)
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef) and body:
            first = body[0]
            value = first.value if isinstance(first, ast.Expr) else None
            if isinstance(value, ast.Constant) and isinstance(value.value, str):
                kind.update(dict.fromkeys(_span(first), "docstring"))
        if isinstance(node, ast.Import | ast.ImportFrom):
            kind.update(dict.fromkeys(_span(node), "import"))
        if isinstance(node, ast.Raise) or (isinstance(node, ast.Call) and _is_error(node)):
            for inner in ast.walk(node):
                if isinstance(inner, ast.Constant | ast.JoinedStr) and isinstance(
                    getattr(inner, "value", ""), str | list
                ):
                    for line in _span(inner):
                        kind.setdefault(line, "refusal text")
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            start = min([node.lineno, *(d.lineno for d in node.decorator_list)])
            header_end = node.body[0].lineno - 1 if node.body else node.lineno
            for line in range(start, max(header_end, node.lineno) + 1):
                kind.setdefault(line, "signature")
    comments = {
        token.start[0]
        for token in tokenize.generate_tokens(io.StringIO(text).readline)
        if token.type == tokenize.COMMENT
    }
    found: Counter[str] = Counter()
    for number, source_line in enumerate(lines, start=1):
        stripped = source_line.strip()
        if not stripped:
            found["blank"] += 1
        elif number in comments and stripped.startswith("#"):
            found["comment"] += 1
        else:
            found[kind.get(number, "code")] += 1
    return found


def main() -> None:
    by_package: dict[str, Counter[str]] = {}
    for path in sorted(SOURCE.rglob("*.py")):
        parts = path.relative_to(SOURCE).parts
        package = parts[0] if len(parts) > 1 else "(top level)"
        by_package.setdefault(package, Counter()).update(classify(path.read_text(encoding="utf-8")))
    total: Counter[str] = sum(by_package.values(), Counter())
    width = max(map(len, by_package))
    print(f"{'package':{width}} " + " ".join(f"{c:>12}" for c in (*CLASSES, "all")))
    for package, counts in sorted(by_package.items(), key=lambda item: -item[1].total()):
        print(
            f"{package:{width}} " + " ".join(f"{counts[c]:>12}" for c in CLASSES) + f" {counts.total():>12}"
        )
    print(f"{'src/':{width}} " + " ".join(f"{total[c]:>12}" for c in CLASSES) + f" {total.total():>12}")
    shares = ", ".join(f"{c} {100 * total[c] / total.total():.1f}%" for c in CLASSES)
    print(f"shares: {shares}")


if __name__ == "__main__":
    main()
