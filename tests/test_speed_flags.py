"""Optional speed flags of the NLI backend: int8 dynamic quantization, torch.compile, threads.

Each flag that changes outputs must change the identity (no shared cache entries), while the
default identity stays exactly as before (existing caches stay valid).
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from nlibias.cli.main import app
from nlibias.errors import ConfigError
from nlibias.models import hf_common
from nlibias.models.hf_common import check_speed_values, set_torch_threads
from nlibias.models.nli.hf import HFNLIClassifier
from nlibias.runtime.build import build_predictors
from nlibias.runtime.cache import PredictionCache, identity_fingerprint
from nlibias.runtime.classifier import predict_pairs
from nlibias.runtime.model_set import ModelSet
from nlibias.runtime.options import ModelOptions

#: The default identity's keys, exactly: a new key here would invalidate every existing cache.
DEFAULT_IDENTITY_KEYS = {
    "backend",
    "backend_version",
    "model",
    "revision",
    "dtype",
    "max_length",
    "truncation",
    "label_order",
}


pytestmark = pytest.mark.usefixtures("one_torch_thread")


@pytest.fixture(scope="module")
def pairs(bbnli_corpus: list[str]) -> list[tuple[str, str]]:
    """40 BBNLI-like pairs of varied lengths."""
    premises = [text for text in bbnli_corpus if len(text) > 120]
    hypotheses = [text for text in bbnli_corpus if len(text) <= 120]
    return [(premises[i % len(premises)], hypotheses[(5 * i) % len(hypotheses)]) for i in range(40)]


@pytest.fixture(scope="module")
def fp32(tiny_nli_dir: Path) -> HFNLIClassifier:
    return HFNLIClassifier(tiny_nli_dir, max_batch_size=8)


@pytest.fixture(scope="module")
def int8(tiny_nli_dir: Path) -> HFNLIClassifier:
    return HFNLIClassifier(tiny_nli_dir, max_batch_size=8, quantize="int8")


def test_default_identity_and_description_are_unchanged(fp32: HFNLIClassifier) -> None:
    assert set(fp32.identity()) == DEFAULT_IDENTITY_KEYS
    assert not {"quantize", "compile", "torch_threads"} & set(fp32.describe())


def test_int8_probabilities_and_own_identity(
    fp32: HFNLIClassifier, int8: HFNLIClassifier, pairs: list[tuple[str, str]], tmp_path: Path
) -> None:
    import torch

    # Every Linear layer was replaced (the quantized module is not an nn.Linear subclass): 2 layers
    # x (query, key, value, attention output, intermediate, output) + pooler + classifier = 14.
    assert sum(isinstance(m, torch.nn.Linear) for m in fp32.model.modules()) == 14
    assert not any(isinstance(m, torch.nn.Linear) for m in int8.model.modules())
    assert sum(isinstance(m, torch.ao.nn.quantized.dynamic.Linear) for m in int8.model.modules()) == 14

    reference = predict_pairs(fp32, pairs).probs
    quantized = predict_pairs(int8, pairs).probs
    assert quantized.shape == (len(pairs), 3)
    np.testing.assert_allclose(quantized.sum(axis=1), 1.0, atol=1e-6)
    # Not equal to fp32: int8 weights round every Linear output. (How far they move says little
    # here: this tiny model's weights are drawn with a large std, so its logits are large.)
    assert np.abs(quantized - reference).max() > 1e-4

    assert int8.identity() == {
        **fp32.identity(),
        "quantize": "int8-dynamic-linear",
        "quantized_engine": torch.backends.quantized.engine,
    }
    assert identity_fingerprint(int8.identity()) != identity_fingerprint(fp32.identity())
    assert int8.describe()["quantize"] == "int8-dynamic-linear"

    # A cache filled by the fp32 model gives the int8 model nothing: it computes every pair.
    cache = PredictionCache(tmp_path / "cache.sqlite")
    predict_pairs(fp32, pairs, cache=cache)
    before = int8.pairs_computed
    again = predict_pairs(int8, pairs, cache=cache)
    assert int8.pairs_computed - before == len(pairs)
    np.testing.assert_allclose(again.probs, quantized, atol=1e-6)


@pytest.mark.slow  # compilation takes ~20-40 s here
def test_compile_matches_eager(
    tiny_nli_dir: Path, fp32: HFNLIClassifier, pairs: list[tuple[str, str]]
) -> None:
    started = time.perf_counter()
    compiled = HFNLIClassifier(tiny_nli_dir, max_batch_size=8, compile=True)
    probs = predict_pairs(compiled, pairs).probs
    print(f"compile + first run: {time.perf_counter() - started:.1f} s")
    np.testing.assert_allclose(probs, predict_pairs(fp32, pairs).probs, atol=1e-4)
    assert compiled.identity() == {**fp32.identity(), "compile": True}
    assert compiled.describe()["compile"] is True


def test_quantize_on_a_gpu_is_refused_before_loading(
    tiny_nli_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(hf_common, "choose_device", lambda device: "cuda:0")  # no GPU needed
    with pytest.raises(ConfigError, match=r"quantize 'int8' runs on CPU only .*CUDA"):
        HFNLIClassifier(tiny_nli_dir, dtype="float32", quantize="int8")


def test_quantize_needs_float32_weights(tiny_nli_dir: Path) -> None:
    with pytest.raises(ConfigError, match=r"quantize 'int8' quantizes float32 weights; dtype bfloat16"):
        HFNLIClassifier(tiny_nli_dir, dtype="bf16", quantize="int8")


def test_threads_sets_torch_threads(tiny_nli_dir: Path) -> None:
    import torch

    wanted = 2 if torch.get_num_threads() == 1 else 1
    clf = HFNLIClassifier(tiny_nli_dir, threads=wanted)
    assert torch.get_num_threads() == wanted
    assert clf.describe()["torch_threads"] == wanted
    assert set(clf.identity()) == DEFAULT_IDENTITY_KEYS  # threads change speed, not outputs


@pytest.mark.parametrize(
    ("options", "named"),
    [
        ({"quantize": "int4"}, "quantize is 'int4'; give int8, or leave it unset"),
        ({"quantize": "INT8"}, "quantize is 'INT8'; give int8"),
        ({"threads": 0}, "threads is 0; give a positive number of threads"),
        ({"threads": -2}, "threads is -2; give a positive number of threads"),
        ({"compile": "yes"}, "compile is 'yes'; pass True or False"),
        ({"quantize": "int8", "compile": True}, "quantize 'int8' and compile cannot be combined"),
    ],
)
def test_bad_values_name_the_option(tiny_nli_dir: Path, options: dict, named: str) -> None:
    with pytest.raises(ConfigError) as caught:
        HFNLIClassifier(tiny_nli_dir, **options)
    assert named in str(caught.value)


def test_checks_without_a_model() -> None:
    import torch

    check_speed_values(quantize="int8", compile=True, threads=3)  # valid: no error
    check_speed_values(device="cpu", dtype=torch.float32, quantize="int8", compile=False)
    check_speed_values(device="cpu:0", dtype=torch.float32, quantize="int8", compile=False)
    check_speed_values(device="cpu", dtype=torch.float32, quantize=None, compile=True)
    with pytest.raises(ConfigError, match="runs on CPU only"):
        check_speed_values(device="mps", dtype=torch.float32, quantize="int8", compile=False)
    with pytest.raises(ConfigError, match="threads is True; give a positive number of threads"):
        set_torch_threads(True)  # type: ignore[arg-type]  # a bool is not a thread count


def test_build_predictors_passes_the_flags(tiny_nli_dir: Path) -> None:
    import torch

    wanted = 2 if torch.get_num_threads() == 1 else 1
    [predictor] = build_predictors([str(tiny_nli_dir)], options=ModelOptions(quantize="int8", threads=wanted))
    assert predictor.describe()["quantize"] == "int8-dynamic-linear"
    assert torch.get_num_threads() == wanted
    # The fake backend takes none of these options; unset ones are not passed to any backend.
    [fake] = build_predictors(["fake:x"])
    assert fake.name == "x"
    with pytest.raises(ConfigError, match="quantize applies to NLI classifiers that load their weights here"):
        build_predictors(ModelSet.of([], generative=["smollm2"]), options=ModelOptions(quantize="int8"))


@pytest.fixture()
def samples_file(tmp_path: Path) -> Path:
    row = {
        "id": "t",
        "domain": "gender",
        "subtopic": "t1",
        "premise": "P.",
        "hypothesis": "T.",
        "gold": "entailment",
        "stereotype": None,
        "pair_key": None,
    }
    path = tmp_path / "samples.jsonl"
    path.write_text(json.dumps(row) + "\n")
    return path


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        (["--quantize", "int4"], "--quantize is 'int4'; give int8, or leave it unset"),
        (["--threads", "0"], "--threads is 0; give a positive number of threads"),
    ],
)
def test_cli_refuses_bad_flags(samples_file: Path, tmp_path: Path, flags: list[str], message: str) -> None:
    result = CliRunner().invoke(
        app,
        [
            "audit",
            "--samples",
            str(samples_file),
            "--model",
            "fake:x",
            "--out",
            str(tmp_path / "run"),
            "--no-cache",
            *flags,
        ],
    )
    assert result.exit_code != 0
    assert message in str(result.exception) + result.output  # `nlibias` prints it without a traceback
    assert not (tmp_path / "run" / "predictions.jsonl").exists()
