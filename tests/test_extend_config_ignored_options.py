"""Options of ``nlibias extend``'s configuration that no model would read are refused when the
configuration is made, at their YAML line and key, as ``nlibias audit`` refuses them: a fake or
prompted filter model's loading options, a held-out model's (never loaded), the filter stage's
device settings with fake filter models only, and the fill's with no fill model that loads weights
here. Each was accepted and silently ignored before (the run finished with the same outputs). The
same options on models that load weights are still accepted (the configuration is only validated:
no model is loaded)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError
from typer.testing import CliRunner

import nlibias
from nlibias.errors import ConfigError, SourceError
from nlibias.extension.config import ExtendConfig, load_config
from nlibias.jobs.extend import extend_config

MAP = "0=entailment,1=neutral,2=contradiction"
SERVER = "openai:http://127.0.0.1:9/v1#org/m"
LABEL_MAP_REASON = (
    "label_map applies to NLI classifiers' output ids, not to {model!r}: a fake or prompted classifier "
    "has no output ids to map; leave label_map out"
)
HELD_OUT = "{option} applies to models the pipeline loads, and the held-out 'org/held' never is (the card names it); "


def refused(tmp_path: Path, text: str) -> SourceError:
    path = tmp_path / "extend.yaml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(SourceError) as caught:
        load_config(path)
    assert caught.value.path == str(path)
    return caught.value


def extend_on_the_command_line(out: Path, *options: str) -> Any:
    """``nlibias extend --out OUT --mlm fake OPTIONS...`` through the command line."""
    from nlibias.cli.main import app

    return CliRunner().invoke(app, ["extend", "--out", str(out), "--mlm", "fake", *options])


def accepted(tmp_path: Path, text: str) -> ExtendConfig:
    path = tmp_path / "extend.yaml"
    path.write_text(text, encoding="utf-8")
    return load_config(path)


# -- filter models that are fakes or prompted LMs ----------------------------------------------


@pytest.mark.parametrize(
    ("model", "option", "value", "reason"),
    [
        ("fake:a", "label_map", MAP, LABEL_MAP_REASON.format(model="fake:a")),
        ("fake", "label_map", MAP, LABEL_MAP_REASON.format(model="fake")),
        ("prompt:smollm2", "label_map", MAP, LABEL_MAP_REASON.format(model="prompt:smollm2")),
        (
            "fake:a",
            "revision",
            "v1",
            "revision 'v1' applies to models loaded from the hub or a local directory, not to 'fake:a': "
            "a fake loads nothing; leave revision out",
        ),
        (
            "fake:a",
            "quantize",
            "int8",
            "quantize applies to sequence-classification models (a Hugging Face model), not to 'fake:a': "
            "a fake loads no weights; leave quantize out",
        ),
        (
            "fake:a",
            "compile",
            "true",
            "compile applies to sequence-classification models (a Hugging Face model), not to 'fake:a': "
            "a fake loads no weights; leave compile out",
        ),
        (
            "prompt:smollm2",
            "quantize",
            "int8",
            "quantize applies to sequence-classification models (a Hugging Face model), not to "
            "'prompt:smollm2': a prompted LM scores label words; leave quantize out",
        ),
        (
            "prompt:smollm2",
            "compile",
            "true",
            "compile applies to sequence-classification models (a Hugging Face model), not to "
            "'prompt:smollm2': a prompted LM scores label words; leave compile out",
        ),
    ],
)
def test_a_filter_models_option_its_classifier_never_reads_is_refused_at_its_line(
    tmp_path: Path, model: str, option: str, value: str, reason: str
) -> None:
    error = refused(
        tmp_path, f"filter:\n  models:\n    - org/real-nli\n    - model: {model}\n      {option}: {value}\n"
    )
    assert (error.line, error.field, error.reason) == (5, f"filter.models.1.{option}", reason)
    assert str(error) == f"{tmp_path / 'extend.yaml'}:5: field filter.models.1.{option}: {reason}"


def test_a_filter_models_options_are_accepted_on_a_model_that_loads_weights(tmp_path: Path) -> None:
    config = accepted(
        tmp_path,
        "filter:\n  models:\n    - model: org/real-nli\n      revision: v1\n"
        f"      label_map: '{MAP}'\n      quantize: int8\n      compile: true\n"
        "    - model: prompt:smollm2\n      revision: abc\n      name: judge\n    - fake:b\n",
    )
    real, prompted, _ = config.filter.models
    assert (real.revision, real.label_map, real.quantize, real.compile) == ("v1", MAP, "int8", True)
    assert prompted.revision == "abc"  # a prompted LM loads its weights at that revision


def test_a_fake_filter_models_option_is_refused_from_python_too() -> None:
    with pytest.raises(ValidationError, match=re.escape(LABEL_MAP_REASON.format(model="fake:a"))) as caught:
        ExtendConfig.model_validate({"filter": {"models": [{"model": "fake:a", "label_map": MAP}]}})
    assert caught.value.errors()[0]["loc"] == ("filter",)  # the message names the model and the option


# -- held-out models: never loaded ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("option", "value", "fix"),
    [
        ("label_map", f"'{MAP}'", "leave label_map out"),
        ("quantize", "int8", "leave quantize out"),
        ("compile", "true", "leave compile out"),
        (
            "revision",
            "v2",
            "leave revision out (the card records its name: to record the version to evaluate, name it MODEL@REVISION)",
        ),
    ],
)
def test_a_held_out_models_loading_option_is_refused_at_its_line(
    tmp_path: Path, option: str, value: str, fix: str
) -> None:
    """The card records a held-out model's name (its key) and nothing else: not its revision."""
    error = refused(
        tmp_path,
        f"filter:\n  models: [org/real-nli]\n  holdout:\n    - org/other\n    - model: org/held\n      {option}: {value}\n",
    )
    assert (error.line, error.field) == (6, f"filter.holdout.1.{option}")
    assert error.reason == HELD_OUT.format(option=option) + fix


def test_a_held_out_model_is_still_named_and_its_version_recorded_in_its_name(tmp_path: Path) -> None:
    config = accepted(
        tmp_path,
        "filter:\n  models: [org/real-nli]\n  holdout:\n    - model: org/held\n      name: org/held@v2\n    - fake:h\n",
    )
    assert [m.key for m in config.filter.holdout] == ["org/held@v2", "fake:h"]


# -- the filter stage's device settings -----------------------------------------------------------


@pytest.mark.parametrize(("option", "value"), [("dtype", "float16"), ("device", "cuda")])
def test_filter_device_settings_with_fake_filter_models_only_are_refused(
    tmp_path: Path, option: str, value: str
) -> None:
    error = refused(tmp_path, f"filter:\n  models: [fake:a, fake]\n  {option}: {value}\n")
    assert (error.line, error.field) == (3, f"filter.{option}")
    assert error.reason == (
        f"{option} {value!r} applies to filter models that load their weights here (a Hugging Face model, "
        f"prompt:MODEL), and none of filter.models does: 'fake:a' (a fake), 'fake' (a fake); leave {option} out"
    )


def test_filter_device_settings_are_accepted_with_one_model_that_loads_weights(tmp_path: Path) -> None:
    config = accepted(
        tmp_path, "filter:\n  models: [fake:a, org/real-nli]\n  dtype: float16\n  device: cuda\n"
    )
    assert (config.filter.dtype, config.filter.device) == ("float16", "cuda")
    config = accepted(tmp_path, "filter:\n  models: [fake:a]\n  dtype: auto\n")  # auto chooses nothing
    assert config.filter.dtype == "auto"


# -- the fill's device settings and revision ------------------------------------------------------


@pytest.mark.parametrize(
    ("fill", "compared", "given"),
    [
        ("fake", [], "'fake' (a fake)"),
        ("fake:x", ["fake:y"], "'fake:x' (a fake), 'fake:y' (a fake)"),
        (SERVER, [], f"{SERVER!r} (behind a server)"),
        (f"causal:{SERVER}", ["fake"], f"'causal:{SERVER}' (behind a server), 'fake' (a fake)"),
    ],
)
@pytest.mark.parametrize(
    ("option", "value"), [("dtype", "bfloat16"), ("device", "cuda"), ("revision", "abc")]
)
def test_fill_settings_with_no_fill_model_that_loads_weights_are_refused(
    tmp_path: Path, fill: str, compared: list[str], given: str, option: str, value: str
) -> None:
    """The compared fills are built with the ``mlm`` settings, so they count too."""
    error = refused(
        tmp_path,
        f"run_dir: r\nmlm:\n  model: '{fill}'\n  {option}: {value}\nfilter:\n  compare_fills: {compared}\n",
    )
    assert (error.line, error.field) == (4, f"mlm.{option}")
    assert error.reason == (
        f"{option} {value!r} applies to fill models that load their weights here (a masked or causal LM: "
        f"mlm.model, filter.compare_fills), and none of those given does: {given}; leave {option} out"
    )


@pytest.mark.parametrize(
    ("fill", "compared"), [("org/real-mlm", []), ("fake", ["org/real-mlm"]), ("smollm2", [])]
)
def test_fill_settings_are_accepted_when_a_fill_model_loads_weights(
    tmp_path: Path, fill: str, compared: list[str]
) -> None:
    gguf = fill == "smollm2"  # a GGUF file has no revision (refused: the test below)
    revision = "" if gguf else "  revision: abc\n"
    config = accepted(
        tmp_path,
        f"mlm:\n  model: {fill}\n  dtype: bfloat16\n  device: cuda\n{revision}filter:\n  compare_fills: {compared}\n",
    )
    assert (config.mlm.dtype, config.mlm.device, config.mlm.revision) == (
        "bfloat16",
        "cuda",
        None if gguf else "abc",
    )


# -- from Python and the command line: extend_config, nlibias.extend ----------------------------


def test_extend_config_reads_a_file_and_refuses_an_ignored_option_at_its_line(tmp_path: Path) -> None:
    path = tmp_path / "extend.yaml"
    path.write_text("filter:\n  models:\n    - model: fake:a\n      quantize: int8\n", encoding="utf-8")
    with pytest.raises(
        SourceError, match=r"extend\.yaml:4: field filter\.models\.0\.quantize: quantize applies"
    ):
        extend_config(path)


def test_a_model_given_on_top_that_makes_a_files_setting_inapplicable_is_named(tmp_path: Path) -> None:
    path = tmp_path / "extend.yaml"
    path.write_text(
        "mlm:\n  model: org/real-mlm\n  dtype: float16\nfilter:\n  models: [org/a]\n  device: cuda\n"
    )
    with pytest.raises(ConfigError) as caught:
        extend_config(path, fill_model="fake")
    assert caught.value.parameter == "fill_model"
    assert str(caught.value).startswith(
        "fill_model 'fake': mlm.dtype of the configuration: dtype 'float16' applies to fill models that load "
    )
    with pytest.raises(ConfigError) as caught:
        nlibias.extend(path, classifiers=["fake:a"], out_dir=tmp_path / "run")
    assert caught.value.parameter == "classifiers"
    assert "filter.device of the configuration: device 'cuda' applies to filter models" in str(caught.value)
    assert not (tmp_path / "run").exists()


@pytest.mark.parametrize(
    ("settings", "placed"),
    [
        ({"fill_model": "org/real-mlm", "classifiers": ["org/a"]}, ("cpu", "cpu")),
        ({"fill_model": "fake", "classifiers": ["org/a"]}, (None, "cpu")),
        ({"fill_model": SERVER, "classifiers": ["org/a"]}, (None, "cpu")),
        ({"fill_model": "org/real-mlm", "classifiers": ["fake:a"]}, ("cpu", None)),
        ({"fill_model": "fake", "classifiers": ["fake:a"], "compare_fill": "org/real-mlm"}, ("cpu", None)),
    ],
)
def test_the_device_setting_goes_to_the_stages_whose_models_load_weights(
    settings: dict[str, Any], placed: tuple[str | None, str | None]
) -> None:
    """``device`` places the fill and the filter models: a stage whose models all ignore it gets
    none (it was recorded there before, and ignored), the others get it."""
    config = extend_config(None, device="cpu", **settings)
    assert (config.mlm.device, config.filter.device) == placed


def test_the_device_setting_with_no_model_that_loads_weights_is_refused(tmp_path: Path) -> None:
    reason = (
        "device 'cpu' applies to fill and filter models that load their weights here (a masked or causal "
        "LM, an NLI classifier), and none of those given does: 'fake' (a fake), 'fake:a' (a fake); "
        "leave device out"
    )
    with pytest.raises(ConfigError) as caught:
        nlibias.extend(fill_model="fake", classifiers="fake:a", device="cpu", out_dir=tmp_path / "run")
    assert (str(caught.value), caught.value.parameter) == (reason, "device")
    assert not (tmp_path / "run").exists()  # refused before anything ran

    result = extend_on_the_command_line(tmp_path / "run", "--filter-model", "fake:a", "--device", "cpu")
    assert result.exit_code != 0 and "none of those given does: 'fake' (a fake), 'fake:a'" in result.output
    assert "--device" in result.output and not (tmp_path / "run").exists()


def test_a_filter_model_no_classifier_backend_reads_is_refused_before_the_fill(tmp_path: Path) -> None:
    """A server is a fill model, not a filter model (no classifier backend reads ``openai:``): it
    was refused only when the filter stage built it, after the fill had run (minutes to hours
    with a real fill model). Now when the configuration is read, in a file, from Python and on
    the command line, and nothing is written."""
    reason = f"unknown backend kind 'openai' in {SERVER!r}. Known: fake, hf, prompt"
    error = refused(tmp_path, f"mlm:\n  model: fake\nfilter:\n  models:\n    - model: {SERVER!r}\n")
    assert (error.field, error.reason, error.line) == ("filter.models", reason, 4)
    with pytest.raises(ConfigError) as caught:
        nlibias.extend(fill_model="fake", classifiers=[SERVER], out_dir=tmp_path / "run")
    assert (str(caught.value), caught.value.parameter) == (reason, "classifiers")
    result = extend_on_the_command_line(tmp_path / "run", "--filter-model", SERVER, "--unvalidated")
    assert result.exit_code != 0 and f"{reason} (option --filter-model)" in result.output
    assert not (tmp_path / "run").exists()  # nothing ran: before, the masks, masked and fill stages had


@pytest.mark.parametrize(
    ("settings", "parameter", "reason"),
    [
        (
            {"fill_model": "prompt:smollm2"},
            "fill_model",
            "unknown fill model kind 'prompt' in 'prompt:smollm2' (a prompted LM is a filter model)",
        ),
        (
            {"fill_model": "gguff:./m.gguf"},
            "fill_model",
            "unknown fill model kind 'gguff' in 'gguff:./m.gguf'",
        ),
        (
            {"fill_model": "fake", "compare_fill": "promt:smollm2"},
            "compare_fill",
            "unknown fill model kind 'promt' in 'promt:smollm2'",
        ),
    ],
)
def test_a_fill_model_no_filler_reads_is_refused_before_the_first_stage(
    tmp_path: Path, settings: dict[str, str], parameter: str, reason: str
) -> None:
    """Such a name was read as a masked LM's hub id and failed when the fill (or, for a compared
    fill, the filter stage) loaded it, after the stages before it had run."""
    with pytest.raises(ConfigError) as caught:
        nlibias.extend(classifiers="fake:a", out_dir=tmp_path / "run", **settings)
    assert caught.value.parameter == parameter
    assert str(caught.value).startswith(reason + ". Known: causal, gguf, masked, mlm, hf, fake, openai")
    assert not (tmp_path / "run").exists()


def test_a_fill_model_pinned_in_its_name_and_by_revision_is_refused(tmp_path: Path) -> None:
    """``causal:org/lm@abc`` loads ``abc`` whatever ``mlm.revision`` says; the revision was
    ignored and the dataset card printed it as the fill's (``mlm_revision: def``)."""
    reason = (
        "the fill model 'causal:org/lm@abc' is pinned in its name (@REV), which is the revision it loads; "
        "give the revision once: remove mlm.revision ('def') or the @REV"
    )
    error = refused(
        tmp_path, "mlm:\n  model: causal:org/lm@abc\n  revision: def\nfilter:\n  models: [fake:a]\n"
    )
    assert (error.field, error.reason, error.line) == ("mlm.revision", reason, 3)
    path = tmp_path / "pinned.yaml"
    path.write_text("mlm:\n  model: causal:org/lm\n  revision: def\nfilter:\n  models: [fake:a]\n")
    with pytest.raises(ConfigError) as caught:  # the name given on top pins it too
        extend_config(path, fill_model="causal:org/lm@abc")
    assert (str(caught.value), caught.value.parameter) == (reason, "fill_model")
    assert accepted(tmp_path, "mlm:\n  model: causal:org/lm\n  revision: def\n").mlm.revision == "def"


@pytest.mark.parametrize("model", ["smollm2", "./lm.gguf", "gguf:./lm.gguf"])
def test_a_revision_for_a_gguf_fill_is_refused_where_the_config_is_read(tmp_path: Path, model: str) -> None:
    """A GGUF file (the embedded SmolLM2 is one) has no revision: the run went on to the fill and
    failed there, "cannot load causal LM 'smollm2': We couldn't connect to 'https://huggingface.co'"."""
    (tmp_path / "lm.gguf").write_bytes(b"GGUF" + (3).to_bytes(4, "little") + bytes(16))  # a whole header
    model = model.replace("./", f"{tmp_path}/")
    error = refused(tmp_path, f"mlm:\n  model: '{model}'\n  revision: v1\nfilter:\n  models: [fake:a]\n")
    assert (error.field, error.line) == ("mlm.revision", 3)
    assert "every fill model that loads weights here is a GGUF file" in error.reason
    assert accepted(tmp_path, "mlm:\n  model: causal:org/lm\n  revision: v1\n").mlm.revision == "v1"
