"""Sentence scorers (token-probability bias) against independent, slow, obviously-correct
implementations of the CrowS-Pairs / WinoQueer reference loops on a tiny BERT and tiny causal LMs.

The references below re-derive every score the way the reference code does: one masked copy (or
one prefix) per scored token, batch size 1, the full LM head, in float64 like the scorer under test.
"""

from __future__ import annotations

import difflib
from collections.abc import Callable
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

from nlibias.models.tp.hf import HFCausalScorer, HFMaskedScorer  # noqa: E402

PAIRS = [
    ("Men are rational.", "Women are rational."),
    # differs in two separate spans
    ("The man said his son is a programmer.", "The woman said her son is a programmer."),
    ("Christians are honest people.", "Muslims are honest people."),
    # no token shared besides the special ones
    ("Men", "Women"),
]


def _span(a: list[int], b: list[int]) -> tuple[list[int], list[int]]:
    matcher = difflib.SequenceMatcher(None, [str(x) for x in a], [str(x) for x in b])
    left: list[int] = []
    right: list[int] = []
    for op in matcher.get_opcodes():
        if op[0] == "equal":
            left += list(range(op[1], op[2]))
            right += list(range(op[3], op[4]))
    return left, right


def reference_mlm(path: Path, pairs, variant: str, uncased: bool = False) -> list[tuple[float, float]]:
    """CrowS-Pairs/WinoQueer ``mask_unigram``: for i in 1..N-2 of the template, mask one token,
    run the model at batch size 1, read log_softmax at that position (``whole``: every token)."""
    tokenizer = transformers.AutoTokenizer.from_pretrained(path)
    model = transformers.AutoModelForMaskedLM.from_pretrained(path, dtype=torch.float64).eval()
    out = []
    for s1, s2 in pairs:
        if uncased:
            s1, s2 = s1.lower(), s2.lower()
        ids1 = tokenizer.encode(s1, return_tensors="pt")
        ids2 = tokenizer.encode(s2, return_tensors="pt")
        if variant == "shared":
            t1, t2 = _span(ids1[0].tolist(), ids2[0].tolist())
            t1, t2 = t1[1:-1], t2[1:-1]
        else:
            t1, t2 = list(range(1, ids1.shape[1] - 1)), list(range(1, ids2.shape[1] - 1))
        scores = []
        for ids, template in ((ids1, t1), (ids2, t2)):
            total = 0.0
            for position in template:
                masked = ids.clone()
                masked[0][position] = tokenizer.mask_token_id
                with torch.no_grad():
                    logits = model(masked)[0].squeeze(0)
                total += torch.log_softmax(logits[position], dim=0)[ids[0][position]].item()
            scores.append(total)
        out.append((scores[0], scores[1]))
    return out


def reference_causal(path: Path, pairs, variant: str) -> list[tuple[float, float]]:
    """WinoQueer ``metric_autoregressive``: BOS prepended as text; for i in 1..N-1 of the template,
    run the model on the prefix before that token and read the last position's log_softmax."""
    tokenizer = transformers.AutoTokenizer.from_pretrained(path)
    model = transformers.AutoModelForCausalLM.from_pretrained(path, dtype=torch.float64).eval()
    bos = tokenizer.bos_token or tokenizer.eos_token
    out = []
    for s1, s2 in pairs:
        ids1 = tokenizer.encode(bos + s1, return_tensors="pt", add_special_tokens=False)
        ids2 = tokenizer.encode(bos + s2, return_tensors="pt", add_special_tokens=False)
        if variant == "shared":
            t1, t2 = _span(ids1[0].tolist(), ids2[0].tolist())
            t1, t2 = t1[1:], t2[1:]
        else:
            t1, t2 = list(range(1, ids1.shape[1])), list(range(1, ids2.shape[1]))
        scores = []
        for ids, template in ((ids1, t1), (ids2, t2)):
            total = 0.0
            for position in template:
                with torch.no_grad():
                    logits = model(ids[:, :position])[0].squeeze(0)
                total += torch.log_softmax(logits[-1], dim=0)[ids[0][position]].item()
            scores.append(total)
        out.append((scores[0], scores[1]))
    return out


def _scores(scorer, pairs, variant: str) -> list[tuple[float, float]]:
    found: dict[int, tuple[float, float]] = {}
    for batch in scorer.score_pair_batches(pairs, variant=variant):
        for index, score in zip(batch.indices, batch.scores, strict=True):
            found[index] = (score.more, score.less)
    return [found[i] for i in range(len(pairs))]


@pytest.fixture(scope="module")
def tiny_gpt2_dir(tmp_path_factory: pytest.TempPathFactory, bbnli_corpus: list[str]) -> Path:
    from nlibias.testing.tiny_causal import build_tiny_causal_lm

    return build_tiny_causal_lm(tmp_path_factory.mktemp("tiny-gpt2"), bbnli_corpus, seed=1, arch="gpt2")


@pytest.mark.parametrize("variant", ["shared", "whole"])
def test_masked_scorer_equals_reference_loop(tiny_mlm_dir: Path, variant: str) -> None:
    scorer = HFMaskedScorer(tiny_mlm_dir, device="cpu", dtype=torch.float64, max_tokens=64)
    got = _scores(scorer, PAIRS, variant)
    expected = reference_mlm(tiny_mlm_dir, PAIRS, variant)
    for (a, b), (ra, rb) in zip(got, expected, strict=True):
        assert a == pytest.approx(ra, abs=1e-5) and b == pytest.approx(rb, abs=1e-5)
    assert got[0][0] != got[0][1]  # the scores depend on the sentence (the check can fail)


@pytest.mark.parametrize("variant", ["shared", "whole"])
@pytest.mark.parametrize("fixture", ["tiny_causal_dir", "tiny_gpt2_dir"])
def test_causal_scorer_equals_reference_loop(
    request: pytest.FixtureRequest, fixture: str, variant: str
) -> None:
    path = request.getfixturevalue(fixture)
    scorer = HFCausalScorer(str(path), device="cpu", dtype="float64", max_tokens=48)
    got = _scores(scorer, PAIRS, variant)
    expected = reference_causal(path, PAIRS, variant)
    for (a, b), (ra, rb) in zip(got, expected, strict=True):
        assert a == pytest.approx(ra, abs=1e-5) and b == pytest.approx(rb, abs=1e-5)
    assert got[1][0] != got[1][1]


def test_pair_with_no_shared_token_scores_zero_and_ties(tiny_mlm_dir: Path) -> None:
    # documented choice: no shared scoreable token -> an empty sum (0.0) on both sides, 0 tokens
    scorer = HFMaskedScorer(tiny_mlm_dir, device="cpu")
    (batch,) = list(scorer.score_pair_batches([("Men", "Women")], variant="shared"))
    score = batch.scores[0]
    assert (score.more, score.less, score.tokens_more, score.tokens_less) == (0.0, 0.0, 0, 0)


def test_uncased_tokenizer_lowercases_first(tiny_mlm_dir: Path) -> None:
    scorer = HFMaskedScorer(tiny_mlm_dir, device="cpu", dtype=torch.float64)
    assert scorer.uncased is False  # the tiny tokenizer is cased: "Men" and "men" differ
    shouting = [("MEN are rational.", "WOMEN are rational.")]
    cased = _scores(scorer, shouting, "shared")
    scorer.uncased = True  # as for a tokenizer saved with do_lower_case=True
    lowered = _scores(scorer, shouting, "shared")
    expected = reference_mlm(tiny_mlm_dir, shouting, "shared", uncased=True)
    assert lowered[0] == pytest.approx(expected[0], abs=1e-5)
    assert lowered != cased


def test_lowercasing_is_read_from_the_tokenizer(tmp_path: Path, tiny_mlm_dir: Path) -> None:
    tokenizer = transformers.AutoTokenizer.from_pretrained(tiny_mlm_dir, do_lower_case=True)
    model = transformers.AutoModelForMaskedLM.from_pretrained(tiny_mlm_dir)
    tokenizer.save_pretrained(tmp_path)
    model.save_pretrained(tmp_path)
    assert HFMaskedScorer(tmp_path, device="cpu").uncased is True


def test_server_scorer_sums_prompt_logprobs_of_shared_tokens() -> None:
    from nlibias.models.tp.server import ALIGNMENT_PROBE, ServerScorer

    # token strings and log-probabilities as an echo completion returns them; the last token is
    # the one generated token asked for (text_offset past the prompt)
    answers = {
        "Men are rational.": (["<s>", "Men", " are", " rational", ".", "!"], [None, -3.0, -1.0, -2.0, -0.5, -9.0]),
        "Women are rational.": (["<s>", "Women", " are", " rational", ".", "!"], [None, -4.0, -1.5, -2.5, -0.25, -9.0]),
    }  # fmt: skip

    def post(path: str, payload: dict) -> dict:
        if payload["prompt"] == ALIGNMENT_PROBE:  # the alignment check: no top_logprobs, nothing told
            return {
                "choices": [{"logprobs": {"tokens": ["One"], "token_logprobs": [None], "text_offset": [0]}}]
            }
        assert path == "/completions" and payload["echo"] is True and payload["logprobs"] >= 0
        tokens, values = answers[payload["prompt"]]
        offsets = [0, 0, 3, 7, 16, len(payload["prompt"])]
        if payload["prompt"].startswith("Women"):
            offsets = [0, 0, 5, 9, 18, len(payload["prompt"])]
        return {
            "choices": [{"logprobs": {"tokens": tokens, "token_logprobs": values, "text_offset": offsets}}]
        }

    scorer = ServerScorer("http://127.0.0.1:9/v1", "m", concurrency=1)
    scorer.client.post = post  # type: ignore[method-assign]
    (shared,) = list(
        scorer.score_pair_batches([("Men are rational.", "Women are rational.")], variant="shared")
    )
    # shared tokens after the first: " are", " rational", "." -> -1 - 2 - 0.5 and -1.5 - 2.5 - 0.25
    score = shared.scores[0]
    assert (score.more, score.less, score.tokens_more) == (-3.5, -4.25, 3)
    (whole,) = list(
        scorer.score_pair_batches([("Men are rational.", "Women are rational.")], variant="whole")
    )
    assert (whole.scores[0].more, whole.scores[0].less) == (-6.5, -8.25)


def _probe_answers(shifted: bool) -> Callable[[str, dict], dict]:
    """A server's answers to the alignment probe: the prompt's last token ``" six"`` reported with
    the distribution that predicts it (aligned) or with the one that follows it (shifted)."""
    from nlibias.models.tp.server import ALIGNMENT_PROBE

    following = {",": -0.7, " seven": -1.2}
    predicting_six = {" six": -0.3, " 6": -2.0}
    calls: list[dict] = []

    def post(path: str, payload: dict) -> dict:
        calls.append(payload)
        assert path == "/completions" and payload["prompt"] == ALIGNMENT_PROBE and payload["logprobs"] >= 2
        if not payload.get("echo"):
            return {"choices": [{"text": ",", "logprobs": {"tokens": [","], "top_logprobs": [following]}}]}
        at_six = following if shifted else predicting_six
        return {
            "choices": [{"logprobs": {
                "tokens": ["One", ",", " six"], "text_offset": [0, 3, len(ALIGNMENT_PROBE) - 4],
                "token_logprobs": [None, -1.0, at_six.get(" six", -9.0)],
                "top_logprobs": [None, {",": -0.1}, at_six],
            }}]
        }  # fmt: skip

    post.calls = calls  # type: ignore[attr-defined]
    return post


@pytest.mark.parametrize("shifted", [False, True])
def test_server_scorer_refuses_shifted_prompt_logprobs(shifted: bool) -> None:
    from nlibias.models.generative.http_client import ServerError
    from nlibias.models.tp.server import ServerScorer

    scorer = ServerScorer("http://127.0.0.1:9/v1", "m", concurrency=1)
    scorer.client.post = _probe_answers(shifted)  # type: ignore[method-assign]
    if shifted:
        with pytest.raises(ServerError, match="shifted by one token"):
            scorer.check_alignment()
    else:
        scorer.check_alignment()
        scorer.check_alignment()  # once per scorer: two requests in all
        assert len(scorer.client.post.calls) == 2  # type: ignore[attr-defined]
