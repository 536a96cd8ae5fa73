"""The text door (nlibias.textio.text_door): NFC, a leading BOM dropped, format characters removed
with a warning that says where, control characters refused; the fold that word matching reads."""

from __future__ import annotations

import unicodedata
import warnings
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from nlibias.errors import SourceError
from nlibias.textio.text_door import (
    FormatCharactersWarning,
    enter_text,
    fold,
    is_full_width,
    to_full_width,
    word_key,
)


def quietly(text: str, where: str = "t") -> str:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FormatCharactersWarning)
        return enter_text(text, where)


def test_nfd_becomes_nfc_without_a_warning() -> None:
    nfd = unicodedata.normalize("NFD", "Hélène")  # 8 code points: H e U+0301 l e U+0300 n e
    assert len(nfd) == 8
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert enter_text(nfd, "names.tsv:1") == "Hélène"
        assert len(enter_text(nfd, "names.tsv:1")) == 6


def test_a_leading_bom_is_dropped_silently() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert enter_text("\ufeffJohn\tMary", "names.tsv") == "John\tMary"


@pytest.mark.parametrize(
    ("char", "name"),
    [
        ("\u200b", "ZERO WIDTH SPACE"),
        ("\u200c", "ZERO WIDTH NON-JOINER"),
        ("\u200d", "ZERO WIDTH JOINER"),
        ("\u00ad", "SOFT HYPHEN"),
        ("\u2060", "WORD JOINER"),
        ("\u200e", "LEFT-TO-RIGHT MARK"),
        ("\u200f", "RIGHT-TO-LEFT MARK"),
        ("\u202a", "LEFT-TO-RIGHT EMBEDDING"),
        ("\u202e", "RIGHT-TO-LEFT OVERRIDE"),
        ("\u202c", "POP DIRECTIONAL FORMATTING"),
        ("\u2066", "LEFT-TO-RIGHT ISOLATE"),
        ("\u2069", "POP DIRECTIONAL ISOLATE"),
        ("\ufeff", "ZERO WIDTH NO-BREAK SPACE"),  # a BOM inside the text
    ],
)
def test_format_characters_are_removed_with_a_warning_saying_where(char: str, name: str) -> None:
    with pytest.warns(FormatCharactersWarning) as caught:
        assert enter_text(f"h{char}er", "train.jsonl:5 (premise)") == "her"
    message = str(caught[0].message)
    assert message.startswith("train.jsonl:5 (premise): removed 1 invisible format character")
    assert f"U+{ord(char):04X} {name}" in message


def test_the_warning_counts_each_character_once_per_text() -> None:
    # two zero-width spaces and a soft hyphen: one warning, "x2" after the space
    with pytest.warns(FormatCharactersWarning) as caught:
        assert enter_text("a\u200bb\u200bc\u00add", "premise") == "abcd"
    assert len(caught) == 1
    assert "removed 3 invisible format characters (U+200B ZERO WIDTH SPACE x2, U+00AD SOFT HYPHEN)" in str(
        caught[0].message
    )


def test_a_whole_file_names_the_line_of_the_first_removed_character() -> None:
    # line 3 holds the first one: two newlines before it
    text = "\ufeffJohn\tMary\nWill\tRose\nAnn\u200b\tBob\n"
    with pytest.warns(FormatCharactersWarning, match=r"^names\.tsv:3: removed 1 "):
        assert enter_text(text, "names.tsv", lines=True) == "John\tMary\nWill\tRose\nAnn\tBob\n"


def test_a_mark_after_a_removed_character_composes() -> None:
    # e, ZERO WIDTH SPACE, U+0301: removing the space first lets NFC compose "é"
    with pytest.warns(FormatCharactersWarning):
        assert enter_text("e\u200b\u0301", "t") == "\u00e9"


def test_compatibility_forms_stay_in_the_text_and_are_folded_for_matching() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert enter_text("ｈｅｒ ﬁne x²", "t") == "ｈｅｒ ﬁne x²"  # kept: NFKC would change "x²"
    assert fold("ＨＥＲ ｂｏｏｋ") == "HER book"
    assert fold("ﬁne") == "ﬁne"  # a ligature folds to two letters: not folded, positions kept
    assert word_key("ＨＥＲ") == "her" and word_key("Gar\u00e7on") == word_key("Garc\u0327on") == "garçon"
    assert word_key("HÉ") == "hé" != "he"
    assert is_full_width("Ｈｅ") and not is_full_width("Ｈe") and not is_full_width("..")
    assert to_full_width("She!") == "Ｓｈｅ！"


def test_ascii_is_returned_as_it_is() -> None:
    text = "A man\tnaps.\r\n"
    assert enter_text(text, "t") is text
    assert enter_text("A man naps.", "t") == "A man naps."


@pytest.mark.parametrize("char", ["\x00", "\x1b", "\x7f", "\x85", "\x0b"])
def test_a_control_character_is_refused_naming_where(char: str) -> None:
    # a NUL in a cell is a damaged or binary file, not text (ASCII ones too: no fast path past it)
    with pytest.raises(
        SourceError, match=rf"x\.csv:2 \(premise\): holds the control character U\+{ord(char):04X}"
    ):
        enter_text(f"A man{char} naps.", "x.csv:2 (premise)")


def test_a_control_character_in_a_samples_file_or_a_python_sample_is_refused(tmp_path: Path) -> None:
    import json

    from nlibias.io.samples import read_samples
    from nlibias.schema import Sample

    record = {
        "id": "a", "domain": "gender", "subtopic": "t", "premise": "The nurse\u0000 is here.",
        "hypothesis": "She works.", "gold": "neutral", "stereotype": None, "pair_key": None,
    }  # fmt: skip
    path = tmp_path / "samples.jsonl"
    path.write_text(json.dumps(record) + "\n", encoding="utf-8")
    with pytest.raises(
        SourceError, match=r"samples\.jsonl:1 \(premise\): holds the control character U\+0000"
    ):
        read_samples(path)
    with pytest.raises(SourceError, match=r"sample 'x' hypothesis: holds the control character U\+001B"):
        Sample(
            id="x",
            source="custom",
            domain="d",
            subtopic="t",
            premise="P.",
            hypothesis="H\x1b.",
            gold="neutral",
        )


def test_samples_files_pass_their_texts_through_the_door(tmp_path: Path) -> None:
    import json

    from nlibias.io.samples import read_samples

    record = {
        "id": "a", "domain": "gender", "subtopic": "t", "premise": "The nurse thanked h\u200ber.",
        "hypothesis": unicodedata.normalize("NFD", "Hélène works."), "gold": "neutral",
        "stereotype": None, "pair_key": None,
    }  # fmt: skip
    path = tmp_path / "samples.jsonl"
    path.write_text(json.dumps(record) + "\n", encoding="utf-8")
    with pytest.warns(FormatCharactersWarning, match=r"samples\.jsonl:1 \(premise\): removed 1 "):
        (sample,) = read_samples(path)
    assert sample.premise == "The nurse thanked her."
    assert sample.hypothesis == "Hélène works."


def test_a_sample_built_in_python_passes_through_the_door() -> None:
    from nlibias.schema import Sample

    with pytest.warns(FormatCharactersWarning, match=r"sample 'x' premise: removed 1 "):
        sample = Sample(
            id="x", source="custom", domain="d", subtopic="t", premise="h\u200ber book.",
            hypothesis=unicodedata.normalize("NFD", "é."), gold="neutral",
        )  # fmt: skip
    assert sample.premise == "her book." and sample.hypothesis == "\u00e9."


def test_training_rows_pass_their_texts_through_the_door(tmp_path: Path) -> None:
    from nlibias.debias.training_rows import iter_training_rows

    path = tmp_path / "train.tsv"
    path.write_text("premise\thypothesis\tlabel\nA man\u00ad naps.\tHe sleeps.\te\n", encoding="utf-8")
    with pytest.warns(FormatCharactersWarning, match=r"train\.tsv:2 \(premise\): removed 1 "):
        (row,) = iter_training_rows(path)
    assert row.premise == "A man naps."


# -- properties over generated Unicode -------------------------------------------------------------

ANY_TEXT = st.text(
    alphabet=st.one_of(st.characters(blacklist_categories=("Cs", "Cc")), st.sampled_from("\t\n\r")),
    max_size=60,
)
FORMAT = st.sampled_from(
    ["\u200b", "\u200c", "\u200d", "\u00ad", "\u2060", "\u200e", "\u202e", "\u2066", "\ufeff"]
)


@settings(deadline=None)
@given(ANY_TEXT)
def test_the_door_is_idempotent_and_its_output_is_nfc_without_format_characters(text: str) -> None:
    once = quietly(text)
    assert unicodedata.is_normalized("NFC", once)
    assert not any(unicodedata.category(c) == "Cf" for c in once)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # clean text passes without a warning, unchanged
        assert enter_text(once, "t") == once


@settings(deadline=None)
@given(ANY_TEXT, FORMAT, st.data())
def test_a_format_character_anywhere_is_removed_and_warned_about(
    text: str, char: str, data: st.DataObject
) -> None:
    clean = quietly(text)
    at = data.draw(st.integers(0, len(clean)))
    dirty = clean[:at] + char + clean[at:]
    if at == 0 and char == "\ufeff":
        assert enter_text(dirty, "t") == clean  # a leading BOM: dropped, no warning
        return
    with pytest.warns(FormatCharactersWarning):
        out = enter_text(dirty, "t")
    # removing it may let a mark compose with the letter before it: NFC of the text without it
    assert out == unicodedata.normalize("NFC", clean[:at] + clean[at:])


@settings(deadline=None)
@given(ANY_TEXT)
def test_the_fold_keeps_length_and_is_idempotent(text: str) -> None:
    folded = fold(text)
    assert len(folded) == len(text) and fold(folded) == folded


# -- the command line: the warning names the file, the line and the field -------------------------


@pytest.mark.parametrize(
    "name",
    [
        "augment/train-zero-width-space",
        "augment/train-bidi-override",
        "augment/names-bom-inside",
        "augment/word-list-soft-hyphen",
    ],
)
def test_augment_warns_naming_where_and_writes_no_format_character(name: str, tmp_path: Path) -> None:
    from bad_input_cases_text import text_cases
    from bad_input_corpus import invoke

    (case,) = [c for c in text_cases() if c.name == name]
    args, named = case.build(tmp_path, None)  # type: ignore[arg-type]  # the augment cases use no base
    code, output, exception = invoke(args)
    assert code == 0 and exception is None, output
    assert f"warning: {named}" in " ".join(output.split())
    written = (tmp_path / "aug" / "train.jsonl").read_text(encoding="utf-8")
    assert not any(unicodedata.category(c) == "Cf" for c in written)
    assert '"swapped": true' in written  # the nurse's row was swapped whole


def test_a_names_file_with_a_bom_swaps_names_and_writes_no_bom(tmp_path: Path) -> None:
    from bad_input_corpus import invoke

    train = tmp_path / "train.jsonl"
    train.write_text('{"premise": "John met Mary.", "hypothesis": "Two people met.", "label": "neutral"}\n')
    names = tmp_path / "names.tsv"
    names.write_bytes("\ufeffJohn\tMary\n".encode())
    code, output, _ = invoke(
        ["augment", "gender-swap", "--train", str(train), "--out", str(tmp_path / "aug"), "--select", "all",
         "--names", str(names), "--json"]
    )  # fmt: skip
    assert code == 0, output
    lines = (tmp_path / "aug" / "train.jsonl").read_text(encoding="utf-8").splitlines()
    assert (
        '"premise": "Mary met John."' in lines[1] and "\ufeff" not in lines[1] and "\\ufeff" not in lines[1]
    )
