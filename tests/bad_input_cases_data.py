"""Bad inputs of issue #48 (real data, older holes), part of the corpus of ``bad_input_cases``:
published premises a premises file would refuse (read and warned; refused with ``--strict``),
pinned data named explicitly, word lists with zero-width characters inside a word, files named
``.gguf`` that are no GGUF model, and a BBNLI object with a key twice. (Plug-ins, a debias rerun
with other seeds, a full disk and a cut ``finetune.json`` need a tiny model or a fake entry
point: ``tests/test_plugins_isolated.py``, ``tests/test_stage_engine.py`` and
``tests/test_fault_messages.py`` hold them.)"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

from bad_input_cases_rows import GOOD, F, M, _data_copy, _data_env, _expand, _workbook
from bad_input_corpus import Base, Case


def _premise_caveat_cases() -> list[Case]:
    """Workbook premises with a gendered word or without their row's occupation: the published
    sets have them (SNLI C39 "females", OOD B28 "prince"), so they are read and warned."""
    rows = {
        "gendered-word-read": ["accountant", "two accountants are robbing some females.", "F", F, M],
        "royal-word-read": ["mechanic", "the prince george's county schools has no mechanics", "M", F, M],
        "no-occupation-read": ["salesperson", "a person salespersons rice.", "M", F, M],
        "another-occupation-read": ["sheriff", "future secretaries of state will not remember.", "M", F, M],
    }
    found: list[Case] = []
    for name, row in rows.items():

        def build(d: Path, base: Base, row: list[str] = row) -> tuple[list[str], str]:
            return _expand(_workbook(d / "set.xlsx", [GOOD, row]), d), "premise(s) would be refused"

        found.append(Case(f"occupations-xlsx/{name}", build, expect="warn"))

        def strict(d: Path, base: Base, row: list[str] = row) -> tuple[list[str], str]:
            path = _workbook(d / "set.xlsx", [GOOD, row])
            return _expand(path, d, "--strict"), f"{path}: Sheet1!B3"

        found.append(Case(f"occupations-xlsx/{name.removesuffix('-read')}-strict", strict))

    def strict_on_premises(d: Path, base: Base) -> tuple[list[str], str]:
        path = d / "premises.txt"
        path.write_text("The nurse is sitting on a bench.\n", encoding="utf-8")
        return _expand(path, d, "--strict"), "--strict"

    found.append(Case("options/strict-with-a-premises-file", strict_on_premises))
    return found


def _pinned_explicit_cases() -> list[Case]:
    """Pinned data in NLIBIAS_DATA_DIR named by --source: verified like the default route."""

    def crows(named: Callable[[Path], Path]) -> Callable[[Path, Base], tuple[list[str], str]]:
        def build(d: Path, base: Base) -> tuple[list[str], str]:
            path = _data_copy(d, "crows-pairs") / "crows_pairs_anonymized.csv"
            lines = path.read_text(encoding="utf-8").split("\n")
            lines[2] = lines[2].replace("poor", "rich", 1)
            path.write_text("\n".join(lines), encoding="utf-8")
            return ["expand", "crows-pairs", "--source", str(named(path)), "--out", str(d / "out")], str(path)

        return build

    def bbnli_folder(d: Path, base: Base) -> tuple[list[str], str]:
        path = _data_copy(d, "bbnli") / "race" / "black_is_to_criminal.json"
        path.write_text(path.read_text(encoding="utf-8").replace(" the ", " a ", 1), encoding="utf-8")
        return ["expand", "bbnli", "--source", str(d / "data" / "bbnli"), "--out", str(d / "out")], str(path)

    return [
        Case("pinned-data/crows-pairs-edited-named-as-file", crows(lambda p: p), env=_data_env),
        Case("pinned-data/crows-pairs-edited-named-by-folder", crows(lambda p: p.parent), env=_data_env),
        Case(
            "pinned-data/crows-pairs-edited-named-by-data-dir", crows(lambda p: p.parents[1]), env=_data_env
        ),
        Case("pinned-data/bbnli-edited-named-by-folder", bbnli_folder, env=_data_env),
    ]


def _word_list_cases() -> list[Case]:
    """A word-list entry with a zero-width character inside the word: refused naming the line."""
    found: list[Case] = []
    for name, char in (("zero-width-space", "\u200b"), ("word-joiner", "\u2060"), ("bom-inside", "\ufeff")):

        def build(d: Path, base: Base, char: str = char) -> tuple[list[str], str]:
            train = d / "train.jsonl"
            train.write_text(
                json.dumps({"premise": "The nurse left.", "hypothesis": "A nurse.", "label": "n"}) + "\n"
            )
            words = d / "words.tsv"
            words.write_text(f"king\tqueen\nh{char}er\this\n", encoding="utf-8")
            args = ["augment", "gender-swap", "--train", str(train), "--word-list", str(words)]
            return [*args, "--out", str(d / "aug")], f"{words}:2"

        found.append(Case(f"augment/word-list-{name}-inside-a-word", build))
    return found


def _gguf_cases() -> list[Case]:
    """A file named .gguf that is no GGUF model: refused naming the file, before any work."""
    contents = {"text": b"not a model\n", "cut-header": b"GGUF\x03\x00\x00\x00cut", "empty": b""}
    found: list[Case] = []
    for name, content in contents.items():
        for route in ("fill-model", "compare-fill", "generative"):

            def build(
                d: Path, base: Base, content: bytes = content, route: str = route
            ) -> tuple[list[str], str]:
                model = d / "model.gguf"
                model.write_bytes(content)
                if route == "generative":
                    return ["audit", "--samples", str(base.samples), "--generative", str(model),
                            "--out", str(d / "run")], str(model)  # fmt: skip
                fill = ["--fill-model", str(model)] if route == "fill-model" else ["--fill-model", "fake:a",
                                                                                   "--compare-fill", str(model)]  # fmt: skip
                return ["extend", "--out", str(d / "ext"), *fill, "--filter-model", "fake:f"], str(model)

            found.append(Case(f"gguf/{name}-as-{route}", build))
    return found


def _bbnli_key_twice_cases() -> list[Case]:
    """A BBNLI subtopic object with a key twice, at the top and inside a nested object."""

    def build(d: Path, base: Base) -> tuple[list[str], str]:
        source = next(base.bbnli_dir.glob("*/*.json"))
        text = source.read_text(encoding="utf-8")
        path = d / "bbnli" / source.parent.name / source.name
        path.parent.mkdir(parents=True)
        path.write_text(text.replace('"id":', '"GROUP1": ["x"], "id":', 1), encoding="utf-8")
        return ["expand", "bbnli", "--source", str(d / "bbnli"), "--out", str(d / "out")], str(path)

    return [Case("bbnli-json/key-group1-twice", build)]


def data_cases() -> list[Case]:
    """Every case of issue #48's data classes."""
    return [
        *_premise_caveat_cases(),
        *_pinned_explicit_cases(),
        *_word_list_cases(),
        *_gguf_cases(),
        *_bbnli_key_twice_cases(),
    ]
