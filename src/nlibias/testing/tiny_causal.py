"""A tiny causal LM built in-process (random seeded weights), with a word-level tokenizer and a chat
template: every real code path runs, on the CPU, offline.

>>> path = build_tiny_causal_lm("/tmp/tiny-causal", ["Men are rational."])   # doctest: +SKIP
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable
from pathlib import Path
from typing import Any, Literal

from nlibias.schema.declared import PathArg, declared
from nlibias.testing.tiny_models import save_model

#: Special tokens, in id order (``<pad>`` is 0; ``<|end|>`` ends a turn and is the EOS token).
CAUSAL_SPECIAL_TOKENS: tuple[str, ...] = ("<pad>", "<unk>", "<|user|>", "<|assistant|>", "<|end|>")

#: Words every tiny causal vocabulary holds, so answers can be scored and generated.
ANSWER_WORDS: tuple[str, ...] = ("yes", "no", "maybe", "Yes", "No", "Maybe", "Answer", ":", ".", ",")

#: A minimal Jinja chat template.
TINY_CHAT_TEMPLATE = (
    "{% for message in messages %}<|user|> {{ message['content'] }} <|end|> {% endfor %}"
    "{% if add_generation_prompt %}<|assistant|>{% endif %}"
)

_WORD = re.compile(r"\w+|[^\w\s]")


def _vocab(texts: Iterable[str], vocab_size: int) -> dict[str, int]:
    counts: Counter[str] = Counter()
    for text in texts:
        counts.update(_WORD.findall(text))
    vocab: dict[str, None] = dict.fromkeys([*CAUSAL_SPECIAL_TOKENS, *ANSWER_WORDS])
    room = max(0, vocab_size - len(vocab))
    vocab.update(dict.fromkeys(sorted(counts, key=lambda w: (-counts[w], w))[:room]))
    return {token: i for i, token in enumerate(vocab)}


def train_tiny_causal_tokenizer(
    texts: Iterable[str], vocab_size: int = 1024, *, chat_template: bool = True
) -> Any:
    """A deterministic word-level fast tokenizer: specials, answer words, then ``texts``' most
    frequent words."""
    from tokenizers import Tokenizer, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast

    vocab = _vocab(texts, vocab_size)
    backend = Tokenizer(models.WordLevel(vocab=vocab, unk_token="<unk>"))
    backend.pre_tokenizer = pre_tokenizers.Sequence(
        [pre_tokenizers.WhitespaceSplit(), pre_tokenizers.Punctuation()]
    )
    tokenizer = PreTrainedTokenizerFast(
        tokenizer_object=backend,
        unk_token="<unk>",
        pad_token="<pad>",
        eos_token="<|end|>",
        additional_special_tokens=["<|user|>", "<|assistant|>"],
        model_input_names=["input_ids", "attention_mask"],
        model_max_length=512,
    )
    if chat_template:
        tokenizer.chat_template = TINY_CHAT_TEMPLATE
    return tokenizer


@declared
def build_tiny_causal_lm(
    out_dir: PathArg,
    texts: Iterable[str],
    *,
    seed: int = 0,
    vocab_size: int = 1024,
    chat_template: bool = True,
    arch: Literal["llama", "gpt2"] = "llama",
) -> Path:
    """Save a tiny causal LM (2 layers, hidden 32) and its tokenizer; ``arch="gpt2"`` has absolute
    positions (where left padding needs position ids). The caller's torch RNG is left untouched.

    >>> path = build_tiny_causal_lm("/tmp/tiny-causal", ["Men are rational."])   # doctest: +SKIP
    """
    import torch
    from transformers import GenerationConfig

    tokenizer = train_tiny_causal_tokenizer(texts, vocab_size, chat_template=chat_template)
    ids: dict[str, Any] = {
        "pad_token_id": tokenizer.pad_token_id,
        "eos_token_id": tokenizer.eos_token_id,
        "bos_token_id": None,
        "vocab_size": len(tokenizer),
        "tie_word_embeddings": False,
    }
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        if arch == "llama":
            from transformers import LlamaConfig, LlamaForCausalLM

            config = LlamaConfig(
                hidden_size=32, intermediate_size=64, num_hidden_layers=2, num_attention_heads=2,
                num_key_value_heads=2, max_position_embeddings=512, **ids,
            )  # fmt: skip
            model: Any = LlamaForCausalLM(config)
        else:
            from transformers import GPT2Config, GPT2LMHeadModel

            model = GPT2LMHeadModel(GPT2Config(n_embd=32, n_layer=2, n_head=2, n_positions=512, **ids))
        with torch.no_grad():  # larger logits so answers differ visibly between prompts
            model.lm_head.weight.normal_(0.0, 0.5)
    model.generation_config = GenerationConfig(
        eos_token_id=tokenizer.eos_token_id, pad_token_id=tokenizer.pad_token_id
    )
    return save_model(model, tokenizer, out_dir)
