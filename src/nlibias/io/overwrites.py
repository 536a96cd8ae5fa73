"""Refuse, before anything is computed, an output that is a file the command reads or another
output (a folder stands for its files; files compared by device and inode, else resolved path).

>>> import tempfile, pathlib
>>> d = pathlib.Path(tempfile.mkdtemp())
>>> _ = (d / "rules.yaml").write_text("margin: 1\\n")
>>> refuse_overwrites({"junit": d / "a.xml", "markdown": d / "b.md"}, {"rules": d / "rules.yaml"})
>>> refuse_overwrites({"markdown": d / ".." / d.name / "rules.yaml"}, {"rules": d / "rules.yaml"})
Traceback (most recent call last):
...
nlibias.errors.ConfigError: markdown .../rules.yaml is a file the command reads (as .../rules.yaml, parameter rules): writing it would destroy it; name another file in markdown
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from pathlib import Path

from nlibias.errors import ConfigError, SourceError
from nlibias.io.run_manifest import read_manifest, run_directory

Files = str | Path | Iterable[str | Path] | None

_RUN_FILES = ("manifest.json", "metrics.json", "predictions.jsonl", "tables.txt")
_RUN_FOLDERS = ("stages", "explanations", "validation")
_HELD = {
    "manifest.json": "a run of audit or score",
    "metrics.json": "a run of audit or score",
    "run.json": "an extend run",
    "stages": "the stage records of an extend or debias run",
    "finetune.json": "a fine-tuned model (finetune)",
    "samples.jsonl": "samples (expand)",
}
"""What marks a folder as another command's output: the file or folder, and what it says the folder holds."""


def file_identity(path: str | Path) -> tuple[object, ...]:
    """``(device, inode)`` of an existing file, else its resolved path.

    >>> file_identity("/no/such/dir/../file")
    ('path', '/no/such/file')
    """
    try:
        found = Path(path).stat()
    except OSError:
        return ("path", str(Path(path).expanduser().resolve()))
    return ("inode", found.st_dev, found.st_ino)


def refuse_named_twice(
    paths: Iterable[str | Path],
    parameter: str,
    what: str,
    *,
    each: str,
    file_of: Callable[[Path], Path] = Path,
    spelled: Sequence[str] = (),
) -> None:
    """Refuse one ``what`` (``file_of`` a path given) named twice in ``parameter``, however spelled
    (``spelled``: how each path was given, where not as itself, e.g. a glob pattern's match).

    >>> refuse_named_twice(["/r/a", "/r/x/../a"], "runs", "run directory", each="run")
    Traceback (most recent call last):
    nlibias.errors.ConfigError: runs names one run directory twice (/r/a and /r/x/../a); name each run once
    >>> refuse_named_twice(["/r/a", "/r/a"], "runs", "run", each="run", spelled=["/r/a", "/r/a (a match of '/r/*')"])
    Traceback (most recent call last):
    nlibias.errors.ConfigError: runs names one run twice (/r/a and /r/a (a match of '/r/*')); name each run once
    """
    seen: dict[tuple[object, ...], str] = {}
    for index, path in enumerate(paths):
        identity = file_identity(file_of(Path(path)))
        shown = spelled[index] if index < len(spelled) else str(path)
        if identity in seen:
            raise ConfigError(
                f"{parameter} names one {what} twice ({seen[identity]} and {shown}); name each {each} once",
                parameter=parameter,
            )
        seen[identity] = shown


def run_files(run_dir: str | Path) -> list[Path]:
    """The files a reader of the run directory (or of its ``metrics.json``) reads."""
    run = run_directory(run_dir)
    found = [run / name for name in _RUN_FILES]
    try:
        manifest = read_manifest(run) if run.is_dir() else None
    except SourceError:  # the command's own reader says how
        manifest = None
    if manifest is not None:
        found += [run / name for name in manifest["files"]]
        for entry in manifest.get("inputs", {}).values():
            found += [Path(entry["path"]), run / entry["path"]]
    for folder in _RUN_FOLDERS:
        if (run / folder).is_dir():
            found += [path for path in (run / folder).rglob("*") if path.is_file()]
    return [path for path in found if path.is_file()]


def _paths(files: Files) -> list[Path]:
    if files is None:
        return []
    named = [Path(files)] if isinstance(files, str | Path) else [Path(path) for path in files]
    return [inner for path in named for inner in (sorted(path.rglob("*")) if path.is_dir() else [path])]


def _as(path: Path, other: Path) -> str:
    return "" if path == other else f"as {other}, "


def _reference(other: str) -> str:
    """How a message refers to an input: ``{parameter NAME}``, or a description with spaces as it is
    (an input no parameter names, e.g. a benchmark's data found in the data dir)."""
    return other if " " in other else f"{{parameter {other}}}"


def _named(other: str) -> tuple[str, ...]:
    return () if " " in other else (other,)


def refuse_overwrites(outputs: Mapping[str, Files], inputs: Mapping[str, Files]) -> None:
    """Refuse an output that is a file of ``inputs`` or of another ``outputs`` parameter (keys:
    parameter names, or descriptions of inputs no parameter names)."""
    written: dict[tuple[object, ...], tuple[str, Path]] = {}
    read = {file_identity(path): (name, path) for name, files in inputs.items() for path in _paths(files)}
    for name, files in outputs.items():
        for path in _paths(files):
            clash = _clash(name, path, read, written)
            if clash is not None:
                message, other = clash
                raise ConfigError(message, parameter=name, names=_named(other))


def _clash(
    name: str,
    path: Path,
    read: Mapping[tuple[object, ...], tuple[str, Path]],
    written: dict[tuple[object, ...], tuple[str, Path]],
) -> tuple[str, str] | None:
    """Why output ``path`` of parameter ``name`` may not be written, and the other parameter."""
    identity, holder = file_identity(path), read.get(file_identity(path.parent))
    if holder is not None and path.parent.is_file():  # a folder wanted, an input file named
        where = f"{_as(path.parent, holder[1])}{_reference(holder[0])}"
        message = (
            f"{{{name}}} {path.parent} is a file the command reads ({where}); {{{name}}} takes "
            f"a folder (it writes {path.name} there): name a new folder in {{{name}}}"
        )
        return message, holder[0]
    if identity in read:
        clash, harm = read[identity], "reads ({}): writing it would destroy it"
    elif identity in written and written[identity][0] != name:
        clash, harm = written[identity], "writes twice ({}): one would overwrite the other"
    else:
        written[identity] = (name, path)
        return None
    other, other_path = clash
    where = harm.format(f"{_as(path, other_path)}{_reference(other)}")
    return f"{{{name}}} {path} is a file the command {where}; name another file in {{{name}}}", other


def refuse_writing_into(name: str, out_dir: str | Path, inputs: Mapping[str, Files]) -> None:
    """Refuse an output folder (parameter ``name``) that is, or lies inside, a folder of ``inputs``:
    what it writes there would be read as that input's files next time (keys as
    :func:`refuse_overwrites`').

    >>> refuse_writing_into("out_dir", "/tmp/x", {"source": "/"})
    Traceback (most recent call last):
    nlibias.errors.ConfigError: out_dir /tmp/x lies inside the folder / of parameter source: the files written there would be read as its own next time; name a folder outside it in out_dir
    """
    out = Path(out_dir).expanduser().resolve()
    for other, files in inputs.items():
        named = [Path(files)] if isinstance(files, str | Path) else [Path(path) for path in files or ()]
        for folder in (path.expanduser().resolve() for path in named if path.is_dir()):
            if folder == out or folder in out.parents:
                where = "is the folder" if folder == out else f"lies inside the folder {folder}"
                raise ConfigError(
                    f"{{{name}}} {out_dir} {where} of {_reference(other)}: the files "
                    f"written there would be read as its own next time; name a folder outside it in {{{name}}}",
                    parameter=name,
                    names=_named(other),
                )


def refuse_other_run(name: str, out_dir: str | Path, own: Collection[str]) -> None:
    """Refuse an output folder (parameter ``name``) that holds another command's output (a file or
    folder of :data:`_HELD` not in ``own``, the names this command's own folder holds): its files
    would mix with that run's, and each would be read as part of the other.

    >>> import tempfile, pathlib
    >>> d = pathlib.Path(tempfile.mkdtemp())
    >>> _ = (d / "metrics.json").write_text("{}")
    >>> refuse_other_run("out_dir", d / "new", {"finetune.json"})
    >>> refuse_other_run("out_dir", d, {"finetune.json"})  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    nlibias.errors.ConfigError: out_dir ... holds a run of audit or score (metrics.json): what this command writes there would mix with it; name a new folder in out_dir
    """
    folder = Path(out_dir).expanduser()
    if not folder.is_dir():
        return
    for marker, what in _HELD.items():
        if marker not in own and (folder / marker).exists():
            raise ConfigError(
                f"{{{name}}} {out_dir} holds {what} ({marker}): what this command writes there would mix "
                f"with it; name a new folder in {{{name}}}",
                parameter=name,
            )
