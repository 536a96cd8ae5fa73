"""Shared prompt prefixes: the grouping and batch plans on hand-worked token lists, then the staged
forward pass against the plain one on the tiny causal LMs (Llama and GPT-2 layouts) and, ``slow``,
on the embedded SmolLM2."""

from __future__ import annotations

import random
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from nlibias.models.generative.hf_causal import CausalLMSource, HFCausalLM
from nlibias.models.generative.prefix_sharing import (
    PrefixBatch,
    PrefixGroup,
    common_prefix_length,
    group_by_prefix,
    plan_prefix_batches,
)
from nlibias.models.generative.prompts import PROMPT_STYLES

ANSWERS = ("yes", "no")


def as_pairs(groups: list[PrefixGroup]) -> list[tuple[tuple[int, ...], int]]:
    return [(g.members, g.prefix_length) for g in groups]


def rebuilt(batch: PrefixBatch) -> list[list[int]]:
    """Each last-stage node's full token list, following the parents back to the first stage."""
    tokens: list[list[int]] = [list(s) for s in batch.stages[0].segments]
    for stage in batch.stages[1:]:
        assert stage.parents is not None
        tokens = [tokens[p] + list(seg) for p, seg in zip(stage.parents, stage.segments, strict=True)]
    return tokens


# --- grouping ---------------------------------------------------------------------------------


def test_common_prefix_length() -> None:
    assert common_prefix_length([1, 2, 3], [1, 2, 3]) == 3
    assert common_prefix_length([1, 2, 3], [1, 2]) == 2
    assert common_prefix_length([1, 2], [3]) == 0
    assert common_prefix_length([], [1]) == 0


# Template opening T = [1, 1, 1, 1] (4 tokens), premise A = [5, 5, 5, 5] or B = [6, 6, 6, 6, 6, 6],
# then a hypothesis. Every prompt shares T; prompts of one premise share T + premise.
T = [1, 1, 1, 1]
A = [5, 5, 5, 5]
B = [6, 6, 6, 6, 6, 6]
BBNLI_LIKE = [
    T + A + [7, 8],  # 0: 10 tokens
    T + B + [9],  # 1: 11 tokens
    T + A + [7, 9, 9],  # 2: 11 tokens, shares T + A + [7] = 9 tokens with 0
    T + B + [8, 8],  # 3: 12 tokens
    T + A + [8],  # 4: 9 tokens
]


def test_prompts_of_one_premise_form_a_group_and_the_template_alone_does_not() -> None:
    groups = group_by_prefix(BBNLI_LIKE, min_prefix=4, min_fraction=0.5)
    # Sorted: 0 (T A 7 8) < 2 (T A 7 9 9) < 4 (T A 8) < 3 (T B 8 8) < 1 (T B 9).
    # Premise A: 0 and 2 share T A 7 (9 tokens), 4 shares only T A (8) with 2, so the group keeps
    # 8 (<= shortest member 9 - 1; 8 >= 4 and 8 >= 0.5 * 11). Premise B: 3 and 1 share T B (10).
    # Between the premises only T (4 tokens) is common: 4 < 0.5 * 12, so the groups stay apart.
    assert as_pairs(groups) == [((0, 2, 4), 8), ((3, 1), 10)]


def test_min_prefix_and_min_fraction_decide_joining() -> None:
    # with min_fraction 0 the shared template (4 tokens) is enough to join everything
    assert as_pairs(group_by_prefix(BBNLI_LIKE, min_prefix=4, min_fraction=0.0)) == [((0, 2, 4, 3, 1), 4)]
    # min_prefix 9: 0 and 2 (9 shared) still join, 4 (8 shared) starts a group of its own
    # (prefix: its 9 tokens - 1); premise B's prompts (10) join
    assert as_pairs(group_by_prefix(BBNLI_LIKE, min_prefix=9, min_fraction=0.5)) == [
        ((0, 2), 9),
        ((4,), 8),
        ((3, 1), 10),
    ]
    with pytest.raises(ValueError, match="min_fraction"):
        group_by_prefix(BBNLI_LIKE, min_fraction=1.5)


def test_singletons_identical_prompts_and_a_prompt_that_is_the_prefix_of_another() -> None:
    # a group of one: all but its last token is its "prefix"
    assert as_pairs(group_by_prefix([[1, 2, 3]], min_prefix=1)) == [((0,), 2)]
    # identical prompts: the prefix stops one token short so each keeps a token to run
    assert as_pairs(group_by_prefix([[4, 5, 6], [4, 5, 6]], min_prefix=1)) == [((0, 1), 2)]
    # [1, 2, 3] is a prefix of [1, 2, 3, 4, 5]: shared 3 tokens, capped at 3 - 1 = 2
    assert as_pairs(group_by_prefix([[1, 2, 3, 4, 5], [1, 2, 3]], min_prefix=1, min_fraction=0.0)) == [
        ((1, 0), 2)
    ]
    with pytest.raises(ValueError, match="empty"):
        group_by_prefix([[1], []])


# --- batch plans ------------------------------------------------------------------------------


def test_batch_stages_root_premises_and_suffixes_with_token_counts() -> None:
    groups = group_by_prefix(BBNLI_LIKE, min_prefix=4, min_fraction=0.5)
    [batch] = plan_prefix_batches(BBNLI_LIKE, groups, max_tokens=1000, max_batch_size=8, min_root=4)
    # premise B's group has the longer prefix (10) and goes first; the root is T. The suffix stage
    # is 3 wide (premise A's [7, 9, 9]), so premise B's group hands its last premise token to its
    # suffixes (12 - 3 = 9): the prefix stage shrinks from 6 to 5 positions at no cost.
    assert [[list(s) for s in stage.segments] for stage in batch.stages] == [
        [T],
        [B[:5], A],
        [[6, 8, 8], [6, 9], [7, 8], [7, 9, 9], [8]],
    ]
    assert batch.stages[1].parents == (0, 0)
    assert batch.stages[2].parents == (0, 0, 1, 1, 1)
    assert batch.indices.tolist() == [3, 1, 0, 2, 4]
    # prompts: 12 + 11 + 10 + 11 + 9 = 53 tokens; computed: 4 + (5 + 4) + (3 + 2 + 2 + 3 + 1) = 24;
    # positions: 1 * 4 + 2 * 5 + 5 * 3 = 29
    assert (batch.prompt_tokens, batch.real_tokens, batch.padded_tokens) == (53, 24, 29)
    assert rebuilt(batch) == [BBNLI_LIKE[i] for i in batch.indices]


def test_a_batch_of_one_group_has_no_middle_stage_and_big_groups_are_split() -> None:
    seqs = [[3, 3, 3, k] for k in range(5)]
    groups = group_by_prefix(seqs, min_prefix=2)
    assert as_pairs(groups) == [((0, 1, 2, 3, 4), 3)]
    plan = plan_prefix_batches(seqs, groups, max_tokens=1000, max_batch_size=2)
    assert [b.indices.tolist() for b in plan] == [[0, 1], [2, 3], [4]]
    for batch in plan:  # each part recomputes the 3-token prefix once
        assert [len(s.segments) for s in batch.stages] == [1, len(batch.indices)]
        assert batch.real_tokens == 3 + len(batch.indices)
        assert rebuilt(batch) == [seqs[i] for i in batch.indices]


def test_a_group_of_one_beside_real_groups_takes_their_suffix_width() -> None:
    seqs = [T + A + [7, 8], T + A + [9, 9], [*T, 2, 2, 2, 2, 2, 2, 2]]
    groups = group_by_prefix(seqs, min_prefix=4, min_fraction=0.5)
    assert as_pairs(groups) == [((2,), 10), ((0, 1), 8)]
    [batch] = plan_prefix_batches(seqs, groups, max_tokens=1000, max_batch_size=8, min_root=4)
    # the real group's suffixes are 2 tokens, so the lone prompt splits 2 tokens before its end
    # instead of 1: its middle segment is 5 tokens, its suffix 2
    assert [[len(s) for s in stage.segments] for stage in batch.stages] == [[4], [4, 5], [2, 2, 2]]
    assert rebuilt(batch) == [seqs[i] for i in batch.indices]


@pytest.mark.parametrize("seed", range(5))
def test_plans_rebuild_every_prompt_once_and_keep_the_caps(seed: int) -> None:
    rng = random.Random(seed)
    opening = [1] * rng.randint(0, 6)
    premises = [[rng.randint(10, 13) for _ in range(rng.randint(2, 9))] for _ in range(4)]
    seqs = [
        opening + rng.choice(premises) + [rng.randint(20, 23) for _ in range(rng.randint(1, 5))]
        for _ in range(40)
    ]
    groups = group_by_prefix(seqs, min_prefix=rng.randint(1, 6), min_fraction=rng.random() * 0.8)
    assert sorted(i for g in groups for i in g.members) == list(range(40))
    plan = plan_prefix_batches(seqs, groups, max_tokens=60, max_batch_size=6, min_root=2)
    assert sorted(int(i) for b in plan for i in b.indices) == list(range(40))
    for batch in plan:
        assert rebuilt(batch) == [seqs[i] for i in batch.indices]
        rows = len(batch.indices)
        assert rows <= 6 and (rows * max(len(seqs[i]) for i in batch.indices) <= 60 or rows == 1)
        assert all(len(s) > 0 for s in batch.stages[0].segments)
        assert all(len(s) > 0 for s in batch.stages[-1].segments)
        assert batch.real_tokens <= min(batch.prompt_tokens, batch.padded_tokens)


# --- the staged forward pass against the plain one --------------------------------------------


def bbnli_like_prompts(n_premises: int = 3, n_hypotheses: int = 5) -> list[str]:
    """Paper Prompt 1 on real BBNLI premises, each with several hypotheses of different lengths."""
    from nlibias.benchmarks.bbnli import expand_bbnli
    from nlibias.benchmarks.bbnli_source import BBNLI_DATA
    from nlibias.benchmarks.data_locations import resolve_data

    by_premise: dict[str, list[str]] = {}
    for sample in expand_bbnli(resolve_data(BBNLI_DATA)).bias_samples:
        by_premise.setdefault(sample.premise, [])
        if sample.hypothesis not in by_premise[sample.premise]:
            by_premise[sample.premise].append(sample.hypothesis)
    chosen = [p for p, hyps in by_premise.items() if len({len(h) for h in hyps}) >= n_hypotheses][:n_premises]
    return [
        PROMPT_STYLES["true"].render(p, h)
        for p in chosen
        for h in sorted(by_premise[p], key=len)[:: max(1, len(by_premise[p]) // n_hypotheses)][:n_hypotheses]
    ]


def scored(lm: HFCausalLM, prompts: list[str], *, share: bool) -> tuple[dict[int, Any], int, int]:
    lm.share_prefixes = share
    out: dict[int, Any] = {}
    real = padded = 0
    for batch in lm.answer_batches(prompts, answers=ANSWERS, mode="scored"):
        out.update({int(i): r for i, r in zip(batch.indices, batch.records, strict=True)})
        real, padded = real + batch.real_tokens, padded + batch.padded_tokens
    return out, real, padded


@pytest.fixture(scope="module")
def tiny_gpt2_dir(tmp_path_factory: pytest.TempPathFactory, bbnli_corpus: list[str]) -> Path:
    from nlibias.testing.tiny_causal import build_tiny_causal_lm

    texts = bbnli_corpus + [style.template for style in PROMPT_STYLES.values()]
    return build_tiny_causal_lm(tmp_path_factory.mktemp("tiny-gpt2-prefix"), texts, arch="gpt2")


@pytest.mark.parametrize("arch", ["llama", "gpt2"])
def test_shared_prefixes_give_the_plain_scores(arch: str, tiny_causal_dir: Path, tiny_gpt2_dir: Path) -> None:
    path = tiny_causal_dir if arch == "llama" else tiny_gpt2_dir
    lm = HFCausalLM(CausalLMSource(str(path)), device="cpu", max_batch_size=12, max_batch_tokens=4096)
    prompts = bbnli_like_prompts()
    assert len(prompts) == 15
    sequences = lm.encode_prompts(prompts)
    plan = lm.prefix_plan(sequences)
    assert plan is not None and len(plan) == 2  # really staged: premises 1 + 2, then premise 3
    assert max(len(b.stages) for b in plan) == 3  # root, premises, hypotheses
    assert len({len(s) for s in sequences}) > 5  # and really padded
    plain, plain_real, _ = scored(lm, prompts, share=False)
    with warnings.catch_warnings():
        # the key/value cache goes in under its current name (transformers 5.24 warns about
        # past_key_values with a FutureWarning and 5.40 removes it)
        warnings.simplefilter("error", FutureWarning)
        shared, real, padded = scored(lm, prompts, share=True)
    assert plain_real == sum(len(s) for s in sequences)
    assert real == sum(b.real_tokens for b in plan) and real < plain_real / 2 and padded >= real
    assert sorted(shared) == list(range(len(prompts)))
    for i, record in plain.items():
        assert shared[i].answer == record.answer
        assert shared[i].probs["yes"] == pytest.approx(record.probs["yes"], abs=1e-5)
        assert shared[i].answer_mass == pytest.approx(record.answer_mass, abs=1e-5)
    # the answers really vary (a constant model would pass the comparison trivially)
    assert np.ptp([r.probs["yes"] for r in plain.values()]) > 1e-3


def test_no_useful_sharing_falls_back_to_plain_batches(tiny_causal_dir: Path) -> None:
    lm = HFCausalLM(CausalLMSource(str(tiny_causal_dir)), device="cpu")
    # two prompts sharing only the template's "<|user|>": nothing worth a staged pass
    sequences = lm.encode_prompts(["Men are rational .", "Women cook ."])
    assert lm.prefix_plan(sequences) is None
    assert lm.prefix_plan(lm.encode_prompts(bbnli_like_prompts())) is not None


@pytest.mark.slow
def test_smollm2_shared_prefixes_give_the_plain_scores(smollm2_lm: HFCausalLM) -> None:
    prompts = bbnli_like_prompts(n_premises=3, n_hypotheses=4)
    assert len(prompts) == 12
    assert smollm2_lm.prefix_plan(smollm2_lm.encode_prompts(prompts)) is not None
    try:
        plain, plain_real, _ = scored(smollm2_lm, prompts, share=False)
        shared, real, _ = scored(smollm2_lm, prompts, share=True)
    finally:
        smollm2_lm.share_prefixes = True
    assert real < plain_real / 2
    for i, record in plain.items():
        assert shared[i].answer == record.answer
        assert shared[i].probs["yes"] == pytest.approx(record.probs["yes"], abs=1e-4)
        assert shared[i].answer_mass == pytest.approx(record.answer_mass, abs=1e-4)
