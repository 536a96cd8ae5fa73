"""A hub model name on a machine that cannot reach the hub fails fast (issue #39): without
HF_HUB_OFFLINE, the libraries retry for about 25-30 s before an error; nlibias checks the local
cache and one short connect first and says what is wrong at once."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

_PROBE = """
import json, time
import transformers  # imported before the clock starts: only the loading is timed
from transformers import AutoConfig
from nlibias.errors import ConfigError
from nlibias.models.hf_common import load_pretrained
started = time.perf_counter()
try:
    load_pretrained(AutoConfig.from_pretrained, "nlibias-test/never-cached-model")
    outcome = "loaded"
except ConfigError as error:
    outcome = str(error)
print(json.dumps({"seconds": time.perf_counter() - started, "message": outcome}))
"""


def test_an_unreachable_hub_and_an_uncached_model_fail_in_seconds(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k not in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE")}
    env = {k: v for k, v in env.items() if "proxy" not in k.lower()}
    env.update(HF_ENDPOINT="http://127.0.0.1:9", HF_HOME=str(tmp_path / "hf"))  # port 9: nothing listens
    done = subprocess.run(
        [sys.executable, "-c", _PROBE], env=env, capture_output=True, text=True, timeout=300, check=False
    )
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout.strip().splitlines()[-1])
    assert result["seconds"] < 5, result
    assert "'nlibias-test/never-cached-model'" in result["message"]
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
