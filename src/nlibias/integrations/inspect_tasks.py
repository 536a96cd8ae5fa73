"""Inspect AI tasks and model provider, registered through Inspect's ``inspect_ai`` entry point:
``nlibias/bbnli`` and ``nlibias/bbq`` (expanded from the data dir, or ``-T samples=DIR``) and
``nlibias/samples``, answered greedily and read as nlibias reads answers (:func:`nlibias_answer`);
``--model nlibias/SPEC`` (:class:`NlibiasModelAPI`). docs/integrations.md, Inspect AI.
"""

from __future__ import annotations

from typing import Any

from inspect_ai import Task, task
from inspect_ai.dataset import MemoryDataset
from inspect_ai.dataset import Sample as InspectSample
from inspect_ai.model import ChatMessage, ChatMessageUser, GenerateConfig, ModelAPI, ModelOutput, modelapi
from inspect_ai.scorer import CORRECT, INCORRECT, Score, Target, accuracy, scorer, stderr
from inspect_ai.solver import TaskState, generate

from nlibias.benchmarks.bbq import read_answer
from nlibias.catalog.registry import benchmark_for_source, get_benchmark, read_checked_samples
from nlibias.errors import ConfigError
from nlibias.integrations.lm_eval import one_style
from nlibias.integrations.offline import use_offline_token_count
from nlibias.models.generative.answers import parse_answer
from nlibias.models.generative.backend import build_backend
from nlibias.models.generative.defaults import DEFAULT_MAX_NEW_TOKENS
from nlibias.models.generative.prompts import PromptStyle
from nlibias.schema import Sample

use_offline_token_count()  # Inspect's token estimate would download tiktoken's o200k_base


class NlibiasModelAPI(ModelAPI):
    """``--model nlibias/SPEC``: a local model answered by nlibias' generative backend, decoding
    exactly as ``nlibias audit --generative SPEC --mode generated``."""

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


@modelapi(name="nlibias")
def nlibias_model() -> type[ModelAPI]:
    """Registers :class:`NlibiasModelAPI` as Inspect's ``nlibias`` provider."""
    return NlibiasModelAPI


def inspect_samples(samples: list[Sample], style: PromptStyle) -> MemoryDataset:
    """nlibias samples as Inspect samples (id, prompt, gold answer word or correct option, metadata)."""
    rows = []
    for sample in samples:
        metadata: dict[str, Any] = {
            "nlibias_prompt": style.name,
            "source": sample.source,
            "domain": sample.domain,
            "subtopic": sample.subtopic,
            "stereotype": sample.stereotype,
            "pair_key": sample.pair_key,
            "gold": sample.gold,
        }
        if style.choices:
            options = list(sample.provenance["answers"])
            text = style.render(sample.premise, sample.hypothesis, options)
            target = options[sample.provenance["correct"]]
            metadata |= {
                "nlibias_options": options,
                "nlibias_option_words": list(sample.provenance["answer_words"]),
            }
        else:
            gold = [word for word in style.answers if style.labels[word] == sample.gold]
            text, target = style.render(sample.premise, sample.hypothesis), gold[0] if gold else "no"
            metadata["nlibias_answers"] = "/".join(style.answers)  # binary: a contradiction is "no"
        rows.append(InspectSample(id=sample.id, input=text, target=target, metadata=metadata))
    return MemoryDataset(rows, name=samples[0].source if samples else "nlibias")


@scorer(metrics=[accuracy(), stderr()])
def nlibias_answer() -> Any:
    """Correct when the generated answer, read as nlibias reads it, is the target word or the
    correct option; an answer read as none is incorrect (the rule is the explanation)."""

    async def score(state: TaskState, target: Target) -> Score:
        meta, text = state.metadata, state.output.completion
        if "nlibias_options" in meta:
            options = meta["nlibias_options"]
            choice = read_answer(text, options, meta["nlibias_option_words"])
            answer, rule = ("" if choice is None else options[choice]), "BBQ options"
        else:
            parsed = parse_answer(text, tuple(str(meta.get("nlibias_answers", "yes/no")).split("/")))
            answer, rule = parsed.answer or "", parsed.rule
        right = bool(answer) and answer == target.text
        return Score(value=CORRECT if right else INCORRECT, answer=answer, explanation=f"rule: {rule}")

    return score


def _task(samples: list[Sample], prompt: Any, max_tokens: int) -> Task:
    benchmark = benchmark_for_source(samples[0].source) if samples else get_benchmark("bbnli")
    style = one_style(prompt, benchmark)
    return Task(
        dataset=inspect_samples(samples, style),
        solver=generate(),
        scorer=nlibias_answer(),
        config=GenerateConfig(temperature=0.0, max_tokens=max_tokens),
    )


def _read(samples: str | None, benchmark: str) -> list[Sample]:
    """The samples of ``samples``, else ``benchmark`` expanded from the data dir."""
    if samples is not None:
        return read_checked_samples(samples)
    return list(get_benchmark(benchmark).expand_source(None).samples)


@task
def bbnli(prompt: Any = "true", samples: str | None = None, max_tokens: int = DEFAULT_MAX_NEW_TOKENS) -> Task:
    """BBNLI asked with one prompt style (expanded from the data dir unless ``samples`` is given)."""
    return _task(_read(samples, "bbnli"), prompt, max_tokens)


@task
def bbq(prompt: Any = "race", samples: str | None = None, max_tokens: int = DEFAULT_MAX_NEW_TOKENS) -> Task:
    """BBQ asked with one multiple-choice style, race or arc (expanded from the data dir unless
    ``samples`` is given)."""
    return _task(_read(samples, "bbq"), prompt, max_tokens)


@task(name="samples")
def samples_task(samples: str = "", prompt: Any = None, max_tokens: int = DEFAULT_MAX_NEW_TOKENS) -> Task:
    """Any samples file or run directory (``nlibias expand`` or a BBNLI-next dataset)."""
    if not samples:
        raise ConfigError("pass the samples: -T samples=RUN_DIR", parameter="samples")
    return _task(read_checked_samples(samples), prompt, max_tokens)
