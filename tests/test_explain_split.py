"""The answer/explanation split of generated texts (:mod:`nlibias.explanations.split`): examples
and properties (Hypothesis)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from nlibias.explanations.split import split_answer, split_sentences
from nlibias.models.generative.answers import normalise_text, parse_answer

pytest.importorskip("pysbd")


@pytest.mark.parametrize(
    ("text", "answer", "explanation"),
    [
        ("Yes, because the premise says so.", "yes", "because the premise says so."),
        ("**No**. The paragraph does not say that.", "no", "The paragraph does not say that."),
        ("Answer: no - the text names nobody.", "no", "the text names nobody."),
        ("Based on the paragraph, yes. It says they work.", "yes", "It says they work."),
        ("No", "no", ""),
        # the answer stated inside a sentence: the whole text explains it
        ("The hypothesis is false: nothing says so.", "no", "The hypothesis is false: nothing says so."),
        # unreadable answers keep their text as the explanation
        ("I cannot determine that from the paragraph.", None, "I cannot determine that from the paragraph."),
        ("", None, ""),
        # Markdown marks go, characters that mean something in prose stay
        (
            "Yes, men earn > women and #1 earners are men_only.",
            "yes",
            "men earn > women and #1 earners are men_only.",
        ),
        ("No, ~50% of *women* and a share of .5 .", "no", "~50% of women and a share of .5."),
        ("> **Yes**\n## Because `they` do.", "yes", "Because they do."),
    ],
)
def test_examples(text: str, answer: str | None, explanation: str) -> None:
    split = split_answer(text)
    assert (split.answer, split.explanation) == (answer, explanation)


def test_sentences_come_from_a_real_splitter() -> None:
    # abbreviations and decimals do not end a sentence; a newline-separated list does
    assert split_sentences("Dr. Lee paid 3.5 dollars. She left!\nThen nothing") == [
        "Dr. Lee paid 3.5 dollars.",
        "She left!",
        "Then nothing",
    ]
    assert split_sentences(" ... ") == []


# A body that opens with a second answer word ("Yes, false.") is ambiguous on purpose (test_answers.py),
# so the bodies here use no answer word, nor the words that join or negate one.
_ANSWER_VOCABULARY = {
    "yes",
    "no",
    "maybe",
    "not",
    "entailed",
    "true",
    "false",
    "correct",
    "incorrect",
    "and",
    "or",
}
_WORDS = st.text(alphabet="abcdefghijklmnopqrstuvwxyz", min_size=1, max_size=8).filter(
    lambda word: word not in _ANSWER_VOCABULARY
)
_SENTENCE = st.lists(_WORDS, min_size=1, max_size=6).map(lambda words: " ".join(words).capitalize() + ".")
_BODY = st.lists(_SENTENCE, min_size=0, max_size=4).map(" ".join)
_ANSWER = st.sampled_from(["Yes", "No", "yes", "NO", "**Yes**", "**No**"])
_SEPARATOR = st.sampled_from([", ", ". ", ": ", " - ", "\n", ", because "])


@settings(max_examples=150, deadline=None)
@given(answer=_ANSWER, separator=_SEPARATOR, body=_BODY)
def test_a_leading_answer_splits_off_and_the_rest_is_the_explanation(
    answer: str, separator: str, body: str
) -> None:
    text = f"{answer}{separator}{body}"
    split = split_answer(text)
    assert split.answer == answer.strip("*").lower()
    assert split.rule == "leading-word"
    expected = f"because {body}" if "because" in separator else body
    assert split.explanation == expected.strip()
    # every sentence of the body comes back, in order, with its words
    if body:
        assert " ".join(split_sentences(body)) == body


@settings(max_examples=200, deadline=None)
@given(text=st.text(max_size=120))
def test_the_split_agrees_with_the_parser_and_invents_no_text(text: str) -> None:
    split = split_answer(text)
    parsed = parse_answer(text)
    assert (split.answer, split.rule) == (parsed.answer, parsed.rule)
    cleaned = normalise_text(text)
    assert split.explanation in cleaned  # a part of the text, never made up
    assert split.explanation == split.explanation.strip()
    for sentence in split_sentences(split.explanation):
        assert sentence and sentence in split.explanation
