"""Export samples as an lm-evaluation-harness task (``nlibias export lm-eval``).

The task directory holds ``<task>.yaml``, ``<task>.jsonl`` (one document per sample) and
``README.md`` (the command to run). Each document is one sample asked with one prompt style as a
``multiple_choice`` task of yes/no **log-likelihood** requests, built so that lm-eval scores
exactly what a scored nlibias audit of the same model scores:

* **The exact text nlibias sends.** The user message is rendered with the prompt style and the
  model's chat template is applied by nlibias (as :meth:`HFCausalLM.format_prompt` does; a model
  without one gets the plain prompt and ``"\\nAnswer:"``). The text is final: run lm-eval
  **without** ``--apply_chat_template``, and with ``add_bos_token=False`` for a chat template
  (the template brings its own special tokens, and nlibias adds none).
* **The answer spellings as choices.** An answer word's probability in nlibias is the sum over
  its single-token spellings (``yes``, `` yes``, ``Yes`` ...; :meth:`HFCausalLM.answer_spellings`),
  renormalised among the answer words. Every spelling is one choice; ``choice_answers`` names the
  word each stands for, and the log-likelihoods come back as the same probabilities
  (:mod:`nlibias.io.tool_logs`).
* **Trap 1: lm-eval moves the context's trailing whitespace into every continuation**
  (``_encode_pair``): a chat template ending in ``"assistant\\n"`` would be scored with ``"\\nyes"``.
  The export makes that explicit: the context is the prompt without its trailing whitespace, and
  every choice starts with that whitespace. Each continuation then costs the same
  ``log p("\\n" | context)`` more, which cancels when the choices are renormalised; the export
  checks with the model's tokenizer that ``context + choice`` is the prompt's tokens plus the
  spelling's one token, for every sample and choice, and refuses otherwise.
* **Trap 2: an empty-string choice crashes lm-eval.** Spellings are never empty, and the export
  refuses an empty choice rather than writing one. ``target_delimiter`` is ``""`` (lm-eval's
  default puts a space before every choice).
* **lm-eval's ``acc`` counts answer words.** Its default multiple-choice ``acc`` compares the most
  likely *spelling* with one target spelling (``" No"`` against ``"no"`` scores 0). The task's
  ``process_results`` (``nlibias_metrics.py``, written beside the YAML, self-contained) sums each
  word's spellings as nlibias does: ``acc`` is 1 when the answer word is the target's word.

``run_lm_eval.sh`` loads the model directory of the export, or ``$NLIBIAS_LM_EVAL_PRETRAINED``.

>>> task_name("bbnli", "true")
'nlibias_bbnli_true'
"""

from __future__ import annotations

import shlex
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from nlibias.errors import ConfigError
from nlibias.schema.declared import declared

RUN_SCRIPT = "run_lm_eval.sh"
"""The lm_eval command line of the export, extra flags appended (``--output_path DIR`` ...)."""

PRETRAINED_ENV = "NLIBIAS_LM_EVAL_PRETRAINED"
"""Read by ``run_lm_eval.sh``: the model directory lm_eval loads (default: the one the task was
exported with, e.g. the dequantised SmolLM2 in nlibias' cache)."""

METRICS_MODULE = "nlibias_metrics"
"""The task's ``process_results`` module, written beside its YAML (see :data:`_METRICS_SOURCE`)."""

DOC_FIELDS = ("id", "query", "choices", "choice_answers", "target", "prompt", "answers")
"""Fields of each exported document (the log reader needs ``id``, ``choice_answers``, ``prompt``
and ``answers``)."""


def task_name(source: str, prompt: str) -> str:
    """The default task name: ``nlibias_<source>_<prompt>`` with ``-`` and ``.`` as ``_``."""
    return "nlibias_" + f"{source}_{prompt}".replace("-", "_").replace(".", "_")


@dataclass(frozen=True)
class LmEvalExport:
    """What :func:`export_lm_eval` wrote."""

    out_dir: Path
    task: str
    """The task name to pass to ``lm_eval --tasks``."""
    n_docs: int
    chat_template: bool
    """Whether the model's chat template is part of the exported text."""
    spellings: dict[str, list[str]]
    """Answer word → the choice texts (without the moved whitespace) that stand for it."""
    command: str
    """The ``lm_eval`` command line that runs the task (``run_lm_eval.sh`` in the directory; add
    ``--output_path DIR``)."""


@declared
def export_lm_eval(
    samples: str | Path,
    out_dir: str | Path,
    *,
    prompt: str = "true",
    model: str = "smollm2",
    task: str | None = None,
    device: str = "cpu",
    model_path: str | None = None,
    **model_options: Any,
) -> LmEvalExport:
    """Write an lm-evaluation-harness task that asks ``model`` what nlibias asks it (yes/no
    log-likelihoods) on ``samples`` (a run directory or samples file) into ``out_dir``; as
    ``nlibias export lm-eval``. ``prompt``: the prompt style (a built-in name or a prompt file);
    ``model``: a local causal LM (a generative model spec: ``smollm2``, ``hf:PATH``, a directory),
    loaded on ``device`` to read its tokenizer and chat template.

    ``model_path``: what the README's command passes as ``pretrained=`` (default: the model's
    directory, or the dequantised copy of a GGUF model). ``model_options`` go to the backend.

    >>> # nlibias.export_lm_eval("runs/bbnli", "tasks/bbnli").command
    """
    from nlibias.catalog.registry import read_checked_samples
    from nlibias.io.atomic import atomic_write_text, write_json, write_jsonl
    from nlibias.models.generative.backend import build_backend
    from nlibias.models.generative.hf_causal import HFCausalLM
    from nlibias.models.generative.prompts import resolve_prompt_styles
    from nlibias.schema.model_ref import ModelRef

    styles = resolve_prompt_styles([prompt])
    if len(styles) != 1:
        raise ConfigError(
            f"{{prompt}} {prompt!r} names {len(styles)} prompt styles; export one at a time",
            parameter="prompt",
        )
    style = styles[0]
    rows = read_checked_samples(samples)  # before the model loads
    if not rows:
        raise ConfigError("the samples file is empty", parameter="samples")
    # a server model is refused as not a local causal LM, not for the device it does not take
    backend = (
        None if ModelRef.unread(model).is_server else build_backend(model, device=device, **model_options)
    )
    if not isinstance(backend, HFCausalLM):
        raise ConfigError(
            f"{{model}} {model!r} is not a local causal LM; lm-eval's hf model needs one "
            "(smollm2, hf:PATH or a model directory)",
            parameter="model",
        )
    name = task or task_name(rows[0].source, style.name)
    spellings = backend.answer_spellings(style.answers)
    user_texts = [style.render(s.premise, s.hypothesis) for s in rows]
    documents = _documents(backend, rows, user_texts, style, spellings)

    out = Path(out_dir).resolve()
    out.mkdir(parents=True, exist_ok=True)
    data_path = out / f"{name}.jsonl"
    write_jsonl(data_path, documents)
    chat = backend.chat
    pretrained = model_path or _pretrained_path(backend)
    extra_args = ",add_bos_token=False" if chat else ""
    command = shlex.join(_lm_eval_argv(out, name, f"pretrained={pretrained}{extra_args}"))
    _write_script(out / RUN_SCRIPT, name, pretrained, extra_args)
    atomic_write_text(out / f"{METRICS_MODULE}.py", _METRICS_SOURCE)
    _write_yaml(out / f"{name}.yaml", name, data_path, style.name, backend.name, chat)
    words = {word: [text for text, _ in pairs] for word, pairs in spellings.items()}
    write_json(
        out / "nlibias_export.json",
        {
            "task": name,
            "prompt": {"name": style.name, "template": style.template, "answers": list(style.answers)},
            "model": backend.name,
            "chat_template": chat,
            "spellings": words,
            "documents": len(documents),
            "samples": str(samples),
            "command": command,
        },
    )
    _write_readme(out / "README.md", name, chat, command)
    return LmEvalExport(out, name, len(documents), chat, words, command)


def _documents(
    backend: Any,
    rows: Sequence[Any],
    user_texts: Sequence[str],
    style: Any,
    spellings: dict[str, tuple[tuple[str, int], ...]],
) -> list[dict[str, Any]]:
    """One lm-eval document per sample, each checked against the model's tokenizer (trap 1)."""
    _, tokenizer = backend.load()
    add_special = not backend.chat
    choices = [(word, text, token) for word, pairs in spellings.items() for text, token in pairs]
    formatted = {text: backend.format_prompt(text) for text in dict.fromkeys(user_texts)}
    checked: dict[str, tuple[str, str]] = {}
    for text, full in formatted.items():
        context = full.rstrip()
        moved = full[len(context) :]
        prompt_ids = list(tokenizer(full, add_special_tokens=add_special)["input_ids"])
        wholes = tokenizer([context + moved + t for _, t, _ in choices], add_special_tokens=add_special)
        for (word, spelled, token), whole in zip(choices, wholes["input_ids"], strict=True):
            if not spelled or list(whole) != [*prompt_ids, token]:
                raise ConfigError(
                    f"the {word!r} spelling {spelled!r} does not tokenize as one token after the prompt "
                    f"of {backend.name} (prompt {text[:60]!r}...), so lm-eval would not score what "
                    "nlibias scores",
                    parameter="model",
                )
        checked[text] = (context, moved)
    labels = style.labels
    documents = []
    for sample, text in zip(rows, user_texts, strict=True):
        context, moved = checked[text]
        words = [word for word, _, _ in choices]
        gold_words = [w for w in style.answers if labels[w] == sample.gold]
        # binary prompts: a contradiction is "not entailed", i.e. no
        target_word = gold_words[0] if gold_words else ("no" if "no" in words else words[0])
        documents.append(
            {
                "id": sample.id,
                "query": context,
                "choices": [moved + t for _, t, _ in choices],
                "choice_answers": words,
                "target": words.index(target_word),
                "prompt": style.name,
                "answers": "/".join(style.answers),
            }
        )
    return documents


def _lm_eval_argv(out: Path, name: str, model_args: str) -> list[str]:
    return ["lm_eval", "--include_path", str(out), "--tasks", name, "--model", "hf", "--model_args", model_args,
            "--batch_size", "8", "--log_samples"]  # fmt: skip


def _write_script(path: Path, name: str, pretrained: str, extra_model_args: str) -> None:
    """``run_lm_eval.sh``: the command, with the model directory lm_eval loads taken from
    :data:`PRETRAINED_ENV` when it is set (a moved cache, a copy on another machine)."""
    from nlibias.io.atomic import atomic_write_text

    argv = [shlex.quote(a) for a in _lm_eval_argv(path.parent, name, "MODEL_ARGS")]
    argv[argv.index("MODEL_ARGS")] = f'"pretrained=${{PRETRAINED}}{extra_model_args}"'
    atomic_write_text(
        path,
        "#!/usr/bin/env bash\n"
        f"# {name}: add --output_path DIR (and any lm_eval flag)\n"
        f"# The model lm_eval loads: ${PRETRAINED_ENV} if set, else the directory the task was exported\n"
        "# with; it must hold the same model (the prompts hold its chat template and answer spellings).\n"
        f"PRETRAINED=${{{PRETRAINED_ENV}:-{shlex.quote(pretrained)}}}\n"
        f'exec {" ".join(argv)} "$@"\n',
    )
    path.chmod(0o755)


def _pretrained_path(backend: Any) -> str:
    converted = backend._converted_dir()
    if converted is not None:
        backend.load()  # writes the dequantised copy on first load
        if (converted / "model.safetensors").is_file():
            return str(converted)
    return str(backend.source.name_or_path)


def choice_task(name: str, data_path: Path, metadata: dict[str, Any]) -> dict[str, Any]:
    """An lm-eval ``multiple_choice`` task over a JSONL file of documents with ``query`` (the exact
    prompt text), ``choices`` (continuations, no delimiter) and ``target`` (an index)."""
    return {
        "task": name,
        "dataset_path": "json",
        "dataset_kwargs": {"data_files": {"test": str(data_path)}},
        "test_split": "test",
        "output_type": "multiple_choice",
        "doc_to_text": "query",
        "doc_to_choice": "choices",
        "doc_to_target": "target",
        "target_delimiter": "",
        "metric_list": [{"metric": "acc", "aggregation": "mean", "higher_is_better": True}],
        "metadata": metadata,
    }


def _write_yaml(path: Path, name: str, data_path: Path, prompt: str, model: str, chat: bool) -> None:
    import yaml

    from nlibias.io.atomic import atomic_write_text

    config = choice_task(name, data_path, {"version": 2.0, "nlibias_prompt": prompt, "nlibias_model": model})
    header = (
        f"# Written by `nlibias export lm-eval` for {model} (prompt style {prompt!r}).\n"
        f"# The prompts {'include the chat template' if chat else 'are plain (no chat template)'}: "
        "run lm_eval WITHOUT --apply_chat_template.\n"
        "# acc: the share of documents whose answer WORD (each word's spellings summed, as nlibias\n"
        "# answers) is the target word ('no' for BBNLI's bias samples): see nlibias_metrics.py.\n"
        "# Score the answers with: nlibias score --samples RUN --predictions 'OUT/*/samples_<task>_*.jsonl'\n"
    )
    functions = f"process_results: !function {METRICS_MODULE}.process_results\n"
    atomic_write_text(path, header + yaml.safe_dump(config, sort_keys=False, allow_unicode=True) + functions)


def _write_readme(path: Path, name: str, chat: bool, command: str) -> None:
    from nlibias.io.atomic import atomic_write_text

    template = (
        "chat template applied by nlibias (run lm_eval without --apply_chat_template; add_bos_token=False)"
        if chat
        else "plain prompts (the model has no chat template)"
    )
    atomic_write_text(
        path,
        f"# lm-eval task `{name}` (written by nlibias export lm-eval)\n\n"
        f"Prompts: {template}.\n\nRun (`{RUN_SCRIPT}` holds this command; append any lm_eval flag):\n\n"
        f"    {command} --output_path OUT\n\n"
        "Then score the logged answers with nlibias' measures:\n\n"
        f"    nlibias score --samples RUN --predictions 'OUT/*/samples_{name}_*.jsonl' --out SCORED\n\n"
        "(quoted: nlibias expands the pattern; keep the results_*.json lm_eval writes beside the samples\n"
        f"file, it says how many documents the run evaluated). `${PRETRAINED_ENV}` replaces the model\n"
        "directory the script loads.\n",
    )


_METRICS_SOURCE = '''"""lm-eval metrics of a task written by `nlibias export lm-eval` (its YAML's process_results).

Each document's choices are the answer words' single-token spellings (yes, " yes", Yes ...), and
choice_answers names the word each stands for. lm-eval's default multiple-choice acc would count
the most likely *spelling* against one target spelling: a model that answers " No" where the
target is "no" would score 0 while it said no. Here, as nlibias answers, a word's log-likelihood
is the log-sum-exp over its spellings and the answer is the most likely word (the first on a
tie); acc is 1 when that word is the target's word. For BBNLI's bias samples (gold neutral, target
"no") acc is the share of "no" answers, the number `nlibias score` reports for the same log.
"""

import math


def _loglikelihood(result):
    return float(result[0] if isinstance(result, (list, tuple)) else result)


def answer_word(doc, results):
    """The answer word: the word whose spellings are most likely together."""
    totals = {}
    for result, word in zip(results, doc["choice_answers"]):
        totals.setdefault(word, []).append(_loglikelihood(result))
    best, best_score = None, -math.inf
    for word in str(doc["answers"]).split("/"):
        values = totals.get(word)
        if not values:
            continue
        top = max(values)
        score = top + math.log(sum(math.exp(v - top) for v in values))
        if best is None or score > best_score:
            best, best_score = word, score
    return best


def process_results(doc, results):
    target = doc["choice_answers"][doc["target"]]
    return {"acc": 1.0 if answer_word(doc, results) == target else 0.0}
'''
"""The source of ``nlibias_metrics.py`` (self-contained: lm-eval runs it without nlibias)."""
