"""The main job's outputs on six inputs equal the fixtures written before the run path was
restructured (``tests/regression_cases.py``): metrics.json field by field (run-specific fields
left out; numbers to 1e-12 where no model runs, to 5e-3 percent points where one does),
predictions.jsonl byte for byte where no model runs, probabilities to 5e-5 where one does.
``nlibias score`` of an audit's predictions writes the same predictions file back."""

from __future__ import annotations

import hashlib
import json
import math
import sys
from pathlib import Path
from typing import Any

import pytest

from nlibias.io.results import metrics_issues
from nlibias.io.run_manifest import check_run_directory
from nlibias.metrics.ranking import is_biased_subtopic, ranking_measure

sys.path.insert(0, str(Path(__file__).parent))
from regression_cases import CASES, EXACT, run_case

FIXTURES = Path(__file__).parent / "fixtures" / "regression"
# Fields added on purpose after the fixtures were written (the rest must not change):
# metrics.json's ``predictor_kinds`` and ``schema_version``, a generative row's ``kind``, each
# model's ``most_biased_subtopics`` where the fixture has none (classifiers) and the ``measure``
# that names the ranking measure of each entry (:mod:`nlibias.metrics.ranking`; since schema
# version 2 the ranking keeps only subtopics whose interval excludes 0, with that interval), and a generative
# slice's ``yes_rate_gap`` with its interval (the generative headline; the numbers beside it are
# unchanged).
# One default changed on purpose and edited into the fixtures: ``run.models.*.max_new_tokens`` of
# generative models is 64 (the command line's 48 now follows the library's one default).
# ``run.models.*.dtype`` of a local generative model: the dtype its weights were loaded in, added
# to the smollm2 fixture (float32: the GGUF file is dequantised) when runs began recording it.
_ADDED_METRICS = ("predictor_kinds", "schema_version")


def _without_added_model_fields(metrics: dict[str, Any], fixture: dict[str, Any]) -> None:
    for name, model in metrics.get("models", {}).items():
        if "most_biased_subtopics" not in fixture.get("models", {}).get(name, {}):
            model.pop("most_biased_subtopics", None)
        else:
            _with_the_fixture_ranking_kept_by_the_rule(model, fixture["models"][name])
        for entry in model.get("most_biased_subtopics", []):
            entry.pop("measure", None)
        for slice_metrics in _slices(model):  # generative LMs' headline, added after the fixtures
            slice_metrics.pop("yes_rate_gap", None)
            slice_metrics.get("ci", {}).pop("yes_rate_gap", None)


def _with_the_fixture_ranking_kept_by_the_rule(model: dict[str, Any], fixture_model: dict[str, Any]) -> None:
    """Schema version 2 lists only the subtopics a verdict would call biased (10+ units, an interval
    that excludes 0), each with its interval: the fixture's top four, less those the rule leaves out,
    must lead the new list in their order (a subtopic past the fixture's fourth cannot be checked)."""
    ranking = model.get("most_biased_subtopics", [])
    for entry in ranking:  # the interval stored is the slice's own
        assert entry.pop("interval") == model["by_subtopic"][entry["subtopic"]]["ci"][entry["measure"]]
    fixture_slices = fixture_model["by_subtopic"]
    kept = [
        entry
        for entry in fixture_model["most_biased_subtopics"]
        if is_biased_subtopic(fixture_slices[entry["subtopic"]], ranking_measure(entry) or "")
    ]
    fixture_model["most_biased_subtopics"] = kept
    model["most_biased_subtopics"] = ranking[: len(kept)]


def _slices(model: dict[str, Any]) -> list[dict[str, Any]]:
    found = [model["overall"]] if isinstance(model.get("overall"), dict) else []
    for key, groups in model.items():
        if key.startswith("by_") and isinstance(groups, dict):
            found += [g for g in groups.values() if isinstance(g, dict)]
    return found


def _without_added_fields(predictions: str) -> str:
    """Predictions lines as the code before the restructuring wrote them."""
    return "".join(line.replace('"kind": "generative", ', "") for line in predictions.splitlines(True))


_MODEL_DEPENDENT = {"revision"}  # a hash of the model files that this machine's torch wrote


# Floats are compared to an absolute tolerance: sums and bootstrap means differ in their last bits
# between CPUs and numpy builds (seen: 1e-14 on occupation CIs on a fresh machine), and a model's
# float32 outputs by a few units of 1e-6 (seen here: the tiny HF classifier's probabilities by
# 1.0e-6, SmolLM2's by 9.6e-6, which moves its percent measures by up to 2.0e-4 points). Any change
# in what is computed moves a number by far more than these tolerances.
FAKE_MODEL_TOLERANCE = 1e-12
MODEL_PROBABILITY_TOLERANCE = 5e-5  # predictions.jsonl
MODEL_PERCENT_TOLERANCE = 5e-3  # metrics.json (percent points)


def _close(got: Any, want: Any, where: str, tolerance: float) -> None:
    """``got`` equals ``want``, floats to ``tolerance`` (absolute), the rest exactly."""
    if isinstance(want, dict):
        assert isinstance(got, dict) and set(got) == set(want), f"{where}: keys {set(got) ^ set(want)}"
        for key in want:
            if key not in _MODEL_DEPENDENT:
                _close(got[key], want[key], f"{where}.{key}", tolerance)
    elif isinstance(want, list):
        assert isinstance(got, list) and len(got) == len(want), f"{where}: length"
        for i, (g, w) in enumerate(zip(got, want, strict=True)):
            _close(g, w, f"{where}[{i}]", tolerance)
    elif isinstance(want, float) and not isinstance(got, bool):
        assert isinstance(got, int | float) and math.isclose(got, want, rel_tol=1e-12, abs_tol=tolerance), (
            f"{where}: {got!r} != {want!r}"
        )
    else:
        assert got == want, f"{where}: {got!r} != {want!r}"


@pytest.mark.parametrize(
    "name", [pytest.param(n, marks=pytest.mark.slow) if n == "smollm2" else n for n in CASES]
)
def test_outputs_equal_the_fixtures(name: str, tmp_path: Path) -> None:
    results = run_case(name, tmp_path)
    for label in results:  # the files as written (run section and all): typed, complete, one run
        raw = json.loads((tmp_path / label / "metrics.json").read_text(encoding="utf-8"))
        assert metrics_issues(raw, strict=True) == [], f"{name}/{label}: a field the types do not declare"
        assert check_run_directory(tmp_path / label) is not None
    for result in results.values():
        for key in _ADDED_METRICS:
            result["metrics"].pop(key, None)
        result["predictions"] = _without_added_fields(result["predictions"])
    audit_predictions = results["audit"]["predictions"]
    assert results["score"]["predictions"] == audit_predictions  # score writes the rows back as read
    for label, result in results.items():
        want = json.loads((FIXTURES / name / label / "metrics.json").read_text(encoding="utf-8"))
        got = json.loads(json.dumps(result["metrics"]))  # tuples → lists, as in the fixture
        _without_added_model_fields(got, want)
        tolerance = FAKE_MODEL_TOLERANCE if name in EXACT else MODEL_PERCENT_TOLERANCE
        _close(got, want, f"{name}/{label}", tolerance)
    if name in EXACT:
        digest, lines = (FIXTURES / name / "audit" / "predictions.sha256").read_text().split()
        assert hashlib.sha256(audit_predictions.encode()).hexdigest() == digest
        assert audit_predictions.count("\n") == int(lines)
    else:
        want_rows = (FIXTURES / name / "audit" / "predictions.jsonl").read_text().splitlines()
        got_rows = audit_predictions.splitlines()
        assert len(got_rows) == len(want_rows)
        for i, (g, w) in enumerate(zip(got_rows, want_rows, strict=True)):
            _close(
                json.loads(g), json.loads(w), f"{name} predictions line {i + 1}", MODEL_PROBABILITY_TOLERANCE
            )
