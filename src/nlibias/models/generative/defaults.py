"""Generation settings shared by the library, the command line and the Inspect tasks; this module
imports nothing, so the command line takes its option defaults from here without loading torch.

>>> DEFAULT_MAX_NEW_TOKENS
64
"""

from __future__ import annotations

from typing import Literal

DEFAULT_MAX_NEW_TOKENS = 64
"""Token limit of generated answers (``mode="generated"``), the one default of the library, the
command line and the Inspect tasks."""

OptionScore = Literal["total", "per-byte"]
"""How a multiple-choice question's scored options are compared: total log-probability, or per
byte of the option's text (:mod:`nlibias.models.generative.option_scoring`)."""
