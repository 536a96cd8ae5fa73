"""A model named with its kind written out (``hf:``, ``mlm:``, ``masked:``, ``causal:``) loads
the same model as its bare name, in every place that takes that kind of model.

Before, the prefix reached the Hugging Face loader in the audit's sentence scorers (``--mlm``,
``--causal``), the extension's filter and fill models and the HER resolver: the path check
accepted ``mlm:./m``, then loading it failed ("cannot load the masked LM 'mlm:./m'"), while the
generative field and the audit's classifiers read the same names.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from nlibias.runtime.build import build_predictors
from nlibias.runtime.model_set import ModelSet


@pytest.mark.parametrize("kind", ["", "hf:", "mlm:", "masked:"])
def test_a_masked_scorer_named_with_its_kind_is_the_bare_one(tiny_mlm_dir: Path, kind: str) -> None:
    (predictor,) = build_predictors(ModelSet.of(mlm=f"{kind}{tiny_mlm_dir}"))
    # the same key as the bare path: the same model, so its cache entries and results are shared
    assert predictor.name == f"{tiny_mlm_dir}|tp=shared"


@pytest.mark.parametrize("kind", ["", "hf:", "causal:"])
def test_a_causal_scorer_named_with_its_kind_is_the_bare_one(tiny_causal_dir: Path, kind: str) -> None:
    (predictor,) = build_predictors(ModelSet.of(causal=f"{kind}{tiny_causal_dir}"))
    assert predictor.name == f"{tiny_causal_dir}|tp=shared"


def test_the_extension_fill_model_takes_hf(tiny_mlm_dir: Path) -> None:
    from nlibias.extension.config import MLMConfig
    from nlibias.extension.pipeline import default_filler

    bare = default_filler(MLMConfig(model=str(tiny_mlm_dir)))
    named = default_filler(MLMConfig(model=f"hf:{tiny_mlm_dir}"))
    assert dict(named.identity()) == dict(bare.identity())


@pytest.mark.parametrize(("prefix", "scorer"), [("masked:", "mlm"), ("mlm:", "mlm"), ("hf:", "causal")])
def test_the_her_model_takes_its_kind(
    tiny_mlm_dir: Path, tiny_causal_dir: Path, prefix: str, scorer: str
) -> None:
    from nlibias.debias.swap import HerResolver

    model = tiny_mlm_dir if scorer == "mlm" else tiny_causal_dir
    assert HerResolver.load(f"{prefix}{model}").scorer.kind == scorer


def test_the_bare_fake_is_the_fake_classifier_as_every_check_reads_it() -> None:
    # ModelRef.is_fake (the dtype, device and quantize checks) read a bare "fake" as the fake, while
    # the classifier builder looked it up on the hub ("cannot load the model config 'fake'"), and
    # a label map given with it passed the check that refuses it for "fake:NAME"
    from nlibias.runtime.options import ModelOptions
    from nlibias.schema.applies import InapplicableOption

    (predictor,) = build_predictors(["fake"])
    assert predictor.kind == "classifier" and predictor.describe()["backend"] == "fake"
    with pytest.raises(InapplicableOption, match="not to 'fake': a fake or prompted classifier"):
        build_predictors(["fake"], options=ModelOptions(label_map="0=entailment,1=neutral,2=contradiction"))
