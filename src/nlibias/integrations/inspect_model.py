"""An Inspect AI model provider that answers with an nlibias generative backend:
``inspect eval nlibias/bbnli -T prompt=true --model nlibias/smollm2`` runs the embedded SmolLM2
locally, offline, and decodes exactly as ``nlibias audit --generative smollm2 --mode generated``
does (greedy, the model's chat template applied by nlibias, the same ``max_new_tokens``).

The model name after ``nlibias/`` is any generative model spec nlibias takes: ``smollm2``, a model
directory, ``hf:PATH``, ``gguf:PATH``, ``openai:URL#MODEL`` or ``fake:NAME`` (a deterministic
stand-in for tests). ``-M device=cpu`` / ``-M dtype=float32`` (and the other backend options) are
passed to the backend. Registered as the ``nlibias`` provider by
:mod:`nlibias.integrations.inspect_tasks` (the ``inspect_ai`` entry point).

Each sample's single user message is answered on its own (Inspect sends them concurrently; the
backend answers one at a time, in a worker thread so that Inspect's event loop goes on). The
task's ``max_tokens`` is the number of new tokens (default 64, nlibias' generated mode);
``temperature`` other than 0 is refused, since nlibias decodes greedily only.
"""

from __future__ import annotations

from typing import Any

from inspect_ai.model import ChatMessage, ChatMessageUser, GenerateConfig, ModelAPI, ModelOutput

from nlibias.errors import ConfigError
from nlibias.models.generative.defaults import DEFAULT_MAX_NEW_TOKENS


class NlibiasModelAPI(ModelAPI):
    """``nlibias/<spec>``: answers from nlibias' backend for ``spec`` (see the module)."""

    def __init__(
        self,
        model_name: str,
        base_url: str | None = None,
        api_key: str | None = None,
        config: GenerateConfig = GenerateConfig(),
        **model_args: Any,
    ) -> None:
        super().__init__(model_name, base_url, api_key, [], config)
        from nlibias.models.generative.backend import build_backend

        self.backend = build_backend(model_name, **model_args)
        self._lock: Any = None

    def max_connections(self) -> int:
        return 1  # one local model: one answer at a time

    async def generate(
        self, input: list[ChatMessage], tools: list[Any], tool_choice: Any, config: GenerateConfig
    ) -> ModelOutput:
        import anyio

        if tools:
            raise ConfigError("nlibias models answer text prompts; they take no tools", parameter="model")
        if config.temperature not in (None, 0, 0.0):
            raise ConfigError(
                f"temperature is {config.temperature}; nlibias models decode greedily (temperature 0)",
                parameter="model",
            )
        users = [m for m in input if isinstance(m, ChatMessageUser)]
        if len(users) != 1 or len(input) != 1:
            raise ConfigError(
                "nlibias models answer one user message (the prompt of an nlibias task); got "
                f"{len(input)} messages",
                parameter="model",
            )
        max_tokens = config.max_tokens or DEFAULT_MAX_NEW_TOKENS
        if self._lock is None:
            self._lock = anyio.Lock()
        async with self._lock:
            text = await anyio.to_thread.run_sync(self._answer, users[0].text, max_tokens)
        return ModelOutput.from_content(model=self.model_name, content=text)

    def _answer(self, prompt: str, max_tokens: int) -> str:
        batch = next(
            iter(self.backend.answer_batches([prompt], answers=("yes", "no"), mode="generated",
                                             max_new_tokens=max_tokens))
        )  # fmt: skip
        return batch.records[0].text or ""
