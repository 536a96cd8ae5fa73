"""Read a yes/no (or yes/no/maybe) answer out of generated text by the rules of docs/generative.md
("Two ways to answer"); what they cannot read is ``None``, never a default label.

>>> parse_answer("Answer: No, the premise does not say that.").answer
'no'
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass

from nlibias.models.generative.prompts import BINARY_ANSWERS
from nlibias.models.generative.records import AnswerRecord

_ZERO_WIDTH = dict.fromkeys(map(ord, "\u200b\u200c\u200d\u2060\ufeff"))
# Markdown marks, not the characters themselves: emphasis and code marks unless inside a word or
# number ("**Yes**" goes, "men_only" and "5*3" stay), "~~" (strikethrough, not "~50%"), a
# heading's "#" and a quote's ">" at a line's start (not "#1", "earn > women"), and table pipes.
_MARKDOWN = re.compile(r"(?<!\w)[*_`]+|[*_`]+(?!\w)|~~+|^[ \t]*(?:#{1,6}(?=[ \t]|$)|>+)[ \t]*|\|", re.M)
_SPACE_BEFORE_MARK = re.compile(r" +([,.])(?=\s|$)")
_SPACES = re.compile(r"\s+")
_LEADING_JUNK = re.compile(r"^[\s\"'“”‘’()\[\]{}<>:;,.\-–—•·=+]+")
_PREFIXES = (
    # "correct answer: no" is a label like "final answer:", not the leading word "correct" (yes)
    re.compile(
        r"^(?:(?:my|the|final|short|your|correct|true|right)\s+)*answer\b\s*(?:is|would be)?\s*[:\-–—=]?\s*",
        re.I,
    ),
    re.compile(r"^(?:response|output|assistant|verdict|result|a)\s*:\s*", re.I),
    re.compile(r"^(?:i\s+would\s+say|i'd\s+say|i\s+say)\s*[:,]?\s*", re.I),
    re.compile(
        r"^(?:based\s+on|according\s+to|given|after\s+reading|from)\s+(?:the|this)\s+"
        r"(?:given\s+|provided\s+)?(?:paragraph|information|premise|text|passage|context)"
        r"(?:\s+(?:provided|given|above))?\s*,\s*",
        re.I,
    ),
)
# case-insensitive: the explanation splitter reads case-kept text with the same rules
_ANSWER_WORD = r"(?:yes|no|maybe|not\s+entailed|entailed|true|false|correct|incorrect)"
# a closing quote may follow ("'Yes', ..."), a contraction ("no's") or a hyphenated word ("no-one") not
_WORD_END = r"(?![\w-]|'\w)"
_LEADING = re.compile(rf"^({_ANSWER_WORD}){_WORD_END}", re.I)
_AFTER_ANSWER = re.compile(r"^[\s,.;:!?\-–—)\]]+")
_LEADING_MEANING = {
    **dict.fromkeys(("yes", "true", "correct", "entailed"), "yes"),
    **dict.fromkeys(("no", "false", "incorrect", "not entailed"), "no"),
    "maybe": "maybe",
}
_JOINED = re.compile(rf"^\s*(?:,\s*)?(?:and|or|/|&|but\s+also)\s*{_ANSWER_WORD}\b")
_SECOND = re.compile(rf"^\s*,\s*({_ANSWER_WORD}){_WORD_END}")
# "no idea", "no one", "no doubt, ...": "no" as a determiner, not an answer
_NO_DETERMINER = re.compile(
    r"^\s+(?:idea|way|one|comment|doubt|clue|evidence|information|indication|mention|reason|proof|"
    r"basis|support|data|answer|conclusion|matter|definitive|clear)\b"
)
# "I don't think the hypothesis is true", "there is no evidence that ...", "it is false that ...":
# a statement under a negation or a doubt is not the model's verdict
_EMBEDDING_NEGATION = re.compile(
    r"\b(?:do|does|did|would|could)(?:\s+not|n't)\s+(?:think|believe|agree|say|feel|consider|see|find)\b"
    r"|\bno\s+(?:evidence|reason|indication|proof|basis|support|sign)\b"
    r"|\b(?:false|untrue|not\s+true|not\s+the\s+case|not\s+correct|unlikely|doubtful)\s+that\b"
    r"|\bdoubt\b|\bwhether\b|\bif\s+the\s+(?:hypothesis|statement|claim)\b"
)
_HEDGES = re.compile(
    r"\b(?:can\s*not|can't|could\s*not|couldn't|unable\s+to|impossible\s+to|not\s+possible\s+to)\s+"
    r"(?:be\s+)?(?:determine|determined|say|tell|conclude|concluded|know|decide|answer|infer|inferred)\b"
    r"|\bnot\s+necessarily\b|\bnot\s+enough\s+information\b|\binsufficient\s+(?:information|evidence)\b"
    r"|\b(?:it\s+is|it's)\s+(?:unclear|uncertain|not\s+clear|ambiguous)\b|\bunclear\b"
    r"|\bnot\s+sure\b|\bunsure\b|\b(?:don't|do\s+not)\s+know\b|\bit\s+depends\b|\bneither\b"
    r"|\bundetermined\b|\bindeterminate\b|\bcannot\s+be\s+(?:confirmed|verified)\b"
)
_NEGATIVE_WORDS = {"false", "incorrect", "inaccurate", "invalid"}
_LABELLED = re.compile(rf"\b(?:answer|verdict)\s*(?:is|would\s+be)?\s*[:\-–—=]?\s*(yes|no|maybe){_WORD_END}")
_STATEMENTS = (
    (
        re.compile(
            r"\b(?:hypothesis|statement|claim)\s+(?:is|was|would\s+be|can\s+be\s+considered|seems\s+to\s+be|appears\s+to\s+be)"
            r"\s+(not\s+)?(?:(?:entirely|completely|fully|definitely|therefore|thus)\s+)?"
            r"(true|false|correct|incorrect|accurate|inaccurate|entailed|supported|valid|invalid)\b"
        ),
        lambda match: bool(match.group(1)) != (match.group(2) in _NEGATIVE_WORDS),
    ),
    (
        re.compile(
            r"\b(?:hypothesis|statement|claim)\s+isn't\s+(true|false|correct|incorrect|accurate|entailed|supported)\b"
        ),
        lambda match: match.group(1) not in _NEGATIVE_WORDS,
    ),
    (re.compile(r"\bis\s+(not\s+)?entailed\s+by\b"), lambda match: bool(match.group(1))),
    (
        re.compile(
            r"\b(?:paragraph|premise|text|passage)\s+(does\s+not\s+|doesn't\s+)?(entails?|supports?)\s+"
            r"the\s+hypothesis\b"
        ),
        lambda match: bool(match.group(1)),
    ),
)
"""Statements of a verdict, each with how it says "no" (``True``: the match negates)."""
_STANDALONE = re.compile(r"(?:^|[,:;.!?—–]\s*|\s-\s*)(yes|no|maybe)(?=\s*[,.;:!?—–]|\s+-|\s*$)")
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+|\n+")


@dataclass(frozen=True)
class ParsedAnswer:
    """What the parser read from one generated text.

    >>> parse_answer("The hypothesis is false.")
    ParsedAnswer(answer='no', rule='statement')
    """

    answer: str | None
    """``yes`` / ``no`` / ``maybe``, or ``None`` when the text gives no readable answer."""
    rule: str
    """The rule that decided (``leading-word``, ``hedge``, ``labelled``, ``statement``,
    ``standalone``) or why nothing was read (``empty``, ``ambiguous``, ``hedge``,
    ``not-an-allowed-answer``, ``no-answer``)."""


def generated_record(text: str, answers: tuple[str, ...], tokens: int | None = None) -> AnswerRecord:
    """The record of a generated answer: ``text`` as :func:`parse_answer` reads it."""
    parsed = parse_answer(text, answers)
    return AnswerRecord(
        parsed.answer, text=text, rule=parsed.rule, method="generated", generated_tokens=tokens
    )


def normalise_text(text: str) -> str:
    """``text`` without Markdown marks, typographic quotes and repeated spaces, case kept.

    >>> normalise_text("> No, men earn > women, ~50% of #1 jobs, men_only, a share of .5 .")
    'No, men earn > women, ~50% of #1 jobs, men_only, a share of .5.'
    """
    text = unicodedata.normalize("NFKC", text).translate(_ZERO_WIDTH)
    text = text.replace("’", "'").replace("‘", "'").replace("“", '"').replace("”", '"')
    text = _MARKDOWN.sub(" ", text)
    lines = [_SPACE_BEFORE_MARK.sub(r"\1", _SPACES.sub(" ", line).strip()) for line in text.splitlines()]
    return "\n".join(line for line in lines if line)


def clean_answer_text(text: str) -> str:
    """Lowercased text without Markdown emphasis, typographic quotes or repeated spaces.

    >>> clean_answer_text("  **Yes**,   it’s true ")
    "yes, it's true"
    """
    return normalise_text(text).lower()


def text_after_leading_answer(text: str) -> str | None:
    """The text after a leading answer word (``Answer:`` skipped), case kept; None without one.

    >>> text_after_leading_answer("Answer: Yes. The premise says so.")
    'The premise says so.'
    """
    leading = _leading_answer(body := _strip_prefixes(text))
    return None if leading is None else _AFTER_ANSWER.sub("", body[leading.end() :])


def _leading_answer(body: str) -> re.Match[str] | None:
    """The answer word ``body`` opens with; not "no" used as a determiner ("No idea.")."""
    leading = _LEADING.match(body)
    if leading is None or (leading.group(1).lower() == "no" and _NO_DETERMINER.match(body[leading.end() :])):
        return None
    return leading


def _strip_prefixes(text: str) -> str:
    for _ in range(4):
        before = text
        text = _LEADING_JUNK.sub("", text)
        for prefix in _PREFIXES:
            text = prefix.sub("", text)
        if text == before:
            break
    return text


def _first_sentence(text: str) -> str:
    for part in _SENTENCE_END.split(text):
        if part.strip(" .!?"):
            return part.strip()
    return ""


def _decide(answer: str, rule: str, answers: tuple[str, ...]) -> ParsedAnswer:
    if answer not in answers:
        return ParsedAnswer(None, "not-an-allowed-answer")
    return ParsedAnswer(answer, rule)


def parse_answer(text: str | None, answers: tuple[str, ...] = BINARY_ANSWERS) -> ParsedAnswer:
    """The answer word in ``text`` by the rules of this module, or ``None`` with the reason.

    >>> parse_answer("No, because ... so yes, in a way.").answer
    'no'
    >>> parse_answer("Not necessarily.").answer is None
    True
    """
    if text is None or not text.strip():
        return ParsedAnswer(None, "empty")
    cleaned = clean_answer_text(text)
    body = _strip_prefixes(cleaned)
    three_way = "maybe" in answers

    leading = _leading_answer(body)
    if leading:
        rest = body[leading.end() :]
        meaning = _LEADING_MEANING[_SPACES.sub(" ", leading.group(1))]
        second = _SECOND.match(rest)
        if second and second.group(1) == "no" and _NO_DETERMINER.match(rest[second.end() :]):
            second = None  # "Yes, no doubt the paragraph says so": a determiner, not a second answer
        if (
            _JOINED.match(rest)
            or rest.lstrip().startswith("?")  # "Entailed? No.": a question, then the answer
            or (second is not None and _LEADING_MEANING[_SPACES.sub(" ", second.group(1))] != meaning)
        ):
            return ParsedAnswer(None, "ambiguous")
        return _decide(meaning, "leading-word", answers)

    first = _first_sentence(body)
    if _HEDGES.search(first):
        return ParsedAnswer("maybe", "hedge") if three_way else ParsedAnswer(None, "hedge")

    labelled = _LABELLED.search(cleaned)
    if labelled:
        return _decide(labelled.group(1), "labelled", answers)

    if first.endswith("?"):  # "The hypothesis is true? No.": the first sentence asks, it states nothing
        return ParsedAnswer(None, "no-answer")
    verdicts = set()
    for pattern, negates in _STATEMENTS:
        for match in pattern.finditer(first):
            if _EMBEDDING_NEGATION.search(first[: match.start()]):
                return ParsedAnswer(None, "ambiguous")  # "I don't think the hypothesis is true"
            verdicts.add("no" if negates(match) else "yes")
    if len(verdicts) > 1:
        return ParsedAnswer(None, "ambiguous")
    if verdicts:
        return _decide(verdicts.pop(), "statement", answers)

    standalone = {match.group(1) for match in _STANDALONE.finditer(first)}
    if len(standalone) > 1:
        return ParsedAnswer(None, "ambiguous")
    if standalone:
        return _decide(standalone.pop(), "standalone", answers)
    return ParsedAnswer(None, "no-answer")
