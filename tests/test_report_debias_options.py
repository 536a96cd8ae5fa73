"""`nlibias report --debias` honours --out (the text tables written there, as with --format) and
refuses the options nothing reads: --format, --compare and --no-plots with --debias, --no-plots
with --format (only the HTML report has figures). Before, they were ignored without a word."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

import nlibias
from nlibias.cli.main import app
from nlibias.errors import ConfigError
from nlibias.jobs.debias_compare import COMPARISON_JSON

runner = CliRunner()
PREMISES = ["The nurse is sitting on a bench.", "A carpenter is walking to the store."]


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A tiny occupation audit of two fakes: ``a`` before, ``b`` after (pair ``a=b``)."""
    root = tmp_path_factory.mktemp("debias")
    (root / "premises.txt").write_text("\n".join(PREMISES) + "\n")
    samples = nlibias.expand("occupations", root / "premises.txt", out_dir=root / "occ", balance=False)
    nlibias.audit(
        samples, models=["fake:a", "fake:b"], cache=False, bootstrap=0, progress=False, out_dir=root / "run"
    )
    return root / "run"


def test_out_gets_the_debias_tables(run: Path, tmp_path: Path) -> None:
    target = tmp_path / "tables" / "debias.txt"
    result = nlibias.make_report(run, target, pairs=["a=b"])
    assert result.kind == "debias" and result.tables_out == target
    assert target.read_text(encoding="utf-8") == result.text and "paper 004 Table 7 layout" in result.text
    assert result.out == run / COMPARISON_JSON and result.to_dict()["tables_out"] == str(target)

    cli_target = tmp_path / "cli.txt"
    shown = runner.invoke(app, ["report", str(run), "--debias", "--pair", "a=b", "--out", str(cli_target)])
    assert shown.exit_code == 0, shown.output
    assert cli_target.read_text(encoding="utf-8") == result.text
    assert f"wrote {cli_target}" in shown.stdout and "Table 7" not in shown.stdout  # the file, not stdout
    assert f"wrote {run / COMPARISON_JSON}" in shown.stdout
    as_json = runner.invoke(
        app, ["report", str(run), "--pair", "a=b", "--out", str(cli_target), "--json", "--quiet"]
    )
    assert as_json.exit_code == 0, as_json.output
    assert json.loads(as_json.stdout)["tables_out"] == str(cli_target)


def test_without_out_the_tables_go_to_stdout(run: Path) -> None:
    shown = runner.invoke(app, ["report", str(run), "--pair", "a=b"])
    assert shown.exit_code == 0, shown.output
    assert "paper 004 Table 7 layout" in shown.stdout
    assert nlibias.make_report(run, pairs=["a=b"]).tables_out is None


@pytest.mark.parametrize(
    ("kwargs", "parameter", "message"),
    [
        ({"fmt": "md"}, "fmt", r"^fmt 'md' applies to the paper tables .* text only; leave fmt out$"),
        ({"fmt": "latex"}, "fmt", r"^fmt 'latex' applies to the paper tables"),
        ({"compare": True}, "compare", r"^compare applies to .* models of one run; leave compare out$"),
        ({"plots": False}, "plots", r"^plots applies to the HTML report .*before/after tables"),
    ],
)
def test_the_function_refuses_what_debias_does_not_read(
    run: Path, tmp_path: Path, kwargs: dict, parameter: str, message: str
) -> None:
    out = tmp_path / "x.html"
    for how in ({"debias": True, "pairs": ["a=b"]}, {"pairs": ["a=b"]}):
        with pytest.raises(ConfigError, match=message) as caught:
            nlibias.make_report(run, out, **how, **kwargs)
        assert caught.value.parameter == parameter
    assert not out.exists()


@pytest.mark.parametrize(
    ("options", "message"),
    [
        (["--format", "latex"], "error: --format 'latex' applies to the paper tables"),
        (["--format", "md"], "(--debias or --pair), which are text only; leave --format out"),
        (["--compare"], "error: --compare applies to the HTML report"),
        (["--no-plots"], "not to the before/after tables (--debias or --pair); leave --no-plots out"),
    ],
)
def test_the_command_refuses_what_debias_does_not_read(
    run: Path, tmp_path: Path, options: list[str], message: str
) -> None:
    out = tmp_path / "x.html"
    shown = runner.invoke(app, ["report", str(run), "--debias", "--pair", "a=b", "--out", str(out), *options])
    assert shown.exit_code == 2, shown.output
    assert message in " ".join(shown.output.split())
    assert not out.exists()


def test_no_plots_is_refused_with_paper_tables(run: Path, tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"^plots applies to the HTML report .*paper tables") as caught:
        nlibias.make_report(run, fmt="md", plots=False)
    assert caught.value.parameter == "plots"
    out = tmp_path / "tables.md"
    shown = runner.invoke(app, ["report", str(run), "--format", "md", "--no-plots", "--out", str(out)])
    assert shown.exit_code == 2, shown.output
    assert (
        "error: --no-plots applies to the HTML report (its figures), not to the paper tables (--format)"
        in (" ".join(shown.output.split()))
    )
    assert not out.exists()
    assert runner.invoke(app, ["report", str(run), "--format", "md"]).exit_code == 0  # without it: fine


def test_min_effect_without_debias_is_refused(run: Path) -> None:
    with pytest.raises(ConfigError, match=r"^min_effect 2\.0 applies to the before/after tables") as caught:
        nlibias.make_report(run, fmt="md", min_effect=2.0)
    assert caught.value.parameter == "min_effect"
    assert "at least 2 point(s)" in nlibias.make_report(run, pairs=["a=b"], min_effect=2.0).text
