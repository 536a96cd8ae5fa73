"""The dtype default: ``auto`` (and None) is the checkpoint's own dtype, on every device.

Like transformers' ``dtype="auto"``: the dtype the model's configuration records (float32 when it
records none), never a choice made by the device, so an audit on a GPU gives the CPU's numbers
unless a reduced precision is asked for or the checkpoint is stored in one. A run that used a
reduced precision says so in the report's caveats.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from nlibias.runtime.model_set import ModelSet
from nlibias.runtime.options import ModelOptions, RunOptions

torch = pytest.importorskip("torch")


def _resaved(source: Path, target: Path, loader: str, dtype: torch.dtype) -> Path:
    """``source``'s model and tokenizer saved again with its weights in ``dtype`` (so its config
    records that dtype, as a checkpoint stored in it does)."""
    import transformers
    from transformers import AutoTokenizer

    from nlibias.testing.tiny_models import save_model

    model = getattr(transformers, loader).from_pretrained(source).to(dtype)
    save_model(model, AutoTokenizer.from_pretrained(source), target)
    return target


@pytest.fixture(scope="module")
def bf16_nli_dir(tiny_nli_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = _resaved(
        tiny_nli_dir,
        tmp_path_factory.mktemp("bf16-nli"),
        "AutoModelForSequenceClassification",
        torch.bfloat16,
    )
    assert json.loads((path / "config.json").read_text())["dtype"] == "bfloat16"
    return path


def test_choose_dtype_reads_the_checkpoint_not_the_device() -> None:
    from nlibias.models.hf_common import checkpoint_dtype, choose_dtype

    class New:  # transformers >= 4.56 records ``dtype``
        dtype = torch.bfloat16

    class Old:  # older ones ``torch_dtype``, as a string
        torch_dtype = "float16"

    for device in ("cpu", "cuda", "cuda:1", "mps"):  # the device changes nothing
        assert choose_dtype(device, None, New()) == torch.bfloat16
        assert choose_dtype(device, "auto", Old()) == torch.float16
        assert choose_dtype(device, None, None) == torch.float32  # no config: float32
        assert choose_dtype(device, "float32", New()) == torch.float32  # asked for: wins
        assert choose_dtype(device, "bf16", None) == torch.bfloat16
    assert checkpoint_dtype({"dtype": "int8"}) == "float32"  # not a weights dtype: float32
    assert checkpoint_dtype({}) == "float32"


def test_a_bf16_checkpoint_loads_in_bf16_and_a_float32_one_in_float32(
    tiny_nli_dir: Path, bf16_nli_dir: Path
) -> None:
    from nlibias.models.nli.hf import HFNLIClassifier

    bf16 = HFNLIClassifier(bf16_nli_dir, device="cpu")
    fp32 = HFNLIClassifier(tiny_nli_dir, device="cpu", dtype="auto")
    assert next(bf16.model.parameters()).dtype == torch.bfloat16
    assert bf16.identity()["dtype"] == bf16.describe()["dtype"] == "bfloat16"
    assert next(fp32.model.parameters()).dtype == torch.float32
    assert fp32.identity()["dtype"] == fp32.describe()["dtype"] == "float32"
    # asked for by name, the dtype wins over the checkpoint's
    forced = HFNLIClassifier(bf16_nli_dir, device="cpu", dtype="float32")
    assert next(forced.model.parameters()).dtype == torch.float32


def test_generative_and_masked_lms_take_the_checkpoints_dtype(
    tiny_causal_dir: Path, tiny_mlm_dir: Path, tmp_path: Path
) -> None:
    from nlibias.models.generative.hf_causal import CausalLMSource, HFCausalLM
    from nlibias.models.mlm.hf import HFMaskedLMFiller

    causal = _resaved(tiny_causal_dir, tmp_path / "causal", "AutoModelForCausalLM", torch.bfloat16)
    lm = HFCausalLM(CausalLMSource(str(causal)), device="cpu")
    assert lm.loaded_dtype is None  # not loaded yet
    model, _ = lm.load()
    assert model.dtype == torch.bfloat16 and lm.loaded_dtype == "bfloat16"
    plain = HFCausalLM(CausalLMSource(str(tiny_causal_dir)), device="cpu")
    assert plain.load()[0].dtype == torch.float32

    mlm = _resaved(tiny_mlm_dir, tmp_path / "mlm", "AutoModelForMaskedLM", torch.bfloat16)
    assert HFMaskedLMFiller(mlm, device="cpu").dtype == torch.bfloat16
    assert HFMaskedLMFiller(tiny_mlm_dir, device="cpu").dtype == torch.float32


def test_a_bf16_run_has_a_reduced_precision_caveat_and_a_float32_run_none(
    tiny_nli_dir: Path, bf16_nli_dir: Path, bbnli_samples_run: Path, tmp_path: Path
) -> None:
    from nlibias.jobs.audit import run_audit
    from nlibias.report.load import load_run
    from nlibias.report.run_notes import run_caveats

    kinds = {}
    for name, model in (("bf16", bf16_nli_dir), ("fp32", tiny_nli_dir)):
        out = tmp_path / name
        result = run_audit(
            bbnli_samples_run,
            [str(model)],
            run=RunOptions(cache=False, bootstrap=0, progress=False),
            out_dir=out,
            options=ModelOptions(device="cpu"),
        )
        (described,) = result.metrics["run"]["models"].values()
        assert described["dtype"] == {"bf16": "bfloat16", "fp32": "float32"}[name]  # recorded as used
        kinds[name] = [c for c in run_caveats(load_run(out)) if c.kind == "reduced-precision"]
    (caveat,) = kinds["bf16"]
    assert "bfloat16" in caveat.text and "--dtype float32" in caveat.text
    assert kinds["fp32"] == []


def test_a_generative_run_in_float16_has_the_caveat() -> None:
    """A generative backend records the dtype asked for inside its identity; the caveat finds it."""
    from nlibias.report.load import Run
    from nlibias.report.run_notes import run_caveats

    def run(dtype: str) -> Run:
        described = {"kind": "generative", "model": "tiny", "identity": {"backend": {"dtype": dtype}}}
        return Run(
            path=Path("x"), label="x",
            metrics={"source": "bbnli", "n_samples": 2000, "models": {"m": {"overall": {}}},
                     "run": {"models": {"m": described}}},
        )  # fmt: skip

    (caveat,) = [c for c in run_caveats(run("float16")) if c.kind == "reduced-precision"]
    assert caveat.text.startswith("tiny ran in float16")
    assert not [c for c in run_caveats(run("float32")) if c.kind == "reduced-precision"]


def test_a_generative_bf16_checkpoint_under_auto_gets_the_caveat(
    tiny_causal_dir: Path, bbnli_samples_run: Path, tmp_path: Path
) -> None:
    """Under auto the identity says "auto"; the run records the dtype the weights were loaded in,
    so the caveat sees a bf16 checkpoint (before: it saw only "auto" and said nothing)."""
    from nlibias.jobs.audit import run_audit
    from nlibias.report.load import load_run
    from nlibias.report.run_notes import run_caveats

    causal = _resaved(tiny_causal_dir, tmp_path / "causal", "AutoModelForCausalLM", torch.bfloat16)
    out = tmp_path / "run"
    result = run_audit(
        bbnli_samples_run,
        ModelSet.of(generative=[str(causal)], prompts=["true"]),
        run=RunOptions(cache=False, bootstrap=0, progress=False, limit=40),
        out_dir=out,
        options=ModelOptions(device="cpu"),
    )
    (described,) = result.metrics["run"]["models"].values()
    assert described["dtype"] == "bfloat16"
    (caveat,) = [c for c in run_caveats(load_run(out)) if c.kind == "reduced-precision"]
    assert "bfloat16" in caveat.text


def test_extend_fingerprints_the_checkpoints_own_dtype_under_auto(tmp_path: Path) -> None:
    """Before: under auto the fingerprint recorded the device's dtype (float32 on any device once
    auto meant the checkpoint's), even for a bf16 checkpoint; now each checkpoint's own."""
    from nlibias.extension.stages import resolved_dtype

    for name, config in (("bf16", {"dtype": "bfloat16"}), ("plain", {})):
        (tmp_path / name).mkdir()
        (tmp_path / name / "config.json").write_text(json.dumps(config))
    bf16, plain = str(tmp_path / "bf16"), str(tmp_path / "plain")
    assert resolved_dtype(None, None, [bf16]) == "bfloat16"
    assert resolved_dtype("cuda", "auto", [f"causal:{bf16}"]) == "bfloat16"
    assert resolved_dtype(None, None, [bf16, plain]) == "bfloat16,float32"
    assert resolved_dtype(None, "float32", [bf16]) == "float32"  # asked for: what is used
    assert resolved_dtype(None, None, ["causal:smollm2"]) == "float32"  # a GGUF file, dequantised
    assert resolved_dtype(None, None, ["fake:a"]) is None
