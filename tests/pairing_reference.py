"""The pairing of samples written sample by sample: the reference that the array pairing of
nlibias.metrics.pairing is checked against."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from nlibias.errors import DataError
from nlibias.schema import Sample


def pair_samples(
    samples: Sequence[Sample],
    role: Callable[[Sample], str | None],
    roles: tuple[str, str],
    *,
    unit: str,
    members: str = "samples",
) -> tuple[list[dict[str, Sample]], list[str]]:
    """Group samples into complete pairs by ``pair_key`` and ``role(sample)`` (one of ``roles``).

    Returns the complete pairs (role → sample, in first-seen order) and the ids of samples with no
    pair key, no role, or no partner. Two samples in one role of a pair is an error naming both.

    >>> a = Sample(id="a", source="x", domain="d", subtopic="t", premise="P", hypothesis="H",
    ...            gold="neutral", stereotype="pro", pair_key="k")
    >>> pairs, unpaired = pair_samples([a], lambda s: s.stereotype, ("pro", "anti"), unit="row")
    >>> pairs, unpaired
    ([], ['a'])
    """
    by_key: dict[str, dict[str, Sample]] = {}
    unpaired: list[str] = []
    for sample in samples:
        name = role(sample)
        if sample.pair_key is None or name not in roles:
            unpaired.append(sample.id)
            continue
        slot = by_key.setdefault(sample.pair_key, {})
        if name in slot:
            raise DataError(
                f"pair {sample.pair_key!r} has two {name} {members} ({slot[name].id!r}, {sample.id!r}); "
                f"each {unit} is one {roles[0]} and one {roles[1]}",
                sample=sample.id,
                field="pair_key",
            )
        slot[name] = sample
    complete: list[dict[str, Sample]] = []
    for pair in by_key.values():
        if set(pair) == set(roles):
            complete.append(pair)
        else:
            unpaired.extend(s.id for s in pair.values())
    return complete, unpaired
