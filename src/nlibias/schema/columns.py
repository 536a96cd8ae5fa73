"""Samples as columns (~0.1 kB a sample): small integer codes, 64-bit digests of ``pair_key`` and
the texts, and ids and pair keys packed in one UTF-8 buffer each; built in one streaming pass.
"""

from __future__ import annotations

import hashlib
import itertools
import operator
from array import array
from collections.abc import Collection, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar, overload

import numpy as np

from nlibias.errors import DataError
from nlibias.schema import LABEL_INDEX, LABELS, Sample

NO_CODE = -1
"""The code of a missing value (no pair key, no stereotype)."""
_STEREOTYPE_CODES = {"pro": 0, "anti": 1}


def digest64(text: str) -> int:
    """A signed 64-bit digest of ``text`` (never :data:`NO_CODE`).

    >>> digest64("k") == digest64("k"), digest64("k") == digest64("l")
    (True, False)
    """
    code = int.from_bytes(
        hashlib.blake2b(text.encode("utf-8"), digest_size=8).digest(), "little", signed=True
    )
    return code if code != NO_CODE else 0


T = TypeVar("T")


class ItemSequence(Sequence[T]):
    """A read-only sequence whose items ``_item(i)`` makes on demand."""

    __slots__ = ()

    def _item(self, i: int) -> T:
        raise NotImplementedError

    @overload
    def __getitem__(self, index: int) -> T: ...

    @overload
    def __getitem__(self, index: slice) -> list[T]: ...

    def __getitem__(self, index: int | slice) -> T | list[T]:
        if isinstance(index, slice):
            return [self._item(i) for i in range(*index.indices(len(self)))]
        i = operator.index(index)
        if i < 0:
            i += len(self)
        if not 0 <= i < len(self):
            raise IndexError(f"item {index} of {len(self)}")
        return self._item(i)

    def __iter__(self) -> Iterator[T]:
        for i in range(len(self)):
            yield self._item(i)


class Picked(ItemSequence[T]):
    """``items[positions[i]]`` on demand (nothing copied).

    >>> list(Picked(["a", "b", "c"], np.array([2, 0])))
    ['c', 'a']
    """

    __slots__ = ("_items", "_positions")

    def __init__(self, items: Sequence[T], positions: np.ndarray) -> None:
        self._items, self._positions = items, positions

    def __len__(self) -> int:
        return len(self._positions)

    def _item(self, i: int) -> T:
        return self._items[int(self._positions[i])]


class StringColumn(ItemSequence[str]):
    """Strings packed in one UTF-8 buffer with an offset per string (8 bytes + the text).

    >>> column = StringColumn.from_strings(["a", "bé", ""])
    >>> len(column), column[1], list(column)
    (3, 'bé', ['a', 'bé', ''])
    """

    __slots__ = ("_buffer", "_offsets")

    def __init__(self, buffer: bytes | bytearray, offsets: np.ndarray) -> None:
        self._buffer = buffer
        self._offsets = offsets

    @classmethod
    def from_strings(cls, strings: Iterable[str]) -> StringColumn:
        builder = _StringColumnBuilder()
        for text in strings:
            builder.append(text)
        return builder.finish()

    def __len__(self) -> int:
        return len(self._offsets) - 1

    def _item(self, i: int) -> str:
        return self._buffer[self._offsets[i] : self._offsets[i + 1]].decode("utf-8")

    def __iter__(self) -> Iterator[str]:
        buffer, offsets = self._buffer, self._offsets.tolist()
        for start, stop in itertools.pairwise(offsets):
            yield buffer[start:stop].decode("utf-8")

    @property
    def nbytes(self) -> int:
        return len(self._buffer) + self._offsets.nbytes


class _StringColumnBuilder:
    def __init__(self) -> None:
        self._buffer = bytearray()
        self._offsets = array("q", [0])

    def append(self, text: str) -> None:
        self._buffer += text.encode("utf-8")
        self._offsets.append(len(self._buffer))

    def finish(self) -> StringColumn:
        return StringColumn(self._buffer, np.frombuffer(self._offsets, dtype=np.int64))


@dataclass(frozen=True, eq=False)
class Categorical(ItemSequence[Any]):
    """A column of repeated values: an int32 code per item and the distinct values.

    >>> column = Categorical.from_values(["b", "a", "b", None])
    >>> column.codes.tolist(), column.values, column[2], column.tolist()
    ([0, 1, 0, 2], ('b', 'a', None), 'b', ['b', 'a', 'b', None])
    """

    codes: np.ndarray
    values: tuple[Any, ...]

    @classmethod
    def from_values(cls, values: Iterable[Any]) -> Categorical:
        builder = _CategoricalBuilder()
        for value in values:
            builder.append(value)
        return builder.finish()

    def __len__(self) -> int:
        return len(self.codes)

    def _item(self, i: int) -> Any:
        return self.values[int(self.codes[i])]

    def tolist(self) -> list[Any]:
        return [self.values[c] for c in self.codes.tolist()]

    def take(self, positions: np.ndarray) -> Categorical:
        """The items at ``positions``, keeping only the values they use (in first-code order).

        >>> Categorical.from_values(["a", "b", "c", "b"]).take(np.array([3, 2])).values
        ('b', 'c')
        """
        used, codes = np.unique(self.codes[positions], return_inverse=True)
        values = tuple(self.values[int(c)] for c in used)
        return Categorical(codes.ravel().astype(smallest_int_type(len(values))), values)

    def members(self) -> dict[str, np.ndarray]:
        """``{str(value): positions}`` for every value present (values with the same text merge)."""
        order = np.argsort(self.codes, kind="stable")
        bounds = np.searchsorted(self.codes[order], np.arange(len(self.values) + 1))
        groups: dict[str, list[np.ndarray]] = {}
        for code, value in enumerate(self.values):
            positions = order[bounds[code] : bounds[code + 1]]
            if len(positions):
                groups.setdefault(str(value), []).append(positions)
        return {name: np.sort(np.concatenate(parts)) for name, parts in groups.items()}


def _hashable(value: Any) -> Any:
    try:
        hash(value)
    except TypeError:
        return ("<unhashable>", repr(value))
    return (type(value), value)  # 1 and True and 1.0 stay apart, as in the JSON they came from


class _CategoricalBuilder:
    def __init__(self) -> None:
        self._codes = array("i")
        self._index: dict[Any, int] = {}
        self._values: list[Any] = []

    def append(self, value: Any) -> None:
        key = value if type(value) is str else _hashable(value)  # most values are strings
        code = self._index.get(key)
        if code is None:
            code = self._index[key] = len(self._values)
            self._values.append(value)
        self._codes.append(code)

    def finish(self) -> Categorical:
        codes = np.frombuffer(self._codes, dtype=np.int32)
        return Categorical(codes.astype(smallest_int_type(len(self._values))), tuple(self._values))


def smallest_int_type(n_values: int) -> type[np.signedinteger[Any]]:
    """The narrowest signed integer type that holds codes ``0 .. n_values - 1`` (and -1).

    >>> smallest_int_type(100).__name__, smallest_int_type(1000).__name__, smallest_int_type(10**5).__name__
    ('int8', 'int16', 'int32')
    """
    for candidate in (np.int8, np.int16):
        if n_values <= np.iinfo(candidate).max:
            return candidate
    return np.int32


@dataclass(frozen=True, eq=False)
class SampleColumns:
    """The samples of one benchmark as columns (``stereotype`` 0 pro, 1 anti, -1; ``pair_code`` -1: no key)."""

    source: str
    ids: Sequence[str]
    pair_keys: Sequence[str | None]
    pair_code: np.ndarray
    text_code: np.ndarray
    gold: np.ndarray
    stereotype: np.ndarray
    domain: Categorical
    subtopic: Categorical
    group: Categorical
    counterfactual_group: Categorical
    provenance: Mapping[str, Categorical]
    premise: Categorical
    hypothesis: Categorical

    def __len__(self) -> int:
        return len(self.ids)

    def domain_of_subtopic(self) -> dict[str, str]:
        """Each subtopic's domain (the first one it appears with)."""
        pairs = np.unique(np.stack([self.subtopic.codes, self.domain.codes]), axis=1) if len(self) else ()
        found: dict[str, str] = {}
        for subtopic_code, domain_code in zip(*pairs, strict=True):
            subtopic, domain = self.subtopic.values[subtopic_code], self.domain.values[domain_code]
            if subtopic is not None and domain is not None:
                found.setdefault(str(subtopic), str(domain))
        return found

    @classmethod
    def from_samples(
        cls, samples: Iterable[Sample], *, provenance_keys: Collection[str] = ()
    ) -> SampleColumns:
        """Columns of ``samples`` (read once), keeping ``provenance_keys``; mixed sources are refused."""
        ids, keys = _StringColumnBuilder(), _StringColumnBuilder()
        pair_code, text_code = array("q"), array("q")
        gold, stereotype = array("b"), array("b")
        categorical = {name: _CategoricalBuilder() for name in (*_CATEGORICAL, *_TEXTS)}
        provenance = {key: _CategoricalBuilder() for key in provenance_keys}
        sources: set[str] = set()
        for sample in samples:
            sources.add(sample.source)
            ids.append(sample.id)
            keys.append(sample.pair_key or "")
            pair_code.append(NO_CODE if sample.pair_key is None else digest64(sample.pair_key))
            text_code.append(digest64(f"{sample.premise}\x00{sample.hypothesis}"))
            gold.append(LABEL_INDEX[sample.gold])
            stereotype.append(_STEREOTYPE_CODES.get(sample.stereotype or "", NO_CODE))
            for name, builder in categorical.items():
                builder.append(getattr(sample, name))
            for key, builder in provenance.items():
                builder.append(sample.provenance.get(key) if sample.provenance else None)
        if len(sources) > 1:
            raise DataError(
                f"the samples mix sources {', '.join(sorted(sources))}; audit each benchmark separately "
                f"(one samples directory per benchmark)",
                field="source",
            )
        pair_codes = np.frombuffer(pair_code, dtype=np.int64)
        return cls(
            source=next(iter(sources), ""),
            ids=ids.finish(),
            pair_keys=_OptionalStrings(keys.finish(), pair_codes == NO_CODE),
            pair_code=pair_codes,
            text_code=np.frombuffer(text_code, dtype=np.int64),
            gold=np.frombuffer(gold, dtype=np.int8),
            stereotype=np.frombuffer(stereotype, dtype=np.int8),
            provenance={key: builder.finish() for key, builder in provenance.items()},
            **{name: builder.finish() for name, builder in categorical.items()},
        )

    def first_duplicate_id(self) -> tuple[int, int] | None:
        """Positions ``(earlier, later)`` of the first repeated id in file order, or None."""
        return IdPositions(self.ids).first_duplicate()

    def take(self, positions: np.ndarray) -> SampleColumns:
        """The samples at ``positions`` (in that order) as columns; ids and pair keys are views."""
        positions = np.asarray(positions, dtype=np.int64)
        return SampleColumns(
            source=self.source,
            ids=Picked(self.ids, positions),
            pair_keys=Picked(self.pair_keys, positions),
            pair_code=self.pair_code[positions],
            text_code=self.text_code[positions],
            gold=self.gold[positions],
            stereotype=self.stereotype[positions],
            provenance={key: column.take(positions) for key, column in self.provenance.items()},
            **{name: getattr(self, name).take(positions) for name in (*_CATEGORICAL, *_TEXTS)},
        )

    def records(self) -> list[Sample]:
        """The samples as objects, with the kept provenance keys.

        >>> s = Sample(id="a", source="x", domain="d", subtopic="t", premise="P", hypothesis="H",
        ...            gold="neutral", stereotype="pro", pair_key="k", provenance={"row": 1})
        >>> SampleColumns.from_samples([s], provenance_keys=["row"]).records() == [s]
        True
        """
        fields = {name: getattr(self, name).tolist() for name in (*_CATEGORICAL, *_TEXTS)}
        provenance = {key: column.tolist() for key, column in self.provenance.items()}
        stereotypes = {code: name for name, code in _STEREOTYPE_CODES.items()}
        return [
            Sample(
                id=self.ids[i],
                source=self.source,
                gold=LABELS[gold],
                stereotype=stereotypes.get(stereotype),  # type: ignore[arg-type]
                pair_key=self.pair_keys[i],
                provenance={k: v[i] for k, v in provenance.items() if v[i] is not None},
                **{name: values[i] for name, values in fields.items()},
            )
            for i, (gold, stereotype) in enumerate(
                zip(self.gold.tolist(), self.stereotype.tolist(), strict=True)
            )
        ]

    def position_ids(self, positions: Iterable[int]) -> list[str]:
        return [self.ids[int(i)] for i in positions]


_CATEGORICAL = ("domain", "subtopic", "group", "counterfactual_group")
_TEXTS = ("premise", "hypothesis")


class _OptionalStrings(ItemSequence[str | None]):
    """Strings, None where ``missing`` (a pair key's place without a key)."""

    __slots__ = ("_missing", "_strings")

    def __init__(self, strings: StringColumn, missing: np.ndarray) -> None:
        self._strings = strings
        self._missing = missing

    def __len__(self) -> int:
        return len(self._strings)

    def _item(self, i: int) -> str | None:
        return None if self._missing[i] else self._strings[i]


class IdPositions:
    """``positions(id)``: the position of each id among the samples, -1 if absent.

    >>> positions = IdPositions(["a", "b", "c"])
    >>> positions("c"), positions("z")
    (2, -1)
    """

    __slots__ = ("_following", "_ids", "_order", "_sorted")

    def __init__(self, ids: Sequence[str]) -> None:
        codes = np.fromiter((digest64(i) for i in ids), dtype=np.int64, count=len(ids))
        self._ids = ids
        self._order = np.argsort(codes, kind="stable")
        self._sorted = codes[self._order]
        self._following = 0  # ids asked in sample order need no search

    def __call__(self, sample_id: str) -> int:
        following = self._following
        if following < len(self._ids) and self._ids[following] == sample_id:
            self._following = following + 1
            return following
        code = digest64(sample_id)
        k = int(np.searchsorted(self._sorted, code))
        while k < len(self._sorted) and self._sorted[k] == code:
            position = int(self._order[k])
            if self._ids[position] == sample_id:
                self._following = position + 1
                return position
            k += 1  # another id with the same digest
        return -1

    def first_duplicate(self) -> tuple[int, int] | None:
        """Positions ``(earlier, later)`` of the first repeated id in sample order, or None."""
        order, codes = self._order, self._sorted
        found: tuple[int, int] | None = None
        for k in np.flatnonzero(codes[1:] == codes[:-1]).tolist():
            earlier, later = int(order[k]), int(order[k + 1])
            if self._ids[earlier] == self._ids[later] and (found is None or later < found[1]):
                found = (earlier, later)
        return found
