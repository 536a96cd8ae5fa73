"""Inspect AI tasks for nlibias benchmarks, registered through Inspect's ``inspect_ai`` entry point
(``pyproject.toml``: ``[project.entry-points.inspect_ai] nlibias = "nlibias.integrations.inspect_tasks"``),
so that ``inspect eval nlibias/bbnli -T prompt=true --model PROVIDER/MODEL`` runs.

* ``nlibias/bbnli``: the BBNLI samples as ``nlibias expand bbnli`` writes them (expanded from the
  data dir), or those of a run directory given as ``-T samples=DIR``.
* ``nlibias/samples``: any samples file or run directory (``-T samples=DIR``; a BBNLI-next
  dataset, WQ-NLI, ...).

Each sample's input is the user message nlibias sends for the prompt style (``-T prompt=true``
or ``entailed``, or a prompt file); the provider applies the model's chat template, as an
OpenAI-compatible server does for nlibias' HTTP backend. Answers are generated (greedy,
``max_tokens`` 64 as nlibias' generated mode) and scored by :func:`yes_no`, which parses them with
nlibias' own parser (:func:`nlibias.models.generative.answers.parse_answer`); the target is the
answer word of the sample's gold label. ``nlibias score --samples RUN --predictions LOG.eval``
reads the log back into nlibias' measures (:mod:`nlibias.io.tool_logs`).

It also registers the ``nlibias`` model provider (``--model nlibias/smollm2``: a local model answered
by nlibias' own backend, offline; :mod:`nlibias.integrations.inspect_model`), and makes Inspect's
token counts work offline when Inspect loads it (:func:`nlibias.integrations.offline.use_offline_token_count`:
``NLIBIAS_INSPECT_TOKEN_COUNT``).

Inspect reads ``-T`` values as YAML, so ``-T prompt=true`` arrives as the boolean ``True``; it is
read back as the style named ``true``.

>>> prompt_name(True), prompt_name("entailed")
('true', 'entailed')
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from inspect_ai import Task, task
from inspect_ai.dataset import MemoryDataset
from inspect_ai.dataset import Sample as InspectSample
from inspect_ai.model import GenerateConfig, ModelAPI, modelapi
from inspect_ai.scorer import CORRECT, INCORRECT, Score, Target, accuracy, scorer, stderr
from inspect_ai.solver import TaskState, generate

from nlibias.errors import ConfigError
from nlibias.integrations.offline import use_offline_token_count
from nlibias.models.generative.answers import parse_answer
from nlibias.models.generative.defaults import DEFAULT_MAX_NEW_TOKENS
from nlibias.models.generative.prompts import PromptStyle, resolve_prompt_styles
from nlibias.schema import Sample

use_offline_token_count()  # Inspect's token estimate would download tiktoken's o200k_base


@modelapi(name="nlibias")
def nlibias_model() -> type[ModelAPI]:
    """``--model nlibias/SPEC``: a local model answered by nlibias' generative backend."""
    from nlibias.integrations.inspect_model import NlibiasModelAPI

    return NlibiasModelAPI


def prompt_name(prompt: Any) -> str:
    """The prompt style a ``-T prompt=...`` value names (YAML turns ``true`` into ``True``)."""
    if prompt is True:
        return "true"
    if not isinstance(prompt, str) or not prompt:
        raise ConfigError(
            f"{{prompt}} is {prompt!r}; use true, entailed or a prompt file", parameter="prompt"
        )
    return prompt


def _style(prompt: Any) -> PromptStyle:
    styles = resolve_prompt_styles([prompt_name(prompt)])
    if len(styles) != 1:
        raise ConfigError("the prompt file defines several styles; give one per task", parameter="prompt")
    return styles[0]


def inspect_samples(samples: list[Sample], style: PromptStyle) -> MemoryDataset:
    """nlibias samples as Inspect samples (id, user message, gold answer word, metadata)."""
    labels = style.labels
    rows = []
    for sample in samples:
        gold = [word for word in style.answers if labels[word] == sample.gold]
        rows.append(
            InspectSample(
                id=sample.id,
                input=style.render(sample.premise, sample.hypothesis),
                target=gold[0] if gold else "no",  # binary prompts: a contradiction is "not entailed"
                metadata={
                    "nlibias_prompt": style.name,
                    "nlibias_answers": "/".join(style.answers),
                    "source": sample.source,
                    "domain": sample.domain,
                    "subtopic": sample.subtopic,
                    "stereotype": sample.stereotype,
                    "pair_key": sample.pair_key,
                    "gold": sample.gold,
                },
            )
        )
    return MemoryDataset(rows, name=samples[0].source if samples else "nlibias")


@scorer(metrics=[accuracy(), stderr()])
def yes_no() -> Any:
    """Correct when the generated answer, parsed as nlibias parses it, is the target word;
    an unparsed answer is incorrect (its reason is the explanation)."""

    async def score(state: TaskState, target: Target) -> Score:
        answers = tuple(str(state.metadata.get("nlibias_answers", "yes/no")).split("/"))
        parsed = parse_answer(state.output.completion, answers)
        return Score(
            value=CORRECT if parsed.answer is not None and parsed.answer == target.text else INCORRECT,
            answer=parsed.answer or "",
            explanation=f"rule: {parsed.rule}",
        )

    return score


def _task(samples: list[Sample], style: PromptStyle, max_tokens: int) -> Task:
    return Task(
        dataset=inspect_samples(samples, style),
        solver=generate(),
        scorer=yes_no(),
        config=GenerateConfig(temperature=0.0, max_tokens=max_tokens),
    )


@task
def bbnli(prompt: Any = "true", samples: str | None = None, max_tokens: int = DEFAULT_MAX_NEW_TOKENS) -> Task:
    """BBNLI asked with one prompt style (expanded from the data dir unless ``samples`` is given)."""
    from nlibias.catalog.registry import read_checked_samples

    if samples is not None:
        rows = read_checked_samples(samples)
    else:
        from nlibias.catalog.registry import get_benchmark

        rows = list(get_benchmark("bbnli").expand_source(None).samples)
    return _task(rows, _style(prompt), max_tokens)


@task(name="samples")
def samples_task(samples: str = "", prompt: Any = "true", max_tokens: int = DEFAULT_MAX_NEW_TOKENS) -> Task:
    """Any samples file or run directory (``nlibias expand`` or a BBNLI-next dataset)."""
    from nlibias.catalog.registry import read_checked_samples

    if not samples:
        raise ConfigError("pass the samples: -T samples=RUN_DIR", parameter="samples")
    return _task(read_checked_samples(Path(samples)), _style(prompt), max_tokens)
