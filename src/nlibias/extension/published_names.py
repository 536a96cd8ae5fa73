"""Local model paths kept out of what an ``extend`` run publishes: the dataset folder names such a
model by its folder under ``<local>/`` (its identity still says which weights); the paths stay in
``run.json``.

>>> import tempfile, pathlib
>>> folder = pathlib.Path(tempfile.mkdtemp()) / "lm"; folder.mkdir()
>>> names = local_model_names([f"causal:{folder}?beam=8", "smollm2", "fake:a"])
>>> names[f"causal:{folder}?beam=8"], names[str(folder)]
('causal:<local>/lm?beam=8', '<local>/lm')
>>> renamed({f"causal:{folder}?beam=8": {"model": f"causal:{folder}?beam=8"}}, names)
{'causal:<local>/lm?beam=8': {'model': 'causal:<local>/lm?beam=8'}}
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from nlibias.schema.model_ref import ModelRef

_PATH_PREFIXES = ("/", "./", "../", "~")


def _local(written: str, *, bare_word: bool) -> Path | None:
    """The local file or folder ``written`` names, or None (a path-like name even when gone; another
    one when it exists and, unless ``bare_word``, holds a ``/``)."""
    path = Path(written).expanduser()
    if written.startswith(_PATH_PREFIXES):
        return path
    return path if (bare_word or "/" in written) and path.exists() else None


def _path_forms(written: str) -> set[str]:
    """How records write a local path (as given, normalised, ``~`` expanded, resolved), each with a ``/``."""
    path = Path(written).expanduser()
    return {form for form in (written, str(Path(written)), str(path), str(path.resolve())) if "/" in form}


class _Places:
    """``<local>/FOLDER``, ``<local-2>/FOLDER``, ...: one place per resolved path."""

    def __init__(self) -> None:
        self.taken: dict[str, str] = {}  # place → the resolved path it stands for

    def of(self, path: Path) -> str:
        resolved = path.resolve()
        number = 1
        while True:
            place = f"{'<local>' if number == 1 else f'<local-{number}>'}/{resolved.name}"
            if self.taken.setdefault(place, str(resolved)) == str(resolved):
                return place
            number += 1


def local_model_names(specs: Iterable[str]) -> dict[str, str]:
    """``{written: published name}`` for each of ``specs`` naming a local path (also in an option)
    and for the path's own forms: ``<local>/FOLDER`` (``<local-2>/`` for a second with that name)."""
    names: dict[str, str] = {}
    places = _Places()
    for spec in sorted(set(specs)):
        ref = ModelRef.parse(spec, parameter="model")
        if ref.is_fake or ref.is_server or not ref.name:
            continue
        items = list(ref.option_items)
        for index, (key, value) in enumerate(items):
            if (path := _local(value, bare_word=False)) is not None:
                items[index] = (key, places.of(path))
                names.update(dict.fromkeys(_path_forms(value), items[index][1]))
        name = ref.name
        if (path := _local(ref.name, bare_word=True)) is not None:
            name = places.of(path)
            names.update(dict.fromkeys(_path_forms(ref.name), name))
        published = ModelRef(ref.kind, name, tuple(items))
        if published != ref:
            names[spec] = str(published)
    return names


def renamed(value: Any, names: Mapping[str, str]) -> Any:
    """``value`` with every string and key equal to a spec of ``names`` replaced by its published name."""
    if isinstance(value, str):
        return names.get(value, value)
    if isinstance(value, Mapping):
        return {names.get(k, k) if isinstance(k, str) else k: renamed(v, names) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return type(value)(renamed(v, names) for v in value)
    return value
