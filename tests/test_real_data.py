"""Real data passes every rule (issue #48): each data set in ``$NLIBIAS_DATA_DIR`` goes end to end
through each reader that accepts it (the benchmark's expansion, the samples file written and
read back through the samples rules) without a refusal. A rule that refuses the published data is
as wrong as one that misses bad data. (Paper 004's workbooks, which are not shipped, are read by
``bench/published_workbooks.py``.)"""

from __future__ import annotations

from pathlib import Path

import pytest

from nlibias.debias.wordlists import user_list, winobias_list
from nlibias.io.samples import read_samples
from nlibias.jobs.expand import expand_to_dir

# The upstream counts: BBNLI 3,134 samples (2,276 bias + 858 test) at the pinned commit, its 199
# pro/anti hypothesis pairs once the 56 identical ones are left out; WinoQueer-NLI's 76,288 rows
# (one sample each); CrowS-Pairs' 1,508 pairs; BBQ's 6 offline categories, 11,956 examples (Age
# 3,680, Disability status 1,556, Nationality 3,080, Physical appearance 1,576, Religion 1,200,
# Sexual orientation 864).
EXPECTED = {"bbnli": 3134, "bbnli-tp": 199, "wq-nli": 76288, "crows-pairs": 1508, "bbq": 11956}


@pytest.mark.parametrize("benchmark", sorted(EXPECTED))
def test_every_shared_data_set_expands_and_reads_back(benchmark: str, tmp_path: Path) -> None:
    summary = expand_to_dir(benchmark, tmp_path)
    samples = read_samples(tmp_path)
    assert len(samples) == EXPECTED[benchmark]
    assert summary.get("modified_data") is None  # the shared copies are the pinned files


def test_the_shared_winobias_lists_are_the_vendored_ones_and_load(data_dir: Path) -> None:
    from importlib import resources

    for name in ("generalized_swaps.txt", "extra_gendered_words.txt"):
        vendored = (resources.files("nlibias") / "resources" / "winobias" / name).read_bytes()
        assert (data_dir / "winobias-swaps" / name).read_bytes() == vendored, name
    mapping = winobias_list().mapping
    assert mapping["actress"] == "actor" and mapping["cowgirl"] == "cowboy"  # one-way, then both ways


def test_the_one_way_winobias_list_reads_as_a_users_list(data_dir: Path) -> None:
    # ``generalized_swaps.txt`` has the user format (word<TAB>counterpart, spaces around trimmed)
    swaps = user_list(data_dir / "winobias-swaps" / "generalized_swaps.txt")
    assert swaps.mapping["actor"] == "actress" and swaps.mapping["actress"] == "actor"
