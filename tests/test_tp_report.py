"""TP vs NLI across runs: Table 3 with TP beside M1, the R² table, the scatter plot and item-level
agreement read from the runs' files (``nlibias report A B C --compare``)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest
from typer.testing import CliRunner

from nlibias.cli.main import app
from nlibias.report.tp_correlation import correlation_rows
from nlibias.runtime.model_set import ModelSet
from nlibias.runtime.options import RunOptions


@pytest.fixture(scope="module")
def wq_runs(tmp_path_factory: pytest.TempPathFactory, wq_nli_csv: Path, tiny_mlm_dir: Path,
            tiny_causal_dir: Path) -> list[Path]:  # fmt: skip
    from nlibias.jobs.audit import run_audit
    from nlibias.jobs.expand import expand_to_dir

    base = tmp_path_factory.mktemp("wq-tp")
    lines = wq_nli_csv.read_text(encoding="utf-8").splitlines(True)
    small = base / "wq.csv"
    small.write_text("".join(lines[:1] + lines[1:3000:100]), encoding="utf-8")  # 30 rows
    expand_to_dir("wq-nli", base / "wq", small)
    runs = []
    for name, options in (
        ("a", {"mlm": [str(tiny_mlm_dir)]}),
        ("b", {"causal": [str(tiny_causal_dir)]}),
        ("c", {"mlm": [str(tiny_mlm_dir)], "tp_variants": ["whole"]}),
    ):
        run_audit(
            base / "wq", ModelSet.of([f"fake:{name}"], **options), out_dir=base / name,
            run=RunOptions(cache=base / "c.sqlite", bootstrap=0, progress=False),
        )  # fmt: skip
        runs.append(base / name)
    return runs


def test_compare_prints_r2_table_and_item_agreement(wq_runs: list[Path]) -> None:
    result = CliRunner().invoke(app, ["report", *map(str, wq_runs), "--compare", "--format", "md"])
    assert result.exit_code == 0, result.output
    assert "TP vs. M1" in result.output and "M5 vs. M6" in result.output
    assert "Item-level agreement" in result.output


def test_r2_rows_equal_numpy_over_the_runs_points(wq_runs: list[Path]) -> None:
    from nlibias.report.load import load_runs

    loaded = load_runs(wq_runs)
    models = [(r.label, r.models) for r in loaded]
    tp = [
        next(m["overall"]["tp_bias_score"] for m in r.models.values() if "tp_bias_score" in m["overall"])
        for r in loaded
    ]
    m1 = [next(m["overall"]["M1"] for m in r.models.values() if "M1" in m["overall"]) for r in loaded]
    row = correlation_rows(models)[0]
    assert row["n"] == 3
    if len(set(tp)) > 1 and len(set(m1)) > 1:
        assert row["r2"] == pytest.approx(np.corrcoef(tp, m1)[0, 1] ** 2)


def test_html_report_has_the_scatter_plot_and_table3_tp_columns(wq_runs: list[Path], tmp_path: Path) -> None:
    pytest.importorskip("matplotlib")
    out = tmp_path / "r.html"
    result = CliRunner().invoke(app, ["report", *map(str, wq_runs), "--compare", "--out", str(out)])
    assert result.exit_code == 0, result.output
    html = out.read_text(encoding="utf-8")
    assert 'id="tp-nli"' in html and "TP bias score vs M1" in html
    assert "WinoQueer TP bias scores" in html
    assert (tmp_path / "r_files" / "tp_vs_nli.png").is_file()


def test_a_run_of_several_tp_and_nli_models_gives_no_point_and_a_model_counts_once() -> None:
    """Every (TP, NLI) crossing of one run was a point: 2 TP x 2 NLI models give four points whose
    covariance factors into Σ(x - x̄) Σ(y - ȳ) = 0, so R² was 0 whatever the models did. Such a
    run is left out and named; the same model in two runs (same key, same values) counts once."""
    from nlibias.report.tp_correlation import correlation_points, correlation_table

    def run(label: str, tp: dict[str, float], m1: dict[str, float]) -> tuple[str, dict[str, Any]]:
        models = {k: {"overall": {"tp_bias_score": v}} for k, v in tp.items()}
        models |= {k: {"overall": {"M1": v, "M2": v / 2}} for k, v in m1.items()}
        return label, models

    crossed = run("both", {"t1": 40.0, "t2": 70.0}, {"n1": 50.0, "n2": 80.0})
    single = [
        run(f"r{i}", {f"t{i}": tp}, {f"n{i}": m1})
        for i, (tp, m1) in enumerate([(40, 50), (55, 80), (70, 60)])
    ]
    assert correlation_points([crossed]) == []
    table = correlation_table([crossed])
    assert table is not None and "left out of TP vs NLI: both (several TP or NLI models" in table.title
    rows = correlation_rows([*single, single[0], crossed])
    tp_m1 = next(r for r in rows if r["pair"] == "TP vs. M1")
    # three points (40, 50), (55, 80), (70, 60): r by hand = 150 / sqrt(450 * 466.67) = 0.3273
    assert tp_m1["n"] == 3
    assert tp_m1["r"] == pytest.approx(np.corrcoef([40, 55, 70], [50, 80, 60])[0, 1])
    assert tp_m1["r"] == pytest.approx(150 / np.sqrt(450 * (1400 / 3)))
    # NLI among themselves: n0, n1, n2 (r0 twice: once) and the crossed run's n1, n2 (other values)
    assert next(r for r in rows if r["pair"] == "M1 vs. M2")["n"] == 5
