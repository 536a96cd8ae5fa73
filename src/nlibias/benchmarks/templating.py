"""BBNLI's ``{{NAME}}`` templates rendered as the reference's Jinja call does (only the
substitutions BBNLI uses); an undefined name renders empty, as in Jinja.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

PLACEHOLDER = re.compile(r"\{\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*\}\}")
GROUP_SLOTS = ("GROUP1", "GROUP2")


def placeholders(template: str) -> list[str]:
    """Names used in ``template``, in order of first use.

    >>> placeholders("{{GROUP1}} are {{ WORD1 }} than {{GROUP2}} or {{GROUP1}}.")
    ['GROUP1', 'WORD1', 'GROUP2']
    """
    return list(dict.fromkeys(PLACEHOLDER.findall(template)))


def render(template: str, values: Mapping[str, str]) -> str:
    """Substitute every ``{{NAME}}``; undefined names become ``""``.

    >>> render("{{GROUP1}} earn more than {{GROUP2}}{{MISSING}}.", {"GROUP1": "men", "GROUP2": "women"})
    'men earn more than women.'
    """
    return PLACEHOLDER.sub(lambda match: str(values.get(match.group(1), "")), template)
