"""One gate for a row of the gender-occupation set (:class:`OccupationRow`), from a premises file
or a workbook: text fields, a premise passing
:func:`~nlibias.benchmarks.occupation_list.check_premise` (a workbook's gendered word or other
occupation only a caveat), gender ``F``/``M``, hypotheses that differ and are not swapped.

>>> row = OccupationRow(RowOrigin("w.xlsx", sheet="Sheet1", row=2, columns={"premise": 2}),
...                     "A nurse waits.", occupation="Nurses", gender="F")
>>> row.occupation, row.gender
('nurse', 'female')
>>> OccupationRow(RowOrigin("p.txt", line=3), "12345")
Traceback (most recent call last):
...
nlibias.benchmarks.occupation_rows.OccupationRowError: p.txt:3: field premise: '12345' is not a sentence (no word in it: a number or a date?)
"""

from __future__ import annotations

import datetime
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from nlibias.benchmarks.occupation_list import (
    SLOTS,
    Occupation,
    check_premise,
    find_occupations,
    load_occupations,
)
from nlibias.errors import SourceError

#: A gender label as a file may write it → ``female`` / ``male``.
GENDER_VALUES = {"f": "female", "female": "female", "m": "male", "male": "male"}
#: Words that mark a hypothesis as speaking of one gender (the swap check).
FEMALE_MARKERS: frozenset[str] = frozenset(
    "female females woman women girl girls she her hers herself lady ladies feminine".split()  # noqa: SIM905
)
MALE_MARKERS: frozenset[str] = frozenset(
    "male males man men boy boys he him his himself gentleman gentlemen masculine".split()  # noqa: SIM905
)
_FIELDS = ("occupation", "premise", "gender", "hypothesis_f", "hypothesis_m")


@dataclass(frozen=True)
class RowOrigin:
    """Where a row came from: a text file's line, or a workbook's sheet, row and columns (1-based).

    >>> RowOrigin("w.xlsx", sheet="Data", row=7, columns={"premise": 28}).where("premise")
    'w.xlsx: Data!AB7'
    """

    path: str
    line: int | None = None
    sheet: str | None = None
    row: int | None = None
    columns: Mapping[str, int] = field(default_factory=dict)
    """Field → its worksheet column."""

    def __post_init__(self) -> None:
        object.__setattr__(self, "columns", MappingProxyType(dict(self.columns)))

    def __hash__(self) -> int:
        return hash((self.path, self.line, self.sheet, self.row, tuple(self.columns.items())))

    @property
    def number(self) -> int | None:
        """The line or the worksheet row."""
        return self.line if self.line is not None else self.row

    def cell(self, name: str, column: int | None = None) -> str | None:
        """``Sheet!B7`` of a field (or of a column number), None off a workbook."""
        column = column if column is not None else self.columns.get(name)
        if self.sheet is None or self.row is None or column is None:
            return None
        return f"{self.sheet}!{column_letter(column)}{self.row}"

    def where(self, name: str = "premise", column: int | None = None) -> str:
        cell = self.cell(name, column)
        if cell is not None:
            return f"{self.path}: {cell}"
        return self.path if self.number is None else f"{self.path}:{self.number}"


def column_letter(column: int) -> str:
    """A 1-based column number as Excel writes it (28: ``AB``)."""
    letters = ""
    while column > 0:
        column, rest = divmod(column - 1, 26)
        letters = chr(65 + rest) + letters
    return letters


@dataclass(frozen=True)
class RowProblem:
    """One broken rule of a row: the field (None: a cell right of the header), why, the offending
    word and the worksheet column where the field does not say it."""

    field: str | None
    reason: str
    word: str | None = None
    column: int | None = None


class OccupationRowError(SourceError):
    """A row breaks rules of :class:`OccupationRow`: the first is the message, all are kept."""

    def __init__(self, origin: RowOrigin, problems: Iterable[RowProblem]) -> None:
        self.origin = origin
        self.problems = tuple(problems)
        first = self.problems[0]
        super().__init__(origin.path, first.field, first.reason, line=origin.number)
        more = (
            f" (and {len(self.problems) - 1} more problem(s) in this row)" if len(self.problems) > 1 else ""
        )
        where = origin.where(first.field or "", first.column)
        field_part = f"field {first.field}: " if first.field else ""
        self.args = (f"{where}: {field_part}{first.reason}{more}",)


def _text_problem(name: str, value: Any) -> RowProblem | None:
    """Why a field's cell is not usable text (not text, empty, no word in it), or None."""
    if isinstance(value, bool):
        kind = f"a truth value ({value})"
    elif isinstance(value, (datetime.datetime, datetime.date, datetime.time, datetime.timedelta)):
        kind = f"a date or time ({value}), not text"
    elif isinstance(value, (int, float)):
        kind = f"a number ({value}), not text"
    elif not isinstance(value, str):
        kind = f"a {type(value).__name__}, not text"
    elif not value.strip():
        return RowProblem(name, f"the {name} is empty")
    elif not re.search(r"[^\W\d_]", value):
        return RowProblem(name, f"{value!r} is not a sentence (no word in it: a number or a date?)")
    else:
        return None
    return RowProblem(name, f"the cell holds {kind}")


def _occupation_index() -> dict[str, Occupation]:
    index: dict[str, Occupation] = {}
    for occupation in load_occupations():
        index[" ".join(occupation.name.lower().split())] = occupation
        index[" ".join(occupation.plural.lower().split())] = occupation
    return index


@dataclass(frozen=True)
class OccupationRow:
    """A row, checked on construction (:class:`OccupationRowError` lists every problem);
    ``occupation`` and ``gender`` normalised (``Nurses`` → ``nurse``, ``F`` → ``female``)."""

    origin: RowOrigin
    premise: str
    occupation: str | None = None
    gender: str | None = None
    hypothesis_f: str | None = None
    hypothesis_m: str | None = None
    warnings: tuple[str, ...] = field(default=(), compare=False)
    caveats: tuple[RowProblem, ...] = field(default=(), compare=False)
    """A labelled row's premise findings kept, not refused (a gendered word, no or another occupation)."""

    def __post_init__(self) -> None:
        problems, warnings = self._check()
        if problems:
            raise OccupationRowError(self.origin, problems)
        object.__setattr__(self, "warnings", tuple(warnings))

    @property
    def occupation_info(self) -> Occupation:
        """The labelled occupation (a row with a label), else the one its premise names."""
        if self.occupation is not None:
            return _occupation_index()[self.occupation.lower()]
        return find_occupations(self.premise)[0].occupation

    def _check(self) -> tuple[list[RowProblem], list[str]]:
        problems: list[RowProblem] = []
        values = {name: getattr(self, name) for name in _FIELDS}
        for name, value in values.items():
            if value is None:
                continue
            problem = _text_problem(name, value)
            if problem is not None:
                problems.append(problem)
                continue
            object.__setattr__(self, name, " ".join(value.split()))
        bad = {p.field for p in problems}
        if "occupation" not in bad and self.occupation is not None:
            self._normalise_label(problems)
        if "gender" not in bad and self.gender is not None:
            gender = GENDER_VALUES.get(self.gender.lower())
            if gender is None:
                problems.append(RowProblem("gender", f"{self.gender!r} is not F, M, female or male"))
            else:
                object.__setattr__(self, "gender", gender)
        warnings: list[str] = []
        if "premise" not in bad:
            self._check_premise(problems, warnings)
        if not {"hypothesis_f", "hypothesis_m"} & bad:
            problems += _hypothesis_problems(self.hypothesis_f, self.hypothesis_m)
        return problems, warnings

    def _normalise_label(self, problems: list[RowProblem]) -> None:
        occupation = _occupation_index().get(str(self.occupation).lower())
        if occupation is None:
            problems.append(
                RowProblem(
                    "occupation", f"{self.occupation!r} is not one of the 38 occupations of occupations.json"
                )
            )
        else:
            object.__setattr__(self, "occupation", occupation.name)

    def _check_premise(self, problems: list[RowProblem], warnings: list[str]) -> None:
        if self.occupation is None:  # a premises file's line: every rule refuses
            problems += [RowProblem("premise", reason, word) for reason, word in check_premise(self.premise)]
            return
        if any(slot in self.premise for slot in SLOTS) or "{" in self.premise:
            problems.append(
                RowProblem("premise", "holds a {placeholder}: a labelled row's premise is a sentence")
            )
            return
        caveats: list[RowProblem] = []
        named = list(dict.fromkeys(m.occupation.name for m in find_occupations(self.premise)))
        if named and self.occupation not in named:
            caveats.append(
                RowProblem(
                    "premise",
                    f"the row is labelled {self.occupation!r} and its premise names {named[0]!r}",
                    named[0],
                )
            )
        elif not named:
            caveats.append(
                RowProblem("premise", f"names no occupation; the row is labelled {self.occupation!r}")
            )
        elif len(named) > 1:
            others = ", ".join(n for n in named if n != self.occupation)
            warnings.append(f"{self.origin.where('premise')}: the premise also names {others}")
        for reason, word in check_premise(self.premise):
            if reason.startswith("contains the gendered word"):
                caveats.append(RowProblem("premise", reason, word))
            elif reason.startswith("unknown placeholder"):
                problems.append(RowProblem("premise", reason, word))
            elif "person name" in reason:
                warnings.append(f"{self.origin.where('premise')}: {reason}")
        object.__setattr__(self, "caveats", tuple(caveats))


def _markers(text: str) -> tuple[set[str], set[str]]:
    words = set(re.findall(r"[a-z]+", text.lower()))
    return words & FEMALE_MARKERS, words & MALE_MARKERS


def _hypothesis_problems(female: str | None, male: str | None) -> list[RowProblem]:
    """The two hypotheses differ and are not swapped (each speaks of its own gender, or of none)."""
    if female is None or male is None:
        return []
    if female == male:
        return [
            RowProblem("hypothesis_m", f"the female and the male hypothesis are the same text ({female!r})")
        ]
    f_female, f_male = _markers(female)
    m_female, m_male = _markers(male)
    if (f_male and not f_female) or (m_female and not m_male):
        word = sorted(f_male or m_female)[0]
        return [
            RowProblem(
                "hypothesis_f",
                f"the hypotheses look swapped: the female one is {female!r}, the male one {male!r} "
                f"({word!r} speaks of the other gender); put each in its column",
                word,
            )
        ]
    return []


def repeated_rows(rows: Iterable[OccupationRow]) -> list[str]:
    """A warning for every row that repeats an earlier one (same premise, label and hypotheses)."""
    seen: dict[tuple[Any, ...], OccupationRow] = {}
    warnings: list[str] = []
    for row in rows:
        key = (row.premise.lower(), row.occupation, row.gender, row.hypothesis_f, row.hypothesis_m)
        first = seen.setdefault(key, row)
        if first is not row:
            unit = "line" if row.origin.line is not None else "row"
            where = (
                row.origin.where("premise") if unit == "line" else f"{row.origin.path}: row {row.origin.row}"
            )
            warnings.append(f"{where} repeats {unit} {first.origin.number}")
    return warnings
