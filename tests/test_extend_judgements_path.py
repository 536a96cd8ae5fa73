"""A judgements file named for an unvalidated extension run must exist: the run would otherwise go
on without every human judgement, saying nothing (run.json still named the file as if read)."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

import nlibias
from nlibias.cli.main import app
from nlibias.errors import ConfigError, SourceError
from nlibias.extension.config import load_config
from nlibias.jobs.extend import extend_config


def test_a_missing_judgements_file_is_refused_with_unvalidated(tmp_path: Path) -> None:
    missing = tmp_path / "no-such.csv"
    with pytest.raises(ConfigError, match="does not exist, and an unvalidated run would go on") as error:
        nlibias.extend(out_dir=tmp_path / "run", fill_model="fake", classifiers="fake:a", unvalidated=True,
                       judgements=missing)  # fmt: skip
    assert error.value.parameter == "judgements" and not (tmp_path / "run").exists()

    result = CliRunner().invoke(app, ["extend", "--out", str(tmp_path / "run"), "--fill-model", "fake",
                                      "--filter-model", "fake:a", "--unvalidated", "--judgements", str(missing)])  # fmt: skip
    assert result.exit_code == 2 and f"--judgements '{missing}' does not exist" in result.output, (
        result.output
    )
    assert "Traceback" not in result.output and not (tmp_path / "run").exists()


def test_the_same_in_a_configuration_file_names_its_line(tmp_path: Path) -> None:
    config = tmp_path / "extend.yaml"
    config.write_text(f"validation:\n  unvalidated: true\n  judgements: {tmp_path / 'no-such.csv'}\n")
    with pytest.raises(SourceError, match=r"extend.yaml:3: field validation.judgements: .* does not exist"):
        load_config(config)


def test_a_judgements_file_still_to_be_filled_is_fine_without_unvalidated(tmp_path: Path) -> None:
    # the run stops to await judgements there: naming the file before it exists is the workflow
    settings = extend_config(None, judgements=tmp_path / "later.csv", classifiers="fake:a")
    assert settings.validation.judgements == str(tmp_path / "later.csv")
    (tmp_path / "j.csv").write_text("id\n")
    both = extend_config(None, judgements=tmp_path / "j.csv", unvalidated=True, classifiers="fake:a")
    assert both.validation.unvalidated is True
