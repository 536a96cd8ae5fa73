"""The one refusal of an option given where nothing reads it, declared on its type (:class:`AppliesTo`)."""

from __future__ import annotations

import typing
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Annotated, Any

from nlibias.errors import ConfigError

_UNSET: Any = object()


@dataclass(frozen=True)
class AppliesTo:
    """What an option applies to: ``when(settings)`` says whether anything reads it, ``otherwise``
    why nothing does, ``fix`` what to do (``{name}``: the option's name; ``names``: others named);
    ``words``: the refusal in its own words (or made from the settings), where "applies to" would
    not say it (``{compare} prints md or csv tables, not latex``)."""

    what: str
    when: Callable[[Mapping[str, Any]], bool]
    otherwise: str
    fix: str | None = None
    names: tuple[str, ...] = ()
    words: str | Callable[[Mapping[str, Any]], str] | None = None


SEED_APPLIES = AppliesTo(
    "random draws (bootstrap resamples, a limit's subset)",
    lambda settings: bool(settings.get("bootstrap")) or settings.get("limit") is not None,
    "nothing is drawn (bootstrap 0, no subset)",
    fix="leave {{seed}} out, or give bootstrap resamples",
    names=("bootstrap", "limit"),
)

TABLES_APPLIES = AppliesTo(
    "the printed tables",
    lambda settings: not settings.get("as_json"),
    "JSON is printed instead ({as_json})",
    fix="leave {{by}} out, or leave {{as_json}} out",
    names=("as_json",),
)


RAY_APPLIES = AppliesTo(
    "classifiers run on Ray",
    lambda settings: settings.get("ray_address") is not None,
    "",
    fix="set {{ray_address}}, or leave {{{name}}} out",
    names=("ray_address",),
)


def refuse_inapplicable(
    settings: Mapping[str, Any], hints: Mapping[str, Any], defaults: Mapping[str, Any]
) -> None:
    """Refuse the first of ``settings`` given (not its default) where its :class:`AppliesTo` says
    nothing reads it (a flag's refusal names it without its value: ``compare applies to ...``)."""
    for name, hint in hints.items():
        value = settings.get(name, _UNSET)
        if value is _UNSET or _same(value, defaults.get(name, _UNSET)):
            continue
        for rule in applies_rules(hint):
            if rule.when(settings):
                continue
            if rule.words is not None:
                words = rule.words if isinstance(rule.words, str) else rule.words(settings)
                raise InapplicableOption(words, parameter=name, names=rule.names)
            fix = None if rule.fix is None else rule.fix.format(name=name)
            shown = _UNSET if isinstance(value, bool) else value  # a flag: its name says it
            raise option_applies_to_nothing(
                name, rule.what, value=shown, given=rule.otherwise or None, fix=fix, names=rule.names
            )


def applies_rules(hint: Any) -> list[AppliesTo]:
    """The :class:`AppliesTo` in ``hint``'s ``Annotated`` metadata (union members too)."""
    if typing.get_origin(hint) is Annotated:
        return [item for item in typing.get_args(hint)[1:] if isinstance(item, AppliesTo)]
    return [rule for arg in typing.get_args(hint) for rule in applies_rules(arg)]


def _same(value: Any, default: Any) -> bool:
    return type(value) is type(default) and value == default


class InapplicableOption(ConfigError):
    """An option given where nothing reads it (:func:`option_applies_to_nothing` builds it)."""


def option_applies_to_nothing(
    parameter: str,
    applies_to: str,
    *,
    value: Any = _UNSET,
    subject: str | None = None,
    plural: bool = False,
    given: str | None = None,
    fix: str | None = None,
    names: tuple[str, ...] = (),
) -> InapplicableOption:
    """The refusal of an option nothing reads: ``{subject} [{value!r}] applies to {applies_to}[, and
    {given}]; {fix}`` (default: leave it out). The caller raises it.

    >>> str(option_applies_to_nothing("seed", "evaluation sets without hypotheses", value=3,
    ...                               given="every set given brings its own"))
    'seed 3 applies to evaluation sets without hypotheses, and every set given brings its own; leave seed out'
    """
    what = subject or f"{{{parameter}}}"
    if value is not _UNSET:
        what += f" {value!r}"
    message = f"{what} {'apply' if plural else 'applies'} to {applies_to}"
    if given:
        message += f", and {given}"
    return InapplicableOption(
        f"{message}; {fix or f'leave {{{parameter}}} out'}", parameter=parameter, names=names
    )
