"""Every settings object a user can build by hand (options, gate rules, an extend configuration,
the validation app's settings) refuses a bad value as our ConfigError naming the field, by one
mechanism (``schema/settings.Settings``), while a file's reader keeps pydantic's error for its line."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from pydantic import BaseModel, ValidationError

from nlibias.errors import ConfigError, SourceError
from nlibias.extension import config as extend_config
from nlibias.extension.config import ExtendConfig, FilterConfig
from nlibias.jobs.gate_rules import GateRules, MeasureRule, parse_rules
from nlibias.runtime.options import ModelOptions, RunOptions
from nlibias.schema.settings import Settings
from nlibias.validation.app import AppSettings

NAN, INF = float("nan"), float("inf")


@pytest.mark.parametrize(
    ("build", "parameter", "message"),
    [
        (
            lambda: GateRules(confidence=NAN),
            "confidence",
            "confidence is nan; pass a finite float more than 0",
        ),
        (lambda: GateRules(confidence=1.0), "confidence", "confidence is 1.0; pass a finite float"),
        (lambda: GateRules(bootstrap=True), "bootstrap", "bootstrap is True; pass a number of resamples"),
        (lambda: GateRules(seed=-1), "seed", "seed is -1; pass an integer from 0 to 2**63 - 1"),
        (lambda: GateRules(slices=[]), "slices", "slices is []: name at least one slice"),
        (lambda: GateRules(confidenc=0.9), "confidenc", "GateRules takes no argument 'confidenc' (did you"),
        (
            lambda: GateRules(measures={"bbnli_bias_score": {"margin": INF}}),
            "measures",
            "measures.bbnli_bias_score.margin: Input should be a finite number",
        ),
        (
            lambda: GateRules(measures={"bbnli_bias_score": {"margins": 1}}),
            "measures",
            "measures.bbnli_bias_score.margins: unknown key",
        ),
        (
            lambda: MeasureRule(max_abs=-1),
            "max_abs",
            "max_abs is -1; pass a finite number of 0 or more points",
        ),
        (lambda: ExtendConfig(seed=-1), "seed", "seed is -1; pass an integer from 0 to 2**63 - 1"),
        (
            lambda: ExtendConfig(mlm={"top_k": 0}),
            "mlm",
            "mlm.top_k: Input should be greater than or equal to 1",
        ),
        (lambda: ExtendConfig(run_dir=" "), "run_dir", "run_dir is ' ': ' ' is empty: a blank path"),
        (lambda: FilterConfig(policy="bogus"), None, "FilterConfig: unknown filter policy 'bogus'"),
        (
            lambda: AppSettings(break_minutes=NAN),
            "break_minutes",
            "break_minutes is nan; pass a finite float",
        ),
        (
            lambda: ModelOptions(max_tokens=0),
            "max_tokens",
            "max_tokens is 0; pass a positive number of tokens",
        ),
        (
            lambda: GateRules(bootstrap=10**12),
            "bootstrap",
            "bootstrap is 1000000000000; pass a number of resamples from 1 to 1,000,000",
        ),
        (
            lambda: RunOptions(bootstrap=38),
            "bootstrap",
            "bootstrap is 38; pass 0 (no intervals) or 39 or more",
        ),
    ],
)
def test_a_hand_built_settings_object_refuses_a_bad_value_naming_the_field(
    build: Callable[[], object], parameter: str | None, message: str
) -> None:
    with pytest.raises(ConfigError) as caught:
        build()
    assert caught.value.parameter == parameter and message in str(caught.value), str(caught.value)


def test_every_settings_object_a_user_builds_is_one_of_ours() -> None:
    sections = [
        value
        for value in vars(extend_config).values()
        if isinstance(value, type)
        and issubclass(value, BaseModel)
        and value.__module__ == extend_config.__name__
    ]
    assert ExtendConfig in sections and len(sections) >= 6, sections
    for model in [GateRules, MeasureRule, ModelOptions, RunOptions, AppSettings, *sections]:
        assert issubclass(model, Settings), model


def test_a_file_reader_still_names_the_file_and_line() -> None:
    """``model_validate`` (a rules file, an extend YAML) keeps pydantic's error, with its location."""
    with pytest.raises(ValidationError):
        GateRules.model_validate({"confidence": NAN})
    with pytest.raises(SourceError, match=r"gate\.yaml:2: field measures\.bbnli_bias_score\.margin"):
        parse_rules("measures:\n  bbnli_bias_score: {margin: .inf}\n", "gate.yaml")


def test_resamples_stop_at_a_million_on_every_route() -> None:
    assert RunOptions(bootstrap=1_000_000).bootstrap == GateRules(bootstrap=1_000_000).bootstrap == 1_000_000
    with pytest.raises(SourceError, match=r"gate\.yaml:1: field bootstrap: .*less than or equal to 1000000"):
        parse_rules("bootstrap: 1000001\n", "gate.yaml")
