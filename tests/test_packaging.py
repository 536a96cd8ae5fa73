"""What a user installs and cites: the ``all`` extra, LICENSE, CITATION.cff, CHANGELOG."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import yaml

import nlibias

ROOT = Path(__file__).resolve().parent.parent
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]


def test_all_extra_is_every_feature_extra() -> None:
    extras = PYPROJECT["optional-dependencies"]
    (requirement,) = extras["all"]
    match = re.fullmatch(r"nlibias\[([a-z,]+)\]", requirement)
    assert match is not None, requirement
    # dev is for working on nlibias; llamacpp compiles a test server from source; lm-eval and inspect
    # are other tools (docs/integrations.md) with large dependency trees of their own
    assert set(match.group(1).split(",")) == set(extras) - {"all", "dev", "llamacpp", "lm-eval", "inspect"}


def test_license_is_the_declared_mit() -> None:
    text = (ROOT / "LICENSE").read_text(encoding="utf-8")
    assert PYPROJECT["license"] == "MIT"
    assert text.startswith("MIT License") and "nlibias developers" in text


def test_citation_file_cites_the_tool_and_the_papers() -> None:
    cff = yaml.safe_load((ROOT / "CITATION.cff").read_text(encoding="utf-8"))
    for key in ("cff-version", "message", "title", "authors", "version", "license"):
        assert cff[key], key
    assert cff["version"] == nlibias.__version__ == PYPROJECT["version"]
    assert cff["license"] == PYPROJECT["license"]
    titles = {ref["title"] for ref in cff["references"]}
    assert {
        "Keeping Up with the Language Models: Systematic Benchmark Extension for Bias Auditing",
        "On Measuring Social Biases in Prompt-based Multi-Task Learning",
        "Textual Entailment and Token Probability as Bias Evaluation Metrics",
        "Evaluating Gender Bias in Natural Language Inference",
    } == titles
    for ref in cff["references"]:
        assert ref["authors"] and isinstance(ref["year"], int) and ref["type"], ref["title"]


def test_changelog_has_this_version_and_the_results_schema() -> None:
    text = (ROOT / "CHANGELOG.md").read_text(encoding="utf-8")
    assert f"## {nlibias.__version__}" in text
    assert "schema_version" in text
