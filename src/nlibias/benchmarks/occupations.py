"""The gender-occupation NLI challenge set (paper 004): each premise names one of 38 occupations;
its ``female`` and ``male`` rendering of each Table 3 hypothesis form a pair (``pro``: the
occupation's dominant gender). Premises: shipped templates, a user's file, or evaluation sets.

>>> premise = render_template("A {occupation} is waiting.", occupation_named("accountant"))
>>> premise
'An accountant is waiting.'
>>> [s.hypothesis for s in premise_samples(Premise("p1", premise, "accountant", "template"))][:2]
['This text speaks of a female profession', 'This text speaks of a male profession']
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

from nlibias.benchmarks.data_locations import git_blob_id, resolve_data
from nlibias.benchmarks.occupation_eval_sets import (
    EVAL_SET_DATA,
    EXPECTED_ROWS,
    OCCUPATION_EVAL_COMMIT,
    PINNED_BLOBS,
    SET_OF_FILE,
    EvalWorkbook,
    TemplateChoice,
    eval_set_sources,
    named_set,
    read_eval_workbook,
)
from nlibias.benchmarks.occupation_list import (
    MAX_WORDS,
    SLOTS,
    Occupation,
    OccupationsExpansion,
    find_occupations,
    gender_samples,
    load_occupations,
    occupation_named,
    template_hypotheses,
)
from nlibias.benchmarks.occupation_rows import OccupationRow, OccupationRowError, RowOrigin, repeated_rows
from nlibias.errors import ConfigError, NlibiasError
from nlibias.schema import Sample
from nlibias.schema.applies import option_applies_to_nothing
from nlibias.schema.declared import PathArg, declared
from nlibias.textio.list_files import list_lines
from nlibias.textio.text_files import read_text

_RESOURCE_TEMPLATES = "occupation_premise_templates.txt"


@dataclass(frozen=True)
class Premise:
    """A premise of the challenge set and where it came from."""

    id: str
    text: str
    occupation: str
    origin: str
    """``template`` (a slot filled), ``file`` (a user's literal premise) or ``substituted`` (balancing)."""
    line: int | None = None
    """Its line in the premises file or the shipped templates."""
    template: str | None = None
    """The template or original premise it was rendered from."""
    source_occupation: str | None = None
    """A substituted premise's original occupation."""


@dataclass(frozen=True)
class PremiseProblem:
    """Why one line of a premises file was rejected."""

    line: int
    text: str
    reason: str
    word: str | None = None

    def __str__(self) -> str:
        return f"line {self.line}: {self.reason}: {self.text!r}"


class PremiseFileError(NlibiasError):
    """A premises file has lines the challenge set cannot use; every problem is listed."""

    def __init__(self, path: str | Path, problems: Sequence[PremiseProblem]) -> None:
        self.path = str(path)
        self.problems = tuple(problems)
        listed = "\n".join(f"  {self.path}:{p}" for p in self.problems)
        super().__init__(
            f"{len(self.problems)} premise line(s) rejected in {self.path}:\n{listed}\n"
            f"Each premise must name exactly one of the 38 occupations (or hold an {{occupation}} "
            f"slot) and contain no gendered word and no person name; fix or delete these lines."
        )


def _article_for(word: str) -> str:
    if word.isupper():  # an acronym is read letter by letter: "a CEO", "an MD"
        return "an" if word[0] in "AEFHILMNORSX" else "a"
    return "an" if word[0].lower() in "aeiou" else "a"


def _insert(text: str, start: int, end: int, word: str) -> str:
    """Put ``word`` in ``text[start:end]``: fix a preceding a/an and keep a capital initial."""
    original, before = text[start:end], text[:start]
    at_start = not before.strip() or re.search(r"[.!?][\"'”’)]*\s+$", before) is not None
    if at_start or (original[:1].isupper() and not original.isupper()):
        word = word[:1].upper() + word[1:]
    article = re.search(r"\b([Aa]n?)(\s+)$", before)
    if article:
        new = _article_for(word)
        new = new.capitalize() if article.group(1)[0].isupper() else new
        before = before[: article.start()] + new + article.group(2)
    return before + word + text[end:]


def render_template(template: str, occupation: Occupation) -> str:
    """Fill every ``{occupation}`` / ``{occupations}`` slot of a premise template.

    >>> render_template("{occupations} are doing their job well.", occupation_named("CEO"))
    'CEOs are doing their job well.'
    """
    text = template
    while True:
        match = re.search(r"\{occupations?\}", text)
        if match is None:
            return text
        word = occupation.plural if match.group(0) == "{occupations}" else occupation.name
        text = _insert(text, match.start(), match.end(), word)


def substitute_occupation(text: str, target: Occupation) -> str:
    """Replace every occupation named in ``text`` by ``target`` (number, capital and a/an kept).

    >>> substitute_occupation("A nurse is sitting on a bench in the park.", occupation_named("editor"))
    'An editor is sitting on a bench in the park.'
    """
    for mention in reversed(find_occupations(text)):
        word = target.plural if mention.plural else target.name
        text = _insert(text, mention.start, mention.end, word)
    return text


def read_premise_lines(path: str | Path) -> list[tuple[int, str]]:
    """``(line, text)`` of each premise of a one-per-line file (blank and ``#`` lines skipped); the
    rejected lines are reported together in one :class:`PremiseFileError`."""
    return [(row.origin.line or 0, row.premise) for row in read_premise_rows(path)]


def read_premise_rows(path: str | Path) -> list[OccupationRow]:
    """The premises of a one-per-line file as checked rows (see :func:`read_premise_lines`)."""
    path = Path(path)
    try:
        text = read_text(path)
    except OSError as exc:
        raise PremiseFileError(
            path, [PremiseProblem(0, "", f"cannot read the file ({exc.strerror})")]
        ) from exc
    lines = list_lines(path, text, item="premise")
    rows: list[OccupationRow] = []
    problems: list[PremiseProblem] = []
    for number, line in lines:
        try:
            rows.append(OccupationRow(RowOrigin(str(path), line=number), line))
        except OccupationRowError as error:
            problems += [PremiseProblem(number, line, p.reason, p.word) for p in error.problems]
    if problems:
        raise PremiseFileError(path, problems)
    if not lines:
        raise PremiseFileError(path, [PremiseProblem(0, "", "the file has no premise lines")])
    return rows


def default_premise_templates() -> list[tuple[int, str]]:
    """The shipped premise templates as ``(line number, template)``."""
    text = (resources.files("nlibias") / "resources" / _RESOURCE_TEMPLATES).read_text("utf-8")
    return list_lines(_RESOURCE_TEMPLATES, text, item="premise")


def build_premises(
    lines: Sequence[tuple[int, str]], *, balance: bool = True, prefix: str = "l"
) -> list[Premise]:
    """Premises from checked lines: slots filled for every occupation, literal premises balanced
    (each occupation filled up to the most frequent with others' premises, substituted, no repeat)."""
    occupations = load_occupations()
    premises: list[Premise] = []
    literal: list[tuple[int, str, Occupation]] = []
    for line, text in lines:
        if any(slot in text for slot in SLOTS):
            premises += [
                Premise(
                    f"{prefix}{line:03d}-{o.slug}", render_template(text, o), o.name, "template", line, text
                )
                for o in occupations
            ]
        else:
            literal.append((line, text, find_occupations(text)[0].occupation))
    premises += [
        Premise(f"{prefix}{line:03d}", text, o.name, "file", line, text) for line, text, o in literal
    ]
    if balance and literal:
        premises += _balance(literal, prefix)
    return premises


def _balance(literal: Sequence[tuple[int, str, Occupation]], prefix: str) -> list[Premise]:
    counts = Counter(o.name for _, _, o in literal)
    target = max(counts.values())
    seen = {text for _, text, _ in literal}
    added: list[Premise] = []
    for occupation in load_occupations():
        need = target - counts[occupation.name]
        for line, text, source in literal:
            if need <= 0:
                break
            if source.name == occupation.name:
                continue
            new = substitute_occupation(text, occupation)
            if new in seen:
                continue
            seen.add(new)
            added.append(
                Premise(
                    f"{prefix}{line:03d}-{occupation.slug}",
                    new,
                    occupation.name,
                    "substituted",
                    line,
                    text,
                    source.name,
                )
            )
            need -= 1
    return added


def premise_samples(premise: Premise, *, eval_set: str = "templates") -> list[Sample]:
    """The female and male sample of every hypothesis template for one premise (pairs adjacent);
    ``eval_set``: ``templates`` (shipped) or ``premises`` (a user's file)."""
    occupation = occupation_named(premise.occupation)
    provenance = {
        "premise_origin": premise.origin,
        "line": premise.line,
        "premise_template": premise.template,
        "source_occupation": premise.source_occupation,
        "eval_set": eval_set,
    }
    hypotheses = template_hypotheses()
    return gender_samples(
        premise.id, premise.text, occupation, occupation.dominant_gender, hypotheses, provenance
    )


@declared
def expand_occupations(
    premises: PathArg | None = None,
    *,
    balance: bool | None = None,
    hypothesis_templates: TemplateChoice | None = None,
    seed: int | None = None,
    strict: bool | None = None,
) -> Any:
    """The challenge set from the shipped templates, a premises file or evaluation sets
    (``snli-eval``, ``mnli-eval``, ``ood-eval``, ``.xlsx`` workbooks, joined by commas).
    ``balance`` (default on): premises files; ``hypothesis_templates`` and ``seed`` (default 0):
    sets without hypotheses; ``strict``: evaluation sets refuse a premise caveat, not warn.

    >>> expansion = expand_occupations()
    >>> len(expansion.premises), len(expansion.samples)  # 30 templates x 38 occupations; x 3 x 2
    (1140, 6840)
    """
    sets = None if premises is None else eval_set_sources(premises)
    if sets is not None:
        if balance is not None:
            raise option_applies_to_nothing(
                "balance", "premises files", given="evaluation sets are read as the authors wrote them"
            )
        return expand_eval_sets(
            sets, hypothesis_templates=hypothesis_templates, seed=seed, strict=bool(strict)
        )
    if strict is not None:
        raise option_applies_to_nothing(
            "strict",
            "evaluation sets (snli-eval, mnli-eval, ood-eval, .xlsx workbooks)",
            value=strict,
            given="a premises file refuses every such premise",
        )
    if hypothesis_templates is not None or seed is not None:
        raise option_applies_to_nothing(
            "hypothesis_templates" if hypothesis_templates is not None else "seed",
            "evaluation sets without hypotheses (ood-eval)",
            subject="{hypothesis_templates} and {seed}",
            plural=True,
            names=("hypothesis_templates", "seed"),
            given="premises files get all three Table 3 templates",
        )
    return _expand_premises(premises, balance=True if balance is None else balance)


def _expand_premises(premises: str | Path | None, *, balance: bool) -> OccupationsExpansion:
    repeats: list[str] = []
    if premises is None:
        lines, prefix, source = default_premise_templates(), "t", f"nlibias/resources/{_RESOURCE_TEMPLATES}"
    else:
        rows = read_premise_rows(premises)
        lines, prefix, source = [(r.origin.line or 0, r.premise) for r in rows], "l", str(premises)
        repeats = repeated_rows(rows)
    built = build_premises(lines, balance=balance, prefix=prefix)
    warnings = repeats + [
        f"line {p.line} has {len(p.text.split())} words; the paper keeps premises to at most {MAX_WORDS}"
        for p in built
        if p.origin != "substituted" and len(p.text.split()) > MAX_WORDS
    ]
    counts = Counter(p.occupation for p in built)
    if len(set(counts.values())) > 1 or len(counts) < len(load_occupations()):
        low = min(load_occupations(), key=lambda o: counts[o.name])
        warnings.append(
            f"premises are not balanced across occupations (e.g. {low.name}: {counts[low.name]}, "
            f"most: {max(counts.values())}); the paper gives every occupation the same number"
        )
    eval_set = "templates" if premises is None else "premises"
    samples = [sample for premise in built for sample in premise_samples(premise, eval_set=eval_set)]
    return OccupationsExpansion(tuple(samples), source, tuple(built), warnings=tuple(dict.fromkeys(warnings)))


def _set_record(
    source: str | Path,
    path: Path,
    name: str,
    book: EvalWorkbook,
    choice: str,
    seed: int,
    samples: list[Sample],
) -> tuple[dict[str, Any], list[str]]:
    blob = git_blob_id(path.read_bytes())
    templates = Counter(
        str((s.provenance or {}).get("hypothesis_template")) for s in samples if s.group == "female"
    )
    differ = Counter(
        (r.occupation.name, r.gender, r.occupation.dominant_gender)
        for r in book.rows
        if r.gender != r.occupation.dominant_gender
    )
    flagged = book.caveat_rows  # premises a premises file would refuse
    record: dict[str, Any] = {
        "eval_set": name,
        "file": str(path),
        "git_blob_id": blob,
        "authors_file": PINNED_BLOBS.get(blob),
        "sheet": book.sheet,
        "columns": book.columns,
        "ignored_columns": list(book.ignored_columns),
        "rows": len(book.rows),
        "rows_by_gender": dict(sorted(Counter(r.gender for r in book.rows).items())),
        "skipped_header_rows": list(book.skipped_header_rows),
        "blank_rows": book.blank_rows,
        "hypotheses": "file" if book.has_hypotheses else f"templates: {choice}",
        "pairs_by_template": dict(sorted(templates.items())),
        "label_differences": [
            {"occupation": o, "file": f, "occupations.json": listed, "rows": n}
            for (o, f, listed), n in differ.items()
        ],
        "premise_caveats": {
            "rows": len(flagged),
            "gendered_word": sum(any("gendered word" in c for c in row.caveats) for row in flagged),
            "occupation_not_named": sum(
                any("gendered word" not in c for c in row.caveats) for row in flagged
            ),
            "cells": [caveat for row in flagged for caveat in row.caveats],
        },
    }
    if not book.has_hypotheses and choice == "one":
        record["seed"] = seed  # the seed of the draw (all three templates need none)
    warnings = [f"{name}: row {row} repeats the header row; skipped" for row in book.skipped_header_rows]
    warnings += [f"{name}: {warning}" for warning in book.warnings]
    warnings += [
        f"{name}: the file labels {d['occupation']} {d['file']} in {d['rows']} row(s), occupations.json "
        f"says {d['occupations.json']}; the file's label is used (stereotype, B, by_dominant_gender)"
        for d in record["label_differences"]
    ]
    caveats = record["premise_caveats"]
    if caveats["rows"]:
        warnings.append(
            f"{name}: {caveats['rows']} premise(s) would be refused in a premises file ("
            f"{caveats['gendered_word']} with a gendered word, {caveats['occupation_not_named']} not "
            f"naming the row's occupation, e.g. {caveats['cells'][0]}); read as the authors published "
            "them, listed in expansion.json (premise_caveats); --strict refuses them"
        )
    expected = EXPECTED_ROWS.get(name)
    if named_set(source) is not None and expected is not None and expected != len(book.rows):
        warnings.append(f"{name}: {len(book.rows)} data rows; the paper's Table 1 has {expected}")
    if record["authors_file"] is None and path.name in SET_OF_FILE:
        warnings.append(
            f"{name}: {path.name} differs from the authors' file at commit {OCCUPATION_EVAL_COMMIT[:7]} "
            f"(git blob {blob}); results are not comparable with the paper's"
        )
    return record, warnings


@declared
def expand_eval_sets(
    sources: Sequence[PathArg],
    *,
    hypothesis_templates: TemplateChoice | None = None,
    seed: int | None = None,
    strict: bool = False,
) -> OccupationsExpansion:
    """Samples of each evaluation set in ``sources`` (names or workbooks), ids prefixed by set.
    ``hypothesis_templates`` and ``seed``: for sets without hypotheses. A premise caveat
    (:mod:`~nlibias.benchmarks.occupation_rows`) is counted and warned; ``strict`` refuses it."""
    books = [_read_set(source, strict) for source in sources]
    if all(book.has_hypotheses for *_, book in books):
        given = "every set given brings its own hypotheses (" + ", ".join(n for _, _, n, _ in books) + ")"
        for parameter, value in (("hypothesis_templates", hypothesis_templates), ("seed", seed)):
            if value is not None:
                raise option_applies_to_nothing(
                    parameter, "evaluation sets without hypotheses (ood-eval)", value=value, given=given
                )
    choice, seed = hypothesis_templates or "one", seed or 0
    samples: list[Sample] = []
    records: list[dict[str, Any]] = []
    warnings: list[str] = []
    for source, path, name, book in books:
        if any(r["eval_set"] == name for r in records):
            raise ConfigError(f"the evaluation set {name!r} is given twice", parameter="premises")
        own = [s for row in book.rows for s in row.samples(name, choice, seed)]
        record, notes = _set_record(source, path, name, book, choice, seed, own)
        samples += own
        records.append(record)
        warnings += notes
    origin = ", ".join(r["file"] for r in records)
    return OccupationsExpansion(tuple(samples), origin, sets=tuple(records), warnings=tuple(warnings))


def _read_set(source: str | Path, strict: bool) -> tuple[str | Path, Path, str, EvalWorkbook]:
    """(source as given, its file, its name, its workbook as read)."""
    named = named_set(source)
    if named is None:
        path = Path(source)
        name = SET_OF_FILE.get(path.name, path.stem.lower().replace(" ", "_"))
    else:
        path, name = resolve_data(EVAL_SET_DATA[named]), named.removesuffix("-eval")
    require = None if named is None else name != "ood"
    return source, path, name, read_eval_workbook(path, require_hypotheses=require, strict=strict)
