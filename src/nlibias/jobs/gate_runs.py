"""The two runs a gate compares, read and checked comparable: two different runs of one
benchmark, over the same samples (in any order), and which model of each it compares."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Annotated

from nlibias.catalog.registry import read_benchmark_samples
from nlibias.errors import ConfigError, DataError
from nlibias.io.overwrites import file_identity
from nlibias.io.run_dir import asked_settings, refuse_unlike
from nlibias.io.run_manifest import run_directory
from nlibias.jobs.results import read_checked_run
from nlibias.metrics.paired_units import ScoredRun, sample_difference
from nlibias.schema.declared import Allowed, Refuse


def load_gate_run(run_dir: str | Path, samples: str | Path | None) -> ScoredRun:
    """A run, the samples it scored (``samples``, else its recorded file; refused when edited since)
    and each model's outputs on them."""
    run = read_checked_run(run_dir)
    columns = read_benchmark_samples(run.samples.check(run.samples.file(samples))).columns
    rows = run.predictions()
    return ScoredRun.of(run.path, run.metrics, columns, rows, asked_settings(rows))


def check_different_runs(candidate: str | Path, baseline: str | Path) -> None:
    """Refuse one run directory given as both (``./runs/ref``, ``runs/ref/``, a link to it or its
    ``metrics.json`` alike)."""
    same = file_identity(run_directory(candidate)) == file_identity(run_directory(baseline))
    if same:
        raise ConfigError(
            f"the candidate ({candidate}) and the baseline ({baseline}) are the same run "
            f"({run_directory(candidate).resolve()}): a gate compares a new run with another one",
            parameter="baseline",
        )


def aligned_baseline(candidate: ScoredRun, baseline: ScoredRun) -> ScoredRun:
    """The baseline, refused where the runs' benchmarks or samples (both in id order) differ."""
    a, b = candidate.columns, baseline.columns
    source_a, source_b = candidate.metrics["source"], baseline.metrics["source"]
    sample = field = None
    if source_a != source_b:
        field, words = (
            "source",
            f"the candidate run is of {source_a!r} samples and the baseline of {source_b!r}",
        )
    elif len(a) != len(b):
        words = f"the candidate run ({candidate.path}) scored {len(a)} samples and the baseline ({baseline.path}) {len(b)}"
    elif (first := sample_difference(a, b)) is None:
        return baseline
    else:
        i, field, left, right = first
        sample = str(a.ids[i])
        words = (
            f"sample {i + 1} ({a.ids[i]!r}) differs: {field} {left!r} in the candidate run ({candidate.path}), "
            f"{right!r} in the baseline ({baseline.path})"
        )
    raise DataError(
        f"{words}; a gate compares runs over the same samples of one benchmark",
        sample=sample,
        field=field,
        fix="audit both models on the same samples file",
    )


def _not_a_pair(text: str) -> bool:
    candidate, sep, baseline = text.partition("=")
    return not (sep and candidate and baseline)


def _paired_twice(texts: Sequence[str]) -> str | None:
    """The first ``CANDIDATE=BASELINE`` whose candidate an earlier one pairs already, with it."""
    seen: dict[str, str] = {}
    for text in texts:
        candidate = text.partition("=")[0]
        if candidate in seen:  # the later pair would silently replace the earlier one
            return f"candidate model {candidate!r} is paired twice ({seen[candidate]} and {text})"
        seen[candidate] = text
    return None


GatePairs = Annotated[
    Mapping[str, str]
    | Annotated[
        Sequence[
            Annotated[
                str, Refuse(_not_a_pair, lambda text: f"{text!r} is not CANDIDATE_MODEL=BASELINE_MODEL")
            ]
        ],
        Refuse(
            lambda texts: _paired_twice(texts) is not None,
            lambda texts: f"{_paired_twice(texts)}; pair each candidate model once",
        ),
    ],
    Allowed("{candidate model: baseline model} (str: str), or CANDIDATE_MODEL=BASELINE_MODEL texts"),
]
"""The gate's model pairs: ``{candidate model: baseline model}``, or ``CANDIDATE=BASELINE`` texts
(``--pair``), each candidate model paired once."""


def pair_map(pairs: Mapping[str, str] | Sequence[str] | None) -> dict[str, str]:
    """:data:`GatePairs` as ``{candidate model: baseline model}``.

    >>> pair_map(["new=old"]), pair_map({"a": "b"}), pair_map(None)
    ({'new': 'old'}, {'a': 'b'}, {})
    """
    if isinstance(pairs, Mapping):
        return dict(pairs)
    return {text.partition("=")[0]: text.partition("=")[2] for text in pairs or ()}


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
    named = [
        *(("candidate", c, candidate) for c in given),
        *(("baseline", b, baseline) for b in given.values()),
    ]
    wrong = [
        f"{{pairs}} names {role} model {name!r}; the {role} run has {', '.join(run)}"
        for role, name, run in named
        if name not in run
    ]
    if not wrong and not given and len(candidate) == 1 and len(baseline) == 1:
        return [(candidate[0], baseline[0])]
    unmatched = ", ".join(repr(c) for c in candidate if c not in given and c not in baseline)
    if wrong or unmatched:  # a pass would say nothing of the unmatched
        raise ConfigError(
            wrong[0]
            if wrong
            else f"candidate model(s) {unmatched} have no model of the same key in the baseline run "
            f"({', '.join(baseline)}), so the gate would not test them; pair each with a baseline model "
            "(pairs={'CANDIDATE': 'BASELINE'}) or gate a run without them",
            parameter="pairs",
        )
    return [(c, given.get(c, c)) for c in candidate]


def check_asked_alike(candidate: ScoredRun, baseline: ScoredRun, pairs: Sequence[tuple[str, str]]) -> None:
    """Refuse a candidate model compared with a baseline model of another predictor kind or asked
    another way that its key hides (``io/run_dir.COMPARED``, the rule a report's comparison holds
    too): their measures are of different things."""
    for cand_model, base_model in pairs:
        refuse_unlike(
            (cand_model, candidate.path, candidate.settings(cand_model)),
            (base_model, baseline.path, baseline.settings(base_model)),
            roles=("candidate", "baseline"),
            verb="gate",
            fix=lambda setting: (
                f"pair models of one {setting} (pairs), or audit the candidate the way the "
                "baseline was audited"
            ),
        )
