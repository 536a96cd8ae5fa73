"""Swap gendered words in a sentence: whole words, case kept, one pass, "her"/"his" by rule.

Rules (each tested in ``tests/test_debias_swap.py``):

* **Whole words.** A listed word matches only where no letter or digit touches it on either side,
  so "men" is not found inside "women" or "mention"; punctuation and "'s" may follow it
  ("man's" → "woman's", "he," → "she,"). Matching ignores case.
* **Case kept.** The counterpart takes the matched word's case: all capitals ("HE" → "SHE"),
  first letter capital ("He" → "She"), otherwise lower case.
* **One pass.** Every match is replaced by its counterpart in a single left-to-right scan of the
  original sentence, so a word that was just swapped in is never swapped back: "he saw her" →
  "she saw him" (the authors' sequential replacement gives "she saw his").
* **"her" → "him" or "his".** "her" is an object ("him") when it ends the sentence, or is
  followed by punctuation or by a word of :data:`FUNCTION_WORDS` (a determiner, preposition,
  conjunction, pronoun, auxiliary or particle: "gave her a book", "looks at her.", "told her
  that"), or by an adverb in -ly ("hugs her tightly"; -ly adjectives and nouns such as "lovely",
  "family" excepted); otherwise it is a possessive ("his"): "her book", "on her back".
  **"his"** becomes "hers" by the same test ("the book is his.") and "her" otherwise.
* **Names** (an optional list) are swapped only where the text capitalises them.

>>> from nlibias.debias.wordlists import winobias_list
>>> swapper = Swapper(winobias_list())
>>> swapper.swap("He gave her a book; HER sons thanked him.")
('She gave him a book; HIS daughters thanked her.', [('he', 'she'), ('her', 'him'), ('her', 'his'), ('sons', 'daughters'), ('him', 'her')])
"""

from __future__ import annotations

import re

from nlibias.debias.wordlists import HER_RULE, HIS_RULE, SwapList

FUNCTION_WORDS = frozenset(
    """a an the this that these those some any all both each every no another
    to with in on at for from of by about into onto up out off around through across toward towards
    after before behind near over under between against without
    as and or but nor so because while when whenever if than then though although until
    is was are were be been being has have had will would can could should shall may might must
    do does did he she it they we you i him her them me us its their our your my
    how what where why who whom which whose not again too very just now here there still
    today tonight yesterday tomorrow something anything nothing everything someone anyone""".split()  # noqa: SIM905 (a word list reads better as text)
)
"""Words after "her"/"his" that mark it as standing alone (object "him" / pronoun "hers")."""

_LY_NOT_ADVERBS = frozenset(
    """lovely only friendly elderly early family holy ugly curly silly daily lonely jolly belly
    lily bubbly wooly woolly frilly hilly chilly smelly sly fly ally reply supply rally""".split()  # noqa: SIM905
)
_NEXT_WORD = re.compile(r"\s*([A-Za-z]+)?")
_WORD = re.compile(r"(?<![^\W_])[^\W\d_]+(?:'[^\W\d_]+)?(?![^\W_])")
_LETTERS = re.compile(r"[^\W\d_]+")
"""A word: letters not touching another letter or digit, an apostrophe and letters may follow."""


def keep_case(matched: str, counterpart: str) -> str:
    """``counterpart`` in the case of ``matched``.

    >>> keep_case("HE", "she"), keep_case("He", "she"), keep_case("he", "she"), keep_case("Mr.", "mrs.")
    ('SHE', 'She', 'she', 'Mrs.')
    """
    letters = [c for c in matched if c.isalpha()]
    if len(letters) > 1 and all(c.isupper() for c in letters):
        return counterpart.upper()
    if matched[:1].isupper():
        return counterpart[:1].upper() + counterpart[1:]
    return counterpart


def stands_alone(text: str, end: int) -> bool:
    """Whether the word ending at ``end`` is followed by nothing, punctuation, a function word or
    an -ly adverb (so "her" there is an object, "his" a pronoun).

    >>> stands_alone("gave her a book", 8), stands_alone("her book", 3), stands_alone("at her.", 6)
    (True, False, True)
    """
    match = _NEXT_WORD.match(text, end)
    word = match.group(1) if match else None
    if word is None:
        return True
    lower = word.lower()
    if lower in FUNCTION_WORDS:
        return True
    return lower.endswith("ly") and lower not in _LY_NOT_ADVERBS


class Swapper:
    """A compiled word list; :meth:`swap` rewrites one sentence.

    Words are found as runs of letters (an apostrophe and letters may follow: "ma'am", "man's");
    a run not in the list is looked up without its apostrophe suffix ("man" + "'s"). A listed
    word's final period is not part of the match ("mr." matches "Mr" and the period stays).
    """

    def __init__(self, swaps: SwapList) -> None:
        self.swaps = swaps
        self._mapping = {k.rstrip("."): v.rstrip(".") for k, v in swaps.mapping.items()}
        self._names = frozenset(n.rstrip(".") for n in swaps.names)
        self._plain = frozenset(k for k in self._mapping if "'" not in k)
        self._apostrophe_keys = tuple(k for k in self._mapping if "'" in k)

    def may_hold(self, text: str) -> bool:
        """A fast test that is True whenever ``text`` holds a listed word (and sometimes not)."""
        lower = text.lower()
        return not self._plain.isdisjoint(_LETTERS.findall(lower)) or any(
            k in lower for k in self._apostrophe_keys
        )

    def find(self, text: str) -> bool:
        """Whether ``text`` holds any word of the list (names only where capitalised)."""
        return self.may_hold(text) and any(self._lookup(m) is not None for m in _WORD.finditer(text))

    def _lookup(self, match: re.Match[str]) -> tuple[str, str, int] | None:
        """``(word, counterpart or rule, end of the word)`` for a listed word, else None."""
        token = match.group(0)
        word = token.lower()
        if word not in self._mapping:
            word = word.split("'", 1)[0]
            if word not in self._mapping:
                return None
        if word in self._names and not token[:1].isupper():
            return None
        return token[: len(word)], self._mapping[word], match.start() + len(word)

    def swap(self, text: str) -> tuple[str, list[tuple[str, str]]]:
        """``text`` with every listed word swapped, and the ``(word, counterpart)`` changes made
        (lower case, in order)."""
        changes: list[tuple[str, str]] = []
        if not self.may_hold(text):
            return text, changes
        pieces: list[str] = []
        last = 0
        mapping = self._mapping
        for match in _WORD.finditer(text):
            token = match.group(0).lower()
            if token not in mapping and "'" not in token:
                continue  # the common case, decided without a call
            found = self._lookup(match)
            if found is None:
                continue
            word, target, end = found
            if target == HER_RULE:
                target = "him" if stands_alone(text, end) else "his"
            elif target == HIS_RULE:
                target = "hers" if stands_alone(text, end) else "her"
            if target == word.lower():
                continue
            changes.append((word.lower(), target))
            pieces += [text[last : match.start()], keep_case(word, target)]
            last = end
        if not changes:
            return text, changes
        pieces.append(text[last:])
        return "".join(pieces), changes
