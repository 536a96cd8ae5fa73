"""Fill answers pass one rule (mask_filler.check_fill_answer) whatever backend gave them: a fill
server answering log-probabilities above 0, NaN or as text is refused naming its URL and the
field; a masked-LM fill model whose checkpoint has no masked-LM head (an NLI classifier) is
refused instead of filling with a new, random head."""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from nlibias.errors import ConfigError, SourceError
from nlibias.models.mlm.mask_filler import FillBatch, FillCandidate, check_fill_answer, check_fill_batch
from test_server_fill import FakeServer, completion  # the toy LM behind the fake server


def tampered_server(tamper: Callable[[Any], Any]) -> FakeServer:
    """The toy LM's server with every answer's log-probabilities passed through ``tamper``."""

    def answer(payload: dict[str, Any]) -> dict[str, Any]:
        answered = completion(payload)
        logprobs = answered["choices"][0]["logprobs"]
        logprobs["top_logprobs"] = [
            None if top is None else {t: tamper(v) for t, v in top.items()}
            for top in logprobs["top_logprobs"]
        ]
        logprobs["token_logprobs"] = [None if v is None else tamper(v) for v in logprobs["token_logprobs"]]
        return answered

    return FakeServer(answer)


@pytest.fixture()
def tampered() -> Iterator[Callable[[Callable[[Any], Any]], FakeServer]]:
    servers: list[FakeServer] = []

    def start(tamper: Callable[[Any], Any]) -> FakeServer:
        servers.append(tampered_server(tamper))
        return servers[-1]

    yield start
    for server in servers:
        server.close()


@pytest.mark.parametrize(
    ("tamper", "said"),
    [
        (lambda v: -v + 3.0, "above 0"),  # every log-probability positive: -(-1.2) + 3 = 4.2
        (lambda v: float("nan"), "nan"),
        (lambda v: str(v), "str, not a number"),
    ],
    ids=["above-zero", "nan", "text"],
)
def test_server_fill_answers_are_refused_naming_url_and_field(
    tampered: Callable[[Callable[[Any], Any]], FakeServer], tamper: Callable[[Any], Any], said: str
) -> None:
    from nlibias.models.mlm.server_fill import ServerCausalFiller

    server = tampered(tamper)
    filler = ServerCausalFiller(f"openai:{server.url}#toy?beam=4&depth=2", max_retries=0)
    filler.scorer._alignment_checked = True  # the alignment probe is not what is tested here
    with pytest.raises(SourceError) as caught:
        list(filler.fill_batches(["Men are <mask> at work."], top_k=3, exclude=[()]))
    message = str(caught.value)
    assert server.url in message and "logprobs." in message and said in message


def test_the_rule_itself() -> None:
    # log(1) = 0 is a probability of 1: allowed; 1e-3 above 0 is not; a bool is not a number
    assert check_fill_answer("x", 0.0, source="s", field="f") == 0.0
    assert check_fill_answer("x", np.float32(-1.5), source="s", field="f") == -1.5
    for bad in (1e-3, math.inf, -math.inf, True, None, "-0.5"):
        with pytest.raises(SourceError, match="s: field f"):
            check_fill_answer("x", bad, source="s", field="f")
    with pytest.raises(SourceError, match="empty"):
        check_fill_answer("", -1.0, source="s", field="f")


def test_every_backend_batch_passes_the_rule_in_fill_requests() -> None:
    """A filler of any kind returning a log-probability above 0 is refused by the fill stage,
    naming the filler (the one place all backends' answers pass)."""
    from nlibias.extension.fill import fill_requests

    class Broken:
        name = "broken-filler"

        def identity(self) -> dict[str, Any]:
            return {"backend": "broken"}

        def fill_batches(self, texts: Any, *, top_k: int, exclude: Any) -> Iterator[FillBatch]:
            yield FillBatch(np.arange(len(texts)), [(FillCandidate("kind", 1, 2.5, 1),) for _ in texts])

    with pytest.raises(SourceError, match=r"broken-filler: field log_prob: .*above 0"):
        fill_requests(["They are <mask>."], [frozenset()], Broken(), None, top_k=1, progress=False)
    with pytest.raises(SourceError, match="rank"):
        check_fill_batch(FillBatch(np.arange(1), [(FillCandidate("kind", 2, -1.0, 2),)]), source="s", texts=1)


def test_an_nli_classifier_is_not_a_fill_model(tmp_path: Path) -> None:
    pytest.importorskip("transformers")
    from nlibias.models.mlm.hf import HFMaskedLMFiller
    from nlibias.testing.tiny_models import build_tiny_masked_lm, build_tiny_nli_classifier

    texts = ["Men are rational at work.", "Women are kind at home."]
    classifier = build_tiny_nli_classifier(tmp_path / "nli", texts)
    with pytest.raises(ConfigError, match="not a masked LM") as caught:
        HFMaskedLMFiller(classifier, device="cpu")
    assert "cls.predictions" in str(caught.value) and caught.value.parameter == "fill_model"
    filler = HFMaskedLMFiller(build_tiny_masked_lm(tmp_path / "mlm", texts), device="cpu")  # a real MLM loads
    assert filler.head_mode == "mask-only"
