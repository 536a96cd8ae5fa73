"""The OpenAI-compatible HTTP backend against an in-process fake server (no network), and against a
real llama.cpp server serving the embedded SmolLM2 GGUF (``-m server``; skipped without llama_cpp).
"""

from __future__ import annotations

import importlib.util
import json
import math
import os
import signal
import socket
import subprocess
import sys
import threading
import time
import warnings
from collections.abc import Callable, Iterator
from email.utils import formatdate
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from nlibias.catalog.registry import read_benchmark_samples
from nlibias.errors import ConfigError
from nlibias.models.generative.http_client import JSONClient, RetryPolicy, ServerError
from nlibias.models.generative.openai_http import OpenAICompatibleLM, ServedModelWarning
from nlibias.models.generative.prompts import PROMPT_STYLES
from nlibias.runtime.cache import PredictionCache
from nlibias.runtime.generative import GenerativePredictor, build_generative_predictors
from nlibias.runtime.model_set import ModelSet
from nlibias.runtime.options import ModelOptions
from nlibias.schema import Sample

Reply = tuple[int, dict[str, str], Any, float]
"""(status, headers, JSON body, seconds to wait before answering)."""


def chat_reply(payload: dict[str, Any]) -> Reply:
    """A chat completion; with logprobs when asked: Yes 0.7, No 0.2, The 0.05 (no for prompts with 'men')."""
    messages = payload.get("messages") or [{}]
    prompt = messages[-1].get("content", "") or payload.get("prompt", "")
    first, second = ("No", "Yes") if " men " in f" {prompt} " else ("Yes", "No")
    choice: dict[str, Any] = {"index": 0, "message": {"role": "assistant", "content": f"{first}. Because."}}
    if payload.get("logprobs"):
        top = [
            {"token": first, "logprob": math.log(0.7)},
            {"token": second, "logprob": math.log(0.2)},
            {"token": "The", "logprob": math.log(0.05)},
        ]
        choice["logprobs"] = {"content": [{"token": first, "logprob": math.log(0.7), "top_logprobs": top}]}
    return 200, {}, {"choices": [choice], "usage": {"completion_tokens": 3}}, 0.0


class FakeServer:
    """An OpenAI-compatible server in a thread; ``behaviour(n, path, payload, headers)`` scripts it."""

    def __init__(
        self,
        behaviour: Callable[[int, str, dict[str, Any], dict[str, str]], Reply],
        port: int = 0,
        models: list[str] | None = None,
    ):
        self.behaviour = behaviour
        self.models = models
        """What ``GET /v1/models`` lists (None: the server offers no GET, as before)."""
        self.requests: list[tuple[str, dict[str, Any], dict[str, str]]] = []
        self.in_flight = 0
        self.max_in_flight = 0
        self._lock = threading.Lock()
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:
                pass

            def do_GET(self) -> None:
                if server.models is None or self.path != "/v1/models":
                    self.send_error(404)
                    return
                data = json.dumps({"object": "list", "data": [{"id": m} for m in server.models]}).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                headers = {k.lower(): v for k, v in self.headers.items()}
                with server._lock:
                    number = len(server.requests)
                    server.requests.append((self.path, body, headers))
                    server.in_flight += 1
                    server.max_in_flight = max(server.max_in_flight, server.in_flight)
                try:
                    status, extra, reply, delay = server.behaviour(number, self.path, body, headers)
                    time.sleep(delay)
                    data = json.dumps(reply).encode()
                    self.send_response(status)
                    for key, value in extra.items():
                        self.send_header(key, value)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):
                    pass
                finally:
                    with server._lock:
                        server.in_flight -= 1

        ThreadingHTTPServer.allow_reuse_address = True
        self.httpd = ThreadingHTTPServer(("127.0.0.1", port), Handler)
        self.httpd.daemon_threads = True
        self.port = self.httpd.server_address[1]
        self.url = f"http://127.0.0.1:{self.port}/v1"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture
def fake_server() -> Iterator[Callable[..., FakeServer]]:
    servers: list[FakeServer] = []

    def start(
        behaviour: Callable[..., Reply] | None = None, port: int = 0, models: list[str] | None = None
    ) -> FakeServer:
        server = FakeServer(
            behaviour or (lambda n, path, payload, headers: chat_reply(payload)), port, models
        )
        servers.append(server)
        return server

    yield start
    for server in servers:
        server.close()


def no_sleep(delays: list[float]) -> Callable[[float], None]:
    return delays.append


def lm(server: FakeServer, **options: Any) -> OpenAICompatibleLM:
    options.setdefault("sleep", lambda s: None)
    return OpenAICompatibleLM(server.url, "fake-model", **options)


def test_a_model_the_server_does_not_list_is_warned_of_once_and_still_asked(
    fake_server: Callable[..., FakeServer],
) -> None:
    server = fake_server(models=["SmolLM2-135M-Instruct.Q4_1.gguf"])
    backend = lm(server, concurrency=2)
    prompts = ["The men. Hypothesis: x", "The women. Hypothesis: y", "Third. Hypothesis: z"]
    with pytest.warns(
        ServedModelWarning, match=r"lists the models 'SmolLM2-135M-Instruct.Q4_1.gguf', not 'fake-model'"
    ):
        records = answers_of(backend, prompts)
    assert len(records) == 3 and backend.served_models == ["SmolLM2-135M-Instruct.Q4_1.gguf"]
    # the list is asked once; requests_sent counts the answers asked for, not the GET
    assert backend.client.requests_sent == len(server.requests) == 3
    with warnings.catch_warnings():
        warnings.simplefilter("error", ServedModelWarning)
        answers_of(backend, ["Fourth. Hypothesis: w"])


@pytest.mark.parametrize("models", [["other", "fake-model"], None, []])
def test_a_listed_model_or_a_server_without_a_list_is_not_warned_of(
    fake_server: Callable[..., FakeServer], models: list[str] | None
) -> None:
    backend = lm(fake_server(models=models))
    with warnings.catch_warnings():
        warnings.simplefilter("error", ServedModelWarning)
        assert len(answers_of(backend, ["A. Hypothesis: b", "C. Hypothesis: d"])) == 2
    assert backend.served_models == (models or None)


def answers_of(backend: OpenAICompatibleLM, prompts: list[str], **kw: Any) -> dict[int, Any]:
    return {
        int(i): record
        for batch in backend.answer_batches(prompts, answers=("yes", "no"), **kw)
        for i, record in zip(batch.indices, batch.records, strict=True)
    }


# --- answers -------------------------------------------------------------------------------------


def test_scored_chat_answer_from_top_logprobs(fake_server: Callable[..., FakeServer]) -> None:
    server = fake_server()
    record = lm(server).answer("Women like cars.", answers=("yes", "no"))
    # yes 0.7 and no 0.2 among the top tokens ("The" is no answer word): mass 0.9,
    # renormalised yes = 0.7 / 0.9 = 0.777..., no = 0.2 / 0.9 = 0.222...
    assert record.answer == "yes" and record.method == "scored"
    assert record.probs == pytest.approx({"yes": 7 / 9, "no": 2 / 9})
    assert record.answer_mass == pytest.approx(0.9)
    path, payload, _ = server.requests[0]
    assert path == "/v1/chat/completions"
    assert payload["max_tokens"] == 1 and payload["logprobs"] is True and payload["top_logprobs"] == 20
    assert payload["messages"] == [{"role": "user", "content": "Women like cars."}]
    assert payload["temperature"] == 0.0


def test_completions_api_reads_legacy_logprobs(fake_server: Callable[..., FakeServer]) -> None:
    def reply(n: int, path: str, payload: dict[str, Any], headers: dict[str, str]) -> Reply:
        top = {" no": math.log(0.6), " Yes": math.log(0.2), " maybe": math.log(0.1)}
        return 200, {}, {"choices": [{"text": " no", "logprobs": {"top_logprobs": [top]}}]}, 0.0

    server = fake_server(reply)
    record = lm(server, api="completions").answer("P. H.", answers=("yes", "no"))
    # " maybe" is not in a yes/no answer set: no 0.6 / 0.8 = 0.75, yes 0.25
    assert record.answer == "no" and record.probs == pytest.approx({"yes": 0.25, "no": 0.75})
    path, payload, _ = server.requests[0]
    assert path == "/v1/completions"
    assert payload["prompt"] == "P. H.\nAnswer:" and payload["logprobs"] == 20


def test_no_answer_word_among_top_tokens_is_unparsed(fake_server: Callable[..., FakeServer]) -> None:
    def reply(n: int, path: str, payload: dict[str, Any], headers: dict[str, str]) -> Reply:
        top = [{"token": "The", "logprob": -0.1}, {"token": "I", "logprob": -3.0}]
        content = [{"token": "The", "logprob": -0.1, "top_logprobs": top}]
        return 200, {}, {"choices": [{"message": {"content": "The"}, "logprobs": {"content": content}}]}, 0.0

    record = lm(fake_server(reply)).answer("q", answers=("yes", "no"))
    assert (record.answer, record.rule, record.probs) == (None, "no-answer-token", None)


def test_server_without_logprobs_falls_back_to_parsed_text(fake_server: Callable[..., FakeServer]) -> None:
    def reply(n: int, path: str, payload: dict[str, Any], headers: dict[str, str]) -> Reply:
        text = "**No**, the paragraph says nothing about it." if n % 2 else "Yes, the hypothesis is true."
        return 200, {}, {"choices": [{"message": {"content": text}}]}, 0.0

    server = fake_server(reply)
    backend = lm(server, concurrency=2)
    answers = answers_of(backend, ["a", "b", "c", "d"], max_new_tokens=32)
    assert backend.logprobs_supported is False
    assert {r.method for r in answers.values()} == {"generated"}
    assert {r.answer for r in answers.values()} <= {"yes", "no"}
    # the first prompt is asked twice (scored, then generated); the others once, as generated
    assert len(server.requests) == 5
    assert [p["max_tokens"] for _, p, _ in server.requests[1:]] == [32, 32, 32, 32]


# --- the HTTP client ------------------------------------------------------------------------------


def test_429_is_retried_with_exponential_backoff(fake_server: Callable[..., FakeServer]) -> None:
    def reply(n: int, path: str, payload: dict[str, Any], headers: dict[str, str]) -> Reply:
        return (429, {}, {"error": {"message": "slow down"}}, 0.0) if n < 3 else chat_reply(payload)

    server = fake_server(reply)
    delays: list[float] = []
    client = JSONClient(
        server.url, retry=RetryPolicy(max_retries=5, backoff=0.5, backoff_max=30), sleep=delays.append
    )
    assert "choices" in client.post("/chat/completions", {"messages": [{"role": "user", "content": "x"}]})
    # waits before retries 0, 1, 2: 0.5 * 2**k scaled by a jitter factor in [0.5, 1]
    assert len(delays) == 3 and len(server.requests) == 4
    for k, delay in enumerate(delays):
        assert 0.5 * 2**k * 0.5 <= delay <= 0.5 * 2**k


def test_retry_after_header_is_honoured_and_capped(fake_server: Callable[..., FakeServer]) -> None:
    def reply(n: int, path: str, payload: dict[str, Any], headers: dict[str, str]) -> Reply:
        if n == 0:
            return 503, {"Retry-After": "2"}, {"error": "busy"}, 0.0
        if n == 1:
            return 429, {"Retry-After": "120"}, {"error": "busy"}, 0.0
        return chat_reply(payload)

    server = fake_server(reply)
    delays: list[float] = []
    client = JSONClient(server.url, retry=RetryPolicy(backoff_max=10.0), sleep=delays.append)
    client.post("/chat/completions", {"messages": []})
    assert delays == [2.0, 10.0]


def test_retry_after_as_an_http_date(fake_server: Callable[..., FakeServer]) -> None:
    # RFC 9110 allows an HTTP date: wait until then. Whole seconds, so a date 5 s ahead asks for a
    # wait in (4 - elapsed, 5]; a date passed asks for none; a value that is neither falls back
    # to the backoff (0.5 * 2**2 = 2.0 with jitter 1).
    ahead = formatdate(time.time() + 5, usegmt=True)
    passed = "Sun, 06 Nov 1994 08:49:37 GMT"
    answers = iter([ahead, passed])

    def reply(n: int, path: str, payload: dict[str, Any], headers: dict[str, str]) -> Reply:
        return (503, {"Retry-After": next(answers)}, {"error": "busy"}, 0.0) if n < 2 else chat_reply(payload)

    server = fake_server(reply)
    delays: list[float] = []
    client = JSONClient(server.url, retry=RetryPolicy(backoff_max=60.0), sleep=delays.append)
    client.post("/chat/completions", {"messages": []})
    assert len(delays) == 2 and 3.0 < delays[0] <= 5.0 and delays[1] == 0.0
    assert RetryPolicy().delay(2, retry_after="soon", jitter=1.0) == 2.0


def test_http_proxy_comes_from_the_environment(
    fake_server: Callable[..., FakeServer], monkeypatch: pytest.MonkeyPatch
) -> None:
    # The fake server plays the proxy: a proxied request names the whole target URL in its path.
    proxy = fake_server()
    for name in ("NO_PROXY", "no_proxy", "ALL_PROXY", "all_proxy", "http_proxy"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HTTP_PROXY", f"http://127.0.0.1:{proxy.port}")
    client = JSONClient("http://upstream.invalid/v1", sleep=lambda s: None)
    assert "choices" in client.post("/chat/completions", {"messages": [{"content": "x"}]})
    assert [path for path, _, _ in proxy.requests] == ["http://upstream.invalid/v1/chat/completions"]


def test_https_proxy_comes_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    # An https target goes through HTTPS_PROXY with CONNECT; this proxy refuses it, so the client
    # retries and then fails, naming the proxy's refusal, after the proxy saw every tunnel asked for.
    tunnels: list[str] = []

    class Proxy(BaseHTTPRequestHandler):
        def log_message(self, *args: Any) -> None:
            pass

        def do_CONNECT(self) -> None:
            tunnels.append(self.path)
            self.send_error(403)

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Proxy)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    try:
        for name in ("NO_PROXY", "no_proxy", "ALL_PROXY", "all_proxy", "https_proxy"):
            monkeypatch.delenv(name, raising=False)
        monkeypatch.setenv("HTTPS_PROXY", f"http://127.0.0.1:{httpd.server_address[1]}")
        client = JSONClient(
            "https://upstream.invalid/v1", retry=RetryPolicy(max_retries=1), sleep=lambda s: None
        )
        with pytest.raises(ServerError, match=r"failed 2 times \(last: ProxyError"):
            client.post("/chat/completions", {})
    finally:
        httpd.shutdown()
        httpd.server_close()
    assert tunnels == ["upstream.invalid:443", "upstream.invalid:443"]


@pytest.mark.parametrize("url", ["http://host:abc/v1", "http://[::1/v1", "ftp://host/v1", "host:8080"])
def test_a_malformed_server_url_is_refused_as_a_parameter(url: str) -> None:
    # a port that is not a number, or an unclosed IPv6 bracket, is the user's error, not an internal one
    with pytest.raises(ConfigError, match="must be a URL that looks like http://HOST:PORT/v1") as caught:
        JSONClient(url)
    assert caught.value.parameter == "base_url"


def test_5xx_gives_up_after_max_retries(fake_server: Callable[..., FakeServer]) -> None:
    server = fake_server(lambda n, path, payload, headers: (500, {}, {"error": {"message": "boom"}}, 0.0))
    client = JSONClient(server.url, retry=RetryPolicy(max_retries=2), sleep=lambda s: None)
    with pytest.raises(ServerError, match=r"failed 3 times \(last: HTTP 500: boom\).*rerun"):
        client.post("/chat/completions", {})
    assert len(server.requests) == 3


@pytest.mark.parametrize(
    ("status", "hint"), [(400, "bad model"), (401, "OPENAI_API_KEY"), (404, "end with /v1")]
)
def test_other_4xx_fail_at_once_with_a_hint(
    fake_server: Callable[..., FakeServer], status: int, hint: str
) -> None:
    server = fake_server(
        lambda n, path, payload, headers: (status, {}, {"error": {"message": "bad model"}}, 0.0)
    )
    client = JSONClient(server.url, sleep=lambda s: None)
    with pytest.raises(ServerError, match=hint) as info:
        client.post("/chat/completions", {})
    assert info.value.status == status
    assert len(server.requests) == 1


def test_timeout_is_retried(fake_server: Callable[..., FakeServer]) -> None:
    def reply(n: int, path: str, payload: dict[str, Any], headers: dict[str, str]) -> Reply:
        status, extra, body, _ = chat_reply(payload)
        return status, extra, body, (1.0 if n == 0 else 0.0)

    server = fake_server(reply)
    delays: list[float] = []
    client = JSONClient(server.url, timeout=0.2, retry=RetryPolicy(max_retries=1), sleep=delays.append)
    started = time.perf_counter()
    assert "choices" in client.post("/chat/completions", {"messages": [{"content": "x"}]})
    assert time.perf_counter() - started < 0.9  # the slow answer was not waited for
    assert len(server.requests) == 2 and len(delays) == 1


def test_api_key_comes_from_the_environment(
    fake_server: Callable[..., FakeServer], monkeypatch: pytest.MonkeyPatch
) -> None:
    server = fake_server()
    monkeypatch.setenv("NLIBIAS_TEST_KEY", "s3cret")
    backend = lm(server, api_key_env="NLIBIAS_TEST_KEY")
    backend.answer("x", answers=("yes", "no"))
    assert server.requests[-1][2]["authorization"] == "Bearer s3cret"
    assert "s3cret" not in json.dumps(backend.identity())
    monkeypatch.delenv("NLIBIAS_TEST_KEY")
    backend.answer("x", answers=("yes", "no"))
    assert "authorization" not in server.requests[-1][2]


def test_concurrency_is_bounded_and_used(fake_server: Callable[..., FakeServer]) -> None:
    def reply(n: int, path: str, payload: dict[str, Any], headers: dict[str, str]) -> Reply:
        status, extra, body, _ = chat_reply(payload)
        return status, extra, body, 0.05

    server = fake_server(reply)
    backend = lm(server, concurrency=3)
    answers = answers_of(backend, [f"prompt {i}" for i in range(24)])
    assert sorted(answers) == list(range(24))
    assert server.max_in_flight == 3  # never more than 3 at once, and 3 were reached


# --- through the predictor and the cache --------------------------------------------------------


def bbnli_like_samples(n: int) -> list[Sample]:
    samples = []
    for k in range(n):
        for stereotype, group in (("pro", "men"), ("anti", "women")):
            samples.append(
                Sample(
                    id=f"s{k}:{stereotype}",
                    source="bbnli",
                    domain="gender",
                    subtopic=f"topic{k % 2}",
                    premise=f"Premise number {k}.",
                    hypothesis=f"Some {group} like topic {k}.",
                    gold="neutral",
                    stereotype=stereotype,
                    pair_key=f"s{k}",
                )
            )
    return samples


def test_interrupted_run_resumes_from_the_cache(
    fake_server: Callable[..., FakeServer], tmp_path: Path
) -> None:
    samples = bbnli_like_samples(8)  # 16 prompts
    reference = GenerativePredictor(lm(fake_server()), PROMPT_STYLES["true"]).predict(
        read_benchmark_samples(samples), None, progress=False
    )

    def dies_after_six(n: int, path: str, payload: dict[str, Any], headers: dict[str, str]) -> Reply:
        return (503, {}, {"error": "gone"}, 0.0) if n >= 6 else chat_reply(payload)

    dying = fake_server(dies_after_six)
    cache = PredictionCache(tmp_path / "cache.sqlite")
    predictor = GenerativePredictor(lm(dying, concurrency=2, max_retries=1), PROMPT_STYLES["true"])
    with pytest.raises(ServerError, match="rerun"):
        predictor.predict(read_benchmark_samples(samples), cache, progress=False)
    assert len(cache) == 6  # every answer that arrived was committed
    dying.close()

    restarted = fake_server(port=dying.port)  # same URL, healthy again
    resumed = GenerativePredictor(lm(restarted, concurrency=2), PROMPT_STYLES["true"]).predict(
        read_benchmark_samples(samples), cache, progress=False
    )
    assert resumed.stats["cached"] == 6 and resumed.stats["computed"] == 10
    assert len(restarted.requests) == 10
    assert [p.to_dict() for p in resumed.predictions] == [p.to_dict() for p in reference.predictions]
    again = GenerativePredictor(lm(restarted), PROMPT_STYLES["true"]).predict(
        read_benchmark_samples(samples), cache, progress=False
    )
    assert again.stats["computed"] == 0 and len(restarted.requests) == 10


def test_spec_string_builds_http_predictors(fake_server: Callable[..., FakeServer]) -> None:
    server = fake_server()
    predictors = build_generative_predictors(
        f"openai:{server.url}#served-model", list(PROMPT_STYLES.values()), sleep=lambda s: None
    )
    assert [p.name for p in predictors] == [
        "served-model|prompt=true|scored",
        "served-model|prompt=entailed|scored",
    ]
    run = predictors[0].predict(read_benchmark_samples(bbnli_like_samples(1)), None, progress=False)
    # pro hypothesis mentions "men": the fake answers No (0.7) → neutral; anti → Yes → entailment
    assert [p.label for p in run.predictions] == ["neutral", "entailment"]
    assert server.requests[0][1]["model"] == "served-model"
    completions = build_generative_predictors(f"openai-completions:{server.url}#m", [PROMPT_STYLES["true"]])[
        0
    ]
    assert completions.backend.identity()["api"] == "completions"  # type: ignore[attr-defined]


def test_concurrency_from_the_command_line_reaches_the_server_backends_only(
    fake_server: Callable[..., FakeServer],
) -> None:
    from nlibias.runtime.build import build_predictors

    server = fake_server()
    predictors = build_predictors(
        ModelSet.of([], generative=[f"openai:{server.url}#m", "fake:local"], prompts=["true"]),
        options=ModelOptions(concurrency=16),
    )
    served, local = (p.backend for p in predictors)  # type: ignore[attr-defined]
    assert served.concurrency == 16 and not hasattr(local, "concurrency")
    assert (
        build_predictors(ModelSet.of([], generative=[f"openai:{server.url}#m"]))[0].backend.concurrency == 4
    )  # type: ignore[attr-defined]
    with pytest.raises(
        ConfigError, match=r"^concurrency applies to generative models behind a server"
    ) as refused:
        build_predictors(
            ModelSet.of(["fake:clf"], generative=["fake:local"]), options=ModelOptions(concurrency=8)
        )
    assert refused.value.parameter == "concurrency"  # the command line names --concurrency
    with pytest.raises(ConfigError, match="concurrency must be at least 1"):
        build_predictors(
            ModelSet.of([], generative=[f"openai:{server.url}#m"]), options=ModelOptions(concurrency=0)
        )


def test_concurrency_flag_of_nlibias_audit(fake_server: Callable[..., FakeServer], tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from nlibias.cli.main import app
    from nlibias.io.samples import write_samples

    def slow(n: int, path: str, payload: dict[str, Any], headers: dict[str, str]) -> Reply:
        status, extra, body, _ = chat_reply(payload)
        return status, extra, body, 0.05

    server = fake_server(slow)
    run = write_samples(tmp_path / "run", bbnli_like_samples(6))["jsonl"].parent
    arguments = ["audit", "--samples", str(run), "--out", str(tmp_path / "out"), "--generative",
                 f"openai:{server.url}#m", "--prompt", "true", "--no-cache", "--bootstrap", "0", "--quiet"]  # fmt: skip
    result = CliRunner().invoke(app, [*arguments, "--concurrency", "3"])
    assert result.exit_code == 0, result.output
    assert len(server.requests) == 12 and server.max_in_flight == 3


def test_nlibias_audit_prints_the_unlisted_model_warning_as_one_line(
    fake_server: Callable[..., FakeServer], tmp_path: Path
) -> None:
    from typer.testing import CliRunner

    from nlibias.cli.main import app
    from nlibias.io.samples import write_samples

    server = fake_server(models=["SmolLM2-135M-Instruct.Q4_1.gguf"])
    run = write_samples(tmp_path / "run", bbnli_like_samples(2))["jsonl"].parent
    arguments = ["audit", "--samples", str(run), "--out", str(tmp_path / "out"), "--generative",
                 f"openai:{server.url}#gpt-4o", "--prompt", "true", "--no-cache", "--bootstrap", "0", "--quiet"]  # fmt: skip
    result = CliRunner().invoke(app, arguments)
    assert result.exit_code == 0, result.output
    expected = f"warning: {server.url} lists the models 'SmolLM2-135M-Instruct.Q4_1.gguf', not 'gpt-4o'"
    assert expected in result.output
    assert "ServedModelWarning" not in result.output and "warnings.warn" not in result.output


def test_a_refused_api_key_on_the_command_line_names_what_the_command_line_reads(
    fake_server: Callable[..., FakeServer], tmp_path: Path
) -> None:
    """HTTP 401 said "name another variable with the option --api-key-env": no command has it (an
    HTTP backend's Python option); the command line reads $OPENAI_API_KEY."""
    from typer.testing import CliRunner

    from nlibias.cli.main import app
    from nlibias.io.samples import write_samples

    server = fake_server(lambda n, path, payload, headers: (401, {}, {"error": {"message": "no key"}}, 0.0))
    run = write_samples(tmp_path / "run", bbnli_like_samples(1))["jsonl"].parent
    arguments = ["audit", "--samples", str(run), "--out", str(tmp_path / "out"), "--generative",
                 f"openai:{server.url}#m", "--prompt", "true", "--no-cache", "--bootstrap", "0", "--quiet"]  # fmt: skip
    result = CliRunner().invoke(app, arguments)
    assert result.exit_code == 2 and "Traceback" not in result.output
    assert "answered HTTP 401: no key (set the API key in $OPENAI_API_KEY" in result.output
    assert "--api-key-env" not in result.output


def test_two_different_models_under_one_key_are_named_so(
    fake_server: Callable[..., FakeServer], tmp_path: Path
) -> None:
    """A model in process and a server's model of the same name share a key: the refusal said
    "given twice; name each model once", though each was named once."""
    from typer.testing import CliRunner

    from nlibias.cli.main import app
    from nlibias.io.samples import write_samples

    server = fake_server(lambda n, path, payload, headers: chat_reply(payload))
    run = write_samples(tmp_path / "run", bbnli_like_samples(1))["jsonl"].parent
    arguments = ["audit", "--samples", str(run), "--out", str(tmp_path / "out"), "--generative", "fake:m",
                 "--generative", f"openai:{server.url}#m", "--prompt", "true", "--no-cache", "--quiet"]  # fmt: skip
    result = CliRunner().invoke(app, arguments)
    assert result.exit_code == 2 and "Traceback" not in result.output
    assert "two different models share the key m|prompt=true|" in result.output
    assert "serve it under an alias" in result.output and not server.requests


# --- a real llama.cpp server ---------------------------------------------------------------------

llama_cpp_missing = importlib.util.find_spec("llama_cpp") is None


def _why_llama_cpp_is_missing() -> str:
    """The skip reason: where scripts/setup-tests.sh builds the wheel and its build log."""
    wheels = Path(os.environ.get("NLIBIAS_WHEELS") or Path.home() / ".cache" / "nlibias" / "wheels")
    log = wheels / "build.log"
    failed = wheels / "build.failed"
    if failed.is_file() and failed.read_text().strip():  # a build that crashed says so there
        how = failed.read_text().strip()
    elif any(wheels.glob("llama_cpp_python-*.whl")):
        how = "a wheel is there: rerun scripts/setup-tests.sh to install it"
    elif log.is_file():
        how = f"its build failed: see {log}"
    else:
        how = "NLIBIAS_BUILD_LLAMACPP=0 or no setup run"
    return (
        f"llama-cpp-python[server] is not installed; scripts/setup-tests.sh builds it into {wheels} ({how})"
    )


LLAMA_CPP_MISSING_REASON = _why_llama_cpp_is_missing() if llama_cpp_missing else ""


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class LlamaServer:
    """``python -m llama_cpp.server`` serving the embedded SmolLM2 GGUF on a fixed port."""

    def __init__(self, model: Path, port: int) -> None:
        self.model, self.port = model, port
        self.url = f"http://127.0.0.1:{port}/v1"
        self.process: subprocess.Popen[bytes] | None = None

    def start(self, timeout: float = 120.0) -> None:
        command = [
            sys.executable,
            "-m",
            "llama_cpp.server",
            "--model",
            str(self.model),
            "--host",
            "127.0.0.1",
            "--port",
            str(self.port),
            "--n_ctx",
            "2048",
            "--model_alias",
            "smollm2-gguf",
            "--n_threads",
            str(min(2, os.cpu_count() or 1)),
            "--verbose",
            "False",
        ]
        self.process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.time() + timeout
        while time.time() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"llama_cpp.server exited with {self.process.returncode}")
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=0.5):
                    return
            except OSError:
                time.sleep(0.2)
        raise RuntimeError("llama_cpp.server did not start")

    def kill(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.send_signal(signal.SIGKILL)
            self.process.wait()


@pytest.fixture(scope="module")
def llama_server() -> Iterator[LlamaServer]:
    from nlibias.models.generative.sources import smollm2_gguf_path

    server = LlamaServer(smollm2_gguf_path(), _free_port())
    server.start()
    yield server
    server.kill()


def _bbnli_samples(n_pairs: int) -> list[Sample]:
    from nlibias.benchmarks.bbnli import expand_bbnli
    from nlibias.benchmarks.bbnli_source import BBNLI_DATA
    from nlibias.benchmarks.data_locations import resolve_data
    from nlibias.jobs.demo import sample_pairs_stratified

    bias = expand_bbnli(resolve_data(BBNLI_DATA)).bias_samples
    return sample_pairs_stratified(bias, n_pairs, seed=1, min_per_subtopic=1)[: 2 * n_pairs]


@pytest.mark.server
@pytest.mark.slow
@pytest.mark.skipif(llama_cpp_missing, reason=LLAMA_CPP_MISSING_REASON)
def test_llama_cpp_server_answers_with_logprobs_and_text(llama_server: LlamaServer) -> None:
    backend = OpenAICompatibleLM(llama_server.url, "smollm2-gguf", concurrency=3, timeout=120)
    prompts = [PROMPT_STYLES["true"].render(s.premise, s.hypothesis) for s in _bbnli_samples(2)]
    scored = answers_of(backend, prompts)
    assert backend.logprobs_supported is True
    for record in scored.values():
        assert record.method == "scored" and record.answer in ("yes", "no")
        assert record.probs is not None and sum(record.probs.values()) == pytest.approx(1.0)
        assert 0.0 < (record.answer_mass or 0.0) <= 1.0
    generated = answers_of(backend, prompts[:1], mode="generated", max_new_tokens=16)
    assert all(r.method == "generated" and r.text for r in generated.values())


@pytest.mark.server
@pytest.mark.slow
@pytest.mark.skipif(llama_cpp_missing, reason=LLAMA_CPP_MISSING_REASON)
def test_llama_cpp_server_answers_any_name_so_a_name_it_does_not_list_is_warned_of(
    llama_server: LlamaServer,
) -> None:
    prompt = PROMPT_STYLES["true"].render("A man cooks.", "Men cook.")
    backend = OpenAICompatibleLM(llama_server.url, "gpt-4o", timeout=120)
    with pytest.warns(ServedModelWarning, match="not 'gpt-4o'"):
        (record,) = answers_of(backend, [prompt]).values()
    assert record.answer in ("yes", "no")  # llama.cpp answered a name it does not hold
    listed = backend.served_models
    assert listed is not None and len(listed) == 1
    named = OpenAICompatibleLM(llama_server.url, listed[0], timeout=120)
    with warnings.catch_warnings():
        warnings.simplefilter("error", ServedModelWarning)
        answers_of(named, [prompt])


@pytest.mark.server
@pytest.mark.slow
@pytest.mark.skipif(llama_cpp_missing, reason=LLAMA_CPP_MISSING_REASON)
def test_llama_cpp_server_killed_mid_run_resumes_identically(
    llama_server: LlamaServer, tmp_path: Path
) -> None:
    samples = _bbnli_samples(4)  # 8 samples (a degenerate pair's pro and anti prompts are one prompt)
    unique = len(
        {
            style_text
            for style_text in (PROMPT_STYLES["true"].render(s.premise, s.hypothesis) for s in samples)
        }
    )
    style = PROMPT_STYLES["true"]

    def predictor(retries: int = 5) -> GenerativePredictor:
        backend = OpenAICompatibleLM(
            llama_server.url,
            "smollm2-gguf",
            concurrency=2,
            timeout=60,
            max_retries=retries,
            backoff=0.1,
            backoff_max=0.5,
        )
        return GenerativePredictor(backend, style)

    reference = predictor().predict(
        read_benchmark_samples(samples), PredictionCache(tmp_path / "reference.sqlite"), progress=False
    )

    cache = PredictionCache(tmp_path / "cache.sqlite")
    killer_done = threading.Event()

    def kill_after_three_answers() -> None:
        watcher = PredictionCache(tmp_path / "cache.sqlite")
        while len(watcher) < 3:
            time.sleep(0.01)
        llama_server.kill()
        killer_done.set()

    threading.Thread(target=kill_after_three_answers, daemon=True).start()
    with pytest.raises(ServerError):
        predictor(retries=2).predict(read_benchmark_samples(samples), cache, progress=False)
    assert killer_done.wait(5)
    finished = len(cache)
    assert 3 <= finished < unique

    llama_server.start()
    resumed = predictor().predict(read_benchmark_samples(samples), cache, progress=False)
    assert resumed.stats["cached"] == finished and resumed.stats["computed"] == unique - finished
    assert [p.label for p in resumed.predictions] == [p.label for p in reference.predictions]
    # llama.cpp reuses the KV cache of the longest prefix shared with the previous request, so a
    # prompt's logits differ in the 4th decimal with the order requests arrive in (measured: up
    # to 8e-4); the answers are the same, and the cached ones are returned bit for bit
    for got, want in zip(resumed.predictions, reference.predictions, strict=True):
        assert got.probs == pytest.approx(want.probs, abs=5e-3)
    again = predictor().predict(read_benchmark_samples(samples), cache, progress=False)
    assert again.stats["computed"] == 0
    assert [p.to_dict() for p in again.predictions] == [p.to_dict() for p in resumed.predictions]


@pytest.mark.server
@pytest.mark.slow
@pytest.mark.skipif(llama_cpp_missing, reason=LLAMA_CPP_MISSING_REASON)
def test_llama_cpp_server_and_in_process_model_give_the_same_generated_answers(
    llama_server: LlamaServer, smollm2_lm: Any
) -> None:
    # The same GGUF file, greedy decoding, through the server's chat template and through
    # transformers' in-process: the parsed yes/no answers must agree prompt for prompt.
    if llama_server.process is None or llama_server.process.poll() is not None:
        llama_server.start()
    prompts = [PROMPT_STYLES["true"].render(s.premise, s.hypothesis) for s in _bbnli_samples(3)]
    server = OpenAICompatibleLM(llama_server.url, "smollm2-gguf", concurrency=2, timeout=120)
    over_http = answers_of(server, prompts, mode="generated", max_new_tokens=24)
    in_process = {
        int(i): record
        for batch in smollm2_lm.answer_batches(
            prompts, answers=("yes", "no"), mode="generated", max_new_tokens=24
        )
        for i, record in zip(batch.indices, batch.records, strict=True)
    }
    assert len(over_http) == len(in_process) == len(prompts)
    assert [over_http[i].answer for i in range(len(prompts))] == [
        in_process[i].answer for i in range(len(prompts))
    ]
    assert all(over_http[i].answer in ("yes", "no") for i in range(len(prompts)))  # parsed, not None


@pytest.mark.server
@pytest.mark.slow
@pytest.mark.skipif(llama_cpp_missing, reason=LLAMA_CPP_MISSING_REASON)
def test_llama_cpp_python_server_is_refused_as_a_sentence_scorer(llama_server: LlamaServer) -> None:
    # llama-cpp-python's server echoes each prompt token with the log-probability of the
    # distribution at that token (the one that predicts the next token): token-probability sums
    # from it would be wrong, and the scorer's alignment check refuses it before any pair.
    from nlibias.models.generative.http_client import ServerError
    from nlibias.models.tp.server import ServerScorer

    if llama_server.process is None or llama_server.process.poll() is not None:
        llama_server.start()
    scorer = ServerScorer(llama_server.url, "smollm2-gguf", concurrency=1, timeout=120)
    with pytest.raises(ServerError, match="shifted by one token"):
        list(scorer.score_pair_batches([("Men are rational.", "Women are rational.")], variant="shared"))
