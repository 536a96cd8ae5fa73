"""Causal-LM fill from an OpenAI-compatible server (vLLM, ...) over ``/v1/completions``: the beam
grows from ``top_logprobs`` (a word's boundary probability: 1 minus its continuing pieces'), the
sentences are re-ranked by their echoed prompt log-probabilities.

>>> filler = ServerCausalFiller("openai:http://127.0.0.1:8080/v1#m?beam=4&depth=2", stopwords={"the"})
>>> filler.identity()["server"]["model"], filler.beam, filler.top_logprobs
('m', 4, 20)
"""

from __future__ import annotations

import math
from collections.abc import Callable, Collection, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor

from nlibias.models.generative.http_client import ServerError, server_address
from nlibias.models.generative.openai_http import completion_top_logprobs
from nlibias.models.mlm.causal_fill import (
    FILL_OPTIONS,
    Beam,
    BeamRerankFiller,
    MaskedText,
    Step,
    is_word_piece,
)
from nlibias.models.mlm.hf import is_whole_word
from nlibias.models.mlm.mask_filler import check_fill_answer
from nlibias.models.tp.server import ServerScorer
from nlibias.schema.model_ref import ModelRef

BACKEND_VERSION = 1
SERVER_FILL_OPTIONS = FILL_OPTIONS | {"top_logprobs"}
TEXTS_PER_CHUNK = 32


def parse_server_spec(spec: str) -> tuple[str, str, dict[str, str]]:
    """``(base URL, model, options)`` of ``openai:URL#MODEL?key=value``.

    >>> parse_server_spec("openai:http://h:8000/v1#org/m?beam=8")
    ('http://h:8000/v1', 'org/m', {'beam': '8'})
    """
    ref = ModelRef.parse(spec, parameter="fill_model", allowed=SERVER_FILL_OPTIONS)
    return *server_address(ref, "fill_model"), dict(ref.options)


class ServerCausalFiller(BeamRerankFiller):
    """Fills ``<mask>`` with a causal LM behind ``openai:URL#MODEL[?beam=16&depth=3&pool=10&top_logprobs=20]``."""

    tie = staticmethod(lambda beam: beam.text)

    def __init__(
        self,
        spec: str,
        *,
        stopwords: Collection[str] = (),
        name: str | None = None,
        concurrency: int = 4,
        timeout: float = 120.0,
        max_retries: int = 5,
    ) -> None:
        url, model, options = parse_server_spec(spec)
        super().__init__(options, name=name or spec, stopwords=stopwords, texts_per_chunk=TEXTS_PER_CHUNK)
        self.top_logprobs = self.options.top_logprobs
        self.scorer = ServerScorer(
            url, model, concurrency=concurrency, timeout=timeout, max_retries=max_retries
        )
        self.device = "server"
        self._identity = self._fill_identity(
            {
                "backend": "server-causal-fill",
                "backend_version": BACKEND_VERSION,
                "server": dict(self.scorer.identity()),
            },
            top_logprobs=self.top_logprobs,
        )

    @property
    def requests(self) -> int:
        return self.scorer.client.requests_sent

    def next_tokens(self, prompt: str) -> dict[str, float]:
        """The server's top next tokens after ``prompt`` with their log-probabilities."""
        raw = completion_top_logprobs(self.scorer.complete(prompt, logprobs=self.top_logprobs))
        if raw is None:
            raise ServerError(
                f"{self.scorer.client.base_url}: the completion has no top log-probabilities "
                "(logprobs.top_logprobs); a causal fill needs a server that returns them (vLLM)"
            )
        where = f"{self.scorer.client.base_url}/completions"
        return {
            str(token): check_fill_answer(token, value, source=where, field="logprobs.top_logprobs")
            for token, value in raw.items()
        }

    def sentence_log_probs(self, texts: Sequence[str]) -> list[float]:
        """log P of each whole text (every token after the first), each token's answer checked."""
        if not texts:
            return []
        self.scorer.check_alignment()
        with ThreadPoolExecutor(self.scorer.concurrency) as pool:
            return list(pool.map(self._sentence_log_prob, texts))

    def _sentence_log_prob(self, text: str) -> float:
        tokens, values = self.scorer.echo_tokens(text)
        where = f"{self.scorer.client.base_url}/completions"
        return float(
            sum(
                check_fill_answer(str(token), value, source=where, field="logprobs.token_logprobs")
                for token, value in zip(tokens[1:], values[1:], strict=True)
                if value is not None
            )
        )

    def _ask(self, prompts: Sequence[str]) -> list[dict[str, float]]:
        unique = list(dict.fromkeys(prompts))  # beams that spell the same text ask once
        with ThreadPoolExecutor(self.scorer.concurrency) as pool:
            answers = dict(zip(unique, pool.map(self.next_tokens, unique), strict=True))
        return [answers[p] for p in prompts]

    def _stepper(self, contexts: Sequence[MaskedText]) -> Callable[[list[Beam], int], list[Step]]:
        self.scorer.check_alignment()

        def step(beams: list[Beam], depth: int) -> list[Step]:
            prompts = [
                contexts[b.context].left + (contexts[b.context].sep + b.text if depth else "") for b in beams
            ]
            tops = self._ask(prompts)
            return [self._step(top, depth, contexts[b.context]) for b, top in zip(beams, tops, strict=True)]

        return step

    @staticmethod
    def _step(top: Mapping[str, float], depth: int, context: MaskedText) -> Step:
        """A word's boundary (1 minus its continuing pieces' probability), and what may continue it:
        first a word-starting token (after a space: `` word``), then word pieces."""
        pieces = {t: v for t, v in top.items() if is_word_piece(t)}
        continuing = sum(math.exp(v) for v in pieces.values())
        boundary = math.log1p(-continuing) if continuing < 1.0 else None
        if depth > 0 or not context.sep:
            return boundary, [(t, t, v) for t, v in pieces.items()]
        return boundary, [
            (t[1:], t[1:], v) for t, v in top.items() if t.startswith(" ") and is_whole_word(t[1:])
        ]
