"""Masked samples: masked templates expanded against the BBNLI premises and word lists as
:func:`nlibias.benchmarks.bbnli.expand_subtopic` does, the ``<mask>`` kept, with the words a fill
must not repeat."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from nlibias.benchmarks.bbnli import FORMULATIONS, BBNLISubtopic, Formulation
from nlibias.benchmarks.templating import PLACEHOLDER, render
from nlibias.extension.masked_templates import MaskedTemplate

SOURCE = "bbnli-next"


@dataclass(frozen=True)
class MaskedSample:
    """A premise with a masked hypothesis, one formulation of one masked template."""

    id: str
    """``bbnli-next:<template id>:p<premise>:c<combination>:<formulation>``."""
    domain: str
    subtopic: str
    template_id: str
    template_index: int
    formulation: Formulation
    """``pro``: groups as in the source file; ``anti``: groups swapped (premise and hypothesis)."""
    premise_index: int
    combination_index: int
    premise: str
    hypothesis: str
    """The rendered hypothesis, still holding exactly one ``<mask>``."""
    exclude: tuple[str, ...]
    """Lower-cased words the fill must skip (the template's original word(s) in this rendering)."""
    group: str
    counterfactual_group: str
    masked_template: str = ""
    """The masked template (placeholders unrendered)."""
    bbnli_template: str = ""
    """The BBNLI bias-hypothesis template it derives from."""
    words: Mapping[str, str] = field(default_factory=dict)
    """The word-list combination (without groups): re-rendering with it gives the twin."""

    def to_dict(self) -> dict[str, Any]:
        return {**asdict(self), "exclude": list(self.exclude)}

    @classmethod
    def from_dict(cls, record: Mapping[str, Any]) -> MaskedSample:
        values = {k: record[k] for k in cls.__dataclass_fields__ if k in record}
        values["exclude"] = tuple(values.get("exclude", ()))
        return cls(**values)


def excluded_words(
    template: MaskedTemplate, subtopic: BBNLISubtopic, values: Mapping[str, str]
) -> tuple[str, ...]:
    """Words a fill of ``template`` must not repeat: every word of a replaced list, else the original word."""
    match = PLACEHOLDER.fullmatch(template.original)
    if template.strategy == "replace_placeholder" and match:
        words = subtopic.words.get(match.group(1), ())
    else:
        words = (render(template.original, values),)
    return tuple(sorted({w.strip().lower() for w in words if w.strip()}))


def expand_template(
    template: MaskedTemplate, subtopic: BBNLISubtopic, seen: set[tuple[str, str, str]]
) -> list[MaskedSample]:
    """Masked samples of one template (pro, anti, pro, anti, ...); ``seen`` dedups within a subtopic."""
    samples: list[MaskedSample] = []
    combinations = subtopic.combinations()
    for p_index, premise_template in enumerate(subtopic.premises):
        for c_index, words in enumerate(combinations):
            values = {f: subtopic.values(words, f) for f in FORMULATIONS}
            premises = {f: render(premise_template, values[f]) for f in FORMULATIONS}
            texts = {f: render(template.text, values[f]) for f in FORMULATIONS}
            keys = {f: (f, premises[f], texts[f]) for f in FORMULATIONS}
            if keys["pro"] in seen:
                continue
            seen.update(keys.values())
            for f in FORMULATIONS:
                samples.append(
                    MaskedSample(
                        id=f"{SOURCE}:{template.id}:p{p_index:02d}:c{c_index:03d}:{f}",
                        domain=subtopic.domain,
                        subtopic=subtopic.subtopic,
                        template_id=template.id,
                        template_index=template.template_index,
                        formulation=f,
                        premise_index=p_index,
                        combination_index=c_index,
                        premise=premises[f],
                        hypothesis=texts[f],
                        exclude=excluded_words(template, subtopic, values[f]),
                        group=values[f]["GROUP1"],
                        counterfactual_group=values[f]["GROUP2"],
                        masked_template=template.text,
                        bbnli_template=subtopic.bias_hypotheses[template.template_index].text,
                        words=dict(words),
                    )
                )
    return samples


def expand_masked_templates(
    templates: Sequence[MaskedTemplate], subtopics: Sequence[BBNLISubtopic] | Mapping[str, BBNLISubtopic]
) -> list[MaskedSample]:
    """Masked samples of every template whose subtopic is in ``subtopics`` (others are ignored)."""
    by_id = dict(subtopics) if isinstance(subtopics, Mapping) else {s.subtopic: s for s in subtopics}
    seen: dict[str, set[tuple[str, str, str]]] = {}
    samples: list[MaskedSample] = []
    for template in templates:
        subtopic = by_id.get(template.subtopic)
        if subtopic is None:
            continue
        samples.extend(expand_template(template, subtopic, seen.setdefault(template.subtopic, set())))
    return samples


def masked_counts(
    samples: Sequence[MaskedSample], subtopics: Sequence[BBNLISubtopic]
) -> list[dict[str, Any]]:
    """One row per subtopic (paper Table 10): domain, subtopic, masked samples, unique masked hypotheses."""
    rows: dict[str, dict[str, Any]] = {
        s.subtopic: {"domain": s.domain, "subtopic": s.subtopic, "count": 0, "unique_hypotheses": set()}
        for s in sorted(subtopics, key=lambda s: (s.domain, s.subtopic.lower()))
    }
    for sample in samples:
        row = rows.get(sample.subtopic)
        if row is not None:
            row["count"] += 1
            row["unique_hypotheses"].add(sample.hypothesis)
    return [{**row, "unique_hypotheses": len(row["unique_hypotheses"])} for row in rows.values()]


def original_hypothesis(candidate: Any, subtopic: BBNLISubtopic) -> str:
    """The BBNLI hypothesis a fill-stage candidate was derived from (before masking and filling)."""
    provenance = candidate.provenance
    values = subtopic.values(provenance["words"], provenance["formulation"])
    return render(provenance["bbnli_template"], values)
