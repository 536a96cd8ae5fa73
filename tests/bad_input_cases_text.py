"""Bad inputs of issue #34 (part A), part of the corpus of ``bad_input_cases``: text that looks
like a word and is not one, on every route text enters by (a training set, a word list, a names
file, a samples file). Format characters are removed with a warning naming the file and line
(``warn``); a word list or names file that is not UTF-8 is refused naming it (``error``)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

from bad_input_corpus import LATIN1, Base, Case, audit_args, copy_samples, edit_first

ROWS = [
    {"premise": "The nurse thanked her colleague.", "hypothesis": "A woman works.", "label": "neutral"},
    {"premise": "A dog runs.", "hypothesis": "An animal moves.", "label": "entailment"},
]


def _train(d: Path, rows: list[dict[str, str]] = ROWS) -> Path:
    path = d / "train.jsonl"
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    return path


def _augment(train: Path, d: Path, *extra: str) -> list[str]:
    return ["augment", "gender-swap", "--train", str(train), "--out", str(d / "aug"), "--json", *extra]


def text_cases() -> list[Case]:
    """Augment (training rows, word lists, names files) and audit (samples) with invisible text."""
    found: list[Case] = []

    def case(name: str, build: Callable[[Path, Base], tuple[list[str], str]], expect: str = "warn") -> None:
        found.append(Case(name, build, expect))

    def train_zero_width(d: Path, base: Base) -> tuple[list[str], str]:
        rows = [dict(ROWS[0], premise="The nurse thanked h\u200ber colleague."), ROWS[1]]
        train = _train(d, rows)
        return _augment(train, d), f"{train}:1 (premise)"

    def train_bidi(d: Path, base: Base) -> tuple[list[str], str]:
        rows = [ROWS[0], dict(ROWS[1], hypothesis="An \u202eanimal\u202c moves.")]
        train = _train(d, rows)
        return _augment(train, d), f"{train}:2 (hypothesis)"

    def names_bom_inside(d: Path, base: Base) -> tuple[list[str], str]:
        names = d / "names.tsv"
        names.write_text("John\tMary\n\ufeffWill\tRose\n", encoding="utf-8")  # two files pasted together
        return _augment(_train(d), d, "--names", str(names), "--select", "all"), f"{names}:2"

    def word_list_soft_hyphen(d: Path, base: Base) -> tuple[list[str], str]:
        words = d / "words.tsv"
        words.write_text("nurse\tnurse\nher\this\nwo\u00adman\tman\n", encoding="utf-8")
        return _augment(_train(d), d, "--word-list", str(words)), f"{words}:3"

    def not_utf8(flag: str) -> Callable[[Path, Base], tuple[list[str], str]]:
        def build(d: Path, base: Base) -> tuple[list[str], str]:
            path = d / "list.tsv"
            path.write_bytes(b"her\this\n" + LATIN1 + b"\tx\n")
            return _augment(_train(d), d, flag, str(path)), str(path)

        return build

    def samples_zero_width(d: Path, base: Base) -> tuple[list[str], str]:
        path = copy_samples(
            d, base, edit_first(lambda r: r.update(premise=r["premise"].replace(" ", " \u200b", 1)))
        )
        return audit_args(path, d), f"{path}:"

    case("augment/train-zero-width-space", train_zero_width)
    case("augment/train-bidi-override", train_bidi)
    case("augment/names-bom-inside", names_bom_inside)
    case("augment/word-list-soft-hyphen", word_list_soft_hyphen)
    case("augment/names-not-utf8", not_utf8("--names"), "error")
    case("augment/word-list-not-utf8", not_utf8("--word-list"), "error")
    case("samples-jsonl/zero-width-space", samples_zero_width)
    return found
