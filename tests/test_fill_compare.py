"""Fill comparison (issue #28 item 4) and the card's model section, on fakes: every number is
recomputed here independently from the candidates and the fake classifiers' own outputs."""

from __future__ import annotations

import os

import numpy as np
import pytest

from nlibias.benchmarks.bbnli import load_bbnli_dir
from nlibias.extension.card import fill_comparison_table, model_rows, models_section
from nlibias.extension.fill import compare_fills, fill_masked_samples
from nlibias.extension.masked_templates import (
    expand_masked_templates,
    load_masked_templates,
    original_hypothesis,
)
from nlibias.models.fake import FakeNLIClassifier
from nlibias.models.mlm.mask_filler import MASK, FakeMaskFiller

DATA = os.environ.get("NLIBIAS_DATA_DIR")
pytestmark = pytest.mark.skipif(not DATA, reason="NLIBIAS_DATA_DIR is not set")


@pytest.fixture(scope="module")
def setting() -> tuple[list, list]:
    everything = load_bbnli_dir(f"{DATA}/bbnli")
    chosen = [s for s in everything if s.subtopic == "Muslim_man_to_many_wives"]
    return chosen, expand_masked_templates(load_masked_templates(None, everything), chosen)


def test_original_hypothesis_is_the_unmasked_bbnli_sentence(setting: tuple[list, list]) -> None:
    chosen, masked = setting
    run = fill_masked_samples(masked, FakeMaskFiller(), None, top_k=2, progress=False)
    strategy = {t.id: t.strategy for t in load_masked_templates(None, load_bbnli_dir(f"{DATA}/bbnli"))}
    checked = 0
    for candidate in run.candidates:
        masked_text = candidate.provenance["masked_hypothesis"]
        excluded = next(m.exclude for m in masked if m.id == candidate.provenance["masked_id"])
        if strategy[candidate.provenance["template_id"]] == "mask_word":
            # mask_word: the original sentence is the masked one with the original word back
            assert len(excluded) == 1
            original = original_hypothesis(candidate, chosen[0])
            assert original.lower() == masked_text.replace(MASK, excluded[0]).lower()
            checked += 1
    assert checked > 0


def test_compare_fills_counts(setting: tuple[list, list]) -> None:
    chosen, masked = setting
    filler = FakeMaskFiller(words=("alpha", "beta", "gamma", "delta"))
    judge, keeper = FakeNLIClassifier("judge", seed=1), FakeNLIClassifier("keeper", seed=2)
    (row,) = compare_fills(
        masked, {"fake": filler}, chosen, judge=judge, filters=[keeper], cache=None, top_k=3
    )
    candidates = fill_masked_samples(masked, filler, None, top_k=3, progress=False).candidates
    # independent counts: every template gets at most the 4 words; words over all templates
    per_template: dict[str, set[str]] = {}
    for c in candidates:
        per_template.setdefault(c.provenance["template_id"], set()).add(c.provenance["fill_word"])
    assert row["candidates"] == len(candidates)
    assert row["variants_per_template"] == round(np.mean([len(v) for v in per_template.values()]), 2)
    assert row["distinct_words"] == len(set().union(*per_template.values())) <= 4

    def labels(classifier: FakeNLIClassifier, pairs: list[tuple[str, str]]) -> list[int]:
        out = np.zeros((len(pairs), 3))
        for batch in classifier.predict_batches(pairs):
            out[batch.indices] = batch.probs
        return list(out.argmax(axis=1))

    originals = [(original_hypothesis(c, chosen[0]), c.hypothesis) for c in candidates]
    changed = np.mean([label != 0 for label in labels(judge, originals)])  # 0 = entailment
    kept = np.mean([label != 1 for label in labels(keeper, [(c.premise, c.hypothesis) for c in candidates])])
    assert row["meaning_changed"] == pytest.approx(changed)
    assert row["keep_rate"] == pytest.approx(kept)
    table = fill_comparison_table([row])
    assert f"{100 * changed:.1f}%" in table and f"{100 * kept:.1f}%" in table


def test_card_names_fill_and_filter_models_with_identities() -> None:
    info = {
        "fill": {"fill_model": {"name": "smollm2", "kind": "causal", "identity": {"backend": "causal-fill"}}},
        "filter": {
            "model_stats": {
                "prompt:smollm2": {"identity": {"backend": "prompted-nli", "prompt_sha256": "ab"}}
            }
        },
    }
    rows = model_rows(info)
    assert [(r["role"], r["model"], r["kind"]) for r in rows] == [
        ("fill", "smollm2", "causal"),
        ("filter", "prompt:smollm2", "prompted-nli"),
    ]
    text = "\n".join(models_section(rows))
    assert "prompt_sha256=ab" in text and "backend=causal-fill" in text
