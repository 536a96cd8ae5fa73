"""Fail fast when the Hugging Face hub cannot be reached and a model is not in the local cache.

Without this, a hub model name on a machine without network (and without ``HF_HUB_OFFLINE=1``)
waits through the libraries' retries and timeouts (about half a minute) before an error. One
short TCP connect to the hub's endpoint (``HF_ENDPOINT``; skipped behind a proxy, whose reach it
cannot judge) tells: unreachable and not cached is refused at once, naming the model; unreachable
but cached loads from the cache without asking the hub (``local_files_only``).

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

PROBE_SECONDS = 3.0
"""How long the connect to the hub may take before it counts as unreachable."""
_PROXY_VARIABLES = ("HTTPS_PROXY", "https_proxy", "HTTP_PROXY", "http_proxy", "ALL_PROXY", "all_proxy")


def hub_address(endpoint: str) -> tuple[str, int]:
    """The host and port of a hub endpoint URL."""
    parts = urlsplit(endpoint)
    return parts.hostname or "", parts.port or (443 if parts.scheme == "https" else 80)


@lru_cache(maxsize=8)
def hub_reachable(endpoint: str, timeout: float = PROBE_SECONDS) -> bool:
    """Whether a TCP connection to ``endpoint`` opens within ``timeout`` seconds (once per process
    and endpoint)."""
    host, port = hub_address(endpoint)
    try:
        with socket.create_connection((host, port), timeout=timeout):
            return True
    except OSError:
        return False


def _is_cached(repo_id: str, revision: str | None) -> bool:
    try:
        from huggingface_hub import try_to_load_from_cache

        return isinstance(try_to_load_from_cache(repo_id, "config.json", revision=revision), str)
    except Exception:  # an id the hub library refuses: let the loader say what is wrong
        return True


def check_hub_model(repo_id: str, revision: str | None, what: str, kwargs: dict[str, Any]) -> None:
    """Before loading the hub model ``repo_id``: refuse it at once when the hub cannot be reached
    and it is not in the local cache; when it is cached, set ``local_files_only`` in ``kwargs`` so
    the loader does not wait for the hub. Nothing happens offline (``HF_HUB_OFFLINE=1``: the
    libraries do not try the network) or behind a proxy."""
    from huggingface_hub import constants

    if constants.HF_HUB_OFFLINE or kwargs.get("local_files_only"):
        return
    if any(os.environ.get(name) for name in _PROXY_VARIABLES):
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
    """The local path of ``filename`` of the hub model ``repo_id``: from the Hugging Face cache,
    else downloaded; None without asking the network for a name that is no hub model (the
    embedded ``smollm2``, a ``.gguf`` path), offline (``HF_HUB_OFFLINE=1``), when the hub cannot
    be reached (one short connect, as :func:`check_hub_model` tries) or it has no such model.
    For what only identifies a model (its commit, its dtype): loading it says why it fails.

    >>> hub_file("smollm2", "config.json") is None   # the embedded SmolLM2: never the hub
    True
    """
    from nlibias.models.generative.sources import is_gguf_name

    if is_gguf_name(repo_id):
        return None
    try:
        from huggingface_hub import constants, hf_hub_download, try_to_load_from_cache

        cached = try_to_load_from_cache(repo_id, filename, revision=revision or "main")
        if isinstance(cached, str):
            return cached
        if constants.HF_HUB_OFFLINE:
            return None
        behind_proxy = any(os.environ.get(name) for name in _PROXY_VARIABLES)
        if not behind_proxy and not hub_reachable(constants.ENDPOINT):
            return None
        return str(hf_hub_download(repo_id, filename, revision=revision))
    except Exception:  # not a hub id, no such model or file, the download failed
        return None
