"""An NLI classifier on Ray Data actors (``pip install "nlibias[ray]"``): blocks of pairs stream
back to the driver, which alone touches the cache."""

from __future__ import annotations

import logging
import math
import os
import re
import traceback
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

import numpy as np

from nlibias.errors import DataError, import_extra
from nlibias.models.base import BatchResult, Pair
from nlibias.models.nli.sharded import (
    ClassifierFactory,
    WorkerClassifier,
    WorkerError,
    build_worker_classifier,
    identity_differences,
    longest_first,
)
from nlibias.schema import LABELS
from nlibias.schema.declared import NonNegativeFloat, PositiveInt, declared
from nlibias.schema.placement import Device, RayAddress

#: Pairs per Ray block (one actor call).
DEFAULT_BATCH_SIZE = 512
#: The token counts a block returns, in :class:`BatchResult` order (summed on its first row).
_COUNTS = ("real_tokens", "padded_tokens", "truncated")
_QUIET_CONTEXT = {
    "enable_progress_bars": False,
    "print_on_execution_start": False,
    "enable_auto_log_stats": False,
}


def import_ray() -> Any:
    """``ray`` (with Ray Data), or a :class:`ConfigError` that says how to install it."""
    where = "on the driver and on every worker node"
    ray = import_extra("ray", "ray", use="the Ray backend", parameter="ray_address", otherwise=where)
    # Ray without the [data] extra cannot run datasets
    import_extra("ray.data", "ray", use="the Ray backend", parameter="ray_address", otherwise=where)
    return ray


def _probe(
    spec: str, device: str, options: Mapping[str, Any], factory: ClassifierFactory | None, num_cpus: float
) -> tuple[str, dict[str, Any], dict[str, Any]]:
    """A Ray task with the actors' resources: the classifier's name, identity, description."""
    return build_worker_classifier(spec, device, options, factory, _threads(device, num_cpus, options))[1]


def _threads(device: str, num_cpus: float, options: Mapping[str, Any]) -> int | None:
    """torch's threads on a CPU actor: Ray's share of cores, unless the backend was given ``threads``."""
    return max(1, int(num_cpus)) if device == "cpu" and not options.get("threads") else None


def _length_sorted_blocks(pairs: Sequence[Pair], batch_size: int, num_workers: int) -> list[Any]:
    """``pairs`` longest first in Arrow tables of at most ``batch_size`` rows, two per actor at least
    (idle actors take whole blocks: the pool balances itself)."""
    import pyarrow as pa

    order = longest_first(pairs)
    block_size = min(batch_size, max(1, math.ceil(len(pairs) / (2 * num_workers))))
    return [
        pa.table(
            {
                "index": order[start : start + block_size],
                "premise": [pairs[int(i)][0] for i in order[start : start + block_size]],
                "hypothesis": [pairs[int(i)][1] for i in order[start : start + block_size]],
            }
        )
        for start in range(0, len(pairs), block_size)
    ]


class _RayWorker:
    """The ``map_batches`` callable class: one classifier per actor, one block per call."""

    def __init__(
        self,
        spec: str,
        device: str,
        options: Mapping[str, Any],
        factory: ClassifierFactory | None,
        num_cpus: float,
        expected_identity: Mapping[str, Any],
    ) -> None:
        threads = _threads(device, num_cpus, options)
        self.classifier, (_, identity, _) = build_worker_classifier(spec, device, options, factory, threads)
        differ = identity_differences(expected_identity, identity)
        if differ:  # a local model path holding other files on this node, say
            raise DataError(
                f"the classifier built on this node differs from the one the driver probed "
                f"(identity differs in {', '.join(differ)}): give every node the same model files and versions",
                model=spec,
                field=differ[0],
            )

    def __call__(self, block: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        pairs = list(zip(block["premise"].tolist(), block["hypothesis"].tolist(), strict=True))
        probs = np.full((len(pairs), 3), np.nan)
        real = padded = truncated = 0
        error = remote_traceback = ""
        try:
            for batch in self.classifier.predict_batches(pairs):
                probs[batch.indices] = batch.probs
                real += batch.real_tokens
                padded += batch.padded_tokens
                truncated += batch.truncated
        except Exception as failure:
            # returned as data: Ray would keep only its own wrapper's message
            error, remote_traceback = f"{type(failure).__name__}: {failure}", traceback.format_exc()
        # counts ride on the block's first row, so any re-chunking still sums right
        counts = np.zeros((3, len(pairs)), dtype=np.int64)
        if len(pairs):
            counts[:, 0] = real, padded, truncated
        return {
            "index": block["index"],
            **{f"p_{label}": probs[:, i] for i, label in enumerate(LABELS)},
            **dict(zip(_COUNTS, counts, strict=True)),
            "error": np.full(len(pairs), error, dtype=object),
            "traceback": np.full(len(pairs), remote_traceback, dtype=object),
        }


class RayNLIClassifier(WorkerClassifier):
    """An NLI classifier on ``num_workers`` Ray actors (``address=None``: a local Ray, shut down by
    :meth:`close`); cache keys match one process's, results up to float32 rounding."""

    @declared
    def __init__(
        self,
        spec: str,
        num_workers: PositiveInt = 2,
        address: RayAddress | None = None,
        batch_size: PositiveInt = DEFAULT_BATCH_SIZE,
        *,
        num_cpus: NonNegativeFloat = 1.0,
        num_gpus: NonNegativeFloat = 0.0,
        device: Device | None = None,
        factory: ClassifierFactory | None = None,
        **options: Any,
    ) -> None:
        ray = import_ray()
        self._keep(spec, options, factory)
        self.num_workers = num_workers
        self.batch_size = batch_size
        self.num_cpus = num_cpus
        self.num_gpus = num_gpus
        self.device = device or ("cuda" if num_gpus > 0 else "cpu")
        self._started_ray = False
        if not ray.is_initialized():
            settings: dict[str, Any] = {
                "include_dashboard": False,
                "logging_level": logging.WARNING,
                "log_to_driver": True,
            }
            if address is None:
                cores = os.cpu_count() or 1
                settings["num_cpus"] = max(cores, math.ceil(num_workers * num_cpus))
            ray.init(address=address, **settings)
            self._started_ray = True
        self.address = address
        probe = ray.remote(num_cpus=num_cpus, num_gpus=num_gpus, max_retries=0)(_probe)
        try:
            self.name, self._identity, self._describe = ray.get(
                probe.remote(spec, self.device, self.options, factory, num_cpus)
            )
        except Exception as error:
            self.close()
            raise self._worker_error(error) from None

    def describe(self) -> dict[str, Any]:
        return self._described(ray_workers=self.num_workers, ray_address=self.address or "local")

    def predict_batches(self, pairs: Sequence[Pair]) -> Iterator[BatchResult]:
        """Each finished block of ``pairs``, in completion order."""
        if not pairs:
            return
        ray = import_ray()
        tables = _length_sorted_blocks(pairs, self.batch_size, self.num_workers)
        # Ray Data's INFO logs and progress-bar warnings would crowd nlibias' own bar
        data_logger = logging.getLogger("ray.data")
        saved_level = data_logger.level
        data_logger.setLevel(logging.ERROR)
        blocks = self._stream(ray, tables)
        try:
            while True:
                try:
                    block = next(blocks)
                except StopIteration:
                    return
                except Exception as error:
                    raise self._worker_error(error) from None
                yield self._block_result(block)
        finally:
            close = getattr(blocks, "close", None)
            if callable(close):
                close()  # the caller stopped early: stop the execution and its actors
            data_logger.setLevel(saved_level)

    def _stream(self, ray: Any, tables: list[Any]) -> Iterator[dict[str, np.ndarray]]:
        """The finished blocks of ``tables`` as the actor pool returns them."""
        context = ray.data.DataContext.get_current()
        saved = {key: getattr(context, key) for key in _QUIET_CONTEXT}
        for key, value in _QUIET_CONTEXT.items():
            setattr(context, key, value)
        try:
            args = (self.spec, self.device, self.options, self.factory, self.num_cpus, self._identity)
            dataset = ray.data.from_arrow(tables).map_batches(
                _RayWorker,
                fn_constructor_args=args,
                batch_size=None,  # one call per block
                batch_format="numpy",
                compute=ray.data.ActorPoolStrategy(size=self.num_workers),
                num_cpus=self.num_cpus,
                num_gpus=self.num_gpus,
            )
            return iter(dataset.iter_batches(batch_size=None, batch_format="numpy"))
        finally:
            for key, value in saved.items():
                setattr(context, key, value)

    def _block_result(self, block: Mapping[str, np.ndarray]) -> BatchResult:
        if len(block["error"]) and block["error"][0]:
            raise WorkerError(
                f"{self._where()} failed: {block['error'][0]}", remote_traceback=str(block["traceback"][0])
            )
        return BatchResult(
            np.asarray(block["index"], dtype=np.int64),
            np.stack([block[f"p_{label}"] for label in LABELS], axis=1),
            *(int(block[name].sum()) for name in _COUNTS),
        )

    def close(self) -> None:
        """Shut Ray down if this classifier started it (a joined instance is left running)."""
        if self._started_ray:
            import ray

            ray.shutdown()
            self._started_ray = False

    def _where(self) -> str:
        return f"Ray NLI worker (device {self.device!r}, {self.address or 'local Ray'}, {self.spec})"

    def _worker_error(self, error: BaseException) -> WorkerError:
        return WorkerError(
            f"{self._where()} failed: {summarize_ray_error(error)}", remote_traceback=str(error)
        )


_EXCEPTION_LINE = re.compile(r"^([A-Za-z_][\w.]*(?:Error|Exception|Exit|Interrupt)): (.*)$")


def summarize_ray_error(error: BaseException) -> str:
    """``"Type: message"`` of the user exception inside a Ray error (perhaps only its traceback).

    >>> summarize_ray_error(RuntimeError("boom"))
    'RuntimeError: boom'
    """
    cause = getattr(error, "cause", None)
    if isinstance(cause, BaseException) and not type(cause).__module__.startswith("ray"):
        return f"{type(cause).__name__}: {cause}"
    if not type(error).__module__.startswith("ray"):
        return f"{type(error).__name__}: {error}"
    for line in reversed(str(error).splitlines()):
        found = _EXCEPTION_LINE.match(line.strip())
        if found and not found.group(1).startswith("ray."):
            return f"{found.group(1).rsplit('.', 1)[-1]}: {found.group(2)}"
    lines = [line.strip() for line in str(error).splitlines() if line.strip()]
    return f"{type(error).__name__}: {lines[-1] if lines else ''}"
