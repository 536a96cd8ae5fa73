"""Multiple-choice questions scored by a causal LM: each option's summed log-probability after the
prompt (computed once, its cache shared; a server's completions API echoes them, one request a
question), or ``per-byte`` (as lm-eval's ``acc_bytes``).

>>> from nlibias.models.generative.backend import FakeGenerativeBackend
>>> batch = next(option_batches(FakeGenerativeBackend(), ["Who?"], [("A", "B b", "C")]))
>>> batch.indices, len(batch.scores[0].logprobs), batch.scores[0].tokens
([0], 3, (1, 2, 1))
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

from nlibias.errors import ConfigError
from nlibias.models.batching import plan_batches
from nlibias.models.generative.backend import FakeGenerativeBackend
from nlibias.models.generative.defaults import OptionScore
from nlibias.models.generative.hf_causal import HFCausalLM
from nlibias.models.generative.openai_http import OpenAICompatibleLM
from nlibias.models.generative.prefix_sharing import common_prefix_length
from nlibias.models.generative.scoring import cache_keyword, padded_tensors
from nlibias.models.tp.server import ServerScorer


def choose_option(logprobs: Sequence[float], options: Sequence[str], score: OptionScore = "total") -> int:
    """The option with the highest total log-probability, or per byte of its text.

    >>> choose_option((-2.0, -3.0), ["a", "bbbbbb"])  # -2 > -3
    0
    >>> choose_option((-2.0, -3.0), ["a", "bbbbbb"], "per-byte")  # -2/1 < -3/6
    1
    """
    values = list(logprobs)
    if score == "per-byte":
        values = [lp / len(o.encode()) for lp, o in zip(values, options, strict=True)]
    return max(range(len(values)), key=values.__getitem__)


@dataclass(frozen=True)
class OptionScores:
    """Each option's summed log-probability and token count, for one question."""

    logprobs: tuple[float, ...]
    tokens: tuple[int, ...]

    def choice(self, options: Sequence[str], score: OptionScore = "total") -> int:
        """:func:`choose_option` of these scores."""
        return choose_option(self.logprobs, options, score)

    def to_json(self) -> dict[str, Any]:
        return {"logprobs": list(self.logprobs), "tokens": list(self.tokens)}

    @classmethod
    def from_json(cls, record: Mapping[str, Any]) -> OptionScores:
        return cls(tuple(float(v) for v in record["logprobs"]), tuple(int(v) for v in record["tokens"]))


@dataclass(frozen=True)
class OptionBatch:
    """Scores of some of the questions asked (``indices``: their positions)."""

    indices: list[int]
    scores: list[OptionScores]
    real_tokens: int = 0
    padded_tokens: int = 0
    """Tokens run through the model with padding (prompts and options)."""


def option_batches(
    backend: Any, prompts: Sequence[str], options: Sequence[Sequence[str]]
) -> Iterator[OptionBatch]:
    """Score each question's options, questions of similar prompt lengths batched."""
    if isinstance(backend, FakeGenerativeBackend):
        for i, (prompt, opts) in enumerate(zip(prompts, options, strict=True)):
            backend.calls += 1
            yield OptionBatch([i], [_fake_scores(backend, prompt, opts)])
        return
    if echoes_options(backend):
        yield from _server_batches(backend, prompts, options)
        return
    model, tokenizer = backend.load()
    split = [_split(backend, tokenizer, prompt, opts) for prompt, opts in zip(prompts, options, strict=True)]
    for planned in plan_batches(
        [len(prefix) for prefix, _ in split],
        max_tokens=backend.max_batch_tokens,
        max_batch_size=backend.max_batch_size,
    ):
        batch = sorted(planned.tolist())  # the questions in the order asked
        prefixes, tails = [split[j][0] for j in batch], [split[j][1] for j in batch]
        logprobs = _tail_logprobs(model, prefixes, tails, int(tokenizer.pad_token_id), backend.device)
        scores = [
            OptionScores(tuple(lp), tuple(len(t) for t in ts)) for lp, ts in zip(logprobs, tails, strict=True)
        ]
        real = sum(len(p) + sum(len(t) for t in ts) for p, ts in zip(prefixes, tails, strict=True))
        flat = [t for ts in tails for t in ts]
        padded = len(prefixes) * max(map(len, prefixes)) + len(flat) * max(map(len, flat))
        yield OptionBatch(batch, scores, real, padded)


def echoes_options(backend: Any) -> bool:
    """Whether a server's completions API scores ``backend``'s options from its echo; a backend that
    can score none (a chat API cannot echo a prompt) is refused."""
    server = isinstance(backend, OpenAICompatibleLM) and backend.api == "completions"
    if not server and not isinstance(backend, HFCausalLM | FakeGenerativeBackend):
        raise ConfigError(
            f"{backend.name}: scoring multiple-choice options needs a model loaded here (smollm2, hf:, gguf:) "
            "or a server's completions API, which echoes prompt log-probabilities (openai-completions:URL#MODEL; "
            "the chat API, openai:, cannot); ask a chat server with {mode} generated",
            parameter="mode",
        )
    return server


def _server_batches(
    backend: OpenAICompatibleLM, prompts: Sequence[str], options: Sequence[Sequence[str]]
) -> Iterator[OptionBatch]:
    """One echo request a question (its options as a list of prompts), ``concurrency`` at once; an
    option's tokens start at the first that ends past the prompt's text, as :func:`_split` counts a
    token straddling both for the option."""
    scorer = ServerScorer(
        backend.client.base_url, backend.model, concurrency=backend.concurrency, client=backend.client
    )
    backend.check_served_model()
    scorer.check_alignment()  # a server shifting its echoed log-probabilities by one is refused

    def ask(question: tuple[str, Sequence[str]]) -> OptionScores:
        echoed = scorer.echo_continuations(backend.format_prompt(question[0]), question[1])
        return OptionScores(
            tuple(sum(v or 0.0 for v in values) for _, values in echoed), tuple(len(t) for t, _ in echoed)
        )

    with ThreadPoolExecutor(scorer.concurrency, thread_name_prefix="nlibias-http") as pool:
        for i, scores in enumerate(pool.map(ask, zip(prompts, options, strict=True))):
            yield OptionBatch([i], [scores])


def _split(
    backend: Any, tokenizer: Any, prompt: str, options: Sequence[str]
) -> tuple[list[int], list[list[int]]]:
    """A question's shared tokens and each option's own tokens (at least one)."""
    prefix_text = backend.format_prompt(prompt)
    encoded = tokenizer(
        [prefix_text, *(prefix_text + option for option in options)], add_special_tokens=not backend.chat
    )
    prefix, *full = (list(ids) for ids in encoded["input_ids"])
    shared = min([len(prefix), *(common_prefix_length(prefix, f) for f in full), *(len(f) - 1 for f in full)])
    return prefix[:shared], [f[shared:] for f in full]


def _tail_logprobs(
    model: Any, prefixes: list[list[int]], tails: list[list[list[int]]], pad_id: int, device: str
) -> list[list[float]]:
    """Each tail's summed log-probability after its question's prefix: the prefixes run once, each
    prefix's cache copied to its tails, which run as one right-padded batch."""
    import torch

    keyword = cache_keyword(model)
    parents = [q for q, question in enumerate(tails) for _ in question]
    flat = [tail for question in tails for tail in question]
    width = max(len(t) for t in flat)
    with torch.inference_mode():
        ids, mask = padded_tensors(prefixes, pad_id, device, left=True)
        positions = (mask.cumsum(-1) - 1).clamp(min=0)
        out = model(
            input_ids=ids, attention_mask=mask, position_ids=positions, use_cache=True, logits_to_keep=1
        )
        first = torch.log_softmax(out.logits[:, -1].float(), dim=-1)
        cache = out[keyword]
        rows = torch.tensor(parents, dtype=torch.long, device=device)
        cache.reorder_cache(rows)  # one copy of its question's prefix per tail
        tail_ids, tail_mask = padded_tensors(flat, pad_id, device)
        full_mask = torch.cat([mask.index_select(0, rows), tail_mask], dim=-1)
        tail_positions = mask.sum(-1).index_select(0, rows)[:, None] + torch.arange(width, device=device)
        logits = model(
            input_ids=tail_ids, attention_mask=full_mask, position_ids=tail_positions, **{keyword: cache}
        ).logits
        rest = torch.log_softmax(logits.float(), dim=-1)
    found: list[list[float]] = [[] for _ in tails]
    for row, (parent, tail) in enumerate(zip(parents, flat, strict=True)):
        total = float(first[parent, tail[0]])
        total += sum(float(rest[row, k - 1, token]) for k, token in enumerate(tail) if k > 0)
        found[parent].append(total)
    return found


def _fake_scores(backend: Any, prompt: str, options: Sequence[str]) -> OptionScores:

    def score(option: str) -> float:
        digest = hashlib.sha256(f"{backend.seed}\x00{prompt}\x00{option}".encode()).digest()
        return -1.0 - int.from_bytes(digest[:4], "big") % 1000 / 100.0

    return OptionScores(tuple(score(o) for o in options), tuple(len(o.split()) for o in options))
