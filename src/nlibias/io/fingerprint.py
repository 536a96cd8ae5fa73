"""What a rerun compares with what a run directory holds: files by SHA-256, settings as flat
dotted keys, so a refusal can name the leaf that changed. The stage engine
(:mod:`nlibias.io.stages`) builds on these.

>>> flat_keys({"mlm": {"top_k": 5}, "models": [{"q": None}], "seed": 0})
{'mlm.top_k': 5, 'models.count': 1, 'models[0].q': None, 'seed': 0}
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from pathlib import Path
from typing import Any


def file_stamp(path: Path) -> tuple[int, int]:
    """A file's size and modification time (ns): what changes when the file is rewritten, taken
    before and after a read to catch a change during it."""
    status = path.stat()
    return status.st_size, status.st_mtime_ns


def sha256_file(path: Path) -> str:
    """The SHA-256 of a file's bytes (read in 1 MiB blocks)."""
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        while chunk := handle.read(1 << 20):
            digest.update(chunk)
    return digest.hexdigest()


def flat_keys(value: Any, prefix: str = "") -> dict[str, Any]:
    """Nested mappings and lists of mappings as ``a.b[0].c`` keys (a list of them also gives its
    ``.count``); any other value is a leaf."""
    out: dict[str, Any] = {}
    if isinstance(value, Mapping) and value:
        for key, item in value.items():
            out |= flat_keys(item, f"{prefix}.{key}" if prefix else str(key))
    elif isinstance(value, list) and value and all(isinstance(v, Mapping) for v in value):
        out[f"{prefix}.count"] = len(value)
        for index, item in enumerate(value):
            out |= flat_keys(item, f"{prefix}[{index}]")
    else:
        out[prefix] = value
    return out
