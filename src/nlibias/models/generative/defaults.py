"""Generation settings shared by the library, the command line and the Inspect tasks (no imports,
so the command line reads its defaults without loading torch)."""

from __future__ import annotations

from typing import Literal

PLAIN_ANSWER_CUE = "\nAnswer:"
"""Appended to the prompt of a model without a chat template, so the next token is the answer."""

DEFAULT_MAX_NEW_TOKENS = 64
"""Token limit of generated answers (``mode="generated"``)."""

OptionScore = Literal["total", "per-byte"]
"""How scored options are compared: total log-probability, or per byte of the option's text."""
