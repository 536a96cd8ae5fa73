"""An Inspect AI model provider that answers with an nlibias generative backend, registered as
``nlibias`` by :mod:`nlibias.integrations.inspect_tasks`: ``--model nlibias/SPEC`` decodes exactly
as ``nlibias audit --generative SPEC --mode generated`` (docs/integrations.md, A local model
through Inspect).
"""

from __future__ import annotations

from typing import Any

from inspect_ai.model import ChatMessage, ChatMessageUser, GenerateConfig, ModelAPI, ModelOutput

from nlibias.errors import ConfigError
from nlibias.models.generative.backend import build_backend
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
        self.backend = build_backend(model_name, **model_args)
        self._lock: Any = None

    def max_connections(self) -> int:
        return 1  # one local model: one answer at a time

    async def generate(
        self, input: list[ChatMessage], tools: list[Any], tool_choice: Any, config: GenerateConfig
    ) -> ModelOutput:
        import anyio

        users = [m for m in input if isinstance(m, ChatMessageUser)]
        refused = (
            "they take no tools"
            if tools
            else f"temperature is {config.temperature}; they decode greedily (temperature 0)"
            if config.temperature not in (None, 0, 0.0)
            else f"got {len(input)} messages"
            if len(users) != 1 or len(input) != 1
            else None
        )
        if refused:
            raise ConfigError(
                f"nlibias models answer one user message, greedily: {refused}", parameter="model"
            )
        max_tokens = config.max_tokens or DEFAULT_MAX_NEW_TOKENS
        if self._lock is None:
            self._lock = anyio.Lock()
        async with self._lock:
            text = await anyio.to_thread.run_sync(self._answer, users[0].text, max_tokens)
        return ModelOutput.from_content(model=self.model_name, content=text)

    def _answer(self, prompt: str, max_tokens: int) -> str:
        batches = self.backend.answer_batches(
            [prompt], answers=("yes", "no"), mode="generated", max_new_tokens=max_tokens
        )
        return next(iter(batches)).records[0].text or ""
