"""Counterfactual expansion: every surviving sample gets its group-swapped twin, re-rendered from
its template (never by string substitution: "men" is inside "women"); a pair shares a ``pair_key``,
and a pair judged with one stereotype twice is dropped and counted."""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from nlibias.benchmarks.bbnli import BBNLISubtopic, Formulation
from nlibias.benchmarks.templating import render
from nlibias.errors import NlibiasError
from nlibias.extension.masked_templates import MASK, SOURCE
from nlibias.extension.validation_handoff import Judgement, hypothesis_id
from nlibias.schema import Sample, Stereotype

_OTHER_FORMULATION: dict[str, Formulation] = {"pro": "anti", "anti": "pro"}
_OPPOSITE: dict[str, Stereotype] = {"pro": "anti", "anti": "pro"}
_COUNTS = (
    "pairs",
    "pairs_both_survived",
    "twins_added",
    "twins_were_candidates",
    "twins_mispredicted",
    "twins_judged_not_valid",
    "conflicting_pairs_dropped",
    "degenerate_dropped",
)
_CANDIDATE_ONLY = ("kept", "mispredicted_by", "filter", "validation", "fill_rank", "lm_score", "vocab_rank")


def pair_key(subtopic: str, premise: str, hypothesis_a: str, hypothesis_b: str) -> str:
    """Key shared by a sample and its twin (order of the two hypotheses does not matter).

    >>> pair_key("s", "P.", "A.", "B.") == pair_key("s", "P.", "B.", "A.")
    True
    """
    first, second = sorted((hypothesis_a, hypothesis_b))
    digest = hashlib.sha256(f"{subtopic}\0{premise}\0{first}\0{second}".encode()).hexdigest()[:16]
    return f"{SOURCE}:{subtopic}:{digest}"


def render_filled(sample: Sample, subtopic: BBNLISubtopic, formulation: Formulation) -> str:
    """The sample's filled masked template rendered with the groups of ``formulation``."""
    provenance = sample.provenance
    filled = str(provenance["masked_template"]).replace(MASK, str(provenance["fill_word"]))
    return render(filled, subtopic.values(dict(provenance["words"]), formulation))


@dataclass(frozen=True)
class CounterfactualResult:
    samples: list[Sample]
    """Each pair's two members next to each other."""
    stats: dict[str, Any]


def expand_counterfactuals(
    accepted: Sequence[Sample],
    subtopics: Mapping[str, BBNLISubtopic],
    *,
    candidates: Sequence[Sample] = (),
    judgements: Mapping[str, Judgement] | None = None,
) -> CounterfactualResult:
    """Pair every accepted sample with its twin; ``candidates`` give a generated twin its filter
    predictions, ``judgements`` its own judgement."""
    index = {(s.subtopic, s.premise, s.hypothesis): s for s in accepted}
    candidate_index = {(c.subtopic, c.premise, c.hypothesis): c for c in candidates}
    done: set[str] = set()
    out: list[Sample] = []
    stats: dict[str, Any] = {"accepted": len(accepted), **dict.fromkeys(_COUNTS, 0)}
    for sample in accepted:
        subtopic = subtopics[sample.subtopic]
        twin_text = _twin_text(sample, subtopic)
        if twin_text == sample.hypothesis:
            stats["degenerate_dropped"] += 1
            continue
        key = pair_key(sample.subtopic, sample.premise, sample.hypothesis, twin_text)
        if key in done:
            continue
        done.add(key)
        partner = index.get((sample.subtopic, sample.premise, twin_text))
        if partner is not None and partner.stereotype == sample.stereotype:
            stats["conflicting_pairs_dropped"] += 1
            continue
        if partner is not None:
            stats["pairs_both_survived"] += 1
            out += [_paired(sample, key, added=False), _paired(partner, key, added=False)]
        else:
            twin = _twin(sample, subtopic, twin_text, candidate_index, judgements)
            _count_twin(stats, twin)
            out += [_paired(sample, key, added=False), _paired(twin, key, added=True)]
        stats["pairs"] += 1
    stats["samples"] = len(out)
    return CounterfactualResult(samples=out, stats=stats)


def _twin_text(sample: Sample, subtopic: BBNLISubtopic) -> str:
    """The sample's hypothesis with the groups exchanged (refused when its template does not give it)."""
    formulation: Formulation = sample.provenance["formulation"]
    if render_filled(sample, subtopic, formulation) != sample.hypothesis:
        raise NlibiasError(
            f"{sample.id}: re-rendering its filled template does not give its hypothesis "
            f"({sample.hypothesis!r}); the candidate files do not match the templates"
        )
    return render_filled(sample, subtopic, _OTHER_FORMULATION[formulation])


def _count_twin(stats: dict[str, Any], twin: Sample) -> None:
    stats["twins_added"] += 1
    if twin.provenance.get("filter") is not None:
        stats["twins_were_candidates"] += 1
        if twin.provenance.get("mispredicted_by", 0):
            stats["twins_mispredicted"] += 1
    if twin.provenance.get("twin_judgement") not in (None, "valid"):
        stats["twins_judged_not_valid"] += 1


def _paired(member: Sample, key: str, *, added: bool) -> Sample:
    """A pair member under its pair's key (``<key>:pro`` or ``<key>:anti``)."""
    stereotype = member.stereotype or "pro"
    candidate_id = member.provenance.get("candidate_id_of_twin") if added else member.id
    return replace(
        member,
        id=f"{key}:{stereotype}",
        pair_key=key,
        provenance={**dict(member.provenance), "candidate_id": candidate_id, "added_as_twin": added},
    )


def _twin(
    sample: Sample,
    subtopic: BBNLISubtopic,
    twin_text: str,
    candidate_index: Mapping[tuple[str, str, str], Sample],
    judgements: Mapping[str, Judgement] | None,
) -> Sample:
    formulation = _OTHER_FORMULATION[sample.provenance["formulation"]]
    values = subtopic.values(dict(sample.provenance["words"]), formulation)
    provenance: dict[str, Any] = {k: v for k, v in sample.provenance.items() if k not in _CANDIDATE_ONLY}
    provenance.update(formulation=formulation, counterfactual_of=sample.id, filter=None, mispredicted_by=None)
    as_candidate = candidate_index.get((sample.subtopic, sample.premise, twin_text))
    if as_candidate is not None:
        for name in ("filter", "mispredicted_by", "fill_rank", "lm_score", "vocab_rank"):
            provenance[name] = as_candidate.provenance.get(name)
        provenance["candidate_id_of_twin"] = as_candidate.id
    judged = judgements.get(hypothesis_id(sample.subtopic, twin_text)) if judgements else None
    provenance["twin_judgement"] = judged.judgement if judged else None
    return replace(
        sample,
        hypothesis=twin_text,
        stereotype=_OPPOSITE[sample.stereotype or "pro"],
        group=values["GROUP1"],
        counterfactual_group=values["GROUP2"],
        provenance=provenance,
    )
