"""BBNLI's subtopic JSON files expanded into samples as the reference ``json2csv.py`` does, so
counts compare with the paper's; repeated NLI samples are dropped (bias ones by formulation,
premise and hypothesis, test ones by premise, hypothesis and label, within a subtopic).

>>> from nlibias.benchmarks.bbnli_source import BBNLI_DATA
>>> from nlibias.benchmarks.data_locations import resolve_data
>>> expansion = expand_bbnli(resolve_data(BBNLI_DATA))  # doctest: +SKIP
>>> len(expansion.bias_samples), len(expansion.test_samples)   # doctest: +SKIP
(2276, 858)
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from nlibias.benchmarks.bbnli_json import FORMULATIONS as FORMULATIONS
from nlibias.benchmarks.bbnli_json import BBNLISubtopic as BBNLISubtopic
from nlibias.benchmarks.bbnli_json import BBNLITemplate as BBNLITemplate
from nlibias.benchmarks.bbnli_json import Formulation as Formulation
from nlibias.benchmarks.bbnli_json import load_bbnli_dir as load_bbnli_dir
from nlibias.benchmarks.bbnli_json import load_bbnli_json as load_bbnli_json
from nlibias.benchmarks.templating import render
from nlibias.schema import Sample

SOURCE = "bbnli"


@dataclass(frozen=True)
class Expansion:
    """Samples of a benchmark source with what a user must know about them."""

    samples: tuple[Sample, ...]
    degenerate_pairs: tuple[str, ...] = ()
    """Pair keys whose pro and anti samples have identical texts."""
    unpaired: tuple[str, ...] = ()
    """Ids of bias samples with no group-swapped twin."""
    warnings: tuple[str, ...] = ()
    sources: tuple[str, ...] = field(default=())
    origin: str | None = None
    """The path expanded (the summary's ``source``)."""

    @property
    def bias_samples(self) -> list[Sample]:
        return [s for s in self.samples if s.is_bias_sample]

    @property
    def test_samples(self) -> list[Sample]:
        return [s for s in self.samples if not s.is_bias_sample]

    @property
    def n_pairs(self) -> int:
        return len({s.pair_key for s in self.samples if s.pair_key is not None and s.id not in self.unpaired})

    def summary(self) -> dict[str, Any]:
        """Per-subtopic counts, totals, warnings, the degenerate pair keys and the unpaired ids
        (``expansion.json``)."""
        rows = self.counts_by_subtopic()
        keys = ("bias", "pairs", "degenerate_pairs", "unpaired", "test")
        return {
            "source": self.origin,
            "subtopics": rows,
            "totals": {key: sum(r[key] for r in rows) for key in keys},
            "warnings": list(self.warnings),
            "degenerate_pair_keys": list(self.degenerate_pairs),
            "unpaired_ids": list(self.unpaired),
        }

    def counts_by_subtopic(self) -> list[dict[str, Any]]:
        """One row per subtopic: domain, bias samples, pairs, degenerate pairs, unpaired, test samples."""
        by_subtopic: dict[str, list[Sample]] = {}
        for sample in self.samples:
            by_subtopic.setdefault(sample.subtopic, []).append(sample)
        rows = []
        for subtopic, members in by_subtopic.items():
            bias = [s for s in members if s.is_bias_sample]
            paired = {s.pair_key for s in bias if s.pair_key is not None and s.id not in self.unpaired}
            rows.append(
                {
                    "domain": members[0].domain,
                    "subtopic": subtopic,
                    "bias": len(bias),
                    "pairs": len(paired),
                    "degenerate_pairs": len(paired & set(self.degenerate_pairs)),
                    "unpaired": sum(s.id in self.unpaired for s in bias),
                    "test": len(members) - len(bias),
                }
            )
        return rows


def pair_key(subtopic: str, premise_index: int, combination_index: int, template_index: int) -> str:
    return f"{SOURCE}:{subtopic}:p{premise_index:02d}:c{combination_index:03d}:h{template_index}"


@dataclass(frozen=True)
class _Rendering:
    """One premise of a subtopic under one word combination, in both formulations."""

    sub: BBNLISubtopic
    premise_index: int
    combination_index: int
    values: dict[Formulation, dict[str, str]]
    """Placeholder values by formulation (anti swaps the groups)."""
    premises: dict[Formulation, str]
    provenance: dict[str, Any]

    def sample(
        self,
        formulation: Formulation,
        template: BBNLITemplate,
        hypothesis: str,
        sample_id: str,
        pair_key: str | None,
    ) -> Sample:
        """``template`` rendered as ``hypothesis`` under ``formulation``: a bias sample when it has a
        ``pair_key``, else a test sample."""
        values = self.values[formulation]
        provenance = {
            **self.provenance,
            "formulation": formulation,
            "template_index": template.index,
            "hypothesis_template": template.text,
        }
        if pair_key is not None:
            provenance["bias_label"] = template.bias_label
        provenance["question"] = render(template.question or "", values) or None
        return Sample(
            id=sample_id,
            source=SOURCE,
            domain=self.sub.domain,
            subtopic=self.sub.subtopic,
            premise=self.premises[formulation],
            hypothesis=hypothesis,
            gold=template.label,
            group=values["GROUP1"],
            counterfactual_group=values["GROUP2"],
            stereotype=formulation if pair_key is not None else None,
            pair_key=pair_key,
            provenance=provenance,
        )


def _renderings(sub: BBNLISubtopic) -> Iterator[_Rendering]:
    """Every premise under every word combination, in the reference's order."""
    for p_index, premise_template in enumerate(sub.premises):
        reference = sub.references[p_index] if p_index < len(sub.references) else None
        for c_index, words in enumerate(sub.combinations()):
            values = {f: sub.values(words, f) for f in FORMULATIONS}
            yield _Rendering(
                sub,
                p_index,
                c_index,
                values,
                premises={f: render(premise_template, values[f]) for f in FORMULATIONS},
                provenance={
                    "premise_index": p_index,
                    "combination_index": c_index,
                    "words": words,
                    "premise_template": premise_template,
                    "reference": reference,
                    "file": sub.path,
                },
            )


def _bias_pairs(
    rendering: _Rendering, seen: set[tuple[str, str, str]], degenerate: list[str]
) -> Iterator[Sample]:
    """The pro and anti samples of each bias template not already emitted; a pair whose two texts
    are identical is appended to ``degenerate``."""
    sub, premises = rendering.sub, rendering.premises
    for template in sub.bias_hypotheses:
        texts = {f: render(template.text, rendering.values[f]) for f in FORMULATIONS}
        keys = {f: (f, premises[f], texts[f]) for f in FORMULATIONS}
        if keys["pro"] in seen:  # then its anti twin is a repeat too
            continue
        seen.update(keys.values())
        key = pair_key(sub.subtopic, rendering.premise_index, rendering.combination_index, template.index)
        if premises["pro"] == premises["anti"] and texts["pro"] == texts["anti"]:
            degenerate.append(key)
        for f in FORMULATIONS:
            yield rendering.sample(f, template, texts[f], f"{key}:{f}", key)


def _test_samples(rendering: _Rendering, seen: set[tuple[str, str, str]]) -> Iterator[Sample]:
    """The samples of each test template under each formulation, unique by (premise, hypothesis,
    true label)."""
    prefix = (
        f"{SOURCE}:{rendering.sub.subtopic}:test:"
        f"p{rendering.premise_index:02d}:c{rendering.combination_index:03d}"
    )
    for template in rendering.sub.test_hypotheses:
        for f in FORMULATIONS:
            text = render(template.text, rendering.values[f])
            test_key = (rendering.premises[f], text, template.label)
            if test_key in seen:
                continue
            seen.add(test_key)
            yield rendering.sample(f, template, text, f"{prefix}:t{template.index}:{f}", None)


def expand_subtopic(sub: BBNLISubtopic) -> tuple[list[Sample], list[str]]:
    """Samples of one subtopic (bias pairs first, then test samples) and its degenerate pair keys."""
    bias_samples: list[Sample] = []
    test_samples: list[Sample] = []
    seen_bias: set[tuple[str, str, str]] = set()
    seen_test: set[tuple[str, str, str]] = set()
    degenerate: list[str] = []
    for rendering in _renderings(sub):
        bias_samples.extend(_bias_pairs(rendering, seen_bias, degenerate))
        test_samples.extend(_test_samples(rendering, seen_test))
    return bias_samples + test_samples, degenerate


def domain_folder_warnings(subtopics: Sequence[BBNLISubtopic], root: Path) -> tuple[str, ...]:
    """A warning when a subtopic file's ``domain`` differs from its folder (the file's is used).

    >>> sub = BBNLISubtopic("d/race/x.json", "x", "x", "gender", (), (), (), {}, "a", "b")
    >>> domain_folder_warnings([sub], Path("d"))[0][:57]
    '1 subtopic file(s) whose domain differs from their folder'
    """
    mismatched = []
    for sub in subtopics:
        folder = Path(sub.path).parent
        if folder != root and folder.name and folder.name.lower() != sub.domain.lower():
            mismatched.append(f"{sub.path} says {sub.domain!r}, folder {folder.name!r}")
    if not mismatched:
        return ()
    return (
        f"{len(mismatched)} subtopic file(s) whose domain differs from their folder (the file's "
        f"domain is used): {'; '.join(mismatched)}",
    )


def degenerate_warning(degenerate: Sequence[str]) -> str:
    per_subtopic = Counter(key.split(":")[1] for key in degenerate)
    detail = ", ".join(f"{name} {count}" for name, count in sorted(per_subtopic.items()))
    return (
        f"{len(degenerate)} degenerate pairs ({detail}): their templates name the groups literally, "
        f"so the pro and anti texts are identical. They are kept, as the reference does; "
        f"exclude them with the pair keys listed in the expansion summary if you prefer."
    )


def expand_bbnli(source: str | Path) -> Expansion:
    """Expand a BBNLI JSON directory or file, or BBNLI's expanded CSV (:mod:`~nlibias.benchmarks.bbnli_csv`)."""
    source = Path(source)
    if source.is_file() and source.suffix.lower() == ".csv":
        from nlibias.benchmarks.bbnli_csv import read_bbnli_csv  # it imports this module

        return read_bbnli_csv(source)
    subtopics = load_bbnli_dir(source)
    expanded = [expand_subtopic(sub) for sub in subtopics]
    samples = [sample for found, _ in expanded for sample in found]
    degenerate = [key for _, keys in expanded for key in keys]
    warnings: tuple[str, ...] = (degenerate_warning(degenerate),) if degenerate else ()
    warnings += domain_folder_warnings(subtopics, source)
    return Expansion(
        samples=tuple(samples),
        degenerate_pairs=tuple(degenerate),
        warnings=warnings,
        sources=tuple(s.path for s in subtopics),
    )
