"""Read each "her" the swap rule has no cue for with a language model: :class:`HerResolver` scores
the swapped sentence under each reading ("him", "his") and keeps the likelier (a tie: the rule's).

>>> from nlibias.debias.swap import Swapper
>>> from nlibias.debias.wordlists import winobias_list
>>> plan = Swapper(winobias_list()).plan("She sent her flowers.")
>>> [plan.render(picks)[0] for picks in candidate_picks(plan)]
['He sent his flowers.', 'He sent him flowers.']
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from typing import Annotated, Any, Literal

from nlibias.debias.swap import SwapPlan
from nlibias.models.mlm.model_names import loading_as
from nlibias.models.tp.hf import HFCausalScorer, HFMaskedScorer
from nlibias.schema.applies import AppliesTo
from nlibias.schema.declared import declared
from nlibias.schema.model_ref import CAUSAL_LM_KINDS, ModelRef

HerChoice = Literal["rule", "lm"]
DEFAULT_HER_MODEL = "smollm2"
MAX_JOINT = 4
"""Open "her"s of one text scored jointly (2**4 = 16 candidates at most); beyond, one at a time."""


def candidate_picks(plan: SwapPlan) -> list[tuple[int, ...]]:
    """The option picks to score for ``plan``, the rule's reading (all zeros) first."""
    base = [0] * len(plan.options)
    open_ = plan.open
    if len(open_) <= MAX_JOINT:
        combos = list(itertools.product((0, 1), repeat=len(open_)))
    else:  # the rule's reading, then each open "her" flipped alone
        combos = [tuple(int(j == k) for j in range(len(open_))) for k in range(-1, len(open_))]
    picks = []
    for combo in combos:
        chosen = list(base)
        for slot, pick in zip(open_, combo, strict=True):
            chosen[slot] = pick
        picks.append(tuple(chosen))
    return list(dict.fromkeys(picks))


class HerResolver:
    """A sentence scorer reading open "her"s; :meth:`load` builds one from a model name."""

    def __init__(self, scorer: Any, *, spec: str) -> None:
        self.scorer = scorer
        self.spec = spec

    @classmethod
    def load(cls, spec: str = DEFAULT_HER_MODEL, *, device: str | None = None) -> HerResolver:
        """``smollm2`` (embedded), a causal LM (a ``.gguf`` path, a directory, a hub name;
        ``causal:NAME`` also) or a masked LM as ``mlm:NAME`` (pseudo-log-likelihood)."""
        with loading_as("her_model", spec):
            ref = ModelRef.unread(spec)
            if ref.kind in ("mlm", "masked"):
                return cls(HFMaskedScorer(ref.name, device=device), spec=spec)
            return cls(HFCausalScorer(ref.named_for(CAUSAL_LM_KINDS), device=device), spec=spec)

    def identity(self) -> Mapping[str, Any]:
        """What determines the choices: the name, the scorer kind and its identity."""
        return {"spec": self.spec, "scorer": self.scorer.kind, **self.scorer.identity(), "variant": "whole"}

    def choose(self, plans: Sequence[SwapPlan]) -> list[tuple[int, ...]]:
        """The picks of each plan: the candidate sentence with the highest log-probability."""
        candidates = [candidate_picks(plan) for plan in plans]
        sentences = [plan.render(p)[0] for plan, picks in zip(plans, candidates, strict=True) for p in picks]
        scores = self._scores(sentences)
        chosen = []
        at = 0
        for plan, picks in zip(plans, candidates, strict=True):
            own = scores[at : at + len(picks)]
            at += len(picks)
            if len(plan.open) <= MAX_JOINT:
                best = max(range(len(picks)), key=lambda k: (own[k], -k))  # a tie: the earlier (rule first)
                chosen.append(picks[best])
            else:  # one at a time: flip each open "her" whose flip scores higher than the rule
                merged = list(picks[0])
                for k, alone in enumerate(picks[1:], start=1):
                    if own[k] > own[0]:
                        merged = [max(a, b) for a, b in zip(merged, alone, strict=True)]
                chosen.append(tuple(merged))
        return chosen

    def _scores(self, sentences: Sequence[str]) -> list[float]:
        """Each sentence's total log-probability (one batched scorer call)."""
        if not sentences:
            return []
        pairs = [
            (sentences[i], sentences[min(i + 1, len(sentences) - 1)]) for i in range(0, len(sentences), 2)
        ]
        scores = [0.0] * len(sentences)
        for batch in self.scorer.score_pair_batches(pairs, variant="whole"):
            for index, score in zip(batch.indices, batch.scores, strict=True):
                scores[2 * index] = score.more
                if 2 * index + 1 < len(sentences):
                    scores[2 * index + 1] = score.less
        return scores


HER_MODEL_APPLIES = AppliesTo(
    "nothing: only her='lm' reads \"her\" with a language model",
    lambda settings: settings.get("her") == "lm",
    "",
    fix="pass her='lm' too, or leave {{her_model}} out",
    names=("her",),
)
HerModel = Annotated[str | HerResolver | None, HER_MODEL_APPLIES]


@declared
def check_her(her: HerChoice = "rule", her_model: HerModel = None) -> None:
    """``her`` is one of :data:`HerChoice`; ``her_model`` only with ``her='lm'``, which reads it.

    >>> check_her("rule", "smollm2")
    Traceback (most recent call last):
    nlibias.schema.applies.InapplicableOption: her_model 'smollm2' applies to nothing: only her='lm' reads "her" with a language model; pass her='lm' too, or leave her_model out
    """
