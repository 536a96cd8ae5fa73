"""The dataset card ``extend`` writes for publishing names no local path (issue #39): the source by
its pinned release and digest, the templates by their hash; the paths stay in run.json."""

from __future__ import annotations

import hashlib
from pathlib import Path

import yaml

from nlibias.benchmarks.bbnli_source import BBNLI_COMMIT, BBNLI_DATA
from nlibias.benchmarks.data_locations import resolve_data
from nlibias.extension.card import card_header, intro_section, source_record


def _info(source: Path, templates: str) -> dict:
    config = {
        "source": str(source),
        "subtopics": ["man_is_to_programmer", "woman_is_to_homemaker"],
        "templates_file": templates,
        "templates_sha256": "ab" * 32,
        "seed": 0,
    }
    return {"config": config, "validation": {"status": "unvalidated"}, "files": {"rows": {}}}


def test_the_card_names_the_pinned_release_and_digests_not_local_paths(tmp_path: Path) -> None:
    source = resolve_data(BBNLI_DATA)  # the pinned copy (its files match the pins)
    info = _info(source, "/home/someone/site-packages/nlibias/resources/templates.yaml")
    header = card_header(info)
    text = yaml.safe_dump(header) + "\n".join(intro_section(info, "t"))
    assert str(source) not in text and "/home/someone" not in text and "templates_file" not in text
    run = header["nlibias_run"]
    assert run["templates_sha256"] == "ab" * 32
    # the digest: SHA-256 over the two files' sorted "path<TAB>sha256" lines, with the pinned sums
    files = ["gender/man_is_to_programmer.json", "gender/woman_is_to_homemaker.json"]
    lines = "".join(f"{rel}\t{BBNLI_DATA.files[rel][1]}\n" for rel in files)
    assert run["source"] == {
        "name": "bbnli",
        "release": f"feyzaakyurek/bbnli@{BBNLI_COMMIT}",
        "files": 2,
        "sha256": hashlib.sha256(lines.encode()).hexdigest(),
    }


def test_a_modified_source_is_named_by_its_digest_without_a_release(tmp_path: Path) -> None:
    (tmp_path / "gender").mkdir()
    (tmp_path / "gender" / "man_is_to_programmer.json").write_text("{}")
    record = source_record(str(tmp_path), ["man_is_to_programmer"])
    assert record is not None and record["release"] is None and record["files"] == 1
    assert str(tmp_path) not in str(record)
