"""Upstream runs are checked before their logs are scored (issue #25): an Inspect log of a failed,
cancelled or unfinished run, an lm-eval samples file that does not cover its task, an empty file
or one that cannot be what its name says are refused, naming the file and the reason. Several
predictions files score together (a glob pattern expanded by nlibias), and the same sample
answered by one model in two files is refused, naming both (issue #29)."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Any

import pytest

from nlibias.errors import ConfigError, SourceError
from nlibias.io.samples import read_samples, write_samples
from nlibias.jobs.score import run_score

pytest.importorskip("inspect_ai", reason='inspect-ai is not installed (pip install "nlibias[inspect]")')


@pytest.fixture(scope="module")
def bbnli_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Six BBNLI bias samples: three pro/anti pairs (ids in pair order: pro, anti)."""
    from nlibias.catalog.registry import get_benchmark

    samples = [s for s in get_benchmark("bbnli").expand_source(None).samples if s.stereotype]
    run = tmp_path_factory.mktemp("bbnli-run")
    write_samples(run, samples[:2] + samples[400:402] + samples[1500:1502])
    return run


def _answers_by_stereotype(samples: list[Any]) -> Any:
    """A mock model that says yes to pro-stereotype hypotheses and no to anti ones."""
    from inspect_ai.model import ModelOutput, ModelUsage

    pro = {s.hypothesis for s in samples if s.stereotype == "pro"}

    def reply(messages: list[Any], *_: Any) -> ModelOutput:
        text = messages[-1].text
        yes = any(f"Hypothesis: {h}\n" in text for h in pro)
        output = ModelOutput.from_content("mockllm/model", "Yes." if yes else "No.")
        output.usage = ModelUsage(input_tokens=1, output_tokens=1, total_tokens=2)
        return output

    return reply


def _inspect_log(run: Path, log_dir: Path, outputs: Any = None, **options: Any) -> Path:
    from inspect_ai import eval as inspect_eval
    from inspect_ai.model import get_model

    import nlibias.integrations.inspect_tasks  # noqa: F401  (registers nlibias/bbnli)

    model = get_model("mockllm/model", custom_outputs=outputs) if outputs else "mockllm/model"
    [log] = inspect_eval(
        "nlibias/bbnli",
        task_args={"prompt": "true", "samples": str(run)},
        model=model,
        log_dir=str(log_dir),
        display="none",
        **options,
    )
    return Path(log.location)


@pytest.fixture(scope="module")
def logs(bbnli_run: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Inspect logs of the six samples: all six; the first three and the last three (the second
    pair split between them); a run whose model failed."""
    root = tmp_path_factory.mktemp("inspect-logs")
    samples = read_samples(bbnli_run)
    ids = [s.id for s in samples]
    reply = _answers_by_stereotype(samples)

    def failing(*_: Any) -> Any:
        raise RuntimeError("connection refused by the model server")

    return {
        "all": _inspect_log(bbnli_run, root / "all", reply),
        "first": _inspect_log(bbnli_run, root / "split", reply, sample_id=ids[:3]),
        "last": _inspect_log(bbnli_run, root / "split-2", reply, sample_id=ids[3:]),
        "error": _inspect_log(bbnli_run, root / "error", failing),
    }


# --- Inspect: runs that did not finish --------------------------------------------------------------


def test_a_failed_inspect_run_is_refused_with_its_error(bbnli_run: Path, logs: dict[str, Path]) -> None:
    with pytest.raises(SourceError) as caught:
        run_score(bbnli_run, logs["error"], bootstrap=0)
    assert caught.value.field == "status" and caught.value.path == str(logs["error"])
    assert "the Inspect run failed (status 'error')" in str(caught.value)
    assert "connection refused by the model server" in str(caught.value)  # the log's own error


def test_the_command_line_refuses_a_failed_run_without_a_traceback(
    bbnli_run: Path, logs: dict[str, Path], tmp_path: Path
) -> None:
    from typer.testing import CliRunner

    from nlibias.cli.main import app

    done = CliRunner().invoke(
        app, ["score", "--samples", str(bbnli_run), "--predictions", str(logs["error"]), "--bootstrap", "0"]
    )
    assert done.exit_code != 0
    assert "the Inspect run failed" in done.output and "Traceback" not in done.output
    assert "answered" not in done.output  # no table of a run that never answered


@pytest.mark.parametrize("status", ["cancelled", "started"])
def test_a_cancelled_or_unfinished_inspect_run_is_refused(
    status: str, bbnli_run: Path, logs: dict[str, Path], tmp_path: Path
) -> None:
    from inspect_ai.log import read_eval_log, write_eval_log

    log = read_eval_log(str(logs["all"]))
    log.status = status  # type: ignore[assignment]
    target = tmp_path / f"{status}.eval"
    write_eval_log(log, str(target))
    with pytest.raises(SourceError) as caught:
        run_score(bbnli_run, target, bootstrap=0)
    assert caught.value.field == "status" and f"(status {status!r})" in str(caught.value)


def test_a_sample_that_ended_in_an_error_is_refused(bbnli_run: Path, tmp_path: Path) -> None:
    samples = read_samples(bbnli_run)
    reply = _answers_by_stereotype(samples)
    broken = samples[3].hypothesis

    def one_fails(messages: list[Any], *rest: Any) -> Any:
        if f"Hypothesis: {broken}\n" in messages[-1].text:
            raise RuntimeError("rate limited")
        return reply(messages, *rest)

    log = _inspect_log(bbnli_run, tmp_path / "logs", one_fails, fail_on_error=False)
    with pytest.raises(SourceError) as caught:
        run_score(bbnli_run, log, bootstrap=0)
    # the run went on past the failed sample (fail_on_error=False), so the log's status is success
    assert caught.value.field == f"samples[{samples[3].id}].error"
    assert "rate limited" in str(caught.value)


# --- any file: empty, or not what its name says ----------------------------------------------------


def test_an_empty_file_is_refused(bbnli_run: Path, tmp_path: Path) -> None:
    for name in ("samples_nlibias_bbnli_true_2026-01-01T00-00-00.jsonl", "log.eval", "predictions.jsonl"):
        (tmp_path / name).write_text("\n")
        with pytest.raises(SourceError, match="the file is empty"):
            run_score(bbnli_run, tmp_path / name, bootstrap=0)


def test_a_file_that_cannot_be_what_its_name_says_is_refused(bbnli_run: Path, tmp_path: Path) -> None:
    fake = tmp_path / "log.eval"
    fake.write_text('{"id": "x", "label": "neutral"}\n')
    with pytest.raises(SourceError, match=r"named \.eval \(an Inspect AI log\) but not one"):
        run_score(bbnli_run, fake, bootstrap=0)
    results = tmp_path / "results_2026-01-01T00-00-00.json"
    results.write_text(
        json.dumps({"results": {"t": {"acc,none": 0.0}}, "n-samples": {"t": {"effective": 6}}})
    )
    with pytest.raises(SourceError, match="results summary") as caught:
        run_score(bbnli_run, results, bootstrap=0)
    assert "samples_<task>_<time>.jsonl" in str(caught.value)


def test_a_cut_short_inspect_log_is_refused(bbnli_run: Path, logs: dict[str, Path], tmp_path: Path) -> None:
    cut = tmp_path / "cut.eval"
    data = logs["all"].read_bytes()
    cut.write_bytes(data[: len(data) // 2])
    with pytest.raises(SourceError, match="cannot read it as an Inspect AI log"):
        run_score(bbnli_run, cut, bootstrap=0)


# --- lm-eval: files that do not cover the task -------------------------------------------------------

TASK = "nlibias_bbnli_true"
STAMP = "2026-01-01T00-00-00.000001"


def _lm_eval_files(
    folder: Path, ids: list[str], *, effective: int | None = None, original: int | None = None,
    limit: int | None = None, results: bool = True, task_in_results: bool = True,
) -> Path:  # fmt: skip
    """An lm-eval samples file of an exported task (yes/no choices: yes is twice as likely in
    log space, ll -1 vs -2) and the results file lm-eval writes beside it."""
    folder.mkdir(parents=True, exist_ok=True)
    samples = folder / f"samples_{TASK}_{STAMP}.jsonl"
    lines = []
    for doc_id, sample_id in enumerate(ids):
        doc = {"id": sample_id, "choice_answers": ["yes", "no"], "answers": "yes/no", "prompt": "true"}
        resps = [[[-1.0, False]], [[-2.0, False]]]
        lines.append(
            {"doc_id": doc_id, "doc": doc, "resps": resps, "filtered_resps": [[-1.0, False], [-2.0, False]]}
        )
    samples.write_text("".join(json.dumps(line) + "\n" for line in lines))
    if results:
        n = len(ids) if effective is None else effective
        document = {
            "results": {TASK: {"acc,none": 0.0}} if task_in_results else {},
            "n-samples": {TASK: {"original": n if original is None else original, "effective": n}},
            "config": {"model_name": "m", "limit": limit},
        }
        (folder / f"results_{STAMP}.json").write_text(json.dumps(document))
    return samples


def test_a_complete_lm_eval_file_is_read(bbnli_run: Path, tmp_path: Path) -> None:
    ids = [s.id for s in read_samples(bbnli_run)]
    result = run_score(bbnli_run, _lm_eval_files(tmp_path, ids), bootstrap=0)
    # every document: yes = e^-1 / (e^-1 + e^-2) = 0.731 > no, so every answer is yes (entailment)
    assert [p.label for p in result.predictions] == ["entailment"] * 6
    assert result.metrics["run"]["samples_scored"] == 6


def test_a_truncated_lm_eval_file_is_refused(bbnli_run: Path, tmp_path: Path) -> None:
    ids = [s.id for s in read_samples(bbnli_run)]
    samples = _lm_eval_files(tmp_path, ids[:4], effective=6)  # lm-eval evaluated 6, the file holds 4
    with pytest.raises(SourceError) as caught:
        run_score(bbnli_run, samples, bootstrap=0)
    assert caught.value.field == "doc_id"
    assert "holds 4 documents but lm-eval evaluated 6" in str(caught.value)
    assert "documents 4, 5 are missing" in str(caught.value)


def test_an_lm_eval_run_that_did_not_cover_the_task_is_refused(bbnli_run: Path, tmp_path: Path) -> None:
    ids = [s.id for s in read_samples(bbnli_run)]
    partial = _lm_eval_files(tmp_path / "a", ids[:4], original=6)  # no --limit, 4 of the task's 6
    with pytest.raises(SourceError, match="evaluated 4 of the task's 6 documents without a --limit"):
        run_score(bbnli_run, partial, bootstrap=0)
    limited = _lm_eval_files(tmp_path / "b", ids[:4], original=6, limit=4)  # --limit 4: as asked
    assert run_score(bbnli_run, limited, bootstrap=0).metrics["run"]["samples_scored"] == 4
    unfinished = _lm_eval_files(tmp_path / "c", ids, task_in_results=False)
    with pytest.raises(SourceError, match="did not finish"):
        run_score(bbnli_run, unfinished, bootstrap=0)


def test_an_lm_eval_file_without_its_results_file_is_refused(bbnli_run: Path, tmp_path: Path) -> None:
    ids = [s.id for s in read_samples(bbnli_run)]
    samples = _lm_eval_files(tmp_path, ids, results=False)
    with pytest.raises(SourceError, match=f"results_{STAMP}.json is not beside it"):
        run_score(bbnli_run, samples, bootstrap=0)


def test_a_foreign_document_names_the_fields_it_lacks(bbnli_run: Path, tmp_path: Path) -> None:
    from nlibias.io.tool_logs import lm_eval_rows

    log = tmp_path / f"samples_other_{STAMP}.jsonl"
    log.write_text(
        json.dumps({"doc_id": 0, "doc": {"id": "a", "question": "q"}, "resps": [], "filtered_resps": []})
        + "\n"
    )
    with pytest.raises(SourceError) as caught:
        list(lm_eval_rows(log))
    assert caught.value.line == 1 and caught.value.field == "doc"
    assert "(no choice_answers, answers, prompt)" in str(caught.value)  # it has an id: not listed


# --- several predictions files ---------------------------------------------------------------------


def test_two_logs_covering_different_samples_score_together(bbnli_run: Path, logs: dict[str, Path]) -> None:
    together = run_score(bbnli_run, [logs["first"], logs["last"]], bootstrap=0)
    key = "inspect:mockllm/model|prompt=true|generated"
    assert list(together.metrics["models"]) == [key]
    counts = together.metrics["models"][key]["overall"]["counts"]
    # three pairs, each answered (yes, no): pro entailed, anti not → one pro-stereotype point each;
    # the second pair is split between the two logs and still counts
    assert counts["cf_pro"] == 3 and counts["n_unanswered_bias"] == 0
    # independent check: the log of one run over all six samples gives the same measures
    alone = run_score(bbnli_run, logs["all"], bootstrap=0)
    assert together.metrics["models"][key]["overall"] == alone.metrics["models"][key]["overall"]
    recorded = together.metrics["run"]["predictions"]
    assert recorded == os.pathsep.join([str(logs["first"]), str(logs["last"])])


def test_the_same_sample_in_two_files_is_refused_naming_both(bbnli_run: Path, logs: dict[str, Path]) -> None:
    with pytest.raises(SourceError) as caught:
        run_score(bbnli_run, [logs["all"], logs["first"]], bootstrap=0)
    message = str(caught.value)
    assert caught.value.path == str(logs["first"]) and str(logs["all"]) in message
    assert "3 samples are answered in both files" in message


def test_an_unknown_sample_of_an_inspect_log_names_the_log_not_its_copy(
    logs: dict[str, Path], tmp_path: Path
) -> None:
    """A log scored against other samples (issue #34): the error names the user's log and the
    sample, not the converted copy in a deleted temporary directory."""
    from nlibias.catalog.registry import get_benchmark

    other = [s for s in get_benchmark("bbnli").expand_source(None).samples if s.stereotype][800:802]
    run = tmp_path / "other-run"
    write_samples(run, other)
    with pytest.raises(SourceError) as caught:
        run_score(run, logs["all"], bootstrap=0)
    assert caught.value.path == str(logs["all"]) and caught.value.line is None
    assert caught.value.field is not None and caught.value.field.startswith("samples[")
    assert "unknown sample id" in caught.value.reason and "nlibias-converted" not in str(caught.value)


def test_a_quoted_glob_pattern_is_expanded_by_nlibias(
    bbnli_run: Path, logs: dict[str, Path], tmp_path: Path
) -> None:
    from typer.testing import CliRunner

    from nlibias.cli.main import app

    folder = tmp_path / "inspect-logs"
    folder.mkdir()
    for name in ("first", "last"):
        shutil.copy(logs[name], folder / logs[name].name)
    done = CliRunner().invoke(
        app,
        ["score", "--samples", str(bbnli_run), "--predictions", str(folder / "*.eval"), "--bootstrap", "0",
         "--out", str(tmp_path / "scored")],
    )  # fmt: skip
    assert done.exit_code == 0, done.output
    assert json.loads((tmp_path / "scored" / "metrics.json").read_text())["run"]["samples_scored"] == 6
    shutil.copy(logs["all"], folder / logs["all"].name)  # a rerun beside them: now they overlap
    again = CliRunner().invoke(
        app,
        ["score", "--samples", str(bbnli_run), "--predictions", str(folder / "*.eval"), "--bootstrap", "0"],
    )
    assert again.exit_code != 0 and "answered here and in" in again.output and "Traceback" not in again.output


def test_native_files_of_one_model_score_together(tmp_path: Path) -> None:
    pair = _pair_run(tmp_path / "run")
    first, second = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    first.write_text('{"id": "x:pro", "model": "m", "label": "entailment"}\n')
    second.write_text('{"id": "x:anti", "model": "m", "label": "neutral"}\n')
    together = run_score(pair, [first, second], bootstrap=0)
    # pro entailed, anti neutral: 1 of the pair's 2 points → cf_pro 50%
    assert together.metrics["models"]["m"]["overall"]["cf_pro"] == 50.0
    both = tmp_path / "both.jsonl"
    both.write_text(first.read_text() + second.read_text())
    alone = run_score(pair, both, bootstrap=0)
    assert together.metrics["models"]["m"]["overall"] == alone.metrics["models"]["m"]["overall"]


def test_a_pattern_that_matches_nothing_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ConfigError) as caught:
        run_score(_pair_run(tmp_path / "run"), str(tmp_path / "logs" / "*.eval"), bootstrap=0)
    assert caught.value.parameter == "predictions" and "matches no file" in str(caught.value)


def _pair_run(folder: Path) -> Path:
    from nlibias.schema import Sample

    pair = [
        Sample(id=f"x:{s}", source="bbnli", domain="d", subtopic="t", premise="P.", hypothesis=f"{s} H.",
               gold="neutral", stereotype=s, pair_key="x")
        for s in ("pro", "anti")
    ]  # fmt: skip
    return write_samples(folder, pair)["jsonl"].parent
