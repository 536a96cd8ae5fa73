"""Fill stage (cache, exclusions, resume) and the Hugging Face masked-LM backend (mask-only head)."""

from __future__ import annotations

from collections.abc import Collection, Iterator, Sequence
from pathlib import Path

import numpy as np
import pytest

from nlibias.extension.fill import fill_masked_samples
from nlibias.extension.masked_templates import MaskedSample, expand_masked_templates
from nlibias.models.mlm.hf import (
    detect_scheme,
    find_mask_head,
    rank_whole_words,
    whole_word_table,
)
from nlibias.models.mlm.mask_filler import FakeMaskFiller, FillBatch
from nlibias.runtime.cache import PredictionCache
from test_extension_masks import curated, synthetic


def masked_samples() -> list[MaskedSample]:
    sub = synthetic()
    templates = [
        curated(sub, 0, "{{GROUP2}} are less <mask> at {{JOB}}."),
        curated(sub, 0, "{{GROUP2}} are less {{ADJ}} and <mask> at {{JOB}}."),
    ]
    return expand_masked_templates(templates, [sub])  # 24 samples, 12 unique hypotheses (see masks test)


WORDS = ("talented", "able", "good", "keen", "fit", "weak", "slow", "bad")


def test_fill_gives_k_candidates_per_masked_sample_and_skips_excluded_words(tmp_path: Path) -> None:
    masked = masked_samples()
    filler = FakeMaskFiller(words=WORDS)
    with PredictionCache(tmp_path / "c.sqlite") as cache:
        run = fill_masked_samples(masked, filler, cache, top_k=3, block_list=["Keen"], progress=False)
    # 12 unique (hypothesis, excluded words) requests; 24 masked samples x 3 words = 72 candidates
    assert (run.unique_requests, run.computed_requests, len(run.candidates)) == (12, 12, 72)
    assert sum(filler.calls) == 12
    for candidate in run.candidates:
        word = candidate.provenance["fill_word"]
        assert word != "keen"  # block-list, compared lower-cased
        masked_one = next(m for m in masked if m.id == candidate.provenance["masked_id"])
        assert word.lower() not in masked_one.exclude  # the template's original word(s)
        assert candidate.hypothesis == masked_one.hypothesis.replace("<mask>", word)
        assert candidate.premise == masked_one.premise  # the premise is never touched
        assert candidate.stereotype == masked_one.formulation
        assert candidate.provenance["fill_rank"] in (1, 2, 3)
        assert candidate.provenance["lm_score"] < 0
    assert len({c.id for c in run.candidates}) == 72


def test_fill_is_cached_by_setting(tmp_path: Path) -> None:
    masked = masked_samples()
    with PredictionCache(tmp_path / "c.sqlite") as cache:
        first = fill_masked_samples(masked, FakeMaskFiller(words=WORDS), cache, top_k=3, progress=False)
        again = FakeMaskFiller(words=WORDS)
        second = fill_masked_samples(masked, again, cache, top_k=3, progress=False)
        assert again.calls == [] and second.cached_requests == 12
        assert [c.hypothesis for c in first.candidates] == [c.hypothesis for c in second.candidates]
        other_k = FakeMaskFiller(words=WORDS)
        fill_masked_samples(masked, other_k, cache, top_k=2, progress=False)
        blocked = FakeMaskFiller(words=WORDS)
        fill_masked_samples(masked, blocked, cache, top_k=3, block_list=["fit"], progress=False)
    assert sum(other_k.calls) == 12 and sum(blocked.calls) == 12  # k and block-list are in the key


class CrashingFiller(FakeMaskFiller):
    """Dies after ``survive`` batches (a killed process, as far as the cache can tell)."""

    def __init__(self, survive: int) -> None:
        super().__init__(words=WORDS, batch_size=4)
        self.survive = survive

    def fill_batches(
        self, texts: Sequence[str], *, top_k: int, exclude: Sequence[Collection[str]]
    ) -> Iterator[FillBatch]:
        for done, batch in enumerate(super().fill_batches(texts, top_k=top_k, exclude=exclude)):
            if done == self.survive:
                raise KeyboardInterrupt
            yield batch


def test_fill_resumes_from_the_cache_after_a_crash(tmp_path: Path) -> None:
    masked = masked_samples()
    with PredictionCache(tmp_path / "c.sqlite") as cache:
        with pytest.raises(KeyboardInterrupt):
            fill_masked_samples(masked, CrashingFiller(survive=2), cache, top_k=3, progress=False)
        resumed = FakeMaskFiller(words=WORDS, batch_size=4)
        run = fill_masked_samples(masked, resumed, cache, top_k=3, progress=False)
    # 12 requests in batches of 4: two batches (8 requests) were committed before the crash
    assert sum(resumed.calls) == 4 and run.cached_requests == 8


# --- the Hugging Face backend -------------------------------------------------------------------


def test_whole_word_tables_for_the_three_schemes() -> None:
    assert detect_scheme(["[CLS]", "##s", "the"]) == "wordpiece"
    assert whole_word_table(["[CLS]", "able", "##ing", ",", "[unused1]", "well-known"], {0}) == [
        None,
        "able",
        None,
        None,
        None,
        "well-known",
    ]
    # byte-level BPE: only tokens with the word-start marker are words
    assert whole_word_table(["<s>", "Ġable", "ing", "Ġ,", "Ġ"], {0}) == [None, "able", None, None, None]
    # SentencePiece
    assert whole_word_table(["<pad>", "▁able", "ing", "▁x"], {0}) == [None, "able", None, "x"]


def test_rank_whole_words_reads_further_down_the_ranking() -> None:
    # ranking: token 3 (excluded "Talented"), 0 (subword), 2 ("able"), 1 ("keen"), 4 ("able" again)
    log_probs = np.log(np.array([0.3, 0.1, 0.2, 0.35, 0.05]))
    order = np.array([3, 0, 2, 1, 4])
    kept = rank_whole_words(
        log_probs, order, [None, "keen", "able", "Talented", "able"], top_k=2, exclude={"talented"}
    )
    assert [(c.word, c.rank, c.vocab_rank) for c in kept] == [("able", 1, 3), ("keen", 2, 4)]
    assert kept[0].log_prob == pytest.approx(np.log(0.2))


@pytest.fixture(scope="module")
def filler(tiny_mlm_dir: Path):  # type: ignore[no-untyped-def]
    from nlibias.models.mlm.hf import HFMaskedLMFiller

    return HFMaskedLMFiller(tiny_mlm_dir, device="cpu", max_batch_size=3)


def test_hf_filler_evaluates_the_head_at_the_mask_only_and_matches_full_logits(filler) -> None:  # type: ignore[no-untyped-def]
    import torch

    assert filler.head_mode == "mask-only"
    texts = ["women are less <mask> at coding.", "It is <mask> for women to be the breadwinner here today."]
    ids, positions = filler.encode(texts)
    head_only = filler._mask_log_probs(ids, positions)
    width = max(len(r) for r in ids)
    input_ids = torch.tensor([r + [0] * (width - len(r)) for r in ids])
    mask = torch.tensor([[1] * len(r) + [0] * (width - len(r)) for r in ids])
    with torch.inference_mode():
        full = filler.model(input_ids=input_ids, attention_mask=mask).logits
    expected = torch.log_softmax(full[torch.arange(2), torch.as_tensor(positions)].float(), dim=-1)
    assert torch.allclose(head_only, expected, atol=1e-5)


def test_hf_filler_returns_k_whole_words_in_rank_order(filler) -> None:  # type: ignore[no-untyped-def]
    texts = [f"women are less <mask> at {job}." for job in ("coding", "surgery", "work", "home")]
    excluded = [{"talented"}, set(), {"good"}, set()]
    batches = list(filler.fill_batches(texts, top_k=20, exclude=excluded))
    assert sorted(int(i) for b in batches for i in b.indices) == [0, 1, 2, 3]
    assert len(batches) == 2  # max_batch_size=3
    for batch in batches:
        for i, candidates in zip(batch.indices, batch.candidates, strict=True):
            words = [c.word for c in candidates]
            assert len(words) == 20 and len(set(words)) == 20
            assert [c.rank for c in candidates] == list(range(1, 21))
            scores = [c.log_prob for c in candidates]
            assert scores == sorted(scores, reverse=True)
            assert all(not w.startswith("##") and any(ch.isalpha() for ch in w) for w in words)
            assert not {w.lower() for w in words} & excluded[int(i)]
            assert all(w not in ("[CLS]", "[SEP]", "[MASK]", "[PAD]", "[UNK]") for w in words)


def test_hf_filler_refuses_a_text_without_exactly_one_mask(filler) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(ValueError, match="exactly one <mask>"):
        list(filler.fill_batches(["no mask here"], top_k=2, exclude=[()]))


def test_head_is_found_for_roberta_and_missing_heads_fall_back() -> None:
    import torch
    from transformers import DistilBertConfig, DistilBertForMaskedLM, RobertaConfig, RobertaForMaskedLM

    roberta = RobertaForMaskedLM(
        RobertaConfig(
            vocab_size=64, hidden_size=16, num_hidden_layers=1, num_attention_heads=2, intermediate_size=32
        )
    )
    roberta.eval()
    found = find_mask_head(roberta)
    assert found is not None and found[1] is roberta.lm_head
    distil = DistilBertForMaskedLM(
        DistilBertConfig(vocab_size=64, dim=16, n_layers=1, n_heads=2, hidden_dim=32)
    )
    assert find_mask_head(distil) is None  # its head is three loose modules: full logits, with a warning
    with torch.inference_mode():
        hidden = found[0](input_ids=torch.tensor([[0, 5, 6, 2]]))[0]
        assert torch.allclose(
            found[1](hidden[:, 1]), roberta(input_ids=torch.tensor([[0, 5, 6, 2]])).logits[:, 1], atol=1e-5
        )


def test_full_logits_fallback_gives_the_same_candidates(filler, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    texts = ["women are less <mask> at coding.", "men should <mask> at home."]
    head_only = [b.candidates for b in filler.fill_batches(texts, top_k=5, exclude=[(), ()])]
    monkeypatch.setattr(filler, "_head", None)
    full = [b.candidates for b in filler.fill_batches(texts, top_k=5, exclude=[(), ()])]
    assert [[c.word for c in row] for batch in full for row in batch] == [
        [c.word for c in row] for batch in head_only for row in batch
    ]
