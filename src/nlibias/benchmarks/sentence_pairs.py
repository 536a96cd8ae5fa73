"""Sentence-pair benchmarks for token-probability (TP) bias: CrowS-Pairs, WinoQueer, BBNLI's
pro/anti hypotheses and a user's (more, less) pairs. Each pair is one sample (premise: the more,
hypothesis: the less stereotypical sentence) whose ``domain`` is its bias group, so per-domain
slices are the references' per-group scores (docs/design.md, "Token probability (TP)").
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, StringConstraints, model_validator

from nlibias.benchmarks.bbnli_source import expand_bbnli_source
from nlibias.benchmarks.data_locations import PinnedData, resolve_data
from nlibias.benchmarks.rows import check_row, nonblank, refuse
from nlibias.errors import SourceError
from nlibias.schema import Sample
from nlibias.schema.declared import Allowed, PathArg, declared
from nlibias.textio.json_text import parse_json
from nlibias.textio.text_files import (
    csv_header,
    read_csv_records,
    read_text,
    require_csv_columns,
)

CROWS_PAIRS = "crows-pairs"
WINOQUEER = "winoqueer"
BBNLI_TP = "bbnli-tp"
USER_PAIRS = "sentence-pairs"
DIRECTIONS = {"stereo": "pro", "antistereo": "anti"}
"""CrowS-Pairs ``stereo_antistereo`` → the sample's ``stereotype`` (the pair's direction)."""

CROWS_PAIRS_COMMIT = "8aaac11"
WINOQUEER_COMMIT = "1180ba6"
CROWS_PAIRS_DATA = PinnedData(
    name=CROWS_PAIRS,
    directory="crows-pairs",
    files={
        "crows_pairs_anonymized.csv": (
            f"https://raw.githubusercontent.com/nyu-mll/crows-pairs/{CROWS_PAIRS_COMMIT}/data/crows_pairs_anonymized.csv",
            "dfb36986ce0502abbaf7055b9176da3d08d48e07df1251991b5dfbcbceab9d0c",
        )
    },
    main_file="crows_pairs_anonymized.csv",
)
"""CrowS-Pairs' CSV at the pinned commit and its SHA-256."""
WINOQUEER_DATA = PinnedData(
    name=WINOQUEER,
    directory="winoqueer",
    files={
        "winoqueer_final.csv": (
            f"https://raw.githubusercontent.com/katyfelkner/winoqueer/{WINOQUEER_COMMIT}/data/winoqueer_final.csv",
            "gitblob:0c874a4b98b41435a2359e9a69d95ab7bd95302d",
        )
    },
    main_file="winoqueer_final.csv",
)
"""WinoQueer's file is pinned by its git blob id (what ``git ls-tree`` shows for it upstream)."""


@dataclass(frozen=True)
class PairExpansion:
    """The samples of a sentence-pair benchmark and its counts (``nlibias expand`` prints them)."""

    samples: tuple[Sample, ...]
    origin: str
    notes: tuple[str, ...] = ()

    def summary(self) -> dict[str, Any]:
        groups = Counter(s.group or "" for s in self.samples)
        directions = Counter("antistereo" if s.stereotype == "anti" else "stereo" for s in self.samples)
        return {
            "source": self.origin,
            "pairs": len(self.samples),
            "by_group": dict(sorted(groups.items())),
            "by_direction": dict(sorted(directions.items())),
            "warnings": list(self.notes),
        }


def pair_sample(
    source: str,
    index: int | str,
    more: str,
    less: str,
    *,
    group: str | None,
    direction: str = "stereo",
    counterfactual: str | None = None,
    provenance: dict[str, Any] | None = None,
) -> Sample:
    """One sentence pair as a sample (premise = more-, hypothesis = less-stereotypical sentence)."""
    key = f"{source}:{index}"
    name = group or "all"
    return Sample(
        id=key,
        source=source,
        domain=name,
        subtopic=name,
        premise=more,
        hypothesis=less,
        gold="neutral",
        stereotype="anti" if direction == "antistereo" else "pro",
        pair_key=key,
        group=group,
        counterfactual_group=counterfactual,
        provenance={"direction": direction, **(provenance or {})},
    )


_Stripped = Annotated[str, StringConstraints(strip_whitespace=True)]
_Sentence = Annotated[_Stripped, nonblank("empty or missing sentence", "give both sentences")]


class _DistinctPair(BaseModel):
    """A pair whose two sentences differ (the same sentence twice can only tie)."""

    more: _Sentence
    less: _Sentence

    @model_validator(mode="after")
    def _differ(self) -> _DistinctPair:
        if self.more == self.less:
            raise refuse(
                f"the two sentences are the same ({self.more!r}): the pair can only tie",
                "write the less-stereotypical sentence with the other group, or remove the row",
                "less",
            )
        return self


class _CrowsRow(_DistinctPair):
    model_config = ConfigDict(extra="ignore")
    direction: Annotated[Literal["stereo", "antistereo"], BeforeValidator(str.strip)] = Field(
        alias="stereo_antistereo"
    )
    more: _Sentence = Field(alias="sent_more")
    less: _Sentence = Field(alias="sent_less")
    group: _Stripped = Field(alias="bias_type")
    counterfactual: None = None


class _WinoQueerRow(BaseModel):
    """Its published file is not in the shared data, so a pair of one sentence twice is warned of
    (:func:`_published_notes`), not refused: nothing here could check that the file has none."""

    model_config = ConfigDict(extra="ignore")
    group: _Stripped = Field(alias="Gender_ID_x")
    counterfactual: _Stripped = Field(alias="Gender_ID_y")
    more: _Sentence = Field(alias="sent_x")
    less: _Sentence = Field(alias="sent_y")
    direction: Literal["stereo"] = "stereo"


class _UserPair(_DistinctPair):
    model_config = ConfigDict(extra="ignore", validate_default=True)
    group: _Stripped | None = None
    more: _Sentence = ""
    less: _Sentence = ""


def _benchmark_pairs(
    source: str, path: Path, columns: tuple[str, ...], model: type[_CrowsRow | _WinoQueerRow]
) -> PairExpansion:
    """The pairs of a published benchmark's CSV, each row checked by ``model``; a pair given twice
    (and, where the row model allows it, one sentence twice) is kept, as the published scores count
    it, and warned of in the expansion's notes."""
    samples: list[Sample] = []
    first_line: dict[tuple[str, str], int] = {}
    repeated: list[tuple[int, int]] = []
    identical: list[int] = []
    for line, record in read_csv_records(path, required=columns):
        index = (record.get("") or str(len(samples))).strip()
        row = check_row(model, path, line, record)
        first = first_line.setdefault((row.more, row.less), line)
        if first != line:
            repeated.append((first, line))
        if row.more == row.less:
            identical.append(line)
        samples.append(
            pair_sample(
                source,
                index,
                row.more,
                row.less,
                group=row.group,
                direction=row.direction,
                counterfactual=row.counterfactual,
                provenance={"row": index, "line": line},
            )
        )
    return PairExpansion(tuple(samples), str(path), _published_notes(path, repeated, identical))


def _published_notes(path: Path, repeated: list[tuple[int, int]], identical: list[int]) -> tuple[str, ...]:
    """Warnings for pairs of a published benchmark that are kept as published but weigh wrongly."""
    notes = []
    if repeated:
        first, again = repeated[0]
        notes.append(
            f"{path}: {len(repeated)} sentence pair(s) given twice (first: lines {first} and {again}); "
            "each is kept and scored as often as the published benchmark lists it"
        )
    if identical:
        notes.append(
            f"{path}: {len(identical)} pair(s) whose two sentences are the same (first: line "
            f"{identical[0]}); kept as published, each can only tie, which lowers the TP score"
        )
    return tuple(notes)


CROWS_COLUMNS = ("sent_more", "sent_less", "stereo_antistereo", "bias_type")
WINOQUEER_COLUMNS = ("Gender_ID_x", "Gender_ID_y", "sent_x", "sent_y")


def read_crows_pairs(path: str | Path) -> list[Sample]:
    """CrowS-Pairs' ``crows_pairs_anonymized.csv``: 1,508 pairs, ``bias_type`` groups, directions."""
    return list(_benchmark_pairs(CROWS_PAIRS, Path(path), CROWS_COLUMNS, _CrowsRow).samples)


def read_winoqueer(path: str | Path) -> list[Sample]:
    """WinoQueer's ``winoqueer_final.csv``: ``sent_x`` names the LGBTQ+ identity (more
    stereotypical), ``sent_y`` the counterfactual."""
    return list(_benchmark_pairs(WINOQUEER, Path(path), WINOQUEER_COLUMNS, _WinoQueerRow).samples)


def _user_records(path: Path) -> list[tuple[int, dict[str, Any]]]:
    """The (line, record) of each pair in a user's CSV or JSONL file."""
    text = read_text(path)
    if path.suffix.lower() not in (".jsonl", ".json"):
        text = text.removeprefix("\ufeff")
        require_csv_columns(path, csv_header(path, text), ("more", "less"), fix="columns: more,less[,group]")
        return list(read_csv_records(path, text))
    records = []
    for line, row in enumerate(text.split("\n"), start=1):
        if not row.strip():
            continue
        record = parse_json(path, row, line=line)
        if not isinstance(record, dict):
            raise SourceError(path, None, "expected a JSON object with more and less", line=line)
        records.append((line, record))
    return records


def read_user_pairs(path: str | Path) -> list[Sample]:
    """A user file of sentence pairs: CSV (columns ``more``, ``less``, optional ``group``) or JSONL
    (objects with the same keys); a pair given twice is refused (it would count twice).

    >>> import tempfile
    >>> path = Path(tempfile.mkdtemp()) / "pairs.csv"
    >>> _ = path.write_text("more,less,group\\nA b.,C b.,g\\n", encoding="utf-8")
    >>> [(s.premise, s.hypothesis, s.group) for s in read_user_pairs(path)]
    [('A b.', 'C b.', 'g')]
    """
    path = Path(path)
    if not path.is_file():
        raise SourceError(path, None, "no such file", fix="pass a .csv or .jsonl file of (more, less) pairs")
    samples: list[Sample] = []
    first_line: dict[tuple[str, str], int] = {}
    for line, record in _user_records(path):
        pair = check_row(_UserPair, path, line, record)
        first = first_line.setdefault((pair.more, pair.less), line)
        if first != line:
            reason = f"the pair ({pair.more!r}, {pair.less!r}) is given twice, on lines {first} and {line}"
            raise SourceError(path, None, reason, line=line, fix="remove one of them: each pair counts once")
        samples.append(
            pair_sample(
                USER_PAIRS,
                len(samples) + 1,
                pair.more,
                pair.less,
                group=pair.group or None,
                provenance={"line": line},
            )
        )
    if not samples:
        raise SourceError(path, None, "no sentence pairs in the file")
    return samples


def expand_crows_pairs(source: str | Path | None = None) -> PairExpansion:
    """CrowS-Pairs from ``source`` (the CSV or a data dir; default: the data dir or the pinned download)."""
    return _benchmark_pairs(CROWS_PAIRS, resolve_data(CROWS_PAIRS_DATA, source), CROWS_COLUMNS, _CrowsRow)


def expand_winoqueer(source: str | Path | None = None) -> PairExpansion:
    """WinoQueer from ``source`` (the CSV or a data dir; default: the data dir or the pinned
    download, checked against its git blob id)."""
    path = resolve_data(WINOQUEER_DATA, source)
    return _benchmark_pairs(WINOQUEER, path, WINOQUEER_COLUMNS, _WinoQueerRow)


@declared
def expand_user_pairs(
    source: Annotated[PathArg, Allowed("the file of pairs: a CSV or JSONL with more, less, group")],
) -> PairExpansion:
    """A user file of (more, less) pairs."""
    return PairExpansion(tuple(read_user_pairs(source)), str(source))


def expand_bbnli_pairs(source: str | Path | None = None) -> PairExpansion:
    """BBNLI's pro (more) vs anti (less) hypotheses as sentence pairs: each hypothesis pair once,
    as TP reads no premise; identical hypotheses are left out, as they can only tie."""
    expansion = expand_bbnli_source(source)
    by_key: dict[str, dict[str, Sample]] = {}
    for sample in expansion.samples:
        if sample.stereotype is not None and sample.pair_key is not None:
            by_key.setdefault(sample.pair_key, {})[sample.stereotype] = sample
    seen: set[tuple[str, str, str]] = set()
    samples: list[Sample] = []
    identical = 0
    for members in by_key.values():
        if set(members) != {"pro", "anti"}:
            continue
        pro, anti = members["pro"], members["anti"]
        if pro.hypothesis == anti.hypothesis:
            identical += 1
            continue
        key = (pro.subtopic, pro.hypothesis, anti.hypothesis)
        if key in seen:
            continue
        seen.add(key)
        sample = pair_sample(
            BBNLI_TP,
            len(samples) + 1,
            pro.hypothesis,
            anti.hypothesis,
            group=pro.domain,
            counterfactual=anti.group,
            provenance={"subtopic": pro.subtopic, "bbnli_pair_key": pro.pair_key},
        )
        samples.append(Sample(**{**sample.to_dict(), "subtopic": pro.subtopic}))
    notes = (f"{identical} pairs with identical pro and anti hypotheses left out",) if identical else ()
    return PairExpansion(tuple(samples), str(expansion.origin), notes)
