"""Where models run, declared once (schema/placement.py): a device and a Ray address, held to one
rule on every route (ModelOptions and nlibias.audit, the sharded and Ray classifiers, extend's YAML,
export_lm_eval, $NLIBIAS_DEVICE), and the environment variables read up front."""

from __future__ import annotations

from pathlib import Path

import pytest

from nlibias.errors import ConfigError, SourceError
from nlibias.extension.config import load_config
from nlibias.models.hf_common import choose_device
from nlibias.runtime.build import build_predictors
from nlibias.runtime.options import ModelOptions
from nlibias.schema.placement import device_name, ray_address


@pytest.mark.parametrize("device", ["cpu", "cuda", "cuda:0", "cuda:12", "mps", "auto"])
def test_the_devices_torch_spells_are_devices(device: str) -> None:
    assert device_name(device) == device


@pytest.mark.parametrize(
    "device", ["tpu", "cuda:-1", "cuda:01", "cuda:", "cuda:1:2", "CPU", "cpu ", " cuda", "", "mps:0"]
)
def test_anything_else_is_refused_by_the_one_rule(device: str) -> None:
    with pytest.raises(ValueError, match="use cpu, cuda, cuda:N or mps"):
        device_name(device)


@pytest.mark.parametrize(
    "address", ["local", "auto", "10.0.0.1:6379", "head:6379", "ray://head:10001", "[::1]:6379"]
)
def test_ray_addresses_ray_connects_to(address: str) -> None:
    assert ray_address(address) == address


@pytest.mark.parametrize(
    "address",
    [
        "maybe",
        "head",
        "head:",
        "head:0",
        "head:70000",
        "http://head:1",
        "ray://head",
        "head:1/x",
        " auto",
        "",
    ],
)
def test_anything_else_is_not_a_ray_address(address: str) -> None:
    with pytest.raises(ValueError, match="not a Ray address"):
        ray_address(address)


def test_model_options_hold_every_device_and_the_ray_address_to_the_rules() -> None:
    assert ModelOptions(devices=("cpu", "cpu")).devices == (
        "cpu",
        "cpu",
    )  # two workers on one device (docs/scaling.md)
    for settings, name in [
        ({"devices": ("cpu", "tpu")}, "devices"),
        ({"devices": ("",)}, "devices"),
        ({"device": "cuda:-1"}, "device"),
        ({"ray_address": "maybe"}, "ray_address"),
    ]:
        with pytest.raises(ConfigError) as caught:
            ModelOptions.of(**settings)
        assert caught.value.parameter == name, caught.value


def test_the_variable_is_read_through_the_rule_before_any_model(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("NLIBIAS_DEVICE", "cpu ")
    with pytest.raises(ConfigError, match="NLIBIAS_DEVICE is 'cpu ', a device with spaces") as caught:
        build_predictors(["fake:m"])  # the fake reads no device: the value is checked all the same
    assert caught.value.parameter == "NLIBIAS_DEVICE"
    with pytest.raises(ConfigError, match="NLIBIAS_DEVICE is 'cpu '"):
        choose_device(None)
    monkeypatch.setenv("NLIBIAS_DEVICE", "")  # empty: unset
    assert choose_device(None) in ("cpu", "cuda")
    with pytest.raises(ConfigError, match="device is 'cuda:-1', an unknown device"):
        choose_device("cuda:-1")


def test_a_device_in_extend_yaml_is_held_to_the_same_rule(tmp_path: Path) -> None:
    config = tmp_path / "extend.yaml"
    config.write_text("mlm:\n  device: cuda:-1\n")
    with pytest.raises(SourceError, match="an unknown device") as caught:
        load_config(config)
    assert "mlm.device" in str(caught.value) and str(config) in str(caught.value)


def test_export_lm_eval_refuses_an_unknown_device_before_loading(tmp_path: Path) -> None:
    import nlibias

    with pytest.raises(ConfigError) as caught:
        nlibias.export_lm_eval(tmp_path / "samples", tmp_path / "task", device="tpu")
    assert caught.value.parameter == "device"


def test_allow_modified_data_is_checked_whenever_data_is_looked_for(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from nlibias.benchmarks.bbnli_source import BBNLI_DATA
    from nlibias.benchmarks.data_locations import resolve_data

    (tmp_path / "own").mkdir()
    monkeypatch.setenv("NLIBIAS_ALLOW_MODIFIED_DATA", "enable")
    with pytest.raises(ConfigError, match="NLIBIAS_ALLOW_MODIFIED_DATA is 'enable'"):
        resolve_data(BBNLI_DATA, tmp_path / "own")  # the user's own copy: nothing pinned is compared


def test_doctor_reports_the_data_dirs_nlibias_looks_in(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from nlibias.benchmarks.data_locations import candidate_data_dirs
    from nlibias.jobs.doctor import environment_report

    for named, problem in [(tmp_path / "nowhere", "missing"), (tmp_path / "a-file", "a file, not a folder")]:
        if problem.startswith("a file"):
            named.write_text("x")
        monkeypatch.setenv("NLIBIAS_DATA_DIR", str(named))
        dirs = environment_report(device=False)["data_dirs"]
        assert [(d["where"], d["path"]) for d in dirs] == [(w, str(p)) for w, p in candidate_data_dirs()]
        assert dirs[0]["where"] == "NLIBIAS_DATA_DIR" and dirs[0]["path"] == str(named)
        assert (dirs[0]["problem"] or "").startswith(problem) and dirs[-1]["problem"] is None


def test_doctor_reads_allow_modified_data_as_expand_does(monkeypatch: pytest.MonkeyPatch) -> None:
    """A value every expand refuses is reported with expand's own refusal (and the command warns)."""
    from nlibias.jobs.doctor import environment_report

    for value, allowed in (("1", True), ("off", False)):
        monkeypatch.setenv("NLIBIAS_ALLOW_MODIFIED_DATA", value)
        info = environment_report(device=False)["modified_data"]
        assert (info["value"], info["allowed"], info["problem"]) == (value, allowed, None)
    monkeypatch.setenv("NLIBIAS_ALLOW_MODIFIED_DATA", "maybe")
    info = environment_report(device=False)["modified_data"]
    assert info["allowed"] is None and info["problem"] == (
        "NLIBIAS_ALLOW_MODIFIED_DATA is 'maybe'; set it to 1 (use modified data) or 0"
    )
