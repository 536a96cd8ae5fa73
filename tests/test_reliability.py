"""Faults end in a consistent run or a clear refusal: damaged cache values are recomputed and
counted, never used; damaged databases and unwritable places are named with the fix; the command
line prints one short error (a traceback only with --debug, exit 70 for internal errors);
truncation to the model's length is counted."""

from __future__ import annotations

import csv
import errno
import json
import random
import sqlite3
import zlib
from pathlib import Path

import pytest
from typer.testing import CliRunner

from nlibias.cli.app import describe_fault
from nlibias.cli.main import app
from nlibias.errors import DamagedFileError, SourceError
from nlibias.runtime.cache import PredictionCache, encode_value
from nlibias.runtime.options import RunOptions


@pytest.fixture(scope="module")
def bbnli_samples(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from nlibias.jobs.expand import expand_to_dir

    out = tmp_path_factory.mktemp("bbnli-samples")
    expand_to_dir("bbnli", out)
    return out


def _audit(samples: Path, out: Path, cache: Path) -> dict:
    from nlibias.jobs.audit import run_audit

    run_audit(samples, ["fake:x"], run=RunOptions(cache=cache, bootstrap=0, progress=False), out_dir=out)
    return json.loads((out / "metrics.json").read_text(encoding="utf-8"))


def test_200_bit_flips_in_the_cache_are_recomputed_and_counted(bbnli_samples: Path, tmp_path: Path) -> None:
    cache = tmp_path / "c.sqlite"
    first = _audit(bbnli_samples, tmp_path / "a", cache)
    db = sqlite3.connect(cache)
    rows = db.execute("SELECT rowid, value FROM outputs").fetchall()
    assert db.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    rng = random.Random(0)
    for rowid, value in rng.sample(rows, 200):  # one bit of one digit of the JSON part, as a disk error would
        data = bytearray(value.encode())
        digits = [i for i, c in enumerate(data[: data.rindex(b"#")]) if chr(c).isdigit()]
        data[rng.choice(digits)] ^= 1 << rng.choice([0, 1, 2, 3])
        db.execute("UPDATE outputs SET value = ? WHERE rowid = ?", (data.decode("latin-1"), rowid))
    db.commit()
    assert db.execute("PRAGMA integrity_check").fetchone()[0] == "ok"  # SQLite sees nothing wrong
    db.close()
    second = _audit(bbnli_samples, tmp_path / "b", cache)
    stats = second["run"]["models"]["x"]["stats"]
    assert stats["cache_rejected"] == 200 and stats["computed"] == 200
    assert stats["cached"] == first["run"]["models"]["x"]["stats"]["unique_inputs"] - 200
    assert (tmp_path / "b" / "predictions.jsonl").read_bytes() == (
        tmp_path / "a" / "predictions.jsonl"
    ).read_bytes()
    assert second["models"] == first["models"]
    # the recomputed values replaced the damaged ones: a third run uses the cache only
    assert _audit(bbnli_samples, tmp_path / "c", cache)["run"]["models"]["x"]["stats"]["cache_rejected"] == 0


def test_implausible_cached_values_are_rejected_and_plausible_ones_used(tmp_path: Path) -> None:
    from nlibias.models.fake import FakeNLIClassifier
    from nlibias.runtime.cache import cache_key, identity_fingerprint
    from nlibias.runtime.classifier import predict_pairs

    classifier = FakeNLIClassifier()
    pairs = [(f"P{i}.", "H.") for i in range(6)]
    fingerprint = identity_fingerprint(classifier.identity())
    keys = [cache_key(fingerprint, *pair) for pair in pairs]
    stored = [
        "[0.2, 0.3, 0.5]",  # written before checksums: plain JSON, plausible, but recomputed
        encode_value([0.2, 0.3, 0.5], keys[1]),  # with the checksum of its key and value: used
        "[1.0, 0.9, 0.0]#K{:08x}".format(
            zlib.crc32(keys[2].encode() + b"\x00[1.0, 0.9, 0.0]")
        ),  # sums to 1.9
        "[NaN, 0.5, 0.5]",  # not finite
        "[0.5, 0.5]",  # wrong shape
        '{"probs": [0.2, 0.3, 0.5]',  # not JSON
    ]
    with PredictionCache(tmp_path / "c.sqlite") as cache:
        with sqlite3.connect(tmp_path / "c.sqlite") as db:
            db.executemany("INSERT INTO outputs VALUES (?, '', ?)", list(zip(keys, stored, strict=True)))
        run = predict_pairs(classifier, pairs, cache, progress=False)
        # 1 used, 5 rejected and recomputed (6 - 1 = 5 computed); 4 of them had no key checksum
        assert (run.cached_pairs, run.computed_pairs, run.cache_rejected) == (1, 5, 5)
        assert cache.unkeyed == 4  # rows 0, 3, 4, 5: no "#K" checksum
        assert run.probs[1].tolist() == [0.2, 0.3, 0.5]
        fresh = predict_pairs(classifier, [pairs[0], *pairs[2:]], None, progress=False).probs
        assert [run.probs[0].tolist(), *run.probs[2:].tolist()] == fresh.tolist()
        assert run.stats()["cache_rejected"] == 5
        # the recomputed values replaced the old rows: the next run reads every value from the cache
        again = predict_pairs(classifier, pairs, cache, progress=False)
        assert (again.cached_pairs, again.computed_pairs, again.cache_rejected) == (6, 0, 0)


def test_cached_values_swapped_between_two_keys_are_recomputed(tmp_path: Path) -> None:
    """Two values exchanged between their keys keep intact checksums of their own texts; the
    checksum covers the key too, so both fail and are recomputed (the swap is never used)."""
    from nlibias.models.fake import FakeNLIClassifier
    from nlibias.runtime.classifier import predict_pairs

    classifier = FakeNLIClassifier()
    pairs = [("P0.", "H."), ("P1.", "H.")]
    path = tmp_path / "c.sqlite"
    with PredictionCache(path) as cache:
        first = predict_pairs(classifier, pairs, cache, progress=False).probs.tolist()
    assert first[0] != first[1]  # the swap would change the results
    with sqlite3.connect(path) as db:
        (key_a, value_a), (key_b, value_b) = db.execute("SELECT key, value FROM outputs ORDER BY rowid")
        db.execute("UPDATE outputs SET value = ? WHERE key = ?", (value_b, key_a))
        db.execute("UPDATE outputs SET value = ? WHERE key = ?", (value_a, key_b))
    with PredictionCache(path) as cache:
        run = predict_pairs(classifier, pairs, cache, progress=False)
    assert (run.cached_pairs, run.computed_pairs, run.cache_rejected) == (0, 2, 2)
    assert run.probs.tolist() == first  # recomputed: the values of their own pairs


@pytest.mark.parametrize("damage", [b"this is not sqlite!!", b""])
def test_a_damaged_cache_file_is_named_with_the_fix(tmp_path: Path, damage: bytes) -> None:
    path = tmp_path / "c.sqlite"
    with PredictionCache(path) as cache:
        cache.put_many([("k", [0.2, 0.3, 0.5])] * 1)
    data = path.read_bytes()
    path.write_bytes(damage + data[len(damage) :] if damage else data[: len(data) // 2 + 100])
    with pytest.raises(DamagedFileError) as caught:
        PredictionCache(path).get_many(["k"])
    message = str(caught.value)
    assert (
        str(path) in message and "move the file aside" in message and "run directory was changed" in message
    )


def test_a_file_that_is_no_sqlite_database_is_not_called_a_damaged_cache(tmp_path: Path) -> None:
    path = tmp_path / "samples.jsonl"
    path.write_text('{"id": "a"}\n', encoding="utf-8")
    with pytest.raises(DamagedFileError) as caught:
        PredictionCache(path)
    flags = caught.value.render(lambda name: f"--{name}", lambda name: f"option --{name}")
    assert flags.startswith(f"{path}: the file is not a prediction cache (not an SQLite database)")
    assert "(name a prediction cache or a new file in --cache, or, if it was" in flags
    assert path.read_text(encoding="utf-8") == '{"id": "a"}\n' and not Path(f"{path}-wal").exists()
    cut = tmp_path / "c.sqlite"
    with PredictionCache(cut) as cache:
        cache.put_many([("k", [0.2, 0.3, 0.5])])
    cut.write_bytes(cut.read_bytes()[:200])
    with pytest.raises(DamagedFileError) as damaged:
        PredictionCache(cut).get_many(["k"])
    flags = damaged.value.render(lambda name: f"--{name}", lambda name: f"option --{name}")
    assert "or use another cache file (option --cache, or NLIBIAS_CACHE)" in flags


def test_another_tools_sqlite_database_is_refused_as_a_cache_and_left_as_it_was(tmp_path: Path) -> None:
    from nlibias.runtime.cache import cache_problem
    from nlibias.validation.store import AnnotationStore

    other = tmp_path / "other.sqlite"
    with sqlite3.connect(other) as db:
        db.execute("CREATE TABLE notes (text TEXT)")
    before = other.read_bytes()
    with pytest.raises(DamagedFileError) as caught:
        PredictionCache(other)
    flags = caught.value.render(lambda name: f"--{name}", lambda name: f"option --{name}")
    assert flags.startswith(f"{other}: the database is not a prediction cache: it holds the table notes")
    assert "a new file as --cache" in flags
    assert other.read_bytes() == before and not Path(f"{other}-wal").exists()
    assert "the table notes" in (cache_problem(other) or "")  # nlibias doctor says so too
    with pytest.raises(DamagedFileError, match="not an annotation database: it holds the table notes"):
        AnnotationStore(other)
    with PredictionCache(tmp_path / "c.sqlite") as cache:  # our own tables (and SQLite's) are ours
        cache.put_many([("k", [0.2, 0.3, 0.5])])
    assert PredictionCache(tmp_path / "c.sqlite").get_many(["k"]) == {"k": [0.2, 0.3, 0.5]}
    assert cache_problem(tmp_path / "c.sqlite") is None
    AnnotationStore(tmp_path / "a.sqlite")
    AnnotationStore(tmp_path / "a.sqlite")  # sqlite_sequence (AUTOINCREMENT) is SQLite's


def test_a_cache_that_is_an_input_or_an_output_is_refused_before_anything_runs(
    bbnli_samples: Path, tmp_path: Path
) -> None:
    from nlibias.errors import ConfigError
    from nlibias.jobs.explain import run_explain

    samples, out = bbnli_samples / "samples.jsonl", tmp_path / "o"
    before = samples.read_bytes()
    args = ["audit", "--samples", str(bbnli_samples), "--model", "fake:x", "--out", str(out), "--quiet"]
    read = CliRunner().invoke(app, [*args, "--cache", str(samples)])
    assert read.exit_code == 2
    assert f"--cache {samples} is a file the command reads (option --samples)" in " ".join(
        read.output.split()
    )
    written = CliRunner().invoke(app, [*args, "--cache", str(out / "metrics.json")])
    assert written.exit_code == 2 and "a file the command writes twice (option --out)" in written.output
    assert samples.read_bytes() == before and not out.exists()
    (tmp_path / "run").mkdir()
    predictions = tmp_path / "run" / "predictions.jsonl"
    predictions.write_text("{}\n", encoding="utf-8")
    with pytest.raises(ConfigError, match=r"predictions.jsonl is a file the command reads \(parameter run\)"):
        run_explain(tmp_path / "run", "fake:j", cache=predictions, progress=False)
    assert predictions.read_text(encoding="utf-8") == "{}\n"
    with pytest.raises(
        ConfigError, match=r"explanations.jsonl is a file the command reads \(parameter run\)"
    ):
        run_explain(
            tmp_path / "run", "fake:j", cache=tmp_path / "run" / "explanations" / "explanations.jsonl"
        )


def test_truncated_pairs_are_counted(tiny_nli_dir: Path) -> None:
    from nlibias.models.nli.hf import HFNLIClassifier
    from nlibias.runtime.classifier import predict_pairs

    classifier = HFNLIClassifier(tiny_nli_dir, max_length=24, device="cpu")
    long = " ".join(["the men went to work"] * 20)  # ~100 tokens
    run = predict_pairs(classifier, [("A man.", "A person."), ("A man.", long), (long, long)], progress=False)
    assert run.truncated_pairs == 2 and run.stats()["truncated_pairs"] == 2


# -- the command line's error boundary -------------------------------------------------------------


def test_an_internal_error_is_one_line_with_exit_70_and_a_traceback_with_debug(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    import nlibias.jobs.score

    def broken(*args: object, **kwargs: object) -> None:
        raise ZeroDivisionError("boom")

    monkeypatch.setattr(nlibias.jobs.score, "run_score", broken)
    args = ["score", "--samples", str(tmp_path), "--predictions", str(tmp_path / "p.jsonl")]
    plain = CliRunner().invoke(app, args)
    assert plain.exit_code == 70
    assert "internal error (ZeroDivisionError: boom)" in plain.output and "--debug" in plain.output
    assert "Traceback" not in plain.output
    debug = CliRunner().invoke(app, ["--debug", *args])
    assert isinstance(debug.exception, ZeroDivisionError)  # the traceback reaches the user


def test_a_user_error_with_debug_shows_its_traceback_too(tmp_path: Path) -> None:
    args = ["score", "--samples", str(tmp_path / "none"), "--predictions", str(tmp_path / "p.jsonl")]
    assert CliRunner().invoke(app, args).exit_code == 2
    assert isinstance(CliRunner().invoke(app, ["--debug", *args]).exception, SourceError)


@pytest.mark.parametrize(
    ("error", "expected"),
    [
        (
            OSError(errno.ENOSPC, "No space left on device", "/full/run"),
            "/full/run: no space left on the device",
        ),
        (OSError(errno.EROFS, "Read-only file system", "/ro/run"), "/ro/run: read-only file system"),
        (PermissionError(errno.EACCES, "Permission denied", "/x"), "/x: permission denied"),
        (sqlite3.DatabaseError("file is not a database"), "move the prediction cache"),
        (csv.Error("field larger than field limit (131072)"), "a CSV file is malformed"),
        (UnicodeDecodeError("utf-8", b"\xff", 0, 1, "invalid start byte"), "not UTF-8 text"),
    ],
)
def test_faults_of_the_environment_are_described_with_the_fix(error: BaseException, expected: str) -> None:
    message = describe_fault(error)
    assert message is not None and expected in message and "(" in message


def test_pyarrow_errors_are_faults_of_a_file() -> None:
    import pyarrow as pa

    message = describe_fault(pa.ArrowInvalid("Parquet magic bytes not found"))
    assert message is not None and "parquet file cannot be read" in message


def test_an_unwritable_output_is_refused_with_its_path(bbnli_samples: Path, tmp_path: Path) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("x")
    out = blocker / "run"
    result = CliRunner().invoke(
        app, ["audit", "--samples", str(bbnli_samples), "--model", "fake:x", "--out", str(out), "--no-cache"]
    )
    assert result.exit_code == 2 and str(blocker) in result.output and "Traceback" not in result.output


def test_the_judgements_csv_of_extend_refuses_a_short_row(tmp_path: Path) -> None:
    from nlibias.extension.validation_handoff import QueueRow, read_judgements

    row = QueueRow("h1", "s", "gender", "Men cook.", "pro", "m", "t", "w", "P.", 1)
    path = tmp_path / "judgements.csv"
    path.write_text("hypothesis_id,judgement,stereotype\nh1,valid,pro\nh1\n", encoding="utf-8")
    with pytest.raises(SourceError) as caught:
        read_judgements(path, [row])
    assert caught.value.line == 3 and "row has 1 field" in str(caught.value)


def test_a_full_disk_while_writing_the_run_is_named_with_the_fix(
    bbnli_samples: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import os

    import nlibias.io.atomic

    def full(src: str | os.PathLike[str], dst: str | os.PathLike[str]) -> None:
        raise OSError(errno.ENOSPC, "No space left on device", str(dst))

    monkeypatch.setattr(nlibias.io.atomic.os, "replace", full)
    out = tmp_path / "run"
    args = [
        "audit",
        "--samples",
        str(bbnli_samples),
        "--model",
        "fake:x",
        "--out",
        str(out),
        "--no-cache",
        "--quiet",
    ]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 2 and "Traceback" not in result.output
    assert "no space left on the device (free some space or choose another directory)" in result.output
    assert str(out) in result.output


def test_the_audit_warns_how_many_pairs_were_truncated(tiny_nli_dir: Path, tmp_path: Path) -> None:
    from nlibias.io.samples import write_samples
    from nlibias.schema import Sample
    from nlibias.testing.tiny_models import TINY_MAX_LENGTH

    long = " ".join(["the men went to work"] * TINY_MAX_LENGTH)  # past the tiny model's length
    samples = [
        Sample(
            id=f"x:{s}",
            source="bbnli",
            domain="d",
            subtopic="t",
            premise="A man.",
            hypothesis=text,
            gold="neutral",
            stereotype=s,
            pair_key="x",
        )
        for s, text in (("pro", "Men work."), ("anti", long))
    ]
    run = write_samples(tmp_path / "s", samples)["jsonl"].parent
    args = ["audit", "--samples", str(run), "--model", str(tiny_nli_dir), "--out", str(tmp_path / "o")]
    result = CliRunner().invoke(app, [*args, "--no-cache", "--bootstrap", "0", "--quiet", "--device", "cpu"])
    assert result.exit_code == 0, result.output
    assert "1 pairs are longer than the model's maximum length and were truncated" in result.output
    stats = json.loads((tmp_path / "o" / "metrics.json").read_text())["run"]["models"]
    assert [m["stats"]["truncated_pairs"] for m in stats.values()] == [1]


def test_a_cached_answer_that_contradicts_its_probabilities_is_recomputed(tmp_path: Path) -> None:
    """A stored generative answer whose own probabilities make the other word the most probable
    (its checksum sealed again) passed the cache's check and stopped the run at the predictions'
    check ("label entailment contradicts probs ... write the argmax of probs as the label"): it is
    now refused where it is read, recomputed and counted."""
    from nlibias.io.samples import write_samples
    from nlibias.runtime.cache import decode_value
    from nlibias.testing.report_runs import bbnli_like_samples

    samples = write_samples(tmp_path / "s", bbnli_like_samples(1))["jsonl"].parent
    cache = tmp_path / "c.sqlite"
    audit = ["audit", "--samples", str(samples), "--generative", "fake:g", "--prompt", "true", "--cache", str(cache),
             "--bootstrap", "0", "--quiet"]  # fmt: skip
    assert CliRunner().invoke(app, [*audit, "--out", str(tmp_path / "a")]).exit_code == 0
    with sqlite3.connect(cache) as db:
        key, stored = db.execute(
            "SELECT key, value FROM outputs WHERE value LIKE '%probs%' LIMIT 1"
        ).fetchone()
        record = decode_value(stored, key)
        words = sorted(record["probs"], key=record["probs"].get)
        record["answer"] = words[0]  # the least probable word, sealed with a valid checksum
        db.execute("UPDATE outputs SET value = ? WHERE key = ?", (encode_value(record, key), key))
    again = CliRunner().invoke(app, [*audit, "--out", str(tmp_path / "b")])
    assert again.exit_code == 0, again.output
    stats = json.loads((tmp_path / "b" / "metrics.json").read_text())["run"]["models"][
        "g|prompt=true|scored"
    ]["stats"]
    assert stats["cache_rejected"] == 1
    assert (tmp_path / "b" / "predictions.jsonl").read_bytes() == (
        tmp_path / "a" / "predictions.jsonl"
    ).read_bytes()
