"""A prompted causal LM as a 3-way NLI classifier: probabilities equal a separate forward pass per
label word, every output goes through the prediction cache, the prompt file is part of the identity,
and the classifier works wherever a classifier spec is accepted."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("transformers")

from nlibias.errors import ConfigError, SourceError  # noqa: E402
from nlibias.models.nli.prompted import PROMPT_LABELS, PromptedNLIClassifier, load_nli_prompt  # noqa: E402
from nlibias.runtime.classifier import predict_pairs  # noqa: E402

PAIRS = [
    ("The man is a nurse.", "Men are rational."),
    ("The woman works in tech.", "Women are less suited for jobs in tech."),
    ("Muslim men live here.", "Muslim men have many wives."),
    ("The man is a nurse.", "Men are rational."),  # a repeat: computed once
]


@pytest.fixture(scope="module")
def tiny_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from nlibias.testing.tiny_causal import build_tiny_causal_lm

    texts = [f"{p} {h} Premise Hypothesis Is the hypothesis true" for p, h in PAIRS]
    return build_tiny_causal_lm(tmp_path_factory.mktemp("tiny-causal"), texts)


def reference_probs(model: Any, tok: Any, template: str, premise: str, hypothesis: str) -> list[float]:
    """One forward pass per label-word spelling: log P(spelling | prompt) read from the sequence
    prompt + spelling, summed per word over its single-token spellings, softmax over the words."""
    user = template.format(premise=premise, hypothesis=hypothesis)
    text = tok.apply_chat_template(
        [{"role": "user", "content": user}], add_generation_prompt=True, tokenize=False
    )
    prompt = tok(text, add_special_tokens=False)["input_ids"]
    spellings: dict[str, set[int]] = {}
    for word in PROMPT_LABELS:
        ids = set()
        for variant in {word, word.capitalize(), word.upper(), " " + word, " " + word.capitalize()}:
            encoded = tok.encode(variant, add_special_tokens=False)
            if len(encoded) == 1 and encoded[0] not in tok.all_special_ids:
                ids.add(encoded[0])
        spellings[word] = ids
    word_lp = {}
    for word, ids in spellings.items():
        others = set().union(*(spellings[w] for w in spellings if w != word))
        per_token = []
        for token in sorted(ids - others):
            with torch.no_grad():
                logits = model(torch.tensor([[*prompt, token]])).logits[0]
            per_token.append(float(torch.log_softmax(logits[len(prompt) - 1].double(), dim=-1)[token]))
        word_lp[word] = float(np.logaddexp.reduce(per_token))
    by_label = {PROMPT_LABELS[w]: lp for w, lp in word_lp.items()}
    ordered = np.array([by_label["entailment"], by_label["neutral"], by_label["contradiction"]])
    return list(np.exp(ordered - np.logaddexp.reduce(ordered)))


def test_probabilities_equal_a_forward_pass_per_label_word(tiny_dir: Path) -> None:
    from nlibias.models.registry import create_classifier

    classifier = create_classifier(f"prompt:{tiny_dir}", max_tokens=256)
    assert isinstance(classifier, PromptedNLIClassifier)
    run = predict_pairs(classifier, PAIRS, None, progress=False)
    assert run.unique_pairs == 3 and run.computed_pairs == 3
    model, tok = classifier.lm.load()
    for (premise, hypothesis), row in zip(PAIRS, run.probs, strict=True):
        expected = reference_probs(model, tok, classifier.template, premise, hypothesis)
        np.testing.assert_allclose(row, expected, atol=1e-5)
    assert not np.allclose(run.probs[0], run.probs[1], atol=1e-3)  # the inputs matter


def test_cache_and_prompt_identity(tiny_dir: Path, tmp_path: Path) -> None:
    from nlibias.runtime.cache import PredictionCache

    cache = PredictionCache(tmp_path / "c.sqlite")
    classifier = PromptedNLIClassifier(str(tiny_dir))
    calls = []
    model, _ = classifier.lm.load()
    model.register_forward_hook(lambda *_: calls.append(1))
    first = predict_pairs(classifier, PAIRS, cache, progress=False)
    assert first.computed_pairs == 3 and calls
    before = len(calls)
    again = predict_pairs(classifier, PAIRS, cache, progress=False)
    assert again.computed_pairs == 0 and len(calls) == before  # a rerun computes nothing
    np.testing.assert_array_equal(again.probs, first.probs)
    mine = tmp_path / "mine.txt"
    mine.write_text(
        "Premise: {premise}\nHypothesis: {hypothesis}\nTrue? yes, no or maybe.\n", encoding="utf-8"
    )
    other = PromptedNLIClassifier(f"{tiny_dir}?prompt={mine}")
    assert other.identity()["prompt_sha256"] != classifier.identity()["prompt_sha256"]
    replaced = predict_pairs(other, PAIRS, cache, progress=False)
    assert replaced.computed_pairs == 3  # another prompt: not read from the first prompt's entries
    assert not np.allclose(replaced.probs, first.probs)
    cache.close()


def test_refusals(tiny_dir: Path, tmp_path: Path) -> None:
    bad = tmp_path / "bad.txt"
    bad.write_text("Premise: {premise} only\n", encoding="utf-8")
    with pytest.raises(SourceError):
        load_nli_prompt(bad)
    with pytest.raises(ConfigError) as info:
        PromptedNLIClassifier(str(tiny_dir), quantize="int8")
    assert info.value.parameter == "quantize"
    with pytest.raises(ConfigError) as info:
        PromptedNLIClassifier(f"{tiny_dir}?template=x")
    assert info.value.parameter == "model"


def test_usable_as_audited_classifier_and_filter_model(tiny_dir: Path) -> None:
    from nlibias.extension.config import FilterConfig, FilterModelConfig
    from nlibias.extension.filtering import filter_candidates, filter_classifier
    from nlibias.runtime.build import build_predictors
    from nlibias.schema import Sample

    (predictor,) = build_predictors([f"prompt:{tiny_dir}"])
    assert predictor.kind == "classifier" and predictor.name == f"prompt:{tiny_dir}"
    spec = FilterModelConfig(model=f"prompt:{tiny_dir}", name="judge")
    classifier = filter_classifier(spec, FilterConfig(models=[spec], holdout=[]))
    assert classifier.name == "judge"
    samples = [
        Sample(
            id=str(i), source="bbnli-next", domain="d", subtopic="t", premise=p, hypothesis=h, gold="neutral"
        )
        for i, (p, h) in enumerate(PAIRS)
    ]
    run = filter_candidates(samples, [classifier], None, progress=False)
    stats = run.model_stats["judge"]
    assert stats["identity"]["backend"] == "prompted-nli" and stats["unique_pairs"] == 3
    expected = predict_pairs(classifier, PAIRS, None, progress=False).probs
    for sample, row in zip(run.candidates, expected, strict=True):
        recorded = sample.provenance["filter"]["judge"]["probs"]
        assert [recorded[k] for k in ("entailment", "neutral", "contradiction")] == pytest.approx(
            row, abs=1e-6
        )
