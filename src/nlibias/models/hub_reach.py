"""Fail fast when the Hugging Face hub cannot be reached (one short TCP connect to ``HF_ENDPOINT``,
skipped behind a proxy) and a model is not cached; a cached model loads without asking the hub.

>>> hub_address("https://huggingface.co"), hub_address("http://127.0.0.1:9/")
(('huggingface.co', 443), ('127.0.0.1', 9))
"""

from __future__ import annotations

import os
import socket
from functools import lru_cache
from typing import Any
from urllib.parse import urlsplit

from nlibias.errors import ConfigError
from nlibias.schema.model_ref import ModelRef

PROBE_SECONDS = 3.0
_PROXY_VARIABLES = ("HTTPS_PROXY", "https_proxy", "HTTP_PROXY", "http_proxy", "ALL_PROXY", "all_proxy")


def hub_address(endpoint: str) -> tuple[str, int]:
    """The host and port of a hub endpoint URL."""
    parts = urlsplit(endpoint)
    return parts.hostname or "", parts.port or (443 if parts.scheme == "https" else 80)


@lru_cache(maxsize=8)
def hub_reachable(endpoint: str, timeout: float = PROBE_SECONDS) -> bool:
    """Whether a TCP connection to ``endpoint`` opens within ``timeout`` seconds (asked once)."""
    host, port = hub_address(endpoint)
    try:
        with socket.create_connection((host, port), timeout=timeout):
            return True
    except OSError:
        return False


def behind_proxy() -> bool:
    """Whether a proxy is set (whose reach a connect cannot judge)."""
    return any(os.environ.get(name) for name in _PROXY_VARIABLES)


def cached_hub_file(repo_id: str, filename: str, revision: str | None = None) -> str | None:
    """The path of ``filename`` of ``repo_id`` in the Hugging Face cache, else None."""
    from huggingface_hub import try_to_load_from_cache  # deferred: it imports httpx

    try:
        found = try_to_load_from_cache(repo_id, filename, revision=revision)
    except Exception:  # an invalid repo id or an old huggingface_hub: not cached
        return None
    return found if isinstance(found, str) else None


def _is_cached(repo_id: str, revision: str | None) -> bool:
    from huggingface_hub import try_to_load_from_cache

    try:
        return isinstance(try_to_load_from_cache(repo_id, "config.json", revision=revision), str)
    except Exception:  # an id the hub library refuses: let the loader say what is wrong
        return True


def check_hub_model(repo_id: str, revision: str | None, what: str, kwargs: dict[str, Any]) -> None:
    """Refuse the hub model ``repo_id`` at once when the hub cannot be reached and it is not cached;
    when cached, set ``local_files_only`` in ``kwargs``. Nothing offline or behind a proxy."""
    from huggingface_hub import constants

    if constants.HF_HUB_OFFLINE or kwargs.get("local_files_only") or behind_proxy():
        return
    if hub_reachable(constants.ENDPOINT):
        return
    if _is_cached(repo_id, revision):
        kwargs["local_files_only"] = True
        return
    raise ConfigError(
        f"cannot load the {what} {repo_id!r}: the Hugging Face hub ({constants.ENDPOINT}) cannot be "
        f"reached and the {what} is not in the local cache ({constants.HF_HUB_CACHE}); download it "
        f"where the network is reachable (`hf download {repo_id}`) and copy the cache, or pass a "
        "local directory written by save_pretrained",
        parameter="name_or_path",
    )


def hub_file(repo_id: str, filename: str, revision: str | None = None) -> str | None:
    """The local path of ``filename`` of the hub model ``repo_id`` (cached, else downloaded); None
    for an embedded or GGUF name (never the hub), offline, or when the hub cannot give it.

    >>> hub_file("smollm2", "config.json") is None   # the embedded SmolLM2: never the hub
    True
    """
    from huggingface_hub import constants, hf_hub_download

    if ModelRef("", repo_id).is_gguf:
        return None
    cached = cached_hub_file(repo_id, filename, revision or "main")
    if cached is not None or constants.HF_HUB_OFFLINE:
        return cached
    if not behind_proxy() and not hub_reachable(constants.ENDPOINT):
        return None
    try:
        return str(hf_hub_download(repo_id, filename, revision=revision))
    except Exception:  # not a hub id, no such model or file, the download failed
        return None
