"""The Hugging Face NLI backend on tiny in-process models: labels, batching, padding, identity, cache."""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pytest

from nlibias.errors import ConfigError, LabelMappingError
from nlibias.models.base import NLIClassifier
from nlibias.models.batching import padding_efficiency, plan_batches
from nlibias.models.hf_common import (
    choose_device,
    choose_dtype,
    hash_local_model,
    load_pretrained,
    resolve_revision,
)
from nlibias.models.nli.hf import HFNLIClassifier
from nlibias.runtime.cache import PredictionCache
from nlibias.runtime.classifier import predict_pairs
from nlibias.testing import bbnli_texts, build_tiny_nli_classifier, train_tiny_tokenizer

# Column order of the permuted test model: contradiction, entailment, neutral.
# In LABELS order (E, N, C) the columns to pick are E=1, N=2, C=0.
PERMUTED_ID2LABEL = {0: "contradiction", 1: "entailment", 2: "neutral"}
PERMUTED_ORDER = [1, 2, 0]


pytestmark = pytest.mark.usefixtures("one_torch_thread")


@pytest.fixture(scope="module")
def pairs(bbnli_corpus: list[str]) -> list[tuple[str, str]]:
    """200 BBNLI-like pairs: long premises, short hypotheses, lengths from ~15 to ~150 tokens."""
    premises = [text for text in bbnli_corpus if len(text) > 120]
    hypotheses = [text for text in bbnli_corpus if len(text) <= 120]
    return [(premises[i % len(premises)], hypotheses[(7 * i) % len(hypotheses)]) for i in range(200)]


@pytest.fixture(scope="module")
def classifier(tiny_nli_dir: Path) -> HFNLIClassifier:
    return HFNLIClassifier(tiny_nli_dir)


@pytest.fixture(scope="module")
def permuted_dir(tmp_path_factory: pytest.TempPathFactory, bbnli_corpus: list[str]) -> Path:
    return build_tiny_nli_classifier(
        tmp_path_factory.mktemp("permuted"), bbnli_corpus, id2label=PERMUTED_ID2LABEL, seed=1
    )


@pytest.fixture(scope="module")
def roberta_dir(tmp_path_factory: pytest.TempPathFactory, bbnli_corpus: list[str]) -> Path:
    return build_tiny_nli_classifier(tmp_path_factory.mktemp("roberta"), bbnli_corpus, arch="roberta")


def run_all(clf: HFNLIClassifier, pairs: list[tuple[str, str]]) -> np.ndarray:
    """Probabilities in input order, from the batches (which come in length order)."""
    out = np.full((len(pairs), 3), np.nan)
    for batch in clf.predict_batches(pairs):
        out[batch.indices] = batch.probs
    return out


def reference_softmax(model_dir: Path, pairs: list[tuple[str, str]]) -> np.ndarray:
    """Independent computation: plain transformers, one unpadded pair at a time, model's own columns."""
    import torch
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(model_dir)
    model = AutoModelForSequenceClassification.from_pretrained(model_dir).eval()
    rows = []
    with torch.inference_mode():
        for premise, hypothesis in pairs:
            encoded = tokenizer(
                premise, hypothesis, truncation="only_second", max_length=512, return_tensors="pt"
            )
            rows.append(model(**encoded).logits.float().softmax(-1)[0].numpy())
    return np.stack(rows)


# --- loading and the contract ------------------------------------------------------------------


def test_loads_from_local_path_and_fulfils_the_contract(
    classifier: HFNLIClassifier, tiny_nli_dir: Path
) -> None:
    assert isinstance(classifier, NLIClassifier)
    assert classifier.name == str(tiny_nli_dir)
    identity = classifier.identity()
    assert identity["backend"] == "hf-nli"
    assert identity["revision"] == classifier.revision == hash_local_model(tiny_nli_dir)
    assert identity["revision"].startswith("sha256:")
    assert identity["dtype"] == "float32" and identity["max_length"] == 512
    assert identity["label_order"] == [0, 1, 2]
    assert classifier.describe() == {
        "backend": "hf-nli",
        "model": str(tiny_nli_dir),
        "revision": classifier.revision,
        "device": "cpu",
        "dtype": "float32",
    }


def test_probabilities_sum_to_one(classifier: HFNLIClassifier, pairs: list[tuple[str, str]]) -> None:
    probs = run_all(classifier, pairs[:50])
    assert probs.shape == (50, 3)
    np.testing.assert_allclose(probs.sum(axis=1), 1.0, atol=1e-6)
    # the random tiny model is not constant: it predicts more than one label on these pairs
    assert len(set(probs.argmax(axis=1).tolist())) > 1


def test_columns_are_put_in_labels_order(permuted_dir: Path, pairs: list[tuple[str, str]]) -> None:
    clf = HFNLIClassifier(permuted_dir)
    assert clf.label_order == PERMUTED_ORDER
    sample = pairs[:12]
    raw = reference_softmax(permuted_dir, sample)
    got = run_all(clf, sample)
    np.testing.assert_allclose(got, raw[:, PERMUTED_ORDER], atol=1e-5)
    # the permutation matters: the raw columns themselves differ from the canonical output
    assert np.abs(got - raw).max() > 1e-2


def test_matches_plain_transformers_one_pair_at_a_time(
    classifier: HFNLIClassifier, tiny_nli_dir: Path, pairs: list[tuple[str, str]]
) -> None:
    sample = pairs[::10]
    np.testing.assert_allclose(
        run_all(classifier, sample), reference_softmax(tiny_nli_dir, sample), atol=1e-5
    )


@pytest.mark.parametrize("arch", ["bert", "roberta"])
def test_results_do_not_depend_on_batching(
    arch: str, tiny_nli_dir: Path, roberta_dir: Path, pairs: list[tuple[str, str]]
) -> None:
    model_dir = tiny_nli_dir if arch == "bert" else roberta_dir
    one_by_one = HFNLIClassifier(model_dir, max_tokens=1)
    big_batches = HFNLIClassifier(model_dir, max_tokens=100_000, max_batch_size=64)
    sample = pairs[:60]
    small = run_all(one_by_one, sample)
    large = run_all(big_batches, sample)
    assert one_by_one.batches_computed == 60
    assert big_batches.batches_computed == 1  # 60 pairs x <= 200 tokens fit in 100,000
    assert not np.isnan(small).any()
    np.testing.assert_allclose(small, large, atol=1e-5)
    assert one_by_one.identity() == big_batches.identity()  # batch size does not change outputs


def test_padding_efficiency_on_bbnli_like_pairs(
    classifier: HFNLIClassifier, pairs: list[tuple[str, str]]
) -> None:
    clf = HFNLIClassifier(classifier.model_name_or_path, max_tokens=2048)
    batches = list(clf.predict_batches(pairs))
    real = sum(b.real_tokens for b in batches)
    padded = sum(b.padded_tokens for b in batches)
    # the numbers reported are those of the plan over the true token lengths
    _, _, lengths = clf.encode(pairs)
    plan = plan_batches(lengths, max_tokens=2048, max_batch_size=128)
    assert real == int(lengths.sum())
    assert real / padded == pytest.approx(padding_efficiency(lengths, plan))
    assert real / padded > 0.9
    assert sorted(np.concatenate([b.indices for b in batches]).tolist()) == list(range(len(pairs)))


def test_vectorised_padding_equals_tokenizer_pad(
    classifier: HFNLIClassifier, pairs: list[tuple[str, str]]
) -> None:
    import torch

    sample = pairs[:9]
    flat, offsets, lengths = classifier.encode(sample)
    batch = np.array([4, 0, 8, 2])
    features = [{key: flat[key][offsets[i] : offsets[i + 1]].tolist() for key in flat} for i in batch]
    expected = classifier.tokenizer.pad(features, padding_side="right", return_tensors="pt")
    got = classifier._pad(flat, offsets, lengths, batch)
    assert set(got) == set(expected) == {"input_ids", "token_type_ids", "attention_mask"}
    for key in expected:
        assert torch.equal(got[key], expected[key]), key


def test_long_pairs_are_truncated_hypothesis_first(tiny_nli_dir: Path) -> None:
    clf = HFNLIClassifier(tiny_nli_dir, max_length=32)
    premise, long_text = "Men are rational.", " ".join(["Women are emotional."] * 40)
    flat, offsets, lengths = clf.encode([(premise, long_text), (long_text, premise), (premise, premise)])
    assert lengths.tolist()[:2] == [32, 32]
    # only_second keeps the whole premise: the row starts like the untruncated encoding
    untruncated = clf.tokenizer(premise, long_text)["input_ids"]
    assert flat["input_ids"][:32].tolist()[:-1] == untruncated[:31]
    # a premise longer than max_length falls back to longest_first instead of failing
    assert flat["input_ids"][offsets[1] : offsets[2]].tolist()[-1] == clf.tokenizer.sep_token_id
    assert lengths[2] < 32
    assert clf.identity()["max_length"] == 32


def test_encoding_in_chunks_gives_the_arrays_of_one_call(
    tiny_nli_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import nlibias.models.nli.hf as hf_nli

    clf = HFNLIClassifier(tiny_nli_dir, max_length=32)
    long_text = " ".join(["Women are emotional."] * 40)
    pairs = [(f"Premise {i}.", f"Hypothesis number {i}.") for i in range(7)] + [
        ("Men are rational.", long_text)
    ]
    whole = clf.encode(pairs)
    monkeypatch.setattr(hf_nli, "ENCODE_CHUNK", 3)  # chunks of 3, 3, 2 pairs; the long one is last
    chunked = clf.encode(pairs)
    assert set(whole[0]) == set(chunked[0]) == {"input_ids", "token_type_ids"}
    for key in whole[0]:
        np.testing.assert_array_equal(whole[0][key], chunked[0][key])
    np.testing.assert_array_equal(whole[1], chunked[1])
    np.testing.assert_array_equal(whole[2], chunked[2])
    assert chunked[2][-1] == 32 and chunked[1][-1] == chunked[2].sum()
    flat, offsets, lengths = clf.encode([])
    assert flat == {} and offsets.tolist() == [0] and lengths.size == 0


@pytest.mark.parametrize("chunk", [4096, 7])
def test_encoding_equals_the_tokenizer_called_pair_by_pair(
    tiny_nli_dir: Path, pairs: list[tuple[str, str]], monkeypatch: pytest.MonkeyPatch, chunk: int
) -> None:
    """The fast path (the tokenizer's Rust backend called directly) gives what ``tokenizer(p, h)``
    gives, truncation included, also right after a truncated pair has left truncation set on the
    shared backend (chunks of 7 put truncated pairs before and after chunk boundaries)."""
    import nlibias.models.nli.hf as hf_nli

    monkeypatch.setattr(hf_nli, "ENCODE_CHUNK", chunk)
    clf = HFNLIClassifier(tiny_nli_dir, max_length=48)
    long_text = " ".join(["Women are emotional."] * 40)
    mixed = [*pairs[:40], ("Men are rational.", long_text), *pairs[40:80], (long_text, "Men are rational.")]
    mixed += pairs[80:120]
    flat, offsets, lengths = clf.encode(mixed)
    assert getattr(clf.tokenizer, "backend_tokenizer", None) is not None  # the fast path ran
    truncated = 0
    for i, (premise, hypothesis) in enumerate(mixed):
        expected = clf.tokenizer(premise, hypothesis)
        if len(expected["input_ids"]) > 48:
            truncated += 1
            try:
                expected = clf.tokenizer(premise, hypothesis, truncation="only_second", max_length=48)
            except Exception:  # the premise alone is too long
                expected = clf.tokenizer(premise, hypothesis, truncation="longest_first", max_length=48)
        row = slice(offsets[i], offsets[i + 1])
        assert flat["input_ids"][row].tolist() == expected["input_ids"], i
        assert flat["token_type_ids"][row].tolist() == expected["token_type_ids"], i
    assert truncated >= 2 and lengths.max() == 48


def test_encoding_with_a_roberta_style_tokenizer_equals_the_tokenizer_call(
    tiny_nli_dir: Path, pairs: list[tuple[str, str]], bbnli_corpus: list[str]
) -> None:
    """A byte-level BPE tokenizer with RoBERTa's pair template (``<s> A </s></s> B </s>``, no token
    types), as the ynie RoBERTa and BART checkpoints have: the backend path gives its ids."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, processors, trainers
    from transformers import PreTrainedTokenizerFast

    bpe = Tokenizer(models.BPE())
    bpe.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    bpe.decoder = decoders.ByteLevel()
    specials = ["<s>", "<pad>", "</s>", "<unk>"]
    bpe.train_from_iterator(
        bbnli_corpus,
        trainers.BpeTrainer(
            vocab_size=400, special_tokens=specials, initial_alphabet=pre_tokenizers.ByteLevel.alphabet()
        ),
    )
    bpe.post_processor = processors.RobertaProcessing(
        ("</s>", bpe.token_to_id("</s>")), ("<s>", bpe.token_to_id("<s>"))
    )
    roberta_like = PreTrainedTokenizerFast(
        tokenizer_object=bpe, bos_token="<s>", eos_token="</s>", sep_token="</s>", cls_token="<s>",
        pad_token="<pad>", unk_token="<unk>", model_input_names=["input_ids", "attention_mask"],
    )  # fmt: skip
    clf = HFNLIClassifier(tiny_nli_dir, max_length=10**4)
    clf.tokenizer, clf._with_token_types = roberta_like, False
    flat, offsets, _ = clf.encode(pairs[:60])
    assert set(flat) == {"input_ids"}
    for i, (premise, hypothesis) in enumerate(pairs[:60]):
        expected = roberta_like(premise, hypothesis)["input_ids"]
        assert flat["input_ids"][offsets[i] : offsets[i + 1]].tolist() == expected, i
    assert expected[0] == bpe.token_to_id("<s>") and expected.count(bpe.token_to_id("</s>")) == 3


# --- labels ------------------------------------------------------------------------------------


def test_unmappable_labels_are_refused_at_load_time(
    tmp_path_factory: pytest.TempPathFactory, bbnli_corpus: list[str]
) -> None:
    generic = {0: "LABEL_0", 1: "LABEL_1", 2: "LABEL_2"}
    model_dir = build_tiny_nli_classifier(tmp_path_factory.mktemp("generic"), bbnli_corpus, id2label=generic)
    with pytest.raises(LabelMappingError, match=r"LABEL_1.*label_map='0=entailment"):
        HFNLIClassifier(model_dir)
    # the CLI form and a dict both work, and change the identity
    from_text = HFNLIClassifier(model_dir, label_map="0=contradiction,1=entailment,2=neutral")
    from_dict = HFNLIClassifier(model_dir, label_map=PERMUTED_ID2LABEL)
    assert from_text.label_order == from_dict.label_order == PERMUTED_ORDER
    assert HFNLIClassifier(model_dir, label_map="0=entailment,1=neutral,2=contradiction").identity() != (
        from_text.identity()
    )


# --- identity and the cache --------------------------------------------------------------------


def test_identity_follows_the_files(tiny_nli_dir: Path, tmp_path: Path) -> None:
    from safetensors.torch import load_file, save_file

    copy = shutil.copytree(tiny_nli_dir, tmp_path / "copy")
    original = HFNLIClassifier(tiny_nli_dir)
    assert HFNLIClassifier(tiny_nli_dir).identity() == original.identity()  # stable
    assert HFNLIClassifier(copy).revision == original.revision  # same files, same hash
    # a README does not change outputs, so it does not change the hash
    (copy / "README.md").write_text("notes")
    assert hash_local_model(copy) == original.revision
    # one weight changed -> new hash, new identity
    weights = load_file(copy / "model.safetensors")
    name = next(key for key in sorted(weights) if key.endswith("classifier.bias"))
    weights[name] = weights[name] + 1.0
    save_file(weights, copy / "model.safetensors", metadata={"format": "pt"})
    changed = HFNLIClassifier(copy)
    assert changed.revision != original.revision
    assert changed.identity()["revision"] != original.identity()["revision"]


def test_second_run_through_the_cache_computes_nothing(
    classifier: HFNLIClassifier, pairs: list[tuple[str, str]], tmp_path: Path
) -> None:
    sample = pairs[:40] + pairs[:5]  # 40 unique pairs
    with PredictionCache(tmp_path / "cache.sqlite") as cache:
        before = classifier.batches_computed
        first = predict_pairs(classifier, sample, cache, progress=False)
        after_first = classifier.batches_computed
        second = predict_pairs(classifier, sample, cache, progress=False)
    assert first.computed_pairs == 40 and after_first > before
    assert second.computed_pairs == 0 and second.cached_pairs == 40
    assert classifier.batches_computed == after_first
    np.testing.assert_allclose(second.probs, first.probs, atol=1e-12)


def test_bf16_weights_give_float32_probabilities_and_their_own_identity(
    classifier: HFNLIClassifier, tiny_nli_dir: Path, pairs: list[tuple[str, str]]
) -> None:
    bf16 = HFNLIClassifier(tiny_nli_dir, dtype="bf16")
    assert bf16.identity()["dtype"] == "bfloat16" and bf16.describe()["dtype"] == "bfloat16"
    assert bf16.identity() != classifier.identity()  # bf16 outputs differ, so cache entries must too
    sample = pairs[:20]
    low = run_all(bf16, sample)
    np.testing.assert_allclose(low.sum(axis=1), 1.0, atol=1e-6)  # softmax taken in float32
    # bf16 keeps ~3 significant digits: close to the float32 model, not equal to it
    np.testing.assert_allclose(low, run_all(classifier, sample), atol=0.05)


def test_empty_input_yields_nothing(classifier: HFNLIClassifier) -> None:
    assert list(classifier.predict_batches([])) == []


# --- shared Hugging Face helpers ---------------------------------------------------------------


def test_device_and_dtype_choice(monkeypatch: pytest.MonkeyPatch) -> None:
    import torch

    monkeypatch.delenv("NLIBIAS_DEVICE", raising=False)  # the tests' conftest pins it to cpu
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    assert choose_device(None) == "cpu"
    with pytest.raises(ConfigError, match="no CUDA GPU"):
        choose_device("cuda")
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    assert choose_device(None) == "cuda"
    monkeypatch.setenv("NLIBIAS_DEVICE", "cpu")  # "auto" kept on the CPU on a GPU machine
    assert choose_device(None) == choose_device("auto") == "cpu"
    assert choose_device("cuda") == "cuda"  # a device asked for by name wins
    monkeypatch.setenv("NLIBIAS_DEVICE", "tpu")  # a refused value of the variable names it, not device
    with pytest.raises(ConfigError, match="NLIBIAS_DEVICE is 'tpu', an unknown device") as caught:
        choose_device(None)
    assert caught.value.parameter == "NLIBIAS_DEVICE"
    with pytest.raises(ConfigError, match="device is 'tpu', an unknown device") as caught:
        choose_device("tpu")
    assert caught.value.parameter == "device"
    # auto is the checkpoint's own dtype (float32 without a config), on a GPU too
    # (tests/test_dtype_default.py)
    assert choose_dtype("cpu", None) == choose_dtype("cuda", "auto") == torch.float32
    assert choose_dtype("cuda", "fp32") == torch.float32
    with pytest.raises(ConfigError, match="unknown dtype"):
        choose_dtype("cpu", "int3")


def test_hub_revisions(monkeypatch: pytest.MonkeyPatch) -> None:
    import huggingface_hub

    commit = "a" * 40
    assert resolve_revision(None, "org/model", commit) == commit

    class Config:
        _commit_hash = "b" * 40

    class Model:
        config = Config()

    assert resolve_revision(Model(), "org/model", "main") == "b" * 40
    snapshot = f"/cache/models--org--model/snapshots/{'c' * 40}/config.json"
    monkeypatch.setattr(huggingface_hub, "try_to_load_from_cache", lambda *a, **k: snapshot)
    assert resolve_revision(object(), "org/model", None) == "c" * 40
    monkeypatch.setattr(huggingface_hub, "try_to_load_from_cache", lambda *a, **k: None)
    assert resolve_revision(object(), "org/model", "v1.0") == "v1.0"  # unpinned: the ref asked for


def test_loading_errors_teach(tiny_nli_dir: Path) -> None:
    from transformers import AutoConfig

    with pytest.raises(ConfigError, match="local path; revision applies to hub models only"):
        load_pretrained(AutoConfig.from_pretrained, tiny_nli_dir, revision="main")
    with pytest.raises(ConfigError, match="hf download nlibias-tests/no-such-model"):
        HFNLIClassifier("nlibias-tests/no-such-model")
    # a path that no hub id could be: once the hub's "Repo id must be in the form ..." and a
    # suggestion to `hf download ./runs/x/model`
    for path in ("./runs/x/model", "runs/x/model", "~/no-such-model-dir"):
        with pytest.raises(ConfigError) as caught:
            HFNLIClassifier(path)
        assert f"cannot load the model config {path!r}: no such file or directory" in str(caught.value)
        assert "hf download" not in str(caught.value)


def test_hub_id_loads_offline_from_the_hub_cache_pinned_to_its_commit(
    tiny_nli_dir: Path, tmp_path: Path
) -> None:
    """A hub id resolves through the Hugging Face cache layout (refs/main -> snapshots/<commit>).

    Run in a subprocess: huggingface_hub reads HF_HUB_CACHE when it is first imported.
    """
    import json
    import os
    import subprocess
    import sys

    commit = "0123456789abcdef0123456789abcdef01234567"
    repo = tmp_path / "hub" / "models--nlibias-test--tiny-nli"
    (repo / "refs").mkdir(parents=True)
    (repo / "refs" / "main").write_text(commit)
    shutil.copytree(tiny_nli_dir, repo / "snapshots" / commit)
    script = (
        "import json; from nlibias.models.nli.hf import HFNLIClassifier; "
        "clf = HFNLIClassifier('nlibias-test/tiny-nli'); "
        "print(json.dumps([dict(clf.identity()), clf.predict_batches([('A.', 'B.')]).__next__().probs.tolist()]))"
    )
    env = {**os.environ, "HF_HUB_CACHE": str(tmp_path / "hub"), "HF_HUB_OFFLINE": "1", "OMP_NUM_THREADS": "1"}
    done = subprocess.run(
        [sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr[-2000:]
    identity, probs = json.loads(done.stdout.strip().splitlines()[-1])
    assert identity["model"] == "nlibias-test/tiny-nli"
    assert identity["revision"] == commit
    local = HFNLIClassifier(tiny_nli_dir)
    np.testing.assert_allclose(probs, run_all(local, [("A.", "B.")]), atol=1e-6)


# --- the tiny models themselves ----------------------------------------------------------------


def test_tiny_models_are_deterministic(tmp_path: Path, bbnli_corpus: list[str], tiny_nli_dir: Path) -> None:
    same = build_tiny_nli_classifier(tmp_path / "same", bbnli_corpus, seed=0)
    other = build_tiny_nli_classifier(tmp_path / "other", bbnli_corpus, seed=1)
    assert hash_local_model(same) == hash_local_model(tiny_nli_dir)
    assert hash_local_model(other) != hash_local_model(tiny_nli_dir)


def test_tiny_tokenizer() -> None:
    texts = ["Men are rational.", "Women are rational.", "Men are emotional."]
    tokenizer = train_tiny_tokenizer(texts, vocab_size=64)
    assert tokenizer.is_fast
    assert tokenizer.convert_ids_to_tokens([0, 1, 2, 3, 4]) == ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
    encoded = tokenizer("Men are", "rational. [MASK]")
    assert tokenizer.convert_ids_to_tokens(encoded["input_ids"]) == [
        "[CLS]", "Men", "are", "[SEP]", "rational", ".", "[MASK]", "[SEP]",
    ]  # fmt: skip
    assert encoded["token_type_ids"] == [0, 0, 0, 0, 1, 1, 1, 1]
    # a word never seen is spelled with known characters: "Mare" -> M ##a ##r ##e
    assert tokenizer.tokenize("Mare") == ["M", "##a", "##r", "##e"]


def test_bbnli_texts_fill_every_placeholder(data_dir: Path) -> None:
    texts = bbnli_texts(data_dir)
    assert texts == bbnli_texts(data_dir / "bbnli")
    assert not any("{{" in text for text in texts)
    # man_is_to_programmer's MJOB words all appear
    joined = "\n".join(texts)
    for word in ("software engineering", "computer programming", "hardware engineering"):
        assert word in joined


def test_loading_from_python_draws_no_library_bar_into_a_log(
    tiny_nli_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # called from Python (no CLI, no audit job) with stderr a log (capsys: not a terminal), the
    # "Loading weights" bar of transformers stays out of it, and the switch is left as it was
    from transformers.utils import logging as transformers_logging

    transformers_logging.enable_progress_bar()
    capsys.readouterr()
    list(HFNLIClassifier(tiny_nli_dir).predict_batches([("A man sleeps.", "A person rests.")]))
    assert "Loading weights" not in capsys.readouterr().err
    assert transformers_logging.is_progress_bar_enabled()
