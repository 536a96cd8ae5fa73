"""Fingerprints of a step's inputs: what a rerun compares before it reuses or refuses a result.

A fingerprint is the SHA-256 of the inputs written as canonical JSON (sorted keys), so two runs
with the same settings, data hashes and model identity agree on it, and a change anywhere shows.
:func:`changes` lists what differs, as ``key: old -> new`` lines, for the refusal's message.

>>> a = {"settings": {"learning_rate": 0.003, "seed": 42}, "train_sha256": "ab"}
>>> b = {"settings": {"learning_rate": 0.001, "seed": 42}, "train_sha256": "ab"}
>>> fingerprint(a) == fingerprint(dict(reversed(a.items()))), fingerprint(a) == fingerprint(b)
(True, False)
>>> changes(a, b)
['settings.learning_rate: 0.003 -> 0.001']
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from nlibias.io.fingerprint import flat_keys


def canonical(inputs: Any) -> Any:
    """``inputs`` as plain JSON values (tuples as lists, paths as strings)."""
    return json.loads(json.dumps(inputs, sort_keys=True, default=str))


def fingerprint(inputs: Mapping[str, Any]) -> str:
    """SHA-256 of ``inputs`` as canonical JSON."""
    text = json.dumps(canonical(inputs), sort_keys=True, separators=(",", ":"), allow_nan=True)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def changes(old: Mapping[str, Any] | None, new: Mapping[str, Any], limit: int = 8) -> list[str]:
    """``key: old -> new`` for every input that differs (at most ``limit`` lines, then a count)."""
    if old is None:
        return ["no inputs recorded (written by an older nlibias or by hand)"]
    before, after = flat_keys(canonical(old)), flat_keys(canonical(new))
    lines = [
        f"{key}: {_short(before.get(key, '(none)'))} -> {_short(after.get(key, '(none)'))}"
        for key in sorted(set(before) | set(after))
        if before.get(key, "(none)") != after.get(key, "(none)")
    ]
    if len(lines) > limit:
        lines = [*lines[:limit], f"... and {len(lines) - limit} more"]
    return lines


def _short(value: Any) -> str:
    text = json.dumps(value) if not isinstance(value, str) else value
    return text if len(text) <= 80 else text[:36] + "..." + text[-36:]


def model_identity(model: str) -> dict[str, Any]:
    """What names a base model exactly: a local directory by its absolute path and the hash of its
    files (config, weights, tokenizer); a hub id by the commit its config was loaded from (None
    when the hub id is not in the cache and the hub cannot be reached: the load will say why)."""
    from nlibias.models.hf_common import hash_local_model, is_local_model

    if is_local_model(model):
        path = Path(model).expanduser().absolute()
        return {"name": str(path), "kind": "local", "revision": None, "files_sha256": hash_local_model(path)}
    return {"name": model, "kind": "hub", "revision": _hub_revision(model), "files_sha256": None}


def _hub_revision(model: str) -> str | None:
    try:
        from transformers import AutoConfig

        config = AutoConfig.from_pretrained(model)
    except Exception:  # offline and not cached, or no such id: loading the model reports it
        return None
    commit = getattr(config, "_commit_hash", None)
    return commit if isinstance(commit, str) else None
