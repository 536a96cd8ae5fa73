"""BBNLI's pinned upstream files (:data:`BBNLI_DATA`) and the benchmark's expansion of either of
its layouts, the JSON directory or the expanded CSV of its ``json2csv.py``.

>>> len(BBNLI_DATA.files), BBNLI_DATA.paths()[0]
(16, 'bbnli/gender/man_is_to_breadwinner.json')
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from nlibias.benchmarks.bbnli import Expansion, expand_bbnli
from nlibias.benchmarks.data_locations import PinnedData, resolve_data

BBNLI_COMMIT = "9f55895637b92a7e8ae29c07f9a769499e8287fe"

_BBNLI_URL = f"https://raw.githubusercontent.com/feyzaakyurek/bbnli/{BBNLI_COMMIT}/data/nli/"
BBNLI_DATA = PinnedData(
    name="bbnli",
    directory="bbnli",
    files={
        rel: (_BBNLI_URL + rel, digest)
        for rel, digest in {
            "gender/man_is_to_breadwinner.json": "51fb8cefdca24d1e6041f43a8f321408e9fb6a85786f0fe3fd4811955c1cb841",
            "gender/man_is_to_programmer.json": "cd64ccfb6b7325484e4bd44d873c8e92a1fedb7d92aec859dd3de26e01fad745",
            "gender/man_is_to_rational.json": "f521a05e971c99fcfd4d5437c2e12c97e8dddc8e848c651856e0e76ff9984fe2",
            "gender/man_is_to_surgeon.json": "45d4de971289e24363c0cdcbee16d65b73bc9c27e073888880100cd26b97bfee",
            "gender/woman_is_to_homemaker.json": "fab715c677beddb6d2f9e1499cb4962b6c123e82be4600704f773ff439680cb2",
            "race/asian_men_to_feminine.json": "e63933edba1c6191acbb63d4852cb97ba394c859c24b4cc2414ffab816dcafca",
            "race/black_is_to_criminal.json": "ea59ab379d0a121bbbeb873d9a086b9bed74e4cf599bb536d18f43a9d7b52ca3",
            "race/black_is_to_impoverished.json": "daa9c955792df3607c71856466f3acabfb6c0fbfa7dbc98886d649250dddbc87",
            "race/black_people_use_drugs.json": "a4c0f7d0b4a6c6bf1b3547edcf8aa380427b77ed181e1aa27f341bbb9d594c5d",
            "race/white_is_to_clean.json": "54ae3f09b62e4d831d3e15c8461cbf737d506a299d60d7e4f22b0461725db3fe",
            "religion/catholic_woman_to_many_kids.json": "a7cc85a4d6421fb578c3fb1cb80954ff43ef83b8f611df96fb74ebf70c9cb1e3",
            "religion/jewish_woman_to_many_kids.json": "048927c2a1c9398ade38a693131545fdab69aa246f3ecc23e4bbd8a9b3f654e6",
            "religion/mormon_man_to_oppressive.json": "7eab6228612296a7f61d275ba76b22b3adcb7010ec43ae5b8c2b881f40baaf1a",
            "religion/muslim_man_to_many_wives.json": "fd9399b1aa937be61f169f4b467e8cb02cef1de6f93245cf3e7c06d2b36f35cd",
            "religion/muslim_man_to_oppressive.json": "8300edee1d2afa598707cba3f5d00e3cf23b75763d80ee1034068550f73f4450",
            "religion/muslim_women_to_invisible.json": "edc2d8901720ac4fc6616e535f49aab7b85abcec12ae6f1d06d54b130997f7b6",
        }.items()
    },
    layout="bbnli/<domain>/<subtopic>.json",
)
"""BBNLI's 16 subtopic JSON files at the pinned commit (the benchmark reads the folder)."""


def expand_bbnli_source(source: str | Path | None = None) -> Expansion:
    """:func:`expand_bbnli` of ``source`` (default: BBNLI in the data dir), its summary naming it."""
    path = resolve_data(BBNLI_DATA, source)
    return replace(expand_bbnli(path), origin=str(path))
