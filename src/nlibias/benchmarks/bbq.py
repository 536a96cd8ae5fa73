"""BBQ (Parrish et al. 2022): the category JSONL files into samples (context as premise, question
as hypothesis, gold ``neutral``, what the measures read in :data:`PROVENANCE`), and the rule that
reads an answer string as one of an example's three options (docs/bbq.md, docs/design.md "BBQ").
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, StringConstraints

from nlibias.benchmarks.data_locations import PinnedData, resolve_data, verify_files
from nlibias.benchmarks.rows import Text, check_row
from nlibias.errors import SourceError
from nlibias.schema import Sample
from nlibias.schema.columns import IdPositions, SampleColumns
from nlibias.textio.json_text import parse_json
from nlibias.textio.text_files import read_csv_records, stream_lines

SOURCE = "bbq"
BBQ_COMMIT = "bea11bd97d79217245b5871acd247b9d6eb24598"
_BBQ_URL = f"https://raw.githubusercontent.com/nyu-mll/BBQ/{BBQ_COMMIT}/"
_BLOB_IDS = {
    "Age": "5c5e7586163b869fe029e77e63716f2026e4ae08",
    "Disability_status": "9aedeccaf599299cdfa523531d625ae85ecb9131",
    "Gender_identity": "dc79ceaaa9e7126edc99a200d632899c50274b16",
    "Nationality": "cba9b63d34536cb51a6cbae76b189df3d2a945c0",
    "Physical_appearance": "8cbdf83265459083224e3a2d37809294ff12ad77",
    "Race_ethnicity": "68daf3d692b27a10596772b3b15742b26f0b110e",
    "Race_x_SES": "905cd8a5b8734e2063fe524e69a38f0a71c75907",
    "Race_x_gender": "dd09a905b284690445d36259d675243950fa0bd7",
    "Religion": "44c1940ee22f00891ab4a5526a293691957aeacb",
    "SES": "78d11ffbdb70f501617345e5c697d00045d57c29",
    "Sexual_orientation": "a06351f4dd67ba30632396eeb0c3677c67b7d387",
}
NAMES_FILE = "templates/vocabulary_proper_names.csv"
BBQ_DATA = PinnedData(
    name="bbq",
    directory="bbq",
    files={
        f"data/{category}.jsonl": (f"{_BBQ_URL}data/{category}.jsonl", f"gitblob:{blob}")
        for category, blob in _BLOB_IDS.items()
    }
    | {NAMES_FILE: (_BBQ_URL + NAMES_FILE, "gitblob:e901008b4c5d6c30ebe2ff236419be2e65ea1ed9")},
    layout="bbq/data/<Category>.jsonl",
)
"""BBQ's 11 category files and its proper-name vocabulary at the pinned commit (git blob ids)."""

CATEGORIES: tuple[str, ...] = tuple(_BLOB_IDS)
PROVENANCE: tuple[str, ...] = tuple(
    "example_id condition polarity label_type answers answer_words correct target unknown unit".split()  # noqa: SIM905
)
"""The provenance keys BBQ's measures and answer reading use."""

UNKNOWN_GROUP = "unknown"

_Text = Annotated[str, StringConstraints(min_length=1)]


class _Metadata(BaseModel):
    model_config = ConfigDict(extra="ignore")
    subcategory: str = "None"
    stereotyped_groups: list[_Text]


class BBQRow(BaseModel):
    """The fields of one upstream line the samples keep (others are ignored)."""

    model_config = ConfigDict(extra="ignore")
    example_id: Annotated[int, Field(ge=0, strict=True)]
    question_index: _Text | int
    question_polarity: Literal["neg", "nonneg"]
    context_condition: Literal["ambig", "disambig"]
    category: _Text
    answer_info: dict[Literal["ans0", "ans1", "ans2"], tuple[str, str]]
    additional_metadata: _Metadata
    context: Text
    question: Text
    ans0: Text
    ans1: Text
    ans2: Text
    label: Annotated[int, Field(ge=0, le=2, strict=True)]

    @property
    def answers(self) -> tuple[str, str, str]:
        return (self.ans0, self.ans1, self.ans2)

    def info(self, k: int) -> tuple[str, str]:
        return self.answer_info[f"ans{k}"]  # type: ignore[index]


def read_bbq_rows(
    path: Path, seen: dict[tuple[str, int], tuple[Path, int]] | None = None
) -> Iterator[tuple[int, dict[str, Any], BBQRow]]:
    """Each line of a BBQ JSONL file (data or results) as (line, raw object, checked row); a line
    that is no example, an example id repeated (here or in ``seen``'s earlier files) or a file
    without one is refused."""
    seen = {} if seen is None else seen
    read = 0
    for line, text in enumerate(stream_lines(path), start=1):
        if not text.strip():
            continue
        raw = parse_json(path, text, line=line)
        if not isinstance(raw, dict):
            raise SourceError(path, None, "expected a JSON object (one BBQ example)", line=line)
        row = check_row(BBQRow, path, line, raw)
        if set(row.answer_info) != {"ans0", "ans1", "ans2"}:
            raise SourceError(path, "answer_info", "expected the entries ans0, ans1 and ans2", line=line)
        key = (row.category, row.example_id)
        if key in seen:
            first, at = seen[key]
            raise SourceError(
                path,
                "example_id",
                f"example_id {row.example_id} ({row.category}) repeats "
                + (f"line {at}" if first == path else f"{first}:{at}: each example would count twice"),
                line=line,
                fix=None if first == path else "keep each example in one file of the source",
            )
        seen[key], read = (path, line), read + 1
        yield line, raw, row
    if not read:
        raise SourceError(path, None, "no BBQ examples in the file")


def _targets(row: BBQRow) -> list[int]:
    groups = {g.casefold() for g in row.additional_metadata.stereotyped_groups}
    return [
        k
        for k in range(3)
        if row.info(k)[1] != UNKNOWN_GROUP
        and (row.info(k)[1].casefold() in groups or row.info(k)[0].casefold() in groups)
    ]


def bias_target(row: BBQRow) -> int | None:
    """The answer the example's stereotype targets (docs/design.md, "BBQ"), unless not exactly one."""
    found = _targets(row)
    return found[0] if len(found) == 1 else None


def _unknown_answer(row: BBQRow) -> int | None:
    found = [k for k in range(3) if row.info(k)[1] == UNKNOWN_GROUP]
    return found[0] if len(found) == 1 else None


def _answer_problem(row: BBQRow, unknown: int) -> tuple[str, str] | None:
    """(field, reason) when the answers cannot be scored: a blank option, two options
    :func:`read_answer` cannot tell apart, an ambiguous context not answered by its unknown option."""
    texts = [_compared(answer) for answer in row.answers]
    for k, text in enumerate(texts):
        if not text:
            return f"ans{k}", f"ans{k} is blank"
        if text in texts[:k]:
            return (
                f"ans{k}",
                f"ans{k} {row.answers[k]!r} is ans{texts.index(text)} again: the options cannot be told apart",
            )
    if row.context_condition == "ambig" and row.label != unknown:
        return (
            "label",
            f"an ambiguous context's correct answer is its unknown option (ans{unknown}), not ans{row.label}",
        )
    return None


def to_sample(path: Path, line: int, row: BBQRow, proper_names: frozenset[str]) -> Sample:
    """The sample of one checked example (refused without a single unknown option or bias target)."""
    where = f"example_id {row.example_id} ({row.category})"
    unknown = _unknown_answer(row)
    if unknown is None:
        groups = ", ".join(row.info(k)[1] for k in range(3))
        reason = f"{where} has no single 'unknown' answer (its groups: {groups})"
        raise SourceError(path, "answer_info", reason, line=line)
    problem = _answer_problem(row, unknown)
    if problem is not None:
        raise SourceError(
            path, problem[0], f"{where}: {problem[1]}", line=line, fix="correct the example or remove it"
        )
    target = bias_target(row)
    if target is None:
        raise SourceError(
            path,
            "additional_metadata.stereotyped_groups",
            f"{where}: the stereotyped groups {row.additional_metadata.stereotyped_groups} match "
            f"{'two' if _targets(row) else 'none'} of its answers' groups "
            f"({', '.join(row.info(k)[1] for k in range(3))}); the bias target must be exactly one answer",
            line=line,
            fix="correct the example's answer_info or stereotyped_groups, or remove it",
        )
    people = sorted(row.info(k)[0] for k in range(3) if k != unknown)
    label_type = "name" if any(p.split(" ")[0] in proper_names for p in people) else "label"
    subcategory = row.additional_metadata.subcategory
    return Sample(
        id=f"{row.category}:{row.example_id}",
        source=SOURCE,
        domain=row.category,
        subtopic=row.category if subcategory == "None" else f"{row.category}: {subcategory}",
        premise=row.context,
        hypothesis=row.question,
        gold="neutral",
        group=row.info(target)[1],
        counterfactual_group=row.info(3 - target - unknown)[1],
        provenance={
            "example_id": row.example_id,
            "condition": row.context_condition,
            "polarity": row.question_polarity,
            "label_type": label_type,
            "answers": list(row.answers),
            "answer_words": [row.info(k)[0] for k in range(3)],
            "correct": row.label,
            "target": target,
            "unknown": unknown,
            "unit": f"{row.category}|{row.question_index}|{' / '.join(people)}",
        },
    )


def proper_names(folder: Path) -> frozenset[str]:
    """The first names of BBQ's proper-name vocabulary (empty when absent): ``name`` examples."""
    path = folder / NAMES_FILE
    if not path.is_file():
        return frozenset()
    return frozenset(row["Name"] for _, row in read_csv_records(path) if row.get("Name"))


@dataclass(frozen=True)
class BBQExpansion:
    """The samples of the BBQ category files found."""

    samples: tuple[Sample, ...]
    files: tuple[str, ...]
    missing: tuple[str, ...]
    origin: str | None = None

    def summary(self) -> dict[str, Any]:
        """Examples per category, condition and polarity; the files read and the categories absent."""
        counts: Counter[tuple[str, str, str]] = Counter(
            (s.domain, str(s.provenance["condition"]), str(s.provenance["polarity"])) for s in self.samples
        )
        categories: dict[str, dict[str, int]] = {}
        for (category, condition, polarity), n in sorted(counts.items()):
            row = categories.setdefault(category, {"examples": 0})
            row["examples"] += n
            row[f"{condition}_{polarity}"] = n
        units = {str(s.provenance["unit"]) for s in self.samples}
        return {
            "source": self.origin,
            "read_files": list(self.files),
            "categories": categories,
            "missing_categories": list(self.missing),
            "totals": {"examples": len(self.samples), "units": len(units)},
        }


def expand_bbq(source: str | Path | None = None) -> BBQExpansion:
    """The samples of every BBQ category file at ``source`` (a folder holding ``data/``, the
    ``data`` folder or one category file; default: BBQ in the data dir, verified)."""
    path = resolve_data(BBQ_DATA, source)
    if path.is_file():
        files = [path]
        root = path.parent.parent
    else:
        data = path / "data" if (path / "data").is_dir() else path
        files = sorted(data.glob("*.jsonl"))
        root = data.parent
        if not files:
            raise SourceError(
                path, None, "no BBQ category file (CATEGORY.jsonl) found", fix=f"put them in {path}/data"
            )
    if source is not None:  # a copy elsewhere: files under a pinned file's name are verified
        named = {f"data/{f.name}": f for f in files} | {NAMES_FILE: root / NAMES_FILE}
        copies = [
            (f, BBQ_DATA.files[rel][1]) for rel, f in named.items() if rel in BBQ_DATA.files and f.is_file()
        ]
        remedy = "restore the pinned file, or rename yours to read it as your own data"
        verify_files(BBQ_DATA, copies, remedy=remedy)
    names = proper_names(root)
    seen: dict[tuple[str, int], tuple[Path, int]] = {}
    samples = tuple(sample for file in files for sample in read_bbq_file(file, names, seen))
    present = {f.stem for f in files}
    return BBQExpansion(
        samples=samples,
        files=tuple(str(f) for f in files),
        missing=tuple(c for c in CATEGORIES if c not in present) if len(files) > 1 else (),
        origin=str(path),
    )


def read_bbq_file(
    path: Path, names: Iterable[str] = (), seen: dict[tuple[str, int], tuple[Path, int]] | None = None
) -> Iterator[Sample]:
    """The samples of one category file (``seen``: the examples of the files read before)."""
    known = frozenset(names)
    for line, _, row in read_bbq_rows(path, seen):
        yield to_sample(path, line, row, known)


def _compared(text: str) -> str:
    """A text as the upstream R script compares it: a final period removed (``gsub`` runs first),
    then trimmed as R's ``trimws`` does and lower-cased."""
    return text.removesuffix(".").strip(" \t\r\n").lower()


def read_answer(answer: str, options: Sequence[str], words: Sequence[str]) -> int | None:
    """The option an answer string stands for, by the upstream R script's rule (docs/bbq.md); None:
    unmatched (counted, never guessed).

    >>> options = ["The grandfather", "The grandson", "Can't be determined"]
    >>> read_answer("The grandfather.", options, ["grandfather", "grandson", "Can't be determined"])
    0
    >>> read_answer("it can't be said", options, ["grandfather", "grandson", "Can't be determined"])
    2
    >>> read_answer("grandfather", options, ["grandfather", "grandson", "Can't be determined"]) is None
    True
    """
    given = _compared(answer)
    for k, option in enumerate(options):
        if given == _compared(option.replace("}", "")):
            return k
    lowered = answer.removesuffix(".").lower()
    for k, text in enumerate(words):
        parts = text.lower().split(" ")
        if len(parts) >= 2 and " ".join(parts[:2]) in lowered:
            return k
    return None


def answer_rows(path: Path, column: str, columns: SampleColumns) -> Iterator[dict[str, Any]]:
    """Prediction rows (kind ``generative``, model ``column``) of a file of BBQ examples with answer
    strings in ``column`` (upstream results files), matched by category and ``example_id``; a line
    annotated otherwise than the pinned data is marked ``answer_status: changed``, not scored."""
    position_of = IdPositions(columns.ids)
    provenance = columns.provenance
    held = sorted({str(c) for c in columns.domain.values})
    matched, unmatched = False, set[str]()
    for line, raw, row in read_bbq_rows(path):
        sample_id = f"{row.category}:{row.example_id}"
        at = position_of(sample_id)
        if at < 0:
            where = f"example_id {row.example_id} of category {row.category!r}"
            raise SourceError(
                path,
                "example_id",
                f"{where} is not among the samples (categories {', '.join(held)})",
                line=line,
                fix="score the answers against the samples they were made for (nlibias expand bbq)",
            )
        if column not in raw or column in BBQRow.model_fields:
            others = sorted(set(raw) - set(BBQRow.model_fields))
            own = column in BBQRow.model_fields
            what = (
                "{answer_column} %r is a field of BBQ's examples, not a model's answers"
                if own
                else "no answer column %r on this line"
            )
            reason = f"{what % column} (the line's other columns: {', '.join(others) or 'none'})"
            raise SourceError(path, column, reason, line=line, parameter="answer_column" if own else None)
        answer = raw[column]
        if not isinstance(answer, str):
            raise SourceError(path, column, f"{answer!r} is not an answer string", line=line)
        options, words = list(provenance["answers"][at]), list(provenance["answer_words"][at])
        if (row.context, row.question, list(row.answers)) != (
            columns.premise[at],
            columns.hypothesis[at],
            options,
        ):
            raise SourceError(
                path,
                None,
                f"example_id {row.example_id} ({row.category}) differs from sample {sample_id!r} "
                "in its context, question or answers: the answer is for another example",
                line=line,
                fix="score the answers against the BBQ version they were made for",
            )
        changed = [row.info(k)[0] for k in range(3)] != words or bias_target(row) != provenance["target"][at]
        choice = None if changed else read_answer(answer, options, words)
        record: dict[str, Any] = {"id": sample_id, "model": column, "label": None, "kind": "generative"}
        record |= {"choice": choice, "answer_text": answer}
        if changed or choice is None:
            record["answer_status"] = "changed" if changed else "unmatched"
        matched |= choice is not None
        if choice is None and not changed:
            unmatched.add(answer)
        yield record
    if unmatched and not matched:
        found = ", ".join(repr(a) for a in sorted(unmatched)[:5])
        raise SourceError(
            path,
            column,
            f"no answer of {{answer_column}} {column!r} is read as an option (found {found})",
            fix="name the column holding the model's answer strings (an option or its words)",
            parameter="answer_column",
        )
