"""A Python function for every command: each command's public function (``nlibias.X``) and the
command call the same library function, return data, are listed in ``__all__``; and every
command the CLI registers has one (or is named below with the reason it has none)."""

from __future__ import annotations

import importlib
import inspect
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import typer
from typer.testing import CliRunner

import nlibias
from nlibias.cli.main import app

PUBLIC_FUNCTION = {
    "audit": "audit",
    "score": "score",
    "expand": "expand",
    "benchmarks": "list_benchmarks",
    "explain": "explain",
    "gate": "gate",
    "export model-index": "model_index",
    "extend": "extend",
    "augment gender-swap": "augment",
    "finetune": "finetune",
    "debias": "debias_models",
    "report": "make_report",
    "validate status": "validation_status",
    "validate resolve": "validation_resolve",
    "validate export": "validation_export",
    "validate import": "validation_import",
    "validate prescreen": "validation_prescreen",
    "export lm-eval": "export_lm_eval",
    "doctor": "doctor",
    "demo": "demo",
}
"""Each command → its function in ``nlibias``."""

WITHOUT_FUNCTION = {
    "schema": "prints a JSON Schema (nlibias.io.results.metrics_schema)",
    "masks list": "template-file tooling of extend (nlibias.extension.masked_templates)",
    "masks derive": "template-file tooling of extend (nlibias.extension.masked_templates)",
    "masks validate": "template-file tooling of extend (nlibias.extension.masked_templates)",
    "validate serve": "a web server that runs until stopped, not a result",
    "validate explanations": "new beside this test: draws an audit's explanations for the annotation app",
}
"""Commands with no function of their own, and why."""


def _commands(group: Any, prefix: str = "") -> Iterator[str]:
    for name, command in group.commands.items():
        if hasattr(command, "commands"):
            yield from _commands(command, f"{prefix}{name} ")
        else:
            yield prefix + name


def test_every_command_has_a_public_function_or_a_reason() -> None:
    registered = set(_commands(typer.main.get_command(app)))
    assert not registered - set(PUBLIC_FUNCTION) - set(WITHOUT_FUNCTION)  # a new command needs one
    assert set(PUBLIC_FUNCTION) <= registered
    assert not set(PUBLIC_FUNCTION) & set(WITHOUT_FUNCTION)
    for name in PUBLIC_FUNCTION.values():
        assert name in nlibias.__all__, name
        function = getattr(nlibias, name)
        assert callable(function) and not inspect.ismodule(function), name
        assert function.__doc__ and "nlibias " in function.__doc__, name  # says its command


def test_the_public_functions_keep_their_names_after_the_packages_are_imported() -> None:
    # nlibias.report and nlibias.debias are packages: a function of that name would be replaced
    # by the package as soon as it is imported, hence make_report and debias_models
    importlib.import_module("nlibias.report.html")
    importlib.import_module("nlibias.debias.finetune")
    importlib.import_module("nlibias.validation.status")
    for name in PUBLIC_FUNCTION.values():
        assert not inspect.ismodule(getattr(nlibias, name)), name


class Reached(Exception):
    """Raised by a stand-in for a library function: the call got there."""


class Answer:
    """What a stand-in returns (an audit's result is materialised: itself here)."""

    def materialised(self) -> Answer:
        return self


#: command (its arguments) → (public function, its arguments, module and name of the library
#: function both call)
CALLS: dict[str, tuple[list[str], str, Callable[[Path], tuple[Any, ...]], str, str]] = {
    "audit": (
        ["audit", "--samples", "RUN", "--model", "fake:a", "--out", "OUT"],
        "audit",
        lambda d: (d, ["fake:a"]),
        "nlibias.jobs.audit",
        "run_audit",
    ),
    "score": (
        ["score", "--samples", "RUN", "--predictions", "p.jsonl"],
        "score",
        lambda d: (d, "p.jsonl"),
        "nlibias.jobs.score",
        "run_score",
    ),
    "explain": (["explain", "RUN", "--judge", "fake:j"], "explain", lambda d: (d, ["fake:j"]), "nlibias.jobs.explain", "run_explain"),
    "gate": (["gate", "RUN", "--baseline", "RUN"], "gate", lambda d: (d, d), "nlibias.jobs.gate", "gate"),
    "benchmarks": (["benchmarks"], "list_benchmarks", lambda d: (), "nlibias.catalog.registry", "describe_benchmarks"),
    "export model-index": (
        ["export", "model-index", "RUN"],
        "model_index",
        lambda d: (d,),
        "nlibias.jobs.model_index",
        "model_index",
    ),
    "extend": (["extend", "--mlm", "fake"], "extend", lambda d: (), "nlibias.jobs.extend", "extend"),
    "report": (["report", "RUN"], "make_report", lambda d: (d,), "nlibias.jobs.report", "make_report"),
    "augment gender-swap": (
        ["augment", "gender-swap", "--train", "t.jsonl", "--out", "OUT"],
        "augment",
        lambda d: ("t.jsonl", d),
        "nlibias.debias.augment",
        "augment_gender_swap",
    ),
    "finetune": (
        ["finetune", "--model", "m", "--train", "t.jsonl", "--out", "OUT"],
        "finetune",
        lambda d: ("m", "t.jsonl", d),
        "nlibias.debias.finetune",
        "finetune",
    ),
    "debias": (
        ["debias", "--model", "m", "--train", "t.jsonl", "--out", "OUT"],
        "debias_models",
        lambda d: ("m", "t.jsonl", d),
        "nlibias.jobs.debias",
        "run_debias",
    ),
    "validate status": (["validate", "status", "RUN"], "validation_status", lambda d: (d,), "nlibias.jobs.validation", "status"),
    "validate resolve": (["validate", "resolve", "RUN"], "validation_resolve", lambda d: (d,), "nlibias.jobs.validation", "resolve"),
    "validate export": (["validate", "export", "RUN"], "validation_export", lambda d: (d,), "nlibias.jobs.validation", "export"),
    "validate prescreen": (
        ["validate", "prescreen", "RUN", "--judge", "fake:j"],
        "validation_prescreen",
        lambda d: (d,),
        "nlibias.validation.prescreen",
        "run_prescreen",
    ),
    "export lm-eval": (
        ["export", "lm-eval", "--samples", "RUN", "--out", "OUT"],
        "export_lm_eval",
        lambda d: (d, d),
        "nlibias.integrations.lm_eval",
        "export_lm_eval",
    ),
    "doctor": (["doctor"], "doctor", lambda d: (), "nlibias.jobs.doctor", "environment_report"),
    "demo": (["demo", "--out", "OUT"], "demo", lambda d: (d,), "nlibias.jobs.demo", "run_demo"),
    "validate import": (
        ["validate", "import", "RUN", "f.csv"],
        "validation_import",
        lambda d: (d, "f.csv"),
        "nlibias.jobs.validation",
        "import_judgements",
    ),
}  # fmt: skip


@pytest.mark.parametrize("command", sorted(CALLS))
def test_the_command_and_its_function_call_the_same_library_function(
    command: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    args, public, arguments, module, name = CALLS[command]
    calls: list[tuple[tuple[Any, ...], dict[str, Any]]] = []
    answer = Answer()

    def stand_in(*args: Any, **kwargs: Any) -> Any:
        calls.append((args, kwargs))
        if len(calls) == 1:
            raise Reached  # the command's call: it stops here, before printing
        return answer

    monkeypatch.setattr(importlib.import_module(module), name, stand_in)
    shown = [str(tmp_path) if a in ("RUN", "OUT") else a for a in args]
    done = CliRunner().invoke(app, shown)
    assert len(calls) == 1, done.output  # the command reached the library function
    assert done.exit_code != 0 and "Reached" in done.output
    result = getattr(nlibias, public)(*arguments(tmp_path))
    assert len(calls) == 2  # and so did the function, which returns what it got back
    assert result is answer


def test_expand_and_its_command_reach_expand_to_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import nlibias.jobs.expand

    calls: list[tuple[Any, ...]] = []
    summary: dict[str, Any] = {"files": {}}

    def stand_in(*args: Any, **kwargs: Any) -> Any:
        calls.append(args)
        if len(calls) == 1:
            raise Reached
        return summary

    monkeypatch.setattr(nlibias.jobs.expand, "expand_to_dir", stand_in)
    done = CliRunner().invoke(app, ["expand", "occupations", "--out", str(tmp_path)])
    assert len(calls) == 1 and "Reached" in done.output
    samples = nlibias.expand("occupations", out_dir=tmp_path)
    assert len(calls) == 2 and samples.summary is summary and samples.path == tmp_path


def test_every_public_function_is_declared_against_its_command() -> None:
    assert set(CALLS) | {"expand"} == set(PUBLIC_FUNCTION)


def test_the_report_function_returns_what_the_command_prints(tmp_path: Path) -> None:
    from nlibias.testing.report_runs import build_bbnli_run

    run = build_bbnli_run(tmp_path, bootstrap=0)
    tables = nlibias.make_report(run, fmt="csv")
    assert tables.kind == "tables" and tables.out is None and tables.fmt == "csv"
    printed = CliRunner().invoke(app, ["report", str(run), "--format", "csv"])
    assert printed.exit_code == 0, printed.output
    assert printed.stdout == tables.text
    written = nlibias.make_report([run], tmp_path / "t" / "tables.csv", fmt="csv")
    assert (
        written.out == tmp_path / "t" / "tables.csv"
        and written.out.read_text(encoding="utf-8") == tables.text
    )


def test_the_report_function_names_its_parameters(tmp_path: Path) -> None:
    from nlibias.errors import ConfigError
    from nlibias.testing.report_runs import build_bbnli_run

    run = build_bbnli_run(tmp_path, bootstrap=0)
    with pytest.raises(ConfigError, match=r"^fmt must be one of") as caught:
        nlibias.make_report(run, fmt="docx")
    assert caught.value.parameter == "fmt"
    with pytest.raises(ConfigError, match=r"^pairs takes BEFORE=AFTER") as caught:
        nlibias.make_report(run, pairs=["nope"])
    assert caught.value.parameter == "pairs"
    with pytest.raises(ConfigError, match=r"^compare prints md or csv"):
        nlibias.make_report([run, run], fmt="latex", compare=True)
    # the command line names the options instead
    shown = CliRunner().invoke(app, ["report", str(run), "--format", "docx"])
    assert shown.exit_code == 2 and "error: --format must be one of" in shown.output
    shown = CliRunner().invoke(app, ["report", str(run), "--pair", "nope"])
    assert "error: --pair takes BEFORE=AFTER" in shown.output
    shown = CliRunner().invoke(app, ["report", str(run), str(run), "--format", "latex", "--compare"])
    assert "error: --compare prints md or csv tables, not latex (option --format)" in shown.output


def test_extend_takes_the_command_lines_settings_as_parameters(tmp_path: Path) -> None:
    from nlibias.errors import ConfigError
    from nlibias.jobs.extend import extend_config

    config = extend_config(
        None,
        out_dir=tmp_path / "next",
        fill_model="fake",
        top_k=3,
        classifiers=["org/nli-a"],
        holdout=["fake:h"],
        subtopics=["x"],
        templates="none",
        derive=True,
        device="cpu",
    )
    assert config.run_dir == str(tmp_path / "next") and config.mlm.model == "fake" and config.mlm.top_k == 3
    assert [m.model for m in config.filter.models] == ["org/nli-a"]
    assert [m.model for m in config.filter.holdout] == ["fake:h"]
    assert config.subtopics == ["x"] and config.templates.curated is None
    assert config.filter.device == "cpu" and config.mlm.device is None  # the fake fill takes no device
    with pytest.raises(ConfigError) as caught:
        nlibias.extend(top_k="5")  # type: ignore[arg-type]
    assert caught.value.parameter == "top_k"
