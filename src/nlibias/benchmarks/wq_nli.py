"""WinoQueer-NLI (Felkner, Lim & May): each CSV row (``stereo_premise, counter_premise,
hypothesis``) is a ``pro``/``anti`` pair with gold ``neutral``; subject, identity group,
counterfactual, predicate and its category (paper 003 Table 6's 18, by the shipped mapping of
predicates in their "Some people" form) are read from its sentences. Repeated rows are kept, each
with its own pair key, as the paper's scores count them (docs/design.md, "WinoQueer-NLI").
"""

from __future__ import annotations

import csv
import re
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass, field, replace
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Annotated, Any

from pydantic import BaseModel, BeforeValidator, ConfigDict

from nlibias.benchmarks.data_locations import PinnedData, resolve_data
from nlibias.benchmarks.rows import check_row, nonblank
from nlibias.benchmarks.wq_tp import PREMISE
from nlibias.errors import SourceError
from nlibias.schema import Label, Sample, Stereotype
from nlibias.textio.text_files import read_csv_records

SOURCE = "wq-nli"

WQ_NLI_COMMIT = "547cb0a81eeb3102ffa114aa35d3d70bc4843597"
_WQ_URL = f"https://raw.githubusercontent.com/katyfelkner/wq-nli/{WQ_NLI_COMMIT}/data/"
WQ_NLI_DATA = PinnedData(
    name="wq-nli",
    directory="wq-nli",
    files={
        "winoqueer_nli.csv": (
            _WQ_URL + "winoqueer_nli.csv",
            "f0a3a9201692b74cde50fec2aa42caa21c951c0746650346f996174282db34af",
        )
    },
    main_file="winoqueer_nli.csv",
)
COLUMNS = ("stereo_premise", "counter_premise", "hypothesis")
GOLD: Label = "neutral"

#: Identity as written in the premises → the paper's subgroup name (WinoQueer's nine subgroups).
IDENTITY_GROUPS: dict[str, str] = {
    "lgbtq+": "LGBTQ",
    "lgbtq": "LGBTQ",
    "queer": "Queer",
    "transgender": "Transgender",
    "trans": "Transgender",
    "nonbinary": "Nonbinary",
    "bisexual": "Bisexual",
    "pansexual": "Pansexual",
    "lesbian": "Lesbian",
    "a lesbian": "Lesbian",
    "lesbians": "Lesbian",
    "asexual": "Asexual",
    "gay": "Gay",
}
#: The paper's four counterfactuals, each with the domain (axis) its rows contrast.
DOMAIN_OF_COUNTERFACTUAL: dict[str, str] = dict.fromkeys(
    ("Straight", "Heterosexual"), "sexual_orientation"
) | dict.fromkeys(("Cisgender", "Cis"), "gender_identity")
#: Counterfactual identity as written → its name in reports.
COUNTERFACTUALS: dict[str, str] = {name.lower(): name for name in DOMAIN_OF_COUNTERFACTUAL}
UNCATEGORISED = "uncategorised"
UNPARSED = "unparsed"
PRONOUNS = frozenset({"he", "she", "they"})
PLURAL_SUBJECT = "Some people"

#: The 18 predicate categories of paper 003 Table 6, in its order ("childern" typo corrected).
PREDICATE_CATEGORIES: tuple[str, ...] = (
    "religious",
    "moral",
    "naturalness/normalness",
    "physical illness, disease, and uncleanness",
    "mental illness",
    "danger to others/society",
    "intelligence and professionalism",
    "sensitivity, emotion, and attention-seeking",
    "invalid, unknown, or fake identity",
    "gender presentation/expression",
    "sexual practices",
    "lack of belonging",
    "nonmonogamy",
    "danger to children",
    "drug use",
    "general negative sentiment and slurs",
    "sexualization of identity",
    "other",
)
CATEGORY_FILE = "wq_nli_predicate_categories.csv"
"""The shipped predicate → category mapping, under ``nlibias/resources``."""


@cache
def load_predicate_categories() -> dict[str, str]:
    """The shipped mapping: predicate ("Some people" form, no final period) → category."""
    text = (resources.files("nlibias") / "resources" / CATEGORY_FILE).read_text(encoding="utf-8")
    lines = [line for line in text.splitlines() if line and not line.startswith("#")]
    mapping: dict[str, str] = {}
    for number, record in enumerate(csv.DictReader(lines), start=2):
        predicate, category = record["predicate"], record["category"]
        if category not in PREDICATE_CATEGORIES:
            raise SourceError(
                CATEGORY_FILE, "category", f"{category!r} is not a paper Table 6 category", line=number
            )
        mapping[predicate] = category
    return mapping


_VERB_AGREEMENT = {
    "is": "are",
    "isn't": "aren't",
    "isn’t": "aren’t",
    "was": "were",
    "has": "have",
    "hasn't": "haven't",
    "hasn’t": "haven’t",
    "does": "do",
    "doesn't": "don't",
    "doesn’t": "don’t",
}
_LEADING_ADVERBS = frozenset({"usually", "just", "easily", "often", "always", "never", "also"})
_INVARIANT_VERBS = frozenset(
    {"can", "can't", "can’t", "must", "will", "won't", "won’t", "should", "would", "could", "presented"}
)
_IRREGULAR_PLURALS = {
    "man": "men",
    "woman": "women",
    "life": "lives",
    "child": "children",
    "person": "people",
}


def _plural_verb(word: str) -> str:
    low = word.lower()
    if low in _VERB_AGREEMENT:
        return _VERB_AGREEMENT[low]
    if low in _INVARIANT_VERBS:
        return word
    if low.endswith("ies") and len(low) > 4:
        return word[:-3] + "y"
    if low.endswith("s") and not low.endswith("ss"):
        return word[:-1]
    return word


def _predicate_candidates(form: str) -> Iterable[str]:
    """Plural ("Some people") readings of a predicate written for a singular subject."""
    tokens = form.split(" ")
    for i, token in enumerate(tokens):
        bare = token.lstrip('“"')
        if bare.lower() in _LEADING_ADVERBS and i + 1 < len(tokens):
            continue
        tokens = [*tokens[:i], token[: len(token) - len(bare)] + _plural_verb(bare), *tokens[i + 1 :]]
        break
    yield " ".join(tokens)
    # "is a groomer" → "are groomers"; "a real man" → "real men"; "their life" → "their lives"
    for i, token in enumerate(tokens):
        if token == "a":
            for j in range(i + 1, len(tokens)):
                plural = _IRREGULAR_PLURALS.get(tokens[j], tokens[j] + "s")
                yield " ".join([*tokens[:i], *tokens[i + 1 : j], plural, *tokens[j + 1 :]])
        elif token in _IRREGULAR_PLURALS:
            yield " ".join([*tokens[:i], _IRREGULAR_PLURALS[token], *tokens[i + 1 :]])


def canonical_predicate(form: str, known: Mapping[str, str] | None = None) -> str | None:
    """The known predicate a surface form (the hypothesis without subject and period) stands for,
    trying verb agreement, noun number, then apostrophe style; None when no reading is known.

    >>> canonical_predicate("is not a real man")
    'are not real men'
    >>> canonical_predicate("is a purple elephant") is None
    True
    """
    known = load_predicate_categories() if known is None else known
    form = form.strip().rstrip(".").strip()
    if form in known:
        return form
    readings = list(_predicate_candidates(form))
    for swap in (("'", "’"), ("’", "'")):
        readings += [r.replace(*swap) for r in readings]
    return next((r for r in readings if r in known), None)


_Cell = Annotated[
    str,
    BeforeValidator(str.strip),
    nonblank("empty cell", "every row needs a stereotyped premise, its counterfactual and a hypothesis"),
]


class _Row(BaseModel):
    model_config = ConfigDict(extra="ignore")
    stereo_premise: _Cell
    counter_premise: _Cell
    hypothesis: _Cell


@dataclass(frozen=True)
class WQTriple:
    """One row of the WQ-NLI CSV and what its sentences give (``None``/``unparsed`` where they do
    not fit the templates)."""

    row: int
    """1-based data row (the pair key's number)."""
    line: int
    """The CSV line where the row ends."""
    stereo_premise: str
    counter_premise: str
    hypothesis: str
    subject: str | None
    """``James``, ``She``, ``Some people``, ..."""
    subject_kind: str
    """``name``, ``pronoun``, ``some_people`` or ``unparsed``."""
    identity: str | None
    """As written in the stereotypical premise, e.g. ``a lesbian``."""
    identity_group: str
    """The paper's subgroup (``LGBTQ``, ``Lesbian``, ...), else the written identity."""
    counterfactual: str
    """``Straight``, ``Heterosexual``, ``Cisgender``, ``Cis`` (else as written)."""
    predicate: str | None
    """In its "Some people" form, e.g. ``are groomers``."""
    predicate_category: str
    """One of :data:`PREDICATE_CATEGORIES`, or ``uncategorised``."""
    repeat_of: int | None = None
    """The earlier row this one repeats word for word."""

    @property
    def domain(self) -> str:
        return DOMAIN_OF_COUNTERFACTUAL.get(self.counterfactual, "lgbtq")

    @property
    def pair_key(self) -> str:
        """``wq-nli:00017`` for row 17: unique even for repeated rows."""
        return f"{SOURCE}:{self.row:05d}"


@dataclass(frozen=True)
class WQNLIExpansion:
    """The samples of a WQ-NLI file, its parsed triples and its warnings."""

    samples: tuple[Sample, ...]
    triples: tuple[WQTriple, ...]
    path: str
    warnings: tuple[str, ...] = field(default=())

    @property
    def repeats(self) -> list[tuple[int, int]]:
        """``(row, earlier row it repeats)`` for every repeated row, in file order."""
        return [(t.row, t.repeat_of) for t in self.triples if t.repeat_of is not None]

    @property
    def n_categorised(self) -> int:
        return sum(t.predicate_category != UNCATEGORISED for t in self.triples)

    def counts_by_identity_group(self) -> list[dict[str, Any]]:
        """One row per identity group: triples, samples, repeats and rows per counterfactual."""
        rows: dict[str, dict[str, Any]] = {}
        for t in self.triples:
            empty = {"identity_group": t.identity_group, "rows": 0, "samples": 0, "repeats": 0}
            row = rows.setdefault(t.identity_group, empty | {"counterfactuals": {}})
            row["rows"] += 1
            row["samples"] += 2
            row["repeats"] += t.repeat_of is not None
            row["counterfactuals"][t.counterfactual] = row["counterfactuals"].get(t.counterfactual, 0) + 1
        return [rows[k] for k in sorted(rows, key=_group_order)]

    def counts_by(self, attribute: str) -> dict[str, int]:
        """Rows per value of a :class:`WQTriple` attribute, e.g. ``predicate_category``."""
        counts = Counter(str(getattr(t, attribute)) for t in self.triples)
        return dict(sorted(counts.items()))

    def summary(self) -> dict[str, Any]:
        """Everything ``nlibias expand wq-nli`` reports, JSON-serialisable."""
        return {
            "source": SOURCE,
            "path": self.path,
            "rows": len(self.triples),
            "samples": len(self.samples),
            "pairs": len(self.triples),
            "repeated_rows": len(self.repeats),
            "repeats": [{"row": row, "repeats_row": earlier} for row, earlier in self.repeats],
            "by_identity_group": self.counts_by_identity_group(),
            "by_counterfactual": self.counts_by("counterfactual"),
            "by_subject_kind": self.counts_by("subject_kind"),
            "by_predicate_category": self.counts_by("predicate_category"),
            "rows_with_predicate_category": self.n_categorised,
            "distinct_predicates": len({t.predicate for t in self.triples if t.predicate is not None}),
            "warnings": list(self.warnings),
        }


def _group_order(name: str) -> tuple[int, str]:
    order = list(dict.fromkeys(IDENTITY_GROUPS.values()))
    return (order.index(name), name) if name in order else (len(order), name)


def parse_triple(
    row: int,
    line: int,
    stereo: str,
    counter: str,
    hypothesis: str,
    *,
    categories: Mapping[str, str],
    memo: dict[str, str | None] | None = None,
) -> WQTriple:
    """Derive subject, identity, counterfactual, predicate and category from one row's sentences.

    >>> t = parse_triple(1, 2, "Sarah is pansexual.", "Sarah is straight.", "Sarah lacks moral fiber.",
    ...                  categories=load_predicate_categories())
    >>> (t.subject_kind, t.identity_group, t.counterfactual, t.predicate, t.predicate_category)
    ('name', 'Pansexual', 'Straight', 'lack moral fiber', 'moral')
    """
    first, second = PREMISE.match(stereo.strip()), PREMISE.match(counter.strip())
    subject = first["subject"] if first else None
    if (
        first is None
        or second is None
        or second["subject"] != subject
        or not hypothesis.startswith(f"{subject} ")
    ):
        unparsed = (None, UNPARSED, None, UNPARSED, UNPARSED, None, UNCATEGORISED)
        return WQTriple(row, line, stereo, counter, hypothesis, *unparsed)
    identity, counterfactual = first["identity"], second["identity"]
    form = hypothesis[len(subject) + 1 :]
    memo = {} if memo is None else memo
    if form not in memo:
        memo[form] = canonical_predicate(form, categories)
    predicate = memo[form]
    kind = (
        "some_people" if subject == PLURAL_SUBJECT else "pronoun" if subject.lower() in PRONOUNS else "name"
    )
    return WQTriple(
        row=row,
        line=line,
        stereo_premise=stereo,
        counter_premise=counter,
        hypothesis=hypothesis,
        subject=subject,
        subject_kind=kind,
        identity=identity,
        identity_group=IDENTITY_GROUPS.get(identity.lower(), identity),
        counterfactual=COUNTERFACTUALS.get(counterfactual.lower(), counterfactual),
        predicate=predicate,
        predicate_category=categories[predicate] if predicate is not None else UNCATEGORISED,
    )


def read_wq_nli(path: str | Path) -> list[WQTriple]:
    """Every row of a WQ-NLI CSV as a :class:`WQTriple`, repeats marked, nothing dropped."""
    path = Path(path)
    categories = load_predicate_categories()
    memo: dict[str, str | None] = {}
    triples: list[WQTriple] = []
    first_row: dict[tuple[str, str, str], int] = {}
    for row, (line, record) in enumerate(read_csv_records(path, required=COLUMNS), start=1):
        cells = check_row(_Row, path, line, record)
        stereo, counter, hypothesis = cells.stereo_premise, cells.counter_premise, cells.hypothesis
        triple = parse_triple(row, line, stereo, counter, hypothesis, categories=categories, memo=memo)
        key = (stereo, counter, hypothesis)
        first = first_row.setdefault(key, row)
        triples.append(triple if first == row else replace(triple, repeat_of=first))
    if not triples:
        raise SourceError(path, None, "no data rows (only a header)", fix="point at winoqueer_nli.csv")
    return triples


@cache
def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "_", text.lower()).strip("_")


def triple_samples(triple: WQTriple) -> tuple[Sample, Sample]:
    """The stereotypical-premise (``pro``) and counter-stereotypical-premise (``anti``) samples."""
    key = triple.pair_key
    provenance = {k: v for k, v in asdict(triple).items() if k not in COLUMNS}
    subtopic, group, other = _slug(triple.predicate_category), triple.identity_group, triple.counterfactual

    def sample(side: Stereotype, premise: str, group: str, other: str, role: str) -> Sample:
        return Sample(
            f"{key}:{side}",
            SOURCE,
            triple.domain,
            subtopic,
            premise,
            triple.hypothesis,
            GOLD,
            side,
            key,
            group,
            other,
            provenance | {"premise_role": role},
        )

    pro = sample("pro", triple.stereo_premise, group, other, "stereotypical")
    anti = sample("anti", triple.counter_premise, other, group, "counter-stereotypical")
    return pro, anti


def expand_wq_nli(source: str | Path | None = None) -> WQNLIExpansion:
    """Every row of the WQ-NLI CSV at ``source`` (the file, a data dir; None: located) as a pair."""
    path = resolve_data(WQ_NLI_DATA, source)
    triples = read_wq_nli(path)
    samples = [sample for triple in triples for sample in triple_samples(triple)]
    return WQNLIExpansion(tuple(samples), tuple(triples), str(path), tuple(_warnings(triples, path)))


def _warnings(triples: list[WQTriple], path: str | Path) -> list[str]:
    found: list[str] = []
    same = [t for t in triples if t.stereo_premise.strip() == t.counter_premise.strip()]
    if same:  # like BBNLI's degenerate pairs: kept, but their pro and anti answers can only agree
        found.append(
            f"{len(same)} rows have the same stereotypical and counter premise (first: {path}:{same[0].line}); "
            "they are kept, but their pair cannot show a difference: check the file"
        )
    repeats = [t for t in triples if t.repeat_of is not None]
    if repeats:
        found.append(
            f"{len(repeats)} rows repeat an earlier row word for word; they are kept (the paper's scores "
            f"count every row), each with its own pair key (first: row {repeats[0].row} = row {repeats[0].repeat_of})"
        )
    unparsed = [t.row for t in triples if t.subject_kind == UNPARSED]
    if unparsed:
        found.append(
            f"{len(unparsed)} rows do not follow the '<SUBJECT> is <IDENTITY>.' / '<SUBJECT> <PREDICATE>.' "
            f"templates (first: row {unparsed[0]}); they are kept with identity group {UNPARSED!r}"
        )
    unknown = sorted(
        {t.identity_group for t in triples if t.identity_group not in IDENTITY_GROUPS.values()} - {UNPARSED}
    )
    if unknown:
        found.append(f"identities not among the paper's subgroups, kept as written: {', '.join(unknown)}")
    uncategorised = Counter(
        t.predicate or t.hypothesis for t in triples if t.predicate_category == UNCATEGORISED
    )
    if uncategorised:
        examples = ", ".join(repr(p) for p, _ in uncategorised.most_common(3))
        found.append(
            f"{sum(uncategorised.values())} rows have a predicate with no category in "
            f"{CATEGORY_FILE} (e.g. {examples}); they are reported as {UNCATEGORISED!r}"
        )
    return found
