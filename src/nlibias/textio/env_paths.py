"""Paths from environment variables: ``~`` expanded, blank as unset.

>>> import os
>>> os.environ["NLIBIAS_EXAMPLE_DIR"] = "~/x"
>>> env_path("NLIBIAS_EXAMPLE_DIR") == Path.home() / "x"
True
>>> os.environ["NLIBIAS_EXAMPLE_DIR"] = "  "
>>> env_path("NLIBIAS_EXAMPLE_DIR") is None
True
>>> del os.environ["NLIBIAS_EXAMPLE_DIR"]
"""

from __future__ import annotations

import os
from pathlib import Path


def env_path(name: str) -> Path | None:
    value = os.environ.get(name, "").strip()
    if not value:
        return None
    return Path(os.path.expanduser(value))
