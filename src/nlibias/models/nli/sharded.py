"""Shard an NLI classifier over the devices of one machine, one ``spawn``ed worker per device;
results and cache entries are those of one process."""

from __future__ import annotations

import contextlib
import multiprocessing
import os
import queue
import signal
import sys
import time
import traceback
import weakref
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import replace
from typing import Annotated, Any, Self

import numpy as np
from annotated_types import MinLen

from nlibias.errors import ConfigError, NlibiasError
from nlibias.models.base import BatchResult, Identified, NLIClassifier, Pair
from nlibias.models.batching import plan_batches
from nlibias.models.registry import create_classifier
from nlibias.schema.declared import Allowed, declared
from nlibias.schema.placement import Device

_POLL_SECONDS = 0.5  # between checks that every worker is alive
_STOP_SECONDS = 5.0

ClassifierFactory = Callable[..., NLIClassifier]
"""``factory(spec, device=..., **options)`` → a classifier; picklable (sent to the workers)."""


class WorkerError(NlibiasError):
    """A classifier worker (a process or a Ray actor) failed; ``remote_traceback``: its traceback."""

    def __init__(self, message: str, *, remote_traceback: str = "") -> None:
        super().__init__(message)
        self.remote_traceback = remote_traceback


def cpu_threads_per_worker(n_workers: int, cores: int | None = None) -> int:
    """Torch threads for each of ``n_workers`` workers sharing ``cores`` cores (at least 1).

    >>> cpu_threads_per_worker(2, cores=2), cpu_threads_per_worker(3, cores=16), cpu_threads_per_worker(4, 2)
    (1, 5, 1)
    """
    if cores is None:
        cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    return max(1, cores // max(1, n_workers))


def deal_by_length(pairs: Sequence[Pair], n_shards: int) -> list[np.ndarray]:
    """Positions of ``pairs`` for each shard: longest first (characters stand in for tokens),
    dealt round-robin, so shards get about the same tokens.

    >>> [s.tolist() for s in deal_by_length([("a", "b"), ("aaaa", "b"), ("aa", "b")], 2)]
    [[1, 0], [2]]
    """
    order = longest_first(pairs)
    return [order[k::n_shards] for k in range(n_shards)]


def longest_first(pairs: Sequence[Pair]) -> np.ndarray:
    """Positions of ``pairs`` by decreasing length in characters (stable)."""
    lengths = np.fromiter((len(p) + len(h) for p, h in pairs), dtype=np.int64, count=len(pairs))
    return np.argsort(-lengths, kind="stable")


def build_worker_classifier(
    spec: str,
    device: str,
    options: Mapping[str, Any],
    factory: ClassifierFactory | None,
    threads: int | None = None,
) -> Any:
    """The classifier a worker runs (``factory``'s, else the registry's; torch on ``threads``
    threads when given), and its name, identity and description."""
    classifier = (factory or create_classifier)(spec, device=device, **options)
    if threads is not None and "torch" in sys.modules:
        sys.modules["torch"].set_num_threads(threads)
    describe = getattr(classifier, "describe", None)
    return classifier, (
        classifier.name,
        dict(classifier.identity()),
        dict(describe()) if callable(describe) else {},
    )


def identity_differences(first: Mapping[str, Any], other: Mapping[str, Any]) -> list[str]:
    """The keys whose values two classifier identities disagree on."""
    return sorted(k for k in {*first, *other} if first.get(k) != other.get(k))


def _worker_main(
    rank: int,
    device: str,
    spec: str,
    options: dict[str, Any],
    factory: ClassifierFactory | None,
    threads: int,
    jobs: Any,
    results: Any,
) -> None:
    """A worker: build the classifier, report its identity, then run the shards it is sent."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    parent = multiprocessing.parent_process()

    def parent_alive() -> bool:
        return parent is None or parent.is_alive()

    os.environ["OMP_NUM_THREADS"] = os.environ["MKL_NUM_THREADS"] = str(threads)
    try:
        classifier, report = build_worker_classifier(spec, device, options, factory, threads)
        results.put(("ready", rank, *report))
        while True:
            try:
                message = jobs.get(timeout=1.0)
            except queue.Empty:
                if not parent_alive():
                    return
                continue
            if message[0] == "stop":
                return
            if message[0] == "plan":
                results.put(("plan", rank, message[1], _plan(classifier, message[2])))
                continue
            _, job, pairs = message
            for batch in classifier.predict_batches(pairs):
                fields = (batch.indices, batch.probs, batch.real_tokens, batch.padded_tokens, batch.truncated)
                results.put(("batch", rank, job, BatchResult(*fields)))
                if not parent_alive():
                    return
            results.put(("done", rank, job))
    except BaseException as error:
        summary = f"{type(error).__name__}: {error}"
        results.put(("error", rank, summary, traceback.format_exc()))


def _plan(classifier: Any, pairs: Sequence[Pair]) -> tuple[list[np.ndarray], list[int]] | None:
    """The batches ``classifier`` would cut ``pairs`` into and their padded tokens, else ``None``."""
    planner = getattr(classifier, "plan_batches", None)
    if callable(planner):
        batches = [np.asarray(batch, dtype=np.int64) for batch in planner(pairs)]
        return batches, [len(batch) for batch in batches]
    encode = getattr(classifier, "encode", None)
    max_tokens = getattr(classifier, "max_tokens", None)
    max_batch_size = getattr(classifier, "max_batch_size", None)
    if callable(encode) and isinstance(max_tokens, int) and isinstance(max_batch_size, int):
        _, _, lengths = encode(pairs)
        batches = plan_batches(lengths, max_tokens=max_tokens, max_batch_size=max_batch_size)
        return batches, [int(lengths[b].max()) * len(b) for b in batches]
    return None


def deal_batches(batches: Sequence[np.ndarray], weights: Sequence[int], n_shards: int) -> list[np.ndarray]:
    """Whole batches to shards, each to the one with the fewest tokens so far (a shard of whole
    batches is cut into the same batches again: results bit-identical to one process's).

    >>> [s.tolist() for s in deal_batches([np.array([3, 0]), np.array([1]), np.array([2])], [8, 5, 4], 2)]
    [[0, 3], [1, 2]]
    """
    loads = [0] * n_shards
    chosen: list[list[np.ndarray]] = [[] for _ in range(n_shards)]
    for batch, weight in zip(batches, weights, strict=True):
        rank = loads.index(min(loads))
        chosen[rank].append(np.asarray(batch, dtype=np.int64))
        loads[rank] += int(weight)
    return [np.sort(np.concatenate(parts)) if parts else np.zeros(0, dtype=np.int64) for parts in chosen]


class WorkerClassifier(Identified):
    """What the sharded and Ray classifiers share: the wrapped classifier's identity and
    description (``_describe``), and :meth:`close` on leaving a ``with`` block."""

    _describe: dict[str, Any]

    def _keep(self, spec: str, options: Mapping[str, Any], factory: ClassifierFactory | None) -> None:
        """What every worker builds its classifier from (options left unset dropped)."""
        self.spec, self.name, self.factory = spec, spec, factory
        self.options = {key: value for key, value in options.items() if value is not None}

    def _described(self, **extra: Any) -> dict[str, Any]:
        return {**(self._describe or self._identity), **extra}

    def close(self) -> None:
        raise NotImplementedError

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()


class _Pool:
    """The worker processes and their queues (apart, so a finalizer holds no classifier alive)."""

    def __init__(self) -> None:
        self.processes: list[Any] = []
        self.jobs: list[Any] = []
        self.results: Any = None

    def stop(self, *, abort: bool = False) -> None:
        """Ask idle workers to stop; ``abort`` terminates them at once (the parent commits)."""
        if not abort:
            for jobs in self.jobs:
                with contextlib.suppress(OSError, ValueError):  # queue already closed
                    jobs.put(("stop",))
            for process in self.processes:
                process.join(timeout=_STOP_SECONDS)
        for process in self.processes:
            if process.is_alive():
                process.terminate()
                process.join(timeout=_STOP_SECONDS)
            if process.is_alive():
                process.kill()
                process.join()
        for q in [*self.jobs, self.results]:
            if q is not None:
                q.cancel_join_thread()  # unread items must not keep the parent from exiting
                q.close()
        self.processes, self.jobs, self.results = [], [], None


class ShardedNLIClassifier(WorkerClassifier):
    """One classifier per device (``devices`` may repeat) in worker processes, as one
    :class:`NLIClassifier`; workers start at construction and stop on :meth:`close`. Devices whose
    identities differ are refused."""

    @declared
    def __init__(
        self,
        spec: str,
        devices: Annotated[
            Sequence[Device],
            MinLen(1),
            Allowed("a non-empty list of device names such as ['cuda:0', 'cuda:1']"),
        ],
        *,
        factory: ClassifierFactory | None = None,
        start_timeout: float | None = None,
        device: Annotated[
            None, Allowed("left out: pass the devices as `devices=[...]`, not `device=`")
        ] = None,
        **options: Any,
    ) -> None:
        self._keep(spec, options, factory)
        self.devices = list(devices)
        self.start_timeout = start_timeout
        self._pool = _Pool()
        self._finalizer = weakref.finalize(self, _Pool.stop, self._pool)
        self._jobs_started = 0
        self._identity: dict[str, Any] = {}
        self._describe: dict[str, Any] = {}
        self._start()

    def describe(self) -> dict[str, Any]:
        """The wrapped classifier's description, with the device list in place of its device."""
        described = self._described(devices=list(self.devices))
        described.pop("device", None)
        return described

    def predict_batches(self, pairs: Sequence[Pair]) -> Iterator[BatchResult]:
        """The workers' batches as they arrive; closing the generator early stops the workers."""
        if not pairs:
            return
        if not self._pool.processes:
            self._start()
        pool = self._pool
        self._jobs_started += 1
        job = self._jobs_started
        running: set[int] = set()
        finished = False
        try:
            shards = self._shards(pairs, job)
            for rank, shard in enumerate(shards):
                if len(shard):
                    pool.jobs[rank].put(("run", job, [pairs[int(i)] for i in shard]))
                    running.add(rank)
            while running:
                message = self._next_message(running)
                kind, rank = message[0], message[1]
                if kind == "batch":
                    _, _, batch_job, batch = message
                    if batch_job == job:
                        yield replace(batch, indices=shards[rank][np.asarray(batch.indices, dtype=np.int64)])
                elif kind == "done" and message[2] == job:
                    running.discard(rank)
            finished = True
        finally:
            if not finished:  # an error, Ctrl-C, or the caller stopped early: no worker left behind
                self._pool.stop(abort=True)

    def _shards(self, pairs: Sequence[Pair], job: int) -> list[np.ndarray]:
        """Split by the classifier's own batch plan (asked of worker 0), else by length."""
        n = len(self.devices)
        if n == 1:
            return [np.arange(len(pairs), dtype=np.int64)]
        self._pool.jobs[0].put(("plan", job, list(pairs)))
        while True:
            message = self._next_message({0})
            if message[0] == "plan" and message[2] == job:
                break
        if message[3] is None:
            return deal_by_length(pairs, n)
        batches, weights = message[3]
        return deal_batches(batches, weights, n)

    def close(self) -> None:
        """Stop the workers (idempotent); a later ``predict_batches`` starts them again."""
        self._pool.stop()

    @property
    def worker_pids(self) -> list[int]:
        """Process ids of the running workers (empty when stopped)."""
        return [p.pid for p in self._pool.processes if p.pid is not None]

    def _start(self) -> None:
        context = multiprocessing.get_context("spawn")
        pool = self._pool
        pool.results = context.Queue()
        threads = self.options.get("threads") or cpu_threads_per_worker(len(self.devices))
        try:
            for rank, device in enumerate(self.devices):
                jobs = context.Queue()
                process = context.Process(
                    target=_worker_main,
                    args=(rank, device, self.spec, self.options, self.factory, threads, jobs, pool.results),
                    name=f"nlibias-nli-{rank}-{device}",
                    daemon=True,
                )
                process.start()
                pool.jobs.append(jobs)
                pool.processes.append(process)
            waiting = set(range(len(self.devices)))
            reports: dict[int, tuple[str, dict[str, Any], dict[str, Any]]] = {}
            while waiting:
                message = self._next_message(waiting, timeout=self.start_timeout)
                if message[0] == "ready":
                    _, rank, name, identity, described = message
                    reports[rank] = (name, identity, described)
                    waiting.discard(rank)
            first = reports[0][1]
            for rank, (_, identity, _) in sorted(reports.items()):
                if identity != first:
                    differ = identity_differences(first, identity)
                    raise ConfigError(
                        f"the workers on {self.devices[0]!r} and {self.devices[rank]!r} would compute "
                        f"different results (identity differs in {', '.join(differ)}); "
                        "use devices of one kind, or pin the setting (e.g. dtype='bfloat16')",
                        parameter="devices",
                    )
        except BaseException:
            self._pool.stop(abort=True)
            raise
        self.name, self._identity, self._describe = reports[0]

    def _next_message(self, expecting: set[int], timeout: float | None = None) -> tuple[Any, ...]:
        """The next message from a worker; :class:`WorkerError` for an error or a dead worker."""
        deadline = None if timeout is None else time.monotonic() + timeout
        pool = self._pool
        while True:
            try:
                message: tuple[Any, ...] = pool.results.get(timeout=_POLL_SECONDS)
            except queue.Empty:
                for rank in sorted(expecting):
                    process = pool.processes[rank]
                    if not process.is_alive():
                        raise WorkerError(
                            f"NLI worker {rank} on device {self.devices[rank]!r} ({self.spec}) died "
                            f"with exit code {process.exitcode} (see its output above; -9 is often the "
                            "out-of-memory killer; a script that starts workers needs an "
                            "`if __name__ == '__main__':` guard)"
                        ) from None
                if deadline is not None and time.monotonic() > deadline:
                    raise WorkerError(
                        f"NLI workers on {[self.devices[r] for r in sorted(expecting)]} ({self.spec}) "
                        f"did not report within {timeout} s"
                    ) from None
                continue
            if message[0] == "error":
                _, rank, summary, remote = message
                raise WorkerError(
                    f"NLI worker {rank} on device {self.devices[rank]!r} ({self.spec}) failed: {summary}",
                    remote_traceback=remote,
                )
            return message
