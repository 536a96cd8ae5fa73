"""Entry point of the ``nlibias`` command. Each command lives in its own module and registers itself."""

from __future__ import annotations

import sys

# Importing a command module registers its commands on the app (one line per module).
import nlibias.cli.audit_cmd
import nlibias.cli.demo_cmd
import nlibias.cli.expand_cmd
import nlibias.cli.extend_cmd
import nlibias.cli.report_cmd
import nlibias.cli.validate_cmd  # noqa: F401
from nlibias.cli.app import app, fail
from nlibias.errors import ConfigError, NlibiasError

# Library parameters whose command-line option is not simply ``--`` + the name with dashes.
_FLAGS = {
    "models": "--model / --generative / --mlm / --causal",
    "out_dir": "--out",
    "samples_path": "--samples",
    "tp_variants": "--tp-variant",
    "source": "--source",
}


def flag_of(parameter: str) -> str:
    """The command-line option of a library parameter named in an error.

    >>> flag_of("bootstrap"), flag_of("chunk_pairs"), flag_of("models")
    ('--bootstrap', '--chunk-pairs', '--model / --generative')
    """
    return _FLAGS.get(parameter, "--" + parameter.replace("_", "-"))


def message_of(error: NlibiasError) -> str:
    """An error's message as the command line shows it: a parameter named by its option too."""
    parameter = getattr(error, "parameter", None) if isinstance(error, ConfigError) else None
    return f"{error} (option {flag_of(parameter)})" if parameter else str(error)


def main() -> None:
    try:
        app()
    except NlibiasError as exc:
        fail(message_of(exc))
    except KeyboardInterrupt:
        fail("interrupted (finished work is in the cache; rerun the same command to resume)", code=130)


if __name__ == "__main__":
    main()
    sys.exit(0)
