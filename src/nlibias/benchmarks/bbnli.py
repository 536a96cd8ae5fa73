"""BBNLI: read the subtopic JSON files (or BBNLI's own expanded CSV) and expand them into samples.

The expansion matches the reference ``json2csv.py`` of github.com/feyzaakyurek/bbnli: for each
premise and each combination of the ``data`` word lists, a ``pro`` formulation (GROUP1 =
GROUP1[0], GROUP2 = GROUP2[0]; bias hypotheses are pro-stereotype) and an ``anti`` formulation
(groups swapped in premise and hypothesis; bias hypotheses are anti-stereotype). Duplicates are
dropped as NLI samples: bias samples are unique by (formulation, premise, hypothesis) and test
samples by (premise, hypothesis, true label) within a subtopic.

>>> from nlibias.benchmarks.data_locations import resolve_benchmark_path
>>> expansion = expand_bbnli(resolve_benchmark_path("bbnli"))  # doctest: +SKIP
>>> len(expansion.bias_samples), len(expansion.test_samples)   # doctest: +SKIP
(2276, 858)
"""

from __future__ import annotations

import itertools
import json
import re
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from nlibias.benchmarks.templating import GROUP_SLOTS, placeholders, render
from nlibias.errors import ConfigError, SourceError
from nlibias.schema import Label, Sample
from nlibias.textio.text_files import check_json_text, read_text

SOURCE = "bbnli"
DEFAULT_ANSWER_CHOICES = ("Contradiction", "Neutral", "Entailment")
Formulation = Literal["pro", "anti"]
FORMULATIONS: tuple[Formulation, Formulation] = ("pro", "anti")


def subtopic_id(name: str) -> str:
    """The subtopic id: the file's ``name`` with spaces as underscores and a trailing period dropped.

    >>> subtopic_id("Muslim women to invisible.")
    'Muslim_women_to_invisible'
    """
    return name.strip().replace(" ", "_").rstrip(".")


@dataclass(frozen=True)
class BBNLITemplate:
    """One hypothesis template of a subtopic file."""

    index: int
    text: str
    label: Label
    """The true label (``neutral`` for every bias hypothesis)."""
    bias_label: Label | None
    """For bias hypotheses, the label that would reveal the stereotype; ``None`` for test ones."""
    question: str | None = None


@dataclass(frozen=True)
class BBNLISubtopic:
    """A parsed, validated BBNLI subtopic file."""

    path: str
    subtopic: str
    name: str
    domain: str
    premises: tuple[str, ...]
    test_hypotheses: tuple[BBNLITemplate, ...]
    bias_hypotheses: tuple[BBNLITemplate, ...]
    words: Mapping[str, tuple[str, ...]]
    """Placeholder name → its word list, in file order (the cross product's order)."""
    group1: str
    group2: str
    references: tuple[str, ...] = ()

    def combinations(self) -> list[dict[str, str]]:
        """Every combination of the word lists, in the reference's order."""
        keys = list(self.words)
        return [dict(zip(keys, combo, strict=True)) for combo in itertools.product(*self.words.values())]

    def values(self, words: Mapping[str, str], formulation: Formulation) -> dict[str, str]:
        """Placeholder values for a word combination under a formulation (anti swaps the groups)."""
        first, second = (self.group1, self.group2) if formulation == "pro" else (self.group2, self.group1)
        return {**words, "GROUP1": first, "GROUP2": second}


@dataclass(frozen=True)
class Expansion:
    """Samples of a benchmark source with what a user must know about them."""

    samples: tuple[Sample, ...]
    degenerate_pairs: tuple[str, ...] = ()
    """Pair keys whose pro and anti samples have identical premise and hypothesis."""
    unpaired: tuple[str, ...] = ()
    """Ids of bias samples with no group-swapped twin."""
    warnings: tuple[str, ...] = ()
    sources: tuple[str, ...] = field(default=())
    origin: str | None = None
    """The path the samples were expanded from, as the user resolved it (the expansion summary's
    ``source``)."""

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
        """One row per subtopic: domain, bias samples, pairs, degenerate pairs, test samples."""
        rows: dict[str, dict[str, Any]] = {}
        degenerate = set(self.degenerate_pairs)
        unpaired = set(self.unpaired)
        for sample in self.samples:
            row = rows.setdefault(
                sample.subtopic,
                {
                    "domain": sample.domain,
                    "subtopic": sample.subtopic,
                    "bias": 0,
                    "pairs": set(),
                    "degenerate_pairs": set(),
                    "unpaired": 0,
                    "test": 0,
                },
            )
            if not sample.is_bias_sample:
                row["test"] += 1
                continue
            row["bias"] += 1
            if sample.id in unpaired:
                row["unpaired"] += 1
            elif sample.pair_key is not None:
                row["pairs"].add(sample.pair_key)
                if sample.pair_key in degenerate:
                    row["degenerate_pairs"].add(sample.pair_key)
        return [
            {**row, "pairs": len(row["pairs"]), "degenerate_pairs": len(row["degenerate_pairs"])}
            for row in rows.values()
        ]


# ---------------------------------------------------------------------------------------------
# Reading and validating subtopic JSON files


def _line_of(text: str, key: str) -> int | None:
    """Line number of the first occurrence of ``"key"`` in a JSON text (for error messages)."""
    match = re.search(r'"' + re.escape(key) + r'"\s*:', text)
    return text.count("\n", 0, match.start()) + 1 if match else None


def load_bbnli_json(path: str | Path) -> BBNLISubtopic:
    """Parse and validate one BBNLI subtopic file; errors name the file, line, field and reason."""
    path = Path(path)
    text = read_text(path)
    try:
        raw = check_json_text(path, text, json.loads(text))
    except json.JSONDecodeError as exc:
        raise SourceError(
            path, None, f"invalid JSON: {exc.msg}", line=exc.lineno, fix="fix the syntax at that position"
        ) from exc
    except (RecursionError, ValueError):  # nested too deep, a number past the digit limit
        from nlibias.textio.json_text import parse_json

        parse_json(path, text, allow_nan=True)  # raises a SourceError saying which, with the line
        raise
    if not isinstance(raw, dict):
        raise SourceError(path, None, "expected a JSON object with the BBNLI keys", line=1)

    def fail(key: str, reason: str, fix: str | None = None) -> SourceError:
        return SourceError(path, key, reason, line=_line_of(text, key), fix=fix)

    required = (
        "premise",
        "test_hypothesis",
        "bias_hypothesis_stereotypical",
        "data",
        "GROUP1",
        "GROUP2",
        "name",
        "domain",
    )
    for key in required:
        if key not in raw:
            raise SourceError(
                path, key, "missing key", fix=f"every BBNLI subtopic file needs: {', '.join(required)}"
            )

    def string_list(key: str) -> tuple[str, ...]:
        value = raw[key]
        if not isinstance(value, list) or not value or not all(isinstance(v, str) for v in value):
            raise fail(key, "expected a non-empty list of strings")
        return tuple(value)

    premises = string_list("premise")
    group1, group2 = string_list("GROUP1")[0], string_list("GROUP2")[0]
    if group1 == group2:
        raise fail(
            "GROUP2",
            f"GROUP1 and GROUP2 are both {group1!r}: no pro/anti pair can be formed",
            fix="name two different groups",
        )
    for key in ("name", "domain"):
        if not isinstance(raw[key], str) or not raw[key].strip():
            raise fail(key, "expected a non-empty string")

    data = raw["data"]
    if not isinstance(data, dict):
        raise fail("data", "expected an object mapping each placeholder to its list of words")
    words: dict[str, tuple[str, ...]] = {}
    for key, value in data.items():
        if not isinstance(value, list) or not value or not all(isinstance(v, str) for v in value):
            raise fail(key, f"data.{key}: expected a non-empty list of strings")
        if key in GROUP_SLOTS:
            raise fail(key, f"data.{key}: {key} is set by GROUP1/GROUP2, not by a word list")
        words[key] = tuple(value)

    choices = raw.get("answer_choices", list(DEFAULT_ANSWER_CHOICES))
    normalized = [c.lower() for c in choices] if isinstance(choices, list) else []
    if sorted(normalized) != ["contradiction", "entailment", "neutral"]:
        raise fail("answer_choices", f"expected the three NLI labels, got {choices!r}")
    labels: list[Label] = [c for c in normalized]

    def label_of(key: str, index: int, value: Any) -> Label:
        if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value < 3:
            raise fail(key, f"{key}[{index}]: label {value!r} is not an index into answer_choices {choices}")
        return labels[value]

    known = set(words) | set(GROUP_SLOTS)

    def check_placeholders(key: str, index: int, template: str) -> None:
        unknown = [p for p in placeholders(template) if p not in known]
        if unknown:
            raise fail(
                key,
                f"{key}[{index}] uses placeholder {{{{{unknown[0]}}}}} with no word list in data",
                fix=f"add data.{unknown[0]} or fix the placeholder name (known: {', '.join(sorted(known))})",
            )

    for i, premise in enumerate(premises):
        check_placeholders("premise", i, premise)

    def questions(key: str, count: int) -> list[str | None]:
        value = raw.get(key)
        if value is None:
            return [None] * count
        if not isinstance(value, list) or len(value) != count:
            raise fail(key, f"expected {count} entries, one per hypothesis")
        return [q[0] if isinstance(q, list) and q and isinstance(q[0], str) else None for q in value]

    tests: list[BBNLITemplate] = []
    test_entries = raw["test_hypothesis"]
    if not isinstance(test_entries, list):
        raise fail("test_hypothesis", "expected a list of [template, label]")
    test_questions = questions("test_question", len(test_entries))
    for i, entry in enumerate(test_entries):
        if not (isinstance(entry, list) and len(entry) >= 2 and isinstance(entry[0], str)):
            raise fail("test_hypothesis", f"test_hypothesis[{i}]: expected [template, label]")
        check_placeholders("test_hypothesis", i, entry[0])
        tests.append(
            BBNLITemplate(i, entry[0], label_of("test_hypothesis", i, entry[1]), None, test_questions[i])
        )

    bias: list[BBNLITemplate] = []
    bias_entries = raw["bias_hypothesis_stereotypical"]
    if not isinstance(bias_entries, list) or not bias_entries:
        raise fail(
            "bias_hypothesis_stereotypical", "expected a non-empty list of [template, label, bias_label]"
        )
    bias_questions = questions("bias_question_stereotypical", len(bias_entries))
    for i, entry in enumerate(bias_entries):
        if not (isinstance(entry, list) and len(entry) >= 3 and isinstance(entry[0], str)):
            raise fail(
                "bias_hypothesis_stereotypical",
                f"bias_hypothesis_stereotypical[{i}]: expected [template, label, bias_label]",
            )
        check_placeholders("bias_hypothesis_stereotypical", i, entry[0])
        if label_of("bias_hypothesis_stereotypical", i, entry[1]) != "neutral":
            raise fail(
                "bias_hypothesis_stereotypical",
                f"bias_hypothesis_stereotypical[{i}]: gold label "
                f"{label_of('bias_hypothesis_stereotypical', i, entry[1])}; BBNLI's bias hypotheses are neutral",
                fix="set its label to the index of Neutral in answer_choices, or move it to test_hypothesis",
            )
        bias.append(
            BBNLITemplate(
                i,
                entry[0],
                label_of("bias_hypothesis_stereotypical", i, entry[1]),
                label_of("bias_hypothesis_stereotypical", i, entry[2]),
                bias_questions[i],
            )
        )

    references = raw.get("reference", [])
    references = tuple(str(r) for r in references) if isinstance(references, list) else ()
    return BBNLISubtopic(
        path=str(path),
        subtopic=subtopic_id(raw["name"]),
        name=raw["name"],
        domain=raw["domain"].strip(),
        premises=premises,
        test_hypotheses=tuple(tests),
        bias_hypotheses=tuple(bias),
        words=words,
        group1=group1,
        group2=group2,
        references=references,
    )


def load_bbnli_dir(path: str | Path) -> list[BBNLISubtopic]:
    """Every ``*.json`` subtopic file under ``path`` (recursively, sorted by path)."""
    path = Path(path)
    files = sorted(path.rglob("*.json")) if path.is_dir() else [path]
    if not files:
        raise SourceError(
            path,
            None,
            "no BBNLI .json files found",
            fix="pass as source a directory laid out as <domain>/<subtopic>.json, or a CSV",
        )
    subtopics = [load_bbnli_json(f) for f in files]
    seen: dict[str, str] = {}
    for sub in subtopics:
        if sub.subtopic in seen:
            raise SourceError(
                sub.path,
                "name",
                f"subtopic {sub.subtopic!r} is also defined in {seen[sub.subtopic]}",
                fix="give each subtopic file a distinct name",
            )
        seen[sub.subtopic] = sub.path
    return subtopics


# ---------------------------------------------------------------------------------------------
# Expansion


def pair_key(subtopic: str, premise_index: int, combination_index: int, template_index: int) -> str:
    return f"{SOURCE}:{subtopic}:p{premise_index:02d}:c{combination_index:03d}:h{template_index}"


def expand_subtopic(sub: BBNLISubtopic) -> tuple[list[Sample], list[str]]:
    """Samples of one subtopic (bias pairs first, then test samples) and its degenerate pair keys."""
    bias_samples: list[Sample] = []
    test_samples: list[Sample] = []
    seen_bias: set[tuple[str, str, str]] = set()
    seen_test: set[tuple[str, str, str]] = set()
    degenerate: list[str] = []
    for p_index, premise_template in enumerate(sub.premises):
        reference = sub.references[p_index] if p_index < len(sub.references) else None
        for c_index, words in enumerate(sub.combinations()):
            rendered = {f: sub.values(words, f) for f in FORMULATIONS}
            premises = {f: render(premise_template, rendered[f]) for f in FORMULATIONS}
            base = {
                "premise_index": p_index,
                "combination_index": c_index,
                "words": words,
                "premise_template": premise_template,
                "reference": reference,
                "file": sub.path,
            }
            for template in sub.bias_hypotheses:
                texts = {f: render(template.text, rendered[f]) for f in FORMULATIONS}
                keys = {f: (f, premises[f], texts[f]) for f in FORMULATIONS}
                if keys["pro"] in seen_bias:
                    # The same words render the same texts in both formulations, so the anti twin
                    # is a repeat too: the pair was already emitted.
                    continue
                seen_bias.update(keys.values())
                key = pair_key(sub.subtopic, p_index, c_index, template.index)
                if premises["pro"] == premises["anti"] and texts["pro"] == texts["anti"]:
                    degenerate.append(key)
                for f in FORMULATIONS:
                    bias_samples.append(
                        Sample(
                            id=f"{key}:{f}",
                            source=SOURCE,
                            domain=sub.domain,
                            subtopic=sub.subtopic,
                            premise=premises[f],
                            hypothesis=texts[f],
                            gold=template.label,
                            stereotype=f,
                            pair_key=key,
                            group=rendered[f]["GROUP1"],
                            counterfactual_group=rendered[f]["GROUP2"],
                            provenance={
                                **base,
                                "formulation": f,
                                "template_index": template.index,
                                "hypothesis_template": template.text,
                                "bias_label": template.bias_label,
                                "question": render(template.question or "", rendered[f]) or None,
                            },
                        )
                    )
            for template in sub.test_hypotheses:
                for f in FORMULATIONS:
                    text = render(template.text, rendered[f])
                    test_key = (premises[f], text, template.label)
                    if test_key in seen_test:
                        continue
                    seen_test.add(test_key)
                    test_samples.append(
                        Sample(
                            id=f"{SOURCE}:{sub.subtopic}:test:p{p_index:02d}:c{c_index:03d}:t{template.index}:{f}",
                            source=SOURCE,
                            domain=sub.domain,
                            subtopic=sub.subtopic,
                            premise=premises[f],
                            hypothesis=text,
                            gold=template.label,
                            stereotype=None,
                            pair_key=None,
                            group=rendered[f]["GROUP1"],
                            counterfactual_group=rendered[f]["GROUP2"],
                            provenance={
                                **base,
                                "formulation": f,
                                "template_index": template.index,
                                "hypothesis_template": template.text,
                                "question": render(template.question or "", rendered[f]) or None,
                            },
                        )
                    )
    return bias_samples + test_samples, degenerate


def domain_folder_warnings(subtopics: Sequence[BBNLISubtopic], root: Path) -> tuple[str, ...]:
    """A warning when a subtopic file's ``domain`` differs from the folder it sits in (BBNLI's
    layout is ``<domain>/<subtopic>.json``): the file's ``domain`` is used, the folder ignored.

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
    """Expand a BBNLI JSON directory (or one file). BBNLI's expanded CSV layout is read by
    :func:`nlibias.benchmarks.bbnli_source.expand_bbnli_source`, which takes either."""
    source = Path(source)
    if source.is_file() and source.suffix.lower() == ".csv":
        raise ConfigError(
            f"{source} is BBNLI's expanded CSV layout: read it with expand_bbnli_source "
            "(nlibias.benchmarks.bbnli_source), which reads the JSON files and the CSV",
            parameter="source",
        )
    samples: list[Sample] = []
    degenerate: list[str] = []
    subtopics = load_bbnli_dir(source)
    for sub in subtopics:
        sub_samples, sub_degenerate = expand_subtopic(sub)
        samples.extend(sub_samples)
        degenerate.extend(sub_degenerate)
    warnings: tuple[str, ...] = (degenerate_warning(degenerate),) if degenerate else ()
    warnings += domain_folder_warnings(subtopics, source)
    return Expansion(
        samples=tuple(samples),
        degenerate_pairs=tuple(degenerate),
        warnings=warnings,
        sources=tuple(s.path for s in subtopics),
    )
