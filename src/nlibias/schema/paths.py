"""Declared path types of what a function writes: a file (:data:`OutFile`), a prediction cache
(:data:`CachePath`; :data:`CacheText` in a settings file), the same rules on every route (the
command line holds them to an option's text as given: :func:`text_refusal`, from ``cli/app.py``).

>>> text_refusal(OutFile, "reports/")
"'reports/' ends in a path separator, so it names a folder, and this is a file to write: name the file itself, without the trailing separator"
>>> text_refusal(OutFile, "reports/gate.xml") is None
True
>>> text_refusal(CachePath, "yes")  # doctest: +ELLIPSIS
"'yes' is a yes or no, not the path of a cache file: ...; a file of that name is ./yes"
"""

from __future__ import annotations

import os
from pathlib import Path, PurePath
from typing import Annotated, Any

from nlibias.schema.declared import PathArg, PathText, Refuse
from nlibias.schema.problems import problems


def _names_a_folder(path: str | PurePath) -> bool:
    """A path to write a file at that names a folder: its text ends in a separator or ``.``
    (``DIR/name/``, which ``Path`` would turn into the file ``DIR/name``), or a folder is there."""
    text = str(path)
    return os.path.basename(text) in ("", ".", "..") or Path(text).expanduser().is_dir()


def _folder_words(path: str | PurePath) -> str:
    text = str(path)
    if Path(text).expanduser().is_dir():
        return f"{text!r} is a folder, and this is a file to write: name a file (in that folder, say)"
    return (
        f"{text!r} ends in a path separator, so it names a folder, and this is a file to write: name "
        "the file itself, without the trailing separator"
    )


NAMES_A_FOLDER = Refuse(_names_a_folder, _folder_words)
OutFile = Annotated[PathArg, NAMES_A_FOLDER]
"""A file a function writes (a report, an export, the gate's JUnit file): not blank, and not a
folder (a command line's file option declares it on its hint too)."""

YES_OR_NO_WORDS = frozenset({"yes", "no", "y", "n", "true", "false", "on", "off", "1", "0", "none", "null"})


def _yes_or_no_word(path: str | PurePath) -> bool:
    return isinstance(path, str) and path.strip().lower() in YES_OR_NO_WORDS


NOT_A_SWITCH = Refuse(
    _yes_or_no_word,
    lambda word: (
        f"{word!r} is a yes or no, not the path of a cache file: the user cache is the default, "
        "and no cache is a yes/no value (False in Python, --no-cache on the command line); a file of "
        f"that name is ./{word.strip()}"
    ),
)
CachePath = Annotated[OutFile, NOT_A_SWITCH]
"""The path of a prediction cache (SQLite) file, on every route that takes one: a bare yes/no word
(``cache="yes"``, ``--cache true``) is a switch spelt as text, not a file name."""
CacheText = Annotated[PathText, NAMES_A_FOLDER, NOT_A_SWITCH]
"""A cache path as a settings file writes it (:data:`CachePath`'s rules on a YAML key's text)."""


def text_refusal(kind: Any, text: str) -> str | None:
    """Why the declared type ``kind`` refuses ``text``, in its words; None when it takes it."""
    from pydantic import TypeAdapter, ValidationError

    try:
        TypeAdapter(kind).validate_python(text)
    except ValidationError as error:
        return problems(error)[0].reason
    return None
