"""The one door text enters nlibias through: sample texts, training rows, word lists and names.

:func:`enter_text` takes a text and where it came from (``train.jsonl:5 (premise)``, a file
path, an argument name) and returns the text nlibias works on:

* **NFC.** Canonically equivalent spellings become one: "é" written as ``e`` + U+0301 (NFD, as
  macOS file names and some editors write it) becomes the single letter U+00E9. No warning: the
  text is the same text.
* **A leading byte-order mark dropped**, silently (it is a file's signature, not text).
* **Format characters removed, with a warning** (:class:`FormatCharactersWarning`) that says
  where and which: every character of Unicode category Cf (zero-width space U+200B, zero-width
  non-joiner and joiner U+200C/U+200D, soft hyphen U+00AD, word joiner U+2060, the bidirectional
  controls LRM/RLM U+200E/U+200F, LRE..RLO U+202A..U+202E and LRI..PDI U+2066..U+2069, a byte-order
  mark inside the text, ...). They are invisible, yet they split words: "h\\u200ber" is not "her"
  to a program. Emoji sequences joined by U+200D lose their joiner (the emoji stay).

Compatibility forms (full-width "ｈｅｒ", ligatures "ﬁ", superscripts) are **kept** in the text:
NFKC would change what a text says ("x²" → "x2"). Word matching reads them through
:func:`fold`, their NFKC form letter by letter (full-width "ｈｅｒ" matches the list word "her"),
keeping positions; a form whose NFKC is several letters (a ligature) is not folded, so a word
holding one is not matched.

>>> enter_text("\\ufeffHe\\u0301le\\u0300ne", "names.tsv:1")
'Hélène'
>>> import warnings
>>> with warnings.catch_warnings(record=True) as caught:
...     warnings.simplefilter("always")
...     enter_text("h\\u200ber", "train.jsonl:5 (premise)")
'her'
>>> str(caught[0].message)
'train.jsonl:5 (premise): removed 1 invisible format character (U+200B ZERO WIDTH SPACE) from the text'
>>> fold("ＨＥＲ ｂｏｏｋ")
'HER book'
"""

from __future__ import annotations

import unicodedata
import warnings
from collections import Counter
from functools import lru_cache

BOM = "\ufeff"


class FormatCharactersWarning(UserWarning):
    """Invisible format characters (Unicode category Cf) were removed from a text entering nlibias."""


def enter_text(text: str, where: str, *, lines: bool = False, stacklevel: int = 2) -> str:
    """``text`` in NFC, a leading byte-order mark dropped, format characters removed (with a
    :class:`FormatCharactersWarning` naming ``where``). ``lines``: ``text`` is a whole file and
    ``where`` its path; the warning names the line (``path:3``) of the first removed character.

    >>> enter_text("A man naps.", "premise")
    'A man naps.'
    """
    if text.isascii():  # ASCII is NFC and holds no format character: the usual case, in C
        return text
    if text.startswith(BOM):
        text = text[1:]
    if not text.isprintable():  # a format character is not printable; most non-ASCII text is
        text = _remove_format(text, where, lines, stacklevel + 1)
    if not unicodedata.is_normalized("NFC", text):
        text = unicodedata.normalize("NFC", text)
    return text


def _remove_format(text: str, where: str, lines: bool, stacklevel: int) -> str:
    """``text`` without its Cf characters; one warning saying where and which."""
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
    """``text`` with each character that has a one-character NFKC form replaced by it (full-width
    letters, mathematical letters, the long s, a no-break space): the same length, so a position
    in the fold is the same position in ``text``. For matching words, never for output.

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


FULL_WIDTH_OFFSET = 0xFEE0
"""Full-width forms U+FF01..U+FF5E are ASCII U+0021..U+007E shifted by this."""


def is_full_width(word: str) -> bool:
    """Whether every letter of ``word`` is a full-width form (U+FF21..U+FF5A).

    >>> is_full_width("Ｈｅ"), is_full_width("Ｈe")
    (True, False)
    """
    letters = [c for c in word if c.isalpha()]
    return bool(letters) and all("\uff21" <= c <= "\uff5a" for c in letters)


def to_full_width(word: str) -> str:
    """``word`` with its printable ASCII characters written as full-width forms.

    >>> to_full_width("She")
    'Ｓｈｅ'
    """
    return "".join(chr(ord(c) + FULL_WIDTH_OFFSET) if "!" <= c <= "~" else c for c in word)
