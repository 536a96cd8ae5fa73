"""A measure that is null (no data in its slice) in every output of ``nlibias report`` and
``audit``: the HTML report (with and without figures, and written to disk), the text tables,
the paper tables and the comparison never raise on it, and its cell shows the outputs' mark for
a missing value ("–" in HTML and paper tables, "-" in text tables, "n/a" in the verdict), never
``nan`` or ``None``, nor an interval beside no value.

The property starts from each run of ``tests/fixtures/regression`` (copied first: the fixtures
are never written) and nulls a Hypothesis-chosen subset of its measures: any number of a model's
``overall`` or of a ``by_*`` slice that is not a count (``n``, ``n_*``), entries of their ``ci``
maps, and whole slices (every measure and interval null: a slice without data). A slice's whole
``ci`` set to null is refused by the metrics.json schema when read (a SourceError naming the
field), so it is set on the loaded run's metrics instead, as the report functions get them.
"""

from __future__ import annotations

import json
import re
import shutil
import warnings
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from nlibias.catalog.registry import benchmark_for_source
from nlibias.metrics.verdicts import run_verdicts
from nlibias.report.compare import compare, format_comparison
from nlibias.report.html import render_report, write_report
from nlibias.report.load import Run, load_runs
from nlibias.report.metric_readers import slice_kinds
from nlibias.report.paper_tables import MEASURE_TITLES, render_tables
from nlibias.report.tables import format_all_tables
from nlibias.report.tp_correlation import correlation_points, correlation_table, plot_tp_vs_nli
from nlibias.report.verdict_block import verdict_block
from nlibias.testing.report_runs import write_metrics_run

REGRESSION = Path(__file__).parent / "fixtures" / "regression"
RUNS = sorted(p.parent for p in REGRESSION.glob("*/*/metrics.json"))
AUDIT_RUNS = [run for run in RUNS if run.name == "audit"]  # the figures: one run of each kind
COUNT_KEYS = frozenset({"n", "degenerate_pairs", "repeated_rows"})
NULLED = settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
FIGURES = settings(max_examples=4, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
BAD_TEXT = re.compile(r"\b(?:nan|NaN|None|inf)\b")
# a value's interval shown beside no value: "– [1.00, 2.00]", "n/a [..]", a comparison's "– Δ"
INTERVAL_WITHOUT_VALUE = re.compile(r'(?:–|n/a|(?<=\s)-)\s*(?:<span class="ci">\s*)?(?:\[|Δ)')
SlicePath = tuple[str, ...]
"""``("models", model, "overall")`` or ``("models", model, "by_domain", "race")``."""


def _run_id(run: Path) -> str:
    return f"{run.parent.name}/{run.name}"


def _is_measure(key: str, value: Any) -> bool:
    number = isinstance(value, int | float) and not isinstance(value, bool)
    return number and key not in COUNT_KEYS and not key.startswith("n_")


def _slice_paths(metrics: Mapping[str, Any]) -> list[SlicePath]:
    paths: list[SlicePath] = []
    for model, entry in metrics["models"].items():
        paths.append(("models", model, "overall"))
        for key, group in entry.items():
            if key.startswith("by_") and isinstance(group, Mapping):
                paths += [("models", model, key, name) for name, m in group.items() if isinstance(m, Mapping)]
    return paths


def _at(metrics: Mapping[str, Any], path: SlicePath) -> dict[str, Any]:
    found: Any = metrics
    for key in path:
        found = found[key]
    return found


def _targets(metrics: Mapping[str, Any], path: SlicePath) -> list[tuple[SlicePath, str]]:
    """What can be nulled in one slice: its measures (``key``) and its intervals (``ci.key``)."""
    m = _at(metrics, path)
    found = [(path, key) for key, value in m.items() if _is_measure(key, value)]
    ci = m.get("ci")
    if isinstance(ci, Mapping):
        found += [(path, f"ci.{key}") for key, bounds in ci.items() if bounds is not None]
    return found


@dataclass(frozen=True)
class Nulls:
    """What one example sets to null: measures and ``ci`` entries (in the file), whole ``ci``
    maps (in the loaded metrics)."""

    values: frozenset[tuple[SlicePath, str]]
    ci_maps: frozenset[SlicePath]

    def write(self, metrics: dict[str, Any]) -> None:
        for path, key in sorted(self.values):
            m = _at(metrics, path)
            if key.startswith("ci."):
                m["ci"][key.removeprefix("ci.")] = None
            else:
                m[key] = None

    def set_ci_maps(self, metrics: Mapping[str, Any]) -> None:
        for path in self.ci_maps:
            _at(metrics, path)["ci"] = None

    def measures(self) -> set[tuple[SlicePath, str]]:
        """The measures nulled (not their intervals)."""
        return {(path, key) for path, key in self.values if not key.startswith("ci.")}


@st.composite
def nulls(draw: st.DrawFn, metrics: Mapping[str, Any]) -> Nulls:
    slices = _slice_paths(metrics)
    every = [target for path in slices for target in _targets(metrics, path)]
    chosen = set(draw(st.sets(st.sampled_from(every), max_size=40)))
    for path in draw(st.sets(st.sampled_from(slices), max_size=4)):  # slices without data
        chosen |= set(_targets(metrics, path))
    ci_maps = draw(st.sets(st.sampled_from(slices), max_size=3))
    return Nulls(frozenset(chosen), frozenset(ci_maps))


def _copy(run: Path, root: Path, name: str) -> Path:
    """The fixture run copied under ``root`` (once: each example rewrites its metrics.json)."""
    out = root / name / run.name
    if not out.exists():
        shutil.copytree(run, out)
    return out


def _load(run_dir: Path, metrics: dict[str, Any], drawn: Nulls) -> list[Run]:
    """``metrics`` with ``drawn``'s nulls written to the run and read back as the report reads it."""
    drawn.write(metrics)
    (run_dir / "metrics.json").write_text(json.dumps(metrics), encoding="utf-8")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the fixtures predate run manifests
        runs = load_runs([run_dir])
    drawn.set_ci_maps(runs[0].metrics)
    return runs


def _text_outputs(run: Run, reference: Run) -> dict[str, str]:
    """The text tables of ``audit`` (both slicings), ``report --format`` and ``--compare``."""
    benchmark = benchmark_for_source(run.source)
    outputs = {
        f"tables by {by}": format_all_tables(run.metrics, benchmark, by=by) for by in ("domain", "subtopic")
    }
    for fmt in ("md", "latex", "csv"):
        outputs[f"paper tables ({fmt})"] = render_tables([(run.label, run.source, run.models)], fmt)
    comparison = compare([reference, run])
    outputs |= {f"comparison ({fmt})": format_comparison(comparison, fmt) for fmt in ("md", "csv")}
    return outputs


def _shown(text: str) -> str:
    """Text as a reader sees it: the page's head (style), script and figures (base64) left out."""
    text = re.sub(r"data:image/[^\"']*", "", text.split("<body>", 1)[-1])
    return re.sub(r"<script>.*?</script>", "", text, flags=re.S)


def _assert_no_bad_text(outputs: Mapping[str, str]) -> None:
    for name, text in outputs.items():
        shown = _shown(text)
        bad = BAD_TEXT.search(shown) or INTERVAL_WITHOUT_VALUE.search(shown)
        assert bad is None, f"{name}: {shown[max(0, bad.start() - 200) : bad.end() + 80]!r}"


# --- reading the cells of the rendered tables ------------------------------------------------------


class _Tables(HTMLParser):
    """Every HTML table as ``(headers, rows)``, each cell's text unescaped."""

    def __init__(self) -> None:
        super().__init__()
        self.tables: list[tuple[list[str], list[list[str]]]] = []
        self._cell: list[str] | None = None
        self._row: list[str] = []

    def handle_starttag(self, tag: str, attrs: Any) -> None:
        if tag == "table":
            self.tables.append(([], []))
        elif tag == "tr":
            self._row = []
        elif tag in ("td", "th"):
            self._cell = []

    def handle_endtag(self, tag: str) -> None:
        if tag in ("td", "th") and self._cell is not None and self.tables:
            text = " ".join("".join(self._cell).split())
            (self.tables[-1][0] if tag == "th" else self._row).append(text)
            self._cell = None
        elif tag == "tr" and self._row and self.tables:
            self.tables[-1][1].append(self._row)

    def handle_data(self, data: str) -> None:
        if self._cell is not None:
            self._cell.append(data)


# header -> measure, per table (the first header that tells the table apart)
HTML_COLUMNS = {
    "Mispred": {"Mispred": "misprediction_rate", "Pro": "cf_pro", "Anti": "cf_anti", "Error": "cf_error"},
    "Aggregate": {
        "Pro": "pro_stereotype_bias",
        "Anti": "anti_stereotype_bias",
        "Aggregate": "bbnli_bias_score",
    },
    "accuracy %": {"accuracy %": "accuracy", "test accuracy %": "test_accuracy"},
}
TEXT_COLUMNS = {
    ("Model", "Slice", "n", "Pro", "Anti", "Aggregate"): HTML_COLUMNS["Aggregate"],
    ("Model", "Slice", "pairs", "Mispred", "Pro", "Anti", "Error"): HTML_COLUMNS["Mispred"],
    ("Model", "Slice", "n", "Accuracy", "n test", "Test acc", "no answer"): {
        "Accuracy": "accuracy",
        "Test acc": "test_accuracy",
    },
}
TITLED = {title: key for key, title in MEASURE_TITLES.items()}


def _html_cells(html: str, metrics: Mapping[str, Any]) -> Iterator[tuple[SlicePath, str, str]]:
    """``(slice, measure, cell text)`` of every measure cell of the report's per-slice tables
    (pro vs anti, error split, accuracy, benchmark measures)."""
    parser = _Tables()
    parser.feed(html)
    for headers, rows in parser.tables:
        if "model" not in headers or not ({"domain", "slice"} & set(headers)):
            continue
        columns = next((c for key, c in HTML_COLUMNS.items() if key in headers), None)
        if columns is None:  # the benchmark measures: a measure's name or title, its unit after it
            columns = {h: TITLED.get(h.split(" (")[0], h.split(" (")[0]) for h in headers[3:]}
        by_domain = "domain" in headers
        for row in rows:
            model = row[headers.index("model")]
            path = _slice_named(
                metrics, model, row[headers.index("domain" if by_domain else "slice")], by_domain
            )
            for i, header in enumerate(headers):
                if header in columns and path is not None:
                    yield path, columns[header], row[i]


def _slice_named(metrics: Mapping[str, Any], model: str, name: str, by_domain: bool) -> SlicePath | None:
    entry = metrics["models"].get(model)
    if entry is None:
        return None
    kinds = ["domain"] if by_domain else [k for k in slice_kinds(entry) if k != "subtopic"]
    if by_domain and not isinstance(entry.get("by_domain"), Mapping):
        kinds = []
    several = len(kinds) > 1
    for kind in kinds:
        for slice_name in entry.get(f"by_{kind}", {}):
            if (f"{kind}: {slice_name}" if several else str(slice_name)) == name:
                return ("models", model, f"by_{kind}", slice_name)
    return ("models", model, "overall") if name == "all" else None


def _text_cells(text: str, by: str) -> Iterator[tuple[SlicePath, str, str]]:
    """``(slice, measure, cell text)`` of the BBNLI text tables (Tables 5 and 7, accuracy)."""
    lines = text.splitlines()
    for i, line in enumerate(lines[:-1]):
        headers = tuple(h.strip() for h in line.split(" | "))
        if headers not in TEXT_COLUMNS or not re.fullmatch(r"-+(\+-+)+", lines[i + 1]):
            continue
        for row_line in lines[i + 2 :]:
            cells = [c.strip() for c in row_line.split(" | ")]
            if len(cells) != len(headers):
                break
            model, name = cells[0], cells[1]
            path: SlicePath = (
                ("models", model, "overall") if name == "all" else ("models", model, f"by_{by}", name)
            )
            for header, cell in zip(headers, cells, strict=True):
                if header in TEXT_COLUMNS[headers]:
                    yield path, TEXT_COLUMNS[headers][header], cell


def _assert_nulls_shown(
    drawn: Nulls, html: str, tables: Mapping[str, str], metrics: Mapping[str, Any]
) -> int:
    """Each nulled measure's cell is "–" in the HTML tables, "-" in the text tables, and its
    verdict reading (headline measures, accuracy) "n/a"; how many nulled cells were read."""
    nulled = drawn.measures()
    cells = [(p, m, c, "–") for p, m, c in _html_cells(html, metrics)]
    for by in ("domain", "subtopic"):
        cells += [(p, m, c, "-") for p, m, c in _text_cells(tables[f"tables by {by}"], by)]
    shown = [(path, measure, cell, mark) for path, measure, cell, mark in cells if (path, measure) in nulled]
    for path, measure, cell, mark in shown:
        assert cell == mark, f"{'.'.join(path)} {measure}: shown as {cell!r}, not {mark!r}"
    for verdict in run_verdicts(metrics):
        overall = ("models", verdict.model, "overall")
        readings = [*verdict.headline, *([verdict.accuracy] if verdict.accuracy is not None else [])]
        assert {m for p, m in nulled if p == overall and m == "accuracy"} <= {r.measure for r in readings}
        for reading in readings:
            if (overall, reading.measure) in nulled:
                assert reading.formatted() == "n/a"
    return len(shown)


# --- the properties ------------------------------------------------------------------------------


@pytest.mark.parametrize("run", RUNS, ids=_run_id)
@NULLED
@given(data=st.data())
def test_null_measures_render_as_missing_everywhere(run: Path, tmp_path: Path, data: st.DataObject) -> None:
    """Without figures: the HTML report (alone and beside the run as it was), every text table."""
    metrics = json.loads((run / "metrics.json").read_text(encoding="utf-8"))
    drawn = data.draw(nulls(metrics), label="nulls")
    reference = _copy(run, tmp_path, "reference")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        original = load_runs([reference])[0]
    (loaded,) = _load(_copy(run, tmp_path, "nulled"), metrics, drawn)
    report = render_report([loaded], plots=False)
    beside = render_report([original, loaded], plots=False)
    tables = _text_outputs(loaded, original)
    _assert_no_bad_text({"report": report.html, "report beside the original": beside.html, **tables})
    _assert_nulls_shown(drawn, report.html, tables, loaded.metrics)


@FIGURES
@given(data=st.data())
def test_null_measures_with_figures_render_and_are_written(tmp_path: Path, data: st.DataObject) -> None:
    """With figures (slow: a few examples over one run of each kind): nothing raises, and the
    report and its figures are written."""
    run = data.draw(st.sampled_from(AUDIT_RUNS), label="run")
    metrics = json.loads((run / "metrics.json").read_text(encoding="utf-8"))
    drawn = data.draw(nulls(metrics), label="nulls")
    runs = _load(_copy(run, tmp_path, run.parent.name), metrics, drawn)
    out = tmp_path / run.parent.name / "report.html"
    report = write_report(runs, out, plots=True)
    _assert_no_bad_text({"report": out.read_text(encoding="utf-8")})
    for plot in report.plots:
        assert (out.parent / "report_files" / f"{plot.name}.png").stat().st_size > 0


@pytest.mark.parametrize("run", RUNS, ids=_run_id)
def test_write_report_with_every_slice_without_data(run: Path, tmp_path: Path) -> None:
    """Every measure and interval of every ``by_*`` slice null, and ``overall``'s intervals: the
    report is written, each such cell shows "–"."""
    metrics = json.loads((run / "metrics.json").read_text(encoding="utf-8"))
    paths = [p for p in _slice_paths(metrics) if p[2] != "overall"]
    overall_ci = {
        t for p in _slice_paths(metrics) if p[2] == "overall" for t in _targets(metrics, p) if "." in t[1]
    }
    drawn = Nulls(frozenset({t for p in paths for t in _targets(metrics, p)} | overall_ci), frozenset())
    runs = _load(_copy(run, tmp_path, "run"), metrics, drawn)
    out = tmp_path / "report.html"
    write_report(runs, out, plots=False)
    html = out.read_text(encoding="utf-8")
    _assert_no_bad_text({"report": html})
    assert _assert_nulls_shown(drawn, html, _text_outputs(runs[0], runs[0]), runs[0].metrics) > 0


# --- each defect the property found, as a case of its own -------------------------------------------


def _two_models(a: dict[str, Any], b: dict[str, Any]) -> dict[str, Any]:
    return {"source": "bbnli", "models": {"a": {"overall": a}, "b": {"overall": b}}}


def test_comparison_cell_without_a_value_shows_a_dash_not_its_interval(tmp_path: Path) -> None:
    """A null accuracy beside its interval (``{"accuracy": null, "ci": {"accuracy": [10, 20]}}``)
    was shown in the HTML comparison as "– [10.00, 20.00]", and the other model, whose interval
    does not overlap that one, was marked as differing from a reference without a value (◆,
    "1 marked."); the Markdown comparison marked it with "*"."""
    null = {"n": 40, "accuracy": None, "ci": {"accuracy": [10.0, 20.0]}}
    full = {"n": 40, "accuracy": 50.0, "ci": {"accuracy": [45.0, 55.0]}}
    for a, b in ((null, full), (full, null)):
        runs = load_runs([write_metrics_run(tmp_path, f"run-{a is null}", _two_models(a, b))])
        report = render_report(runs, plots=False)
        section = report.html.split('<section id="comparison">')[1].split("</section>")[0]
        note, table = section.split("<table>")
        assert "0 marked." in note and "[10.00, 20.00]" not in table and "◆" not in table
        assert '<td class="num">–</td>' in table
        comparison = compare(runs)
        assert comparison.n_differences == 0
        assert "*" not in format_comparison(comparison, "md").split("\n\n")[0]


def test_null_accuracy_reads_n_a_in_the_verdict(tmp_path: Path) -> None:
    """A null accuracy was no reading at all: an empty cell in the text verdict ("a | no interval
    | n/a |") beside a model with one, and no accuracy column where no model had one."""
    headline = {"n": 40, "bbnli_bias_score": None, "ci": {"bbnli_bias_score": None, "accuracy": None}}
    metrics = _two_models({**headline, "accuracy": None}, {**headline, "accuracy": 61.0})
    header, _, *rows = (re.split(r"\s*\|\s*", line) for line in verdict_block(metrics).splitlines()[1:])
    column = header.index("accuracy")
    assert [row[column] for row in rows] == ["n/a", "61.00"]
    alone = {"source": "bbnli", "models": {"a": {"overall": {**headline, "accuracy": None}}}}
    html = render_report(load_runs([write_metrics_run(tmp_path, "alone", alone)]), plots=False).html
    verdict = html.split('<section id="verdict">')[1].split("</section>")[0]
    assert 'data-label="accuracy" class=num>n/a</td>' in verdict


def _tp_runs(tp_scores: list[float | None]) -> list[tuple[str, dict[str, Any]]]:
    m1 = [40.0, 55.0, 48.0, 60.0]
    return [
        (
            f"r{i}",
            {
                "nli": {"overall": {"M1": m1[i], "M2": None}},
                "lm|tp=shared": {"overall": {"tp_bias_score": tp}},
            },
        )
        for i, tp in enumerate(tp_scores)
    ]


def test_tp_vs_nli_leaves_out_a_null_tp_score() -> None:
    """A TP model whose ``tp_bias_score`` is null was a point at NaN: the R² table showed
    "nan" for TP vs M1 (with that point counted in n), and the scatter plot raised
    numpy.linalg.LinAlgError ("SVD did not converge") fitting its line."""
    runs = _tp_runs([50.0, None, 70.0, 62.0])
    assert [p["TP"] for p in correlation_points(runs)] == [50.0, 70.0, 62.0]
    table = correlation_table(runs)
    assert table is not None
    tp_m1 = next(row for row in table.rows if row[0] == "TP vs. M1")
    assert tp_m1[3] == 3 and isinstance(tp_m1[1], float) and tp_m1[1] == tp_m1[1]  # not NaN
    assert next(row for row in table.rows if row[0] == "TP vs. M2")[1:] == [None, None, 0]
    pytest.importorskip("matplotlib", reason="figures need matplotlib (pip install -e .[report])")
    plot = plot_tp_vs_nli(runs)
    assert plot is not None and "n = 3" in plot.caption
    assert plot_tp_vs_nli(_tp_runs([None, None, None, None])) is None
