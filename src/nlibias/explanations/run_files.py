"""What ``explain`` reads from an audit run (generated answers and their samples) and writes
beside them: ``explanations/explanations.jsonl`` (a row per answer and judge) and
``explanations/explanations.json`` (the rates per model, judge and slice)."""

from __future__ import annotations

import json
import warnings
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict

from nlibias.errors import ConfigError, SourceError
from nlibias.explanations.judge import GeneratedAnswer, shown_judge
from nlibias.explanations.split import split_answer, split_sentences
from nlibias.io.atomic import write_json, write_jsonl
from nlibias.io.fingerprint import sha256_file
from nlibias.io.jsonl import iter_jsonl, json_object_or_none
from nlibias.io.predictions import PREDICTIONS_JSONL
from nlibias.io.run_dir import read_run
from nlibias.io.samples import read_samples
from nlibias.io.stages import output_problems, record_path
from nlibias.metrics.explanations import LABELS, STANCES, ExplanationColumns, explanation_rates
from nlibias.metrics.meta import EXPLANATION_MEASURES
from nlibias.schema import Prediction, Sample
from nlibias.schema.measure_info import EXPLANATIONS_FILE
from nlibias.schema.prediction_rows import is_probability

EXPLANATIONS_DIR = "explanations"
EXPLANATIONS_JSONL = "explanations.jsonl"
FORMAT_VERSION = 1
STAGE_NAME = "explain"
OUTPUTS = (f"{EXPLANATIONS_DIR}/{EXPLANATIONS_JSONL}", f"{EXPLANATIONS_DIR}/{EXPLANATIONS_FILE}")
"""What the stage writes, relative to the run."""
DAMAGED = "its explanations/ files are damaged or incomplete: run nlibias explain again"


class ExplainRecord(BaseModel):
    """What ``current_summary`` reads of ``explain``'s stage record."""

    model_config = ConfigDict(extra="allow", frozen=True)

    inputs: dict[str, Any] = {}
    outputs: dict[str, str] = {}


def current_summary(run_dir: str | Path, *, recorded: bool = True) -> dict[str, Any] | str | None:
    """The run's ``explanations.json`` when current, else why not in words; None when absent.
    ``recorded=False`` takes files without ``explain``'s record as they are."""
    run_dir = Path(run_dir)
    summary_path = run_dir / EXPLANATIONS_DIR / EXPLANATIONS_FILE
    record_file = record_path(run_dir, STAGE_NAME)
    if not summary_path.is_file():
        return None
    summary = json_object_or_none(summary_path)  # None: damaged (a key given twice too)
    if not recorded and not record_file.exists():
        return DAMAGED if summary is None else summary
    try:
        record = ExplainRecord.model_validate(json_object_or_none(record_file))
    except ValueError:  # ValidationError is a ValueError; None (damaged) is refused by it
        return DAMAGED
    if summary is None:
        return DAMAGED
    problems = output_problems(run_dir, record.model_dump(), whole=True)
    if problems:
        return (
            "its explanations/ files are damaged or incomplete, or were replaced since explain wrote them "
            f"({'; '.join(problems)}): run nlibias explain again"
        )
    predictions = run_dir / PREDICTIONS_JSONL
    if not predictions.is_file() or sha256_file(predictions) != record.inputs.get("predictions_sha256"):
        return "its explanations were made from other predictions than the run now holds: run nlibias explain again"
    return summary


def generated_answers(
    run_dir: str | Path, samples: str | Path | None = None
) -> tuple[list[GeneratedAnswer], Path]:
    """Every generated answer of the run, split and with its sample, and the samples file read
    (``samples``, else the run's own); a run without generated answers is refused."""
    run = read_run(run_dir)
    if run.predictions_path is None:
        raise SourceError(
            run.path, None, "no predictions.jsonl here", fix="pass the run directory of an audit"
        )
    generated = [p for p in run.predictions() if _is_generated(p)]
    if not generated:
        raise SourceError(
            run.predictions_path,
            None,
            "no generated answers here (scored answers and classifiers keep no text to explain)",
            fix="audit a generative model in generated mode and explain that run: "
            "nlibias audit --samples SAMPLES --generative MODEL --mode generated --out RUN "
            "(in Python: mode='generated')",
        )
    samples_path = run.samples.check(run.samples.file(samples))
    by_id = {s.id: s for s in read_samples(samples_path)}
    missing = sorted({p.sample_id for p in generated} - set(by_id))
    if missing:
        raise ConfigError(
            f"{len(missing)} answered samples are not in {samples_path} (first: {missing[0]!r}); pass "
            "samples, the samples the audit answered",
            parameter="samples",
        )
    found = [_answer(p, by_id[p.sample_id]) for p in generated]
    _warn_of_other_readings(generated, found, run.predictions_path)
    return found, samples_path


class OtherReadingWarning(UserWarning):
    """Answers that predictions.jsonl records otherwise than this nlibias's parser reads their text."""


def _warn_of_other_readings(
    generated: Sequence[Prediction], found: Sequence[GeneratedAnswer], path: Path
) -> None:
    """Warn when the run's recorded answers are not what the parser reads now."""
    other = [(p, a) for p, a in zip(generated, found, strict=True) if p.extra.get("answer") != a.answer]
    if not other:
        return
    first, answer = other[0]
    warnings.warn(
        OtherReadingWarning(
            f"{path}: {len(other)} of {len(generated)} generated answers are recorded otherwise than this "
            f"nlibias reads their text (first: {first.sample_id!r} of {first.model!r}, recorded "
            f"{first.extra.get('answer')!r}, read {answer.answer!r}); the explanations follow the reading "
            "now, the run's measures the one recorded: audit again (the cached texts are read again) so "
            "that both read them alike"
        ),
        stacklevel=3,
    )


def _is_generated(prediction: Prediction) -> bool:
    extra = prediction.extra
    return extra.get("kind") == "generative" and extra.get("mode") == "generated" and "text" in extra


def _answer(prediction: Prediction, sample: Sample) -> GeneratedAnswer:
    extra = prediction.extra
    answers = tuple(str(extra.get("answers") or "yes/no").split("/"))
    text = str(extra.get("text") or "")
    split = split_answer(text, answers)
    return GeneratedAnswer(
        id=prediction.sample_id,
        model=prediction.model,
        prompt=extra.get("prompt"),
        text=text,
        answer=split.answer,
        answer_rule=split.rule,
        explanation=split.explanation,
        sentences=tuple(split_sentences(split.explanation)),
        premise=sample.premise,
        hypothesis=sample.hypothesis,
        stereotype=sample.stereotype,
        pair_key=sample.pair_key,
        domain=sample.domain,
        subtopic=sample.subtopic,
    )


def summarise(
    rows: Sequence[Mapping[str, Any]], *, settings: Mapping[str, Any], resamples: int, seed: int
) -> dict[str, Any]:
    """``explanations.json``: settings, measure declarations, and the rates per model and judge."""
    groups: dict[tuple[str, str], list[Mapping[str, Any]]] = {}
    for row in rows:
        groups.setdefault((str(row["model"]), str(row["judge"])), []).append(row)
    models: dict[str, dict[str, Any]] = {}
    for (model, judge), group in groups.items():
        columns = ExplanationColumns.of_rows(group)
        models.setdefault(model, {})[judge] = explanation_rates(columns, resamples=resamples, seed=seed)
    return {
        "format_version": FORMAT_VERSION,
        **settings,
        "bootstrap": {"resamples": resamples, "seed": seed, "unit": "pair (else sample)", "confidence": 0.95},
        "measures": {
            name: {
                "description": info.description,
                "direction": info.direction,
                "range": list(info.range),
                "unit": info.unit,
            }
            for name, info in EXPLANATION_MEASURES.items()
        },
        "models": models,
    }


def write_outputs(out_dir: Path, rows: Sequence[Mapping[str, Any]], summary: Mapping[str, Any]) -> None:
    """The two files, each written atomically; the summary last (it marks the stage finished)."""
    write_jsonl(out_dir / EXPLANATIONS_JSONL, [dict(row) for row in rows])
    write_json(out_dir / EXPLANATIONS_FILE, summary)


def read_rows(out_dir: str | Path) -> list[dict[str, Any]]:
    """The rows of ``explanations.jsonl``; a damaged row is refused with its line and field."""
    path = Path(out_dir) / EXPLANATIONS_JSONL
    rows = []
    for line, record in iter_jsonl(path):
        problem = row_problem(record)
        if problem is not None:
            field, reason = problem
            raise SourceError(path, field, reason, line=line, fix=_REWRITE)
        rows.append(record)
    return rows


_REWRITE = "the file was changed after explain wrote it: run explain on the audit run again to rewrite it"
_TEXT_FIELDS = ("id", "model", "judge", "premise", "hypothesis", "explanation")
_KEYS = ("id", "model", "judge")
"""The text fields a row is found by: never empty."""
_OPTIONAL_TEXT = ("prompt", "answer", "domain", "subtopic", "pair_key")
_CHOICES = {"label": LABELS, "lm_label": LABELS, "stance": STANCES, "stereotype": ("pro", "anti")}


def row_problem(row: Any) -> tuple[str | None, str] | None:
    """Why ``row`` is not a row ``explain`` writes, as (field, reason); None when it is one."""
    if not isinstance(row, dict):
        return None, f"expected a JSON object, got {_got(row)}"
    for field in _TEXT_FIELDS:
        if field not in row:
            return field, "missing"
        value = row[field]
        if not isinstance(value, str) or (field in _KEYS and not value):
            return field, f"expected {'non-empty text' if field in _KEYS else 'text'}, got {_got(value)}"
    for field in _OPTIONAL_TEXT:
        if row.get(field) is not None and not isinstance(row[field], str):
            return field, f"expected text or null, got {_got(row[field])}"
    for field, words in _CHOICES.items():
        if row.get(field) is not None and row[field] not in words:
            return field, f"{_got(row[field])} is not one of {', '.join(words)} (or null)"
    grounded = row.get("grounded")
    if grounded is not None and not is_probability(grounded):
        return "grounded", f"expected a share between 0 and 1 or null, got {_got(grounded)}"
    if row.get("consistent") is not None and not isinstance(row["consistent"], bool):
        return "consistent", f"expected true, false or null, got {_got(row['consistent'])}"
    return None


def _got(value: Any) -> str:
    """``value`` as JSON, cut short."""
    shown = json.dumps(value, ensure_ascii=False)
    return shown if len(shown) <= 40 else shown[:37] + "..."


def fake_judge_warning(summary: Mapping[str, Any]) -> str | None:
    """What to say above the rates when a fake judge (``fake:NAME``) made some labels."""
    listed = summary.get("fake_judges") or ()
    fakes = [shown_judge(name, listed) for name in listed]
    if not fakes:
        return None
    many = len(fakes) > 1
    return (
        f"Judge{'s' if many else ''} {', '.join(fakes)} {'are fakes' if many else 'is a fake'}: a deterministic "
        f"stand-in for tests and dry runs. {'Their' if many else 'Its'} labels say nothing about the explanations."
    )
