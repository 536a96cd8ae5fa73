"""Local model paths kept out of what an ``extend`` run publishes.

The dataset folder (``samples.jsonl``, the Parquet/CSV/JSON files and the card) is made to be
shared; a model given as a path on this machine (``--mlm causal:/home/me/models/lm``, a filter
model in ``~/ft/roberta``) would put that path, with the user's name and folders, into every
sample's provenance and the card. There the model is named by its folder's name under
``<local>/`` instead (``causal:<local>/lm``); its identity beside it (backend, SHA-256 of the
weights, settings) still says which weights it was. The paths stay in the run's ``run.json``.

>>> import tempfile, pathlib
>>> folder = pathlib.Path(tempfile.mkdtemp()) / "lm"; folder.mkdir()
>>> names = local_model_names([f"causal:{folder}?beam=8", "smollm2", "fake:a"])
>>> list(names.values())
['causal:<local>/lm?beam=8']
>>> renamed({f"causal:{folder}?beam=8": {"model": f"causal:{folder}?beam=8"}}, names)
{'causal:<local>/lm?beam=8': {'model': 'causal:<local>/lm?beam=8'}}
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from nlibias.schema.model_ref import ModelRef, without_options


def _local_path(spec: str) -> Path | None:
    """The file or folder on this machine that ``spec`` names, or None (a hub id, a server, a fake).
    A name written as a path counts even when nothing is there any more (an export rerun after the
    model was moved must not publish where it was)."""
    ref = ModelRef.unread(without_options(spec))
    if ref.is_fake or ref.is_server or not ref.name:
        return None
    path = Path(ref.name).expanduser()
    written_as_path = ref.name.startswith(("/", "./", "../", "~"))
    return path if written_as_path or path.exists() else None


def local_model_names(specs: Iterable[str]) -> dict[str, str]:
    """``{spec: published name}`` for each model reference in ``specs`` that names a file or folder
    on this machine: its kind and options kept, the path replaced by ``<local>/FOLDER`` (two
    different paths with one folder name: ``<local-2>/FOLDER`` for the second, in sorted order).
    References to hub models, servers and fakes are left out (they publish as they are)."""
    names: dict[str, str] = {}
    taken: dict[str, str] = {}  # "<local-N>/FOLDER" → the resolved path it stands for
    for spec in sorted(set(specs)):
        path = _local_path(spec)
        if path is None:
            continue
        ref = ModelRef.unread(without_options(spec))
        resolved = path.resolve()
        for number in range(1, len(taken) + 2):
            place = f"{'<local>' if number == 1 else f'<local-{number}>'}/{resolved.name}"
            if taken.setdefault(place, str(resolved)) == str(resolved):
                break
        names[spec] = f"{ref.kind + ':' if ref.kind else ''}{place}{spec[len(without_options(spec)) :]}"
    return names


def renamed(value: Any, names: Mapping[str, str]) -> Any:
    """``value`` (JSON-like: mappings, lists, strings, numbers) with every string and every mapping
    key that equals a spec of ``names`` replaced by its published name; other strings untouched
    (a fill word that happens to be a file name here stays a word)."""
    if isinstance(value, str):
        return names.get(value, value)
    if isinstance(value, Mapping):
        return {names.get(k, k) if isinstance(k, str) else k: renamed(v, names) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return type(value)(renamed(v, names) for v in value)
    return value
