"""The one stage engine (:mod:`nlibias.io.stages`) of extend, debias and explain: run directories
written before it (``stages/X.done.json`` of extend, ``stages/X.json`` of debias) keep working."""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path

import pytest

from nlibias.errors import ConfigError
from nlibias.extension.pipeline import PIPELINE_VERSION, run_pipeline
from nlibias.io.stages import (
    DONE,
    REDO,
    RUN,
    Stage,
    changes,
    check_stages,
    fingerprint,
    model_identity,
    stage_status,
)
from test_extension_pipeline import Spy, small_config, statuses


def _old_extend_fingerprint(stage: str, settings: object, inputs: object) -> str:
    """How extend fingerprinted a stage before the engine (its own function, default separators)."""
    payload = {"stage": stage, "version": PIPELINE_VERSION, "settings": settings, "inputs": inputs}
    return hashlib.sha256(json.dumps(payload, sort_keys=True, default=str).encode()).hexdigest()


def _as_old_extend_markers(run_dir: Path) -> None:
    """Rewrite each finished stage's record by hand as the marker an older nlibias wrote."""
    for path in sorted((run_dir / "stages").glob("*.json")):
        record = json.loads(path.read_text(encoding="utf-8"))
        settings, inputs = record["inputs"]["settings"], record["inputs"]["files"]
        marker = {
            "stage": record["stage"],
            "version": PIPELINE_VERSION,
            "fingerprint": _old_extend_fingerprint(record["stage"], settings, inputs),
            "settings": settings,
            "inputs": inputs,
            "outputs": record["outputs"],
            "counts": record["counts"],
            "seconds": record["seconds"],
            "finished_at": record["finished_at"],
        }
        path.unlink()
        (run_dir / "stages" / f"{record['stage']}.done.json").write_text(json.dumps(marker), encoding="utf-8")


def test_an_extend_run_with_old_markers_is_reused_and_its_markers_read_once(tmp_path: Path) -> None:
    run_pipeline(small_config(tmp_path), factories=Spy().factories, progress=False, until="fill")
    run_dir = tmp_path / "run"
    _as_old_extend_markers(run_dir)
    assert sorted(p.name for p in (run_dir / "stages").iterdir()) == [
        "fill.done.json",
        "masked.done.json",
        "masks.done.json",
    ]
    spy = Spy()
    again = run_pipeline(small_config(tmp_path), factories=spy.factories, progress=False, until="fill")
    assert [statuses(again)[s] for s in ("masks", "masked", "fill")] == ["skipped"] * 3
    assert spy.fillers == []  # nothing recomputed
    # read once: each old marker became a record of the new format and is gone
    assert sorted(p.name for p in (run_dir / "stages").iterdir()) == [
        "fill.json",
        "masked.json",
        "masks.json",
    ]


def test_an_old_extend_marker_with_other_settings_is_refused_by_name(tmp_path: Path) -> None:
    run_pipeline(small_config(tmp_path), factories=Spy().factories, progress=False, until="fill")
    _as_old_extend_markers(tmp_path / "run")
    changed = small_config(tmp_path, mlm__top_k=3)
    with pytest.raises(ConfigError, match=r"\(stage fill: mlm\.top_k: 2 -> 3\); nothing was changed"):
        run_pipeline(changed, factories=Spy().factories, progress=False, until="fill")


def _old_debias_record(out: Path, name: str, inputs: dict[str, object]) -> None:
    """A record as ``jobs/debias_stages`` wrote it: its fingerprint the SHA-256 of compact JSON."""
    text = json.dumps(inputs, sort_keys=True, separators=(",", ":"))
    record = {"stage": name, "inputs": inputs, "fingerprint": hashlib.sha256(text.encode()).hexdigest()}
    (out / "stages").mkdir(parents=True, exist_ok=True)
    (out / "stages" / (name.replace("/", "__") + ".json")).write_text(json.dumps(record), encoding="utf-8")


def test_an_old_debias_record_is_read_as_a_record_of_this_engine(tmp_path: Path) -> None:
    inputs: dict[str, object] = {"settings": {"learning_rate": 0.003, "seed": 42}, "train": "ab"}
    target = tmp_path / "models" / "tiny-base-s42"
    stage = Stage("models/tiny-base-s42", target, target / "finetune.json", inputs)
    _old_debias_record(tmp_path, stage.name, inputs)
    assert stage_status(tmp_path, stage) == (RUN, [])  # recorded, not finished: it resumes
    target.mkdir(parents=True)
    (target / "finetune.json").write_text("{}", encoding="utf-8")
    assert stage_status(tmp_path, stage) == (DONE, [])
    other = Stage(
        stage.name, target, target / "finetune.json", {**inputs, "settings": {"learning_rate": 0.001}}
    )
    # 0.003 -> 0.001 changed; seed 42 is no longer given: (none)
    assert stage_status(tmp_path, other) == (
        REDO,
        ["settings.learning_rate: 0.003 -> 0.001", "settings.seed: 42 -> (none)"],
    )


def test_a_stage_that_changed_only_through_a_stage_it_reads_says_so(tmp_path: Path) -> None:
    first = Stage("augment", tmp_path / "augmented", tmp_path / "augmented" / "s.json", {"seed": 1})
    reader = Stage(
        "audit",
        tmp_path / "audit",
        tmp_path / "audit" / "m.json",
        {"samples": first.fingerprint},
        reads=("augment",),
    )
    _old_debias_record(tmp_path, "augment", {"seed": 0})
    _old_debias_record(tmp_path, "audit", {"samples": fingerprint({"seed": 0})})
    with pytest.raises(ConfigError) as refused:
        check_stages(tmp_path, [first, reader], force=False)
    message = str(refused.value)
    assert "augment: seed: 0 -> 1" in message and "audit: its input stages changed (above)" in message
    assert check_stages(tmp_path, [first, reader], force=True) == {"augment": REDO, "audit": REDO}


def test_a_reader_whose_list_or_mapping_inputs_changed_beside_its_stage_is_refused_by_name(
    tmp_path: Path,
) -> None:
    """``debias --seeds 2`` over a finished ``--seeds 1`` run: the audit reads a changed stage and
    its models (a mapping) and the comparison's pairs (a list) changed too; before, the check
    hashed the list and stopped with an internal error (unhashable type: 'list')."""
    tune = Stage("models/m-s1", tmp_path / "m", tmp_path / "m" / "f.json", {"seed": 2})
    for pairs in ([["a", "b"]], [["a", "b"], ["c", "d"]]):  # one seed, then two; and the reverse
        reader = Stage(
            "audit",
            tmp_path / "audit",
            tmp_path / "audit" / "m.json",
            {"model": tune.fingerprint, "pairs": pairs, "models": {str(n): n for n in range(len(pairs))}},
            reads=("models/m-s1",),
        )
        _old_debias_record(tmp_path, "models/m-s1", {"seed": 1})
        recorded_pairs = [["a", "b"], ["c", "d"]] if len(pairs) == 1 else [["a", "b"]]
        _old_debias_record(
            tmp_path,
            "audit",
            {"model": fingerprint({"seed": 1}), "pairs": recorded_pairs, "models": {"0": 0}},
        )
        with pytest.raises(ConfigError) as refused:
            check_stages(tmp_path, [tune, reader], force=False)
        assert "models/m-s1: seed: 1 -> 2" in str(refused.value) and "audit: model:" in str(refused.value)
        assert "pairs: " in str(refused.value)


@pytest.mark.parametrize(
    ("record", "why"),
    [
        ('{"stage": "augment", "inputs": {"seed"', "cannot be read as a stage record (not a JSON object"),
        ('{"stage": "audit", "inputs": {"seed": 1}, "fingerprint": "x"}', "is not stage augment's record"),
        ('{"status": "complete", "stages": []}', "is not stage augment's record"),
    ],
)
def test_a_damaged_or_foreign_stage_record_is_redone_and_said(tmp_path: Path, record: str, why: str) -> None:
    """A record cut short or replaced (by another stage's, or another file) is no record: the stage
    runs again, setting its output aside, with a warning naming the record and why; not a refusal
    of 'other inputs', and never a reuse."""
    stage = Stage("augment", tmp_path / "augmented", tmp_path / "augmented" / "s.json", {"seed": 1})
    _old_debias_record(tmp_path, "augment", {"seed": 1})
    stage.output.mkdir()
    stage.finished.write_text("{}", encoding="utf-8")
    assert stage_status(tmp_path, stage) == (DONE, [])
    (tmp_path / "stages" / "augment.json").write_text(record, encoding="utf-8")
    status, lines = stage_status(tmp_path, stage)
    assert status == REDO and len(lines) == 1 and lines[0].startswith(f"stages/augment.json {why}")
    with pytest.warns(UserWarning, match=re.escape(f"stage augment runs again: stages/augment.json {why}")):
        assert check_stages(tmp_path, [stage], force=False) == {"augment": REDO}
    stage.finished.unlink()
    (tmp_path / "stages" / "augment.json").write_text(record, encoding="utf-8")
    assert stage_status(tmp_path, stage)[0] == RUN  # no output left: it runs, and still says why


def test_changes_quote_strings_mark_missing_keys_and_stop_at_the_limit() -> None:
    assert changes({"p": "any", "q": None}, {"p": "all"}) == ['p: "any" -> "all"', "q: null -> (none)"]
    many = changes({f"k{i}": 0 for i in range(10)}, {f"k{i}": 1 for i in range(10)}, limit=8)
    assert len(many) == 9 and many[-1] == "... and 2 more"  # 10 changes, 8 shown
    assert changes(None, {"a": 1}) == ["no inputs recorded (written by an older nlibias or by hand)"]


def test_one_model_identity_for_local_directories_kind_prefixes_and_fakes(tmp_path: Path) -> None:
    model = tmp_path / "tiny"
    model.mkdir()
    (model / "config.json").write_text('{"model_type": "bert"}', encoding="utf-8")
    local = model_identity(str(model))
    assert local["kind"] == "local" and str(local["files_sha256"]).startswith("sha256:")
    assert model_identity(f"causal:{model}") == local  # the files behind a kind: prefix
    assert model_identity("fake:x") == {
        "name": "fake:x",
        "kind": "hub",
        "revision": None,
        "files_sha256": None,
    }
