"""Rules the extend configuration shares: names that must not be blank, a backend's own check in
pydantic's words, the refusal of an option no model here would read, and the filter policy (when
the adversarial filter keeps a candidate: ``any`` filter model mispredicts it, the paper's rule,
``all`` do, or ``at_least:k`` do) with the ensembles that may filter at all.

>>> parse_policy("at_least:2").keeps(mispredicting=2, models=3)
True
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Annotated, Any, Literal, TypeVar

from pydantic import AfterValidator, BaseModel

from nlibias.errors import ConfigError, did_you_mean
from nlibias.schema.applies import option_applies_to_nothing
from nlibias.schema.model_ref import ModelRef

if TYPE_CHECKING:
    from nlibias.benchmarks.bbnli import BBNLISubtopic

LOADING = "models that load their weights here"
T = TypeVar("T")


def _not_blank(message: str) -> AfterValidator:
    """Refuse a blank string (``""`` loads from, or writes into, the current directory)."""

    def check(value: str) -> str:
        if not value.strip():
            raise ValueError(message)
        return value

    return AfterValidator(check)


def _trimmed(value: str) -> str:
    """Refuse spaces around a model name: ``'m '`` would count as a second model beside ``'m'``."""
    if value != value.strip():
        raise ValueError(f"{value!r} has spaces around the model name; remove them ({value.strip()!r})")
    return value


ModelName = Annotated[
    str,
    _not_blank("the model name is empty; name a model (a hub id or a local path)"),
    AfterValidator(_trimmed),
]
CardName = Annotated[
    str, _not_blank("the dataset card's name is empty; give the name that heads the card, or leave it out")
]


def in_their_words(check: Callable[..., T], **values: Any) -> T:
    """A backend's own check of a value, as the ``ValueError`` pydantic names with file, line and key."""
    try:
        return check(**values)
    except ConfigError as error:
        raise ValueError(str(error)) from None


class Refused(ValueError):
    """A refusal of what sits at ``at`` under the refusing field or model (for the YAML line) (an
    option nothing reads, an item listed twice); ``models``, the keys of the models that make it
    refused (for overrides)."""

    def __init__(self, error: object, at: tuple[str | int, ...], models: tuple[str, ...] = ()) -> None:
        super().__init__(str(error))
        self.at, self.models = at, models


def listed_once(items: list[str]) -> list[str]:
    """``items``, refusing one listed twice at its second place."""
    for index, item in enumerate(items):
        if item in items[:index]:
            raise Refused(f"{item!r} is listed twice; list each once", at=(index,))
    return items


def one_of(name: str, known: Sequence[str], what: str, parameter: str) -> str:
    """The one of ``known`` that ``name`` is (case aside), else a ConfigError with the closest.

    >>> one_of("Man_is_to_breadwinner", ["man_is_to_breadwinner"], "subtopic", "subtopics")
    'man_is_to_breadwinner'
    >>> one_of("man_is_to_breadwiner", ["man_is_to_breadwinner"], "subtopic", "subtopics")
    Traceback (most recent call last):
    nlibias.errors.ConfigError: subtopics 'man_is_to_breadwiner': unknown subtopic (did you mean 'man_is_to_breadwinner'?); known: man_is_to_breadwinner
    """
    found = name if name in known else {k.lower(): k for k in known}.get(name.lower())
    if found is None:
        hint = did_you_mean(name, known)
        hint = f" ({hint})" if hint else ""
        reason = f"{{{parameter}}} {name!r}: unknown {what}{hint}; known: {', '.join(known)}"
        raise ConfigError(reason, parameter=parameter)
    return found


def chosen_subtopics(everything: Sequence[BBNLISubtopic], names: Sequence[str]) -> list[BBNLISubtopic]:
    """The subtopics ``names`` picks of ``everything`` (case aside; all when none), an unknown or
    repeated one refused as ``{subtopics}``'s: extend's run and the masks commands alike."""
    by_id = {s.subtopic: s for s in everything}
    chosen = [by_id[one_of(name, sorted(by_id), "subtopic", "subtopics")] for name in names]
    try:
        listed_once([s.subtopic for s in chosen])
    except Refused as error:
        raise ConfigError(str(error), parameter="subtopics") from None
    return chosen or list(everything)


def fill_loads_weights(spec: str) -> bool:
    """Whether a fill model takes ``mlm.device``, ``mlm.dtype`` and ``mlm.revision``: neither the
    fake nor a server (also behind ``causal:``/``gguf:``)."""
    ref = ModelRef.unread(spec)
    served = ref.kind in ("causal", "gguf") and ModelRef.unread(ref.name).is_server
    return ref.loads_weights_here and not served


def not_loaded(spec: str) -> str:
    return f"{spec!r} (a fake)" if ModelRef.unread(spec).is_fake else f"{spec!r} (behind a server)"


def refuse_set(
    section: BaseModel,
    options: Sequence[str],
    text: tuple[str, str],
    at: tuple[str, ...],
    models: tuple[str, ...],
) -> None:
    """Refuse the first of ``options`` set in ``section`` (``text``: what it applies to, and what is
    given; ``at``: the section's key; ``models``: the keys naming the models it does not apply to)."""
    for option in options:
        value = getattr(section, option)
        if value is not None and not (option == "dtype" and str(value).lower() == "auto"):
            refusal = option_applies_to_nothing(option, text[0], value=value, given=text[1])
            raise Refused(refusal, (*at, option), models)


PolicyKind = Literal["any", "all", "at_least"]
_AT_LEAST = re.compile(r"^at[_-]?least[:=_ -]?(\d+)$")


@dataclass(frozen=True)
class FilterPolicy:
    """When a candidate is kept, from how many filter models mispredict it."""

    kind: PolicyKind
    k: int = 1
    """For ``at_least``: the number of filter models that must mispredict."""

    def keeps(self, mispredicting: int, models: int) -> bool:
        """Whether a candidate that ``mispredicting`` of ``models`` filter models got wrong is kept.

        >>> FilterPolicy("all").keeps(2, 3)
        False
        """
        if self.kind == "any":
            return mispredicting >= 1
        if self.kind == "all":
            return models > 0 and mispredicting == models
        return mispredicting >= self.k

    def describe(self) -> str:
        return f"at_least:{self.k}" if self.kind == "at_least" else self.kind


def parse_policy(value: str | int | Mapping[str, Any] | FilterPolicy) -> FilterPolicy:
    """``any`` | ``all`` | ``at_least:K`` (also ``at-least-K``, an int K, or ``{"at_least": K}``).

    >>> parse_policy("any").describe(), parse_policy({"at_least": 2}).describe(), parse_policy(3).k
    ('any', 'at_least:2', 3)
    """
    if isinstance(value, FilterPolicy):
        return value
    if isinstance(value, Mapping):  # {at_least: K}
        at_least = value.get("at_least") if set(value) == {"at_least"} else None
        if isinstance(at_least, int) and not isinstance(at_least, bool) and at_least >= 1:
            return FilterPolicy("at_least", at_least)
    if isinstance(value, int) and not isinstance(value, bool):
        return FilterPolicy("at_least", value)
    text = value.strip().lower() if isinstance(value, str) else ""
    if text in ("any", "all"):
        return FilterPolicy(text)  # type: ignore[arg-type]
    match = _AT_LEAST.match(text)
    if match and int(match.group(1)) >= 1:
        return FilterPolicy("at_least", int(match.group(1)))
    reason = f"unknown filter policy {value!r} (use any, all or at_least:K, e.g. at_least:2)"
    raise ConfigError(reason, parameter="policy")


def ensemble_refusal(
    keys: Sequence[str], policy: FilterPolicy, holdout: Collection[str] = (), models: Sequence[str] = ()
) -> ConfigError | None:
    """Why the filter models ``keys`` (their ``models``, when named otherwise) cannot filter under
    ``policy``: none, one listed twice, one also held out, or more needed than there are.

    >>> str(ensemble_refusal(["a", "a"], FilterPolicy("any")))
    "filter model 'a' is listed twice (give each a distinct name:)"
    """
    twice = [key for key, count in Counter(keys).items() if count > 1]
    held = [key for key in (*keys, *models) if key in holdout]
    if not keys:
        return ConfigError("adversarial filtering needs at least one filter model", parameter="classifiers")
    if twice:
        return ConfigError(
            f"filter model {twice[0]!r} is listed twice (give each a distinct name:)", parameter="classifiers"
        )
    if held:
        return ConfigError(
            f"{held[0]!r} is both a filter model and a held-out model; held-out models never filter",
            parameter="holdout",
        )
    if policy.kind == "at_least" and not 1 <= policy.k <= len(keys):
        return ConfigError(
            f"{{policy}} at_least:{policy.k} needs between 1 and {len(keys)} (the number of filter models)",
            parameter="policy",
        )
    return None
