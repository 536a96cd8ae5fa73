"""Entry point of the ``nlibias`` command: importing a command module registers its commands."""

from __future__ import annotations

import sys

import nlibias.cli.audit_cmd
import nlibias.cli.debias_cmd
import nlibias.cli.doctor_cmd
import nlibias.cli.expand_cmd
import nlibias.cli.extend_cmd
import nlibias.cli.report_cmd
import nlibias.cli.validate_cmd  # noqa: F401
from nlibias.cli.app import app, flag_of, message_of

__all__ = ["app", "flag_of", "main", "message_of"]


def main() -> None:
    """The ``nlibias`` command (errors are handled inside the app: :mod:`nlibias.cli.app`)."""
    app()


if __name__ == "__main__":
    main()
    sys.exit(0)
