"""Bad inputs of issue #34 part D: fill answers, model names given under one option and reported
under another, options that apply to nothing, judgements files, benchmark sources with a key
twice, the validation app's host, fine-tuning lengths (part of the corpus of ``bad_input_cases``)."""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from pathlib import Path
from typing import Any

from bad_input_corpus import QUEUE_ROWS, Base, Case


def _extend_args(d: Path, *options: str) -> list[str]:
    args = ["extend", "--out", str(d / "next"), "--cache", str(d / "c.sqlite"), "--no-progress"]
    return [*args, "--subtopic", "man_is_to_programmer", "--filter-model", "fake:a", *options]


def _tiny(base: Base, kind: str) -> Path:
    """A tiny NLI classifier (``nli``) built once per corpus run, beside the base inputs."""
    from nlibias.testing.tiny_models import build_tiny_nli_classifier

    path = base.root / f"tiny-{kind}"
    if not (path / "config.json").is_file():
        texts = ["Men are rational at work.", "Women are kind at home.", " ".join(["word"] * 40)]
        build_tiny_nli_classifier(path, texts)
    return path


def _serve_fill_answers(value: Any) -> str:
    """A fill server (``/v1/completions``) whose top log-probabilities are all ``value``; its echoed
    prompts carry no alternatives, so its alignment cannot be told and is not refused. The server
    runs in a daemon thread until the process ends; its URL is returned."""
    from test_server_fill import FakeServer

    top = {" kind": value, " good": value, " able": value}

    def answer(payload: dict[str, Any]) -> dict[str, Any]:
        prompt = str(payload.get("prompt", ""))
        if payload.get("echo"):
            logprobs = {"tokens": ["<s>", prompt, " x"], "token_logprobs": [None, -1.0, -0.5]}
            logprobs["text_offset"] = [0, 0, len(prompt)]
        else:
            logprobs = {"tokens": [" x"], "token_logprobs": [-0.5], "top_logprobs": [top]}
        return {"choices": [{"text": " x", "logprobs": logprobs}]}

    return FakeServer(answer).url


def fill_and_messages_cases() -> list[Case]:
    found: list[Case] = []

    def case(name: str) -> Callable[[Callable[[Path, Base], tuple[list[str], str]]], None]:
        def register(build: Callable[[Path, Base], tuple[list[str], str]]) -> None:
            found.append(Case(name, build))

        return register

    for label, value in (("above-zero", 2.5), ("nan", math.nan), ("text", "-0.5")):

        def served(d: Path, base: Base, value: Any = value) -> tuple[list[str], str]:
            url = _serve_fill_answers(value)
            args = _extend_args(d, "--fill-model", f"openai:{url}#toy?beam=2&depth=1", "--until", "fill")
            return args, "logprobs.top_logprobs"

        case(f"fill-answers/server-logprob-{label}")(served)

    @case("fill-answers/nli-classifier-as-fill-model")
    def nli_as_fill(d: Path, base: Base) -> tuple[list[str], str]:
        return _extend_args(d, "--fill-model", str(_tiny(base, "nli")), "--until", "fill"), "not a masked LM"

    for option, label in (("--fill-model", "fill-model"), ("--compare-fill", "compare-fill")):

        def missing(d: Path, base: Base, option: str = option) -> tuple[list[str], str]:
            extra = [] if option == "--fill-model" else ["--fill-model", "fake"]
            return _extend_args(d, *extra, option, str(d / "no-such-model")), option

        case(f"model-names/{label}-missing-path")(missing)

    @case("model-names/filter-model-missing-path")
    def filter_missing(d: Path, base: Base) -> tuple[list[str], str]:
        args = ["extend", "--out", str(d / "next"), "--fill-model", "fake", "--no-progress"]
        return [*args, "--filter-model", str(d / "no-such-nli")], "--filter-model"

    @case("model-names/compare-fill-is-the-fill-model")
    def compare_same(d: Path, base: Base) -> tuple[list[str], str]:
        return _extend_args(d, "--fill-model", "fake", "--compare-fill", "fake"), "--compare-fill"

    @case("model-names/compare-fill-bad-server-spec")
    def compare_bad(d: Path, base: Base) -> tuple[list[str], str]:
        args = _extend_args(
            d, "--fill-model", "fake", "--compare-fill", "openai:ftp://x", "--until", "filter"
        )
        return args, "--compare-fill"

    @case("model-names/filter-model-is-a-server")
    def filter_server(d: Path, base: Base) -> tuple[list[str], str]:
        args = ["extend", "--out", str(d / "next"), "--fill-model", "fake", "--no-progress"]
        return [*args, "--filter-model", "openai:http://127.0.0.1:9/v1#m"], "--filter-model"

    @case("model-names/fill-model-of-a-filter-kind")
    def fill_prompted(d: Path, base: Base) -> tuple[list[str], str]:
        return _extend_args(d, "--fill-model", "prompt:smollm2"), "--fill-model"

    @case("applies-to-nothing/mlm-revision-with-a-pinned-causal-fill")
    def pinned_twice(d: Path, base: Base) -> tuple[list[str], str]:
        config = d / "next.yaml"
        config.write_text("mlm:\n  model: causal:org/lm@abc\n  revision: def\n", encoding="utf-8")
        return ["extend", "--config", str(config), "--out", str(d / "next"), "--no-progress"], "mlm.revision"

    @case("applies-to-nothing/mlm-stopwords-with-masked-fill")
    def stopwords(d: Path, base: Base) -> tuple[list[str], str]:
        (d / "stop.txt").write_text("the\n", encoding="utf-8")
        config = d / "next.yaml"
        config.write_text(f"mlm:\n  model: fake\n  stopwords: {d / 'stop.txt'}\n", encoding="utf-8")
        return ["extend", "--config", str(config), "--out", str(d / "next"), "--no-progress"], "mlm.stopwords"

    def train_file(d: Path, premise: str = "She is a nurse.") -> Path:
        path = d / "train.jsonl"
        row = {"premise": premise, "hypothesis": "She helps people.", "label": "neutral"}
        path.write_text(json.dumps(row) + "\n", encoding="utf-8")
        return path

    @case("applies-to-nothing/her-model-without-her-lm")
    def her_model(d: Path, base: Base) -> tuple[list[str], str]:
        args = ["augment", "gender-swap", "--train", str(train_file(d)), "--out", str(d / "o")]
        return [*args, "--her-model", "smollm2"], "--her-model"

    @case("model-names/her-model-missing-path")
    def her_missing(d: Path, base: Base) -> tuple[list[str], str]:
        args = ["augment", "gender-swap", "--train", str(train_file(d)), "--out", str(d / "o")]
        return [*args, "--her", "lm", "--her-model", str(d / "no-such.gguf")], "--her-model"

    @case("validate-serve/host-unresolvable")
    def host(d: Path, base: Base) -> tuple[list[str], str]:
        return ["validate", "serve", str(base.validation_run), "--host", "no-such-host.invalid"], "--host"

    @case("finetune/max-length-beyond-positions")
    def max_length(d: Path, base: Base) -> tuple[list[str], str]:
        train = train_file(d, " ".join(["word"] * 700))  # past the tiny model's 512 positions
        args = ["finetune", "--model", str(_tiny(base, "nli")), "--train", str(train), "--out", str(d / "m")]
        return [*args, "--max-length", "100000", "--max-steps", "1", "--batch-size", "1"], "--max-length"

    def judgements(name: str, body: str) -> None:
        def build(d: Path, base: Base) -> tuple[list[str], str]:
            path = d / f"{name}.csv"
            path.write_text(body, encoding="utf-8")
            return ["validate", "import", str(base.validation_run), str(path)], str(path)

        found.append(Case(f"judgements/{name}", build))

    hid = QUEUE_ROWS[0][0]
    judgements(
        "judgement-column-twice", f"hypothesis_id,annotator,judgement,judgement\n{hid},ana,valid,invalid\n"
    )

    def premise_twice(base_file: Path) -> str:
        text = json.dumps(json.loads(base_file.read_text(encoding="utf-8")), indent=1)
        return text[: text.rindex("}")].rstrip() + ',\n "premise": ["Somebody else."]\n}\n'

    def dup_build(d: Path, base: Base) -> tuple[list[str], str]:
        original = next(iter(sorted(base.bbnli_dir.rglob("*.json"))))
        path = d / "src" / "gender" / original.name
        path.parent.mkdir(parents=True)
        path.write_text(premise_twice(original), encoding="utf-8")
        return ["expand", "bbnli", "--source", str(d / "src"), "--out", str(d / "out")], str(path)

    found.append(Case("bbnli-json/key-premise-twice", dup_build))
    return found
