"""Every error raised on purpose names where the problem is: a parameter (ConfigError), a file
line (SourceError) or the data that do not fit together (DataError), and speaks in the library's
names. Read from the source of every module outside ``cli/`` (the command line maps parameters
to its flags when it prints, :mod:`nlibias.cli.app`)."""

from __future__ import annotations

import ast
import json
import re
from collections.abc import Iterator
from pathlib import Path

import click
import typer.main
from typer.testing import CliRunner

import nlibias
from nlibias.cli import app as faults
from nlibias.cli.main import app
from nlibias.errors import ConfigError, DataError, NlibiasError, SourceError

PACKAGE = Path(nlibias.__file__).parent

# (module, enclosing function) -> why the ConfigError there names no parameter: no parameter
# exists to name. Keep it short; a new entry needs a reason no parameter, file or data fits.
NO_PARAMETER = {
    ("debias/training_rows.py", "require_packages"): "optional packages fine-tuning needs are missing",
    ("jobs/results.py", "finish_run"): "a benchmark's scorer breaks its own measure declarations",
}

# (module, enclosing function) -> why a message there may hold a ``--flag``: it is not nlibias's.
FOREIGN_FLAGS = {
    ("models/generative/sources.py", "smollm2_gguf_path"): "pip's --no-deps, in the command to run",
}

_FLAG = re.compile(r"(?<![\w-])--[a-z]")


def _modules() -> Iterator[tuple[str, ast.Module]]:
    for path in sorted(PACKAGE.rglob("*.py")):
        relative = path.relative_to(PACKAGE).as_posix()
        if not relative.startswith("cli/"):
            yield relative, ast.parse(path.read_text(encoding="utf-8"), filename=str(path))


def _calls(names: set[str]) -> Iterator[tuple[str, str, ast.Call]]:
    """``(module, enclosing function, call)`` of every call of an error type in ``names``."""
    for relative, tree in _modules():
        stack: list[tuple[ast.AST, str]] = [(tree, "<module>")]
        while stack:
            node, function = stack.pop()
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                function = node.name
            if isinstance(node, ast.Call):
                called = node.func
                name = called.id if isinstance(called, ast.Name) else getattr(called, "attr", None)
                if name in names:
                    yield relative, function, node
            stack.extend((child, function) for child in ast.iter_child_nodes(node))


def _keyword(call: ast.Call, name: str) -> ast.expr | None:
    return next((k.value for k in call.keywords if k.arg == name), None)


def test_every_config_error_names_its_parameter() -> None:
    offenders = sorted(
        f"src/nlibias/{module}:{call.lineno} (in {function})"
        for module, function, call in _calls({"ConfigError"})
        if _keyword(call, "parameter") is None and (module, function) not in NO_PARAMETER
    )
    assert not offenders, (
        "ConfigError without parameter= (name the library parameter; a malformed file is a "
        "SourceError, data that do not fit together a DataError):\n" + "\n".join(offenders)
    )


def test_the_allow_list_names_places_that_still_exist() -> None:
    places = {(module, function) for module, function, _ in _calls({"ConfigError"})}
    assert set(NO_PARAMETER) <= places
    assert set(FOREIGN_FLAGS) <= {(m, f) for m, f, _ in _calls({"ConfigError", "DataError"})}


def test_no_library_message_names_a_command_line_flag() -> None:
    offenders = []
    for module, function, call in _calls({"ConfigError", "DataError"}):
        if (module, function) in FOREIGN_FLAGS:
            continue
        for node in ast.walk(call):
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and _FLAG.search(node.value):
                offenders.append(f"src/nlibias/{module}:{node.lineno}: {node.value!r}")
    assert not offenders, (
        "library messages speak in parameter names (the command line adds the flag):\n" + "\n".join(offenders)
    )


def _cli_options(command: click.Command) -> set[str]:
    options = {o for p in command.params for o in (*p.opts, *p.secondary_opts) if o.startswith("--")}
    for sub in getattr(command, "commands", {}).values():
        options |= _cli_options(sub)
    return options


def test_every_named_parameter_is_an_option_of_the_command_line_or_said_not_to_be() -> None:
    options = _cli_options(typer.main.get_command(app))
    unmapped = set()
    for _, _, call in _calls({"ConfigError"}):
        value = _keyword(call, "parameter")
        for node in ast.walk(value) if value is not None else ():
            if isinstance(node, ast.Constant) and isinstance(node.value, str):
                parameter = node.value
                if parameter in faults._NOT_OPTIONS or parameter in faults._ARGUMENTS:
                    continue
                if not set(faults.flag_of(parameter).split(" / ")) <= options:
                    unmapped.add(f"{parameter} -> {faults.flag_of(parameter)}")
    assert not unmapped, (
        f"no such option: add the parameter to cli/app.py's _FLAGS or _NOT_OPTIONS: {sorted(unmapped)}"
    )
    assert not faults._NOT_OPTIONS & set(faults._FLAGS)


def test_a_data_error_is_one_line_with_exit_2_and_no_traceback(tmp_path: Path) -> None:
    rows = [
        {"id": f"s{i}", "source": "wq-nli", "domain": "d", "subtopic": "t", "premise": "P.",
         "hypothesis": f"H {i}.", "gold": "neutral", "stereotype": "pro", "pair_key": "row7"}
        for i in (1, 2)
    ]  # fmt: skip
    samples = tmp_path / "wq.jsonl"
    samples.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    arguments = [
        "audit",
        "--samples",
        str(samples),
        "--model",
        "fake:x",
        "--out",
        str(tmp_path / "out"),
        "--no-cache",
    ]
    result = CliRunner().invoke(app, arguments)
    assert result.exit_code == 2, result.output
    # checked before any model runs, so the error names the samples file the pair is in
    assert f"error: {samples}: field pair_key: pair 'row7' has two pro samples ('s1', 's2')" in result.output
    assert len(result.output.strip().splitlines()) == 1
    assert "Traceback" not in result.output and "(option" not in result.output
    debug = CliRunner().invoke(app, ["--debug", *arguments])
    assert isinstance(debug.exception, SourceError) and debug.exception.path == str(samples)
    cause = debug.exception.__cause__
    assert isinstance(cause, DataError) and cause.sample == "s2"


def test_data_errors_are_not_config_errors() -> None:
    assert issubclass(DataError, NlibiasError) and not issubclass(DataError, ConfigError)
    error = DataError("model 'm' has no probabilities for sample 'a'", sample="a", model="m", fix="x")
    assert (error.sample, error.model, error.field, error.fix) == ("a", "m", None, "x")
    assert faults.message_of(error) == "model 'm' has no probabilities for sample 'a' (x)"


def test_a_parameter_the_command_line_has_no_option_for_is_printed_without_one() -> None:
    message = "use_chat_template must be true or false"
    assert faults.message_of(ConfigError(message, parameter="use_chat_template")) == message
    # dtype is an option of `nlibias audit` now: its flag is named
    assert (
        faults.message_of(ConfigError("unknown dtype 'x'", parameter="dtype"))
        == "unknown dtype 'x' (option --dtype)"
    )
    # a parameter the message names is named by its option only (issue #39)
    assert faults.message_of(ConfigError("{policy}", parameter="policy")) == "--policy"
    assert faults.message_of(ConfigError("b", parameter="benchmark")) == "b (argument NAME)"


def test_a_message_names_its_parameters_as_fields_the_error_carries() -> None:
    """The fields ``{name}`` / ``{parameter name}`` of the names an error carries are its only
    parameter names: Python shows the name, the command line the flag; a value's braces or a
    parameter's name in a value stay as written."""
    error = ConfigError(
        "{out_dir} holds {'seed': 1} (a seed file); set {force} or rerun ({parameter from_stage})",
        parameter="out_dir",
        names=("force", "from_stage"),
    )
    assert str(error) == "out_dir holds {'seed': 1} (a seed file); set force or rerun (parameter from_stage)"
    assert (
        faults.message_of(error)
        == "--out holds {'seed': 1} (a seed file); set --force or rerun (option --from)"
    )
    damaged = SourceError(
        "r.jsonl", None, "damaged", fix="rerun ({parameter from_stage})", names=("from_stage",)
    )
    assert str(damaged) == "r.jsonl: damaged (rerun (parameter from_stage))"
    assert faults.message_of(damaged) == "r.jsonl: damaged (rerun (option --from))"
    # a field of a name the error does not carry is not a parameter: left as written
    assert faults.message_of(ConfigError("{seed} {x}", parameter="seed")) == "--seed {x}"
    assert "import re" not in Path(faults.__file__).read_text()  # no pattern over message text


def test_the_running_command_s_own_option_names_a_parameter_first() -> None:
    # demo's ``pairs`` is a count (--pairs); the gate's is a list of model pairs (--pair); a command
    # without that parameter falls back to the shared table.
    commands = typer.main.get_command(app).commands  # type: ignore[attr-defined]
    demo, gate, audit = commands["demo"], commands["gate"], commands["audit"]
    assert faults.flag_of("pairs", demo) == "--pairs"
    assert faults.flag_of("pairs", gate) == "--pair"
    assert faults.flag_of("pairs", audit) == faults.flag_of("pairs") == "--pair"
    assert faults.message_of(ConfigError("{pairs} is 0", parameter="pairs"), demo) == "--pairs is 0"
