"""ModelRef: one parser of model references; ``str`` gives the reference back."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from nlibias.errors import ConfigError
from nlibias.schema.model_ref import ModelRef

_KIND = st.from_regex(r"[a-z][a-z0-9-]{1,12}", fullmatch=True)
_NAME = st.from_regex(r"[A-Za-z0-9_][A-Za-z0-9_./@#:-]{0,20}", fullmatch=True)
_KEY = st.from_regex(r"[a-z][a-z_]{0,8}", fullmatch=True)
_VALUE = st.from_regex(r"[A-Za-z0-9_./-]{1,8}", fullmatch=True)


@st.composite
def refs(draw: st.DrawFn) -> ModelRef:
    kind = draw(st.one_of(st.just(""), _KIND))
    name = draw(_NAME)
    if not kind:  # a bare name whose text before ':' looks like a kind would be read as KIND:NAME
        prefix, sep, _ = name.partition(":")
        if sep and len(prefix) > 1 and "/" not in prefix and not prefix.startswith("."):
            name = "./" + name
    keys = draw(st.lists(_KEY, unique=True, max_size=4))
    return ModelRef(kind, name, tuple((key, draw(_VALUE)) for key in keys))


@given(refs())
def test_parse_of_str_gives_the_ref_back(ref: ModelRef) -> None:
    assert ModelRef.parse(str(ref)) == ref


@pytest.mark.parametrize(
    ("text", "kind", "name", "options"),
    [
        ("smollm2", "", "smollm2", {}),
        ("hf:org/model@v1", "hf", "org/model@v1", {}),
        ("fake:demo", "fake", "demo", {}),
        ("causal:smollm2?beam=8", "causal", "smollm2", {"beam": "8"}),
        ("masked:bert-base-cased", "masked", "bert-base-cased", {}),
        ("mlm:bert-base-cased", "mlm", "bert-base-cased", {}),
        ("gguf:./models/m.gguf", "gguf", "./models/m.gguf", {}),
        ("prompt:smollm2?prompt=my.txt", "prompt", "smollm2", {"prompt": "my.txt"}),
        ("openai:http://h:8000/v1#org/m", "openai", "http://h:8000/v1#org/m", {}),
        (
            "openai-completions:http://h/v1#m?beam=4&depth=2",
            "openai-completions",
            "http://h/v1#m",
            {"beam": "4", "depth": "2"},
        ),
        ("./models/x:y", "", "./models/x:y", {}),
        ("org/name:z", "", "org/name:z", {}),
        ("C:/models/x", "", "C:/models/x", {}),  # one letter before ':' is a drive, not a kind
    ],
)
def test_each_documented_kind(text: str, kind: str, name: str, options: dict[str, str]) -> None:
    ref = ModelRef.parse(text)
    assert (ref.kind, ref.name, dict(ref.options), str(ref)) == (kind, name, options, text)


def test_server_parts() -> None:
    assert ModelRef.parse("openai:http://h:8000/v1#org/m?beam=8").server == ("http://h:8000/v1", "org/m")
    assert ModelRef.parse("openai:h:8000/v1#m").server is None  # not http(s)
    assert ModelRef.parse("openai:http://h/v1").server is None  # no model after '#'
    assert ModelRef.parse("hf:http://h/v1#m").server is None  # not a server's kind


def test_fake() -> None:
    assert ModelRef.parse("fake").is_fake and ModelRef.parse("fake:x").is_fake
    assert not ModelRef.parse("fakeish").is_fake


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("m?beam", "options look like NAME?key=value&key=value"),
        ("m?beam=", "options look like NAME?key=value&key=value"),
        ("m?beam=1&beam=2", "option 'beam' is given twice"),
        ("m?size=1", "unknown option 'size' (known: beam, depth)"),
        ("?beam=1", "the model name is missing before '?'"),
    ],
)
def test_refusals_name_the_parameter(text: str, message: str) -> None:
    with pytest.raises(ConfigError, match=re.escape(message)) as info:
        ModelRef.parse(text, parameter="fill_model", allowed={"beam", "depth"})
    assert info.value.parameter == "fill_model"


def test_options_are_read_only() -> None:
    with pytest.raises(TypeError):
        ModelRef.parse("m?beam=8").options["beam"] = "9"  # type: ignore[index]


def test_an_empty_revision_a_gguf_folder_and_a_prefix_role(tmp_path: Path) -> None:
    assert "give a revision after @" in (ModelRef.named("roberta-base@").missing_path or "")
    (tmp_path / "config.json").write_text('{"architectures": ["RobertaForSequenceClassification"]}')
    problem = ModelRef.named(f"gguf:{tmp_path}").missing_path or ""
    assert "is a folder (an NLI classifier's, by its config.json), not a GGUF file" in problem
    with pytest.raises(
        ConfigError, match=r"models takes an NLI classifier, and 'mlm:x' is a masked LM by its mlm: prefix"
    ):
        ModelRef.unread("mlm:x").check_role("classifier", parameter="models", fix="name it in mlm")


def test_a_config_json_with_a_key_twice_is_refused(tmp_path: Path) -> None:
    """from_pretrained would read the last architecture; the role check would read it too."""
    from nlibias.errors import SourceError

    (tmp_path / "config.json").write_text(
        '{"architectures": ["BertForMaskedLM"],\n "architectures": ["RobertaForSequenceClassification"]}'
    )
    with pytest.raises(SourceError, match=r"config\.json:2: field architectures: the key appears twice"):
        ModelRef.unread(str(tmp_path)).role  # noqa: B018
