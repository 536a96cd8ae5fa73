"""What every Hugging Face backend shares: device and dtype choice, pinned revisions (a commit,
or ``sha256:`` of a local model's files: part of its identity), loading.

>>> choose_device("cpu"), dtype_name(choose_dtype("cpu", None))
('cpu', 'float32')
"""

from __future__ import annotations

import hashlib
import re
import warnings
from collections.abc import Callable
from pathlib import Path
from types import SimpleNamespace
from typing import TYPE_CHECKING, Any, TypeVar

from nlibias.errors import ConfigError, DamagedFileError, SourceError
from nlibias.models.base import Identified
from nlibias.models.batching import check_batch_limits
from nlibias.models.hub_reach import cached_hub_file, check_hub_model
from nlibias.models.library_bars import quiet_loading
from nlibias.schema.model_ref import ModelRef
from nlibias.schema.placement import DEVICE_ENV, checked, device_name, env_device

if TYPE_CHECKING:
    import torch

T = TypeVar("T")

#: Files of a local model directory that can change its outputs (README, logs: not hashed).
MODEL_FILE_SUFFIXES = (".json", ".safetensors", ".bin", ".txt", ".model", ".gguf", ".py", ".tiktoken")
#: How a training run went, not what the model computes (not hashed).
TRAINING_RECORDS: frozenset[str] = frozenset({"finetune.json", "training_args.bin", "trainer_state.json"})

_COMMIT = re.compile(r"^[0-9a-f]{40}$")
_HASH_CHUNK = 1 << 20

_DTYPE_NAMES: dict[str, str] = {
    **dict.fromkeys(("float32", "fp32", "float"), "float32"),
    **dict.fromkeys(("bfloat16", "bf16"), "bfloat16"),
    **dict.fromkeys(("float16", "fp16", "half"), "float16"),
    **dict.fromkeys(("float64", "double"), "float64"),  # reference checks against a float64 loop
}
_CHECKPOINT_DTYPES = frozenset(_DTYPE_NAMES.values())


class HFBackend(Identified):
    """What the in-process Hugging Face backends share: their settings checked before loading."""

    max_tokens: int
    max_batch_size: int
    dtype: torch.dtype
    revision: str
    """Pinned: a commit, or ``sha256:`` of a local model's files."""

    def _settle(
        self,
        model_name_or_path: str | Path,
        name: str | None,
        device: str | None,
        dtype: Any,
        threads: int | None,
        max_tokens: int | None,
        max_batch_size: int,
        max_length: int | None = None,
    ) -> None:
        check_batch_limits(max_tokens=max_tokens, max_batch_size=max_batch_size, max_length=max_length)
        self.model_name_or_path = str(model_name_or_path)
        self.name = name or self.model_name_or_path
        self.device = choose_device(device)
        if isinstance(dtype, str):
            dtype_choice(dtype)  # a misspelt dtype is named before anything is read
        set_torch_threads(threads)
        if max_tokens is not None:  # else the backend's default, by device
            self.max_tokens = max_tokens
        self.max_batch_size = max_batch_size

    def _load_checkpoint(
        self,
        auto_class: Any,
        revision: str | None,
        dtype: Any,
        what: str,
        check: Callable[[Any, Any, torch.dtype], None] | None = None,
        **weights_options: Any,
    ) -> tuple[Any, Any, Any]:
        """``(config, tokenizer, weights)``, each file read at the revision the config pins (kept in
        ``revision``, the dtype in ``dtype``); ``check(config, tokenizer, dtype)`` refuses before
        the weights load."""
        from transformers import AutoConfig, AutoTokenizer

        path = self.model_name_or_path
        config = load_pretrained(AutoConfig.from_pretrained, path, revision=revision, what=f"{what} config")
        self.dtype = choose_dtype(self.device, dtype, config)
        self.revision = resolve_revision(SimpleNamespace(config=config), path, revision)
        at = self.revision if is_commit_hash(self.revision) else revision
        tokenizer = load_pretrained(AutoTokenizer.from_pretrained, path, revision=at, what="tokenizer")
        if check is not None:
            check(config, tokenizer, self.dtype)
        options = {**weights_options, **dtype_kwargs(self.dtype)}
        weights = load_pretrained(
            auto_class.from_pretrained, path, revision=at, what=what, config=config, **options
        )
        return config, tokenizer, weights

    def _identify(self, backend: str, version: int, **settings: Any) -> None:
        """The identity every HF backend starts from: the model, its pinned revision, its dtype."""
        self._identity = {
            "backend": backend,
            "backend_version": version,
            "model": model_id(self.model_name_or_path),
            "revision": self.revision,
            "dtype": dtype_name(self.dtype),
            **settings,
        }


def is_local_model(name_or_path: str | Path) -> bool:
    """True when ``name_or_path`` is an existing file or directory (else it is a hub id)."""
    return Path(name_or_path).expanduser().exists()


def model_id(name_or_path: str) -> str:
    """How an identity names a model: a local one by its folder name (its files are hashed in the
    revision, so a cache survives a move), a hub one by its id."""
    return Path(name_or_path).resolve().name if is_local_model(name_or_path) else name_or_path


def is_commit_hash(revision: str | None) -> bool:
    """True for a full 40-character git commit hash (an immutable hub revision).

    >>> is_commit_hash("main"), is_commit_hash("0123456789abcdef0123456789abcdef01234567")
    (False, True)
    """
    return revision is not None and _COMMIT.match(revision) is not None


def choose_device(device: str | None = None) -> str:
    """``device`` if given (checked), else ``$NLIBIAS_DEVICE`` if set (checked, a refusal naming
    the variable), else ``cuda`` when available, else ``cpu``.

    >>> choose_device("cpu")
    'cpu'
    """
    import torch

    if device is None or checked(device_name, device, "device") == "auto":
        forced = env_device()
        if forced is not None:
            return _present_device(forced, DEVICE_ENV)
        return "cuda" if torch.cuda.is_available() else "cpu"
    return _present_device(device, "device")


def _present_device(device: str, parameter: str) -> str:
    """``device`` (held to the device rule) if torch has it; refused naming ``parameter`` (the
    keyword, or the environment variable the value came from)."""
    import torch

    kind = device.split(":")[0]
    problem = None
    if kind == "cuda" and not torch.cuda.is_available():
        problem = "sees no CUDA GPU (install a CUDA build of torch, or"
    elif kind == "mps" and not torch.backends.mps.is_available():
        problem = "reports MPS unavailable ("
    if problem is not None:
        cpu = "pass device='cpu'" if parameter == "device" else f"set {{{parameter}}} to cpu or unset it"
        message = f"{{{parameter}}} {device!r} was asked for but torch {problem} {cpu})"
        raise ConfigError(message, parameter=parameter)
    return device


def choose_dtype(device: str, dtype: str | torch.dtype | None = None, config: Any = None) -> torch.dtype:
    """The weights' dtype: ``dtype`` if given, else the checkpoint's own (:func:`checkpoint_dtype`),
    on every ``device``: a GPU gives the CPU's numbers unless a reduced precision is asked for.

    >>> choose_dtype("cpu", "bf16"), choose_dtype("cuda", None)
    (torch.bfloat16, torch.float32)
    """
    import torch

    if isinstance(dtype, torch.dtype):
        return dtype
    name = dtype_choice(dtype)
    return getattr(torch, name if name is not None else checkpoint_dtype(config))


def checkpoint_dtype(config: Any) -> str:
    """The dtype a checkpoint's configuration records (``dtype``, or ``torch_dtype`` before
    transformers 4.56), ``"float32"`` when none or an unknown one.

    >>> class Old: torch_dtype = "float16"
    >>> checkpoint_dtype(Old()), checkpoint_dtype(None), checkpoint_dtype({"dtype": "bfloat16"})
    ('float16', 'float32', 'bfloat16')
    """
    for key in ("dtype", "torch_dtype"):
        value = config.get(key) if isinstance(config, dict) else getattr(config, key, None)
        name = str(value).removeprefix("torch.") if value is not None else ""
        if name in _CHECKPOINT_DTYPES:
            return name
    return "float32"


def dtype_choice(dtype: str | None) -> str | None:
    """The torch dtype name ``dtype`` asks for, None for the checkpoint's own (None or ``auto``).

    >>> dtype_choice("bf16"), dtype_choice("auto")
    ('bfloat16', None)
    """
    if dtype is None or dtype.lower() == "auto":
        return None
    name = _DTYPE_NAMES.get(dtype.lower())
    if name is None:
        raise ConfigError(
            f"unknown dtype {dtype!r} (use auto, float32, bfloat16 or float16)", parameter="dtype"
        )
    return name


def dtype_name(dtype: torch.dtype) -> str:
    """``torch.bfloat16`` → ``"bfloat16"`` (the form recorded in identities and results)."""
    return str(dtype).removeprefix("torch.")


def local_model_files(path: str | Path) -> list[Path]:
    """``path`` if it is a file, else its top-level model files (:data:`MODEL_FILE_SUFFIXES`) by name."""
    root = Path(path).expanduser()
    if root.is_file():
        return [root]
    found = [p for p in root.iterdir() if p.is_file() and p.suffix in MODEL_FILE_SUFFIXES]
    return sorted((p for p in found if p.name not in TRAINING_RECORDS), key=lambda p: p.name)


def hash_local_model(path: str | Path) -> str:
    """``sha256:<hex>`` over the names, sizes and contents of :func:`local_model_files`, streamed."""
    files = local_model_files(path)
    if not files:
        raise SourceError(
            path,
            None,
            "no model files found (expected config.json, weights and tokenizer files written by save_pretrained)",
        )
    digest = hashlib.sha256()
    for file in files:
        digest.update(f"{file.name}\0{file.stat().st_size}\0".encode())
        with file.open("rb") as handle:
            while chunk := handle.read(_HASH_CHUNK):
                digest.update(chunk)
    return f"sha256:{digest.hexdigest()}"


def resolve_revision(model: Any, name_or_path: str | Path, revision: str | None = None) -> str:
    """The pinned revision of a loaded model: a local path's :func:`hash_local_model`; a hub
    model's commit (asked for, ``config._commit_hash``, or its cached snapshot), else the branch
    or tag asked for (``main``), which is not pinned."""
    if is_local_model(name_or_path):
        return hash_local_model(name_or_path)
    if is_commit_hash(revision):
        return str(revision)
    commit = getattr(getattr(model, "config", None), "_commit_hash", None)
    if isinstance(commit, str) and is_commit_hash(commit):
        return commit
    found = cached_hub_file(str(name_or_path), "config.json", revision)  # in a folder named by the commit
    snapshot = Path(found).parent.name if found is not None else None
    return snapshot if snapshot is not None and is_commit_hash(snapshot) else revision or "main"


def dtype_kwargs(dtype: torch.dtype) -> dict[str, Any]:
    """``{"dtype": ...}`` for transformers ≥ 4.56, ``{"torch_dtype": ...}`` before."""
    import transformers

    major, minor = (int(part) for part in transformers.__version__.split(".")[:2])
    return {"dtype": dtype} if (major, minor) >= (4, 56) else {"torch_dtype": dtype}


def load_pretrained(
    loader: Callable[..., T],
    name_or_path: str | Path,
    *,
    revision: str | None = None,
    what: str = "model",
    **kwargs: Any,
) -> T:
    """``loader(name_or_path, ...)`` (e.g. ``AutoTokenizer.from_pretrained``): a local path with
    ``local_files_only``, a hub id at ``revision``; a failure is a ConfigError saying what to do."""
    local = is_local_model(name_or_path)
    source = str(Path(name_or_path).expanduser()) if local else str(name_or_path)
    refusal = (
        f"{name_or_path} is a local path; revision applies to hub models only (a local model is "
        "identified by the hash of its files)"
        if local and revision is not None
        else f"cannot load the {what} {source!r}: no such file or directory (a local model is a "
        "directory written by save_pretrained; a hub id looks like ORG/NAME)"
        if not local
        and ModelRef.unread(source).local_path is not None  # no hub id: the hub's refusal says nothing
        else None
    )
    if refusal is not None:
        raise ConfigError(refusal, parameter="revision" if local else "name_or_path")
    if local:
        kwargs["local_files_only"] = True
    else:
        if revision is not None:
            kwargs["revision"] = revision
        check_hub_model(source, revision, what, kwargs)  # unreachable and not cached: refused at once
    try:
        with quiet_loading():
            return loader(source, **kwargs)
    except (OSError, ValueError) as err:
        if local:
            fix = "check that the directory was written by save_pretrained and holds config.json"
        else:
            fix = (
                "use a local directory, or make sure the hub id is right and the model is in the "
                "Hugging Face cache (download it where the network is reachable: "
                f"`hf download {source}`) or that the hub is reachable (HF_HUB_OFFLINE unset)"
            )
        raise ConfigError(
            f"cannot load the {what} {source!r}: {err} ({fix})", parameter="name_or_path"
        ) from err
    except Exception as err:  # safetensors' own error type: a weights file damaged or cut short
        if type(err).__name__ != "SafetensorError":
            raise
        weights = sorted(Path(source).glob("*.safetensors")) if local else []
        raise DamagedFileError(
            weights[0] if len(weights) == 1 else source,
            f"the weights of the {what} cannot be read ({err}); the file is damaged or truncated",
            fix="copy or save the model again (an interrupted copy or a full disk leaves a short file)",
        ) from err


# --- optional speed settings: threads, int8 dynamic quantization, torch.compile -----------------

#: ``quantize`` values accepted by the backends that offer it.
QUANTIZE_MODES: tuple[str, ...] = ("int8",)


def set_torch_threads(threads: int | None) -> None:
    """``torch.set_num_threads(threads)`` (process-wide, checked); ``None`` keeps one per core."""
    if threads is None:
        return
    check_batch_limits(threads=threads)
    import torch

    torch.set_num_threads(threads)


def check_speed_values(
    *,
    quantize: str | None = None,
    compile: bool = False,
    threads: int | None = None,
    device: str | None = None,
    dtype: torch.dtype | None = None,
) -> None:
    """Refuse bad ``quantize``/``compile``/``threads`` values, and (given ``device`` and
    ``dtype``) a ``quantize`` the other settings cannot work with, before anything loads."""
    check_batch_limits(threads=threads)
    kind = (device or "cpu").split(":")[0]
    problem, parameter = None, "compile" if compile else "quantize"
    if quantize is not None and quantize not in QUANTIZE_MODES:
        problem = f"{{quantize}} is {quantize!r}; give {' or '.join(QUANTIZE_MODES)}, or leave it unset"
        parameter = "quantize"
    elif not isinstance(compile, bool):
        problem = f"{{compile}} is {compile!r}; pass True or False"
    elif quantize is None or device is None:
        pass
    elif compile:  # dynamo cannot trace the int8 Linear's packed weights (measured: a graph break each)
        problem = (
            f"{{quantize}} {quantize!r} and {{compile}} cannot be combined (torch.compile cannot trace the int8 "
            "Linear layers: one graph break per layer, long compilation, no gain); choose one"
        )
    elif kind != "cpu":
        problem = (
            f"{{quantize}} {quantize!r} runs on CPU only (torch's dynamic int8 kernels have no {kind.upper()} "
            "version; on a GPU, bf16 is the fast setting): use {device} cpu, or drop {quantize}"
        )
    elif dtype is not None and dtype_name(dtype) != "float32":
        problem = (
            f"{{quantize}} {quantize!r} quantizes float32 weights; {{dtype}} {dtype_name(dtype)} was asked for "
            "(drop {dtype}, or drop {quantize})"
        )
    if problem is not None:
        raise ConfigError(problem, parameter=parameter, names=("quantize", "compile", "device", "dtype"))


def quantize_int8_dynamic(model: Any) -> Any:
    """The model with every ``nn.Linear`` int8 dynamic-quantized (outputs change slightly: measure
    label agreement first). torch's deprecation warnings of ``torch.ao`` are silenced."""
    import torch

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        warnings.simplefilter("ignore", UserWarning)
        return torch.ao.quantization.quantize_dynamic(model, {torch.nn.Linear}, dtype=torch.qint8)


#: What :func:`compile_model` passes to ``torch.compile``: one graph for every batch shape, measured
#: best on BERT-base (docs/benchmarks.md, "Optional speed flags").
COMPILE_SETTINGS: dict[str, Any] = {"dynamic": True}


def compile_model(model: Any) -> Any:
    """``torch.compile`` with :data:`COMPILE_SETTINGS` (compiled on the first forward pass)."""
    import torch

    return torch.compile(model, **COMPILE_SETTINGS)
