"""Every command's ``--help``: shown as written (no markup eating ``nlibias[ray]``), no measured
numbers that go stale (they live in the docs), ``nlibias --version``."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import pytest
import typer
from typer.testing import CliRunner

import nlibias
from nlibias.cli.main import app

runner = CliRunner()

# A measurement in a help text: a speed-up ("1.5x"), a percentage ("38%"), a duration or a size
# ("~5 minutes", "1.3 GB"). The confidence level of the intervals ("95% CIs") is a setting.
MEASURED = re.compile(
    r"\b\d+(?:\.\d+)?x\b|\b(?!95% (?:CI|interval))\d+(?:\.\d+)?\s?%"
    r"|\b\d+(?:\.\d+)?\s?(?:minutes?|min|seconds?|ms|[kMG]i?B)\b"
)
BRACKETED = re.compile(r"[\w.-]*\[[^\]\s]+\]")


def _commands(command: Any, path: tuple[str, ...] = ()) -> Iterator[tuple[tuple[str, ...], Any]]:
    """Every command and group under ``command`` (Typer's own click objects), depth first."""
    yield path, command
    if hasattr(command, "commands"):
        for name, sub in sorted(command.commands.items()):
            yield from _commands(sub, (*path, name))


COMMANDS = list(_commands(typer.main.get_command(app)))


def _help_texts(command: Any) -> list[str]:
    """The help strings as written in the code: the command's and each parameter's."""
    texts = [command.help or "", command.short_help or ""]
    texts += [getattr(param, "help", None) or "" for param in command.params]
    return texts


def _rendered(path: tuple[str, ...]) -> str:
    result = runner.invoke(app, [*path, "--help"], env={"COLUMNS": "100"})
    assert result.exit_code == 0, result.output
    return result.output


def test_the_walk_covers_every_command() -> None:
    names = {" ".join(path) for path, _ in COMMANDS}
    assert {"", "audit", "demo", "doctor", "report", "validate serve", "masks"} <= names
    assert len(names) > 15


@pytest.mark.parametrize(
    ("path", "command"), COMMANDS, ids=lambda p: " ".join(p) if isinstance(p, tuple) else ""
)
def test_bracketed_text_survives_in_help(path: tuple[str, ...], command: Any) -> None:
    shown = " ".join(_rendered(path).split())
    for text in _help_texts(command):
        for token in BRACKETED.findall(text):
            assert token in shown, f"{' '.join(path)} --help lost {token!r}"


def test_the_extra_named_in_audit_help_is_shown() -> None:
    # the case that was broken: Rich markup read "[ray]" as a style tag and dropped it
    assert "Needs nlibias[ray]" in " ".join(_rendered(("audit",)).split())


@pytest.mark.parametrize(
    ("path", "command"), COMMANDS, ids=lambda p: " ".join(p) if isinstance(p, tuple) else ""
)
def test_no_help_text_hard_codes_a_measurement(path: tuple[str, ...], command: Any) -> None:
    found = MEASURED.findall(_rendered(path))
    assert not found, f"{' '.join(path)} --help states measurements {found}: link to the docs instead"


@pytest.mark.parametrize(
    ("text", "measured"),
    [
        ("Faster (1.5x on a 2-core CPU)", True),
        ("it flipped 38% of answers", True),
        ("it flipped 38 % of answers", True),
        ("up to 3x", True),
        ("Bootstrap resamples for the 95% CIs", False),
        ("differences whose 95% intervals do not overlap", False),
        ("sized for ~5 minutes on 2 CPU cores", True),
        ("peak 1.3 GB", True),
        ("a 0x1F byte, 2 CPU cores, nlibias[ray], this many minutes (0: off)", False),
    ],
)
def test_the_measurement_pattern(text: str, measured: bool) -> None:
    assert bool(MEASURED.search(text)) is measured


def test_version() -> None:
    result = runner.invoke(app, ["--version"])
    assert result.exit_code == 0
    assert result.output == f"nlibias {nlibias.__version__}\n"


def test_defaults_shared_by_the_command_line_and_the_library_agree() -> None:
    """An option's default is the library's (``--max-new-tokens`` once said 48 where the Python API
    and the Inspect tasks said 64)."""
    from nlibias.models.generative.defaults import DEFAULT_MAX_NEW_TOKENS
    from nlibias.runtime.options import ModelOptions

    audit = dict(COMMANDS)[("audit",)]
    library = ModelOptions.model_fields
    for name in ("max_new_tokens", "mode", "max_tokens", "ray_workers", "ray_gpus_per_worker"):
        option = next(p for p in audit.params if p.name == name)
        assert option.default == library[name].default, name
    assert library["max_new_tokens"].default == DEFAULT_MAX_NEW_TOKENS == 64


def test_help_loads_no_model_library() -> None:
    """``nlibias audit --help`` (whose defaults come from ``models/generative/defaults.py``) stays
    light: neither torch, transformers, numpy, pandas nor matplotlib is imported to show it."""
    import subprocess
    import sys

    code = (
        "import sys\n"
        "from nlibias.cli.main import app\n"
        "try:\n"
        "    app(['audit', '--help'])\n"
        "except SystemExit:\n"
        "    pass\n"
        "print(sorted(m for m in ('torch', 'transformers', 'numpy', 'pandas', 'matplotlib') if m in sys.modules))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip().splitlines()[-1] == "[]", done.stdout[-500:]


@pytest.mark.parametrize(
    ("path", "command"), COMMANDS, ids=lambda p: " ".join(p) if isinstance(p, tuple) else ""
)
def test_a_repeatable_option_shows_one_value_not_a_python_list(path: tuple[str, ...], command: Any) -> None:
    shown = _rendered(path)
    assert "<list[" not in shown, shown  # options and arguments alike
    if path == ("audit",):
        assert re.search(r"--model <str>\s", shown)  # and the option is still shown with a value
    if path == ("report",):
        assert re.search(r"runs\.\.\. <path>\s", shown)
