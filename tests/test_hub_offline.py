"""A hub model name on a machine that cannot reach the hub fails fast (issue #39): without
HF_HUB_OFFLINE, the libraries retry for about 25-30 s before an error; nlibias checks the local
cache and one short connect first and says what is wrong at once."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import skip_without_smollm2

_PROBE = """
import json, time
import transformers  # imported before the clock starts: only the loading is timed
from transformers import AutoConfig
from nlibias.errors import ConfigError
from nlibias.models.generative.backend import build_backend
from nlibias.models.hf_common import load_pretrained
started = time.perf_counter()
try:
    {load}
    outcome = "loaded"
except ConfigError as error:
    outcome = str(error)
print(json.dumps({{"seconds": time.perf_counter() - started, "message": outcome}}))
"""


@pytest.mark.parametrize(
    ("load", "name"),
    [
        (
            'load_pretrained(AutoConfig.from_pretrained, "nlibias-test/never-cached-model")',
            "nlibias-test/never-cached-model",
        ),
        # a generative LM (audit --generative, an LM judge, a causal fill) loaded the hub's way of
        # its own and waited through the libraries' retries (48 s measured) before its error
        ('build_backend("nlibias-test/never-cached-lm").load()', "nlibias-test/never-cached-lm"),
    ],
)
def test_an_unreachable_hub_and_an_uncached_model_fail_in_seconds(
    tmp_path: Path, load: str, name: str
) -> None:
    env = {k: v for k, v in os.environ.items() if k not in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE")}
    env = {k: v for k, v in env.items() if "proxy" not in k.lower()}
    env.update(HF_ENDPOINT="http://127.0.0.1:9", HF_HOME=str(tmp_path / "hf"))  # port 9: nothing listens
    done = subprocess.run(
        [sys.executable, "-c", _PROBE.format(load=load)],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout.strip().splitlines()[-1])
    assert result["seconds"] < 5, result
    assert f"'{name}'" in result["message"]
    assert "not in the local cache" in result["message"] and "cannot be reached" in result["message"]


def test_a_cached_model_loads_without_asking_an_unreachable_hub(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    from huggingface_hub import constants

    from nlibias.models import hub_reach

    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", False)
    monkeypatch.setattr(hub_reach, "hub_reachable", lambda endpoint: False)
    monkeypatch.setattr(hub_reach, "_is_cached", lambda repo, revision: True)
    for name in hub_reach._PROXY_VARIABLES:
        monkeypatch.delenv(name, raising=False)
    kwargs: dict = {}
    hub_reach.check_hub_model("org/model", None, "model", kwargs)
    assert kwargs == {"local_files_only": True}


def _block_the_network(monkeypatch) -> list[object]:  # type: ignore[no-untyped-def]
    """Every socket connect fails and is recorded; no offline variable is set."""
    import socket

    from huggingface_hub import constants

    attempts: list[object] = []

    def blocked(*args: object, **kwargs: object) -> None:
        attempts.append(args)
        raise OSError("the network is blocked in this test")

    monkeypatch.setattr(socket.socket, "connect", blocked)
    monkeypatch.setattr(socket, "create_connection", blocked)
    for name in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", False)
    return attempts


def test_the_embedded_model_names_never_reach_the_hub(monkeypatch, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """The fill and filter fingerprints of `extend --fill-model smollm2 --filter-model
    prompt:smollm2` asked the hub for smollm2/config.json (minutes of retries offline)."""
    from types import SimpleNamespace

    from nlibias.extension.stages import SPECS, model_files, resolved_dtype
    from nlibias.io.stages import model_identity
    from nlibias.jobs.extend import extend_config
    from nlibias.models.generative.sources import local_source

    skip_without_smollm2()
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf"))  # nothing cached
    attempts = _block_the_network(monkeypatch)
    weights = local_source("smollm2").fingerprint()["weights"]
    for model in ("smollm2", "prompt:smollm2", "causal:smollm2"):
        identity = model_identity(model)
        assert identity == {"name": model, "kind": "local", "revision": None, "files_sha256": weights}
        assert model_files(model, None) == weights
    assert resolved_dtype(None, None, ["smollm2", "prompt:smollm2"]) == "float32"
    # the fill and filter stages' settings, as `extend --fill-model smollm2 --filter-model
    # prompt:smollm2` computes them before either stage runs
    run = SimpleNamespace(config=extend_config(fill_model="smollm2", classifiers=["prompt:smollm2"]))
    assert SPECS["fill"].settings(run)["mlm.files"] == weights  # type: ignore[arg-type]
    assert [m["files"] for m in SPECS["filter"].settings(run)["filter.models"]] == [weights]  # type: ignore[arg-type]
    assert attempts == []


def test_hub_lookups_honour_hf_hub_offline_and_an_unreachable_hub(monkeypatch, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """A hub name not in the cache: offline, no connect at all; online but unreachable, one short
    connect (the probe) and no download's retries; either way no commit and no dtype."""
    from huggingface_hub import constants

    from nlibias.extension.stages import resolved_dtype
    from nlibias.io.stages import model_identity
    from nlibias.models import hub_reach

    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf"))
    monkeypatch.setattr(constants, "HF_HUB_CACHE", str(tmp_path / "hf" / "hub"))
    attempts = _block_the_network(monkeypatch)
    for name in hub_reach._PROXY_VARIABLES:
        monkeypatch.delenv(name, raising=False)
    downloads: list[str] = []
    monkeypatch.setattr("huggingface_hub.hf_hub_download", lambda repo, *a, **k: downloads.append(repo))
    hub_reach.hub_reachable.cache_clear()
    models = ("org/model", "prompt:org/model", "judge:org/model")  # fill, filter, LM judge
    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", True)
    for model in models:
        assert model_identity(model)["revision"] is None
        assert resolved_dtype(None, None, [model]) == "auto"
    assert attempts == []
    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", False)
    for model in models:
        assert model_identity(model)["revision"] is None
        assert resolved_dtype(None, None, [model]) == "auto"
    assert len(attempts) == 1 and downloads == []  # one probe, remembered for the process
    hub_reach.hub_reachable.cache_clear()
