"""An obviously-correct causal-LM fill written from the definition of
:mod:`nlibias.models.mlm.causal_fill`, one sequence per forward pass: the tests' reference."""

from __future__ import annotations

import math
from typing import Any

from nlibias.models.mlm.hf import is_whole_word


def reference_fill(
    model: Any, tok: Any, text: str, exclude: set[str], *, top_k: int, beam: int, depth: int, pool: int
) -> tuple[list[tuple[str, int, float, int]], int]:
    """``[(word, rank, sentence log-prob, left rank)]`` and the longest candidate's token count."""
    import torch

    before, after = text.split("<mask>")
    left = before.rstrip()
    spaced = bool(left) and before != left
    bos = tok.bos_token or tok.eos_token
    specials = set(tok.all_special_ids)
    decoded = {i: tok.decode([i]) for i in range(len(tok)) if i not in specials}

    def word_chars(s: str) -> bool:
        return bool(s) and all(c.isalnum() or c in "'’-" for c in s)

    starts = {i: d[1:] for i, d in decoded.items() if d.startswith(" ") and is_whole_word(d[1:])}
    pieces = {i: d for i, d in decoded.items() if word_chars(d)}
    prefix = tok(bos + left, add_special_tokens=False)["input_ids"]

    def next_log_probs(ids: list[int]) -> Any:
        with torch.no_grad():
            return torch.log_softmax(model(torch.tensor([ids])).logits[0, -1].float(), dim=-1)

    found: dict[str, float] = {}
    beams: list[tuple[tuple[int, ...], str, float]] = [((), "", 0.0)]
    for step in range(depth + 1):
        grown = []
        for tokens, partial, score in beams:
            lp = next_log_probs(prefix + list(tokens))
            if step > 0 and is_whole_word(partial):
                ends = [i for i in range(lp.shape[0]) if i not in pieces]
                total = score + float(torch.logsumexp(lp[ends], dim=0))
                found[partial] = max(found.get(partial, -math.inf), total)
            if step < depth:
                table = starts if step == 0 and spaced else pieces
                best = sorted(table, key=lambda i: -float(lp[i]))[:beam]
                grown += [((*tokens, i), partial + table[i], score + float(lp[i])) for i in best]
        beams = sorted(grown, key=lambda b: (-b[2], b[0]))[:beam]
    ranked = sorted(found, key=lambda w: (-found[w], w))
    skip = {w.lower() for w in exclude}
    shortlist: list[tuple[str, int]] = []
    for position, word in enumerate(ranked, start=1):
        if word.lower() not in skip and word not in {w for w, _ in shortlist}:
            shortlist.append((word, position))
        if len(shortlist) == max(pool, top_k):
            break
    scored = []
    longest = 0
    for left_rank, (word, _) in enumerate(shortlist, start=1):
        ids = tok(bos + f"{left}{' ' if spaced else ''}{word}{after}", add_special_tokens=False)["input_ids"]
        with torch.no_grad():
            lp = torch.log_softmax(model(torch.tensor([ids])).logits[0].float(), dim=-1)
        scored.append((sum(float(lp[t - 1, ids[t]]) for t in range(1, len(ids))), left_rank, word))
        longest = max(longest, len(tok(" " + word, add_special_tokens=False)["input_ids"]))
    scored.sort(key=lambda s: (-s[0], s[1]))
    return [
        (w, rank, s, left_rank) for rank, (s, left_rank, w) in enumerate(scored[:top_k], start=1)
    ], longest
