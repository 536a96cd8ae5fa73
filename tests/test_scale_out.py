"""Scaling out: one worker process per device (ShardedNLIClassifier) and Ray Data actors
(RayNLIClassifier) give a single process's results, feed the prediction cache the same way, and
leave no worker behind when something fails."""

from __future__ import annotations

import importlib.util
import os
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from nlibias.models.base import BatchResult, Pair
from nlibias.models.batching import plan_batches
from nlibias.models.fake import FakeNLIClassifier
from nlibias.models.nli.sharded import (
    ShardedNLIClassifier,
    WorkerError,
    cpu_threads_per_worker,
    deal_batches,
)
from nlibias.runtime.cache import PredictionCache
from nlibias.runtime.classifier import predict_pairs

needs_ray = pytest.mark.skipif(
    importlib.util.find_spec("ray") is None, reason='ray is not installed (pip install "nlibias[ray]")'
)


# --- helpers (module level: the workers import them by name) ---------------------------------


class FailingFake(FakeNLIClassifier):
    """A fake whose second batch raises, to fail a worker mid-run."""

    def predict_batches(self, pairs: Any) -> Iterator[BatchResult]:
        for number, batch in enumerate(super().predict_batches(pairs)):
            if number == 1:
                raise RuntimeError("boom in the second batch")
            yield batch


class SlowFake(FakeNLIClassifier):
    """A fake that takes 0.2 s per batch, so a run is still going when the caller stops."""

    def predict_batches(self, pairs: Any) -> Iterator[BatchResult]:
        for batch in super().predict_batches(pairs):
            time.sleep(0.2)
            yield batch


def failing_factory(spec: str, device: str, **options: Any) -> FakeNLIClassifier:
    return FailingFake("demo", batch_size=4)


def slow_factory(spec: str, device: str, **options: Any) -> FakeNLIClassifier:
    return SlowFake("demo", batch_size=2)


def pid_seeded_factory(spec: str, device: str, **options: Any) -> FakeNLIClassifier:
    """A fake whose identity differs in every process (as a node with other model files would)."""
    return FakeNLIClassifier("demo", seed=os.getpid())


def bbnli_like_pairs(corpus: list[str], n: int = 50) -> list[Pair]:
    """``n`` distinct premise/hypothesis pairs of BBNLI sentences, plus 5 repeats (deduplicated
    by predict_pairs)."""
    pairs = [(corpus[(3 * i) % len(corpus)], corpus[(7 * i + 1) % len(corpus)]) for i in range(n)]
    assert len(set(pairs)) == n
    return pairs + pairs[:5]


def spawned_children() -> list[int]:
    """Live processes started by this one through multiprocessing's spawn (from /proc)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            ppid = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
            cmdline = (entry / "cmdline").read_bytes()
        except (OSError, IndexError, ValueError):
            continue
        if ppid == os.getpid() and b"spawn_main" in cmdline:
            found.append(int(entry.name))
    return found


def collect(batches: Iterator[BatchResult], n: int) -> np.ndarray:
    """Probabilities by position; fails unless every position comes exactly once."""
    results = list(batches)
    indices = np.concatenate([b.indices for b in results])
    assert sorted(indices.tolist()) == list(range(n))
    probs = np.full((n, 3), np.nan)
    for batch in results:
        probs[batch.indices] = batch.probs
    return probs


# --- sharding -----------------------------------------------------------------------------------


def test_whole_batches_dealt_to_shards_are_cut_into_the_same_batches_again() -> None:
    rng = np.random.default_rng(0)
    lengths = rng.integers(5, 60, size=300)
    lengths[10:20] = 33  # ties across batch boundaries
    batches = plan_batches(lengths, max_tokens=400, max_batch_size=16)
    shards = deal_batches(batches, [int(lengths[b].max()) * len(b) for b in batches], 3)
    planned = {tuple(sorted(b.tolist())) for b in batches}
    replanned = {
        tuple(sorted(shard[b].tolist()))
        for shard in shards
        for b in plan_batches(lengths[shard], max_tokens=400, max_batch_size=16)
    }
    assert replanned == planned
    assert sorted(np.concatenate(shards).tolist()) == list(range(300))


def test_sharded_fake_matches_one_process_and_the_cache_is_shared(
    tmp_path: Path, bbnli_corpus: list[str]
) -> None:
    pairs = bbnli_like_pairs(bbnli_corpus)
    single = FakeNLIClassifier("demo")
    with ShardedNLIClassifier("fake:demo", ["cpu", "cpu"]) as sharded:
        assert sharded.identity() == single.identity()
        assert sharded.name == "demo"
        assert len(sharded.worker_pids) == 2
        probs = collect(sharded.predict_batches(pairs[:50]), 50)
        np.testing.assert_array_equal(probs, predict_pairs(single, pairs[:50], progress=False).probs)

        cache = PredictionCache(tmp_path / "cache.sqlite")
        first = predict_pairs(sharded, pairs, cache, progress=False)
        assert (first.unique_pairs, first.computed_pairs) == (50, 50)
        second = predict_pairs(sharded, pairs, cache, progress=False)
        assert (second.cached_pairs, second.computed_pairs) == (50, 0)
        # Same identity, same keys: a single process finds everything computed by the shards.
        computed_before = list(single.calls)
        alone = predict_pairs(single, pairs, cache, progress=False)
        assert alone.computed_pairs == 0 and single.calls == computed_before
        np.testing.assert_array_equal(alone.probs, first.probs)


def test_sharded_tiny_hf_model_is_bit_identical_to_one_process(
    tmp_path: Path, tiny_nli_dir: Path, bbnli_corpus: list[str]
) -> None:
    import torch

    from nlibias.models.nli.hf import HFNLIClassifier

    pairs = bbnli_like_pairs(bbnli_corpus)
    # Each pair is computed in the batch it gets in a single process (the shards are whole
    # batches of that plan), so with the same torch thread count the floats are the same bits.
    threads = torch.get_num_threads()
    torch.set_num_threads(cpu_threads_per_worker(2))
    try:
        single = HFNLIClassifier(tiny_nli_dir, device="cpu", max_batch_size=8)
        expected = predict_pairs(single, pairs, progress=False).probs
    finally:
        torch.set_num_threads(threads)

    with ShardedNLIClassifier(str(tiny_nli_dir), ["cpu", "cpu"], max_batch_size=8) as sharded:
        assert sharded.identity() == single.identity()
        assert sharded.describe()["devices"] == ["cpu", "cpu"]
        np.testing.assert_array_equal(collect(sharded.predict_batches(pairs[:50]), 50), expected[:50])

        cache = PredictionCache(tmp_path / "cache.sqlite")
        first = predict_pairs(sharded, pairs, cache, progress=False)
        np.testing.assert_array_equal(first.probs, expected)
        assert (first.unique_pairs, first.computed_pairs) == (50, 50)
        assert first.real_tokens > 0 and first.padded_tokens >= first.real_tokens
        second = predict_pairs(sharded, pairs, cache, progress=False)
        assert (second.cached_pairs, second.computed_pairs) == (50, 0)
    assert spawned_children() == []


def test_a_missing_model_fails_at_start_naming_the_device_and_leaves_no_process(tmp_path: Path) -> None:
    missing = tmp_path / "no-such-model"
    with pytest.raises(WorkerError, match=r"device 'cpu'.*no-such-model"):
        ShardedNLIClassifier(str(missing), ["cpu", "cpu"])
    assert spawned_children() == []


def test_a_worker_failing_mid_run_stops_every_worker(tmp_path: Path) -> None:
    pairs = [(f"premise {i}", f"hypothesis {i}") for i in range(40)]
    sharded = ShardedNLIClassifier("fake:demo", ["cpu", "cpu"], factory=failing_factory)
    pids = sharded.worker_pids
    with pytest.raises(
        WorkerError, match=r"worker \d on device 'cpu'.*RuntimeError: boom in the second batch"
    ) as caught:
        predict_pairs(sharded, pairs, PredictionCache(tmp_path / "cache.sqlite"), progress=False)
    assert "Traceback" in caught.value.remote_traceback
    assert sharded.worker_pids == [] and spawned_children() == []
    assert not any(Path(f"/proc/{pid}").exists() for pid in pids)


def test_stopping_early_or_ctrl_c_stops_the_workers_and_a_later_call_restarts_them() -> None:
    pairs = [(f"premise {i}", f"hypothesis {i}") for i in range(40)]
    with ShardedNLIClassifier("fake:demo", ["cpu", "cpu"], factory=slow_factory) as sharded:
        batches = sharded.predict_batches(pairs)
        first = next(batches)
        assert len(first.indices) == 2
        batches.close()
        assert sharded.worker_pids == [] and spawned_children() == []

        with pytest.raises(KeyboardInterrupt):
            for _ in sharded.predict_batches(pairs):
                raise KeyboardInterrupt
        assert sharded.worker_pids == [] and spawned_children() == []

        probs = collect(sharded.predict_batches(pairs), 40)  # workers start again
        np.testing.assert_array_equal(probs, predict_pairs(FakeNLIClassifier("demo"), pairs).probs)
    assert spawned_children() == []


def test_devices_are_checked() -> None:
    from nlibias.errors import ConfigError

    with pytest.raises(ConfigError, match="non-empty list"):
        ShardedNLIClassifier("fake:demo", "cpu")
    with pytest.raises(ConfigError, match="not `device=`"):
        ShardedNLIClassifier("fake:demo", ["cpu"], device="cpu")


# --- Ray Data -------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def local_ray() -> Iterator[Any]:
    """One local Ray instance with 2 CPUs for the module's Ray tests."""
    import logging

    import ray

    ray.init(num_cpus=2, include_dashboard=False, logging_level=logging.WARNING)
    try:
        yield ray
    finally:
        ray.shutdown()


@needs_ray
@pytest.mark.slow
def test_ray_two_workers_match_one_process_and_fill_the_cache(
    local_ray: Any, tmp_path: Path, tiny_nli_dir: Path, bbnli_corpus: list[str]
) -> None:
    from nlibias.models.nli.hf import HFNLIClassifier
    from nlibias.models.nli.ray_data import RayNLIClassifier

    pairs = bbnli_like_pairs(bbnli_corpus)
    single = HFNLIClassifier(tiny_nli_dir, device="cpu")
    expected = predict_pairs(single, pairs, progress=False).probs
    ray_clf = RayNLIClassifier(str(tiny_nli_dir), num_workers=2, batch_size=8)
    assert ray_clf.identity() == single.identity()

    cache = PredictionCache(tmp_path / "cache.sqlite")
    first = predict_pairs(ray_clf, pairs, cache, progress=False)
    assert (first.unique_pairs, first.computed_pairs) == (50, 50)
    # Blocks of 8 pairs are padded differently from the single process's batches: equal up to
    # float32 rounding (3.6e-7 at most, measured), never more than 1e-5; the labels are the same.
    np.testing.assert_allclose(first.probs, expected, rtol=0, atol=1e-5)
    np.testing.assert_array_equal(first.probs.argmax(axis=1), expected.argmax(axis=1))
    assert first.real_tokens > 0 and first.padded_tokens >= first.real_tokens
    second = predict_pairs(ray_clf, pairs, cache, progress=False)
    assert (second.cached_pairs, second.computed_pairs) == (50, 0)


@needs_ray
@pytest.mark.slow
def test_ray_worker_failures_name_the_worker(local_ray: Any, tmp_path: Path) -> None:
    from nlibias.models.nli.ray_data import RayNLIClassifier

    with pytest.raises(WorkerError, match=r"Ray NLI worker \(device 'cpu'.*no-such-model.*failed"):
        RayNLIClassifier(str(tmp_path / "no-such-model"))
    # Ray workers do not have pytest's sys.path: ship this module's factory by value.
    this_module = sys.modules[__name__]
    local_ray.cloudpickle.register_pickle_by_value(this_module)
    try:
        failing = RayNLIClassifier("fake:demo", batch_size=20, factory=failing_factory)
        pairs = [(f"premise {i}", f"hypothesis {i}") for i in range(40)]
        with pytest.raises(WorkerError, match="RuntimeError: boom in the second batch") as caught:
            predict_pairs(failing, pairs, progress=False)
        assert "Traceback" in caught.value.remote_traceback
        # An actor whose classifier is not the one the driver probed is refused at start-up.
        differing = RayNLIClassifier("fake:demo", factory=pid_seeded_factory)
        with pytest.raises(WorkerError, match="DataError: the classifier built on this node differs"):
            predict_pairs(differing, pairs, progress=False)
    finally:
        local_ray.cloudpickle.unregister_pickle_by_value(this_module)


def test_ray_missing_is_a_config_error_that_says_what_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    from nlibias.errors import ConfigError
    from nlibias.models.nli.ray_data import RayNLIClassifier

    monkeypatch.setitem(sys.modules, "ray", None)  # `import ray` now raises ImportError
    with pytest.raises(ConfigError, match=r'pip install "nlibias\[ray\]"'):
        RayNLIClassifier("fake:demo")


# --- the command line -------------------------------------------------------------------------


def _cli_samples(tmp_path: Path) -> Path:
    import json

    rows = []
    for i in range(6):
        for stereotype in ("pro", "anti"):
            rows.append(
                {
                    "id": f"{i}:{stereotype}",
                    "domain": "gender",
                    "subtopic": "t",
                    "premise": f"Premise number {i}.",
                    "hypothesis": f"The {stereotype} hypothesis {i}.",
                    "gold": "neutral",
                    "stereotype": stereotype,
                    "pair_key": str(i),
                }
            )
    path = tmp_path / "samples.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def test_audit_devices_flag_gives_the_single_process_predictions(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from nlibias.cli.main import app

    samples = _cli_samples(tmp_path)
    common = ["audit", "--samples", str(samples), "--model", "fake:x", "--bootstrap", "0", "--quiet"]
    single = CliRunner().invoke(app, [*common, "--no-cache", "--out", str(tmp_path / "one")])
    assert single.exit_code == 0, single.output
    cache = tmp_path / "cache.sqlite"
    sharded = CliRunner().invoke(
        app, [*common, "--devices", "cpu,cpu", "--cache", str(cache), "--out", str(tmp_path / "two")]
    )
    assert sharded.exit_code == 0, sharded.output
    one = (tmp_path / "one" / "predictions.jsonl").read_text()
    two = (tmp_path / "two" / "predictions.jsonl").read_text()
    assert one == two and one.count("\n") == 12
    # the parent filled the cache: a plain rerun on it computes nothing
    # (without --quiet, which leaves out the per-model computed/cached line)
    plain = [arg for arg in common if arg != "--quiet"]
    again = CliRunner().invoke(app, [*plain, "--cache", str(cache), "--out", str(tmp_path / "three")])
    assert again.exit_code == 0 and "0 computed, 12 from cache" in again.output


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--devices", "cpu", "--device", "cpu"], "device and devices exclude each other"),
        # the command line names the parameter at fault by its flag (ray_address: --ray)
        (["--devices", "cpu", "--ray", "local"], "devices and --ray exclude each other"),
        (["--ray", "local", "--device", "cpu"], "device does not apply with ray_address"),
    ],
)
def test_audit_refuses_contradictory_placement_flags(tmp_path: Path, extra: list[str], message: str) -> None:
    from typer.testing import CliRunner

    from nlibias.cli.main import app

    samples = _cli_samples(tmp_path)
    result = CliRunner().invoke(
        app,
        [
            "audit",
            "--samples",
            str(samples),
            "--model",
            "fake:x",
            "--no-cache",
            "--out",
            str(tmp_path / "o"),
            *extra,
        ],
    )
    assert result.exit_code != 0
    assert message in str(result.exception) + result.output
