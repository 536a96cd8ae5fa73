"""lm-evaluation-harness, both directions: ``nlibias export lm-eval`` writes a task that the real
``lm_eval`` runs on a tiny causal LM saved to a directory (and on SmolLM2, ``slow``), and
``nlibias score`` reads its ``--log_samples`` file back; the answers and probabilities equal
those of nlibias' own scored audit of the same model and prompts (to 1e-4)."""

from __future__ import annotations

import glob
import json
import math
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from conftest import skip_without_smollm2
from nlibias.errors import ConfigError, SourceError
from nlibias.io.samples import read_samples, write_samples
from nlibias.io.tool_logs import lm_eval_rows, predictions_format, word_probabilities
from nlibias.jobs.audit import run_audit
from nlibias.jobs.score import run_score
from nlibias.runtime.model_set import ModelSet
from nlibias.runtime.options import ModelOptions, RunOptions

lm_eval_missing = shutil.which("lm_eval", path=str(Path(sys.executable).parent)) is None
needs_lm_eval = pytest.mark.skipif(
    lm_eval_missing, reason='lm-eval is not installed (pip install "nlibias[lm-eval]")'
)


# --- the log reader's arithmetic ------------------------------------------------------------------


def test_word_probabilities_sum_spellings_then_renormalise() -> None:
    # yes = log(e^-1 + e^-2) = log(0.367879 + 0.135335) = log(0.503214); no = -1.5 → e^-1.5 = 0.223130
    # p(no) = 0.223130 / (0.503214 + 0.223130) = 0.307196
    probs = word_probabilities([-1.0, -2.0, -1.5], ["yes", "yes", "no"], ("yes", "no"))
    assert probs["no"] == pytest.approx(0.307196, abs=1e-6)
    # independent check: plain exponentials, no log-sum-exp
    yes, no = math.exp(-1.0) + math.exp(-2.0), math.exp(-1.5)
    assert probs["yes"] == pytest.approx(yes / (yes + no), rel=1e-12)


def test_a_constant_moved_into_every_continuation_cancels() -> None:
    # lm-eval adds log p("\n" | context) to each choice (trap 1): the same shift for every choice
    base = word_probabilities([-1.0, -2.0, -1.5], ["yes", "yes", "no"], ("yes", "no"))
    shifted = word_probabilities([-4.0, -5.0, -4.5], ["yes", "yes", "no"], ("yes", "no"))
    assert shifted == pytest.approx(base, rel=1e-12)


def test_format_is_told_by_content(tmp_path: Path) -> None:
    log = tmp_path / "anything.jsonl"
    log.write_text(json.dumps({"doc_id": 0, "doc": {"id": "a"}, "resps": [], "filtered_resps": []}) + "\n")
    native = tmp_path / "samples_x_2026-01-01T00-00-00.jsonl"  # lm-eval's name, nlibias' content
    native.write_text('{"id": "a", "label": "neutral"}\n')
    assert predictions_format(log) == "lm-eval"
    assert predictions_format(native) == "nlibias"
    assert predictions_format(tmp_path) == "nlibias"  # a run directory


def test_a_document_of_another_task_is_refused_with_its_line(tmp_path: Path) -> None:
    log = tmp_path / "samples_other_2026-01-01T00-00-00.jsonl"
    log.write_text(
        json.dumps({"doc_id": 0, "doc": {"question": "q"}, "resps": [], "filtered_resps": []}) + "\n"
    )
    with pytest.raises(SourceError) as caught:
        list(lm_eval_rows(log))
    assert caught.value.line == 1 and caught.value.field == "doc"
    assert "nlibias export lm-eval" in str(caught.value)


# --- export ----------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def bbnli_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Six BBNLI bias samples (three pro/anti pairs from different subtopics)."""
    from nlibias.catalog.registry import get_benchmark

    samples = [s for s in get_benchmark("bbnli").expand_source(None).samples if s.stereotype]
    chosen = samples[:2] + samples[400:402] + samples[1500:1502]
    run = tmp_path_factory.mktemp("bbnli-run")
    write_samples(run, chosen)
    return run


@pytest.fixture(scope="module")
def newline_lm_dir(tiny_causal_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The tiny causal LM with a chat template that ends in a newline, as SmolLM2's does
    (``...assistant\\n``): the context whose whitespace lm-eval moves (trap 1)."""
    from transformers import AutoTokenizer

    from nlibias.testing.tiny_causal import TINY_CHAT_TEMPLATE

    target = tmp_path_factory.mktemp("tiny-newline") / "model"
    shutil.copytree(tiny_causal_dir, target)
    tokenizer = AutoTokenizer.from_pretrained(target)
    tokenizer.chat_template = TINY_CHAT_TEMPLATE.replace(
        "<|assistant|>{% endif %}", "<|assistant|>\n{% endif %}"
    )
    tokenizer.save_pretrained(target)
    return target


class _TaggedLoader(yaml.SafeLoader):
    """YAML as lm-eval writes it: ``!function NAME`` read as the text ``"!function NAME"``."""


_TaggedLoader.add_constructor("!function", lambda loader, node: f"!function {node.value}")


def test_export_writes_the_exact_prompts_and_handles_both_traps(
    bbnli_run: Path, newline_lm_dir: Path, tmp_path: Path
) -> None:
    from nlibias.integrations.lm_eval import export_lm_eval
    from nlibias.models.generative.backend import build_backend
    from nlibias.models.generative.prompts import PROMPT_STYLES

    result = export_lm_eval(
        bbnli_run, tmp_path / "task", prompt="true", model=str(newline_lm_dir), device="cpu"
    )
    assert result.task == "nlibias_bbnli_true" and result.n_docs == 6 and result.chat_template
    config = yaml.load((tmp_path / "task" / "nlibias_bbnli_true.yaml").read_text(), Loader=_TaggedLoader)
    assert config["output_type"] == "multiple_choice" and config["target_delimiter"] == ""
    assert config["process_results"] == "!function nlibias_metrics.process_results"
    assert config["doc_to_text"] == "query" and config["doc_to_choice"] == "choices"
    documents = [json.loads(line) for line in (tmp_path / "task" / "nlibias_bbnli_true.jsonl").open()]
    lm = build_backend(str(newline_lm_dir), device="cpu")
    samples = {s.id: s for s in read_samples(bbnli_run)}
    for doc in documents:
        sample = samples[doc["id"]]
        sent = lm.format_prompt(PROMPT_STYLES["true"].render(sample.premise, sample.hypothesis))  # type: ignore[attr-defined]
        assert sent.endswith("<|assistant|>\n")
        assert not doc["query"].endswith(("\n", " "))  # trap 1: lm-eval would move it anyway
        assert all(choice and doc["query"] + choice == sent + choice[1:] for choice in doc["choices"])
        assert all(choice.startswith("\n") for choice in doc["choices"])  # trap 2: none is empty
        assert doc["choice_answers"][doc["target"]] == "no"  # gold neutral → "no" (not entailed)
    assert result.spellings == {"yes": ["yes", "Yes"], "no": ["no", "No"]}


def test_lm_eval_s_acc_counts_answer_words_as_nlibias_does(
    bbnli_run: Path, newline_lm_dir: Path, tmp_path: Path
) -> None:
    """lm-eval's default multiple-choice acc compares the most likely *spelling* with one target
    spelling; the exported task's process_results compares answer words, as nlibias answers."""
    from lm_eval.tasks._yaml_loader import load_yaml

    from nlibias.integrations.lm_eval import METRICS_MODULE, export_lm_eval

    export_lm_eval(bbnli_run, tmp_path / "task", prompt="true", model=str(newline_lm_dir), device="cpu")
    config = load_yaml(tmp_path / "task" / "nlibias_bbnli_true.yaml", resolve_func=True)
    process_results = config["process_results"]  # the !function tag, resolved as lm-eval resolves it
    assert callable(process_results) and process_results.__module__.endswith(METRICS_MODULE)
    doc: dict[str, Any] = {"choice_answers": ["yes", "yes", "no", "no"], "answers": "yes/no", "target": 2}
    lls = [(-1.0, True), (-3.0, False), (-1.5, False), (-1.6, False)]
    # the most likely spelling is a yes (-1.0), but the words: yes = log(e^-1 + e^-3) = log(0.4177)
    # = -0.873; no = log(e^-1.5 + e^-1.6) = log(0.2231 + 0.2019) = log(0.4250) = -0.856 → no
    assert process_results(doc, lls) == {"acc": 1.0}
    probs = word_probabilities([ll for ll, _ in lls], doc["choice_answers"], ("yes", "no"))
    assert probs["no"] > probs["yes"]  # independent: nlibias' own reader answers no too
    assert process_results({**doc, "target": 0}, lls) == {"acc": 0.0}  # target yes: the answer is no
    source = (tmp_path / "task" / f"{METRICS_MODULE}.py").read_text()
    assert "import nlibias" not in source and "from nlibias" not in source  # lm-eval runs it alone


def test_run_script_takes_the_model_directory_from_the_environment(
    bbnli_run: Path, tiny_causal_dir: Path, tmp_path: Path
) -> None:
    from nlibias.integrations.lm_eval import PRETRAINED_ENV, RUN_SCRIPT, export_lm_eval

    result = export_lm_eval(bbnli_run, tmp_path / "task", model=str(tiny_causal_dir), device="cpu")
    stand_in = tmp_path / "bin"
    stand_in.mkdir()
    (stand_in / "lm_eval").write_text('#!/usr/bin/env bash\nprintf "%s\\n" "$@"\n')  # prints its arguments
    (stand_in / "lm_eval").chmod(0o755)
    env = {k: v for k, v in os.environ.items() if k != PRETRAINED_ENV}
    env["PATH"] = f"{stand_in}{os.pathsep}{env['PATH']}"

    def arguments(extra: dict[str, str]) -> list[str]:
        done = subprocess.run(
            ["bash", str(tmp_path / "task" / RUN_SCRIPT), "--limit", "2"], env={**env, **extra},
            capture_output=True, text=True, check=True,
        )  # fmt: skip
        return done.stdout.splitlines()

    default = arguments({})
    assert default == [*result.command.split()[1:], "--limit", "2"]  # the export's command, flags appended
    assert default[default.index("--model_args") + 1].startswith(f"pretrained={tiny_causal_dir}")
    moved = arguments({PRETRAINED_ENV: "/elsewhere/my model"})
    assert moved[moved.index("--model_args") + 1].startswith("pretrained=/elsewhere/my model")
    assert str(tiny_causal_dir) not in moved[moved.index("--model_args") + 1]


def test_export_refuses_a_spelling_lm_eval_would_score_differently(
    bbnli_run: Path, tiny_causal_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from nlibias.integrations.lm_eval import export_lm_eval
    from nlibias.models.generative.hf_causal import HFCausalLM

    def empty_spelling(self: HFCausalLM, answers: tuple[str, ...]) -> dict[str, tuple[tuple[str, int], ...]]:
        return {"yes": (("", 5),), "no": (("no", 6),)}

    monkeypatch.setattr(HFCausalLM, "answer_spellings", empty_spelling)
    with pytest.raises(ConfigError) as caught:
        export_lm_eval(bbnli_run, tmp_path / "task", model=str(tiny_causal_dir), device="cpu")
    assert caught.value.parameter == "model"


def test_export_refuses_a_server_model(bbnli_run: Path, tmp_path: Path) -> None:
    from nlibias.integrations.lm_eval import export_lm_eval

    with pytest.raises(ConfigError) as caught:
        export_lm_eval(bbnli_run, tmp_path / "task", model="openai:http://127.0.0.1:9/v1#m")
    assert caught.value.parameter == "model"


def test_export_refuses_a_classifier_before_it_loads(bbnli_run: Path, tmp_path: Path) -> None:
    from nlibias.integrations.lm_eval import export_lm_eval

    folder = tmp_path / "nli"  # no weights: the role is read from config.json, nothing loads
    folder.mkdir()
    (folder / "config.json").write_text('{"architectures": ["RobertaForSequenceClassification"]}')
    with pytest.raises(ConfigError, match="is an NLI classifier \\(name a causal LM") as caught:
        export_lm_eval(bbnli_run, tmp_path / "task", model=str(folder))
    assert caught.value.parameter == "model"


# --- the real lm_eval, then nlibias score --------------------------------------------------------


def run_lm_eval(task_dir: Path, task: str, pretrained: Path, out: Path, *, chat: bool) -> Path:
    """Run the real ``lm_eval`` CLI as a user would (the command the export's README gives)."""
    model_args = f"pretrained={pretrained}" + (",add_bos_token=False" if chat else "")
    command = [
        str(Path(sys.executable).parent / "lm_eval"),
        "--include_path", str(task_dir), "--tasks", task, "--model", "hf", "--model_args", model_args,
        "--device", "cpu", "--batch_size", "4", "--log_samples", "--output_path", str(out),
    ]  # fmt: skip
    env = {**os.environ, "HF_DATASETS_OFFLINE": "1", "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
    finished = subprocess.run(command, capture_output=True, text=True, env=env, cwd=out.parent, timeout=1500)
    assert finished.returncode == 0, finished.stderr[-3000:]
    logs = glob.glob(str(out / "*" / f"samples_{task}_*.jsonl"))
    assert len(logs) == 1, logs
    return Path(logs[0])


def assert_same_answers(scored_dir: Path, audit: object) -> float:
    """Labels equal and p(entailment) within 1e-4 of the audit's; the largest difference."""
    from nlibias.jobs.results import load_run

    theirs = {p.sample_id: p for p in load_run(scored_dir).predictions}
    ours = {p.sample_id: p for p in audit.predictions}  # type: ignore[attr-defined]
    assert theirs.keys() == ours.keys()
    largest = 0.0
    for sample_id, mine in ours.items():
        other = theirs[sample_id]
        assert other.label == mine.label and other.extra["answer"] == mine.extra["answer"]
        assert mine.probs is not None and other.probs is not None
        largest = max(largest, *(abs(a - b) for a, b in zip(other.probs, mine.probs, strict=True)))
    assert largest < 1e-4
    return largest


@needs_lm_eval
@pytest.mark.timeout(1800)
def test_lm_eval_on_a_tiny_model_gives_the_audit_s_answers(
    bbnli_run: Path, newline_lm_dir: Path, tmp_path: Path
) -> None:
    from typer.testing import CliRunner

    from nlibias.cli.main import app

    runner = CliRunner()
    exported = runner.invoke(
        app,
        ["export", "lm-eval", "--samples", str(bbnli_run), "--prompt", "true", "--out", str(tmp_path / "task"),
         "--model", str(newline_lm_dir)],
    )  # fmt: skip
    assert exported.exit_code == 0, exported.output
    assert "nlibias_bbnli_true" in exported.output and "chat template" in exported.output
    log = run_lm_eval(tmp_path / "task", "nlibias_bbnli_true", newline_lm_dir, tmp_path / "lm-out", chat=True)
    scored = runner.invoke(
        app,
        ["score", "--samples", str(bbnli_run), "--predictions", str(log), "--out", str(tmp_path / "scored"),
         "--bootstrap", "0"],
    )  # fmt: skip
    assert scored.exit_code == 0, scored.output
    metrics = json.loads((tmp_path / "scored" / "metrics.json").read_text())
    assert metrics["predictor_kinds"] == {"lm-eval:model|prompt=true|scored": "generative"}
    assert metrics["run"]["predictions"] == str(log)
    audit = run_audit(
        bbnli_run,
        ModelSet.of(generative=[str(newline_lm_dir)], prompts=["true"]),
        run=RunOptions(cache=False, bootstrap=0, progress=False),
        options=ModelOptions(device="cpu"),
    )
    assert_same_answers(tmp_path / "scored", audit)
    ours = audit.metrics["models"]["model|prompt=true|scored"]["overall"]
    theirs = metrics["models"]["lm-eval:model|prompt=true|scored"]["overall"]
    assert theirs["counts"] == ours["counts"] and theirs["answers"] == ours["answers"]
    # lm-eval's own headline acc is the share of "no" answers (the target of every bias sample)
    [results] = glob.glob(str(log.parent / "results_*.json"))
    acc = json.loads(Path(results).read_text())["results"]["nlibias_bbnli_true"]["acc,none"]
    no_answers = sum(p.extra["answer"] == "no" for p in audit.predictions)
    assert acc == pytest.approx(no_answers / 6)


@pytest.mark.slow
@needs_lm_eval
@pytest.mark.timeout(1800)
def test_lm_eval_on_smollm2_gives_the_audit_s_answers(bbnli_run: Path, tmp_path: Path) -> None:
    from nlibias.integrations.lm_eval import export_lm_eval

    skip_without_smollm2()
    export = export_lm_eval(bbnli_run, tmp_path / "task", model="smollm2", device="cpu")
    assert export.chat_template and export.command.count("add_bos_token=False") == 1
    assert sum(len(v) for v in export.spellings.values()) == 10  # SmolLM2's single-token spellings
    pretrained = Path(export.command.split("pretrained=")[1].split(",")[0])
    log = run_lm_eval(tmp_path / "task", export.task, pretrained, tmp_path / "lm-out", chat=True)
    run_score(bbnli_run, log, out_dir=tmp_path / "scored", bootstrap=0)
    audit = run_audit(
        bbnli_run,
        ModelSet.of(generative=["smollm2"], prompts=["true"]),
        run=RunOptions(cache=False, bootstrap=0, progress=False),
    )
    assert_same_answers(tmp_path / "scored", audit)


# --- a log's rows pass the rows' gate, and its errors name the log (issue #34) ----------------------

_STAMP = "2026-01-01T00-00-00.000001"


def _lm_eval_log(folder: Path, docs: list[dict[str, Any]], resps: list[list[float]] | None = None) -> Path:
    """An lm-eval samples file of ``docs`` (yes/no choices; each line's log-likelihoods
    ``resps[i]``, default yes -1, no -2, written as strings as lm-eval writes them) and the
    results file lm-eval writes beside it."""
    folder.mkdir(parents=True, exist_ok=True)
    log = folder / f"samples_nlibias_bbnli_true_{_STAMP}.jsonl"
    lines = []
    for doc_id, doc in enumerate(docs):
        values = resps[doc_id] if resps else [-1.0, -2.0]
        lines.append({"doc_id": doc_id, "doc": doc, "resps": [[[str(v), "False"]] for v in values],
                      "filtered_resps": [[str(v), "False"] for v in values]})  # fmt: skip
    log.write_text("".join(json.dumps(line) + "\n" for line in lines))
    n = len(docs)
    results = {"results": {"nlibias_bbnli_true": {"acc,none": 0.0}},
               "n-samples": {"nlibias_bbnli_true": {"original": n, "effective": n}}, "config": {"limit": None}}  # fmt: skip
    (folder / f"results_{_STAMP}.json").write_text(json.dumps(results))
    return log


def _docs(run: Path, **changes: Any) -> list[dict[str, Any]]:
    return [
        {"id": s.id, "choice_answers": ["yes", "no"], "answers": "yes/no", "prompt": "true", **changes}
        for s in read_samples(run)
    ]


def test_a_log_likelihood_above_zero_is_refused_naming_the_log_and_line(
    bbnli_run: Path, tmp_path: Path
) -> None:
    resps = [[-1.0, -2.0]] * 6
    resps[2] = [3.0, -2.0]  # line 3: +3.0 is no log-likelihood (a probability of e^3 > 1)
    log = _lm_eval_log(tmp_path, _docs(bbnli_run), resps)
    with pytest.raises(SourceError) as caught:
        run_score(bbnli_run, log, bootstrap=0)
    assert caught.value.path == str(log) and caught.value.line == 3
    assert caught.value.field == "filtered_resps[0]" and "3.0 is above 0" in caught.value.reason
    resps[2] = [-1.0, -2.0]  # the same log, valid: its string log-likelihoods are read as numbers
    result = run_score(bbnli_run, _lm_eval_log(tmp_path / "valid", _docs(bbnli_run), resps), bootstrap=0)
    assert [p.label for p in result.predictions] == ["entailment"] * 6  # yes: e^-1 > e^-2


def test_choice_answers_inconsistent_with_answers_is_a_clear_refusal(bbnli_run: Path, tmp_path: Path) -> None:
    for choices, reason in ((["yes", "maybe"], "choice 'maybe' is not a word of yes/no"),
                            (["yes", "yes"], "no choice stands for 'no'")):  # fmt: skip
        docs = _docs(bbnli_run)
        docs[1] = {**docs[1], "choice_answers": choices}
        log = _lm_eval_log(tmp_path / choices[1], docs)
        with pytest.raises(SourceError) as caught:
            run_score(bbnli_run, log, bootstrap=0)
        assert caught.value.path == str(log) and caught.value.line == 2
        assert caught.value.field == "doc.choice_answers" and reason in caught.value.reason


def test_an_error_found_in_the_converted_rows_names_the_log_not_its_copy(
    bbnli_run: Path, tmp_path: Path
) -> None:
    docs = _docs(bbnli_run)
    docs[4] = {**docs[4], "id": "no-such-sample"}  # line 5
    log = _lm_eval_log(tmp_path, docs)
    with pytest.raises(SourceError) as caught:
        run_score(bbnli_run, log, bootstrap=0)
    assert caught.value.path == str(log) and caught.value.line == 5  # before: <tmp>/nlibias-converted-...
    assert "unknown sample id 'no-such-sample'" in str(caught.value)
    assert "nlibias-converted" not in str(caught.value)


def test_a_log_mixing_two_prompts_is_refused_naming_the_file(bbnli_run: Path, tmp_path: Path) -> None:
    docs = _docs(bbnli_run)
    docs[3:] = [{**doc, "prompt": "gpt3"} for doc in docs[3:]]  # before: "3 samples have no prediction"
    log = _lm_eval_log(tmp_path, docs)
    with pytest.raises(SourceError) as caught:
        run_score(bbnli_run, log, bootstrap=0)
    assert caught.value.path == str(log) and caught.value.line == 4 and caught.value.field == "doc.prompt"
    assert "the log mixes prompt styles: 'gpt3' here, 'true' on line 1" in caught.value.reason


def test_model_path_is_a_model_directory_or_a_hub_id(
    bbnli_run: Path, tiny_causal_dir: Path, tmp_path: Path
) -> None:
    from nlibias.integrations.lm_eval import export_lm_eval

    text_file = tmp_path / "model.txt"
    text_file.write_text("x")
    for refused in (text_file, tmp_path / "no" / "such" / "model"):
        with pytest.raises(ConfigError, match=r"model_path must be a model directory \(or a hub id"):
            export_lm_eval(bbnli_run, tmp_path / "task", model=str(tiny_causal_dir), model_path=refused)
    assert not (tmp_path / "task").exists()  # refused before anything is written
    for given in ("my-org/my-model", tiny_causal_dir):
        result = export_lm_eval(bbnli_run, tmp_path / "task", model=str(tiny_causal_dir), model_path=given)
        assert f"pretrained={given}," in result.command or result.command.endswith(f"pretrained={given}")
