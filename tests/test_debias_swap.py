"""Gender-swap rules (nlibias.debias.swap) and word lists (nlibias.debias.wordlists)."""

from __future__ import annotations

import json
import re
import unicodedata
import warnings
from importlib import resources
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from nlibias.cli.main import app
from nlibias.debias.swap import Swapper
from nlibias.debias.wordlists import (
    HER_RULE,
    HIS_RULE,
    SwapList,
    paper_map,
    swap_list_named,
    user_list,
    winobias_list,
)
from nlibias.errors import SourceError
from nlibias.textio.text_door import FormatCharactersWarning

WINOBIAS = Swapper(winobias_list())
PAPER = Swapper(paper_map())


def swapped(text: str, swapper: Swapper = WINOBIAS) -> str:
    return swapper.swap(text)[0]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # "her" followed by a noun is a possessive -> "his"
        ("She lost her keys.", "He lost his keys."),
        ("A woman with a baby on her back.", "A man with a baby on his back."),
        # "her" before a determiner, a preposition, punctuation or the end is an object -> "him"
        ("He gave her a book.", "She gave him a book."),
        ("The dog looks at her.", "The dog looks at him."),
        ("They told her that it rained", "They told him that it rained"),
        ("They saw her", "They saw him"),
        # an -ly adverb after "her" marks an object; -ly adjectives and nouns do not
        ("He hugs her tightly.", "She hugs him tightly."),
        ("Her lovely dress and her family.", "His lovely dress and his family."),
        # "his" before a noun -> "her"; standing alone -> "hers"; "hers" -> "his"
        ("His hat is red.", "Her hat is red."),
        ("The book is his.", "The book is hers."),
        ("The book is hers.", "The book is his."),
        ("him and himself", "her and herself"),
    ],
)
def test_her_his_him_rule(text: str, expected: str) -> None:
    assert swapped(text) == expected


def test_case_is_kept() -> None:
    assert swapped("HE said: Woman, the MAN's wife!") == "SHE said: Man, the WOMAN's husband!"
    assert swapped("Mr. Smith met Mrs. Jones.") == "Mrs. Smith met Mr. Jones."


def test_whole_words_only() -> None:
    # "men" inside "women", "mention", "menus"; "he" inside "the", "she", "hero" (hero is listed: heroine)
    text = "The women mention menus; the men eat. Theresa shelved them."
    assert swapped(text) == "The men mention menus; the women eat. Theresa shelved them."
    assert swapped("A 3man team and man2") == "A 3man team and man2"


def test_punctuation_around_words() -> None:
    assert swapped('"She," he said (to the man).') == '"He," she said (to the woman).'
    assert swapped("A man's hat; the boys' toys.") == "A woman's hat; the girls' toys."
    assert swapped("A man-made lake") == "A man-made lake"  # a fixed compound: "man" means people


def test_both_he_and_she_in_one_sentence_swap_once() -> None:
    text, changes = WINOBIAS.swap("He said she was tired, so she drove him home.")
    assert text == "She said he was tired, so he drove her home."
    assert changes == [("he", "she"), ("she", "he"), ("she", "he"), ("him", "her")]


def authors_replace_gender(text: str) -> str:
    """Paper 004's replace_gender (Augmentation_Dataset_Creation.ipynb), re-expressed to check
    our paper-map option against: lower-cases, then replaces map entries one after another,
    skipping an entry whose target word was already produced by an earlier replacement."""
    done = dict.fromkeys(paper_map().mapping, False)
    for word, counterpart in paper_map().mapping.items():
        if not done[counterpart]:
            replaced = re.sub(rf"\b{word}\b", counterpart, text.lower())
            if replaced != text.lower():
                done[word] = True
            text = replaced
    return text.lower()


# Hand-checked rows: the first is the authors' own example with its output in their notebook.
PAPER_ROWS = [
    (
        "the cashier wrinkled her nose and began to query her computerized register system.",
        "the cashier wrinkled his nose and began to query his computerized register system.",
    ),
    ("A man and his son are at the bakery.", "a woman and her son are at the bakery."),
    ("Two ladies talk to a cashier.", "two men talk to a cashier."),
    ("The female teacher helps the boys.", "the male teacher helps the girls."),
    ("A guy hands her a receipt.", "a girl hands his a receipt."),
]


@pytest.mark.parametrize(("text", "expected"), PAPER_ROWS)
def test_paper_map_reproduces_the_authors_output(text: str, expected: str) -> None:
    assert authors_replace_gender(text) == expected
    assert swapped(text, PAPER).lower() == expected


def test_paper_map_differs_from_the_authors_code_where_their_code_swaps_back() -> None:
    # the authors' loop turns "he" into "she", then skips "she" -> "he": both become "she"
    text = "he said she was tired."
    assert authors_replace_gender(text) == "she said she was tired."
    assert swapped(text, PAPER) == "she said he was tired."


def test_paper_map_is_the_19_entries_one_way() -> None:
    mapping = paper_map().mapping
    assert len(mapping) == 19
    assert mapping["her"] == "his" and "him" not in mapping.values()
    assert mapping["lady"] == "man" and mapping["guy"] == "girl"


def test_winobias_list_vendored_with_attribution() -> None:
    folder = resources.files("nlibias") / "resources" / "winobias"
    assert "MIT License" in (folder / "LICENSE.upstream").read_text("utf-8")
    assert "Zhao" in (folder / "README.md").read_text("utf-8")
    mapping = winobias_list().mapping
    # corrections of the source's typos, occupations and "miss" left out, the her rule
    assert mapping["gentleman"] == "lady" and mapping["chairwomen"] == "chairmen"
    assert mapping["god"] == "goddess"
    # corrected before the two-way file is reversed: the misspelt words were keys ("godess" ->
    # "god") and "goddess", "goddesses", "baronesses" were never swapped back
    assert (mapping["goddess"], mapping["goddesses"], mapping["baronesses"]) == ("god", "gods", "barons")
    assert not {"godess", "godesses", "barnoesses"} & set(mapping)
    assert swapped("The goddess and the baronesses met a god.", Swapper(winobias_list())) == (
        "The god and the barons met a goddess."
    )
    assert "tailor" not in mapping and "tailors" not in mapping and "miss" not in mapping
    assert mapping["her"] == HER_RULE and mapping["woman"] == "man" and mapping["men"] == "women"


def test_names_swap_only_where_capitalised(tmp_path: Path) -> None:
    names = tmp_path / "names.tsv"
    names.write_text("John\tMary\nWill\tRose\n")
    from nlibias.debias.wordlists import read_pairs

    swapper = Swapper(winobias_list().with_names(read_pairs(names, both_ways=True)))
    assert swapped("John met Mary; they will see a rose.", swapper) == "Mary met John; they will see a rose."


def test_a_name_in_two_pairs_is_refused_naming_both_lines(tmp_path: Path) -> None:
    from nlibias.debias.wordlists import read_pairs

    # "Mary" would swap to "John" and to "Peter": either column counts
    names = tmp_path / "names.tsv"
    for text in ("John\tMary\nMary\tPeter\n", "John\tMary\nPeter\tMary\n"):
        names.write_text(text)
        with pytest.raises(
            SourceError, match=r"names\.tsv:2: the name 'mary' is in two pairs \(lines 1 and 2\)"
        ):
            read_pairs(names, both_ways=True, names=True)
    # a word list keeps its many-to-one entries ("him" and "his" both become "her")
    names.write_text("him\ther\nhis\ther\n")
    assert read_pairs(names, both_ways=True)["his"] == "her"


def test_user_list_both_ways_and_errors(tmp_path: Path) -> None:
    good = tmp_path / "mine.tsv"
    good.write_text("# my list\nking\tqueen\nher\this\n")
    swaps = user_list(good)
    assert swaps.mapping["queen"] == "king"
    assert swaps.mapping["her"] == HER_RULE and swaps.mapping["his"] == HIS_RULE
    assert swapped("The queen met her dog.", Swapper(swaps)) == "The king met his dog."
    assert swap_list_named(good).name == str(good)
    bad = tmp_path / "bad.tsv"
    bad.write_text("king\tqueen\nprince princess\n")
    with pytest.raises(SourceError) as error:
        user_list(bad)
    assert error.value.line == 2 and "word<TAB>counterpart" in str(error.value)
    twice = tmp_path / "twice.tsv"
    twice.write_text("king\tqueen\nKing\tlady\n")
    with pytest.raises(SourceError, match="listed twice"):
        user_list(twice)


# Words whose swap is its own inverse (no her/his/him: "her" maps to two words)
SYMMETRIC = ["he", "she", "man", "woman", "men", "women", "boy", "girl", "father", "mother", "king", "queen"]
NEUTRAL = ["the", "a", "dog", "runs", "mention", "menus", "theme", "sheet", "human", "manager", "cook"]
PUNCTUATION = [" ", ", ", ". ", "! ", " (", ") ", "'s "]


@st.composite
def sentences(draw: st.DrawFn) -> str:
    words = draw(st.lists(st.sampled_from(SYMMETRIC + NEUTRAL), min_size=1, max_size=12))
    cased = [draw(st.sampled_from([w, w.capitalize(), w.upper()])) for w in words]
    gaps = [draw(st.sampled_from(PUNCTUATION)) for _ in cased]
    return "".join(w + g for w, g in zip(cased, gaps, strict=True))


@settings(deadline=None)  # a shared machine can stall one example past the default 200 ms
@given(sentences())
def test_swapping_twice_gives_the_sentence_back(text: str) -> None:
    once, changes = WINOBIAS.swap(text)
    assert WINOBIAS.swap(once)[0] == text
    # one change per listed word, counted independently with a whole-word regex
    listed = re.findall(
        r"(?<![A-Za-z0-9])(?:" + "|".join(SYMMETRIC) + r")(?![A-Za-z0-9])", text, re.IGNORECASE
    )
    assert len(changes) == len(listed)
    assert WINOBIAS.find(text) == bool(listed)


# -- text that looks like a word and is not one (issue #34) ----------------------------------------


def nfd(text: str) -> str:
    return unicodedata.normalize("NFD", text)


def nfc(text: str) -> str:
    return unicodedata.normalize("NFC", text)


def test_nfd_letters_are_not_split_into_a_word_and_a_mark() -> None:
    # NFD "Hélène" is H e U+0301 l e U+0300 n e: code point by code point "He" was a word (-> "Shélène")
    assert nfd("Hélène") != "Hélène"
    assert swapped(nfd("Hélène met her.")) == "Hélène met him."
    # "HÉ" is not "he", written either way
    assert swapped("HÉ said no.") == "HÉ said no."
    assert swapped(nfd("HÉ said no.")) == "HÉ said no."
    # a mark with no precomposed letter (e + U+0331 macron below) is part of the word too
    assert swapped("he\u0331 said") == "he\u0331 said"
    assert swapped("\u0331he said") == "\u0331he said"


def test_a_zero_width_space_inside_a_word_is_removed_with_a_warning_then_swapped() -> None:
    # before: "h" and "er" were two words, "He" swapped alone: a mixed-gender copy
    with pytest.warns(UserWarning, match=r"U\+200B ZERO WIDTH SPACE"):
        assert swapped("He thanked h\u200ber.") == "She thanked him."
    for invisible in ("\u200c", "\u200d", "\u00ad", "\u200e", "\u202e", "\u2066", "\u2060", "\ufeff"):
        with pytest.warns(UserWarning, match="format character"):
            assert (
                swapped(f"The m{invisible}an said h{invisible}e was late.") == "The woman said she was late."
            )


def test_the_word_after_her_may_start_with_a_letter_outside_ascii() -> None:
    # "élan" is a word: "her" before it is a possessive (before: no ASCII word followed, read as "him")
    assert swapped("He admired her élan.") == "She admired his élan."
    assert swapped("He admired her Ölgemälde.") == "She admired his Ölgemälde."


def test_an_nfd_word_list_matches_nfc_text_and_the_other_way(tmp_path: Path) -> None:
    words = tmp_path / "fr.tsv"
    words.write_text(nfd("garçon\tfille\nhéros\théroïne\n"), encoding="utf-8")
    swapper = Swapper(user_list(words))
    assert swapped("Le garçon et le héros.", swapper) == "Le fille et le héroïne."
    assert swapped(nfd("Le garçon et le HÉROS."), swapper) == "Le fille et le HÉROÏNE."


def test_non_ascii_capitals_keep_their_case(tmp_path: Path) -> None:
    words = tmp_path / "es.tsv"
    words.write_text("él\tella\n", encoding="utf-8")
    swapper = Swapper(user_list(words))
    assert swapped("Él llegó; ÉL sabe; él no.", swapper) == "Ella llegó; ELLA sabe; ella no."
    assert swapped("Ella llegó; ELLA sabe.", swapper) == "Él llegó; ÉL sabe."


def test_the_turkish_dotted_capital_is_a_capital_i_and_the_dotless_i_another_letter() -> None:
    # issue #48: "HİS" is "his" typed on a Turkish keyboard (its capital of "i"); Python lower-cases
    # "İ" to "i" + U+0307, one letter longer, so it is matched as "I". "ı" is another letter.
    assert swapped("HİS hat") == "HER hat" and swapped("HİM") == "HER" and swapped("hİm") == "her"
    assert swapped("hıs hat") == "hıs hat"
    assert swapped("HIS hat") == "HER hat"


def test_the_augment_command_swaps_a_word_split_by_a_format_character_and_a_dotted_capital(
    tmp_path: Path,
) -> None:
    train = tmp_path / "train.jsonl"
    rows = [("The nurse gave h\u200ber book away.", "The nurse gave his book away."),
            ("The nurse took HİS coat.", "The nurse took HER coat.")]  # fmt: skip
    train.write_text(
        "".join(
            json.dumps({"premise": p, "hypothesis": "A nurse.", "label": "neutral"}) + "\n" for p, _ in rows
        )
    )
    result = CliRunner().invoke(
        app, ["augment", "gender-swap", "--train", str(train), "--out", str(tmp_path / "a")]
    )
    assert result.exit_code == 0, result.output
    written = [json.loads(line) for line in (tmp_path / "a" / "train.jsonl").read_text().splitlines()]
    assert [r["premise"] for r in written if r["swapped"]] == [swapped for _, swapped in rows]


@pytest.mark.parametrize("char", ["\u200b", "\u2060", "\ufeff"])
def test_a_word_list_entry_holding_a_zero_width_character_is_refused(tmp_path: Path, char: str) -> None:
    words = tmp_path / "words.tsv"
    words.write_text(f"\ufeffking\tqueen\nh{char}er\this\n", encoding="utf-8")  # a leading BOM is fine
    with pytest.raises(
        SourceError,
        match=re.escape(f"{'h' + char + 'er'!r} holds the invisible U+{ord(char):04X}"),
    ) as caught:
        user_list(words)
    assert caught.value.line == 2
    train = tmp_path / "train.jsonl"
    train.write_text(
        json.dumps({"premise": "The nurse left.", "hypothesis": "A nurse.", "label": "neutral"}) + "\n"
    )
    result = CliRunner().invoke(
        app,
        [
            "augment",
            "gender-swap",
            "--train",
            str(train),
            "--word-list",
            str(words),
            "--out",
            str(tmp_path / "a"),
        ],
    )
    assert result.exit_code == 2 and "holds the invisible" in " ".join(result.output.split())


def test_a_name_with_a_dotted_capital_swaps_whole(tmp_path: Path) -> None:
    from nlibias.debias.wordlists import read_pairs

    # "İsmail" lower-cases one letter longer ("i" + U+0307): the swap still replaces the whole name
    names = tmp_path / "names.tsv"
    names.write_text("İsmail\tAyşe\n", encoding="utf-8")
    swapper = Swapper(winobias_list().with_names(read_pairs(names, both_ways=True)))
    assert swapped("İsmail met Ayşe; İsmail's dog.", swapper) == "Ayşe met İsmail; Ayşe's dog."


def test_full_width_letters_are_matched_and_written_full_width() -> None:
    # full-width forms are matched on their NFKC fold; the counterpart is written full width
    assert swapped("ｈｅ ｓａｉｄ ｓｈｅ") == "ｓｈｅ ｓａｉｄ ｈｅ"
    assert swapped("ＨＥＲ ｂｏｏｋ, Ｈｅ ｓａｉｄ") == "ＨＩＳ ｂｏｏｋ, Ｓｈｅ ｓａｉｄ"
    # a word with full-width and plain letters mixed is matched too, the counterpart written plain
    assert swapped("ｈe said") == "she said"


def test_a_bom_at_the_start_of_a_names_file_never_reaches_the_text(tmp_path: Path) -> None:
    from nlibias.debias.wordlists import read_pairs

    names = tmp_path / "names.tsv"
    names.write_bytes("\ufeffJohn\tMary\n".encode())
    mapping = read_pairs(names, both_ways=True)
    assert mapping == {"john": "mary", "mary": "john"}
    swapper = Swapper(winobias_list().with_names(mapping))
    out = swapped("Mary met John.", swapper)
    assert out == "John met Mary." and "\ufeff" not in out


def test_a_bom_inside_a_names_file_is_removed_with_a_warning_naming_the_line(tmp_path: Path) -> None:
    from nlibias.debias.wordlists import read_pairs

    names = tmp_path / "names.tsv"
    # two files pasted together: the second one's BOM starts line 2
    names.write_text("John\tMary\n\ufeffWill\tRose\n", encoding="utf-8")
    with pytest.warns(UserWarning, match=r"names\.tsv:2: .*U\+FEFF"):
        mapping = read_pairs(names, both_ways=True)
    assert mapping["will"] == "rose" and mapping["rose"] == "will"


# -- properties over generated Unicode -------------------------------------------------------------

WIDE = {chr(c): chr(c + 0xFEE0) for c in range(0x21, 0x7F)}
SPACES = [" ", "  ", "\u00a0", "\u3000", "\t"]


def full_width(word: str) -> str:
    return "".join(WIDE.get(c, c) for c in word)


def pattern(word: str) -> str:
    """The casing pattern: all capitals, first capital, lower (one-letter words: capital or not)."""
    letters = unicodedata.normalize("NFKC", word)
    if letters.isupper() and len(letters) > 1:
        return "upper"
    return "title" if letters[:1].isupper() else "lower"


@st.composite
def list_word_texts(draw: st.DrawFn) -> tuple[list[str], list[str]]:
    words = draw(st.lists(st.sampled_from(SYMMETRIC), min_size=1, max_size=10))
    cased = [draw(st.sampled_from([w, w.capitalize(), w.upper()])) for w in words]
    shaped = [full_width(w) if draw(st.booleans()) else w for w in cased]
    gaps = [draw(st.sampled_from(SPACES)) for _ in shaped]
    return shaped, gaps


@settings(deadline=None)
@given(list_word_texts())
def test_swapping_list_words_twice_gives_them_back_and_keeps_each_casing(
    parts: tuple[list[str], list[str]],
) -> None:
    words, gaps = parts
    text = "".join(w + g for w, g in zip(words, gaps, strict=True))
    once, changes = WINOBIAS.swap(text)
    assert len(changes) == len(words)
    assert WINOBIAS.swap(once)[0] == text
    out_words = re.split("|".join(map(re.escape, SPACES[1:] + SPACES[:1])), once)[: len(words)]
    assert [pattern(w) for w in out_words] == [pattern(w) for w in words]
    assert [w == full_width(w) for w in out_words] == [w == full_width(w) for w in words]


LISTED = frozenset(k.rstrip(".") for k in winobias_list().mapping if "'" not in k)  # "mr." matches "Mr"


@settings(deadline=None)
@given(
    st.text(alphabet=st.characters(blacklist_categories=("Cs", "Cc")), max_size=40)
)  # text the door lets in
def test_swap_never_changes_a_text_without_a_list_word(text: str) -> None:
    from nlibias.textio.text_door import enter_text

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        clean = enter_text(text, "generated")
        # an independent reading of the words: the whole text NFKC-folded, runs of letters
        words = re.findall(r"[^\W\d_]+", unicodedata.normalize("NFKC", clean).lower())
        if LISTED.isdisjoint(words) and "'" not in clean:
            assert WINOBIAS.swap(clean) == (clean, [])


def test_a_text_is_warned_about_once_per_swap() -> None:
    with pytest.warns(FormatCharactersWarning) as caught:
        assert WINOBIAS.swap("A dog\u200b runs.") == ("A dog runs.", [])
    assert len(caught) == 1


def test_changes_are_named_in_plain_lower_case() -> None:
    # a full-width swap is reported as the list's words; a word mapped to itself is no change
    assert WINOBIAS.swap("ＨＥ ｒａｎ") == ("ＳＨＥ ｒａｎ", [("he", "she")])
    same = Swapper(SwapList("t", {"nurse": "nurse", "he": "she"}))
    assert same.swap("ｎｕｒｓｅ ｈｅ") == ("ｎｕｒｓｅ ｓｈｅ", [("he", "she")])


def test_a_name_paired_with_itself_is_refused_and_a_file_of_another_kind_is_named(tmp_path: Path) -> None:
    from nlibias.debias.wordlists import read_pairs

    names = tmp_path / "names.tsv"
    names.write_text("John\tMary\nAnna\tanna\n")  # one name, told apart only by its case
    with pytest.raises(SourceError, match=r"names\.tsv:2: the name 'anna' is paired with itself"):
        read_pairs(names, both_ways=True, names=True)
    # a word list may keep a word as it is ("her" with a line of its own is never reversed)
    assert read_pairs(names, both_ways=True)["anna"] == "anna"
    names.write_text('{"premise": "He\\tShe", "label": 1}\n')  # JSON lines, a tab in a value
    with pytest.raises(
        SourceError, match=r"names\.tsv:1: the file holds JSON \(an object\), not one 'name<TAB>name'"
    ):
        read_pairs(names, both_ways=True, names=True)
