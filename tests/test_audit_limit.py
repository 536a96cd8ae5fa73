"""``nlibias audit --limit N`` and ``nlibias.audit(..., limit=N)``: a stratified, seeded subset
(every subtopic, pairs whole, the demo's sampler), recorded in metrics.json; and the ``Samples``
that ``nlibias.expand`` returns behaves as the list of samples it holds (issue #39)."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest
from typer.testing import CliRunner

import nlibias
from nlibias.cli.main import app
from nlibias.errors import ConfigError
from nlibias.jobs import demo, subset
from nlibias.jobs.subset import stratified_subset
from nlibias.schema import Sample

runner = CliRunner()


@pytest.fixture(scope="module")
def bbnli() -> nlibias.Samples:
    return nlibias.expand("bbnli")


def test_fifty_of_bbnli_keep_every_subtopic_and_whole_pairs(bbnli: nlibias.Samples) -> None:
    everything = list(bbnli)
    picked = stratified_subset(everything, 50, seed=0)
    # 2,276 paired of 3,134 samples: round(50 * 2276 / 3134) = 36 paired samples = 18 pairs (at least
    # one for each of the 16 subtopics); the other 50 - 36 = 14 are test samples, drawn by subtopic
    assert len(picked) == 50
    pairs = Counter(s.pair_key for s in picked if s.stereotype is not None)
    assert len(pairs) == 18 and set(pairs.values()) == {2}  # no half pair
    assert sum(1 for s in picked if s.stereotype is None) == 14
    assert {s.subtopic for s in picked} == {s.subtopic for s in everything} and len(
        {s.subtopic for s in picked}
    ) == 16
    assert [s.id for s in picked] == [s.id for s in everything if s in set(picked)]  # input order kept
    assert stratified_subset(everything, 50, seed=0) == picked  # same seed, same subset
    assert stratified_subset(everything, 50, seed=1) != picked
    assert stratified_subset(everything, 10_000, seed=0) == everything


def test_the_demo_and_the_limit_share_one_sampler() -> None:
    assert demo.sample_pairs_stratified is subset.sample_pairs_stratified


@pytest.mark.parametrize("limit", [0, -3, 2.5, True])
def test_a_limit_that_is_no_count_is_refused_naming_the_parameter(limit: object) -> None:
    with pytest.raises(ConfigError) as error:
        stratified_subset([], limit, seed=0)  # type: ignore[arg-type]
    assert error.value.parameter == "limit"


def test_cli_audit_limit_audits_the_subset_and_records_the_seed(
    tmp_path: Path, bbnli: nlibias.Samples
) -> None:
    out = tmp_path / "run"
    args = ["audit", "--samples", str(bbnli.path), "--model", "fake:alpha", "--out", str(out)]
    result = runner.invoke(
        app, [*args, "--limit", "50", "--seed", "7", "--bootstrap", "0", "--no-cache", "--quiet"]
    )
    assert result.exit_code == 0, result.output
    metrics = json.loads((out / "metrics.json").read_text())
    assert metrics["subset"] == {"limit": 50, "seed": 7, "samples": 50, "of": 3134, "from": str(bbnli.path)}
    assert metrics["n_samples"] == 50
    written = [json.loads(line)["id"] for line in (out / "samples.jsonl").read_text().splitlines()]
    assert written == [s.id for s in stratified_subset(list(bbnli), 50, seed=7)]
    assert len((out / "predictions.jsonl").read_text().splitlines()) == 50
    assert len(list(bbnli)) == 3134  # the samples given are left as they were


def test_library_audit_limit_and_refusal_to_overwrite_the_samples(bbnli: nlibias.Samples) -> None:
    result = nlibias.audit(bbnli, ["fake:alpha"], cache=False, bootstrap=0, progress=False, limit=40, seed=3)
    assert result.metrics["subset"]["samples"] == 40 and result.metrics["n_samples"] == 40
    with pytest.raises(ConfigError) as error:
        nlibias.audit(
            bbnli, ["fake:alpha"], cache=False, bootstrap=0, progress=False, limit=40, out_dir=bbnli.path
        )
    assert error.value.parameter == "out_dir"


def test_expanded_samples_iterate_index_and_count_like_their_list(bbnli: nlibias.Samples) -> None:
    as_list = [
        Sample.from_dict(json.loads(line)) for line in (bbnli.path / "samples.jsonl").read_text().splitlines()
    ]
    assert len(bbnli) == len(as_list) == 3134
    assert list(bbnli) == as_list
    assert bbnli[0] == as_list[0] and bbnli[-1] == as_list[-1] and bbnli[10:12] == as_list[10:12]
    assert as_list[5] in bbnli
    assert sum(1 for s in bbnli if s.stereotype == "pro") == 1138
