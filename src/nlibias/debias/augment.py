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
from array import array
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any, TypedDict, get_type_hints

from annotated_types import Predicate

from nlibias.debias.finetune_checks import check_split_applies
from nlibias.debias.her_resolver import DEFAULT_HER_MODEL, HerChoice, HerModel, HerResolver
from nlibias.debias.occupation_match import MatchRule, occupations_in
from nlibias.debias.swap import Swapper, SwapPlan
from nlibias.debias.training_rows import TrainingRow, TrainingSet, describe_training_set
from nlibias.debias.wordlists import SwapList, read_pairs, swap_list_named
from nlibias.errors import ConfigError, SourceError
from nlibias.io.atomic import PendingFile, json_line, temporary_file, write_json
from nlibias.runtime.progress import progress_bar
from nlibias.schema.applies import AppliesTo
from nlibias.schema.declared import Allowed, declared

SELECTIONS = ("occupation", "all")
Selection = Annotated[str, Predicate(SELECTIONS.__contains__), Allowed(f"one of {str(SELECTIONS)[1:-1]}")]
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


def _her_resolver(her: str, her_model: str | HerResolver | None) -> HerResolver | None:
    """The language model that reads the "her"s the rule has no cue for (``her='lm'``), or None."""
    if her != "lm":
        return None
    given = her_model if her_model is not None else DEFAULT_HER_MODEL
    return given if isinstance(given, HerResolver) else HerResolver.load(given)


@declared
def augment_gender_swap(
    train: str | Path | TrainingSet,
    out_dir: str | Path,
    *,
    select: Selection = "occupation",
    match: Match = "words",
    word_list: str | Path = "winobias",
    names: str | Path | None = None,
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
    swaps = swap_list_named(word_list)
    if names is not None:
        swaps = swaps.with_names(read_pairs(names, both_ways=True))
    swapper = Swapper(swaps)
    data = train if isinstance(train, TrainingSet) else describe_training_set(train, split)
    out = Path(out_dir)
    _check_out(data.kind, data.location, out)
    counts: Counter[str] = Counter()
    resolver = _her_resolver(her, her_model)
    resolved = (
        {}
        if resolver is None
        else _read_open_her(data, split, swapper, select, match, resolver, counts, progress)
    )
    swap_counts: Counter[str] = Counter()
    by_occupation: Counter[str] = Counter()
    out.mkdir(parents=True, exist_ok=True)
    fd, spill_path = temporary_file(out / "swapped")
    swap = _swap_with(swapper, resolved)
    try:
        with PendingFile(out / TRAIN_FILE) as pending, os.fdopen(fd, "w", encoding="utf-8") as spill:
            keys = _write_originals(
                data, split, swapper, swap, select, match, pending, spill,
                (counts, by_occupation, swap_counts), progress,
            )  # fmt: skip
            if not counts["original_rows_written"]:
                read = counts["rows_read"]
                raise SourceError(
                    data.location, None, f"no rows with a gold label ({read} row{'s' * (read != 1)} read, none labelled)",
                    fix="label the rows entailment/neutral/contradiction",
                )  # fmt: skip
            spill.close()
            _append_swapped(spill_path, pending, keys, counts)
            pending.commit()
    finally:
        spill_path.unlink(missing_ok=True)
    options = {"select": select, "match": match, "split": split, "names": names, "her": her}
    summary = _summary(data, options, swaps, counts, swap_counts, by_occupation, resolver, out)
    write_json(out / SUMMARY_FILE, summary)
    return summary


SwapFunction = Callable[[str], tuple[str, list[tuple[str, str]]]]


def _swap_with(swapper: Swapper, resolved: dict[str, tuple[str, list[tuple[str, str]]]]) -> SwapFunction:
    """The swap of one text: the language model's reading where it read the text, else the rule's."""
    if not resolved:
        return swapper.swap

    def swap(text: str) -> tuple[str, list[tuple[str, str]]]:
        done = resolved.get(text)
        return done if done is not None else swapper.swap(text)

    return swap


def _write_originals(
    train: TrainingSet,
    split: str,
    swapper: Swapper,
    swap: SwapFunction,
    select: str,
    match: str,
    pending: PendingFile,
    spill: Any,
    counters: tuple[Counter[str], Counter[str], Counter[str]],
    progress: bool,
) -> array[int]:
    """The pass over the training set: originals to ``pending``, swapped copies to ``spill``;
    returns the hashes of the originals that may hold a gendered word."""
    counts, by_occupation, swap_counts = counters
    gendered_keys = array("Q")
    with progress_bar(None, unit="row", desc="augment", enabled=progress, leave=False) as bar:
        for row in train.iter_rows(split):
            bar.update(1)
            counts["rows_read"] += 1
            if row.label is None:
                counts["rows_without_label"] += 1
                continue
            pending.handle.write(json_line(_record(row, row.premise, row.hypothesis, False)).encode("utf-8"))
            counts["original_rows_written"] += 1
            swapped = _swap_row(row, swap, select, match, counts, by_occupation, swap_counts)
            if swapped is not None:
                spill.write(json_line(swapped))
            if swapped is not None or swapper.may_hold(row.premise) or swapper.may_hold(row.hypothesis):
                gendered_keys.append(_key(row.premise, row.hypothesis, row.label))
    return gendered_keys


def _read_open_her(
    train: TrainingSet,
    split: str,
    swapper: Swapper,
    select: str,
    match: str,
    resolver: HerResolver,
    counts: Counter[str],
    progress: bool,
) -> dict[str, tuple[str, list[tuple[str, str]]]]:
    """A first pass: every distinct text of a selected, labelled row with a "her" the rule has no
    cue for, read by the language model in one batched call; text → (swapped text, changes)."""
    plans: dict[str, SwapPlan] = {}
    with progress_bar(None, unit="row", desc="augment: finding her", enabled=progress, leave=False) as bar:
        for row in train.iter_rows(split):
            bar.update(1)
            if row.label is None or _selection(row, select, match) is None:
                continue
            for text in (row.premise, row.hypothesis):
                if text not in plans:
                    plan = swapper.plan(text)
                    if plan is not None and plan.open:
                        plans[text] = plan
    picks = resolver.choose(list(plans.values()))
    counts["her_open_texts"] = len(plans)
    counts["her_lm_differs"] = sum(any(p) for p in picks)
    return {text: plan.render(p) for (text, plan), p in zip(plans.items(), picks, strict=True)}


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


def _summary(
    train: TrainingSet,
    options: dict[str, Any],
    swaps: SwapList,
    counts: Counter[str],
    swap_counts: Counter[str],
    by_occupation: Counter[str],
    resolver: HerResolver | None,
    out: Path,
) -> AugmentSummary:
    names = options["names"]
    return AugmentSummary(
        source=str(train.given),
        source_kind=train.kind,
        source_sha256=train.sha256,
        split=options["split"],
        select=options["select"],
        match=options["match"] if options["select"] == "occupation" else "none",
        word_list=swaps.name,
        word_list_note=swaps.note,
        word_list_sha256=swaps.digest(),
        names=None if names is None else str(names),
        her=options["her"],
        her_model=None if resolver is None else dict(resolver.identity()),
        **{name: counts[name] for name in _COUNTS},  # type: ignore[typeddict-item]
        top_swaps=swap_counts.most_common(20),
        selected_by_occupation=dict(sorted(by_occupation.items(), key=lambda kv: (-kv[1], kv[0]))),
        out=str(out / TRAIN_FILE),
    )


def _record(row: TrainingRow, premise: str, hypothesis: str, swapped: bool) -> dict[str, object]:
    return {
        "premise": premise,
        "hypothesis": hypothesis,
        "label": row.label,
        "source_row": row.row,
        "swapped": swapped,
    }


def _selection(row: TrainingRow, select: str, match: str) -> list[str] | None:
    """The occupations that select ``row`` (``[]`` under ``all``), or None when it is not selected."""
    if select != "occupation":
        return []
    return occupations_in(row.premise, rule=match) or None


def _swap_row(
    row: TrainingRow,
    swap: SwapFunction,
    select: str,
    match: str,
    counts: Counter[str],
    by_occupation: Counter[str],
    swap_counts: Counter[str],
) -> dict[str, object] | None:
    """The swapped record of a selected row that changes, else None (counts updated)."""
    found = _selection(row, select, match)
    if found is None:
        return None
    by_occupation.update(found)
    counts["rows_selected"] += 1
    premise, premise_changes = swap(row.premise)
    hypothesis, hypothesis_changes = swap(row.hypothesis)
    changes = premise_changes + hypothesis_changes
    if not changes:
        return None
    counts["rows_swapped"] += 1
    counts["words_changed"] += len(changes)
    swap_counts.update(f"{a}->{b}" for a, b in changes)
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
