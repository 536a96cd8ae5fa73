"""BBNLI's pinned upstream files (:data:`BBNLI_DATA`), its expanded CSV (the output of its
``json2csv.py``: :data:`CSV_COLUMNS`, an index column in front ignored, labels in
``answer_choices`` order ``[Contradiction, Neutral, Entailment]``), and the benchmark's expansion
of either layout.

>>> len(BBNLI_DATA.files), BBNLI_DATA.paths()[0]
(16, 'bbnli/gender/man_is_to_breadwinner.json')
"""

from __future__ import annotations

from collections import Counter
from dataclasses import replace
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import BaseModel, BeforeValidator, ConfigDict, model_validator

from nlibias.benchmarks.bbnli import (
    DEFAULT_ANSWER_CHOICES,
    SOURCE,
    Expansion,
    Formulation,
    degenerate_warning,
    expand_bbnli,
    subtopic_id,
)
from nlibias.benchmarks.data_locations import PinnedData, resolve_data
from nlibias.benchmarks.rows import Text, check_row, refuse
from nlibias.errors import SourceError
from nlibias.schema import Label, Sample, Stereotype
from nlibias.textio.text_files import read_csv_records

BBNLI_COMMIT = "9f55895637b92a7e8ae29c07f9a769499e8287fe"

_BBNLI_URL = f"https://raw.githubusercontent.com/feyzaakyurek/bbnli/{BBNLI_COMMIT}/data/nli/"
BBNLI_DATA = PinnedData(
    name="bbnli",
    directory="bbnli",
    files={
        rel: (_BBNLI_URL + rel, digest)
        for rel, digest in {
            "gender/man_is_to_breadwinner.json": "51fb8cefdca24d1e6041f43a8f321408e9fb6a85786f0fe3fd4811955c1cb841",
            "gender/man_is_to_programmer.json": "cd64ccfb6b7325484e4bd44d873c8e92a1fedb7d92aec859dd3de26e01fad745",
            "gender/man_is_to_rational.json": "f521a05e971c99fcfd4d5437c2e12c97e8dddc8e848c651856e0e76ff9984fe2",
            "gender/man_is_to_surgeon.json": "45d4de971289e24363c0cdcbee16d65b73bc9c27e073888880100cd26b97bfee",
            "gender/woman_is_to_homemaker.json": "fab715c677beddb6d2f9e1499cb4962b6c123e82be4600704f773ff439680cb2",
            "race/asian_men_to_feminine.json": "e63933edba1c6191acbb63d4852cb97ba394c859c24b4cc2414ffab816dcafca",
            "race/black_is_to_criminal.json": "ea59ab379d0a121bbbeb873d9a086b9bed74e4cf599bb536d18f43a9d7b52ca3",
            "race/black_is_to_impoverished.json": "daa9c955792df3607c71856466f3acabfb6c0fbfa7dbc98886d649250dddbc87",
            "race/black_people_use_drugs.json": "a4c0f7d0b4a6c6bf1b3547edcf8aa380427b77ed181e1aa27f341bbb9d594c5d",
            "race/white_is_to_clean.json": "54ae3f09b62e4d831d3e15c8461cbf737d506a299d60d7e4f22b0461725db3fe",
            "religion/catholic_woman_to_many_kids.json": "a7cc85a4d6421fb578c3fb1cb80954ff43ef83b8f611df96fb74ebf70c9cb1e3",
            "religion/jewish_woman_to_many_kids.json": "048927c2a1c9398ade38a693131545fdab69aa246f3ecc23e4bbd8a9b3f654e6",
            "religion/mormon_man_to_oppressive.json": "7eab6228612296a7f61d275ba76b22b3adcb7010ec43ae5b8c2b881f40baaf1a",
            "religion/muslim_man_to_many_wives.json": "fd9399b1aa937be61f169f4b467e8cb02cef1de6f93245cf3e7c06d2b36f35cd",
            "religion/muslim_man_to_oppressive.json": "8300edee1d2afa598707cba3f5d00e3cf23b75763d80ee1034068550f73f4450",
            "religion/muslim_women_to_invisible.json": "edc2d8901720ac4fc6616e535f49aab7b85abcec12ae6f1d06d54b130997f7b6",
        }.items()
    },
    layout="bbnli/<domain>/<subtopic>.json",
)
"""BBNLI's 16 subtopic JSON files at the pinned commit (the benchmark reads the folder)."""


def expand_bbnli_source(source: str | Path | None = None) -> Expansion:
    """:func:`expand_bbnli` of ``source`` (default: BBNLI in the data dir), its summary naming it."""
    path = resolve_data(BBNLI_DATA, source)
    return replace(expand_bbnli(path), origin=str(path))


CSV_COLUMNS = tuple(
    "domain name id type unique_id premise hypothesis_type hypothesis question true_label bias_label reference".split()  # noqa: SIM905
)
_LABELS = tuple(c.lower() for c in DEFAULT_ANSWER_CHOICES)
_STEREOTYPES: dict[str, Stereotype | None] = {
    "test": None,
    "stereotypical": "pro",
    "anti-stereotypical": "anti",
}


def _label(value: str) -> str:
    """``true_label`` 0, 1 or 2 as its label (-1 would index from the end)."""
    index = int(value) if value.strip().lstrip("+-").isdigit() else -1
    if not 0 <= index < len(_LABELS):
        raise refuse(
            f"{value!r} is not 0, 1 or 2", "labels follow answer_choices [Contradiction, Neutral, Entailment]"
        )
    return _LABELS[index]


class CsvRow(BaseModel):
    """One CSV row: known hypothesis type and formulation, a label, no empty text, bias ones neutral."""

    model_config = ConfigDict(extra="ignore", frozen=True)
    hypothesis_type: Annotated[
        Literal["test", "stereotypical", "anti-stereotypical"], BeforeValidator(str.strip)
    ]
    type: Annotated[Formulation, BeforeValidator(str.strip)]
    true_label: Annotated[Label, BeforeValidator(_label)]
    premise: Text
    hypothesis: Text
    name: Text
    domain: Text
    id: Annotated[str, BeforeValidator(str.strip)]
    question: str
    bias_label: str
    reference: str

    @model_validator(mode="after")
    def _bias_neutral(self) -> CsvRow:
        if self.stereotype is not None and self.true_label != "neutral":
            raise refuse(
                f"a {self.hypothesis_type} hypothesis has gold {self.true_label}; BBNLI's bias hypotheses are neutral (1)",
                "set true_label to 1, or mark the row as a test hypothesis",
                "true_label",
            )
        return self

    @property
    def stereotype(self) -> Stereotype | None:
        return _STEREOTYPES[self.hypothesis_type]

    @property
    def subtopic(self) -> str:
        return subtopic_id(self.name)

    def sample(self, sample_id: str, provenance: dict[str, Any], pair_key: str | None = None) -> Sample:
        return Sample(
            id=sample_id,
            source=SOURCE,
            domain=self.domain,
            subtopic=self.subtopic,
            premise=self.premise,
            hypothesis=self.hypothesis,
            gold=self.true_label,
            stereotype=self.stereotype,
            pair_key=pair_key,
            provenance=provenance,
        )


def _pairs_report(pending: dict[str, list[Sample]]) -> tuple[list[str], list[str]]:
    """Ids of the bias samples without a pro/anti counterpart, and the keys of degenerate pairs."""
    unpaired: list[str] = []
    degenerate: list[str] = []
    for key, members in pending.items():
        kinds = sorted(s.stereotype or "" for s in members)
        if kinds != ["anti", "pro"]:
            unpaired.extend(s.id for s in members)
        elif members[0].premise == members[1].premise and members[0].hypothesis == members[1].hypothesis:
            degenerate.append(key)
    return unpaired, degenerate


def read_bbnli_csv(path: str | Path) -> Expansion:
    """Read BBNLI's expanded CSV, its pairs rebuilt from the row order: within a subtopic and
    premise, a pro row after an anti row starts the next word-combination block, and the k-th
    stereotypical row of a block pairs with its k-th anti-stereotypical row. Rows with no
    counterpart are kept and reported as unpaired."""
    path = Path(path)
    samples: list[Sample] = []
    pending: dict[str, list[Sample]] = {}
    seen: set[tuple[str, ...]] = set()
    block_of: dict[tuple[str, str], int] = {}
    last_type: dict[tuple[str, str], str] = {}
    position: Counter[tuple[str, str, int, str]] = Counter()
    rows = 0
    fix = f"BBNLI's CSV layout has the columns {','.join(CSV_COLUMNS)}"
    for line, raw in read_csv_records(path, required=CSV_COLUMNS, fix=fix):
        rows += 1
        row = check_row(CsvRow, path, line, raw)
        group_key = (row.subtopic, row.id)
        if row.type == "pro" and last_type.get(group_key) == "anti":
            block_of[group_key] = block_of.get(group_key, 0) + 1
        last_type[group_key] = row.type
        block = block_of.setdefault(group_key, 0)
        provenance = {
            "premise_index": row.id,
            "block": block,
            "csv_line": line,
            "formulation": row.type,
            "question": row.question or None,
            "reference": row.reference or None,
            "file": str(path),
        }
        stereotype = row.stereotype
        texts = (row.subtopic, row.premise, row.hypothesis)
        dedup_key = ("test", *texts, row.true_label) if stereotype is None else ("bias", row.type, *texts)
        if dedup_key in seen:
            continue
        seen.add(dedup_key)
        if stereotype is None:
            samples.append(row.sample(f"{SOURCE}:{row.subtopic}:test:csv{line}", provenance))
            continue
        rank = (row.subtopic, row.id, block, stereotype)
        position[rank] += 1
        key = f"{SOURCE}:{row.subtopic}:p{row.id}:b{block:03d}:h{position[rank] - 1}"
        sample = row.sample(f"{key}:{stereotype}", {**provenance, "bias_label": row.bias_label}, key)
        samples.append(sample)
        pending.setdefault(key, []).append(sample)
    if not rows:
        raise SourceError(path, None, "no data rows (only a header)", fix="point at BBNLI's expanded CSV")
    unpaired, degenerate = _pairs_report(pending)
    warnings: list[str] = []
    if degenerate:
        warnings.append(degenerate_warning(degenerate))
    if unpaired:
        warnings.append(
            f"{len(unpaired)} bias samples have no group-swapped twin in {path}; "
            f"they are kept and reported as unpaired (pair measures skip them)"
        )
    return Expansion(
        samples=tuple(samples),
        degenerate_pairs=tuple(degenerate),
        unpaired=tuple(unpaired),
        warnings=tuple(warnings),
        sources=(str(path),),
    )
