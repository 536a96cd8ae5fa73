"""The rules a samples file's samples follow, beyond their fields' types: what would change results
silently is refused with the file, line and field (:mod:`nlibias.io.samples` applies them as it
reads). A key field (id, source, slice names, pair key) is neither empty nor padded with spaces;
a text is not blank (invisible characters count as blank); a bias sample of a ``neutral_gold``
source is neutral; the two samples of a pair agree on what they share (:class:`PairTwins`); ids
are unique (:func:`check_unique_ids`).

>>> from nlibias.schema import Sample
>>> padded = Sample(id="a", source="x", domain=" d", subtopic="t", premise="P", hypothesis="H", gold="neutral")
>>> check_sample(Path("s.jsonl"), 3, padded, neutral_gold=())
Traceback (most recent call last):
...
nlibias.errors.SourceError: s.jsonl:3: field domain: ' d' has spaces around it (it would be a domain of its own, apart from 'd') (remove the spaces)
"""

from __future__ import annotations

import operator
import unicodedata
from collections.abc import Collection, Iterable
from pathlib import Path
from typing import Any

from nlibias.errors import SourceError
from nlibias.io.jsonl import iter_jsonl
from nlibias.schema import Sample

_KEY_FIELDS = ("id", "source", "domain", "subtopic", "pair_key", "group", "counterfactual_group")
"""Fields that name a slice, a pair or a sample: ``" gender"`` would be a slice of its own."""


def is_blank_text(text: str) -> bool:
    """Whether ``text`` is empty once whitespace and invisible characters (zero-width spaces,
    joiners, byte-order marks: Unicode categories Z* and Cf, and controls) are taken out.

    >>> is_blank_text("\u200b\u2060\ufeff \u00a0"), is_blank_text(" a\u200b")
    (True, False)
    """
    if text.isprintable():  # the usual case, in C: no control, format or odd space character
        return not text.strip()
    return all(unicodedata.category(c)[0] in "ZC" for c in text)


def check_sample(path: Path, line: int, sample: Sample, neutral_gold: Collection[str]) -> Sample:
    """Refuse what would change results silently: an empty id, a key field with spaces around it,
    an empty (or invisible) text, a bias sample of a ``neutral_gold`` source with another gold label."""
    for value in _key_values(sample):  # strip() returns a str with nothing to strip as it is
        if value is not None and (not value or value.strip() is not value):
            _check_key_fields(path, line, sample)
            break
    for name in ("premise", "hypothesis"):
        if is_blank_text(getattr(sample, name)):
            raise SourceError(
                path,
                name,
                "empty text (nothing visible: only spaces or zero-width characters)",
                line=line,
                fix="remove the sample or write its text",
            )
    if sample.stereotype is not None and sample.gold != "neutral" and sample.source in neutral_gold:
        raise SourceError(
            path,
            "gold",
            f"a {sample.source} bias sample (stereotype {sample.stereotype}) has gold {sample.gold}; "
            "its bias samples are neutral",
            line=line,
            fix="set gold to neutral, or stereotype to null for a test sample",
        )
    return sample


_key_values = operator.attrgetter(*_KEY_FIELDS)


def _check_key_fields(path: Path, line: int, sample: Sample) -> None:
    """Refuse an empty key field or one with spaces around it, naming the field."""
    for name in _KEY_FIELDS:
        value = getattr(sample, name)
        if value is None:
            continue
        if not value.strip():
            if name == "id":
                raise SourceError(
                    path, name, "empty sample id", line=line, fix="give every sample its own id"
                )
            if name in ("pair_key", "group", "counterfactual_group"):
                raise SourceError(path, name, "empty text", line=line, fix="use null where there is none")
            raise SourceError(path, name, "empty text", line=line, fix=f"write the sample's {name}")
        if value != value.strip():
            raise SourceError(
                path,
                name,
                f"{value!r} has spaces around it (it would be a {name} of its own, apart from {value.strip()!r})",
                line=line,
                fix="remove the spaces",
            )


_TWIN_FIELDS = ("domain", "subtopic", "premise", "premise_index", "combination_index", "premise_template")
"""What the two samples of a pair share: their slice, and their premise (its text where the
source keeps it, otherwise the premise and word combination it was rendered from)."""


class PairTwins:
    """Refuses a pair whose two samples disagree on a field they share (:data:`_TWIN_FIELDS`):
    they would be scored as a counterfactual pair while they are not one. Holds only the samples
    whose twin has not been read yet (a pair's samples are usually next to each other); the
    premise text is compared for ``shared_premises`` sources."""

    def __init__(self, path: Path, shared_premises: Collection[str]) -> None:
        self._path = path
        self._shared_premises = shared_premises
        self._waiting: dict[str, tuple[int, Sample, Any]] = {}

    def check(self, line: int, sample: Sample, provenance: Any) -> None:
        key = sample.pair_key
        if key is None or sample.stereotype is None:  # a test sample is no member of a pair
            return
        first = self._waiting.pop(key, None)
        if first is None:
            self._waiting[key] = (line, sample, provenance)
        else:
            self._compare(key, first, (line, sample, provenance))

    def _compare(self, key: str, *members: tuple[int, Sample, Any]) -> None:
        (first_line, *_), (line, *_) = members
        before, now = (self._shared(sample, provenance) for _, sample, provenance in members)
        if before == now:
            return
        for name, a, b in zip(_TWIN_FIELDS, before, now, strict=True):
            if a != b:
                # the first three are the samples' own fields, the rest provenance keys
                field = name if name in _TWIN_FIELDS[:3] else f"provenance.{name}"
                raise SourceError(
                    self._path,
                    field,
                    f"the two samples of pair {key!r} differ in {name}: {a!r} on line {first_line}, "
                    f"{b!r} on line {line}; a counterfactual pair differs only in its group",
                    line=line,
                    fix="give the two samples the same value, or different pair_keys if they are not a pair",
                )

    def _shared(self, sample: Sample, provenance: Any) -> tuple[Any, ...]:
        given = provenance if isinstance(provenance, dict) else {}
        premise = sample.premise if sample.source in self._shared_premises else None
        return (sample.domain, sample.subtopic, premise, *(given.get(k) for k in _TWIN_FIELDS[3:]))


def check_unique_ids(path: Path, samples: Iterable[Sample]) -> None:
    """Refuse a second sample with an id already read (:func:`duplicate_id_error`)."""
    seen: dict[str, int] = {}
    for position, sample in enumerate(samples):
        earlier = seen.setdefault(sample.id, position)
        if earlier != position:
            raise duplicate_id_error(path, sample.id, earlier=earlier, later=position)


def duplicate_id_error(path: Path, sample_id: str, *, earlier: int, later: int) -> SourceError:
    """The error for a sample id at positions ``earlier`` and ``later`` (0-based) of a samples file,
    naming the lines both are on (blank lines make a JSONL line differ from a position)."""
    first, second = _lines_of(path, (earlier, later))
    return SourceError(
        path,
        "id",
        f"duplicate sample id {sample_id!r} (also sample {earlier + 1}); the first is on line {first}",
        line=second,
        fix="every sample needs its own id",
    )


def _lines_of(path: Path, positions: tuple[int, int]) -> tuple[int, int]:
    """The file lines of two sample positions (a Parquet file's row numbers; the positions + 1
    where the file cannot be read again)."""
    wanted = {p: p + 1 for p in positions}
    if path.suffix != ".parquet":
        try:
            for position, (line, _) in enumerate(iter_jsonl(path)):
                if position in wanted:
                    wanted[position] = line
                if position >= max(positions):
                    break
        except (SourceError, OSError):
            pass
    return wanted[positions[0]], wanted[positions[1]]
