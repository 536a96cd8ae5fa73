"""Which candidate model a gate compares with which baseline model (:func:`nlibias.jobs.gate.gate`)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from nlibias.errors import ConfigError


def match_models(
    candidate: Sequence[str], baseline: Sequence[str], pairs: Mapping[str, str] | None
) -> list[tuple[str, str]]:
    """``(candidate model, baseline model)`` pairs: ``pairs`` first, then equal keys; a run of
    one model each pair up without being told. A candidate model left without a baseline model is
    refused (the gate would pass without testing it); baseline models left over are not tested.

    >>> match_models(["a", "b"], ["b", "a"], None), match_models(["new"], ["old"], None)
    ([('a', 'a'), ('b', 'b')], [('new', 'old')])
    """
    given = dict(pairs or {})
    for cand, base in given.items():
        if cand not in candidate:
            raise ConfigError(
                f"{{pairs}} names candidate model {cand!r}; the candidate run has {', '.join(candidate)}",
                parameter="pairs",
            )
        if base not in baseline:
            raise ConfigError(
                f"{{pairs}} names baseline model {base!r}; the baseline run has {', '.join(baseline)}",
                parameter="pairs",
            )
    if not given and len(candidate) == 1 and len(baseline) == 1:
        return [(candidate[0], baseline[0])]
    found = [(c, given.get(c, c)) for c in candidate if c in given or c in baseline]
    if not found:
        raise ConfigError(
            f"no model of the candidate run ({', '.join(candidate)}) is in the baseline run ({', '.join(baseline)}); "
            "pair them by key (pairs={'CANDIDATE': 'BASELINE'})",
            parameter="pairs",
        )
    unmatched = ", ".join(repr(c) for c in candidate if c not in given and c not in baseline)
    if unmatched:  # a pass would say nothing of them
        raise ConfigError(
            f"candidate model(s) {unmatched} have no model of the same key in the baseline run ({', '.join(baseline)}), "
            "so the gate would not test them; pair each with a baseline model (pairs={'CANDIDATE': 'BASELINE'}) "
            "or gate a run without them",
            parameter="pairs",
        )
    return found
