"""Reading "her" right (issue #27): the rule on the hand-labelled sets, the ``lm`` choice's mechanics
(batched == one at a time == a plain forward pass per sentence), the option through ``augment``,
and the embedded SmolLM2 on a handful of sentences (slow)."""

from __future__ import annotations

import json
import math
import re
from pathlib import Path

import pytest

from conftest import skip_without_smollm2
from nlibias.debias.augment import SUMMARY_FILE, TRAIN_FILE, augment_gender_swap
from nlibias.debias.swap import CUE, DEFAULT, MAX_JOINT, HerResolver, Swapper, candidate_picks
from nlibias.debias.wordlists import winobias_list
from nlibias.errors import ConfigError

FIXTURES = Path(__file__).parent / "fixtures"
DEV = FIXTURES / "her_sentences.tsv"
HELD_OUT = FIXTURES / "her_sentences_heldout.tsv"
SWAPPER = Swapper(winobias_list())


def read_set(path: Path) -> list[tuple[str, str, str]]:
    lines = path.read_text(encoding="utf-8").splitlines()
    assert lines[0] == "category\tsentence\texpected"
    rows = [line.split("\t") for line in lines[1:]]
    assert all(len(r) == 3 for r in rows)
    return [(c, s, e) for c, s, e in rows]


def test_the_hand_labelled_sets_are_well_formed() -> None:
    dev, held_out = read_set(DEV), read_set(HELD_OUT)
    assert len(dev) >= 150 and len(held_out) >= 60
    sentences = [s for _, s, _ in dev + held_out]
    assert len(set(sentences)) == len(sentences)  # no sentence twice, none in both sets
    words = re.compile(r"[^\W\d_]+")
    for _, sentence, expected in dev + held_out:
        # a swap replaces a word by one word: the hand-written sentence has as many words
        assert len(words.findall(sentence)) == len(words.findall(expected)), sentence
    categories = {c for c, _, _ in dev}
    assert {"object", "possessive", "verb", "adjective", "small_clause", "ditransitive"} <= categories
    assert {"end", "slash", "s_he", "hyphen", "ordinary"} <= categories


def exact(path: Path) -> int:
    return sum(SWAPPER.swap(sentence)[0] == expected for _, sentence, expected in read_set(path))


def test_the_rule_reads_the_hand_labelled_sets_at_least_as_well_as_before() -> None:
    # the rule before issue #27 (commit f6338ad) wrote 116 of the 195 dev sentences and 33 of the
    # 66 held-out ones exactly as labelled (bench/her_accuracy.py, RULE_V0); the rule now: 180 and
    # 49 (the dev set was looked at while its cues were written; the held-out set was not)
    assert exact(DEV) >= 180
    assert exact(HELD_OUT) >= 49


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Everyone took his/her seat.", "Everyone took her/his seat."),
        ("Each student brings his or her own lunch.", "Each student brings her or his own lunch."),
        ("Ask him or her first.", "Ask her or him first."),
        ("When (s)he arrives, s/he signs.", "When (s)he arrives, s/he signs."),
        ("The lake is man-made; it took 500 man-hours.", "The lake is man-made; it took 500 man-hours."),
        ("Her mother-in-law and her in-laws.", "His father-in-law and his in-laws."),
        ("The news made her happy.", "The news made him happy."),
        ("The news made her famous pie better.", "The news made his famous pie better."),
        ("They let her go; we heard her sing.", "They let him go; we heard him sing."),
        ("They saw her face.", "They saw his face."),
        ("The club elected her president.", "The club elected him president."),
        # cues need the clause to end after a title or adjective; nouns-as-often-as-verbs are no cue
        ("She made her secretary type the letter.", "He made his secretary type the letter."),
        ("She helped her close friend move.", "He helped his close friend move."),
        ("He lent her his car.", "She lent him her car."),
        ("Her friends left.", "His friends left."),
    ],
)
def test_rule_cases_of_issue_27(text: str, expected: str) -> None:
    assert SWAPPER.swap(text)[0] == expected


def test_open_her_and_candidates() -> None:
    plan = SWAPPER.plan("She sent her flowers and her card.")
    assert plan is not None and len(plan.open) == 2
    # the rule's reading first, then every combination of the two open "her"s: 2**2
    assert [plan.render(p)[0] for p in candidate_picks(plan)] == [
        "He sent his flowers and his card.",
        "He sent his flowers and him card.",
        "He sent him flowers and his card.",
        "He sent him flowers and him card.",
    ]
    # a "her" decided by a cue is open only when asked for
    assert SWAPPER.plan("The news made her happy.").open == ()  # type: ignore[union-attr]
    assert len(SWAPPER.plan("The news made her happy.", open_her=(CUE, DEFAULT)).open) == 1  # type: ignore[union-attr]
    many = SWAPPER.plan(" ".join(["Tom sent her flowers."] * (MAX_JOINT + 1)))
    assert many is not None and len(candidate_picks(many)) == 1 + MAX_JOINT + 1  # rule + one flip each


@pytest.fixture(scope="module")
def tiny_her_lm(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from nlibias.testing.tiny_causal import build_tiny_causal_lm

    texts = [s for _, s, _ in read_set(DEV)] + [e for _, _, e in read_set(DEV)]
    return build_tiny_causal_lm(tmp_path_factory.mktemp("her-lm"), texts, seed=3)


def plain_log_probability(path: Path, sentence: str) -> float:
    """The sum of log P(token | every token before it) after the start token, one unbatched
    forward pass (the obviously-correct computation the batched scorer must match)."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(path)
    model = AutoModelForCausalLM.from_pretrained(path).eval()
    start = tokenizer.bos_token or tokenizer.eos_token
    ids = tokenizer(start + sentence, add_special_tokens=False)["input_ids"]
    with torch.inference_mode():
        logits = model(torch.tensor([ids])).logits[0].double()
    log_probs = torch.log_softmax(logits, dim=-1)
    return math.fsum(float(log_probs[t - 1, ids[t]]) for t in range(1, len(ids)))


def test_lm_choice_batched_equals_one_at_a_time_and_a_plain_forward_pass(
    tiny_her_lm: Path, one_torch_thread: None
) -> None:
    plans = [SWAPPER.plan(s) for _, s, _ in read_set(DEV)[:60]]
    open_plans = [p for p in plans if p is not None and p.open]
    assert len(open_plans) >= 5
    batched = HerResolver.load(str(tiny_her_lm), device="cpu").choose(open_plans)
    assert {0, 1} <= {c for picks in batched for c in picks}  # the random model picks both readings
    alone = HerResolver.load(str(tiny_her_lm), device="cpu")  # its own memo: nothing reused
    assert [alone.choose([p])[0] for p in open_plans] == batched
    for plan, picks in zip(open_plans, batched, strict=True):
        scores = [plain_log_probability(tiny_her_lm, plan.render(c)[0]) for c in candidate_picks(plan)]
        best = max(range(len(scores)), key=lambda k: (scores[k], -k))
        assert candidate_picks(plan)[best] == picks, plan.text


def test_masked_lm_choice_runs(tiny_mlm_dir: Path, one_torch_thread: None) -> None:
    plan = SWAPPER.plan("Tom sent her flowers.")
    assert plan is not None
    resolver = HerResolver.load(f"mlm:{tiny_mlm_dir}", device="cpu")
    assert resolver.choose([plan])[0] in candidate_picks(plan)
    assert resolver.identity()["scorer"] == "mlm"


def test_augment_with_her_lm_records_the_choice_and_uses_the_models_reading(
    tmp_path: Path, tiny_her_lm: Path, one_torch_thread: None
) -> None:
    rows = [
        {
            "premise": "The nurse sent her flowers.",
            "hypothesis": "A woman gave something.",
            "label": "neutral",
        },
        {"premise": "The nurse made her happy.", "hypothesis": "She smiled.", "label": "neutral"},
        {"premise": "A dog runs.", "hypothesis": "An animal moves.", "label": "entailment"},
    ]
    source = tmp_path / "t.jsonl"
    source.write_text("".join(json.dumps(r) + "\n" for r in rows))
    resolver = HerResolver.load(str(tiny_her_lm), device="cpu")
    summary = augment_gender_swap(source, tmp_path / "lm", her="lm", her_model=resolver, progress=False)
    rule = augment_gender_swap(source, tmp_path / "rule", progress=False)
    assert (rule["her"], rule["her_model"], rule["her_open_texts"]) == ("rule", None, 0)
    # one text has a "her" with no cue ("sent her flowers"); "made her happy" is read by the rule
    assert summary["her"] == "lm" and summary["her_open_texts"] == 1
    assert summary["her_model"] == json.loads(json.dumps(dict(resolver.identity())))
    plan = SWAPPER.plan(rows[0]["premise"])
    assert plan is not None
    expected = plan.render(HerResolver.load(str(tiny_her_lm), device="cpu").choose([plan])[0])[0]
    swapped = [json.loads(line) for line in (tmp_path / "lm" / TRAIN_FILE).open()][3:]
    assert [r["premise"] for r in swapped] == [expected, "The nurse made him happy."]
    assert summary["her_lm_differs"] == int(expected != "The nurse sent his flowers.")
    on_disk = json.loads((tmp_path / "lm" / SUMMARY_FILE).read_text())
    assert on_disk["her"] == "lm" and on_disk["her_model"]["spec"] == str(tiny_her_lm)
    with pytest.raises(ConfigError) as error:
        augment_gender_swap(source, tmp_path / "x", her="model", progress=False)
    assert error.value.parameter == "her"


@pytest.mark.slow
def test_smollm2_reads_a_handful_right(one_torch_thread: None) -> None:
    skip_without_smollm2()
    resolver = HerResolver.load("smollm2", device="cpu")
    # five dev sentences the rule reads wrong or has no cue for, and SmolLM2 reads right
    # (bench/her_accuracy.py lists every sentence it gets wrong)
    cases = {
        "The dog followed her home.": "The dog followed him home.",
        "The manager hired her last week.": "The manager hired him last week.",
        "I wish her luck.": "I wish him luck.",
        "She lost her keys.": "He lost his keys.",
        "The teacher watched her students leave.": "The teacher watched his students leave.",
    }
    plans = [SWAPPER.plan(s) for s in cases]
    assert all(p is not None and p.open for p in plans)
    picks = resolver.choose(plans)  # type: ignore[arg-type]
    assert [p.render(c)[0] for p, c in zip(plans, picks, strict=True)] == list(cases.values())  # type: ignore[union-attr]


def test_cli_her_lm_with_a_model_directory(tmp_path: Path, tiny_her_lm: Path, one_torch_thread: None) -> None:
    from typer.testing import CliRunner

    from nlibias.cli.main import app

    source = tmp_path / "t.jsonl"
    source.write_text(
        json.dumps({"premise": "The nurse sent her flowers.", "hypothesis": "x", "label": "e"}) + "\n"
    )
    args = ["augment", "gender-swap", "--train", str(source), "--out", str(tmp_path / "o"), "--json"]
    result = CliRunner().invoke(app, [*args, "--her", "lm", "--her-model", str(tiny_her_lm)])
    assert result.exit_code == 0, result.output
    summary = json.loads(result.stdout)
    assert summary["her"] == "lm" and summary["her_open_texts"] == 1
    assert summary["her_model"]["spec"] == str(tiny_her_lm) and summary["her_model"]["scorer"] == "causal"
    refused = CliRunner().invoke(app, [*args, "--her", "model"])
    assert refused.exit_code == 2 and "--her" in refused.output


def test_a_her_model_of_another_role_is_refused_before_anything_loads(tmp_path: Path) -> None:
    # an NLI classifier read "her" as a language model would fail late, naming no option
    import json

    from nlibias.debias.swap import check_her
    from nlibias.errors import ConfigError

    (tmp_path / "config.json").write_text(json.dumps({"architectures": ["RobertaForSequenceClassification"]}))
    with pytest.raises(ConfigError, match=r"her_model takes a generative LM, and .* is an NLI classifier"):
        check_her("lm", str(tmp_path))
    with pytest.raises(ConfigError, match="her_model takes a masked LM"):
        check_her("lm", f"mlm:{tmp_path}")
