"""Arguments of the wrong type and options that apply to nothing (issue #34): every public function
checks its arguments against its type hints and names the argument (ConfigError.parameter); an
option given where nothing reads it is refused by one function; path variables expand ``~``."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

import nlibias
from nlibias.cli.main import app
from nlibias.errors import ConfigError
from nlibias.runtime.model_set import ModelSet
from nlibias.runtime.options import ModelOptions
from nlibias.schema.declared import is_declared
from nlibias.schema.model_ref import ModelRef

openpyxl = pytest.importorskip("openpyxl")


@pytest.fixture(scope="module")
def samples() -> Any:
    return nlibias.expand("occupations")


@pytest.mark.parametrize(
    ("call", "parameter"),
    [
        (lambda s: nlibias.audit(123), "samples"),
        (lambda s: nlibias.audit(s, models=5, progress=False), "models"),
        (lambda s: nlibias.audit(s, models=["fake:a", 7], progress=False), "models"),
        (lambda s: nlibias.audit(s, models=["fake:a"], bootstrap="10", progress=False), "bootstrap"),
        (lambda s: nlibias.audit(s, models=["fake:a"], bootstrap=True, progress=False), "bootstrap"),
        (lambda s: nlibias.audit(s, models=["fake:a"], progress="no"), "progress"),
        (lambda s: nlibias.audit(s, models=["fake:a"], cache=3.5, progress=False), "cache"),
        (lambda s: nlibias.score(123, "p.jsonl"), "samples"),
        (lambda s: nlibias.score(s, 5), "predictions"),
        (lambda s: nlibias.score(s, "p.jsonl", seed="0"), "seed"),
        (lambda s: nlibias.load_run(5), "directory"),
        (lambda s: nlibias.expand(5), "name"),
        (lambda s: nlibias.expand("occupations", 3), "source"),
        (lambda s: nlibias.expand("occupations", out_dir=1), "out_dir"),
        (lambda s: nlibias.expand("occupations", allow_modified_data="yes"), "allow_modified_data"),
        (lambda s: nlibias.register_benchmark("toy"), "benchmark"),
    ],
)
def test_a_wrong_type_names_the_argument(samples: Any, call: Any, parameter: str) -> None:
    with pytest.raises(ConfigError) as caught:
        call(samples)
    assert caught.value.parameter == parameter
    assert str(caught.value).startswith(f"{parameter} ")


def test_audit_of_an_int_says_what_samples_takes() -> None:
    with pytest.raises(ConfigError, match=r"^samples must be .*str.*Path.*; got int 123$"):
        nlibias.audit(123)


def test_balance_must_be_a_bool(tmp_path: Path) -> None:
    with pytest.raises(ConfigError) as caught:
        nlibias.expand("occupations", balance="no")  # a non-empty string would read as true
    assert caught.value.parameter == "balance" and "bool" in str(caught.value)
    premises = tmp_path / "p.txt"
    premises.write_text("The nurse is resting.\n", encoding="utf-8")
    with pytest.raises(ConfigError, match=r"^balance "):
        nlibias.expand("occupations", premises, balance=0)
    assert len(nlibias.expand("occupations", premises, balance=False)) == 6  # 1 premise x 3 x 2


def test_a_benchmark_named_nothing_is_refused() -> None:
    from nlibias.catalog.registry import get_benchmark

    occupations = get_benchmark("occupations")
    for name in ("", "  "):
        with pytest.raises(ConfigError, match="name") as caught:
            nlibias.register_benchmark(replace(occupations, name=name, sources=("nameless",)), replace=True)
        assert caught.value.parameter == "benchmark"
    with pytest.raises(ConfigError) as caught:
        nlibias.register_benchmark(occupations, replace="yes")
    assert caught.value.parameter == "replace"
    assert "" not in [b["name"] for b in nlibias.list_benchmarks()]


@pytest.mark.parametrize("variable", ["NLIBIAS_CACHE", "NLIBIAS_MODEL_CACHE", "NLIBIAS_DATA_DIR"])
def test_a_tilde_in_a_path_variable_is_the_home_folder(
    variable: str, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    from nlibias.benchmarks.data_locations import candidate_data_dirs
    from nlibias.models.generative.hf_causal import converted_models_dir
    from nlibias.runtime.cache import default_cache_path

    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv(variable, "~/x")
    read = {
        "NLIBIAS_CACHE": default_cache_path,
        "NLIBIAS_MODEL_CACHE": converted_models_dir,
        "NLIBIAS_DATA_DIR": lambda: dict((why, p) for why, p in candidate_data_dirs())["NLIBIAS_DATA_DIR"],
    }[variable]
    assert read() == tmp_path / "x"


def test_every_public_function_checks_its_arguments() -> None:
    import inspect

    public = [getattr(nlibias, name) for name in nlibias.__all__ if not name.startswith("_")]
    functions = [f for f in public if inspect.isfunction(f)]
    assert {f.__name__ for f in functions} >= {"audit", "score", "expand", "load_run", "list_benchmarks"}
    assert [f.__name__ for f in functions if not is_declared(f)] == []
    assert is_declared(nlibias.register_benchmark)
    with pytest.raises(ConfigError) as caught:
        nlibias.explain(5, ["fake:j"])
    assert caught.value.parameter == "run_dir"


# -- options that apply to nothing ----------------------------------------------------------------


def _workbook(path: Path, rows: list[list[Any]], header: list[str]) -> Path:
    book = openpyxl.Workbook()
    sheet = book.active
    sheet.append(header)
    for row in rows:
        sheet.append(row)
    book.save(path)
    return path


def test_hypothesis_templates_with_a_workbook_that_brings_its_hypotheses_is_refused(tmp_path: Path) -> None:
    f, m = "This text speaks of a female profession", "This text speaks of a male profession"
    path = _workbook(
        tmp_path / "own.xlsx",
        [["nurse", "A nurse waits.", "F", f, m]],
        ["occupation", "premise", "gender", "hypothesis_f", "hypothesis_m"],
    )
    for option in ({"hypothesis_templates": "all"}, {"seed": 3}):
        with pytest.raises(ConfigError, match="applies to") as caught:
            nlibias.expand("occupations", path, **option)
        assert caught.value.parameter == next(iter(option))
    args = ["expand", "occupations", "--source", str(path), "--hypothesis-templates", "all"]
    result = CliRunner().invoke(app, [*args, "--out", str(tmp_path / "o")])
    assert result.exit_code == 2 and "--hypothesis-templates" in result.output, result.output
    ood = _workbook(
        tmp_path / "ood.xlsx", [["nurse", "A nurse waits.", "F"]], ["occupation", "premise", "gender"]
    )
    assert len(nlibias.expand("occupations", ood, hypothesis_templates="all")) == 6  # 3 templates x 2


def test_refusals_of_options_that_apply_to_nothing_share_one_function() -> None:
    """The refusals are built by schema.applies.option_applies_to_nothing (its error type says so)."""
    from nlibias.runtime.build import build_predictors, check_label_map_applies
    from nlibias.schema.applies import InapplicableOption

    attempts: list[tuple[str, Any]] = [
        ("label_map", lambda: check_label_map_applies([ModelRef.unread("fake:m")])),
        ("label_map", lambda: check_label_map_applies([])),
        ("seed", lambda: nlibias.expand("occupations", seed=3)),
        ("balance", lambda: nlibias.expand("occupations", "ood-eval", balance=True)),
        ("dtype", lambda: build_predictors(["fake:a"], options=ModelOptions(dtype="float32"))),
        ("prompts", lambda: build_predictors(ModelSet.of(["fake:a"], prompts=["true"]))),
        ("concurrency", lambda: build_predictors(["fake:a"], options=ModelOptions(concurrency=2))),
        (
            "quantize",
            lambda: build_predictors(
                ModelSet.of([], generative=["fake:g"]), options=ModelOptions(quantize="int8")
            ),
        ),
    ]
    for parameter, attempt in attempts:
        with pytest.raises(InapplicableOption) as caught:
            attempt()
        assert caught.value.parameter == parameter
