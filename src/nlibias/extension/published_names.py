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
    """The file or folder on this machine that ``written`` names, or None. Written as a path
    (``/``, ``./``, ``../``, ``~``), it counts even when nothing is there any more (an export rerun
    after the model was moved must not publish where it was); otherwise it must exist, and, unless
    ``bare_word``, hold a ``/`` (an option's value ``8`` is never a file)."""
    path = Path(written).expanduser()
    if written.startswith(_PATH_PREFIXES):
        return path
    return path if (bare_word or "/" in written) and path.exists() else None


def _path_forms(written: str) -> set[str]:
    """How records write a local path: as given, normalised (``./m`` → ``m``), ``~`` expanded,
    resolved; a form without ``/`` is left out (a bare word is renamed nowhere but in its spec)."""
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
    """``{written: published name}``: each model reference in ``specs`` that names a file or folder
    on this machine, or carries one in an option (``prompt:org/m?prompt=/home/me/p.txt``), with its
    kind and other options kept and each path replaced by ``<local>/FOLDER`` (two different paths
    with one folder name: ``<local-2>/FOLDER`` for the second, in sorted order); and each such path
    in the forms a record may hold it (:func:`_path_forms`, e.g. a causal LM's identity records the
    resolved path). References to hub models, servers and fakes are left out."""
    names: dict[str, str] = {}
    places = _Places()
    for spec in sorted(set(specs)):
        ref = ModelRef.parse(spec, parameter="model")  # a run's models were read by the same parser
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
