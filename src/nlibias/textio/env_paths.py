"""Paths from environment variables, read the one way: ``~`` expanded, blank as unset.

Every ``NLIBIAS_*`` path variable is read with :func:`env_path`, so ``NLIBIAS_CACHE='~/x'``
means the home folder's ``x``, never a folder named ``~``.

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
    """The path in environment variable ``name`` (``~`` and ``~user`` expanded), None when unset or blank."""
    value = os.environ.get(name, "").strip()
    if not value:
        return None
    return Path(os.path.expanduser(value))
