"""What the browser tests share: where Chromium is and how it is started here.

Debian's ``chromium`` package, driven by Playwright's Python package; ``playwright install`` cannot
download browsers on these machines, and the background-networking flags keep Chromium from
trying to reach Google at start-up.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

ARTIFACTS = Path(__file__).resolve().parent / "_artifacts"
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]


def chromium_path() -> str:
    """The Chromium executable, or a skip that says how to install it."""
    path = os.environ.get("NLIBIAS_CHROMIUM") or shutil.which("chromium") or "/usr/bin/chromium"
    if not Path(path).exists():
        pytest.skip("chromium is not installed (apt-get install -y chromium)")
    return path


@contextmanager
def chromium() -> Iterator[Any]:
    """A headless Chromium driven by Playwright, closed on leaving; a skip that says what to install
    when Chromium or Playwright is missing."""
    executable = chromium_path()
    sync_api = pytest.importorskip(
        "playwright.sync_api", reason="playwright is not installed (pip install playwright)"
    )
    with sync_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=executable, args=CHROMIUM_ARGS)
        try:
            yield browser
        finally:
            browser.close()
