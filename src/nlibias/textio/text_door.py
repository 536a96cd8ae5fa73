"""The door text enters through: NFC, a leading byte-order mark dropped, format characters
(Unicode Cf) removed with a warning, a control character (Unicode Cc other than a tab or a line
break: NUL, ESC, ...) refused, as it marks a damaged or binary file, not text; compatibility forms
are kept (matching reads them via :func:`fold`).

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

from nlibias.errors import SourceError

BOM = "\ufeff"
_LAYOUT = frozenset("\t\n\r")
CONTROL_FIX = "the file is damaged or not text: restore it, or remove the character"


class FormatCharactersWarning(UserWarning):
    """Invisible format characters (Unicode Cf) were removed from a text."""


def is_plain(text: str) -> bool:
    """Whether ``text`` passes the door unchanged at a glance (printable ASCII): callers skip it.

    >>> is_plain("He is."), is_plain("He\\x00 is."), is_plain("Hé")
    (True, False, False)
    """
    return text.isascii() and text.isprintable()


def control_character(text: str) -> str | None:
    """Why ``text`` is refused at the door: the first control character (not a tab or a line
    break), named with its position; None when it has none.

    >>> control_character("abn\\x00ormal")
    'holds the control character U+0000 (NUL) at character 4'
    >>> control_character("two\\tcells\\n") is None
    True
    """
    at = _first_control(text)
    if at is None:
        return None
    code = ord(text[at])
    name = _CONTROL_NAMES.get(code) or f"{'C0' if code < 0x80 else 'C1'} control"
    return f"holds the control character U+{code:04X} ({name}) at character {at + 1}"


def _first_control(text: str) -> int | None:
    if text.isprintable():
        return None
    return next((i for i, c in enumerate(text) if unicodedata.category(c) == "Cc" and c not in _LAYOUT), None)


_CONTROL_NAMES = {
    0: "NUL",
    0x1B: "ESC",
    0x7F: "DEL",
    0x08: "BACKSPACE",
    0x0C: "FORM FEED",
    0x0B: "VERTICAL TAB",
}


def enter_text(text: str, where: str, *, lines: bool = False, stacklevel: int = 2) -> str:
    """``text`` through the door, the warning naming ``where`` (``lines``: and the line in it); a
    control character refused (a SourceError naming ``where``).

    >>> enter_text("abn\\x00ormal", "x.csv:2 (hypothesis)")
    Traceback (most recent call last):
    nlibias.errors.SourceError: x.csv:2 (hypothesis): holds the control character U+0000 (NUL) at character 4 (the file is damaged or not text: restore it, or remove the character)
    """
    if is_plain(text):
        return text
    if text.startswith(BOM):
        text = text[1:]
    control = control_character(text)
    if control is not None:
        at = _first_control(text) or 0
        where += f":{text.count(chr(10), 0, at) + 1}" if lines else ""
        raise SourceError(where, None, control, fix=CONTROL_FIX)
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
