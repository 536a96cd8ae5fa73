"""Gender-swap word lists: WinoBias's (the default, vendored, MIT licence), paper 004's 19-entry
map, a user's; the 38 occupations are left out (the augmentation keeps the occupation).

>>> swaps = winobias_list()
>>> swaps.mapping["actress"], swaps.mapping["her"] == HER_RULE, "tailor" in swaps.mapping
('actor', True, False)
>>> paper_map().mapping["lady"], len(paper_map().mapping)
('man', 19)
"""

from __future__ import annotations

import hashlib
import json
import unicodedata
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path

from nlibias.benchmarks.occupation_list import load_occupations
from nlibias.errors import SourceError
from nlibias.textio.list_files import list_lines
from nlibias.textio.text_door import BOM, enter_text
from nlibias.textio.text_files import decode_utf8

HER_RULE, HIS_RULE = "<her>", "<his>"
"""Targets of "her" ("his" or "him") and "his" ("her" or "hers"), read in context (:mod:`.swap`)."""

WINOBIAS_TYPOS: dict[str, str] = {"mentleman": "gentleman"}
"""Misspelt source words of ``generalized_swaps.txt``, read as the word meant."""
WINOBIAS_CORRECTIONS: dict[str, str] = {
    "chairwomen": "chairmen",  # the source maps the plural to the singular "chairman"
    "barons": "baronesses",  # the source writes "barnoesses"
    "god": "goddess",  # the source writes "godess"
    "gods": "goddesses",
}
"""Source word → corrected counterpart."""
WINOBIAS_DROPPED = frozenset({"miss"})
"""Left out: "miss" → "sir" breaks the verb ("miss the bus")."""

# paper 004's `gender_map` (shanyas10/Evaluating-gender-bias@44053d1), in its order
_PAPER_MAP: tuple[tuple[str, str], ...] = (
    ("her", "his"), ("him", "her"), ("his", "her"), ("he", "she"), ("she", "he"),
    ("girl", "boy"), ("boy", "girl"), ("man", "woman"), ("woman", "man"), ("men", "women"),
    ("women", "men"), ("male", "female"), ("female", "male"), ("lady", "man"), ("ladies", "men"),
    ("guy", "girl"), ("guys", "girls"), ("boys", "girls"), ("girls", "boys"),
)  # fmt: skip


@dataclass(frozen=True)
class SwapList:
    """A word list: lower-case word → lower-case counterpart (or a rule marker)."""

    name: str
    """``winobias``, ``paper`` or the user file's path."""
    mapping: dict[str, str]
    names: frozenset[str] = field(default_factory=frozenset)
    """Keys that are first names: swapped only where the text capitalises them."""
    note: str = ""
    """Where the list comes from (for the augmentation summary)."""

    def with_names(self, names: dict[str, str]) -> SwapList:
        """This list plus name swaps (a name already in the list keeps the list's entry)."""
        mapping = dict(self.mapping)
        added = {k: v for k, v in names.items() if k not in mapping}
        mapping.update(added)
        return SwapList(self.name, mapping, self.names | frozenset(added), self.note)

    def digest(self) -> str:
        """SHA-256 of the mapping and names: the exact list a run used."""
        text = json.dumps([sorted(self.mapping.items()), sorted(self.names)], ensure_ascii=False)
        return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _occupation_words() -> frozenset[str]:
    return frozenset(word.lower() for o in load_occupations() for word in (o.name, o.plural))


def _pairs_file(
    text: str, path: str, item: str = "'word<TAB>counterpart' pair"
) -> list[tuple[str, str, int]]:
    """``(word, counterpart, line)`` of a ``word<TAB>counterpart`` file."""
    pairs = []
    for line_number, line in list_lines(path, text, item=item):
        parts = [p.strip().lower() for p in line.split("\t")]
        if len(parts) != 2 or not all(parts):
            raise SourceError(
                path, None, "expected 'word<TAB>counterpart'", line=line_number, fix="one pair per line"
            )
        pairs.append((parts[0], parts[1], line_number))
    return pairs


def _winobias_pairs(name: str) -> list[tuple[str, str]]:
    """The corrected pairs of a vendored WinoBias file."""
    text = (resources.files("nlibias") / "resources" / "winobias" / name).read_text("utf-8")
    pairs = _pairs_file(enter_text(text, f"winobias/{name}", lines=True), f"winobias/{name}")
    return [_corrected(word, counterpart) for word, counterpart, _ in pairs]


def _corrected(word: str, counterpart: str) -> tuple[str, str]:
    """A source pair with :data:`WINOBIAS_TYPOS` and :data:`WINOBIAS_CORRECTIONS` applied.

    >>> _corrected("god", "godess"), _corrected("mentleman", "gentlewoman")
    (('god', 'goddess'), ('gentleman', 'gentlewoman'))
    """
    word = WINOBIAS_TYPOS.get(word, word)
    return word, WINOBIAS_CORRECTIONS.get(word, counterpart)


def winobias_list() -> SwapList:
    """WinoBias's lists: ``generalized_swaps.txt`` one-way, then ``extra_gendered_words.txt`` in
    both directions for words not yet mapped (the first entry of a word wins), corrected."""
    occupations = _occupation_words()
    mapping: dict[str, str] = {}
    entries = _winobias_pairs("generalized_swaps.txt")
    for word, counterpart in _winobias_pairs("extra_gendered_words.txt"):
        entries += [(word, counterpart), (counterpart, word)]
    for word, counterpart in entries:
        if word in WINOBIAS_DROPPED or word in occupations or counterpart in occupations:
            continue
        mapping.setdefault(word, counterpart)
    mapping.update({"her": HER_RULE, "his": HIS_RULE, "hers": "his"})
    note = (
        "WinoBias gender-swap lists (Zhao et al., NAACL 2018; github.com/uclanlp/corefBias "
        "WinoBias/wino, MIT licence), vendored in nlibias/resources/winobias, with nlibias's "
        "corrections, 'miss' and occupation words left out, and the her/his rule"
    )
    return SwapList("winobias", mapping, note=note)


def paper_map() -> SwapList:
    """Paper 004's 19-entry one-way map, as in its authors' code ("her" → "his" always)."""
    note = (
        "paper 004's gender_map (shanyas10/Evaluating-gender-bias@44053d1, "
        "Augmentation_Dataset_Creation.ipynb): 19 one-way entries, her -> his always"
    )
    return SwapList("paper", dict(_PAPER_MAP), note=note)


def read_pairs(path: str | Path, *, both_ways: bool, names: bool = False) -> dict[str, str]:
    """A user's ``word<TAB>counterpart`` file through the text door; ``both_ways`` adds each reverse
    unless that word has its own entry. A word listed twice, an entry with a zero-width character
    inside, or no pair at all is refused; of ``names`` (a name swaps with one other), also a name
    in two pairs, in either column."""
    path = Path(path)
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise SourceError(path, None, f"cannot read the word list: {exc.strerror or exc}") from exc
    decoded = decode_utf8(path, data)
    _refuse_zero_width(path, decoded.removeprefix(BOM))
    text = enter_text(decoded, str(path), lines=True, stacklevel=3)
    mapping: dict[str, str] = {}
    lines: dict[str, int] = {}
    paired: dict[str, int] = {}  # each name of a names file, with the line of its pair
    item = "'name<TAB>name' pair" if names else "'word<TAB>counterpart' pair"
    for word, counterpart, line_number in _pairs_file(text, str(path), item):
        if word in lines:
            raise SourceError(path, None, f"{word!r} is listed twice (line {lines[word]})", line=line_number)
        if names and word == counterpart:
            raise SourceError(
                path, None, f"the name {word!r} is paired with itself: it would swap with nothing",
                line=line_number, fix="pair it with another name, or delete the line",
            )  # fmt: skip
        mapping[word], lines[word] = counterpart, line_number
        for name in (word, counterpart) if names else ():
            if paired.setdefault(name, line_number) != line_number:
                raise SourceError(
                    path, None, f"the name {name!r} is in two pairs (lines {paired[name]} and {line_number}): "
                    "it would swap with two names", line=line_number, fix="give each name one partner",
                )  # fmt: skip
    if not mapping:
        raise SourceError(
            path, None, "no word pairs (the file is empty or holds only comments)",
            fix="one 'word<TAB>counterpart' pair per line",
        )  # fmt: skip
    if both_ways:
        for word, counterpart in list(mapping.items()):
            mapping.setdefault(counterpart, word)
    return mapping


ZERO_WIDTH = frozenset("\u200b\u200c\u200d\u2060\ufeff")  # space, (non-)joiners, BOM


def _inner_zero_width(entry: str) -> str | None:
    """The first zero-width character between an entry's first and last visible character."""
    visible = [i for i, c in enumerate(entry) if not (c.isspace() or unicodedata.category(c) == "Cf")]
    return next((c for c in entry[visible[0] : visible[-1]] if c in ZERO_WIDTH), None) if visible else None


def _refuse_zero_width(path: Path, text: str) -> None:
    """Refuse an entry with a zero-width character inside ("h\u200ber" would be another word)."""
    if text.isascii() or text.isprintable():
        return
    for number, line in enumerate(text.splitlines(), start=1):
        for entry in line.split("\t"):
            found = _inner_zero_width(entry)
            if found is not None:
                raise SourceError(
                    path,
                    None,
                    f"the entry {entry.strip()!r} holds the invisible U+{ord(found):04X} "
                    f"{unicodedata.name(found)}: it would be another word than the one shown",
                    line=number,
                    fix="delete the character (retype the word)",
                )


def user_list(path: str | Path) -> SwapList:
    """A user's list, each line also applied in reverse; "her"/"his" get their rules where mapped."""
    mapping = read_pairs(path, both_ways=True)
    if mapping.get("her") in ("his", "him"):
        mapping["her"] = HER_RULE
    if mapping.get("his") in ("her", "hers"):
        mapping["his"] = HIS_RULE
    return SwapList(str(path), mapping, note=f"user list {path}")


def swap_list_named(word_list: str | Path) -> SwapList:
    """``winobias``, ``paper`` or the path of a user's list."""
    if str(word_list) == "winobias":
        return winobias_list()
    if str(word_list) == "paper":
        return paper_map()
    return user_list(word_list)
