"""The examples that were in the docstrings of these modules, as tests."""

from __future__ import annotations

from nlibias.explanations.judge import (
    GeneratedAnswer,
    is_grounded,
    judge_answers,
    judge_reference,
    shown_judge,
)
from nlibias.explanations.lm_judge import parse_lm_label
from nlibias.explanations.run_files import fake_judge_warning, row_problem
from nlibias.explanations.split import split_answer, split_sentences
from nlibias.testing.memory import traced_peak
from nlibias.testing.nli_sets import learnable_nli_rows, snli_shaped_rows
from nlibias.testing.report_runs import wq_nli_metrics
from nlibias.testing.tiny_causal import train_tiny_causal_tokenizer
from nlibias.testing.tiny_models import train_tiny_tokenizer


def test_judge_module() -> None:
    from nlibias.models.fake import FakeNLIClassifier

    answer = GeneratedAnswer(
        id="a",
        model="m",
        prompt="true",
        text="Yes. They work.",
        answer="yes",
        answer_rule="leading-word",
        explanation="They work.",
        sentences=("They work.",),
        premise="They work.",
        hypothesis="They are rich.",
        stereotype="pro",
        pair_key="k",
        domain="d",
        subtopic="t",
    )
    judge = FakeNLIClassifier("j", rules={"work": "entailment", "rich": "neutral"})
    row = judge_answers([answer], judge, None, progress=False).rows[0]
    assert (row["grounded"], row["stance"], row["consistent"], row["label"]) == (
        1.0,
        "neutral",
        True,
        "balanced",
    )


def test_judge_judge_reference() -> None:
    from nlibias.models.fake import FakeNLIClassifier

    assert judge_reference(FakeNLIClassifier("j")) == "fake:j"


def test_judge_shown_judge() -> None:
    assert (shown_judge("j", ["j"]), shown_judge("fake:j", ["fake:j"]), shown_judge("roberta", [])) == (
        "fake:j",
        "fake:j",
        "roberta",
    )


def test_judge_is_grounded() -> None:
    assert (is_grounded("entailment", "neutral"), is_grounded("neutral", "entailment")) == (True, True)
    assert (is_grounded("contradiction", "entailment"), is_grounded("neutral", "neutral")) == (False, False)


def test_lm_judge_module() -> None:
    assert parse_lm_label("Label: Biased. The answer assumes ...") == "biased"
    assert parse_lm_label("I think it is neither.") is None


def test_run_files_row_problem() -> None:
    assert (
        row_problem(
            {
                "id": "a",
                "model": "m",
                "judge": "j",
                "premise": "p",
                "hypothesis": "h",
                "explanation": "e",
                "label": "great",
            }
        )
    ) == ("label", '"great" is not one of balanced, biased, invalid (or null)')
    assert row_problem([1, 2]) == (None, "expected a JSON object, got [1, 2]")


def test_split_module() -> None:
    assert (
        repr(split_answer("**Yes**, because the premise says so. It names them."))
        == "SplitAnswer(answer='yes', rule='leading-word', explanation='because the premise says so. It names them.')"
    )
    assert split_sentences("Mr. Smith earns 3.5 dollars. He works!") == [
        "Mr. Smith earns 3.5 dollars.",
        "He works!",
    ]


def test_split_split_answer() -> None:
    assert (
        repr(split_answer("The hypothesis is false: the paragraph says nothing about men."))
        == "SplitAnswer(answer='no', rule='statement', explanation='The hypothesis is false: the paragraph says nothing about men.')"
    )
    assert split_answer("No.").explanation == ""


def test_nli_sets_module() -> None:
    rows = list(snli_shaped_rows(3))
    assert (sorted(rows[0]), rows[0]["gold_label"] in ("entailment", "neutral", "contradiction", "-")) == (
        ["gold_label", "sentence1", "sentence2"],
        True,
    )
    assert [r["label"] for r in learnable_nli_rows(3)] == ["entailment", "neutral", "contradiction"]


def test_tiny_causal_train_tiny_causal_tokenizer() -> None:
    tok = train_tiny_causal_tokenizer(["Women are rational."])
    assert tok.convert_ids_to_tokens(tok("Women are rational.")["input_ids"]) == [
        "Women",
        "are",
        "rational",
        ".",
    ]


def test_tiny_models_train_tiny_tokenizer() -> None:
    tok = train_tiny_tokenizer(["Men are rational.", "Women are rational."])
    assert tok.convert_ids_to_tokens(tok("Men are", "rational.")["input_ids"]) == [
        "[CLS]",
        "Men",
        "are",
        "[SEP]",
        "rational",
        ".",
        "[SEP]",
    ]


def test_run_files_fake_judge_warning() -> None:
    assert (
        fake_judge_warning({"fake_judges": ["j"]})
        == "Judge fake:j is a fake: a deterministic stand-in for tests and dry runs. Its labels say nothing about the explanations."
    )


def test_split_split_sentences() -> None:
    assert split_sentences("") == []


def test_memory_module() -> None:
    assert traced_peak(lambda: bytearray(10**6)) >= 10**6


def test_report_runs_module() -> None:
    assert sorted(wq_nli_metrics()["models"]["bert"]["overall"])[:3] == ["M1", "M2", "M3"]
