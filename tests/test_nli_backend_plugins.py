"""Third-party NLI backends (entry-point group ``nlibias.nli_backends``) are plug-ins like the
benchmark ones: one that fails to load, clashes with another of its name, raises while it is
created or returns something that is not a classifier is a PluginError naming its entry point and
distribution (exit 2), not an internal error; the other backends keep working."""

from __future__ import annotations

from typing import Any

import pytest

from nlibias.errors import ConfigError, PluginError
from nlibias.models import registry
from nlibias.models.base import NLIClassifier
from nlibias.models.fake import FakeNLIClassifier


class Dist:
    def __init__(self, name: str) -> None:
        self.metadata = {"Name": name}
        self.version = "2.0"


class Entry:
    def __init__(self, name: str, load: object, dist: str) -> None:
        self.name, self.value, self.dist, self._load = name, f"{dist}.backend:Classifier", Dist(dist), load

    def load(self) -> object:
        if isinstance(self._load, Exception):
            raise self._load
        return self._load


def install(monkeypatch: pytest.MonkeyPatch, *entries: Entry) -> None:
    monkeypatch.setattr(registry, "entry_points", lambda group: list(entries))


class Mine(FakeNLIClassifier):
    def __init__(self, name: str, **options: Any) -> None:
        super().__init__(name)


def broken(name: str, **options: Any) -> Any:
    raise RuntimeError("no GPU found")


def test_a_working_backend_plugin_is_created(monkeypatch: pytest.MonkeyPatch) -> None:
    install(monkeypatch, Entry("mine", Mine, "nlibias-mine"))
    classifier = registry.create_classifier("mine:model-a")
    assert isinstance(classifier, NLIClassifier) and classifier.name == "model-a"


@pytest.mark.parametrize(
    ("load", "expected"),
    [
        (ImportError("No module named 'mine_backend'"), "failed to load: No module named 'mine_backend'"),
        (broken, "creating 'model-a' raised RuntimeError: no GPU found"),
        (lambda name, **_: object(), "does not keep the NLIClassifier contract"),
    ],
)
def test_a_broken_backend_plugin_is_its_own_fault(
    monkeypatch: pytest.MonkeyPatch, load: object, expected: str
) -> None:
    install(monkeypatch, Entry("mine", load, "nlibias-mine"))
    with pytest.raises(PluginError) as caught:
        registry.create_classifier("mine:model-a")
    assert expected in str(caught.value)
    assert "plug-in 'mine' (nlibias-mine.backend:Classifier, distribution nlibias-mine 2.0)" in str(
        caught.value
    )
    # the built-in backends do not depend on it
    assert registry.create_classifier("fake:demo").name == "demo"


def test_two_backend_plugins_of_one_name_are_refused_naming_both(monkeypatch: pytest.MonkeyPatch) -> None:
    install(monkeypatch, Entry("mine", Mine, "nlibias-mine"), Entry("mine", Mine, "other-mine"))
    with pytest.raises(PluginError) as caught:
        registry.create_classifier("mine:model-a")
    assert "distribution nlibias-mine 2.0" in str(caught.value) and "distribution other-mine 2.0" in str(
        caught.value
    )
    assert "uninstall one of them" in str(caught.value)


def test_a_backend_plugin_refusing_its_input_on_purpose_keeps_its_message(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def refuses(name: str, **_: Any) -> Any:
        raise ConfigError("model-a needs --device cuda", parameter="device")

    install(monkeypatch, Entry("mine", refuses, "nlibias-mine"))
    with pytest.raises(ConfigError, match="needs --device cuda"):
        registry.create_classifier("mine:model-a")
