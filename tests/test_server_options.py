"""BBQ's options scored by an OpenAI-compatible server's completions API (echoed prompt
log-probabilities): hand-derived sums, the same scores as in process on a tiny model, the refusals
(chat API, no echo, shifted echo) and an audit end to end with its cache."""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

import nlibias
from nlibias.cli.main import app
from nlibias.errors import ConfigError
from nlibias.models.generative.hf_causal import HFCausalLM
from nlibias.models.generative.http_client import ServerError
from nlibias.models.generative.openai_http import OpenAICompatibleLM
from nlibias.models.generative.option_scoring import option_batches
from nlibias.models.generative.prompts import CHOICE_STYLES
from nlibias.models.generative.sources import CausalLMSource
from nlibias.models.tp.server import ALIGNMENT_PROBE
from test_bbq import TEMPLATE, synthetic_data_allowed, write_rows  # noqa: F401 (autouse: synthetic data)
from test_openai_http import FakeServer, Reply, chat_reply

OPTIONS = ("The grandfather", "The grandson", "Can't be determined")
QUESTIONS = [
    CHOICE_STYLES["race"].render("A grandson and his grandfather met .", "Who forgot ?", list(OPTIONS)),
    CHOICE_STYLES["arc"].render("The men and the women talked .", "Who was rational ?", list(OPTIONS)),
    CHOICE_STYLES["race"].render("Men are rational .", "Who is caring ?", list(OPTIONS)),
]


@pytest.fixture
def fake_server() -> Iterator[Callable[..., FakeServer]]:
    servers: list[FakeServer] = []

    def start(behaviour: Callable[..., Reply] | None = None) -> FakeServer:
        servers.append(FakeServer(behaviour or echo_server(by_characters)))
        return servers[-1]

    yield start
    for server in servers:
        server.close()


@pytest.fixture
def bbq_run(tmp_path: Path) -> Path:
    write_rows(tmp_path / "bbq" / "data" / "Age.jsonl", TEMPLATE)
    nlibias.expand("bbq", source=tmp_path / "bbq", out_dir=tmp_path / "run")
    return tmp_path / "run"


def echo_server(echo: Callable[[str], dict[str, Any]]) -> Callable[..., Reply]:
    """A completions server: each prompt of a list echoed by ``echo(text)`` (the alignment probe too)."""

    def reply(n: int, path: str, payload: dict[str, Any], headers: dict[str, str]) -> Reply:
        assert path == "/v1/completions" and payload.get("logprobs") is not None
        texts = payload["prompt"] if isinstance(payload["prompt"], list) else [payload["prompt"]]
        if not payload.get("echo"):  # the probe's plain completion, without top_logprobs
            return 200, {}, {"choices": [{"index": 0, "text": ","}]}, 0.0
        choices = [{"index": k, "text": "", "logprobs": echo(text)} for k, text in enumerate(texts)]
        return 200, {}, {"choices": choices}, 0.0

    return reply


def by_characters(text: str) -> dict[str, Any]:
    """As vLLM echoes: a "<s>" first (no log-probability), then one token per 3 characters of the
    text, the k-th scored -k / 10, then the generated "!"; each offset counts the token strings
    before it, "<s>" included."""
    pieces = ["<s>", *(text[s : s + 3] for s in range(0, len(text), 3)), "!"]
    return {
        "tokens": pieces,
        "text_offset": [sum(map(len, pieces[:k])) for k in range(len(pieces))],
        "token_logprobs": [None, *(-k / 10 for k in range(1, len(pieces) - 1)), -9.0],
    }


def test_an_option_sums_its_echoed_tokens_from_the_one_straddling_the_prompt(
    fake_server: Callable[..., FakeServer],
) -> None:
    server = fake_server(echo_server(by_characters))
    backend = OpenAICompatibleLM(server.url, "m", api="completions", sleep=lambda s: None)
    (batch,) = option_batches(backend, ["Q?"], [("Yes", "No way")])
    # the prompt sent is "Q?\nAnswer:" (10 characters, offsets 3-13 after "<s>"); "Q?\nAnswer:Yes":
    # "Q?\n" 3-6 (k=1), "Ans" 6-9, "wer" 9-12, ":Ye" 12-15 (k=4) straddles the prompt's end at 13,
    #   "s" 15-16 (k=5): the option is ":Ye" and "s": -0.4 - 0.5 = -0.9, two tokens
    # "Q?\nAnswer:No way": ":No" (k=4), " wa" (5), "y" (6): -0.4 - 0.5 - 0.6 = -1.5, three tokens
    assert batch.scores[0].logprobs == pytest.approx((-0.9, -1.5))
    assert batch.scores[0].tokens == (2, 3)
    asked = [body for _, body, _ in server.requests if body["prompt"] != ALIGNMENT_PROBE]
    assert [body["prompt"] for body in asked] == [["Q?\nAnswer:Yes", "Q?\nAnswer:No way"]]  # one request
    assert asked[0]["echo"] is True and asked[0]["temperature"] == 0.0


def test_choices_answered_out_of_order_are_matched_by_their_index(
    fake_server: Callable[..., FakeServer],
) -> None:
    # the API may list a batch's choices in any order; each names its prompt's index
    def reversed_reply(n: int, path: str, payload: dict[str, Any], headers: dict[str, str]) -> Reply:
        status, head, body, delay = echo_server(by_characters)(n, path, payload, headers)
        return status, head, {"choices": body["choices"][::-1]}, delay

    server = fake_server(reversed_reply)
    backend = OpenAICompatibleLM(server.url, "m", api="completions", sleep=lambda s: None)
    (batch,) = option_batches(backend, ["Q?"], [("Yes", "No way")])
    assert batch.scores[0].logprobs == pytest.approx((-0.9, -1.5))  # as in the test above


@pytest.mark.parametrize(
    ("value", "said"),
    [
        (math.nan, "nan is not a finite"),
        (0.5, "0.5 is above 0"),
        (-math.inf, "-inf is not a finite"),
        (None, "null"),
    ],
)
def test_an_echoed_prompt_log_probability_that_is_no_log_probability_is_refused(
    fake_server: Callable[..., FakeServer], value: float | None, said: str
) -> None:
    def tampered(text: str) -> dict[str, Any]:
        echoed = by_characters(text)
        if text != ALIGNMENT_PROBE:  # the question's second token, "Ans"; only the first may be null
            echoed["token_logprobs"][2] = value
        return echoed

    server = fake_server(echo_server(tampered))
    backend = OpenAICompatibleLM(server.url, "m", api="completions", sleep=lambda s: None)
    with pytest.raises(ServerError, match=rf"^{re.escape(server.url)}: .* prompt token 2 'Ans': {said}"):
        list(option_batches(backend, ["Q?"], [("Yes", "No way")]))


def test_a_reply_with_fewer_choices_than_prompts_says_so(fake_server: Callable[..., FakeServer]) -> None:
    def one_choice(n: int, path: str, payload: dict[str, Any], headers: dict[str, str]) -> Reply:
        status, head, body, delay = echo_server(by_characters)(n, path, payload, headers)
        return status, head, {"choices": body["choices"][:1]}, delay

    server = fake_server(one_choice)
    backend = OpenAICompatibleLM(server.url, "m", api="completions", sleep=lambda s: None)
    with pytest.raises(ServerError, match=r"answered 1 choices, none for the prompt at index 1"):
        list(option_batches(backend, ["Q?"], [("Yes", "No way")]))


def tiny_echo(tiny_causal_dir: Path) -> Callable[[str], dict[str, Any]]:
    """Echoed log-probabilities computed independently: one plain forward pass of the tiny model over
    the whole text, offsets from the tokenizer."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(tiny_causal_dir)
    model = AutoModelForCausalLM.from_pretrained(tiny_causal_dir).eval()

    def echo(text: str) -> dict[str, Any]:
        encoded = tokenizer(text, return_offsets_mapping=True)
        ids, spans = encoded["input_ids"], encoded["offset_mapping"]
        with torch.inference_mode():
            logprobs = torch.log_softmax(model(input_ids=torch.tensor([ids])).logits[0].float(), dim=-1)
        values = [None, *(float(logprobs[k - 1, ids[k]]) for k in range(1, len(ids)))]
        return {
            "tokens": [text[a:b] for a, b in spans],
            "text_offset": [a for a, _ in spans],
            "token_logprobs": values,
        }

    return echo


def test_server_scores_equal_in_process_scores_of_the_same_model(
    fake_server: Callable[..., FakeServer], tiny_causal_dir: Path
) -> None:
    server = fake_server(echo_server(tiny_echo(tiny_causal_dir)))
    backend = OpenAICompatibleLM(server.url, "tiny", api="completions", concurrency=2, sleep=lambda s: None)
    options = [OPTIONS, OPTIONS[::-1], ("yes", "no maybe", "Answer : no .")]
    served = [
        s
        for b in sorted(option_batches(backend, QUESTIONS, options), key=lambda b: b.indices)
        for s in b.scores
    ]
    local = HFCausalLM(
        CausalLMSource(str(tiny_causal_dir)), name="tiny", device="cpu", use_chat_template=False
    )
    here = [s for b in option_batches(local, QUESTIONS, options) for s in b.scores]
    for a, b, opts in zip(served, here, options, strict=True):
        assert a.logprobs == pytest.approx(b.logprobs, abs=1e-4) and a.tokens == b.tokens
        assert a.choice(opts) == b.choice(opts) and a.choice(opts, "per-byte") == b.choice(opts, "per-byte")
    assert len(server.requests) == 2 + len(QUESTIONS)  # the alignment probe, then one a question


def test_the_chat_api_is_refused_before_any_request(
    fake_server: Callable[..., FakeServer], bbq_run: Path
) -> None:
    server = fake_server(lambda n, path, payload, headers: chat_reply(payload))
    with pytest.raises(ConfigError, match=r"openai-completions:URL#MODEL.*with mode generated") as caught:
        next(option_batches(OpenAICompatibleLM(server.url, "m"), ["q"], [("a", "b")]))
    assert caught.value.parameter == "mode"
    with pytest.raises(ConfigError, match=r"^m: scoring multiple-choice options needs .* the chat API"):
        nlibias.audit(bbq_run, generative=f"openai:{server.url}#m", cache=False, progress=False)
    assert server.requests == []  # refused as the predictors are built, before any model runs
    generated = nlibias.audit(
        bbq_run,
        generative=f"openai:{server.url}#m",
        mode="generated",
        prompts="race",
        cache=False,
        bootstrap=0,
        progress=False,
    )
    assert generated.metrics["models"]["m|prompt=race|generated"]["overall"]["n"] == 4  # replies unparsed


def no_echo(n: int, path: str, payload: dict[str, Any], headers: dict[str, str]) -> Reply:
    return 200, {}, {"choices": [{"index": 0, "text": " The", "logprobs": None}]}, 0.0


def refuses_echo(n: int, path: str, payload: dict[str, Any], headers: dict[str, str]) -> Reply:
    # llama.cpp's server today (tools/server: "Only no echo is supported")
    return 400, {}, {"error": {"message": "Only no echo is supported"}}, 0.0


def generated_only(n: int, path: str, payload: dict[str, Any], headers: dict[str, str]) -> Reply:
    logprobs = {"tokens": [" The"], "text_offset": [0], "token_logprobs": [-0.1]}  # no prompt echoed
    return 200, {}, {"choices": [{"index": 0, "text": " The", "logprobs": logprobs}]}, 0.0


@pytest.mark.parametrize("behaviour", [no_echo, refuses_echo, generated_only])
def test_a_server_without_echoed_prompt_logprobs_is_refused(
    fake_server: Callable[..., FakeServer], behaviour: Callable[..., Reply]
) -> None:
    server = fake_server(behaviour)
    backend = OpenAICompatibleLM(server.url, "m", api="completions", max_retries=0, sleep=lambda s: None)
    with pytest.raises(ServerError, match="--mode generated") as caught:
        list(option_batches(backend, ["q"], [("a", "b")]))
    assert server.url in str(caught.value) and "prompt log-probabilities" in str(caught.value)


def test_a_server_with_shifted_echoed_logprobs_is_refused(fake_server: Callable[..., FakeServer]) -> None:
    following = {",": -0.7, " seven": -1.2}

    def shifted(n: int, path: str, payload: dict[str, Any], headers: dict[str, str]) -> Reply:
        if not payload.get("echo"):
            return 200, {}, {"choices": [{"text": ",", "logprobs": {"top_logprobs": [following]}}]}, 0.0
        logprobs = {
            "tokens": ["One", ",", " six"],
            "text_offset": [0, 3, len(ALIGNMENT_PROBE) - 4],
            "token_logprobs": [None, -1.0, -9.0],
            "top_logprobs": [None, {" six": -0.1}, following],
        }
        return 200, {}, {"choices": [{"index": 0, "logprobs": logprobs}]}, 0.0

    server = fake_server(shifted)
    backend = OpenAICompatibleLM(server.url, "m", api="completions", sleep=lambda s: None)
    with pytest.raises(ServerError, match="shifted by one token"):
        list(option_batches(backend, ["q"], [("a", "b")]))
    assert len(server.requests) == 2  # the probe only: no question was asked


def test_nlibias_audit_scores_bbq_on_a_server_and_a_rerun_reads_the_cache(
    fake_server: Callable[..., FakeServer], bbq_run: Path, tmp_path: Path
) -> None:
    server = fake_server(echo_server(by_characters))
    cache = tmp_path / "cache.sqlite"
    arguments = [
        "audit",
        "--samples",
        str(bbq_run),
        "--out",
        str(tmp_path / "out"),
        "--generative",
        f"openai-completions:{server.url}#m",
        "--prompt",
        "race",
        "--mode",
        "scored",
        "--cache",
        str(cache),
        "--bootstrap",
        "0",
        "--quiet",
    ]
    result = CliRunner().invoke(app, arguments)
    assert result.exit_code == 0, result.output
    metrics = json.loads((tmp_path / "out" / "metrics.json").read_text())
    assert metrics["models"]["m|prompt=race|scored"]["overall"]["n"] == 4
    asked = len(server.requests)
    assert asked == 2 + 4  # the alignment probe's two, then one a question (4 distinct prompts)
    rows = [json.loads(line) for line in (tmp_path / "out" / "predictions.jsonl").read_text().splitlines()]
    assert all(
        len(row["option_logprobs"]) == 3 and math.isfinite(sum(row["option_logprobs"])) for row in rows
    )
    again = nlibias.audit(
        bbq_run,
        generative=f"openai-completions:{server.url}#m",
        prompts="race",
        cache=cache,
        max_new_tokens=7,  # a scored option generates nothing: the cached scores still hold
        bootstrap=0,
        progress=False,
    )
    run = again.metrics["run"]["models"]["m|prompt=race|scored"]
    assert run["stats"]["computed"] == 0 and run["stats"]["cached"] > 0 and len(server.requests) == asked
    # cached under the server's identity: its URL, model and API
    assert run["identity"]["backend"] == {
        **run["identity"]["backend"],
        "backend": "openai-http",
        "base_url": server.url,
        "model": "m",
        "api": "completions",
    }
