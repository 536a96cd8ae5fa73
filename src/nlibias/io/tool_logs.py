"""Other tools' logs read as predictions for ``nlibias score``, the format told by content: an
lm-eval ``--log_samples`` file of an exported task (**scored** answers), an Inspect log of an
``nlibias/...`` task (**generated** answers), or nlibias' own JSONL (:func:`native_predictions`).

>>> word_probabilities([-1.0, -2.0, -1.5], ["yes", "yes", "no"], ("yes", "no"))["no"]  # doctest: +ELLIPSIS
0.3071...
"""

from __future__ import annotations

import json
import math
import tempfile
from collections.abc import Iterator, Sequence
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from nlibias.benchmarks.bbq import read_answer
from nlibias.errors import SourceError, import_extra
from nlibias.io.atomic import write_jsonl
from nlibias.io.jsonl import iter_jsonl, json_object_or_none
from nlibias.io.tool_log_checks import (
    LM_EVAL_SAMPLES_NAME,
    ZIP_MAGIC,
    check_input_file,
    check_inspect_count,
    check_inspect_sample,
    check_lm_eval_coverage,
    lm_eval_results_path,
    read_inspect_header,
)
from nlibias.models.generative.answers import parse_answer
from nlibias.models.generative.defaults import OptionScore
from nlibias.models.generative.option_scoring import choose_option
from nlibias.models.generative.prompts import BINARY_LABELS, THREE_WAY_LABELS
from nlibias.schema.model_keys import model_key
from nlibias.schema.prediction_rows import ANSWER_SETS, RowRefused, check_loglikelihood, check_row
from nlibias.schema.problems import source_error

PredictionsFormat = Literal["nlibias", "lm-eval", "inspect"]
_DOC_FIELDS = ("id", "choice_answers", "answers", "prompt")


def predictions_format(path: str | Path) -> PredictionsFormat:
    """The format of a predictions file, from its first bytes and first record.

    >>> import tempfile, pathlib
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "samples_t_2026-01-01T00-00-00.jsonl"
    >>> _ = p.write_text('{"doc_id": 0, "doc": {"id": "a"}, "filtered_resps": []}\\n')
    >>> predictions_format(p), predictions_format(p.with_name("x.jsonl").with_suffix(".jsonl"))
    ('lm-eval', 'nlibias')
    """
    path = Path(path)
    if not path.is_file():
        return "nlibias"  # a run directory or a missing file: the native reader says what is wrong
    with path.open("rb") as handle:
        head = handle.read(4)
        handle.seek(0)
        first_line = handle.readline(1 << 20)
    if head == ZIP_MAGIC:
        return "inspect"
    try:
        first = json.loads(first_line) if first_line.strip() else None
    except (ValueError, RecursionError):  # not JSON, not UTF-8, too deep: the native reader says so
        first = None
    if isinstance(first, dict) and "doc_id" in first and "doc" in first and "resps" in first:
        return "lm-eval"
    if path.suffix == ".json" and _looks_like_inspect_json(path):
        return "inspect"
    if isinstance(first, dict) and "filtered_resps" in first:
        return "lm-eval"
    return "nlibias"


def _looks_like_inspect_json(path: Path) -> bool:
    with path.open("rb") as handle:
        start = handle.read(4096)
    return b'"eval"' in start and (b'"version"' in start or b'"status"' in start)


@contextmanager
def native_predictions(path: str | Path) -> Iterator[Path]:
    """``path`` itself in nlibias' own format, else a converted file (removed on leaving) of a
    checked log; an error raised while the copy is read names the log and the row's place."""
    path = Path(path)
    check_input_file(path)
    kind = predictions_format(path)
    if kind == "nlibias":
        yield path
        return
    rows = _lm_eval_rows_at(path) if kind == "lm-eval" else _inspect_rows_at(path)
    places: list[tuple[int | None, str | None]] = []
    with tempfile.TemporaryDirectory(prefix="nlibias-converted-") as tmp:
        converted = Path(tmp) / "predictions.jsonl"
        write_jsonl(converted, (_checked(path, place, row, places) for place, row in rows))
        try:
            yield converted
        except SourceError as error:
            if Path(error.path) != converted:
                raise
            line, where = places[error.line - 1] if error.line else (None, None)
            field = ".".join(p for p in (where, error.field) if p) or None
            raise SourceError(path, field, error.reason, line=line, fix=error.fix) from None


_Place = tuple[int | None, str | None]  # the row's line (lm-eval) or sample field (Inspect)


def _checked(path: Path, place: _Place, row: dict[str, Any], places: list[_Place]) -> dict[str, Any]:
    try:
        check_row(row)
    except RowRefused as refused:
        line, where = place
        field = ".".join(p for p in (where, refused.field) if p) or None
        raise SourceError(path, field, refused.reason, line=line, fix=refused.fix) from None
    places.append(place)
    return row


def word_probabilities(
    loglikelihoods: Sequence[float], choice_answers: Sequence[str], answers: Sequence[str]
) -> dict[str, float]:
    """Each answer word's probability: log-sum-exp over its choices, then a softmax over words."""
    totals = []
    for word in answers:
        values = [ll for ll, w in zip(loglikelihoods, choice_answers, strict=True) if w == word]
        top = max(values)
        totals.append(top + math.log(sum(math.exp(v - top) for v in values)))
    top = max(totals)
    weights = [math.exp(t - top) for t in totals]
    norm = sum(weights)
    return {word: w / norm for word, w in zip(answers, weights, strict=True)}


def _answer_row(
    sample_id: str,
    model: str,
    prompt: Any,
    mode: str,
    answers: Sequence[str],
    answer: str | None,
    rule: str | None,
    probs: dict[str, float] | None = None,
) -> dict[str, Any]:
    """A generative answer's row, its label (and label probabilities) read off the answer words."""
    labels = dict(THREE_WAY_LABELS if "maybe" in answers else BINARY_LABELS)
    row: dict[str, Any] = {"id": sample_id, "model": model_key(model, str(prompt), mode)}
    row["label"] = None if answer is None else labels[answer]
    if probs is not None:
        row["probs"] = {"entailment": 0.0, "neutral": 0.0, "contradiction": 0.0}
        for word, p in probs.items():
            row["probs"][labels[word]] += p
    row |= {"kind": "generative", "prompt": prompt, "mode": mode, "answer": answer, "answer_rule": rule}
    return row | {"answer_method": mode, "answers": "/".join(answers)}


def _lm_eval_model(path: Path) -> str:
    """``lm-eval:<model>`` from the run's results file beside the samples (else the task name)."""
    match = LM_EVAL_SAMPLES_NAME.match(path.name)
    if match:
        name = (json_object_or_none(lm_eval_results_path(path)) or {}).get("model_name")
        if isinstance(name, str) and name:
            return f"lm-eval:{Path(name).name or name}"
        return f"lm-eval:{match['task']}"
    return f"lm-eval:{path.stem}"


def lm_eval_rows(path: str | Path) -> Iterator[dict[str, Any]]:
    """nlibias prediction rows of an lm-eval ``--log_samples`` file of an exported task."""
    for _, row in _lm_eval_rows_at(Path(path)):
        yield row


def _lm_eval_rows_at(path: Path) -> Iterator[tuple[_Place, dict[str, Any]]]:
    """Each row of an lm-eval log with its line; a log mixing prompt styles is refused."""
    model = _lm_eval_model(path)
    doc_ids = []
    first_prompt: tuple[str, int] | None = None
    for line, raw in iter_jsonl(path):
        doc = _lm_eval_doc(path, line, raw)
        doc_ids.append(raw.get("doc_id"))
        prompt = str(doc["prompt"])
        if first_prompt is None:
            first_prompt = (prompt, line)
        elif prompt != first_prompt[0]:
            raise SourceError(
                path,
                "doc.prompt",
                f"the log mixes prompt styles: {prompt!r} here, {first_prompt[0]!r} on line {first_prompt[1]} "
                "(an exported task asks one prompt style)",
                line=line,
                fix="pass the log of one task (one prompt style) per file; several files score together",
            )
        if "options" in doc:
            yield (line, None), _option_row(path, line, raw, doc, model)
            continue
        answers = tuple(str(doc["answers"]).split("/"))
        loglikelihoods = _loglikelihoods(path, line, raw.get("filtered_resps"), len(doc["choice_answers"]))
        probs = word_probabilities(loglikelihoods, doc["choice_answers"], answers)
        answer = max(answers, key=lambda w: probs[w])  # the first word on a tie, as argmax does
        row = _answer_row(doc["id"], model, doc["prompt"], "scored", answers, answer, "scored", probs)
        yield (line, None), row | {"answer_probs": probs, "tool": "lm-eval", "tool_doc_id": raw.get("doc_id")}
    check_lm_eval_coverage(path, doc_ids)  # before the converted rows are used: see native_predictions


class _OptionDoc(BaseModel):
    """A multiple-choice document of an exported task (BBQ): its options, then the whitespace
    lm-eval moved into each as a choice of its own (when there is any)."""

    model_config = ConfigDict(extra="ignore")
    id: str
    prompt: str
    options: Annotated[int, Field(ge=1, strict=True)]
    choices: list[str]
    option_score: OptionScore

    @model_validator(mode="after")
    def _one_choice_per_option(self) -> _OptionDoc:
        if len(self.choices) not in (self.options, self.options + 1):
            raise ValueError(
                f"{len(self.choices)} choices for {self.options} options (and the moved whitespace)"
            )
        return self


def _option_row(
    path: Path, line: int, raw: dict[str, Any], doc: dict[str, Any], model: str
) -> dict[str, Any]:
    """The option a multiple-choice document's log-likelihoods choose (each less the moved
    whitespace's, the choice after the options)."""
    try:
        checked = _OptionDoc.model_validate(doc)
    except ValidationError as error:
        raise source_error(error, path, line=line, within="doc") from None
    n = checked.options
    lls = _loglikelihoods(path, line, raw.get("filtered_resps"), len(checked.choices))
    base = lls[n] if len(lls) > n else 0.0  # the moved whitespace alone
    options = [choice.lstrip() for choice in checked.choices[:n]]  # without the moved whitespace
    scores = [ll - base for ll in lls[:n]]
    choice = choose_option(scores, options, checked.option_score)
    return {
        "id": checked.id, "model": model_key(model, checked.prompt, "scored"), "label": None, "kind": "generative",
        "prompt": checked.prompt, "mode": "scored", "choice": choice, "answer_text": options[choice],
        "option_logprobs": scores, "option_score": checked.option_score, "tool": "lm-eval",
        "tool_doc_id": raw.get("doc_id"),
    }  # fmt: skip


def _lm_eval_doc(path: Path, line: int, raw: Any) -> dict[str, Any]:
    """The document of a logged line, refused unless it is one of a task nlibias exported."""
    doc = raw.get("doc") if isinstance(raw, dict) else None
    if isinstance(doc, dict) and "options" in doc:
        return doc
    missing = [field for field in _DOC_FIELDS if field not in doc] if isinstance(doc, dict) else []
    if not isinstance(doc, dict) or missing:
        what = "not an object" if not isinstance(doc, dict) else "no " + ", ".join(missing)
        raise SourceError(
            path,
            "doc",
            f"not a document of a task written by nlibias export lm-eval ({what})",
            line=line,
            fix="export the task with `nlibias export lm-eval` and run lm_eval with --log_samples",
        )
    answers, choices = doc["answers"], doc["choice_answers"]
    if not isinstance(answers, str) or answers not in ANSWER_SETS:  # a list: no key of a dict
        raise SourceError(
            path, "doc.answers", f"{answers!r} is not an answer set ({', '.join(ANSWER_SETS)})", line=line
        )
    words = answers.split("/")
    if not isinstance(choices, list) or not all(isinstance(c, str) for c in choices):
        raise SourceError(
            path, "doc.choice_answers", "expected a list of answer words, one per choice", line=line
        )
    stray = [c for c in choices if c not in words]
    absent = [w for w in words if w not in choices]
    if stray or absent:
        reason = (
            f"choice {stray[0]!r} is not a word of {answers}"
            if stray
            else f"no choice stands for {absent[0]!r}"
        )
        raise SourceError(
            path,
            "doc.choice_answers",
            f"inconsistent with answers {answers!r}: {reason}",
            line=line,
            fix="score the log of the task `nlibias export lm-eval` wrote, unedited",
        )
    return doc


def _loglikelihoods(path: Path, line: int, resps: Any, n_choices: int) -> list[float]:
    """A logged document's per-choice log-likelihoods (``filtered_resps``), each checked."""
    if not isinstance(resps, list) or len(resps) != n_choices:
        raise SourceError(path, "filtered_resps", "expected one log-likelihood per choice", line=line)
    values = []
    for k, resp in enumerate(resps):
        value = resp[0] if isinstance(resp, list | tuple) and resp else resp
        if isinstance(value, str):  # lm-eval writes its log-likelihoods as strings
            with suppress(ValueError):  # not a number: refused below, as it is
                value = float(value)
        try:
            values.append(check_loglikelihood(value, f"filtered_resps[{k}]"))
        except RowRefused as refused:
            raise SourceError(path, refused.field, refused.reason, line=line, fix=refused.fix) from None
    return values


def _inspect_rows_at(path: Path) -> Iterator[tuple[_Place, dict[str, Any]]]:
    inspect_log = import_extra(
        "inspect_ai.log", "inspect", use="reading Inspect logs", parameter="predictions"
    )
    read_eval_log_samples = inspect_log.read_eval_log_samples
    header = read_inspect_header(path)  # a failed, cancelled or unfinished run is refused here
    model = f"inspect:{header.eval.model}"
    seen: set[str] = set()
    for sample in read_eval_log_samples(str(path), all_samples_required=False):
        metadata = sample.metadata or {}
        if "nlibias_prompt" not in metadata:
            raise SourceError(
                path,
                f"samples[{sample.id}].metadata",
                "not a sample of an nlibias task (no nlibias_prompt)",
                fix="run `inspect eval nlibias/bbnli ...` (tasks registered by nlibias)",
            )
        sample_id = str(sample.id)
        if sample_id in seen:
            raise SourceError(
                path, "epochs", f"sample {sample_id!r} appears twice", fix="run inspect eval with --epochs 1"
            )
        seen.add(sample_id)
        check_inspect_sample(path, sample)
        text = sample.output.completion if sample.output is not None else ""
        if "nlibias_options" in metadata:
            yield (None, f"samples[{sample_id}]"), _inspect_option_row(path, sample_id, model, metadata, text)
            continue
        answers = tuple(str(metadata.get("nlibias_answers", "yes/no")).split("/"))
        parsed = parse_answer(text, answers)
        prompt = metadata["nlibias_prompt"]
        row = _answer_row(sample_id, model, prompt, "generated", answers, parsed.answer, parsed.rule)
        yield (None, f"samples[{sample_id}]"), row | {"text": text, "tool": "inspect"}
    check_inspect_count(path, header, len(seen))


class _OptionMetadata(BaseModel):
    """What an exported multiple-choice task (BBQ) records of a sample: options and their words."""

    model_config = ConfigDict(extra="ignore")
    nlibias_prompt: str
    nlibias_options: Annotated[list[str], Field(min_length=2)]
    nlibias_option_words: list[str]

    @model_validator(mode="after")
    def _a_word_per_option(self) -> _OptionMetadata:
        if len(self.nlibias_option_words) != len(self.nlibias_options):
            raise ValueError(
                f"{len(self.nlibias_option_words)} option words for {len(self.nlibias_options)} options"
            )
        return self


def _inspect_option_row(
    path: Path, sample_id: str, model: str, metadata: dict[str, Any], text: str
) -> dict[str, Any]:
    """A multiple-choice completion read as one of its options (unmatched: ``choice`` null)."""
    try:
        checked = _OptionMetadata.model_validate(metadata)
    except ValidationError as error:
        raise source_error(error, path, within=f"samples[{sample_id}].metadata") from None
    choice = read_answer(text, checked.nlibias_options, checked.nlibias_option_words)
    row: dict[str, Any] = {"id": sample_id, "label": None, "kind": "generative", "mode": "generated"}
    row |= {
        "model": model_key(model, str(metadata["nlibias_prompt"]), "generated"),
        "prompt": metadata["nlibias_prompt"],
    }
    row |= {"choice": choice, "answer_text": text, "tool": "inspect"}
    return row | ({"answer_status": "unmatched"} if choice is None else {})
