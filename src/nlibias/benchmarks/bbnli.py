"""BBNLI's subtopic JSON files (``{{NAME}}`` templates, the ``data`` word lists that fill them,
groups ``GROUP1``/``GROUP2``), read and checked (a refusal names the file, line and field), and
expanded into samples as the reference ``json2csv.py`` does, so counts compare with the paper's;
repeated samples are dropped (bias ones by formulation, premise and hypothesis, test ones by
premise, hypothesis and label, within a subtopic).
"""

from __future__ import annotations

import itertools
import re
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Literal

from nlibias.benchmarks.rows import text_problem
from nlibias.benchmarks.templating import GROUP_SLOTS, placeholders, render
from nlibias.errors import SourceError
from nlibias.schema import Label, Sample
from nlibias.schema.declared import is_int
from nlibias.textio.json_text import parse_json
from nlibias.textio.text_files import read_text

SOURCE = "bbnli"
DEFAULT_ANSWER_CHOICES = ("Contradiction", "Neutral", "Entailment")
Formulation = Literal["pro", "anti"]
FORMULATIONS: tuple[Formulation, Formulation] = ("pro", "anti")
REQUIRED_KEYS = tuple(
    "premise test_hypothesis bias_hypothesis_stereotypical data GROUP1 GROUP2 name domain".split()  # noqa: SIM905
)


def subtopic_id(name: str) -> str:
    """The file's ``name`` with spaces as underscores and a final period dropped (``A_b``)."""
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
    """A checked BBNLI subtopic file."""

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


def _line_of(text: str, key: str) -> int | None:
    """The line of the first ``"key":`` in a JSON text."""
    match = re.search(r'"' + re.escape(key) + r'"\s*:', text)
    return text.count("\n", 0, match.start()) + 1 if match else None


def _parse_object(path: Path, text: str) -> dict[str, Any]:
    """The file's JSON object (a syntax error, a key twice or another value refused)."""
    raw = parse_json(path, text)
    if not isinstance(raw, dict):
        raise SourceError(path, None, "expected a JSON object with the BBNLI keys", line=1)
    for key in REQUIRED_KEYS:
        if key not in raw:
            raise SourceError(
                path, key, "missing key", fix=f"every BBNLI subtopic file needs: {', '.join(REQUIRED_KEYS)}"
            )
    return raw


@dataclass(frozen=True)
class _SubtopicFile:
    """A subtopic file's text and JSON object, read field by field; templates are checked against
    the placeholders with a value (``known``) and the ``labels``."""

    path: Path
    text: str
    raw: dict[str, Any]
    known: frozenset[str] = frozenset()
    labels: tuple[Label, ...] = ()

    def fail(self, key: str, reason: str, fix: str | None = None) -> SourceError:
        return SourceError(self.path, key, reason, line=_line_of(self.text, key), fix=fix)

    def string_list(self, key: str, value: Any = None, where: str = "") -> tuple[str, ...]:
        value = self.raw[key] if value is None else value
        if not (isinstance(value, list) and value and all(isinstance(v, str) for v in value)):
            raise self.fail(key, f"{where}expected a non-empty list of strings")
        return tuple(value)

    def check_text(self, key: str, index: int, text: str) -> None:
        """Refuse a premise or hypothesis template that is not text (blank, a control character)."""
        problem = text_problem(text, "an empty text", "write the text, or remove the entry")
        if problem is not None:
            raise self.fail(key, f"{key}[{index}]: {problem[0]}", problem[1])

    def groups(self) -> tuple[str, str]:
        """``GROUP1[0]`` and ``GROUP2[0]``, which must differ."""
        group1, group2 = self.string_list("GROUP1")[0], self.string_list("GROUP2")[0]
        if group1 == group2:
            reason = f"GROUP1 and GROUP2 are both {group1!r}: no pro/anti pair can be formed"
            raise self.fail("GROUP2", reason, fix="name two different groups")
        return group1, group2

    def text_of(self, key: str) -> str:
        if not isinstance(self.raw[key], str) or not self.raw[key].strip():
            raise self.fail(key, "expected a non-empty string")
        return str(self.raw[key])

    def words(self) -> dict[str, tuple[str, ...]]:
        """The ``data`` word lists by placeholder name, in file order."""
        data = self.raw["data"]
        if not isinstance(data, dict):
            raise self.fail("data", "expected an object mapping each placeholder to its list of words")
        words = {key: self.string_list(key, value, f"data.{key}: ") for key, value in data.items()}
        slot = next((key for key in words if key in GROUP_SLOTS), None)
        if slot is not None:
            raise self.fail(slot, f"data.{slot}: {slot} is set by GROUP1/GROUP2, not by a word list")
        return words

    def answer_labels(self) -> tuple[Label, ...]:
        """``answer_choices`` (default: BBNLI's), lower-cased: the three NLI labels in some order."""
        choices = self.raw.get("answer_choices", list(DEFAULT_ANSWER_CHOICES))
        normalized = [c.lower() for c in choices] if isinstance(choices, list) else []
        if sorted(normalized) != ["contradiction", "entailment", "neutral"]:
            raise self.fail("answer_choices", f"expected the three NLI labels, got {choices!r}")
        return tuple(normalized)

    def questions(self, key: str, count: int) -> list[str | None]:
        value = self.raw.get(key)
        if value is None:
            return [None] * count
        if not isinstance(value, list) or len(value) != count:
            raise self.fail(key, f"expected {count} entries, one per hypothesis")
        return [q[0] if isinstance(q, list) and q and isinstance(q[0], str) else None for q in value]

    def placeholders(self, key: str, index: int, template: str) -> None:
        """Refuse a template that is not text or uses a placeholder with no word list."""
        self.check_text(key, index, template)
        unknown = [p for p in placeholders(template) if p not in self.known]
        if unknown:
            raise self.fail(
                key,
                f"{key}[{index}] uses placeholder {{{{{unknown[0]}}}}} with no word list in data",
                fix=f"add data.{unknown[0]} or fix the placeholder name (known: {', '.join(sorted(self.known))})",
            )

    def label(self, key: str, index: int, value: Any) -> Label:
        if not is_int(value) or not 0 <= value < 3:
            choices = self.raw.get("answer_choices", list(DEFAULT_ANSWER_CHOICES))
            raise self.fail(
                key, f"{key}[{index}]: label {value!r} is not an index into answer_choices {choices}"
            )
        return self.labels[value]

    def templates(self, key: str, question_key: str, *, bias: bool) -> tuple[BBNLITemplate, ...]:
        """The ``[template, label]`` entries of ``key`` (bias: ``[template, label, bias_label]``, neutral)."""
        shape = "template, label, bias_label" if bias else "template, label"
        entries = self.raw[key]
        if not isinstance(entries, list) or (bias and not entries):
            raise self.fail(key, f"expected {'a non-empty list' if bias else 'a list'} of [{shape}]")
        questions = self.questions(question_key, len(entries))
        templates: list[BBNLITemplate] = []
        for i, entry in enumerate(entries):
            if not (
                isinstance(entry, list) and len(entry) >= (3 if bias else 2) and isinstance(entry[0], str)
            ):
                raise self.fail(key, f"{key}[{i}]: expected [{shape}]")
            self.placeholders(key, i, entry[0])
            label = self.label(key, i, entry[1])
            if bias and label != "neutral":
                raise self.fail(
                    key,
                    f"{key}[{i}]: gold label {label}; BBNLI's bias hypotheses are neutral",
                    fix="set its label to the index of Neutral in answer_choices, or move it to test_hypothesis",
                )
            bias_label = self.label(key, i, entry[2]) if bias else None
            templates.append(BBNLITemplate(i, entry[0], label, bias_label, questions[i]))
        return tuple(templates)


def load_bbnli_json(path: str | Path) -> BBNLISubtopic:
    """Read and check one BBNLI subtopic file."""
    path = Path(path)
    text = read_text(path)
    file = _SubtopicFile(path, text, _parse_object(path, text))
    premises = file.string_list("premise")
    group1, group2 = file.groups()
    name, domain = file.text_of("name"), file.text_of("domain")
    words = file.words()
    checks = replace(file, known=frozenset(words) | frozenset(GROUP_SLOTS), labels=file.answer_labels())
    for i, premise in enumerate(premises):
        checks.placeholders("premise", i, premise)
    tests = checks.templates("test_hypothesis", "test_question", bias=False)
    bias = checks.templates("bias_hypothesis_stereotypical", "bias_question_stereotypical", bias=True)
    references = file.raw.get("reference", [])
    return BBNLISubtopic(
        path=str(path),
        subtopic=subtopic_id(name),
        name=name,
        domain=domain.strip(),
        premises=premises,
        test_hypotheses=tests,
        bias_hypotheses=bias,
        words=words,
        group1=group1,
        group2=group2,
        references=tuple(str(r) for r in references) if isinstance(references, list) else (),
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


@dataclass(frozen=True)
class Expansion:
    """BBNLI's samples with what a user must know about them."""

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
        """Per-subtopic counts, totals, warnings, degenerate pair keys and unpaired ids."""
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


@dataclass(frozen=True)
class _Rendering:
    """One premise of a subtopic under one word combination, in both formulations."""

    sub: BBNLISubtopic
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
        """``template`` rendered as ``hypothesis``: a bias sample with a ``pair_key``, else a test one."""
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


def expand_subtopic(sub: BBNLISubtopic) -> tuple[list[Sample], list[str]]:
    """Samples of one subtopic in the reference's order (bias pairs first, then test samples) and
    its degenerate pair keys (pro and anti texts identical)."""
    bias: list[Sample] = []
    test: list[Sample] = []
    seen: set[tuple[str, ...]] = set()
    degenerate: list[str] = []
    for p_index, premise_template in enumerate(sub.premises):
        reference = sub.references[p_index] if p_index < len(sub.references) else None
        for c_index, words in enumerate(sub.combinations()):
            values = {f: sub.values(words, f) for f in FORMULATIONS}
            premises = {f: render(premise_template, values[f]) for f in FORMULATIONS}
            provenance = {
                "premise_index": p_index,
                "combination_index": c_index,
                "words": words,
                "premise_template": premise_template,
                "reference": reference,
                "file": sub.path,
            }
            one = _Rendering(sub, values, premises, provenance)
            at = f"p{p_index:02d}:c{c_index:03d}"
            for template in sub.bias_hypotheses:
                texts = {f: render(template.text, values[f]) for f in FORMULATIONS}
                keys = {f: ("bias", f, premises[f], texts[f]) for f in FORMULATIONS}
                if keys["pro"] in seen:  # then its anti twin is a repeat too
                    continue
                seen.update(keys.values())
                key = f"{SOURCE}:{sub.subtopic}:{at}:h{template.index}"
                if premises["pro"] == premises["anti"] and texts["pro"] == texts["anti"]:
                    degenerate.append(key)
                bias += [one.sample(f, template, texts[f], f"{key}:{f}", key) for f in FORMULATIONS]
            for template in sub.test_hypotheses:
                for f in FORMULATIONS:
                    text = render(template.text, values[f])
                    if ("test", premises[f], text, template.label) in seen:
                        continue
                    seen.add(("test", premises[f], text, template.label))
                    sample_id = f"{SOURCE}:{sub.subtopic}:test:{at}:t{template.index}:{f}"
                    test.append(one.sample(f, template, text, sample_id, None))
    return bias + test, degenerate


def domain_folder_warnings(subtopics: Sequence[BBNLISubtopic], root: Path) -> tuple[str, ...]:
    """A warning when a subtopic file's ``domain`` differs from its folder (the file's is used)."""
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
    """Expand a BBNLI JSON directory or file, or BBNLI's expanded CSV (:func:`~nlibias.benchmarks.bbnli_source.read_bbnli_csv`)."""
    source = Path(source)
    if source.is_file() and source.suffix.lower() == ".csv":
        from nlibias.benchmarks.bbnli_source import read_bbnli_csv  # it imports this module

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
