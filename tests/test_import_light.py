"""``import nlibias`` stays light: the heavy packages load when a function that uses them runs, not
when the package is imported (docs/architecture.md)."""

from __future__ import annotations

import os
import subprocess
import sys

HEAVY = ("torch", "transformers", "pandas", "matplotlib", "ray", "starlette")


def heavy_loaded_by(statement: str) -> list[str]:
    """The heavy packages in ``sys.modules`` of a fresh interpreter after ``statement`` (this one
    has loaded them already); sys.modules names every package imported, directly or not."""
    code = f"import sys\n{statement}\nprint(sorted(m for m in {HEAVY!r} if m in sys.modules))"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, env=env)
    return done.stdout.strip().splitlines()[-1:]


def test_import_nlibias_loads_no_heavy_package() -> None:
    assert heavy_loaded_by("import nlibias") == ["[]"]
    assert heavy_loaded_by("import nlibias, pandas") == ["['pandas']"]  # the check sees an import
