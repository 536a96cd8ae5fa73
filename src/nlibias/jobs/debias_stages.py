"""The steps of ``nlibias debias`` as stages with recorded inputs, so a rerun reuses, refuses or
(with ``force``) redoes each one, and never mixes the results of two sets of inputs.

Each stage has an output (a folder or file under ``OUT/``), a file that exists once it finished,
and its inputs (settings, data hashes, model identity, the fingerprints of the stages it reads).
``OUT/stages/<stage>.json`` records the inputs *before* the stage starts; on a rerun a stage is

* ``done`` when its record matches and its finished file exists: skipped;
* ``run`` when it has no output yet, or its record matches and it did not finish (a fine-tune
  resumes from its checkpoint);
* in conflict when its record names other inputs, or its output exists without a record (an
  older nlibias): refused with what changed, or with ``force`` its output is removed and the
  stage runs again. Stages downstream see the change through the fingerprints they record.
"""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from nlibias.debias.fingerprint import changes, fingerprint
from nlibias.errors import ConfigError
from nlibias.io.atomic import write_json

STAGES_DIR = "stages"
DONE, RUN, REDO = "done", "run", "redo"
_UPSTREAM_KEYS = ("models.", "audit:", "samples:", "train.augment_stage:")
"""How a change line of an input that is another stage's fingerprint begins."""


@dataclass(frozen=True)
class Stage:
    """One step of the experiment: its name, output, finished file and inputs."""

    name: str
    output: Path
    finished: Path
    inputs: dict[str, Any] = field(hash=False)
    reads: tuple[str, ...] = ()
    """Names of the stages whose output (fingerprint) this one's inputs hold."""
    complete: Callable[[], bool] | None = field(default=None, compare=False)
    """Beside ``finished`` existing, what else says the stage finished (a run directory's
    manifest exists from the start of its write: it must also say ``complete``)."""

    def has_finished(self) -> bool:
        return self.finished.exists() and (self.complete is None or self.complete())

    @property
    def fingerprint(self) -> str:
        return fingerprint(self.inputs)

    def record_path(self, out: Path) -> Path:
        return out / STAGES_DIR / (self.name.replace("/", "__") + ".json")


def _recorded(path: Path) -> dict[str, Any] | None:
    try:
        record = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError):
        return None
    return record if isinstance(record, dict) else None


def _has_output(stage: Stage) -> bool:
    if stage.output.is_dir():
        return any(stage.output.iterdir())
    return stage.output.exists()


def stage_status(out: Path, stage: Stage) -> tuple[str, list[str]]:
    """``(DONE | RUN | REDO, what changed)``; REDO is a conflict (other inputs recorded)."""
    record = _recorded(stage.record_path(out))
    if record is None:
        if _has_output(stage):
            return REDO, changes(None, stage.inputs)
        return RUN, []
    if record.get("fingerprint") != stage.fingerprint:
        return REDO, changes(record.get("inputs"), stage.inputs)
    return (DONE if stage.has_finished() else RUN), []


def check_stages(out: Path, stages: Sequence[Stage], force: bool) -> dict[str, str]:
    """Every stage's status, before any work; conflicts are refused unless ``force``."""
    statuses, conflicts = {}, []
    for stage in stages:
        status, changed = stage_status(out, stage)
        statuses[stage.name] = status
        if status == REDO:
            upstream = [name for name in stage.reads if statuses.get(name) == REDO]
            why = (
                "its input stages changed (above)"
                if upstream and _only_upstream(stage, changed)
                else "; ".join(changed)
            )
            conflicts.append(f"{stage.name}: {why}")
    if conflicts and not force:
        raise ConfigError(
            f"{out} holds results of other inputs, which would mix with these:\n  "
            + "\n  ".join(conflicts)
            + "\nUse another out_dir, or set force (parameter force) to redo the stages whose inputs changed "
            "(and those that read them)",
            parameter="out_dir",
        )
    return statuses


def _only_upstream(stage: Stage, changed: list[str]) -> bool:
    """Whether every change is a fingerprint of a stage read (not a setting of this one)."""
    return all(line.startswith(_UPSTREAM_KEYS) for line in changed)


def _remove(path: Path) -> None:
    """Remove a stage's output as a unit: renamed first, so a kill leaves no half of it in place."""
    if not path.exists():
        return
    doomed = path.with_name(f".removing-{path.name}-{os.getpid()}")
    path.rename(doomed)
    if doomed.is_dir():
        shutil.rmtree(doomed, ignore_errors=True)
    else:
        doomed.unlink()


def begin_stage(out: Path, stage: Stage, status: str) -> None:
    """Before a stage runs: drop the output of other inputs (REDO), record this stage's inputs."""
    if status == REDO:
        _remove(stage.output)
    write_json(
        stage.record_path(out),
        {"stage": stage.name, "inputs": stage.inputs, "fingerprint": stage.fingerprint},
    )
