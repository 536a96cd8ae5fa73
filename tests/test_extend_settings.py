"""``extend``'s settings are written once (``ExtendSettings``, taken as ``**settings`` by ``extend``
and ``extend_config``): every one still reaches the configuration, an unset one leaves the
configuration's value, and a misspelt or wrongly typed one is refused as a ConfigError naming it."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest

import nlibias
from nlibias.errors import ConfigError
from nlibias.extension.config import ExtendConfig
from nlibias.extension.config_overrides import SETTING_KEYS
from nlibias.jobs.extend import ExtendSettings, extend_config


def _every_setting(tmp_path: Path) -> dict[str, Any]:
    (tmp_path / "j.csv").write_text("id\n")  # an unvalidated run refuses a judgements file that is not there
    return {
        "out_dir": tmp_path / "next",
        "source": tmp_path / "bbnli",
        "fill_model": "fake",
        "top_k": 5,
        "classifiers": ["fake:a", "org/nli-b"],  # a model that loads weights: the device applies
        "compare_fill": "org/other-mlm",  # loads weights too (the fake fill takes no device)
        "holdout": "fake:h",
        "policy": "all",
        "subtopics": ["x", "y"],
        "unvalidated": True,
        "judgements": tmp_path / "j.csv",
        "templates": tmp_path / "t.jsonl",
        "derive": True,
        "cache": tmp_path / "c.sqlite",
        "device": "cpu",
    }


def test_every_setting_reaches_the_configuration(tmp_path: Path) -> None:
    settings = _every_setting(tmp_path)
    assert set(settings) == set(ExtendSettings.__annotations__)  # a new setting is tested here too
    assert set(SETTING_KEYS) == set(settings)  # and says which configuration keys it overrides
    config = extend_config(None, **settings)
    assert config.run_dir == str(tmp_path / "next") and config.source == str(tmp_path / "bbnli")
    assert config.mlm.model == "fake" and config.mlm.top_k == 5
    assert [m.model for m in config.filter.models] == ["fake:a", "org/nli-b"]
    assert config.filter.compare_fills == ["org/other-mlm"]  # one name is a list of one
    assert [m.model for m in config.filter.holdout] == ["fake:h"]
    assert config.filter.policy == "all" and config.subtopics == ["x", "y"]
    assert config.validation.unvalidated is True
    assert config.validation.judgements == str(tmp_path / "j.csv")
    assert config.templates.curated == str(tmp_path / "t.jsonl") and config.templates.derive is True
    assert config.cache == str(tmp_path / "c.sqlite")
    assert config.mlm.device == config.filter.device == "cpu"


def test_an_unset_setting_leaves_the_configurations_value() -> None:
    unset: dict[str, Any] = {
        "out_dir": None,
        "classifiers": (),
        "subtopics": [],
        "unvalidated": False,
        "derive": None,
        "device": None,
    }
    assert extend_config(None) == extend_config(None, **unset) == ExtendConfig()
    assert extend_config(None, derive=False).templates.derive is False  # False is a value here
    assert extend_config(None, templates="none", derive=True).templates.curated is None
    with pytest.raises(ConfigError, match=r"^templates 'none': no curated templates") as caught:
        extend_config(None, templates="none")  # and none derived: no masked templates at all
    assert caught.value.parameter == "templates"


def test_extend_hands_its_settings_on_whole(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import nlibias.jobs.extend

    reached: list[tuple[ExtendConfig, dict[str, Any]]] = []
    monkeypatch.setattr(
        nlibias.jobs.extend, "run_pipeline", lambda config, **kwargs: reached.append((config, kwargs))
    )
    settings = _every_setting(tmp_path)
    nlibias.extend(**settings, until="masks", progress=False)
    assert reached == [
        (
            extend_config(None, **settings),
            {"from_stage": None, "until": "masks", "progress": False, "on_stage": None, "force": False},
        )
    ]


@pytest.mark.parametrize("function", [nlibias.extend, extend_config], ids=["extend", "extend_config"])
def test_a_misspelt_setting_is_refused_naming_it(function: Any) -> None:
    with pytest.raises(ConfigError, match=r"takes no argument 'topk' \(did you mean 'top_k'\?\)") as caught:
        function(topk=5)
    assert caught.value.parameter == "topk"
    with pytest.raises(ConfigError, match=r"takes no argument 'zzz' \(it takes: config, .*top_k") as caught:
        function(zzz=1)
    assert caught.value.parameter == "zzz"


def test_a_misspelt_parameter_of_extend_is_refused_too() -> None:
    with pytest.raises(
        ConfigError, match=r"^extend takes no argument 'from_stag' \(did you mean 'from_stage'\?\)"
    ):
        nlibias.extend(from_stag="fill")  # type: ignore[call-arg]


@pytest.mark.parametrize(
    ("setting", "value", "takes"),
    [
        ("top_k", "5", "int or None"),
        ("top_k", True, "int or None"),
        ("classifiers", 3, "str or a sequence of str"),
        ("holdout", ["fake:h", 3], "str or a sequence of str"),
        ("unvalidated", "yes", "bool"),
        ("derive", "no", "bool or None"),
        ("out_dir", 1, r"a path \(a str or Path, not blank\) or None"),
        ("source", "", r"a path \(a str or Path, not blank\) or None"),
        ("templates", " ", r"a path \(a str or Path, not blank\) or None"),
        ("cache", "", r"a path \(a str or Path, not blank\) or None"),
    ],
)
@pytest.mark.parametrize("function", [nlibias.extend, extend_config], ids=["extend", "extend_config"])
def test_a_wrongly_typed_setting_is_refused_naming_it(
    function: Any, setting: str, value: Any, takes: str
) -> None:
    with pytest.raises(ConfigError, match=rf"^{setting} must be {takes}; got ") as caught:
        function(**{setting: value})
    assert caught.value.parameter == setting


def test_help_shows_every_setting_by_name() -> None:
    """help(nlibias.extend) and a notebook's signature popup name each setting, not **settings."""
    import inspect

    shown = inspect.signature(nlibias.extend).parameters
    assert set(ExtendSettings.__annotations__) <= set(shown) and "settings" not in shown
    assert repr(shown["top_k"].default) == "unset" and shown["top_k"].annotation == "int | None"
    assert "top_k" in inspect.signature(extend_config).parameters


def test_a_setting_the_file_made_is_refused_at_its_line_a_setting_given_by_its_name(tmp_path: Path) -> None:
    from nlibias.cli.extend_cmd import _source_dir
    from nlibias.errors import SourceError

    source = tmp_path / "bbnli"
    shutil.copytree(_source_dir(None), source)
    before = sorted(source.rglob("*"))
    config = tmp_path / "config.yaml"
    config.write_text(f"source: {source}\nsubtopics: [man_is_to_astronaut]\n", encoding="utf-8")
    settings: dict[str, Any] = {"fill_model": "fake", "until": "masks", "progress": False}
    with pytest.raises(SourceError, match=r"^.*config.yaml:2: subtopics 'man_is_to_astronaut': unknown"):
        nlibias.extend(config, out_dir=tmp_path / "next", **settings)
    assert not (tmp_path / "next").exists()  # refused before anything is written
    with pytest.raises(ConfigError, match=r"^subtopics 'nope': unknown subtopic") as caught:
        nlibias.extend(config, out_dir=tmp_path / "next", subtopics=["nope"], **settings)
    assert caught.value.parameter == "subtopics"  # given: named by its parameter, not the file's key
    config.write_text(f"source: {source}\nrun_dir: {source / 'next'}\n", encoding="utf-8")
    with pytest.raises(
        SourceError, match=r"config.yaml:2: run_dir .* lies inside the folder .* of the key source"
    ):
        nlibias.extend(config, **settings)
    with pytest.raises(ConfigError, match=r"^out_dir .* is the folder of parameter source") as caught:
        nlibias.extend(out_dir=source, source=source, **settings)
    assert caught.value.parameter == "out_dir" and sorted(source.rglob("*")) == before


def test_a_configuration_file_that_is_the_run_s_own_config_yaml_is_not_replaced(tmp_path: Path) -> None:
    run = tmp_path / "run"
    run.mkdir()
    config = run / "config.yaml"
    text = "# the user's notes\nsubtopics: [man_is_to_breadwinner]\n"
    config.write_text(text, encoding="utf-8")
    settings: dict[str, Any] = {"fill_model": "fake", "until": "masks", "progress": False}
    with pytest.raises(ConfigError, match=r"is the run's own config.yaml in out_dir") as caught:
        nlibias.extend(config, out_dir=run, **settings)
    assert caught.value.parameter == "config" and config.read_text(encoding="utf-8") == text
    assert sorted(p.name for p in run.iterdir()) == ["config.yaml"]  # refused before anything is written
    nlibias.extend(config, out_dir=tmp_path / "elsewhere", **settings)
    resolved = tmp_path / "elsewhere" / "config.yaml"  # the run's own, resolved file: a rerun from it is fine
    assert nlibias.extend(resolved, out_dir=tmp_path / "elsewhere", **settings).status == "stopped"
