"""Forward passes behind scored answers of causal LMs: plain left-padded batches, or staged ones
whose shared prefixes are computed once (docs/generative.md, "Shared prompt prefixes").

>>> [t.tolist() for t in padded_tensors([[5, 6], [7]], 0, "cpu", left=True)]
[[[5, 6], [0, 7]], [[1, 1], [0, 1]]]
"""

from __future__ import annotations

import inspect
from collections.abc import Sequence
from typing import Any

import numpy as np

from nlibias.models.generative.prefix_sharing import Stage
from nlibias.models.generative.records import AnswerRecord

STAGED_ATTENTION = ("sdpa", "eager")
"""Attention implementations known to honour a mask with padding between segments."""


def padded_tensors(
    segments: Sequence[Sequence[int]], pad_id: int, device: str = "cpu", *, left: bool = False
) -> tuple[Any, Any]:
    """Token lists padded to the longest, on the right (or the ``left``, to continue them):
    ``(ids, mask)`` long tensors on ``device``."""
    import torch

    width = max((len(s) for s in segments), default=0)
    ids: list[list[int]] = []
    mask: list[list[int]] = []
    for segment in segments:
        pad, real = [pad_id] * (width - len(segment)), [int(t) for t in segment]
        ids.append(pad + real if left else real + pad)
        mask.append([0] * len(pad) + [1] * len(real) if left else [1] * len(real) + [0] * len(pad))
    return torch.tensor(ids, dtype=torch.long, device=device), torch.tensor(
        mask, dtype=torch.long, device=device
    )


def plain_last_logits(model: Any, sequences: Sequence[Sequence[int]], pad_id: int, device: str) -> Any:
    """Next-token logits after each sequence, one left-padded forward pass: ``[rows, vocab]``."""
    input_ids, mask = padded_tensors(sequences, pad_id, device, left=True)
    positions = (mask.cumsum(-1) - 1).clamp(min=0)
    return model(input_ids=input_ids, attention_mask=mask, position_ids=positions, logits_to_keep=1).logits[
        :, -1, :
    ]


def next_token_log_probs(model: Any, ids: Any, mask: Any) -> Any:
    """log P(token t | tokens before t), t >= 1, of right-padded ``ids``: ``[rows, width - 1]``
    (float32, or float64 for a float64 model)."""
    import torch

    logits = model(input_ids=ids, attention_mask=mask).logits[:, :-1]
    logits = logits if logits.dtype == torch.float64 else logits.float()
    return logits.gather(2, ids[:, 1:, None]).squeeze(-1) - torch.logsumexp(logits, dim=-1)


def cache_keyword(model: Any) -> str:
    """``cache`` from transformers 5.24 on, ``past_key_values`` before."""
    return "cache" if "cache" in inspect.signature(model.forward).parameters else "past_key_values"


def staged_last_logits(model: Any, stages: Sequence[Stage], pad_id: int, device: str) -> Any:
    """Next-token logits after each node of the last stage, the stages run on one cache."""
    import torch

    keyword = cache_keyword(model)
    cache: Any = None
    mask: Any = None
    seen: Any = None
    logits: Any = None
    for stage in stages:
        input_ids, segment_mask = padded_tensors(stage.segments, pad_id, device, left=True)
        if stage.parents is None:
            full_mask, offset = (
                segment_mask,
                torch.zeros(len(stage.segments), dtype=torch.long, device=device),
            )
        else:
            parents = torch.tensor(stage.parents, dtype=torch.long, device=device)
            cache.reorder_cache(parents)  # copies each parent's cached keys/values to its children
            full_mask = torch.cat([mask.index_select(0, parents), segment_mask], dim=-1)
            offset = seen.index_select(0, parents)
        positions = offset[:, None] + (segment_mask.cumsum(-1) - 1).clamp(min=0)
        output = model(
            input_ids=input_ids,
            attention_mask=full_mask,
            position_ids=positions,
            use_cache=True,
            logits_to_keep=1,
            **{keyword: cache},
        )
        cache, mask, seen = output[keyword], full_mask, offset + segment_mask.sum(-1)
        logits = output.logits[:, -1, :]
    return logits


def supports_staged_forward(model: Any) -> bool:
    """Whether :func:`staged_last_logits` gives the same answers as the plain pass for ``model``."""
    try:
        from transformers import DynamicCache

        cache = DynamicCache(config=model.config)
    except Exception:  # an unusual config: keep to the plain pass
        return False
    if getattr(model.config, "_attn_implementation", None) not in STAGED_ATTENTION:
        return False
    flags = [getattr(cache, name, []) for name in ("is_sliding", "is_linear", "is_dummy")]
    return len(cache.layers) > 0 and not any(any(f) for f in flags)


def answer_records(
    logits: Any, token_ids: dict[str, tuple[int, ...]], answers: tuple[str, ...]
) -> list[AnswerRecord]:
    """Scored answer records from next-token logits ``[rows, vocab]``."""
    import torch

    logprobs = torch.log_softmax(logits.float(), dim=-1)
    word_logprobs = torch.stack(
        [torch.logsumexp(logprobs[:, list(token_ids[w])], dim=-1) for w in answers], dim=-1
    )
    mass = word_logprobs.exp().sum(-1)
    probs = torch.softmax(word_logprobs, dim=-1)
    probs_np = probs.cpu().numpy().astype(np.float64)
    mass_np = mass.cpu().numpy()
    return [
        AnswerRecord(
            answers[int(np.argmax(row))],
            probs={w: float(row[k]) for k, w in enumerate(answers)},
            answer_mass=float(total),
        )
        for row, total in zip(probs_np, mass_np, strict=True)
    ]
