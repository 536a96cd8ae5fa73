"""The door text enters through: NFC, a leading byte-order mark dropped, format characters
(Unicode Cf) removed with a warning; compatibility forms are kept (matching reads them via :func:`fold`).

>>> enter_text("\ufeffHe\u0301le\u0300ne", "names.tsv:1")
'Hélène'
>>> import warnings
>>> with warnings.catch_warnings(record=True) as caught:
...     warnings.simplefilter("always")
...     enter_text("h\u200ber", "train.jsonl:5 (premise)")
'her'
>>> str(caught[0].message)
'train.jsonl:5 (premise): removed 1 invisible format character (U+200B ZERO WIDTH SPACE) from the text'
"""

from __future__ import annotations

import unicodedata
import warnings
from collections import Counter
from functools import lru_cache

BOM = "\ufeff"


class FormatCharactersWarning(UserWarning):
    """Invisible format characters (Unicode Cf) were removed from a text."""


def enter_text(text: str, where: str, *, lines: bool = False, stacklevel: int = 2) -> str:
    """``text`` through the door, the warning naming ``where`` (``lines``: and the line in it)."""
    if text.isascii():
        return text
    if text.startswith(BOM):
        text = text[1:]
    if not text.isprintable():  # a format character is not printable
        text = _remove_format(text, where, lines, stacklevel + 1)
    if not unicodedata.is_normalized("NFC", text):
        text = unicodedata.normalize("NFC", text)
    return text


def _remove_format(text: str, where: str, lines: bool, stacklevel: int) -> str:
    category = unicodedata.category
    kept = [c for c in text if category(c) != "Cf"]
    if len(kept) == len(text):
        return text
    removed = Counter(c for c in text if category(c) == "Cf")
    if lines:
        first = next(i for i, c in enumerate(text) if category(c) == "Cf")
        where = f"{where}:{text.count(chr(10), 0, first) + 1}"
    count = sum(removed.values())
    names = ", ".join(
        f"U+{ord(c):04X} {unicodedata.name(c, 'FORMAT CHARACTER')}" + (f" x{n}" if n > 1 else "")
        for c, n in removed.items()
    )
    warnings.warn(
        f"{where}: removed {count} invisible format character{'s' * (count != 1)} ({names}) from the text",
        FormatCharactersWarning,
        stacklevel=stacklevel,
    )
    return "".join(kept)


@lru_cache(maxsize=4096)
def _fold_char(c: str) -> str:
    folded = unicodedata.normalize("NFKC", c)
    return folded if len(folded) == 1 else c


def fold(text: str) -> str:
    """Each character with a one-character NFKC form replaced by it (for matching, not output).

    >>> fold("ｓｈｅ ﬁne"), len(fold("ｓｈｅ ﬁne"))
    ('she ﬁne', 7)
    """
    if text.isascii():
        return text
    return "".join(map(_fold_char, text))


def word_key(word: str) -> str:
    """A word as lists and texts are matched: through the door, folded, lower case.

    >>> word_key("ＨＥＲ"), word_key("Gar\\u00e7on") == word_key("Garc\\u0327on")
    ('her', True)
    """
    return fold(enter_text(word, "word")).lower()


FULL_WIDTH_OFFSET = 0xFEE0  # U+FF01..U+FF5E are ASCII U+0021..U+007E shifted by this


def is_full_width(word: str) -> bool:
    """Whether every letter of ``word`` is a full-width form (U+FF21..U+FF5A).

    >>> is_full_width("Ｈｅ"), is_full_width("Ｈe")
    (True, False)
    """
    letters = [c for c in word if c.isalpha()]
    return bool(letters) and all("\uff21" <= c <= "\uff5a" for c in letters)


def to_full_width(word: str) -> str:
    """``word``'s printable ASCII as full-width forms.

    >>> to_full_width("She")
    'Ｓｈｅ'
    """
    return "".join(chr(ord(c) + FULL_WIDTH_OFFSET) if "!" <= c <= "~" else c for c in word)
