"""Sentence scores from an OpenAI-compatible server's echoed prompt log-probabilities
(``/v1/completions`` with ``echo`` and ``logprobs``, as vLLM), one request a sentence; the first
token is never scored, and a server whose log-probabilities are shifted by one token is refused.

>>> scorer = ServerScorer("http://127.0.0.1:8080/v1", "m")
>>> scorer.identity()["backend"], scorer.kind
('openai-echo-logprobs', 'server')
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from itertools import accumulate
from typing import Any

from nlibias.models.generative.http_client import JSONClient, RetryPolicy, ServerError
from nlibias.models.tp.base import PairScore, PairScoreBatch, check_variant, scored_positions
from nlibias.schema.prediction_rows import log_probability_problem

PAIRS_PER_CHUNK = 32
NEEDS_ECHO = (
    "token-probability scores and scored multiple-choice options need a server that echoes prompt "
    "log-probabilities (vLLM); one without echo answers multiple-choice questions with --mode generated"
)


def prompt_logprobs(
    response: Mapping[str, Any], prompt: str, *, after: int | None = None, choice: int = 0, source: str = ""
) -> tuple[list[str], list[float | None]]:
    """The prompt's tokens and their log-probabilities from an ``echo`` completion (``choice``: which
    prompt of a list); ``after``: only those from the first token that ends past that many characters
    (a token straddling it counts), read from ``text_offset``.

    >>> r = {"choices": [{"logprobs": {"tokens": ["<s>", "A", " b", "!"], "text_offset": [0, 0, 1, 3],
    ...      "token_logprobs": [None, -1.0, -2.0, -0.5]}}]}
    >>> prompt_logprobs(r, "A b")
    (['<s>', 'A', ' b'], [None, -1.0, -2.0])
    >>> prompt_logprobs(r, "A b", after=2)  # " b" spans characters 1-3: it ends past 2
    ([' b'], [-2.0])
    >>> r["choices"][0]["logprobs"]["text_offset"] = [0, 3, 4, 6]  # as vLLM counts them: past "<s>"
    >>> prompt_logprobs(r, "A b"), prompt_logprobs(r, "A b", after=2)
    ((['<s>', 'A', ' b'], [None, -1.0, -2.0]), ([' b'], [-2.0]))
    """
    try:
        choices = response["choices"]
        # a list of prompts may be answered in any order: each choice names its prompt's index
        picked = next((c for c in choices if c.get("index") == choice), None)
        if picked is None and choice >= len(choices):
            raise ServerError(
                f"{source or 'the server'} answered {len(choices)} choices, none for the prompt at index "
                f"{choice} (choices[].index): a completion answers each prompt of a list; check the server"
            )
        logprobs = (picked or choices[choice])["logprobs"]
        tokens, values = list(logprobs["tokens"]), list(logprobs["token_logprobs"])
        offsets = logprobs.get("text_offset")
    except (KeyError, IndexError, TypeError, AttributeError):
        tokens, values, offsets = [], [], None
    echoed = isinstance(offsets, list) and len(offsets) == len(tokens)
    # vLLM counts offsets over its token strings, a leading "<s>" included: the text starts past it
    by_strings = offsets == list(accumulate(map(len, tokens[:-1]), initial=0))
    shift = max("".join(tokens).find(prompt), 0) if by_strings else 0
    # without offsets, the one generated token comes last
    keep = max(sum(1 for o in offsets if o < shift + len(prompt)), 1) if echoed else len(tokens) - 1
    first = 0 if after is None or not echoed else sum(1 for end in offsets[1:keep] if end <= shift + after)
    # no prompt tokens, or no option
    if not tokens or (after is not None and not 0 < first < keep):
        raise ServerError(
            f"{source or 'the server'} returned no prompt log-probabilities (logprobs.tokens/token_logprobs/"
            f"text_offset with echo): {NEEDS_ECHO}"
        )
    # a probability above 1, NaN or 0 (-inf) makes every sum over it wrong; only the first has none
    for at, (token, value) in enumerate(zip(tokens[:keep], values[:keep], strict=False)):
        problem = ("null" if at else None) if value is None else log_probability_problem(value)
        if problem:
            raise ServerError(
                f"{source or 'the server'}: the echoed log-probability of prompt token {at} {token!r}: "
                f"{problem} (logprobs.token_logprobs); each must be a finite number at most 0, null only "
                "on the first token: check the server, or score the model in process (causal=PATH)"
            )
    return tokens[first:keep], values[first:keep]


ALIGNMENT_PROBE = "One, two, three, four, five, six"


def check_prompt_alignment(echoed: Mapping[str, Any], plain: Mapping[str, Any], url: str) -> None:
    """Refuse a server whose echoed prompt log-probabilities are shifted by one position (at the
    prompt's last token it reports ``plain``'s next-token distribution); without ``top_logprobs``
    nothing is refused.

    >>> def answer(top):  # a three-token prompt, echoed
    ...     return {"choices": [{"logprobs": {"tokens": ["One", ",", " six"], "text_offset": [0, 3, 4],
    ...                                       "token_logprobs": [None, -1.0, -2.0], "top_logprobs": top}}]}
    >>> plain = {"choices": [{"logprobs": {"top_logprobs": [{"x": -0.5, "y": -1.0}]}}]}
    >>> check_prompt_alignment(answer([None, {",": -0.1}, {" six": -0.2}]), plain, "u")  # aligned
    >>> check_prompt_alignment(answer([None, {" six": -0.1}, {"x": -0.5, "y": -1.0}]), plain, "u")
    Traceback (most recent call last):
    nlibias.models.generative.http_client.ServerError: u: the server's echoed prompt log-probabilities are shifted by one token ...
    """
    try:
        echoed_top = echoed["choices"][0]["logprobs"]["top_logprobs"]
        following = plain["choices"][0]["logprobs"]["top_logprobs"][0]
        tokens, _ = prompt_logprobs(echoed, ALIGNMENT_PROBE)
        at_last = echoed_top[len(tokens) - 1]
    except (KeyError, IndexError, TypeError):
        return
    if not isinstance(at_last, Mapping) or not isinstance(following, Mapping) or not following:
        return
    # at_last may hold the prompt token itself beside the top entries (llama-cpp-python adds it)
    if all(t in at_last and abs(at_last[t] - following[t]) < 1e-3 for t in following):
        raise ServerError(
            f"{url}: the server's echoed prompt log-probabilities are shifted by one token (each "
            "token gets the probability of the distribution that follows it, as llama-cpp-python's "
            "server gives them), so token-probability scores from it would be wrong; serve the "
            "model with vLLM, or score it in process (causal=PATH or a gguf: spec)"
        )


class ServerScorer:
    """A causal LM behind an OpenAI-compatible ``/v1/completions`` endpoint."""

    kind = "server"

    def __init__(
        self,
        base_url: str,
        model: str,
        *,
        name: str | None = None,
        concurrency: int = 4,
        timeout: float = 120.0,
        max_retries: int = 5,
        client: JSONClient | None = None,
    ) -> None:
        self.model = model
        self.name = name or model
        self.concurrency = max(1, concurrency)
        self.client = client or JSONClient(
            base_url, timeout=timeout, retry=RetryPolicy(max_retries, 0.5, 30.0)
        )
        self.device = "server"
        self._alignment_checked = False

    def identity(self) -> Mapping[str, Any]:
        return {"backend": "openai-echo-logprobs", "base_url": self.client.base_url, "model": self.model}

    def describe(self) -> Mapping[str, Any]:
        return {**self.identity(), "concurrency": self.concurrency}

    def check_alignment(self) -> None:
        """:func:`check_prompt_alignment` on this server, once (two requests)."""
        if self._alignment_checked:
            return
        try:
            echoed = self.complete(ALIGNMENT_PROBE, logprobs=5, echo=True)
        except ServerError as exc:  # llama.cpp's server refuses echo (HTTP 400)
            if exc.status not in (400, 422):
                raise
            raise ServerError(f"{exc}: {NEEDS_ECHO}", status=exc.status) from exc
        check_prompt_alignment(echoed, self.complete(ALIGNMENT_PROBE, logprobs=5), self.client.base_url)
        self._alignment_checked = True

    def complete(self, prompt: str | list[str], **options: Any) -> dict[str, Any]:
        """One greedy token after ``prompt`` (or each of a list) from ``/completions`` (``options``:
        logprobs, echo)."""
        payload = {"model": self.model, "prompt": prompt, "max_tokens": 1, "temperature": 0.0, **options}
        return self.client.post("/completions", payload)

    def echo_tokens(self, text: str) -> tuple[list[str], list[float | None]]:
        """The tokens of ``text`` and their echoed log-probabilities."""
        return prompt_logprobs(self.complete(text, echo=True, logprobs=1), text, source=self.client.base_url)

    def echo_continuations(
        self, prompt: str, continuations: Sequence[str]
    ) -> list[tuple[list[str], list[float | None]]]:
        """Each continuation's echoed tokens after ``prompt`` (see :func:`prompt_logprobs`), one
        request for all."""
        texts = [prompt + continuation for continuation in continuations]
        answer = self.complete(texts, echo=True, logprobs=1)
        where = self.client.base_url
        return [
            prompt_logprobs(answer, t, after=len(prompt), choice=k, source=where) for k, t in enumerate(texts)
        ]

    def score_pair_batches(
        self, pairs: Sequence[tuple[str, str]], *, variant: str
    ) -> Iterator[PairScoreBatch]:
        check_variant(variant)
        if pairs:
            self.check_alignment()
        with ThreadPoolExecutor(self.concurrency) as pool:
            for start in range(0, len(pairs), PAIRS_PER_CHUNK):
                chunk = pairs[start : start + PAIRS_PER_CHUNK]
                answers = list(pool.map(self.echo_tokens, [text for pair in chunk for text in pair]))
                scores = [_pair_score(answers[2 * k], answers[2 * k + 1], variant) for k in range(len(chunk))]
                yield PairScoreBatch(list(range(start, start + len(chunk))), scores)


def _pair_score(
    a: tuple[list[str], list[float | None]], b: tuple[list[str], list[float | None]], variant: str
) -> PairScore:
    (tokens_a, lp_a), (tokens_b, lp_b) = a, b
    keep_a, keep_b = ([p > 0 and v is not None for p, v in enumerate(lp)] for lp in (lp_a, lp_b))
    left, right = scored_positions(tokens_a, tokens_b, keep_a, keep_b, variant)
    return PairScore(
        float(sum(lp_a[p] or 0.0 for p in left)),
        float(sum(lp_b[p] or 0.0 for p in right)),
        len(left),
        len(right),
    )
