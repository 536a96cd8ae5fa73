"""metrics.json typed: the published schema is the TypedDicts' schema, its ranges are the declared
ones, what the writers emit validates strictly, and ``nlibias report`` refuses impossible values and
damaged files with the file and the field; version-0 files (no ``schema_version``) still load; the
report shows the ranking metrics.json stores."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from nlibias.cli.main import app
from nlibias.errors import SourceError
from nlibias.io.json_schema import field_path
from nlibias.io.results import SCHEMA_VERSION, metrics_issues, metrics_schema, read_metrics
from nlibias.metrics.meta import ALL_MEASURES, MEASURES
from nlibias.metrics.ranking import most_biased_subtopics, stored_ranking
from nlibias.report.load import load_run
from nlibias.report.paper_tables import most_biased_subtopics as report_ranking
from nlibias.report.paper_tables import table8
from nlibias.testing.report_runs import build_bbnli_run, generative_metrics, write_metrics_run

ROOT = Path(__file__).parent.parent
FIXTURES = Path(__file__).parent / "fixtures" / "regression"


def test_published_schema_is_the_schema_of_the_types() -> None:
    """docs/metrics.schema.json is regenerated with ``nlibias schema metrics > docs/metrics.schema.json``."""
    published = json.loads((ROOT / "docs" / "metrics.schema.json").read_text(encoding="utf-8"))
    assert published == metrics_schema()
    printed = CliRunner().invoke(app, ["schema", "metrics"])
    assert printed.exit_code == 0 and json.loads(printed.output) == published


def test_schema_ranges_are_the_ranges_metrics_meta_declares() -> None:
    properties = metrics_schema()["$defs"]["SliceMetrics"]["properties"]
    # a measure another file reports (the explanation rates of explanations.json) is no field
    in_metrics = {name: info for name, info in ALL_MEASURES.items() if info.reported_in == "metrics.json"}
    assert set(in_metrics) <= set(properties) and set(MEASURES) <= set(in_metrics)
    assert not (set(ALL_MEASURES) - set(in_metrics)) & set(properties)
    for name, info in in_metrics.items():
        number = properties[name]["anyOf"][0]
        bounds = (number.get("minimum", -math.inf), number.get("maximum", math.inf))
        assert bounds == info.range, name


def _doc(**overall: Any) -> dict[str, Any]:
    return {"source": "bbnli", "models": {"a": {"overall": overall}}}


@pytest.mark.parametrize(
    ("overall", "issue"),
    [
        ({"accuracy": -5000.0}, "models.a.overall.accuracy: -5000.0 is outside [0, 100]"),
        ({"cf_pro": 100.5}, "models.a.overall.cf_pro: 100.5 is outside [0, 100]"),
        ({"bbnli_bias_score": -100.0}, None),  # the end of its range (-100, 100) is possible
        ({"bbnli_bias_score": -101.0}, "models.a.overall.bbnli_bias_score: -101.0 is outside [-100, 100]"),
        ({"accuracy": math.nan}, "models.a.overall.accuracy: nan is not a finite number"),
        ({"M3": math.inf}, "models.a.overall.M3: inf is not a finite number"),
        ({"accuracy": "34.0"}, 'models.a.overall.accuracy: expected a number, got "34.0"'),
        ({"accuracy": None, "test_accuracy": 0}, None),  # undefined measures are null; ints are numbers
        ({"n": True}, "models.a.overall.n: expected an integer, got True"),
        ({"n": -1}, "models.a.overall.n: -1 is outside [0, ...]"),
        ({"n": 4.0}, None),  # 4.0 is an integer in JSON
        ({"ci": {"cf_pro": [1.0]}}, "models.a.overall.ci.cf_pro: expected 2 items, got 1"),
        ({"counts": {"n_e": "3"}}, 'models.a.overall.counts.n_e: expected an integer, got "3"'),
        ({"unpaired": "x:1"}, 'models.a.overall.unpaired: expected a list, got "x:1"'),
    ],
)
def test_impossible_values_are_named_by_their_field(overall: dict[str, Any], issue: str | None) -> None:
    assert metrics_issues(_doc(**overall)) == ([issue] if issue else [])


def test_field_paths_quote_model_keys_and_count_list_positions() -> None:
    doc = {
        "source": "bbnli",
        "models": {"lm|prompt=true|scored": {"overall": {}, "most_biased_subtopics": [{}]}},
    }
    assert metrics_issues(doc) == [
        'models["lm|prompt=true|scored"].most_biased_subtopics[0].subtopic: missing',
        'models["lm|prompt=true|scored"].most_biased_subtopics[0].domain: missing',
    ]
    assert field_path(()) == "(the document)"


def test_a_newer_schema_version_is_refused_with_the_fix(tmp_path: Path) -> None:
    run = write_metrics_run(tmp_path, "new", {"schema_version": SCHEMA_VERSION + 1, **_doc(accuracy=1.0)})
    with pytest.raises(
        SourceError,
        match=rf"field schema_version: {SCHEMA_VERSION + 1} is newer than this nlibias reads \({SCHEMA_VERSION}\)",
    ):
        read_metrics(run / "metrics.json")
    with pytest.raises(SourceError, match="upgrade nlibias"):
        read_metrics(run / "metrics.json")


@pytest.mark.parametrize(
    "fixture", sorted(FIXTURES.glob("*/*/metrics.json")), ids=lambda p: p.parent.parent.name
)
def test_version_0_files_load_as_they_are(fixture: Path) -> None:
    """The regression fixtures were written before ``schema_version``, ``predictor_kinds`` and the
    classifiers' rankings existed: they validate (strictly: every field they hold is declared)."""
    document = json.loads(fixture.read_text(encoding="utf-8"))
    assert "schema_version" not in document
    assert metrics_issues(document, strict=True) == []
    assert read_metrics(fixture) == document


def test_strict_validation_refuses_undeclared_fields() -> None:
    assert metrics_issues(_doc(accuracy=1.0, accuracyy=2.0), strict=True) == [
        "models.a.overall.accuracyy: not a field of this schema"
    ]
    assert metrics_issues(_doc(accuracy=1.0, accuracyy=2.0)) == []  # a later version's field is read
    # open by contract: the document (an audit's ``extra``) and a backend's description of its model
    open_doc = {**_doc(), "note": 1, "run": {"models": {"a": {"backend": "x", "rules": {"y": 1}}}}}
    assert metrics_issues(open_doc, strict=True) == []


def test_every_field_an_audit_writes_is_declared(tmp_path: Path) -> None:
    """Raw metrics.json of a classifier audit (run section and all) validate strictly; the other
    writers (scoring; WQ-NLI, occupations, extended and generative audits) are checked the same way
    on the regression cases in tests/test_regression_outputs.py."""
    run = build_bbnli_run(tmp_path, bootstrap=39)
    document = json.loads((run / "metrics.json").read_text(encoding="utf-8"))
    assert document["schema_version"] == SCHEMA_VERSION
    assert metrics_issues(document, strict=True) == []
    document["run"]["models"]["rules"]["stats"].update(cache_rejected=2, truncated_pairs=0)
    assert metrics_issues(document, strict=True) == []  # counters the prediction loop may report


def _report(*args: str) -> tuple[int, str]:
    """``nlibias report ARGS`` through the command's entry point (which prints library errors):
    exit code and everything printed."""
    import contextlib
    import io
    import sys

    from nlibias.cli.main import main

    printed = io.StringIO()
    argv, sys.argv = sys.argv, ["nlibias", "report", *args]
    try:
        with contextlib.redirect_stdout(printed), contextlib.redirect_stderr(printed):
            main()
    except SystemExit as done:
        code = done.code if isinstance(done.code, int) else 1
    else:
        code = 0
    finally:
        sys.argv = argv
    return code, printed.getvalue()


@pytest.mark.parametrize(
    ("content", "reason"),
    [
        (b"", "the file is empty"),
        (b'{"source": "bbnli", "models": {"a": {"overall": {"accur', "not valid JSON: Unterminated string"),
        (b'\xef\xbb\xbf{"source": "bbnli", "models": {}}', "byte-order mark"),
        (b'{"source": "bbnli \xe9", "models": {}}', "not UTF-8 (byte 18"),
        (b'["not", "an", "object"]', "expected an object, got a list"),
        (b'{"source": "bbnli", "models": {"a": {"overall": {"accuracy": -5000.0}}}}', "-5000.0 is outside"),
        (b'{"source": "bbnli", "models": {"a": {"overall": {"accuracy": NaN}}}}', "nan is not a finite"),
        (b'{"source": "bbnli", "models": {"a": {"overall": {"n": "four"}}}}', 'got "four"'),
    ],
)
def test_report_refuses_a_damaged_or_impossible_metrics_json(
    tmp_path: Path, content: bytes, reason: str
) -> None:
    run = tmp_path / "runs" / "x"
    run.mkdir(parents=True)
    (run / "metrics.json").write_bytes(content)
    for args in ([str(run), "--format", "md"], [str(run), "--no-plots"]):
        code, output = _report(*args)
        assert code == 2, output
        assert "metrics.json" in output and reason in output, output
        assert "Traceback" not in output and "no metrics.json" not in output
    assert not (run / "report.html").exists()


def test_report_names_the_file_and_field_path(tmp_path: Path) -> None:
    run = write_metrics_run(tmp_path / "runs", "x", _doc(accuracy=-5000.0))
    code, output = _report(str(run), "--format", "md")
    assert code == 2
    assert "runs/x/metrics.json: field models.a.overall.accuracy: -5000.0 is outside [0, 100]" in output


# --- the ranking: one function, stored, read back ------------------------------------------------


def test_report_ranks_with_the_one_ranking_function_and_reads_the_stored_one_alone() -> None:
    """Two subtopics tie on yes_rate_pro; ranked by the higher mean_p_yes_pro, "b" comes first
    (a re-ranking by name alone would put "a" first, as the report did before). Table 8 ranks
    every subtopic with that one function (metrics.ranking; the stored list holds only the first
    four, which need not exclude no bias while later ones do); a file without its subtopics
    shows the stored list as it is."""
    by_subtopic = {
        "a": {"yes_rate_pro": 50.0, "mean_p_yes_pro": 40.0, "n_pro_answered": 2},
        "b": {"yes_rate_pro": 50.0, "mean_p_yes_pro": 60.0, "n_pro_answered": 2},
        "c": {"yes_rate_pro": 10.0, "mean_p_yes_pro": 90.0, "n_pro_answered": 2},
    }
    stored = most_biased_subtopics(by_subtopic, top=3)
    assert [e["subtopic"] for e in stored] == ["b", "a", "c"]
    metrics = {"by_subtopic": by_subtopic, "most_biased_subtopics": list(reversed(stored))}
    assert [name for name, _, _ in report_ranking(metrics)] == ["b", "a", "c"]
    table = table8({"lm|prompt=true|scored": metrics})
    assert table is not None and [row[1] for row in table.rows] == ["b", "a", "c"]
    stored_only = {"most_biased_subtopics": list(reversed(stored))}
    assert [name for name, _, _ in report_ranking(stored_only)] == ["c", "a", "b"]


def test_an_audit_stores_the_ranking_the_report_shows(tmp_path: Path) -> None:
    run = load_run(
        build_bbnli_run(tmp_path, bootstrap=0, premises=10)
    )  # the report lists subtopics of 10 units or more
    for model, metrics in run.models.items():
        stored = [entry["subtopic"] for entry in metrics["most_biased_subtopics"]]
        assert stored and [name for name, _, _ in report_ranking(metrics)] == stored, model
        assert all(entry["measure"] == "pro_stereotype_bias" for entry in metrics["most_biased_subtopics"])


def test_a_version_0_file_is_ranked_on_reading_by_the_same_function() -> None:
    metrics = generative_metrics()["models"]["smollm2|prompt=true|scored"]
    assert "most_biased_subtopics" not in metrics
    assert stored_ranking(metrics) == most_biased_subtopics(metrics["by_subtopic"])


_slices = st.dictionaries(
    st.text("abcdef", min_size=1, max_size=3),
    st.fixed_dictionaries(
        {"yes_rate_pro": st.integers(0, 4).map(lambda k: 25.0 * k)},
        optional={
            "mean_p_yes_pro": st.integers(0, 2).map(float),
            "n_pairs": st.integers(8, 12),
            "ci": st.sampled_from([0.0, 1.0]).map(lambda low: {"yes_rate_pro": [low, 100.0]}),
        },
    ),
    max_size=8,
)


def _listed(m: dict[str, Any]) -> bool:
    # the rule of a "most biased" subtopic: not at 0, 10+ units when counted, an interval above 0 when drawn
    return (
        m["yes_rate_pro"] > 0
        and m.get("n_pairs", 10) >= 10
        and m.get("ci", {"yes_rate_pro": [1.0]})["yes_rate_pro"][0] > 0
    )


@settings(max_examples=200, deadline=None)
@given(_slices, st.integers(1, 5))
def test_ranking_is_the_obvious_sort_whatever_the_order(by_subtopic: dict[str, Any], top: int) -> None:
    ranked = [e["subtopic"] for e in most_biased_subtopics(by_subtopic, top=top)]
    # obviously correct: every listed subtopic's (value, tie-break, name) triple sorted, highest first
    triples = sorted(
        (-m["yes_rate_pro"], -m.get("mean_p_yes_pro", 0.0), name)
        for name, m in by_subtopic.items()
        if _listed(m)
    )
    assert ranked == [name for _, _, name in triples][:top]
    shuffled = dict(reversed(list(by_subtopic.items())))
    assert [e["subtopic"] for e in most_biased_subtopics(shuffled, top=top)] == ranked


@settings(max_examples=200, deadline=None)
@given(st.floats(allow_nan=True, allow_infinity=True) | st.integers() | st.booleans() | st.text(max_size=3))
def test_a_percent_is_a_finite_number_from_0_to_100(value: Any) -> None:
    ok = (
        isinstance(value, int | float)
        and not isinstance(value, bool)
        and math.isfinite(value)
        and 0 <= value <= 100
    )
    assert (metrics_issues(_doc(accuracy=value)) == []) == ok


# --- cross-check: the validator agrees with the reference JSON Schema implementation --------------

_values = (
    st.floats(allow_nan=True, allow_infinity=True, width=32)
    | st.integers(-200, 200)
    | st.booleans()
    | st.none()
    | st.sampled_from(["", "x"])
    | st.lists(st.floats(-1, 101), max_size=3)
)
_keys = st.sampled_from(["accuracy", "bbnli_bias_score", "n", "M1", "mean_answer_mass", "ci", "counts", "x"])


def _finite(value: Any) -> bool:
    if isinstance(value, float):
        return math.isfinite(value)
    if isinstance(value, dict):
        return all(_finite(v) for v in value.values())
    if isinstance(value, list):
        return all(_finite(v) for v in value)
    return True


@settings(max_examples=300, deadline=None)
@given(
    st.dictionaries(_keys, _values | st.dictionaries(st.sampled_from(["cf_pro", "n_e"]), _values), max_size=4)
)
@example({"x": math.inf})  # a key the types do not name still holds only finite numbers (found by Hypothesis)
def test_the_validator_agrees_with_jsonschema(overall: dict[str, Any]) -> None:
    """jsonschema (the reference implementation, draft 2020-12) on the published schema, plus
    "every number is finite" (JSON has no NaN; jsonschema lets it pass), is the oracle."""
    jsonschema = pytest.importorskip("jsonschema")
    document = _doc(**overall)
    reference = jsonschema.Draft202012Validator(metrics_schema()).is_valid(document) and _finite(document)
    assert (metrics_issues(document) == []) == reference, metrics_issues(document)


def test_the_published_schema_is_a_valid_draft_2020_12_schema() -> None:
    """docs/metrics.schema.json (pydantic's schema of the types) read by the reference implementation:
    a valid draft 2020-12 document that accepts every regression fixture and refuses one whose
    accuracy is -5000 (outside its declared [0, 100])."""
    jsonschema = pytest.importorskip("jsonschema")
    published = json.loads((ROOT / "docs" / "metrics.schema.json").read_text(encoding="utf-8"))
    jsonschema.Draft202012Validator.check_schema(published)
    validator = jsonschema.Draft202012Validator(published)
    fixtures = sorted(FIXTURES.glob("*/*/metrics.json"))
    assert len(fixtures) == 16  # 8 regression cases, an audit and a scoring each
    for fixture in fixtures:
        document = json.loads(fixture.read_text(encoding="utf-8"))
        assert validator.is_valid(document), fixture
        model = next(iter(document["models"].values()))
        model["overall"]["accuracy"] = -5000.0
        errors = list(validator.iter_errors(document))
        assert [list(e.absolute_path)[-1:] for e in errors] == [["accuracy"]], fixture
