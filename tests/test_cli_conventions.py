"""Command-line conventions (issue #39): --quiet and --json on every command that prints, defined
once; expand --help lists every registered benchmark; python -m nlibias; errors name flags, not
Python parameters; extend's stop for judgements names the annotation app; validate status prints
tables, not dicts."""

from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

import pytest
import typer
from typer.testing import CliRunner

from nlibias.cli import app as faults
from nlibias.cli.main import app
from nlibias.errors import ConfigError

runner = CliRunner()

PRINTING = [
    ("audit",), ("score",), ("report",), ("debias",), ("demo",), ("extend",), ("expand",),
    ("validate", "status"), ("validate", "prescreen"), ("augment", "gender-swap"), ("finetune",),
    ("doctor",), ("benchmarks",), ("export", "lm-eval"), ("masks", "list"), ("masks", "derive"),
    ("masks", "validate"), ("validate", "resolve"), ("validate", "import"), ("explain",), ("gate",),
]  # fmt: skip


def _command(path: tuple[str, ...]) -> Any:
    command: Any = typer.main.get_command(app)
    for name in path:
        command = command.commands[name]
    return command


@pytest.mark.parametrize("path", PRINTING, ids=" ".join)
def test_every_printing_command_takes_quiet_and_json(path: tuple[str, ...]) -> None:
    options = {opt for param in _command(path).params for opt in getattr(param, "opts", [])}
    assert {"--quiet", "--json"} <= options, path


def test_quiet_and_json_are_one_definition() -> None:
    from nlibias.cli import options

    for path in PRINTING:
        params = {p.name: p for p in _command(path).params}
        assert params["quiet"].help == options.Quiet.__metadata__[0].help, path
        assert params["as_json"].help == options.Json.__metadata__[0].help, path


_OWN_MEANING = {
    ("report", "--out"),  # default <first run>/report.html, not stdout
    ("expand", "--source"),  # any benchmark's source (also --premises), not BBNLI's directory
    ("validate explanations", "--judge"),  # a judge of the run, not a model to load
    ("export lm-eval", "--device"),  # where the tokenizer loads, default cpu
    ("export lm-eval", "--model"),
    ("export model-index", "--model"),
    ("audit", "--model"),  # NLI classifiers to audit, not a model to fine-tune
}
_ALIASES_PENDING: set[str] = set()


def _all_commands(command: Any, path: tuple[str, ...] = ()) -> list[tuple[str, Any]]:
    found = [(" ".join(path), command)] if path else []
    for name, sub in getattr(command, "commands", {}).items():
        found += _all_commands(sub, (*path, name))
    return found


def test_a_shared_flag_is_one_definition() -> None:
    """A flag that cli/options.py defines has that help in every command
    (where one flag means two things, each meaning is listed in _OWN_MEANING)."""
    from nlibias.cli import options

    helps: dict[str, set[str]] = {}
    for alias in vars(options).values():
        info = getattr(alias, "__metadata__", [None])[0]
        if isinstance(info, typer.models.OptionInfo):
            flag = str(info.default).split("/")[0]  # Annotated style: the first declaration
            helps.setdefault(flag, set()).add(str(info.help))
    offenders = [
        f"{path} {param.opts[0]}"
        for path, command in _all_commands(typer.main.get_command(app))
        if path.split()[0] not in _ALIASES_PENDING
        for param in getattr(command, "params", [])
        if param.opts and param.opts[0] in helps and (path, param.opts[0]) not in _OWN_MEANING
        if param.help not in helps[param.opts[0]]
    ]
    assert not offenders, f"take these from cli/options.py: {offenders}"


def test_option_flags_show_the_librarys_documentation_of_their_field() -> None:
    """A flag that sets a field of ModelOptions, RunOptions or TrainingOptions shows that field's
    docstring as its help: what ``--help`` says and what the Python API documents are one text."""
    from nlibias.cli.options import field_help
    from nlibias.debias.finetune_record import TrainingOptions
    from nlibias.runtime.options import ModelOptions, RunOptions

    renamed = {"compile": "compile_model", "ray_address": "ray"}  # Python parameter of the flag
    expected = {
        ("audit",): [(ModelOptions, f) for f in ModelOptions.model_fields]
        + [(RunOptions, "bootstrap"), (RunOptions, "limit")],
        ("finetune",): [(TrainingOptions, f) for f in vars(TrainingOptions()) if f != "seed"],
    }
    for path, fields in expected.items():
        params = {p.name: p for p in _command(path).params}
        for options, field in fields:
            param = params[renamed.get(field, field)]
            assert param.help == " ".join(field_help(options, field).split()), (path, field)
            assert param.help and "``" not in param.help and ":func:" not in param.help, (path, field)
    assert params["split"].opts == ["--split"] and params["eval_split"].opts == ["--eval-split"]
    assert {p.name: p for p in _command(("audit",)).params}["ray"].opts == ["--ray"]


@dataclass(frozen=True)
class _Undocumented:
    __pydantic_config__: ClassVar[dict[str, bool]] = {"use_attribute_docstrings": True}
    documented: int = 1
    """A field with its docstring."""
    bare: int = 2


def test_a_field_without_documentation_gives_a_flag_without_help() -> None:
    """Where the docstrings cannot be read (no source: a frozen application) the command line
    still starts; the test above holds every flag made so to a help text."""
    from nlibias.cli.options import documented, field_help

    assert field_help(_Undocumented, "documented") == "A field with its docstring."
    assert documented(_Undocumented, "bare").help == ""
    with pytest.raises(LookupError, match="_Undocumented has no field 'documnted'"):
        documented(_Undocumented, "documnted")


def test_extend_keeps_no_progress_as_a_hidden_alias() -> None:
    params = {p.name: p for p in _command(("extend",)).params}
    assert params["progress"].hidden and "--no-progress" in params["progress"].secondary_opts


def test_expand_help_lists_every_registered_benchmark() -> None:
    from nlibias.catalog.registry import describe_benchmarks

    result = runner.invoke(app, ["expand", "--help"], terminal_width=400)
    assert result.exit_code == 0, result.output
    names = [b["name"] for b in describe_benchmarks() if b["expands"]]
    assert {"crows-pairs", "winoqueer", "bbnli-tp", "sentence-pairs"} <= set(names)
    assert ", ".join(names) in " ".join(result.output.split())


def test_python_dash_m_nlibias_runs_the_command() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "nlibias", "--version"], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0 and done.stdout.startswith("nlibias "), done.stderr
    helped = subprocess.run(
        [sys.executable, "-m", "nlibias", "--help"], capture_output=True, text=True, timeout=120
    )
    assert helped.returncode == 0 and "Usage: nlibias " in helped.stdout


@pytest.mark.parametrize(
    ("message", "parameter", "shown"),
    [
        ("quantize applies to NLI classifiers; name one in {models}", "models",
         "quantize applies to NLI classifiers; name one in --model"),
        ("{seed} is -5; pass 0 or more", "seed", "--seed is -5; pass 0 or more"),
        ("{tp_variants} holds 'x'", "tp_variants", "--tp-variant holds 'x'"),
        ("use another {out_dir}, or set {force}", "out_dir", "use another --out, or set --force"),
        ("unknown dtype 'x'", "dtype", "unknown dtype 'x' (option --dtype)"),  # not named: the flag is added
        ("a 'seed' file in /x/seed", "seed", "a 'seed' file in /x/seed (option --seed)"),  # values stay
    ],
)  # fmt: skip
def test_an_error_names_the_flag_never_the_python_parameter(message: str, parameter: str, shown: str) -> None:
    """The message names its parameters as fields (``{seed}``), the error carries them as data."""
    names = ("force",) if "{force}" in message else ()
    assert faults.message_of(ConfigError(message, parameter=parameter, names=names)) == shown


def test_cli_error_names_only_the_flag(tmp_path: Path) -> None:
    samples = tmp_path / "s.jsonl"
    samples.write_text(
        json.dumps(
            {
                "id": "a",
                "domain": "d",
                "subtopic": "t",
                "premise": "P.",
                "hypothesis": "H.",
                "gold": "neutral",
            }
        )
        + "\n"
    )
    result = runner.invoke(app, ["audit", "--samples", str(samples), "--model", "fake:a", "--out", str(tmp_path / "o"),
                                 "--bootstrap", "-1"])  # fmt: skip
    assert result.exit_code == 2
    assert "error: --bootstrap is -1" in result.output and "(option" not in result.output, result.output


def test_extend_stop_for_judgements_names_the_annotation_app() -> None:
    from nlibias.cli.extend_cmd import awaiting_message

    text = awaiting_message(Path("runs/my ext"), "12 generated hypotheses await judgement.")
    assert text.startswith(
        "the run waits for human judgements: judge them in the browser with `nlibias validate serve 'runs/my ext'`"
    )
    assert text.endswith("12 generated hypotheses await judgement.")


def test_validate_status_prints_tables_and_json(tmp_path: Path) -> None:
    from sample_queue import write_sample_queue

    run_dir = tmp_path / "run"
    queue = write_sample_queue(run_dir)
    shown = runner.invoke(app, ["validate", "status", str(run_dir)])
    assert shown.exit_code == 0, shown.output
    assert "{'" not in shown.output, shown.output  # no raw dicts
    lines = shown.output.splitlines()
    header = next(i for i, line in enumerate(lines) if line.startswith("count of"))
    assert [c.strip() for c in lines[header + 2].split("|")] == ["status", "pending", str(len(queue))]
    as_json = runner.invoke(app, ["validate", "status", str(run_dir), "--json"])
    assert as_json.exit_code == 0
    assert json.loads(as_json.output)["resolution"]["status"] == {"pending": len(queue)}


def test_help_lists_every_command_in_the_declared_order() -> None:
    # a command left out of HELP_ORDER would be listed last, after `schema`
    from nlibias.cli.app import HELP_ORDER

    listed = [
        line.split()[0]
        for line in runner.invoke(app, ["--help"]).output.split("Commands:")[1].splitlines()
        if line.strip()
    ]
    assert listed == list(HELP_ORDER)
