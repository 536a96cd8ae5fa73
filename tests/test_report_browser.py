"""The HTML report in headless Chromium: opens offline, no console errors, blur reveals on click.

Needs the Debian ``chromium`` package (/usr/bin/chromium) and the ``playwright`` Python package;
skips with the reason when either is missing. Saves a screenshot to tests/_artifacts/report.png.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from browser_support import ARTIFACTS, chromium
from nlibias.report.html import write_report
from nlibias.report.load import load_runs
from nlibias.testing.report_runs import build_bbnli_run, build_extension_run


@pytest.fixture(scope="module")
def report_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    pytest.importorskip("matplotlib", reason="figures need matplotlib (pip install -e .[report])")
    root = tmp_path_factory.mktemp("browser")
    runs = load_runs([build_bbnli_run(root), build_extension_run(root)])
    out = root / "report.html"
    write_report(runs, out)
    return out


def test_report_opens_offline_without_errors(report_file: Path) -> None:

    blocked: list[str] = []
    errors: list[str] = []
    with chromium() as browser:
        page = browser.new_page(viewport={"width": 1000, "height": 1300})

        def guard(route: object) -> None:
            url = route.request.url  # type: ignore[attr-defined]
            if url.startswith(("file://", "data:")):
                route.continue_()  # type: ignore[attr-defined]
            else:
                blocked.append(url)
                route.abort()  # type: ignore[attr-defined]

        page.route("**/*", guard)
        page.on("console", lambda message: errors.append(message.text) if message.type == "error" else None)
        page.on("pageerror", lambda exc: errors.append(str(exc)))
        page.goto(report_file.as_uri(), wait_until="load")

        # Every figure decoded (an inline SVG that failed to parse has naturalWidth 0).
        widths = page.eval_on_selector_all("img", "imgs => imgs.map(i => i.naturalWidth)")
        assert widths and all(w > 0 for w in widths)

        # Offensive text is blurred until clicked.
        first = page.locator(".sensitive").first
        assert "blur" in first.evaluate("el => getComputedStyle(el).filter")
        first.click()
        assert "revealed" in (first.get_attribute("class") or "")
        page.wait_for_function(
            "el => getComputedStyle(el).filter === 'none'", arg=first.element_handle(), timeout=2000
        )
        assert page.locator("#funnel").count() == 1 and page.locator("#card").count() == 1

        ARTIFACTS.mkdir(exist_ok=True)
        page.goto(report_file.as_uri() + "#accuracy", wait_until="load")
        page.screenshot(path=str(ARTIFACTS / "report.png"), full_page=False)
    assert blocked == [], f"the report tried to reach the network: {blocked}"
    assert errors == [], f"console errors: {errors}"
    assert (ARTIFACTS / "report.png").stat().st_size > 10_000


@pytest.mark.parametrize(("width", "height"), [(1280, 800), (390, 844)])
def test_report_fits_the_window_and_wide_tables_scroll_in_their_box(
    report_file: Path, width: int, height: int
) -> None:
    """At a desktop and a phone window the page never scrolls sideways: every table sits in a box
    with overflow-x:auto; the verdict comes first and is whole in the first screen, every number
    of it visible, the caveats right after it (#39)."""
    with chromium() as browser:
        page = browser.new_page(viewport={"width": width, "height": height})
        page.goto(report_file.as_uri(), wait_until="load")
        overflow = page.evaluate(
            "document.documentElement.scrollWidth - document.documentElement.clientWidth"
        )
        assert overflow <= 0, f"the page scrolls sideways by {overflow} px at {width} px"
        outside = page.eval_on_selector_all(
            "table",
            "ts => ts.filter(t => !t.parentElement.classList.contains('table-wrap')"
            " || getComputedStyle(t.parentElement).overflowX !== 'auto').length",
        )
        assert outside == 0
        order = page.eval_on_selector_all("section", "s => s.map(x => x.id)")
        assert order[:2] == ["verdict", "caveats"]  # 28 + extension samples: the few-samples caveat
        assert order[-1] == "provenance"
        assert "samples were audited" in page.inner_text("#caveats")
        # The verdict table, every cell of it, lies inside the first screen.
        box = page.locator("#verdict table").bounding_box()
        assert box is not None and box["y"] + box["height"] <= height, box
        cells = page.eval_on_selector_all(
            "#verdict td",
            "cs => cs.map(c => { const r = c.getBoundingClientRect();"
            " return [r.left, r.right, r.bottom, c.innerText]; })",
        )
        outside = [c for c in cells if c[0] < 0 or c[1] > width or c[2] > height]
        assert cells and outside == [], outside
        # The provenance is collapsed at the end: its tables take no room until opened.
        assert page.locator("#provenance details").get_attribute("open") is None
        ARTIFACTS.mkdir(exist_ok=True)
        page.screenshot(path=str(ARTIFACTS / f"report-{width}.png"), full_page=False)


def test_on_a_phone_the_first_numbers_show_and_model_keys_break_only_at_separators(report_file: Path) -> None:
    """At 390 px the first numeric column of every scrolling table starts on screen (a long
    model key in the first column pushed them off it), and a model key never breaks mid-word."""
    with chromium() as browser:
        page = browser.new_page(viewport={"width": 390, "height": 844})
        page.goto(report_file.as_uri(), wait_until="load")
        starts = page.eval_on_selector_all(
            ".table-wrap table:not(.verdict):not(.stack) tbody tr:first-child",
            "rs => rs.filter(r => r.offsetParent !== null && r.querySelector('td.num'))"
            ".map(r => [r.querySelector('td.num').getBoundingClientRect().left, r.innerText.slice(0, 40)])",
        )
        assert starts and [s for s in starts if s[0] >= 390] == [], starts
        styles = page.eval_on_selector_all(
            ".model-key",
            "ks => ks.map(k => getComputedStyle(k).wordBreak + ' ' + getComputedStyle(k).overflowWrap)",
        )
        assert styles and set(styles) == {"keep-all normal"}, styles


def test_on_a_phone_the_heat_map_keeps_its_labels_at_9_pt(report_file: Path) -> None:
    """At 390 px the heat map is its phone variant, as wide as the screen: its 9 pt labels show
    at 9 pt or more (12 CSS px); the wide one, shrunk to the screen, showed them at about 4 pt.
    At 1280 px the wide one shows."""
    shown = (
        "ps => ps.map(p => {const img = p.querySelector('img'); const src = p.querySelector('source');"
        " return [img.currentSrc === src.srcset, img.clientWidth / img.naturalWidth];})"
    )
    with chromium() as browser:
        for width, phone in ((390, True), (1280, False)):
            page = browser.new_page(viewport={"width": width, "height": 844})
            page.goto(report_file.as_uri(), wait_until="load")
            found = page.eval_on_selector_all("#heatmap picture", shown)
            assert found and {is_phone for is_phone, _ in found} == {phone}, (width, found)
            if phone:  # 9 pt at the figure's own size is 12 CSS px, times the scale it shows at
                assert min(12 * scale for _, scale in found) >= 12, found
