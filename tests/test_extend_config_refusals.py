"""An extend configuration's values refused at the YAML line of the item at fault, with the reason."""

from __future__ import annotations

from pathlib import Path

import pytest

from nlibias.errors import SourceError
from nlibias.extension.config import load_config


def _refused(tmp_path: Path, text: str) -> str:
    path = tmp_path / "config.yaml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(SourceError) as refused:
        load_config(path)
    return str(refused.value).removeprefix(f"{path}:")


def test_a_negative_seed_is_refused_like_every_other_seed(tmp_path: Path) -> None:
    refused = _refused(tmp_path, "run_dir: x\nseed: -4\n")
    assert refused == "2: field seed: Input should be greater than or equal to 0"
