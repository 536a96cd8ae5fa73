"""Swap gendered words in a sentence: whole words, the case kept, in one left-to-right pass, "her"
read as "him" or "his" in context (docs/debiasing.md, "Swap rules"); each "her" the rule has no cue
for can be read by a language model instead (:class:`HerResolver` scores the swapped sentence under
each reading and keeps the likelier, a tie: the rule's).

>>> from nlibias.debias.wordlists import winobias_list
>>> swapper = Swapper(winobias_list())
>>> swapper.swap("He gave her a book; HER sons thanked him.")
('She gave him a book; HIS daughters thanked her.', [('he', 'she'), ('her', 'him'), ('her', 'his'), ('sons', 'daughters'), ('him', 'her')])
"""

from __future__ import annotations

import itertools
import re
import unicodedata
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import Annotated, Any, Literal

from nlibias.debias.wordlists import HER_RULE, HIS_RULE, SwapList
from nlibias.models.mlm.model_names import loading_as
from nlibias.models.tp.hf import HFCausalScorer, HFMaskedScorer
from nlibias.schema.applies import AppliesTo
from nlibias.schema.declared import declared
from nlibias.schema.model_ref import CAUSAL_LM_KINDS, ModelRef
from nlibias.textio.text_door import enter_text, fold, is_full_width, to_full_width, word_key

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
"""Words after "her"/"his" that mark it as standing alone (object "him", pronoun "hers")."""

CERTAIN_OBJECT = frozenset(
    "a an the this these those he she it they we you i him them me us his my your its our their".split()  # noqa: SIM905
)
"""Words after "her" that only an object allows ("gave her a book", "lent her his car")."""

OBJECT_PARTICLES = frozenset(
    """down away alone apart together outside inside indoors outdoors overnight downstairs
    upstairs twice""".split()  # noqa: SIM905
)
"""Adverbs and particles after "her" that mark an object: "let her down", "left her alone"."""

PERCEPTION_CAUSATIVE = frozenset(
    """let lets letting make makes made making have has had having help helps helped helping
    hear hears heard hearing see sees saw seen seeing watch watches watched watching feel feels
    felt feeling notice notices noticed""".split()  # noqa: SIM905
)
"""Verbs taking an object and a bare verb: "let her go", "heard her sing"."""

BARE_VERBS = frozenset(
    """go come leave stay wait sit stand speak sing cry laugh dance eat sleep win lose pay
    climb carry open cross find borrow rewrite run walk fall smile move say tell know
    be do get take give see look think try feel read write drive fly swim jump enter arrive die
    buy sell finish start stop learn understand explain change decide choose""".split()  # noqa: SIM905
)
"""Bare verbs after a :data:`PERCEPTION_CAUSATIVE` verb and "her": "made her wait" (not words as
often nouns: "drink", "answer")."""

RESULTATIVE = frozenset(
    """make makes made making keep keeps kept keeping find finds found finding leave leaves left
    leaving drive drives drove driven driving declare declares declared consider considers
    considered get gets got getting render renders rendered""".split()  # noqa: SIM905
)
"""Verbs taking an object and an adjective: "made her happy", "found her tired"."""

PREDICATE_ADJECTIVES = frozenset(
    """happy sad angry tired exhausted busy asleep awake alive dead healthy sick ill dizzy crazy
    warm cold famous rich poor proud nervous calm comfortable uncomfortable hungry thirsty
    anxious afraid scared upset jealous curious sleepy quiet wet dry free lucky guilty innocent
    responsible sure ready weak strong late furious miserable unhappy""".split()  # noqa: SIM905
)
"""Adjectives after a :data:`RESULTATIVE` verb and "her", ending the clause."""

ELECTIVE = frozenset(
    """elect elects elected appoint appoints appointed name names named crown crowns crowned
    make makes made vote votes voted""".split()  # noqa: SIM905
)
TITLES = frozenset(
    """president captain chair chairperson director mayor champion leader head governor secretary
    treasurer manager coach editor ambassador minister senator judge partner heir""".split()  # noqa: SIM905
)
"""Titles after an :data:`ELECTIVE` verb and "her", ending the clause: "elected her president"."""

FIXED_COMPOUNDS = frozenset(
    """man-made man-hour man-hours man-day man-days man-year man-years man-month man-months
    man-eating man-eater man-eaters man-of-war men-of-war""".split()  # noqa: SIM905
)
"""Hyphenated compounds where "man" means people, not a man: never swapped ("man-made")."""

_LY_NOT_ADVERBS = frozenset(
    """lovely only friendly elderly early family holy ugly curly silly daily lonely jolly belly
    lily bubbly wooly woolly frilly hilly chilly smelly sly fly ally reply supply rally""".split()  # noqa: SIM905
)
_NEXT_WORD = re.compile(r"\s*([^\W\d_]+)?")
_PREVIOUS_WORD = re.compile(r"([^\W\d_]+)\s+$")
_PARTNER = re.compile(r"\s*(?:/|&|\bor\b|\band\b)\s*([^\W\d_]+)(?![^\W\d_])", re.IGNORECASE)
_PARTNER_BEFORE = re.compile(r"(?<![^\W\d_])([^\W\d_]+)\s*(?:/|&|\bor\b|\band\b)\s*$", re.IGNORECASE)
_PAIRED = frozenset({"his", "her", "him", "hers"})
_COMPOUND = re.compile(r"[^\W\d_]+(?:-[^\W\d_]+)+")
_SENTENCE_START = re.compile(r"""(?:^|[.!?]["')\]]?\s+)["'(\[]?$""")
_NEUTRAL_HE = re.compile(r"(?:\(s\)|s/)$", re.IGNORECASE)
_WORD = re.compile(r"(?<![^\W_])[^\W\d_]+(?:['\u2019][^\W\d_]+)?(?![^\W_])")
_LETTERS = re.compile(r"[^\W\d_]+")
_APOSTROPHE = "\u2019"  # read as "'" ("ma’am" is "ma'am")


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


def _key(word: str) -> str:
    """A list entry as it is matched (a final period dropped: "mr." matches "Mr")."""
    return word_key(word).rstrip(".")


DOTTED_CAPITAL_I = "\u0130"


def _match_key(word: str) -> str:
    """A list word as texts are looked up: the dotted capital ("İ", lower case "i" + U+0307) read
    as "i", as :func:`_matchable` reads texts."""
    return _key(word.replace(DOTTED_CAPITAL_I, "I")).replace("i\u0307", "i")


def _matchable(folded: str) -> str:
    """A folded text as its words are looked up: "İ" read as "I" (same length)."""
    return folded.replace(DOTTED_CAPITAL_I, "I") if DOTTED_CAPITAL_I in folded else folded


def _touches_mark(text: str, start: int, end: int) -> bool:
    """Whether a combining mark touches ``text[start:end]``: "he" + U+0331 is not the word "he"."""
    category = unicodedata.category
    after = text[end : end + 1]
    before = text[start - 1 : start] if start else ""
    return (not after.isascii() and category(after)[0] == "M") or (
        not before.isascii() and category(before)[0] == "M"
    )


def _shaped(matched: str, counterpart: str) -> str:
    """``counterpart`` in the case of ``matched``, full width where ``matched`` is."""
    cased = keep_case(fold(matched), counterpart)
    if not cased.isascii():  # "i" + U+0307 upper-cased is "I" + U+0307: NFC makes it "İ" again
        cased = unicodedata.normalize("NFC", cased)
    return to_full_width(cased) if is_full_width(matched) else cased


def _partner(text: str, word: str, start: int, end: int) -> tuple[str | None, int]:
    """The other word of a coordinated pair ("his/her", "him or her") and where the clause goes on past it."""
    after, before = _PARTNER.match(text, end), _PARTNER_BEFORE.search(text, 0, start)
    for match, goes_on in ((after, after.end() if after else end), (before, end)):
        if match and match.group(1).lower() in _PAIRED - {word}:
            return match.group(1).lower(), goes_on
    return None, end


CERTAIN, CUE, DEFAULT = "certain", "cue", "default"
"""How :func:`reading` decided: grammar leaves one reading; a cue (a function word, a particle, an
-ly adverb, a verb and the word after "her"); no cue (a noun is assumed next)."""


def reading(text: str, start: int, end: int) -> tuple[bool, str]:
    """``(stands_alone, how)`` for the "her" or "his" at ``text[start:end]``: whether it stands
    alone (an object "him", a pronoun "hers") rather than before its noun, and how that was decided.

    >>> reading("gave her a book", 5, 8), reading("made her happy.", 5, 8), reading("took her car", 5, 8)
    ((True, 'certain'), (True, 'cue'), (False, 'default'))
    """
    word = text[start:end].lower()
    partner, after_partner = _partner(text, word, start, end)
    if partner in ("him", "hers"):
        return True, CERTAIN  # "him or her", "hers/his": the partner stands alone, so does it
    certain_pair = partner is not None  # "his/her": read both from the word after the pair
    match = _NEXT_WORD.match(text, after_partner)
    following = match.group(1) if match else None
    if following is None:
        return True, CERTAIN
    if _SENTENCE_START.search(text, 0, start) and not certain_pair:
        return False, CERTAIN  # "Her friends ...": an object does not start a sentence
    after = match.end() if match else after_partner
    how = CERTAIN if certain_pair else CUE
    if text[after : after + 1] == "-" and text[after + 1 : after + 2].isalpha():
        return False, how  # a compound after it: "her in-laws", "her so-called friend"
    lower = following.lower()
    if lower in CERTAIN_OBJECT:
        return True, CERTAIN
    if lower in FUNCTION_WORDS or lower in OBJECT_PARTICLES:
        return True, how
    if lower.endswith("ly") and lower not in _LY_NOT_ADVERBS:
        return True, how
    if word == "her" and _verb_cue(text, start, after, lower):
        return True, how
    return False, CERTAIN if certain_pair else DEFAULT


def _verb_cue(text: str, start: int, after: int, following: str) -> bool:
    """Whether the verb before "her" and the word after it read "her" as an object: "let her go",
    "made her happy.", "elected her president"."""
    match = _PREVIOUS_WORD.search(text, 0, start)
    previous = match.group(1).lower() if match else ""
    if previous in PERCEPTION_CAUSATIVE and following in BARE_VERBS:
        return True
    if previous in ELECTIVE and following in TITLES:
        return stands_alone_at(text, after)  # "made her secretary type ..." is her secretary
    if previous in RESULTATIVE and following in PREDICATE_ADJECTIVES:
        return stands_alone_at(text, after)
    return False


def stands_alone_at(text: str, end: int) -> bool:
    """Whether the clause ends at ``end`` or goes on with a function word."""
    match = _NEXT_WORD.match(text, end)
    following = match.group(1) if match else None
    return following is None or following.lower() in FUNCTION_WORDS


@dataclass(frozen=True)
class SwapPlan:
    """The swaps of one text before any choice: each word's span and its cased counterparts (an
    uncertain "her" has two, the rule's reading first)."""

    text: str
    spans: tuple[tuple[int, int], ...]
    words: tuple[str, ...]
    """The matched words, lower case."""
    options: tuple[tuple[str, ...], ...]

    @property
    def open(self) -> tuple[int, ...]:
        """The swaps with two readings (an uncertain "her")."""
        return tuple(i for i, o in enumerate(self.options) if len(o) > 1)

    def render(self, picks: Sequence[int] | None = None) -> tuple[str, list[tuple[str, str]]]:
        """The swapped text (``picks``: the option of each swap, default the rule's) and the
        ``(word, counterpart)`` changes, lower case."""
        pieces: list[str] = []
        changes: list[tuple[str, str]] = []
        last = 0
        for i, ((start, end), word, options) in enumerate(
            zip(self.spans, self.words, self.options, strict=True)
        ):
            target = options[picks[i] if picks is not None else 0]
            if fold(target).lower() == word:
                continue
            changes.append((word, fold(target).lower()))
            pieces += [self.text[last:start], target]
            last = end
        pieces.append(self.text[last:])
        return "".join(pieces), changes


class Swapper:
    """A compiled word list; :meth:`swap` rewrites one sentence ("man's" is looked up as "man")."""

    def __init__(self, swaps: SwapList) -> None:
        self.swaps = swaps
        self._mapping = {_match_key(k): _key(v) for k, v in swaps.mapping.items()}
        self._names = frozenset(_match_key(n) for n in swaps.names)
        self._plain = frozenset(k for k in self._mapping if "'" not in k)
        self._apostrophe_keys = tuple(k for k in self._mapping if "'" in k)

    def may_hold(self, text: str) -> bool:
        """A fast test that is True whenever ``text`` holds a listed word (and sometimes not)."""
        lower = _matchable(fold(text)).lower().replace(_APOSTROPHE, "'")
        return not self._plain.isdisjoint(_LETTERS.findall(lower)) or any(
            k in lower for k in self._apostrophe_keys
        )

    def find(self, text: str) -> bool:
        """Whether ``text`` holds any word of the list (names only where capitalised)."""
        return self.plan(text, open_her=()) is not None

    def _lookup(self, match: re.Match[str]) -> tuple[str, str, int] | None:
        """``(word, counterpart or rule, end of the word)`` for a listed word, else None."""
        token = match.group(0)
        word = token.lower().replace(_APOSTROPHE, "'")
        end = match.end()  # from the token: lower case may be longer ("İ" is "i" + U+0307)
        if word not in self._mapping:
            cut = max(token.find("'"), token.find(_APOSTROPHE))
            word = token[:cut].lower()
            if cut < 0 or word not in self._mapping:
                return None
            end = match.start() + cut
        if word in self._names and not match.string[match.start()].isupper():
            return None
        return word, self._mapping[word], end

    def swap(self, text: str) -> tuple[str, list[tuple[str, str]]]:
        """``text`` (through the text door) with every listed word swapped, and the lower-case
        ``(word, counterpart)`` changes; "her" as the rule reads it."""
        text = enter_text(text, "text", stacklevel=3)
        plan = self.plan(text)
        return (text, []) if plan is None else plan.render()

    def plan(self, text: str, *, open_her: Collection[str] = (DEFAULT,)) -> SwapPlan | None:
        """Every listed word of ``text`` with its counterparts, or None; a "her" decided in a way
        ``open_her`` names gets both readings."""
        text = enter_text(text, "text", stacklevel=3)
        folded = _matchable(fold(text))  # same length: a position in it is a position in text
        if not self.may_hold(folded):
            return None
        spans: list[tuple[int, int]] = []
        words: list[str] = []
        options: list[tuple[str, ...]] = []
        mapping = self._mapping
        for match in _WORD.finditer(folded):
            token = match.group(0).lower()
            if token not in mapping and "'" not in token and _APOSTROPHE not in token:
                continue  # the common case, decided without a call
            found = self._lookup(match)
            if found is None:
                continue
            word, target, end = found
            start = match.start()
            if _touches_mark(text, start, end) or self._kept(folded, start, word):
                continue
            if target in (HER_RULE, HIS_RULE):
                alone, how = reading(folded, start, end)
                pair = ("him", "his") if target == HER_RULE else ("hers", "her")
                first, second = pair if alone else pair[::-1]
                is_open = target == HER_RULE and how in open_her
                choices: tuple[str, ...] = (first, second) if is_open else (first,)
            else:
                choices = (target,)
            spans.append((start, end))
            words.append(word)
            options.append(tuple(_shaped(text[start:end], c) for c in choices))
        if not spans:
            return None
        return SwapPlan(text, tuple(spans), tuple(words), tuple(options))

    @staticmethod
    def _kept(text: str, start: int, word: str) -> bool:
        """Words left as they are: "he" of "(s)he" and "s/he", "man" of "man-made"."""
        lower = word.lower()
        if lower == "he" and _NEUTRAL_HE.search(text, 0, start):
            return True
        if lower in ("man", "men"):
            compound = _COMPOUND.match(text, start)
            if compound:
                parts = compound.group(0).lower().split("-")
                return any("-".join(parts[:n]) in FIXED_COMPOUNDS for n in range(2, len(parts) + 1))
        return False


HerChoice = Literal["rule", "lm"]
DEFAULT_HER_MODEL = "smollm2"
MAX_JOINT = 4
"""Open "her"s of one text scored jointly (2**4 = 16 candidates at most); beyond, one at a time."""


def candidate_picks(plan: SwapPlan) -> list[tuple[int, ...]]:
    """The option picks to score for ``plan``, the rule's reading (all zeros) first.

    >>> from nlibias.debias.wordlists import winobias_list
    >>> plan = Swapper(winobias_list()).plan("She sent her flowers.")
    >>> [plan.render(picks)[0] for picks in candidate_picks(plan)]
    ['He sent his flowers.', 'He sent him flowers.']
    """
    base = [0] * len(plan.options)
    open_ = plan.open
    if len(open_) <= MAX_JOINT:
        combos = list(itertools.product((0, 1), repeat=len(open_)))
    else:  # the rule's reading, then each open "her" flipped alone
        combos = [tuple(int(j == k) for j in range(len(open_))) for k in range(-1, len(open_))]
    picks = []
    for combo in combos:
        chosen = list(base)
        for slot, pick in zip(open_, combo, strict=True):
            chosen[slot] = pick
        picks.append(tuple(chosen))
    return list(dict.fromkeys(picks))


class HerResolver:
    """A sentence scorer reading open "her"s; :meth:`load` builds one from a model name."""

    def __init__(self, scorer: Any, *, spec: str) -> None:
        self.scorer = scorer
        self.spec = spec

    @classmethod
    def load(cls, spec: str = DEFAULT_HER_MODEL, *, device: str | None = None) -> HerResolver:
        """``smollm2`` (embedded), a causal LM (a ``.gguf`` path, a directory, a hub name;
        ``causal:NAME`` also) or a masked LM as ``mlm:NAME`` (pseudo-log-likelihood)."""
        with loading_as("her_model", spec):
            ref = ModelRef.unread(spec)
            if ref.kind in ("mlm", "masked"):
                return cls(HFMaskedScorer(ref.name, device=device), spec=spec)
            return cls(HFCausalScorer(ref.named_for(CAUSAL_LM_KINDS), device=device), spec=spec)

    def identity(self) -> Mapping[str, Any]:
        """What determines the choices: the name, the scorer kind and its identity."""
        return {"spec": self.spec, "scorer": self.scorer.kind, **self.scorer.identity(), "variant": "whole"}

    def choose(self, plans: Sequence[SwapPlan]) -> list[tuple[int, ...]]:
        """The picks of each plan: the candidate sentence with the highest log-probability."""
        candidates = [candidate_picks(plan) for plan in plans]
        sentences = [plan.render(p)[0] for plan, picks in zip(plans, candidates, strict=True) for p in picks]
        scores = self._scores(sentences)
        chosen = []
        at = 0
        for plan, picks in zip(plans, candidates, strict=True):
            own = scores[at : at + len(picks)]
            at += len(picks)
            if len(plan.open) <= MAX_JOINT:
                best = max(range(len(picks)), key=lambda k: (own[k], -k))  # a tie: the earlier (rule first)
                chosen.append(picks[best])
            else:  # one at a time: flip each open "her" whose flip scores higher than the rule
                merged = list(picks[0])
                for k, alone in enumerate(picks[1:], start=1):
                    if own[k] > own[0]:
                        merged = [max(a, b) for a, b in zip(merged, alone, strict=True)]
                chosen.append(tuple(merged))
        return chosen

    def _scores(self, sentences: Sequence[str]) -> list[float]:
        """Each sentence's total log-probability (one batched scorer call)."""
        if not sentences:
            return []
        pairs = [
            (sentences[i], sentences[min(i + 1, len(sentences) - 1)]) for i in range(0, len(sentences), 2)
        ]
        scores = [0.0] * len(sentences)
        for batch in self.scorer.score_pair_batches(pairs, variant="whole"):
            for index, score in zip(batch.indices, batch.scores, strict=True):
                scores[2 * index] = score.more
                if 2 * index + 1 < len(sentences):
                    scores[2 * index + 1] = score.less
        return scores


HER_MODEL_APPLIES = AppliesTo(
    "nothing: only her='lm' reads \"her\" with a language model",
    lambda settings: settings.get("her") == "lm",
    "",
    fix="pass her='lm' too, or leave {{her_model}} out",
    names=("her",),
)
HerModel = Annotated[str | HerResolver | None, HER_MODEL_APPLIES]


@declared
def check_her(her: HerChoice = "rule", her_model: HerModel = None) -> None:
    """``her`` is one of :data:`HerChoice`; ``her_model`` only with ``her='lm'``, which reads it.

    >>> check_her("rule", "smollm2")
    Traceback (most recent call last):
    nlibias.schema.applies.InapplicableOption: her_model 'smollm2' applies to nothing: only her='lm' reads "her" with a language model; pass her='lm' too, or leave her_model out
    """
    if isinstance(her_model, str):  # another kind of model is refused before anything loads
        ref = ModelRef.unread(her_model)
        ref.check_role(
            "masked" if ref.kind in ("mlm", "masked") else "generative",
            parameter="her_model",
            fix="name a causal LM (smollm2, a directory, hf:NAME) or a masked LM as mlm:NAME",
        )
