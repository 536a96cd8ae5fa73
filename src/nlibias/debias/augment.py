"""Gender-swap augmentation of an NLI training set (paper 004 §4), streamed.

``OUT/train.jsonl`` holds every labelled original row, then the swapped copy of each selected row;
a copy that changes nothing or repeats a row is dropped.

>>> import tempfile, pathlib, json
>>> root = pathlib.Path(tempfile.mkdtemp())
>>> rows = [{"premise": "The nurse helps her patient.", "hypothesis": "A woman works.", "label": "neutral"},
...         {"premise": "A dog runs.", "hypothesis": "An animal moves.", "label": "entailment"}]
>>> _ = (root / "train.jsonl").write_text("".join(json.dumps(r) + "\\n" for r in rows))
>>> summary = augment_gender_swap(root / "train.jsonl", root / "aug", progress=False)
>>> [json.loads(line)["premise"] for line in (root / "aug" / "train.jsonl").open()]
['The nurse helps her patient.', 'A dog runs.', 'The nurse helps his patient.']
>>> summary["rows_selected"], summary["swapped_rows_written"], summary["words_changed"]
(1, 1, 2)
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from array import array
from collections import Counter
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Annotated, Any, Literal, TypedDict, get_type_hints

from nlibias.benchmarks.occupation_list import load_occupations
from nlibias.debias.finetune_checks import check_split_applies
from nlibias.debias.swap import (
    DEFAULT_HER_MODEL,
    HerChoice,
    HerModel,
    HerResolver,
    Swapper,
    SwapPlan,
    check_her,
)
from nlibias.debias.training_rows import TrainingRow, TrainingSet, describe_training_set
from nlibias.debias.wordlists import read_pairs, swap_list_named
from nlibias.errors import ConfigError, SourceError
from nlibias.io.atomic import PendingFile, json_line, locked_folder, temporary_file, write_json
from nlibias.io.overwrites import refuse_overwrites
from nlibias.runtime.progress import progress_bar
from nlibias.schema.applies import AppliesTo
from nlibias.schema.declared import PathArg, declared

Selection = Literal["occupation", "all"]
MatchRule = Literal["words", "paper"]
"""Which of the 38 occupations a premise mentions: ``words`` (whole words, singular and plural) or
``paper`` (paper 004's ``is_word_present``, to reproduce its selection); docs/debiasing.md, "Selection"."""
TRAIN_FILE = "train.jsonl"
SUMMARY_FILE = "augment_summary.json"


class AugmentSummary(TypedDict):
    """``augment_summary.json``: what :func:`augment_gender_swap` read, chose and wrote."""

    source: str
    source_kind: str
    source_sha256: str | None
    split: str
    select: str
    match: str
    word_list: str
    word_list_note: str
    word_list_sha256: str
    names: str | None
    her: str
    """``rule`` or ``lm``: who read the "her"s the rule has no cue for."""
    her_model: dict[str, Any] | None
    """The language model's identity under ``her="lm"``."""
    her_open_texts: int
    """Distinct texts of selected rows the language model read."""
    her_lm_differs: int
    """Of those, texts where its reading differs from the rule's."""
    rows_read: int
    rows_without_label: int
    original_rows_written: int
    rows_selected: int
    rows_swapped: int
    swapped_rows_written: int
    swapped_duplicates_dropped: int
    words_changed: int
    top_swaps: list[tuple[str, int]]
    selected_by_occupation: dict[str, int]
    out: str


_COUNTS = [name for name, kind in get_type_hints(AugmentSummary).items() if kind is int]
"""The fields of :class:`AugmentSummary` that count (each an ``int``)."""


def _key(premise: str, hypothesis: str, label: str) -> int:
    """An 8-byte hash of a row (4.4 MB for SNLI's gendered rows)."""
    text = "\x1f".join((premise, hypothesis, label)).encode("utf-8")
    return int.from_bytes(hashlib.blake2b(text, digest_size=8).digest(), "little")


@cache
def _forms() -> dict[str, str]:
    """Lower-case form (singular or plural) → occupation name."""
    forms: dict[str, str] = {}
    for occupation in load_occupations():
        forms[occupation.name.lower()] = occupation.name
        forms[occupation.plural.lower()] = occupation.name
    return forms


@cache
def _pattern() -> re.Pattern[str]:
    forms = sorted(_forms(), key=lambda f: (-len(f), f))
    alternatives = "|".join(r"[\s-]+".join(re.escape(w) for w in form.split()) for form in forms)
    return re.compile(rf"(?<![^\W_])(?:{alternatives})(?![^\W_])", re.IGNORECASE)


@cache
def _first_words() -> frozenset[str]:
    """The first word of every form: a premise without one of them names no occupation."""
    return frozenset(form.split()[0] for form in _forms())


_LETTERS = re.compile(r"[^\W\d_]+")


@cache
def _paper_tokens() -> dict[str, str]:
    tokens: dict[str, str] = {}
    for occupation in load_occupations():
        word = occupation.name.lower()
        tokens.setdefault(word, occupation.name)
        tokens.setdefault(word + "s", occupation.name)
    tokens["secretaries"] = "secretary"
    return tokens


def occupations_in(premise: str, *, rule: str = "words") -> list[str]:
    """The occupations ``premise`` mentions, each once, in order of first mention (:data:`MatchRule`).

    >>> occupations_in("Two nurses, a CEO and a construction-worker.")
    ['nurse', 'CEO', 'construction worker']
    >>> occupations_in("Two nurses, a CEO and a construction-worker.", rule="paper")
    ['CEO']
    """
    if rule == "paper":
        tokens = _paper_tokens()
        found = (tokens[t] for t in premise.lower().split(" ") if t in tokens)
    else:
        first_words = _first_words()
        if not any(w in first_words for w in _LETTERS.findall(premise.lower())):
            return []
        forms = _forms()
        found = (forms[re.sub(r"[\s-]+", " ", m.group(0).lower())] for m in _pattern().finditer(premise))
    return list(dict.fromkeys(found))


MATCH_APPLIES = AppliesTo(
    "selecting rows by occupation",
    lambda settings: settings.get("select", "occupation") == "occupation",
    "",
    fix="leave {{match}} out, or give 'occupation' as {{select}}",
    names=("select",),
)
Match = Annotated[MatchRule, MATCH_APPLIES]
"""A match rule, read only where rows are selected by occupation."""


@declared
def check_selection(select: Selection = "occupation", match: Match = "words") -> None:
    """Refuse an unknown row selection or match rule, and a match rule where every row is selected.

    >>> check_selection("all", "paper")
    Traceback (most recent call last):
    nlibias.schema.applies.InapplicableOption: match 'paper' applies to selecting rows by occupation; leave match out, or give 'occupation' as select
    """


@declared
def augment_gender_swap(
    train: PathArg | TrainingSet,
    out_dir: PathArg,
    *,
    select: Selection = "occupation",
    match: Match = "words",
    word_list: PathArg = "winobias",
    names: PathArg | None = None,
    split: str = "train",
    her: HerChoice = "rule",
    her_model: HerModel = None,
    progress: bool = True,
) -> AugmentSummary:
    """Gender-swap augmentation of an NLI training set into ``out_dir``, as ``nlibias augment
    gender-swap``; returns the summary also written as ``augment_summary.json``. ``select``:
    ``occupation`` (premises naming one of the 38 occupations) or ``all``; ``word_list``:
    ``winobias``, ``paper`` or a ``word<TAB>counterpart`` file; ``her='lm'``: ``her_model`` reads
    each "her" the rule has no cue for."""
    check_split_applies(train, split)  # a file has no splits: read whole, whatever the split
    check_her(her, her_model)
    swaps = swap_list_named(word_list)
    if names is not None:
        swaps = swaps.with_names(read_pairs(names, both_ways=True, names=True))
    data = train if isinstance(train, TrainingSet) else describe_training_set(train, split)
    out = Path(out_dir)
    _check_out(data.kind, data.location, out)
    inputs = {"train": None if data.kind == "hub" else data.location, "names": names}
    refuse_overwrites({"out_dir": [out / TRAIN_FILE, out / SUMMARY_FILE]}, inputs)
    run = _Augmentation(data, split, Swapper(swaps), select, match, progress)
    resolver = None
    if her == "lm":
        given = her_model if her_model is not None else DEFAULT_HER_MODEL
        resolver = given if isinstance(given, HerResolver) else HerResolver.load(given)
        run.read_open_her(resolver)
    with locked_folder(out):  # another augmentation into it at once: one's files, not a mix
        fd, spill_path = temporary_file(out / "swapped")
        try:
            with PendingFile(out / TRAIN_FILE) as pending, os.fdopen(fd, "w", encoding="utf-8") as spill:
                keys = run.write_originals(pending, spill)
                if not run.counts["original_rows_written"]:
                    read = run.counts["rows_read"]
                    raise SourceError(
                        data.location, None, f"no rows with a gold label ({read} row{'s' * (read != 1)} read, none labelled)",
                        fix="label the rows entailment/neutral/contradiction",
                    )  # fmt: skip
                spill.close()
                _append_swapped(spill_path, pending, keys, run.counts)
                pending.commit()
        finally:
            spill_path.unlink(missing_ok=True)
        summary = AugmentSummary(
            source=str(data.given),
            source_kind=data.kind,
            source_sha256=data.sha256,
            split=split,
            select=select,
            match=match if select == "occupation" else "none",
            word_list=swaps.name,
            word_list_note=swaps.note,
            word_list_sha256=swaps.digest(),
            names=None if names is None else str(names),
            her=her,
            her_model=None if resolver is None else dict(resolver.identity()),
            **{name: run.counts[name] for name in _COUNTS},  # type: ignore[typeddict-item]
            top_swaps=run.swap_counts.most_common(20),
            selected_by_occupation=dict(sorted(run.by_occupation.items(), key=lambda kv: (-kv[1], kv[0]))),
            out=str(out / TRAIN_FILE),
        )
        write_json(out / SUMMARY_FILE, summary)
    return summary


def _check_out(kind: str, location: Path | str, out: Path) -> None:
    """Refuse an ``out`` that is the directory holding the training set (or inside a ``datasets``
    directory)."""
    if kind == "hub":
        return
    source = Path(location).resolve()
    holder = source if kind == "datasets" else source.parent
    target = out.resolve()
    if target == holder or (kind == "datasets" and holder in target.parents):
        raise ConfigError(
            f"out_dir {out} holds the training set {location}: writing {TRAIN_FILE} there would "
            "replace the input or mix with it; choose another directory",
            parameter="out_dir",
        )


def _record(row: TrainingRow, premise: str, hypothesis: str, swapped: bool) -> dict[str, object]:
    return {
        "premise": premise,
        "hypothesis": hypothesis,
        "label": row.label,
        "source_row": row.row,
        "swapped": swapped,
    }


@dataclass
class _Augmentation:
    """The passes of one augmentation over its training set, and what they count."""

    data: TrainingSet
    split: str
    swapper: Swapper
    select: str
    match: str
    progress: bool
    resolved: dict[str, tuple[str, list[tuple[str, str]]]] = field(default_factory=dict)
    """Text → (swapped text, changes) where the language model read the text's "her"s."""
    counts: Counter[str] = field(default_factory=Counter)
    swap_counts: Counter[str] = field(default_factory=Counter)
    by_occupation: Counter[str] = field(default_factory=Counter)

    def selection(self, row: TrainingRow) -> list[str] | None:
        """The occupations that select ``row`` (``[]`` under ``all``), or None when it is not selected."""
        if self.select != "occupation":
            return []
        return occupations_in(row.premise, rule=self.match) or None

    def read_open_her(self, resolver: HerResolver) -> None:
        """A first pass: every distinct text of a selected, labelled row with a "her" the rule has
        no cue for, read by the language model in one batched call."""
        plans: dict[str, SwapPlan] = {}
        desc = "augment: finding her"
        with progress_bar(None, unit="row", desc=desc, enabled=self.progress, leave=False) as bar:
            for row in self.data.iter_rows(self.split):
                bar.update(1)
                if row.label is None or self.selection(row) is None:
                    continue
                for text in (row.premise, row.hypothesis):
                    if text not in plans:
                        plan = self.swapper.plan(text)
                        if plan is not None and plan.open:
                            plans[text] = plan
        picks = resolver.choose(list(plans.values()))
        self.counts["her_open_texts"] = len(plans)
        self.counts["her_lm_differs"] = sum(any(p) for p in picks)
        self.resolved = {text: plan.render(p) for (text, plan), p in zip(plans.items(), picks, strict=True)}

    def swap(self, text: str) -> tuple[str, list[tuple[str, str]]]:
        """The language model's reading where it read the text, else the rule's."""
        done = self.resolved.get(text)
        return done if done is not None else self.swapper.swap(text)

    def write_originals(self, pending: PendingFile, spill: Any) -> array[int]:
        """The main pass: originals to ``pending``, swapped copies to ``spill``; returns the hashes
        of the originals that may hold a gendered word."""
        gendered_keys = array("Q")
        with progress_bar(None, unit="row", desc="augment", enabled=self.progress, leave=False) as bar:
            for row in self.data.iter_rows(self.split):
                bar.update(1)
                self.counts["rows_read"] += 1
                if row.label is None:
                    self.counts["rows_without_label"] += 1
                    continue
                pending.handle.write(
                    json_line(_record(row, row.premise, row.hypothesis, False)).encode("utf-8")
                )
                self.counts["original_rows_written"] += 1
                swapped = self.swap_row(row)
                if swapped is not None:
                    spill.write(json_line(swapped))
                if (
                    swapped is not None
                    or self.swapper.may_hold(row.premise)
                    or self.swapper.may_hold(row.hypothesis)
                ):
                    gendered_keys.append(_key(row.premise, row.hypothesis, row.label))
        return gendered_keys

    def swap_row(self, row: TrainingRow) -> dict[str, object] | None:
        """The swapped record of a selected row that changes, else None."""
        found = self.selection(row)
        if found is None:
            return None
        self.by_occupation.update(found)
        self.counts["rows_selected"] += 1
        premise, premise_changes = self.swap(row.premise)
        hypothesis, hypothesis_changes = self.swap(row.hypothesis)
        changes = premise_changes + hypothesis_changes
        if not changes:
            return None
        self.counts["rows_swapped"] += 1
        self.counts["words_changed"] += len(changes)
        self.swap_counts.update(f"{a}->{b}" for a, b in changes)
        return _record(row, premise, hypothesis, True)


def _append_swapped(spill_path: Path, pending: PendingFile, keys: array[int], counts: Counter[str]) -> None:
    import numpy as np

    originals = np.unique(np.frombuffer(keys, dtype=np.uint64))
    del keys[:]
    written: set[int] = set()
    with spill_path.open(encoding="utf-8") as spill:
        for line in spill:
            record = json.loads(line)
            key = _key(record["premise"], record["hypothesis"], record["label"])
            at = int(np.searchsorted(originals, np.uint64(key)))
            if key in written or (at < len(originals) and int(originals[at]) == key):
                counts["swapped_duplicates_dropped"] += 1
                continue
            written.add(key)
            pending.handle.write(line.encode("utf-8"))
            counts["swapped_rows_written"] += 1


def format_summary(summary: AugmentSummary) -> str:
    """The summary as the command line prints it."""
    lines = [
        f"read {summary['rows_read']} rows from {summary['source']} "
        f"({summary['rows_without_label']} without a gold label, left out)",
        f"selected {summary['rows_selected']} rows ({summary['select']}, match: {summary['match']}); "
        f"{summary['rows_swapped']} had gendered words ({summary['words_changed']} words changed)",
        f"wrote {summary['original_rows_written']} original + {summary['swapped_rows_written']} swapped rows "
        f"({summary['swapped_duplicates_dropped']} swapped duplicates dropped) to {summary['out']}",
        f"word list: {summary['word_list']} (sha256 {summary['word_list_sha256'][:12]})",
    ]
    if summary["her"] == "lm" and summary["her_model"] is not None:
        lines.append(
            f"her read by {summary['her_model']['spec']} in {summary['her_open_texts']} texts "
            f"({summary['her_lm_differs']} read otherwise than the rule)"
        )
    if summary["top_swaps"]:
        lines.append("most frequent swaps: " + ", ".join(f"{s} ({n})" for s, n in summary["top_swaps"][:10]))
    return "\n".join(lines)
