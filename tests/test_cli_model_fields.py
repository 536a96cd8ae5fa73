"""The command line names the model fields by their own options: an NLI classifier is given with
``--model``, a generative LM with ``--generative``, sentence scorers with ``--mlm``/``--causal``.
A refusal that points to one of them names that option only (it once named all four for an
option only classifiers take, and kept the Python names of the others); an option no model given
reads is refused, never ignored."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from nlibias.cli.main import app


@pytest.fixture()
def samples_file(tmp_path: Path) -> Path:
    row = {"id": "t", "domain": "gender", "subtopic": "t1", "premise": "P.", "hypothesis": "T.",
           "gold": "entailment", "stereotype": None, "pair_key": None}  # fmt: skip
    path = tmp_path / "samples.jsonl"
    path.write_text(json.dumps(row) + "\n")
    return path


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        ([], "no model given: name one in --model, --generative, --mlm or --causal"),
        (["--model", "fake:a", "--model", "fake:a"],  # refused as the names are read, before any model loads
         "'fake:a' given twice in --model; each runs once, so name it once"),
        (["--model", "fake:"], "--model: 'fake:' names no model"),
        (["--generative", "fake:g", "--quantize", "int8"], "--quantize applies to NLI classifiers that load"),
        (["--model", "fake:a", "--compile"], "--compile applies to NLI classifiers that load their weights here "
         "(a Hugging Face model, prompt:MODEL), not to the fake; name one in --model"),
        (["--model", "fake:a", "--prompt", "true"], "a prompt style applies to generative models; name one in --generative, or leave --prompt out"),
        (["--model", "fake:a", "--concurrency", "3"],
         "--concurrency applies to generative models behind a server; add openai:URL#MODEL to --generative"),
        (["--model", "fake:a", "--dtype", "float32"], "; leave --dtype out"),
        # a device no model loads on: a dry run on fakes or servers hid that --device cuda is wrong here
        (["--model", "fake:a", "--generative", "openai:http://h/v1#m", "--device", "cuda"],
         "--device 'cuda' applies to models that load their weights here (NLI classifiers such as a Hugging "
         "Face model or prompt:MODEL, local generative LMs and sentence scorers), and none of those given does: "
         "'fake:a' (a fake), 'openai:http://h/v1#m' (behind a server, which loads its own weights); leave "
         "--device out"),
        (["--generative", "fake:g", "--label-map", "0=entailment,1=neutral,2=contradiction"],
         "no NLI classifier is named in --model: generative and sentence-scoring models have no label ids; "
         "leave --label-map out"),
        (["--model", "fake:a", "--tp-variant", "whole"],
         "--tp-variant ['whole'] apply to sentence scorers; name one in --mlm or --causal"),
        (["--model", "fake:a", "--mode", "generated"],
         "--mode 'generated' applies to generative models; name one in --generative"),
        (["--model", "fake:a", "--max-new-tokens", "5"],
         "--max-new-tokens 5 applies to generative models; name one in --generative"),
        # scored answers are read in one forward pass: a token limit would be recorded, never used
        (["--generative", "fake:g", "--max-new-tokens", "50"],
         "--max-new-tokens 50 applies to generated answers and servers (whose scored answers may fall back to "
         "text); leave --max-new-tokens out, or give 'generated' as --mode"),
        # a revision no model takes: a generative LM is pinned in its name, and would have run unpinned
        (["--generative", "fake:g", "--model", "fake:a", "--revision", "v1"],
         "--revision 'v1' applies to NLI classifiers (--model) and masked LMs (--mlm) loaded here; pin a "
         "generative or causal LM's revision in its name (NAME@REVISION), or leave --revision out"),
        (["--generative", "fake:g", "--devices", "cpu,cpu"], "--devices applies to NLI classifiers; name one in --model"),
        (["--generative", "fake:g", "--ray", "local"], "--ray applies to NLI classifiers; name one in --model"),
        (["--model", "fake:a", "--ray-workers", "3"],
         "--ray-workers 3 applies to classifiers run on Ray; set --ray, or leave --ray-workers out"),
        (["--model", "fake:a", "--ray-gpus-per-worker", "1"],
         "--ray-gpus-per-worker 1.0 applies to classifiers run on Ray; set --ray, or leave --ray-gpus-per-worker out"),
    ],
)  # fmt: skip
def test_a_refusal_names_the_option_of_each_model_field(
    samples_file: Path, tmp_path: Path, flags: list[str], message: str
) -> None:
    out = tmp_path / "run"
    result = CliRunner().invoke(
        app, ["audit", "--samples", str(samples_file), "--out", str(out), "--no-cache", *flags]
    )
    assert result.exit_code == 2, result.output
    assert message in result.output and "Traceback" not in result.output, result.output
    assert not out.exists()


def test_a_debias_refusal_names_its_own_model_option(tmp_path: Path) -> None:
    """debias's models are given with --model; its refusal named the audit's four options."""
    from nlibias.cli.app import message_of
    from nlibias.errors import ConfigError

    error = ConfigError("no model given: pass one or more models to fine-tune", parameter="models")
    assert message_of(error) == "no model given: pass one or more models to fine-tune (option --model)"
