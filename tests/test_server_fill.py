"""Causal fill from an OpenAI-compatible server: against a fake local server (a deterministic toy
LM behind ``/v1/completions``) the fill equals a one-candidate-at-a-time computation made from the
toy LM itself, goes through the prediction cache, and refuses a server with shifted echoes."""

from __future__ import annotations

import hashlib
import json
import math
import threading
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from nlibias.errors import ConfigError
from nlibias.models.mlm.causal_fill import is_word_piece
from nlibias.models.mlm.hf import is_whole_word
from nlibias.models.mlm.server_fill import ServerCausalFiller
from nlibias.schema.model_ref import split_fill_spec

WORDS = ["men", "women", "are", "less", "good", "kind", "rational", "at", "work", "the", "a", "of", "home"]
PIECES = ["go", "od", "ki", "nd", "ra", "tion", "al", "ly", "er", "wo", "ho", "me", "ss", "le"]
CHARS = [*"abcdefghijklmnopqrstuvwxyz", *"abcdefghijklmnopqrstuvwxyz".upper(), *".,", " "]
VOCAB = sorted(
    {*(" " + w for w in WORDS), *(" " + p for p in PIECES), *WORDS, *PIECES, *CHARS, "Men", " Men"}
)


def tokenize(text: str) -> list[str]:
    """Greedy longest match over the toy vocabulary (every character is a token, so it never fails)."""
    tokens, i = [], 0
    while i < len(text):
        token = max((t for t in VOCAB if text.startswith(t, i)), key=len)
        tokens.append(token)
        i += len(token)
    return tokens


def next_log_probs(prefix: str) -> dict[str, float]:
    """The toy LM: log P(next token | the text so far), deterministic, over the whole vocabulary."""
    logits = {
        t: int(hashlib.sha256(f"{prefix[-12:]}|{t}".encode()).hexdigest()[:8], 16) / 2**32 * 8 - 4
        for t in VOCAB
    }
    top = max(logits.values())
    norm = top + math.log(sum(math.exp(v - top) for v in logits.values()))
    return {t: v - norm for t, v in logits.items()}


def sentence_log_prob(text: str) -> float:
    total, seen = 0.0, ""
    for token in tokenize(text):
        total += next_log_probs(seen)[token]
        seen += token
    return total


def completion(payload: dict[str, Any]) -> dict[str, Any]:
    """``/v1/completions`` of the toy LM: one generated token (greedy), its top alternatives, and
    with ``echo`` the prompt's tokens after a BOS token (which has no log-probability)."""
    prompt, n = payload["prompt"], int(payload.get("logprobs") or 0)

    def top(prefix: str) -> dict[str, float]:
        lp = next_log_probs(prefix)
        return dict(sorted(lp.items(), key=lambda kv: (-kv[1], kv[0]))[:n])

    generated = max(next_log_probs(prompt).items(), key=lambda kv: kv[1])
    tokens, values, tops, offsets = [generated[0]], [generated[1]], [top(prompt)], [len(prompt)]
    if payload.get("echo"):
        prompt_tokens = tokenize(prompt)
        starts = [sum(len(t) for t in prompt_tokens[:i]) for i in range(len(prompt_tokens))]
        tokens = ["<s>", *prompt_tokens, *tokens]
        values = [
            None,
            *(next_log_probs(prompt[:s])[t] for t, s in zip(prompt_tokens, starts, strict=True)),
            *values,
        ]
        tops = [None, *(top(prompt[:s]) for s in starts), *tops]
        offsets = [0, *starts, *offsets]
    logprobs = {"tokens": tokens, "token_logprobs": values, "top_logprobs": tops, "text_offset": offsets}
    return {"choices": [{"text": generated[0], "logprobs": logprobs}]}


class FakeServer:
    """A local OpenAI-style ``/v1/completions`` server answering with ``answer(payload)`` (the toy
    LM by default), in a daemon thread; :meth:`close` stops it."""

    def __init__(self, answer: Callable[[dict[str, Any]], dict[str, Any]] | None = None) -> None:
        self.requests: list[dict[str, Any]] = []
        answering = completion if answer is None else answer
        owner = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_POST(self) -> None:
                payload = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                owner.requests.append(payload)
                body = json.dumps(answering(payload)).encode()  # NaN written as NaN, as json reads it
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args: Any) -> None:
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture()
def server() -> Iterator[FakeServer]:
    fake = FakeServer()
    yield fake
    fake.close()


def reference_fill(
    text: str, exclude: set[str], *, top_k: int, beam: int, depth: int, pool: int
) -> list[tuple[str, int, float, int]]:
    """The fill's definition from the toy LM itself (no HTTP): the whole next-token distribution
    at each step, one partial word and one candidate sentence at a time."""
    before, after = text.split("<mask>")
    left = before.rstrip()
    sep = " " if left and before != left else ""
    found: dict[str, float] = {}
    beams: list[tuple[str, float]] = [("", 0.0)]
    for step in range(depth + 1):
        grown = []
        for partial, score in beams:
            lp = next_log_probs(left + (sep + partial if step else ""))
            if step > 0 and is_whole_word(partial):
                ends = math.log(sum(math.exp(v) for t, v in lp.items() if not is_word_piece(t)))
                found[partial] = max(found.get(partial, -math.inf), score + ends)
            if step < depth:
                if step == 0 and sep:
                    table = {t[1:]: v for t, v in lp.items() if t.startswith(" ") and is_whole_word(t[1:])}
                else:
                    table = {t: v for t, v in lp.items() if is_word_piece(t)}
                best = sorted(table, key=lambda w: (-table[w], w))[:beam]
                grown += [(partial + w, score + table[w]) for w in best]
        beams = sorted(grown, key=lambda b: (-b[1], b[0]))[:beam]
    shortlist = [w for w in sorted(found, key=lambda w: (-found[w], w)) if w.lower() not in exclude][:pool]
    scored = sorted(
        (
            (sentence_log_prob(f"{left}{sep}{w}{after}"), left_rank, w)
            for left_rank, w in enumerate(shortlist, 1)
        ),
        key=lambda s: (-s[0], s[1]),
    )
    return [(w, rank, s, left_rank) for rank, (s, left_rank, w) in enumerate(scored[:top_k], start=1)]


MASKED = [
    "Men are less <mask> at work.",
    "Men are less <mask> at home.",  # the same left context: continued once
    "Women are <mask> of the men.",
    "<mask> are rational.",  # the mask opens the text: no leading space on its first token
]
EXCLUDE = [{"good"}, set(), {"kind"}, set()]
STOP = {"the", "a", "of"}


def test_server_fill_equals_one_candidate_at_a_time(server: FakeServer) -> None:
    # top_logprobs covers the whole toy vocabulary, so the boundary probability the server fill
    # reads from the top alternatives is the reference's exact one
    spec = f"openai:{server.url}#toy?beam=5&depth=3&pool=6&top_logprobs={len(VOCAB)}"
    filler = ServerCausalFiller(spec, stopwords=STOP, concurrency=3)
    got: dict[int, Any] = {}
    for batch in filler.fill_batches(MASKED, top_k=3, exclude=EXCLUDE):
        got.update({int(i): rows for i, rows in zip(batch.indices, batch.candidates, strict=True)})
    several = False
    for i, text in enumerate(MASKED):
        expected = reference_fill(text, EXCLUDE[i] | STOP, top_k=3, beam=5, depth=3, pool=6)
        assert [c.word for c in got[i]] == [w for w, *_ in expected], text
        assert [(c.rank, c.vocab_rank) for c in got[i]] == [(r, v) for _, r, _, v in expected]
        for candidate, (_, _, score, _) in zip(got[i], expected, strict=True):
            assert candidate.log_prob == pytest.approx(score, abs=1e-5)
        several |= any(len(tokenize(" " + c.word)) > 1 for c in got[i])
    assert several  # words of several tokens were proposed, not only one-token words
    probe = "One, two, three, four, five, six"  # the alignment check's two requests
    completions = [r for r in server.requests if not r.get("echo") and r["prompt"] != probe]
    assert all(r["logprobs"] == len(VOCAB) and r["max_tokens"] == 1 for r in completions)
    # the two texts with one left context were continued once: no prompt asked twice
    beam_prompts = [r["prompt"] for r in completions]
    assert len(beam_prompts) == len(set(beam_prompts))


def test_server_fill_goes_through_the_prediction_cache(server: FakeServer, tmp_path: Any) -> None:
    from nlibias.extension.config import MLMConfig
    from nlibias.extension.fill import causal_filler_for, describe_filler, fill_requests
    from nlibias.runtime.cache import PredictionCache

    spec = f"openai:{server.url}#toy?beam=3&depth=2"
    assert split_fill_spec(spec) == ("causal", spec)
    filler = causal_filler_for(MLMConfig(model=spec))
    assert isinstance(filler, ServerCausalFiller) and describe_filler(filler)["kind"] == "causal"
    cache = PredictionCache(tmp_path / "c.sqlite")
    excludes = [frozenset(e) for e in EXCLUDE]
    first, computed = fill_requests(MASKED, excludes, filler, cache, top_k=2, progress=False)
    assert computed == len(MASKED) and len(server.requests) > 0
    sent = len(server.requests)
    rerun = causal_filler_for(MLMConfig(model=spec))
    assert rerun is not None
    again, computed_again = fill_requests(MASKED, excludes, rerun, cache, top_k=2, progress=False)
    assert computed_again == 0 and again == first and len(server.requests) == sent  # nothing asked
    cache.close()


def test_server_fill_spec_errors_name_the_parameter() -> None:
    with pytest.raises(ConfigError) as info:
        ServerCausalFiller("openai:http://127.0.0.1:1/v1")  # no '#MODEL'
    assert info.value.parameter == "fill_model"
    with pytest.raises(ConfigError):
        ServerCausalFiller("openai:http://127.0.0.1:1/v1#m?beams=3")


# --- a real llama.cpp (llama-cpp-python) server --------------------------------------------------

from test_openai_http import LLAMA_CPP_MISSING_REASON, llama_cpp_missing, llama_server  # noqa: E402,F401


@pytest.mark.server
@pytest.mark.slow
@pytest.mark.skipif(llama_cpp_missing, reason=LLAMA_CPP_MISSING_REASON)
def test_llama_cpp_python_server_is_refused_before_the_beam(llama_server: Any) -> None:  # noqa: F811
    # its echoed prompt log-probabilities are shifted by one token, so sentence scores would be
    # wrong: the fill refuses it with the alignment probe's two requests, before any beam request
    from nlibias.models.generative.http_client import ServerError

    if llama_server.process is None or llama_server.process.poll() is not None:
        llama_server.start()
    filler = ServerCausalFiller(f"openai:{llama_server.url}#smollm2-gguf?beam=2&depth=1")
    with pytest.raises(ServerError, match="shifted by one token"):
        list(filler.fill_batches(["Men are <mask> at work."], top_k=2, exclude=[()]))
    assert filler.requests == 2
