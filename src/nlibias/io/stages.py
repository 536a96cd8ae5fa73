"""The stage engine of ``extend``, ``debias`` and ``explain``: each step records its inputs, their
:func:`fingerprint` and its outputs' hashes (``OUT/stages/<name>.json``), so a rerun reuses it
(``done``), runs it (``run``) or, with other inputs, refuses or (``force``) redoes it (``redo``).

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
import os
import shutil
import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from nlibias.errors import ConfigError, NlibiasError
from nlibias.io.atomic import write_json
from nlibias.io.fingerprint import flat_keys, sha256_file
from nlibias.io.jsonl import json_object_or_none
from nlibias.models.generative.sources import local_source
from nlibias.models.hub_reach import hub_file
from nlibias.schema.model_ref import ModelRef

STAGES_DIR = "stages"
DONE, RUN, REDO = "done", "run", "redo"


class RecomputedWarning(UserWarning):
    """A finished stage's outputs did not check out (damaged, cut short or replaced since it wrote
    them): they are not reused, the stage runs again."""


_MISSING = "(none)"


def canonical(inputs: Any) -> Any:
    """``inputs`` as plain JSON values (tuples as lists, paths as strings)."""
    return json.loads(json.dumps(inputs, sort_keys=True, default=str))


def fingerprint(inputs: Mapping[str, Any]) -> str:
    """SHA-256 of ``inputs`` as canonical JSON (sorted keys, no spaces)."""
    text = json.dumps(canonical(inputs), sort_keys=True, separators=(",", ":"), allow_nan=True)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _differences(old: Mapping[str, Any], new: Mapping[str, Any]) -> list[tuple[str, Any, Any]]:
    before, after = flat_keys(canonical(dict(old))), flat_keys(canonical(dict(new)))
    return [
        (key, before.get(key, _MISSING), after.get(key, _MISSING))
        for key in sorted(set(before) | set(after))
        if before.get(key, _MISSING) != after.get(key, _MISSING)
    ]


def _short(value: Any) -> str:
    text = value if value is _MISSING else json.dumps(value, sort_keys=True)
    return text if len(text) <= 80 else text[:36] + "..." + text[-36:]


def changes(old: Mapping[str, Any] | None, new: Mapping[str, Any], limit: int = 8) -> list[str]:
    """``key: old -> new`` (values as JSON, a missing one as ``(none)``) for every input that
    differs, at most ``limit`` lines and then a count.

    >>> changes({"m": [{"q": None}], "policy": "any"}, {"m": [{"q": "int8"}], "policy": "all"})
    ['m[0].q: null -> "int8"', 'policy: "any" -> "all"']
    """
    if old is None:
        return ["no inputs recorded (written by an older nlibias or by hand)"]
    lines = [f"{key}: {_short(a)} -> {_short(b)}" for key, a, b in _differences(old, new)]
    if len(lines) > limit:
        lines = [*lines[:limit], f"... and {len(lines) - limit} more"]
    return lines


def model_identity(model: str, revision: str | None = None) -> dict[str, Any]:
    """What names a model's files exactly: a local directory by its path and files' hash, a hub id
    by its commit (None when the hub cannot tell), a GGUF file by its quick hash, a fake by name.

    >>> model_identity("fake:a")
    {'name': 'fake:a', 'kind': 'hub', 'revision': None, 'files_sha256': None}
    """
    # deferred: hf_common pulls numpy, and the CLI's --help reaches this module
    from nlibias.models.hf_common import hash_local_model, is_local_model

    ref = ModelRef.unread(model)
    local = model if is_local_model(model) else None
    after_kind = ref.name if ref.kind.isidentifier() and not ref.is_fake else ""
    if local is None and after_kind and is_local_model(after_kind):
        local = after_kind
    if local is not None:
        path = Path(local).expanduser().absolute()
        return {"name": str(path), "kind": "local", "revision": None, "files_sha256": hash_local_model(path)}
    if ref.is_fake:
        return {"name": model, "kind": "hub", "revision": None, "files_sha256": None}
    name = after_kind or model
    if ModelRef("", name).is_gguf:
        return {"name": model, "kind": "local", "revision": None, "files_sha256": _gguf_weights(name)}
    found = hub_file(name, "config.json", revision)
    commit = Path(found).parent.name if found is not None else None
    return {"name": model, "kind": "hub", "revision": commit, "files_sha256": None}


def _gguf_weights(name: str) -> str | None:
    try:
        return str(local_source(name).fingerprint()["weights"])
    except NlibiasError:
        return None


@dataclass(frozen=True)
class Stage:
    """One step of a run: its name, output, finished file and inputs."""

    name: str
    output: Path
    """Removed as a unit before a conflicting stage is redone."""
    finished: Path
    inputs: dict[str, Any] = field(hash=False)
    reads: tuple[str, ...] = ()
    """Names of the stages whose fingerprint this one's inputs hold."""
    complete: Callable[[], bool] | None = field(default=None, compare=False)
    """What else says the stage finished, beside ``finished`` existing."""
    recorded: bool = False
    """Finished when its record says so (:func:`finish_stage`), not by ``finished`` existing."""

    def has_finished(self) -> bool:
        return self.finished.exists() and (self.complete is None or self.complete())

    @property
    def fingerprint(self) -> str:
        return fingerprint(self.inputs)


def record_path(out: Path, name: str) -> Path:
    """``OUT/stages/<name>.json`` (a ``/`` in the name as ``__``)."""
    return out / STAGES_DIR / (name.replace("/", "__") + ".json")


def _legacy_path(out: Path, name: str) -> Path:
    return out / STAGES_DIR / (name.replace("/", "__") + ".done.json")


def read_record(out: Path, name: str) -> dict[str, Any] | None:
    """The stage's record; an older ``extend`` marker (``<name>.done.json``) is rewritten once as
    a finished record and removed."""
    legacy = _legacy_path(out, name)
    record = json_object_or_none(record_path(out, name))
    if record is None and legacy.exists():
        marker = json_object_or_none(legacy)
        if marker is not None:
            inputs = {"version": marker.get("version"), "settings": marker.get("settings")}
            inputs["files"] = marker.get("inputs")
            kept = {k: v for k, v in marker.items() if k not in ("version", "settings", "inputs")}
            record = {**kept, "stage": name, "inputs": inputs, "fingerprint": fingerprint(inputs)}
            write_json(record_path(out, name), record)
    legacy.unlink(missing_ok=True)
    return record


def record_problem(out: Path, name: str) -> str | None:
    """Why the stage's record, present, cannot be trusted (then the stage runs again, and says so):
    not a JSON object (cut short or edited), or not this stage's record (another file in its place);
    None when it is absent or reads as this stage's record.

    >>> import tempfile, pathlib
    >>> out = pathlib.Path(tempfile.mkdtemp())
    >>> (out / STAGES_DIR).mkdir()
    >>> _ = record_path(out, "masks").write_text('{"stage": "masks", "inputs": {}, "fing')
    >>> record_problem(out, "masks")
    'stages/masks.json cannot be read as a stage record (not a JSON object: cut short or edited?)'
    >>> _ = record_path(out, "masks").write_text('{"status": "complete", "stages": []}')
    >>> record_problem(out, "masks")
    "stages/masks.json is not stage masks's record (another file put in its place?)"
    """
    path = record_path(out, name)
    if not path.exists():
        return None
    rel = f"{STAGES_DIR}/{path.name}"
    record = json_object_or_none(path)
    if record is None:
        return f"{rel} cannot be read as a stage record (not a JSON object: cut short or edited?)"
    if not _is_record_of(record, name):
        return f"{rel} is not stage {name}'s record (another file put in its place?)"
    return None


def _is_record_of(record: Mapping[str, Any], name: str) -> bool:
    return (
        record.get("stage") == name
        and isinstance(record.get("inputs"), dict)
        and isinstance(record.get("fingerprint"), str)
    )


def remove_record(out: Path, name: str) -> None:
    """Forget a stage (its record, and a marker of an older nlibias)."""
    record_path(out, name).unlink(missing_ok=True)
    _legacy_path(out, name).unlink(missing_ok=True)


SEAL = "record_sha256"
"""The key of a record's SHA-256 of its own content (every other key), written by :func:`sealed`."""


def sealed(record: Mapping[str, Any]) -> dict[str, Any]:
    """``record`` with the SHA-256 of its own content, so a hand edit of it is seen (:func:`output_problems`).

    >>> record = sealed({"steps": 3})
    >>> output_problems(Path("."), record), output_problems(Path("."), {**record, "steps": 999})
    ([], ['the record was edited since it was written (its content no longer matches its record_sha256)'])
    """
    content = {key: value for key, value in record.items() if key != SEAL}
    return {**content, SEAL: fingerprint(content)}


def _seal_holds(record: Mapping[str, Any]) -> bool:
    """Whether a sealed record's content is still as :func:`sealed` wrote it (an unsealed one: yes)."""
    return SEAL not in record or sealed(record)[SEAL] == record[SEAL]


def output_problems(out: Path, record: Mapping[str, Any], *, whole: bool = False) -> list[str]:
    """Whether the record is as written (when :func:`sealed`; an older nlibias's is not) and each
    output it lists (path relative to ``out`` → SHA-256) that is gone or changed, in words (``whole``:
    each file named by its whole path, for words read outside the stage).

    >>> import tempfile, pathlib
    >>> out = pathlib.Path(tempfile.mkdtemp())
    >>> _ = (out / "rows.jsonl").write_text("{}\\n")
    >>> record = {"outputs": {"rows.jsonl": sha256_file(out / "rows.jsonl"), "gone.json": "00"}}
    >>> _ = (out / "rows.jsonl").write_text("{")
    >>> output_problems(out, record)
    ['rows.jsonl changed since the stage wrote it (damaged or replaced)', 'gone.json is missing']
    """
    outputs = record.get("outputs")
    problems = []
    if not _seal_holds(record):
        problems.append(
            f"the record was edited since it was written (its content no longer matches its {SEAL})"
        )
    for rel, digest in outputs.items() if isinstance(outputs, dict) else ():
        path = out / str(rel)
        named = path if whole else rel
        if not path.is_file():
            problems.append(f"{named} is missing")
        elif sha256_file(path) != digest:
            problems.append(f"{named} changed since the stage wrote it (damaged or replaced)")
    return problems


def _record_finished(out: Path, stage: Stage, record: dict[str, Any]) -> tuple[bool, list[str]]:
    """Whether the stage finished, and which of its recorded outputs do not check out."""
    problems = output_problems(out, record)
    if not stage.recorded:
        return stage.has_finished() and not problems, problems
    complete = "finished_at" in record and isinstance(record.get("outputs"), dict)
    return complete and not problems, problems


def _has_output(stage: Stage) -> bool:
    if stage.output.is_dir():
        return any(stage.output.iterdir())
    return stage.output.exists()


def stage_status(out: Path, stage: Stage) -> tuple[str, list[str]]:
    """``(DONE | RUN | REDO, what changed)``: REDO when other inputs are recorded; RUN lists the
    outputs that did not check out; a record that cannot be trusted (:func:`record_problem`) is
    no record, and the problem is what the stage lists."""
    record = read_record(out, stage.name)
    if record is None or not _is_record_of(record, stage.name):
        problem = record_problem(out, stage.name)
        if _has_output(stage):
            return REDO, [problem] if problem else changes(None, stage.inputs)
        return RUN, [problem] if problem else []
    if record.get("fingerprint") != stage.fingerprint:
        recorded = record.get("inputs")
        return REDO, changes(recorded if isinstance(recorded, dict) else None, stage.inputs)
    finished, problems = _record_finished(out, stage, record)
    return (DONE if finished else RUN), problems


def check_stages(out: Path, stages: Sequence[Stage], force: bool) -> dict[str, str]:
    """Every stage's status; conflicts are refused unless ``force``."""
    statuses, conflicts = {}, []
    for stage in stages:
        status, changed = stage_status(out, stage)
        statuses[stage.name] = status
        if (problem := record_problem(out, stage.name)) is not None:  # ours, damaged: redone, and said
            warnings.warn(f"{out}: stage {stage.name} runs again: {problem}", stacklevel=2)
        elif status == REDO:
            upstream = [s for s in stages if s.name in stage.reads and statuses.get(s.name) == REDO]
            why = (
                "its input stages changed (above)"
                if upstream and _only_upstream(out, stage, upstream)
                else "; ".join(changed)
            )
            conflicts.append(f"{stage.name}: {why}")
    if conflicts and not force:
        raise ConfigError(
            f"{out} holds results of other inputs, which would mix with these:\n  "
            + "\n  ".join(conflicts)
            + "\nUse another {out_dir}, or set {force} to redo the stages whose inputs changed "
            "(and those that read them)",
            parameter="out_dir",
            names=("force",),
        )
    return statuses


def _only_upstream(out: Path, stage: Stage, upstream: Sequence[Stage]) -> bool:
    """Whether every changed input is the fingerprint of a changed stage it reads."""
    record = read_record(out, stage.name)
    recorded = record.get("inputs") if record is not None else None
    if not isinstance(recorded, dict):
        return False
    fingerprints = {s.fingerprint for s in upstream}
    return all(
        isinstance(new, str) and new in fingerprints for _, _, new in _differences(recorded, stage.inputs)
    )


def _set_aside(path: Path) -> Path | None:
    """Rename a stage's output out of the way (removed as a unit once the new record is written)."""
    if not path.exists():
        return None
    doomed = path.with_name(f".removing-{path.name}-{os.getpid()}")
    path.rename(doomed)
    return doomed


def _remove(doomed: Path | None) -> None:
    if doomed is None:
        return
    if doomed.is_dir():
        shutil.rmtree(doomed, ignore_errors=True)
    else:
        doomed.unlink()


def begin_stage(out: Path, stage: Stage, status: str) -> None:
    """Before a stage runs: drop the output of other inputs (REDO), record this stage's inputs. When
    the record cannot be written (a full disk), the output is put back: nothing has changed."""
    doomed = _set_aside(stage.output) if status == REDO else None
    try:
        write_json(
            record_path(out, stage.name),
            {"stage": stage.name, "inputs": stage.inputs, "fingerprint": stage.fingerprint},
        )
    except BaseException:
        if doomed is not None:
            doomed.rename(stage.output)
        raise
    _remove(doomed)


def finish_stage(out: Path, stage: Stage, outputs: Sequence[str] = (), **details: Any) -> dict[str, Any]:
    """After a stage ran: its record with the inputs, the hashes of its ``outputs`` (relative to
    ``out``), ``details``, the time and the SHA-256 of all that (:func:`sealed`)."""
    record = sealed(
        {
            "stage": stage.name,
            "inputs": stage.inputs,
            "fingerprint": stage.fingerprint,
            "outputs": {rel: sha256_file(out / rel) for rel in outputs},
            **details,
            "finished_at": datetime.now(UTC).isoformat(timespec="seconds"),
        }
    )
    write_json(record_path(out, stage.name), record)
    return record
