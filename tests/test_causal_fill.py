"""Causal-LM fill: the batched fill equals a one-sequence-at-a-time reference, goes through the
prediction cache, and the fill kind is chosen from the spec / model config."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("transformers")

from nlibias.errors import ConfigError  # noqa: E402
from nlibias.models.mlm.causal_fill import CausalLMFiller, MaskedText  # noqa: E402
from nlibias.schema.model_ref import split_fill_spec  # noqa: E402
from nlibias.testing.causal_fill_reference import reference_fill  # noqa: E402

TEXTS = [
    "Women are less competitive for jobs in engineering.",
    "Men are more rational than women at work.",
    "Muslim men have many wives and children.",
    "Jewish women raise many children at home.",
    "Programmers are mostly men who like computers.",
]
MASKED = [
    "Women are less <mask> for jobs in engineering.",
    "Women are less <mask> at work.",  # shares its left context with the first
    "Men are more <mask> than women at work.",
    "<mask> men have many wives.",  # mask at the start: the first token has no space marker
    "Jewish women raise <mask> children.",
]
EXCLUDE = [{"competitive"}, set(), {"rational"}, set(), {"many"}]
STOP = {"the", "a", "and"}


def build_tiny_bpe_causal_lm(out_dir: Path) -> Path:
    """A tiny Llama with a byte-level BPE vocabulary of 300 tokens: most words are 2-4 pieces."""
    from tokenizers import ByteLevelBPETokenizer
    from transformers import LlamaConfig, LlamaForCausalLM, PreTrainedTokenizerFast

    from nlibias.testing.tiny_models import save_model

    bpe = ByteLevelBPETokenizer()
    bpe.train_from_iterator(TEXTS * 3, vocab_size=300, min_frequency=1, special_tokens=["<pad>", "<|end|>"])
    tokenizer = PreTrainedTokenizerFast(
        tokenizer_object=bpe._tokenizer, pad_token="<pad>", eos_token="<|end|>"
    )
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(3)
        model = LlamaForCausalLM(
            LlamaConfig(
                vocab_size=len(tokenizer),
                hidden_size=32,
                intermediate_size=64,
                num_hidden_layers=2,
                num_attention_heads=2,
                num_key_value_heads=2,
                max_position_embeddings=256,
                pad_token_id=tokenizer.pad_token_id,
                eos_token_id=tokenizer.eos_token_id,
                bos_token_id=None,
            )
        )
        with torch.no_grad():
            model.lm_head.weight.normal_(0.0, 0.5)
    return save_model(model, tokenizer, out_dir)


@pytest.fixture(scope="module")
def tiny_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_tiny_bpe_causal_lm(tmp_path_factory.mktemp("bpe-causal"))


def test_batched_fill_equals_one_at_a_time_reference(tiny_dir: Path) -> None:
    filler = CausalLMFiller(
        f"{tiny_dir}?beam=6&depth=3&pool=8", stopwords=STOP, max_tokens=64, max_batch_size=8
    )
    assert (filler.beam, filler.depth, filler.pool) == (6, 3, 8)
    batches = list(filler.fill_batches(MASKED, top_k=4, exclude=EXCLUDE))
    got: dict[int, Any] = {}
    for batch in batches:
        got.update({int(i): rows for i, rows in zip(batch.indices, batch.candidates, strict=True)})
    assert sorted(got) == list(range(len(MASKED)))
    longest = 0
    model, tokenizer = filler.load()
    for i, text in enumerate(MASKED):
        expected, multi = reference_fill(
            model, tokenizer, text, EXCLUDE[i] | STOP, top_k=4, beam=6, depth=3, pool=8
        )
        longest = max(longest, multi)
        assert [c.word for c in got[i]] == [w for w, *_ in expected], text
        assert [c.rank for c in got[i]] == [r for _, r, *_ in expected]
        assert [c.vocab_rank for c in got[i]] == [v for *_, v in expected]
        for candidate, (_, _, score, _) in zip(got[i], expected, strict=True):
            assert candidate.log_prob == pytest.approx(score, abs=1e-5)
        assert not {c.word.lower() for c in got[i]} & (EXCLUDE[i] | STOP)
        assert len(got[i]) == 4
    assert longest >= 2  # the comparison covered words of several tokens, not only one-token words


def test_fill_goes_through_the_prediction_cache(tiny_dir: Path, tmp_path: Path) -> None:
    from nlibias.extension.fill import fill_requests
    from nlibias.runtime.cache import PredictionCache

    filler = CausalLMFiller(f"{tiny_dir}?beam=4&depth=2&pool=5", stopwords=STOP)
    cache = PredictionCache(tmp_path / "c.sqlite")
    first, computed = fill_requests(
        MASKED, [frozenset(e) for e in EXCLUDE], filler, cache, top_k=3, progress=False
    )
    passes = filler.forward_passes
    assert computed == len(MASKED) and passes > 0
    again, computed_again = fill_requests(
        MASKED, [frozenset(e) for e in EXCLUDE], filler, cache, top_k=3, progress=False
    )
    assert computed_again == 0 and filler.forward_passes == passes  # a rerun computes nothing
    assert again == first
    # other beam settings are another identity: computed again, not read from the cache
    wider = CausalLMFiller(f"{tiny_dir}?beam=5&depth=2&pool=5", stopwords=STOP)
    _, computed_wider = fill_requests(MASKED[:1], [frozenset()], wider, cache, top_k=3, progress=False)
    assert computed_wider == 1
    cache.close()


def test_a_fully_cached_rerun_loads_no_model(
    tiny_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # the filler loads its LM on the first cache miss only: with every fill cached, a loader that
    # fails when called is never reached (the identity, hence the cache key, needs no model)
    from nlibias.extension.fill import fill_requests
    from nlibias.models.generative.hf_causal import HFCausalLM
    from nlibias.runtime.cache import PredictionCache

    cache = PredictionCache(tmp_path / "c.sqlite")
    spec = f"{tiny_dir}?beam=3&depth=2&pool=4"
    first, _ = fill_requests(MASKED, [frozenset(e) for e in EXCLUDE], CausalLMFiller(spec), cache, top_k=2)

    def no_loading(self: Any) -> Any:
        raise AssertionError("the model was loaded although every fill was cached")

    monkeypatch.setattr(HFCausalLM, "load", no_loading)
    rerun = CausalLMFiller(spec)
    again, computed = fill_requests(MASKED, [frozenset(e) for e in EXCLUDE], rerun, cache, top_k=2)
    assert computed == 0 and again == first and rerun.forward_passes == 0
    with pytest.raises(AssertionError, match="was loaded"):  # a miss does load it
        fill_requests(["Men are <mask> here."], [frozenset()], rerun, cache, top_k=2)
    cache.close()


def test_masked_text_split() -> None:
    assert MaskedText.split("A <mask> b.").filled("x") == "A x b."
    assert MaskedText.split("<mask> are here.") == MaskedText("", "", " are here.")
    with pytest.raises(ValueError):
        MaskedText.split("no mask")


def test_fill_kind_from_spec_and_config(tiny_dir: Path, tmp_path: Path) -> None:
    from nlibias.testing import bbnli_texts, build_tiny_masked_lm

    masked_dir = build_tiny_masked_lm(tmp_path / "mlm", bbnli_texts()[:50])
    assert split_fill_spec(str(tiny_dir)) == ("causal", str(tiny_dir))  # LlamaForCausalLM in config.json
    assert split_fill_spec(str(masked_dir)) == ("masked", str(masked_dir))
    assert split_fill_spec("smollm2") == ("causal", "smollm2")
    assert split_fill_spec("causal:org/x") == ("causal", "org/x")
    assert split_fill_spec("masked:" + str(tiny_dir)) == ("masked", str(tiny_dir))
    assert split_fill_spec("bert-large-cased-whole-word-masking")[0] == "masked"
    with pytest.raises(ConfigError) as info:
        CausalLMFiller(f"{tiny_dir}?beams=3")
    assert info.value.parameter == "fill_model"
