"""OpenAI-compatible servers as generative backends: scored answers sum the answer words among one
token's ``top_logprobs`` (a server without them: generated answers); the API key is never recorded.

>>> lm = OpenAICompatibleLM("http://127.0.0.1:8080/v1", "my-model")
>>> lm.name, lm.identity()["api"]
('my-model', 'chat')
"""

from __future__ import annotations

import math
import time
import warnings
from collections.abc import Callable, Iterator, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass, field
from typing import Annotated, Any, Literal

from nlibias.models.generative.answers import generated_record
from nlibias.models.generative.defaults import DEFAULT_MAX_NEW_TOKENS, PLAIN_ANSWER_CUE
from nlibias.models.generative.http_client import DEFAULT_API_KEY_ENV, JSONClient, RetryPolicy, ServerError
from nlibias.models.generative.records import AnswerBatch, AnswerRecord
from nlibias.schema.declared import Allowed, PositiveInt, declared
from nlibias.schema.model_keys import GenerativeMode

_TOKEN_JUNK = " \t\n\r\"'.,:;!?*()[]{}<>-_`▁Ġ"


class ServedModelWarning(UserWarning):
    """The server lists its models and the one asked for is not among them."""


def completion_top_logprobs(response: Any) -> Mapping[str, Any] | None:
    """The first generated token's top alternatives in a ``/v1/completions`` answer, or ``None``.

    >>> completion_top_logprobs({"choices": [{"logprobs": {"top_logprobs": [{" a": -0.1, " b": -2.5}]}}]})
    {' a': -0.1, ' b': -2.5}
    >>> completion_top_logprobs({"choices": [{"text": "a"}]}) is None
    True
    """
    try:
        top = response["choices"][0]["logprobs"]["top_logprobs"]
    except (KeyError, IndexError, TypeError):
        return None
    return top[0] if isinstance(top, list) and top and isinstance(top[0], Mapping) else None


def _answer_word(token: str, answers: Sequence[str]) -> str | None:
    word = token.strip(_TOKEN_JUNK).lower()
    return word if word in answers else None


@declared
def _check_settings(
    api: Literal["chat", "completions"], concurrency: Annotated[PositiveInt, Allowed("at least 1")]
) -> None:
    """The settings a server backend is refused for (their hints say the rule)."""


@dataclass
class OpenAICompatibleLM:
    """A model behind an OpenAI-compatible server, ``concurrency`` requests at once."""

    base_url: str
    model: str
    api: Literal["chat", "completions"] = "chat"
    name: str = ""
    """Model key prefix in reports; default: ``model``."""
    concurrency: int = 4
    timeout: float = 120.0
    max_retries: int = 5
    backoff: float = 0.5
    backoff_max: float = 30.0
    api_key_env: str | None = DEFAULT_API_KEY_ENV
    top_logprobs: int = 20
    sleep: Callable[[float], None] = field(default=time.sleep, repr=False)
    scored_uses_generation: bool = True
    logprobs_supported: bool | None = field(default=None, init=False)
    """Learned from the first scored answer: ``False`` once the server returned none."""
    _models_asked: bool = field(default=False, init=False, repr=False)

    def __post_init__(self) -> None:
        _check_settings(self.api, self.concurrency)
        self.name = self.name or self.model
        self.client = JSONClient(
            self.base_url,
            timeout=self.timeout,
            retry=RetryPolicy(self.max_retries, self.backoff, self.backoff_max),
            api_key_env=self.api_key_env,
            sleep=self.sleep,
        )

    def identity(self) -> Mapping[str, Any]:
        return {
            "backend": "openai-http",
            "base_url": self.client.base_url,
            "model": self.model,
            "api": self.api,
            "top_logprobs": self.top_logprobs,
        }

    def check_served_model(self) -> None:
        """Warn once when the server lists its models without ``model`` (llama.cpp's server answers
        with its one model whatever the name).
        >>> lm = OpenAICompatibleLM("http://127.0.0.1:9/v1", "m", max_retries=0)
        >>> lm.check_served_model(); lm.served_models is None  # nothing listens there: not checked
        True
        """
        if self._models_asked:
            return
        self._models_asked = True
        listed = self.client.get_once("/models")
        data = listed.get("data") if listed else None
        ids = (
            [m["id"] for m in data if isinstance(m, Mapping) and isinstance(m.get("id"), str)]
            if isinstance(data, list)
            else []
        )
        self.served_models = ids or None
        if ids and self.model not in ids:
            warnings.warn(
                ServedModelWarning(
                    f"{self.client.base_url} lists the models {', '.join(map(repr, ids[:5]))}"
                    f"{' ...' if len(ids) > 5 else ''}, not {self.model!r}: a server that holds one model "
                    f"(llama.cpp) answers with it whatever the name, and these answers are recorded as "
                    f"{self.model!r}. Name one it lists after '#', or start the server under that name "
                    "(llama-cpp-python: --model_alias)"
                ),
                stacklevel=2,
            )

    def _payload(self, prompt: str, *, max_tokens: int, logprobs: bool) -> tuple[str, dict[str, Any]]:
        payload: dict[str, Any] = {"model": self.model, "max_tokens": max_tokens, "temperature": 0.0}
        if self.api == "chat":
            payload["messages"] = [{"role": "user", "content": prompt}]
            if logprobs:
                payload["logprobs"] = True
                payload["top_logprobs"] = self.top_logprobs
            return "/chat/completions", payload
        payload["prompt"] = self.format_prompt(prompt)
        if logprobs:
            payload["logprobs"] = self.top_logprobs
        return "/completions", payload

    @staticmethod
    def format_prompt(user_text: str) -> str:
        """The text the completions API is sent for one question."""
        return user_text + PLAIN_ANSWER_CUE

    @staticmethod
    def _text(response: Mapping[str, Any]) -> str:
        choice = (response.get("choices") or [{}])[0]
        message = choice.get("message")
        if isinstance(message, dict):
            return str(message.get("content") or "")
        return str(choice.get("text") or "")

    def _top_tokens(self, response: Mapping[str, Any]) -> list[tuple[str, float]] | None:
        choice = (response.get("choices") or [{}])[0]
        logprobs = choice.get("logprobs")
        content = logprobs.get("content") if isinstance(logprobs, dict) else None
        if isinstance(content, list) and content:  # chat format
            alternatives = content[0].get("top_logprobs") or [content[0]]
            return [(str(a.get("token", "")), float(a.get("logprob", -math.inf))) for a in alternatives]
        top = completion_top_logprobs(response)  # completions format
        return None if top is None else [(str(token), float(value)) for token, value in top.items()]

    def _scored(self, prompt: str, answers: tuple[str, ...], max_new_tokens: int) -> AnswerRecord:
        if self.logprobs_supported is False:
            return self._generated(prompt, answers, max_new_tokens)
        path, payload = self._payload(prompt, max_tokens=1, logprobs=True)
        response: dict[str, Any] = {}
        try:
            response = self.client.post(path, payload)
        except ServerError as exc:
            if exc.status not in (400, 422):  # else the server rejects logprob requests
                raise
        top = self._top_tokens(response)
        self.logprobs_supported = top is not None
        if top is None:
            return self._generated(prompt, answers, max_new_tokens)
        mass = dict.fromkeys(answers, 0.0)
        for token, logprob in top:
            word = _answer_word(token, answers)
            if word is not None and math.isfinite(logprob):
                mass[word] += math.exp(logprob)
        total = sum(mass.values())
        first = self._text(response)
        if total <= 0:
            return AnswerRecord(None, text=first, rule="no-answer-token", method="scored", answer_mass=0.0)
        probs = {word: value / total for word, value in mass.items()}
        best = max(answers, key=lambda w: probs[w])
        return AnswerRecord(best, probs=probs, text=first, rule="scored", method="scored", answer_mass=total)

    def _generated(self, prompt: str, answers: tuple[str, ...], max_new_tokens: int) -> AnswerRecord:
        path, payload = self._payload(prompt, max_tokens=max_new_tokens, logprobs=False)
        response = self.client.post(path, payload)
        usage = response.get("usage") or {}
        tokens = usage.get("completion_tokens") if isinstance(usage, dict) else None
        return generated_record(
            self._text(response).strip(), answers, tokens if isinstance(tokens, int) else None
        )

    def answer(
        self,
        prompt: str,
        *,
        answers: tuple[str, ...],
        mode: GenerativeMode = "scored",
        max_new_tokens: int = DEFAULT_MAX_NEW_TOKENS,
    ) -> AnswerRecord:
        """One prompt's answer (blocking)."""
        if mode == "scored":
            return self._scored(prompt, answers, max_new_tokens)
        return self._generated(prompt, answers, max_new_tokens)

    def answer_batches(
        self,
        prompts: Sequence[str],
        *,
        answers: tuple[str, ...],
        mode: GenerativeMode = "scored",
        max_new_tokens: int = DEFAULT_MAX_NEW_TOKENS,
    ) -> Iterator[AnswerBatch]:
        """Answers as they arrive; a request that fails for good raises after those finished."""
        if not prompts:
            return
        self.check_served_model()
        # a first scored answer learns whether the server offers log-probabilities before fanning out
        start = int(mode == "scored" and self.logprobs_supported is None and len(prompts) > 1)
        if start:
            first = self.answer(prompts[0], answers=answers, mode=mode, max_new_tokens=max_new_tokens)
            yield AnswerBatch(indices=[0], records=[first])
        failure: BaseException | None = None
        with ThreadPoolExecutor(max_workers=self.concurrency, thread_name_prefix="nlibias-http") as pool:
            asked = {
                pool.submit(
                    self.answer, prompts[i], answers=answers, mode=mode, max_new_tokens=max_new_tokens
                ): i
                for i in range(start, len(prompts))
            }
            try:
                for future in as_completed(asked):
                    if future.cancelled():
                        continue
                    if future.exception() is None:
                        yield AnswerBatch(indices=[asked[future]], records=[future.result()])
                    elif failure is None:  # the prompts not yet sent are dropped; those in flight finish
                        failure = future.exception()
                        for other in asked:
                            other.cancel()
            finally:
                for other in asked:
                    other.cancel()
        if failure is not None:
            raise failure
