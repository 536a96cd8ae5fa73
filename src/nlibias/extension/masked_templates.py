"""Masked hypothesis templates: a BBNLI bias-hypothesis template with one ``<mask>`` by one of three
strategies (BBNLI-next, Table 1): ``mask_word``, ``replace_placeholder`` (``{{WORD2}}`` → ``<mask>``)
or ``add_beside`` (``{{WORD2}} and <mask>``); curated in a JSONL file or derived from a subtopic; and
the masked samples they expand to (as :func:`nlibias.benchmarks.bbnli.expand_subtopic` does, the
``<mask>`` kept, with the words a fill must not repeat).

>>> classify_derivation("{{GROUP2}} are less {{WORD2}} for jobs.", "{{GROUP2}} are less <mask> for jobs.")
('replace_placeholder', '{{WORD2}}')
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, ValidationError

from nlibias.benchmarks.bbnli import FORMULATIONS, BBNLISubtopic, Formulation
from nlibias.benchmarks.templating import GROUP_SLOTS, PLACEHOLDER, placeholders, render
from nlibias.errors import SourceError
from nlibias.io.jsonl import iter_jsonl
from nlibias.schema.problems import source_error
from nlibias.textio.list_files import list_lines
from nlibias.textio.text_files import read_text

MASK = "<mask>"
Strategy = Literal["mask_word", "replace_placeholder", "add_beside"]
STRATEGIES: tuple[Strategy, ...] = ("mask_word", "replace_placeholder", "add_beside")
Origin = Literal["curated", "derived"]

_WORD = re.compile(r"[A-Za-z][A-Za-z'’-]*[A-Za-z]|[A-Za-z]")
_TOKEN = re.compile(r"\{\{\s*[A-Za-z_][A-Za-z0-9_]*\s*\}\}|[A-Za-z][A-Za-z'’-]*[A-Za-z]|[A-Za-z]")
_BESIDE = " and "


@dataclass(frozen=True)
class MaskedTemplate:
    """One masked hypothesis template, tied to the BBNLI bias-hypothesis template it derives from."""

    id: str
    """``<subtopic>:h<template index>:<8 hex of the text>``: stable across file edits and reorders."""
    subtopic: str
    template_index: int
    """Index into the subtopic's ``bias_hypothesis_stereotypical`` list (labels are inherited)."""
    text: str
    """The masked template: ``{{PLACEHOLDER}}`` slots and exactly one ``<mask>``."""
    strategy: Strategy
    original: str
    """What the mask replaces or stands beside: a word, or a ``{{PLACEHOLDER}}`` (rendered per sample)."""
    origin: Origin
    source: str = ""
    """Where it was read from (``file:line``) or ``derived``."""

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, record: Mapping[str, Any]) -> MaskedTemplate:
        return cls(**{k: record[k] for k in cls.__dataclass_fields__ if k in record})

    def file_line(self) -> str:
        """The template as a line of a masked-template file (what :func:`load_masked_templates` reads)."""
        record = {"subtopic": self.subtopic, "template": self.template_index, "masked": self.text}
        return json.dumps({**record, "strategy": self.strategy}, ensure_ascii=False)


def template_id(subtopic: str, template_index: int, text: str) -> str:
    """Stable id of a masked template.

    >>> template_id("man_is_to_programmer", 2, "{{GROUP2}} are less <mask> for jobs in {{MJOB}}.")
    'man_is_to_programmer:h2:43dec5bd'
    """
    return f"{subtopic}:h{template_index}:{hashlib.sha256(text.encode()).hexdigest()[:8]}"


def default_templates_path() -> Path:
    """The curated masked-template file shipped with nlibias."""
    return Path(str(resources.files("nlibias") / "resources" / "masked_templates.jsonl"))


def default_stopwords_path() -> Path:
    return Path(str(resources.files("nlibias") / "resources" / "stopwords.txt"))


def load_stopwords(path: str | Path | None = None) -> frozenset[str]:
    """Lower-cased words of a stop-word file (one per line, ``#`` comments, blank lines ignored); a
    file of another kind (JSON, JSON lines, YAML) or a line of several words (it would match no word)
    is refused with its line.

    >>> "the" in load_stopwords()
    True
    """
    path = Path(path or default_stopwords_path())
    lines = list_lines(path, read_text(path), item="stop word")
    for number, line in lines:
        if len(line.split()) > 1:
            raise SourceError(
                path, None, f"{line!r} is not one word: a stop word is compared with single words, so it "
                "would never match", line=number, fix="write one stop word per line",
            )  # fmt: skip
    return frozenset(line.lower() for _, line in lines)


def _is_boundary(text: str, index: int) -> bool:
    """True when ``text[index]`` is outside the text or not a letter (a word may start/end here)."""
    return index < 0 or index >= len(text) or not text[index].isalpha()


def classify_derivation(source: str, masked: str) -> tuple[Strategy, str] | None:
    """The strategy that turns ``source`` into ``masked`` and the original word, or ``None``.

    >>> classify_derivation("They are less {{WORD2}}.", "They are less {{WORD2}} and <mask>.")
    ('add_beside', '{{WORD2}}')
    >>> classify_derivation("They are equipped poorly.", "They are <mask> poorly.")
    ('mask_word', 'equipped')
    >>> classify_derivation("They are equipped poorly.", "They are <mask>.") is None
    True
    """
    if masked.count(MASK) != 1:
        return None
    position = masked.index(MASK)
    prefix, suffix = masked[:position], masked[position + len(MASK) :]
    if prefix.endswith(_BESIDE) and prefix[: -len(_BESIDE)] + suffix == source:
        before = prefix[: -len(_BESIDE)]
        tokens = list(_TOKEN.finditer(before))
        if tokens and tokens[-1].end() == len(before) and _is_boundary(before, tokens[-1].start() - 1):
            return "add_beside", tokens[-1].group(0)
        return None
    if len(prefix) + len(suffix) >= len(source) or not (
        source.startswith(prefix) and source.endswith(suffix)
    ):
        return None
    middle = source[len(prefix) : len(source) - len(suffix)]
    if PLACEHOLDER.fullmatch(middle):
        return "replace_placeholder", middle
    if (
        _WORD.fullmatch(middle)
        and _is_boundary(source, len(prefix) - 1)
        and _is_boundary(source, len(prefix) + len(middle))
    ):
        return "mask_word", middle
    return None


class _TemplateLine(BaseModel):
    """One line of a masked-template file."""

    model_config = ConfigDict(extra="forbid", strict=True)

    subtopic: str
    template: int
    masked: str
    strategy: Strategy | None = None
    note: str | None = None


def check_masked_template(subtopic: BBNLISubtopic, template_index: int, masked: str) -> tuple[Strategy, str]:
    """Validate a masked template against its subtopic; returns (strategy, original) or raises ValueError."""
    if not 0 <= template_index < len(subtopic.bias_hypotheses):
        raise ValueError(
            f"template index {template_index} is out of range: {subtopic.subtopic} has "
            f"{len(subtopic.bias_hypotheses)} bias hypotheses (0-{len(subtopic.bias_hypotheses) - 1})"
        )
    count = masked.count(MASK)
    if count != 1:
        raise ValueError(f"expected exactly one {MASK}, found {count}")
    known = set(subtopic.words) | set(GROUP_SLOTS)
    unknown = [name for name in placeholders(masked) if name not in known]
    if unknown:
        raise ValueError(
            f"unknown placeholder {{{{{unknown[0]}}}}} (known in {subtopic.subtopic}: {', '.join(sorted(known))})"
        )
    if not any(slot in placeholders(masked) for slot in GROUP_SLOTS):
        raise ValueError(
            "no {{GROUP1}} or {{GROUP2}} placeholder: the group-swapped twin would be the same sentence"
        )
    source = subtopic.bias_hypotheses[template_index].text
    found = classify_derivation(source, masked)
    if found is None:
        raise ValueError(
            f"not derived from template {template_index} ({source!r}) by masking one word, replacing one "
            f"placeholder by {MASK}, or adding ' and {MASK}' after a word or placeholder"
        )
    return found


def load_masked_templates(
    path: str | Path | None, subtopics: Mapping[str, BBNLISubtopic] | Sequence[BBNLISubtopic]
) -> list[MaskedTemplate]:
    """Read and validate a masked-template JSONL file (default: the shipped one); errors name the
    file, line and reason."""
    path = Path(path) if path is not None else default_templates_path()
    by_id = dict(subtopics) if isinstance(subtopics, Mapping) else {s.subtopic: s for s in subtopics}
    if not path.exists():
        raise SourceError(path, None, "file does not exist")
    templates: list[MaskedTemplate] = []
    seen: dict[tuple[str, str], int] = {}
    for number, raw in iter_jsonl(path, comments=True):

        def fail(field: str | None, reason: str, fix: str | None = None, number: int = number) -> SourceError:
            return SourceError(path, field, reason, line=number, fix=fix)

        try:
            record = _TemplateLine.model_validate(raw)
        except ValidationError as exc:
            fix = "a line holds subtopic, template, masked and optionally strategy, note"
            raise source_error(exc, path, line=number, fix=fix) from None
        subtopic = by_id.get(record.subtopic)
        if subtopic is None:
            reason = f"unknown subtopic {record.subtopic!r}: the BBNLI source ({{parameter source}}) lacks it"
            fix = f"it holds {', '.join(sorted(by_id))}; pass a source holding every subtopic the file names"
            raise SourceError(path, "subtopic", reason, line=number, fix=fix, names=("source",))
        try:
            strategy, original = check_masked_template(subtopic, record.template, record.masked)
        except ValueError as exc:
            field = "template" if "out of range" in str(exc) else "masked"
            raise fail(field, str(exc)) from None
        if record.strategy is not None and record.strategy != strategy:
            raise fail("strategy", f"says {record.strategy!r} but the text is derived by {strategy!r}")
        key = (record.subtopic, record.masked)
        if key in seen:
            raise fail("masked", f"duplicate of line {seen[key]}")
        seen[key] = number
        where = f"{path.name}:{number}"
        templates.append(_made(record.subtopic, record.template, record.masked, (strategy, original), where))
    if not templates:
        raise SourceError(path, None, "no masked templates in the file")
    return templates


def derive_masked_templates(
    subtopic: BBNLISubtopic,
    *,
    stopwords: Collection[str] | None = None,
    strategies: Iterable[Strategy] = STRATEGIES,
    min_word_length: int = 3,
) -> list[MaskedTemplate]:
    """Masked templates derived from every bias hypothesis of ``subtopic`` that names a group (never
    masking stop words, short or capitalised words, group names or GROUP placeholders)."""
    stop = frozenset(w.lower() for w in (stopwords if stopwords is not None else load_stopwords()))
    stop |= {w.lower() for group in (subtopic.group1, subtopic.group2) for w in group.split()}
    wanted = set(strategies)
    found: dict[str, MaskedTemplate] = {}
    for template in subtopic.bias_hypotheses:
        text = template.text
        if not any(slot in placeholders(text) for slot in GROUP_SLOTS):
            continue
        candidates: list[str] = []
        for match in _TOKEN.finditer(text):
            token, start, end = match.group(0), match.start(), match.end()
            if token.startswith("{{"):
                name = PLACEHOLDER.fullmatch(token).group(1)  # type: ignore[union-attr]
                if name in GROUP_SLOTS:
                    continue
                if "replace_placeholder" in wanted:
                    candidates.append(text[:start] + MASK + text[end:])
                if "add_beside" in wanted:
                    candidates.append(text[:end] + _BESIDE + MASK + text[end:])
            elif "mask_word" in wanted and _maskable(token, start, text, stop, min_word_length):
                candidates.append(text[:start] + MASK + text[end:])
        for masked in candidates:
            derived = check_masked_template(subtopic, template.index, masked)
            made = _made(subtopic.subtopic, template.index, masked, derived, "derived")
            found.setdefault(made.id, made)
    return list(found.values())


def _made(subtopic: str, index: int, text: str, derived: tuple[Strategy, str], source: str) -> MaskedTemplate:
    """A checked masked template (``source``: ``file:line``, or ``derived``), with its id."""
    origin: Origin = "derived" if source == "derived" else "curated"
    return MaskedTemplate(template_id(subtopic, index, text), subtopic, index, text, *derived, origin, source)


def _maskable(word: str, start: int, text: str, stop: Collection[str], min_length: int) -> bool:
    if word.lower() in stop or len(word) < min_length or "'" in word or "’" in word:
        return False
    if not (_is_boundary(text, start - 1) and _is_boundary(text, start + len(word))):
        return False
    at_sentence_start = not text[:start].strip()
    return at_sentence_start or not word[0].isupper()


def combine_templates(*groups: Iterable[MaskedTemplate]) -> list[MaskedTemplate]:
    """Union of template lists, first occurrence of each (subtopic, text) kept (curated first)."""
    combined: dict[tuple[str, str], MaskedTemplate] = {}
    for group in groups:
        for template in group:
            combined.setdefault((template.subtopic, template.text), template)
    return list(combined.values())


def template_counts(
    templates: Sequence[MaskedTemplate], subtopics: Sequence[BBNLISubtopic]
) -> list[dict[str, Any]]:
    """One row per subtopic (paper Table 9), zeros included: counts per strategy and origin."""
    zeros = dict.fromkeys(("count", *STRATEGIES, "curated", "derived"), 0)
    rows: dict[str, dict[str, Any]] = {
        s.subtopic: {"domain": s.domain, "subtopic": s.subtopic, **zeros}
        for s in sorted(subtopics, key=lambda s: (s.domain, s.subtopic.lower()))
    }
    for template in templates:
        row = rows.get(template.subtopic)
        if row is None:
            continue
        row["count"] += 1
        row[template.strategy] += 1
        row[template.origin] += 1
    return list(rows.values())


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
