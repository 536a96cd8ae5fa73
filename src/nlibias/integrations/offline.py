"""What the other tools need offline: Inspect's token count without tiktoken's download
(:func:`use_offline_token_count`, as :data:`TOKEN_COUNT_ENV` says), and the local directory of an
nlibias model spec (``python -m nlibias.integrations.offline [SPEC]``); docs/integrations.md.

>>> estimate_tokens(""), estimate_tokens("Is the hypothesis true?")
(1, 8)
"""

from __future__ import annotations

import logging
import math
import os
import sys
from pathlib import Path
from typing import Any

from nlibias.errors import ConfigError, NlibiasError
from nlibias.models.generative.backend import build_backend
from nlibias.models.generative.hf_causal import HFCausalLM
from nlibias.schema.model_ref import ModelRef

TOKEN_COUNT_ENV = "NLIBIAS_INSPECT_TOKEN_COUNT"
"""``auto`` (default), ``estimate`` or ``tiktoken``: how Inspect counts tokens once nlibias' tasks load."""

TOKEN_COUNT_MODES = ("auto", "estimate", "tiktoken")

_log = logging.getLogger(__name__)
_encoding: Any = None  # None: not tried yet; False: tiktoken's encoding could not be had


def estimate_tokens(text: str) -> int:
    """One token per 3 characters, rounded up (at least 1): BPE averages about 4 on English text,
    so this overcounts, as Inspect prefers."""
    return max(1, math.ceil(len(text) / 3))


def _tiktoken_encoding() -> Any:
    global _encoding
    if _encoding is None:
        try:
            import tiktoken

            _encoding = tiktoken.get_encoding("o200k_base")
        except Exception as exc:  # no network, no cache, no tiktoken: all mean "estimate"
            _log.warning("tiktoken's o200k_base is not available (%s); token counts are estimated", exc)
            _encoding = False
    return _encoding


def _auto_count(text: str) -> int:
    encoding = _tiktoken_encoding()
    if encoding is False:
        return estimate_tokens(text)
    return max(1, int(len(encoding.encode(text, disallowed_special=())) * 1.1))  # as Inspect counts


def token_count_mode(mode: str | None = None) -> str:
    """``mode``, else the environment's :data:`TOKEN_COUNT_ENV`, else ``auto``; checked."""
    chosen = (mode if mode is not None else os.environ.get(TOKEN_COUNT_ENV) or "auto").strip().lower()
    if chosen not in TOKEN_COUNT_MODES:
        raise ConfigError(
            f"token count mode {chosen!r} (from {TOKEN_COUNT_ENV}) is not one of {', '.join(TOKEN_COUNT_MODES)}",
            parameter="mode",
        )
    return chosen


def use_offline_token_count(mode: str | None = None) -> str:
    """Make Inspect's token count work offline as ``mode`` says (:func:`token_count_mode`);
    returns the mode in effect. Idempotent."""
    chosen = token_count_mode(mode)
    from inspect_ai.model import _model, _tokens

    original = getattr(_tokens, "_nlibias_original_count", None) or _tokens.count_text_tokens
    _tokens._nlibias_original_count = original  # type: ignore[attr-defined]
    counter = {"auto": _auto_count, "estimate": estimate_tokens, "tiktoken": original}[chosen]
    _tokens.count_text_tokens = counter
    _model.count_text_tokens = counter  # imported by name there
    return chosen


def local_causal_lm(spec: str, **options: Any) -> Any:
    """The backend of a local causal LM spec (``smollm2``, ``hf:PATH``, a directory) built with
    ``options``; a server or another kind of model is refused."""
    ref = ModelRef.unread(spec)  # another kind of model is refused before it loads
    ref.check_role("generative", parameter="model", fix="name a causal LM: smollm2, hf:PATH or a directory")
    # a server is refused as not a local causal LM, not for an option it does not take
    backend = None if ref.is_server else build_backend(spec, **options)
    if not isinstance(backend, HFCausalLM):
        raise ConfigError(
            f"model {spec!r} is not a local causal LM (smollm2, hf:PATH or a directory)", parameter="model"
        )
    return backend


def local_model_dir(spec: str = "smollm2", **options: Any) -> Path:
    """The Hugging Face directory of the local causal LM ``spec`` (:func:`model_dir`)."""
    location = Path(model_dir(local_causal_lm(spec, **options)))
    if not location.is_dir():
        raise ConfigError(f"model {spec!r} is not a local directory ({location})", parameter="spec")
    return location


def model_dir(backend: Any) -> str:
    """Where a local causal LM loads from: a GGUF model's dequantised copy (written if missing),
    else its own name or directory."""
    converted = backend._converted_dir()
    if converted is None:
        return str(backend.source.name_or_path)
    if not (converted / "model.safetensors").is_file():
        backend.load()  # writes the dequantised copy on first load
    if not (converted / "model.safetensors").is_file():
        raise ConfigError(
            f"the dequantised copy of {backend.name!r} could not be written to {converted}", parameter="spec"
        )
    return str(converted)


def main(argv: list[str] | None = None) -> int:
    """``python -m nlibias.integrations.offline [SPEC]``: print the model's local directory."""
    args = sys.argv[1:] if argv is None else argv
    try:
        print(local_model_dir(args[0] if args else "smollm2", device="cpu"))
    except NlibiasError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":  # pragma: no cover - exercised through a subprocess in the tests
    raise SystemExit(main())
