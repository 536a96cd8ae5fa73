"""The annotation app in headless Chromium: keyboard answers, going back, reload, two annotators.

Needs the Debian ``chromium`` package and the ``playwright`` Python package (skips with the reason
when either is missing), plus fastapi/uvicorn. Saves a screenshot to tests/_artifacts/validation.png.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from nlibias.validation.app import AppSettings
from nlibias.validation.store import AnnotationStore, Suggestion
from sample_queue import write_sample_queue

pytest.importorskip("fastapi", reason="the app needs fastapi (pip install -e .[validate])")
pytest.importorskip("uvicorn", reason="the app needs uvicorn (pip install -e .[validate])")
from browser_support import ARTIFACTS, CHROMIUM_ARGS, chromium_path
from test_validation_app import running_app

# Written on every run; docs/validation-screenshot.png is a copy of one of these.
SCREENSHOT = ARTIFACTS / "validation.png"


def test_annotate_with_keyboard_back_reload_and_two_annotators(tmp_path: Path) -> None:
    executable = chromium_path()
    sync_api = pytest.importorskip(
        "playwright.sync_api", reason="playwright is not installed (pip install playwright)"
    )
    run_dir = tmp_path / "run"
    queue = write_sample_queue(run_dir)
    ids = [row.hypothesis_id for row in queue]
    store = AnnotationStore.for_run(run_dir)
    store.put_suggestions(
        [Suggestion(ids[0], "nli:demo", "valid", "pro", 0.81, {"reason": "same meaning as the original"})]
    )
    errors: list[str] = []
    with (
        running_app(run_dir, AppSettings(break_minutes=40)) as base,
        sync_api.sync_playwright() as playwright,
    ):
        browser = playwright.chromium.launch(executable_path=executable, args=CHROMIUM_ARGS)
        try:
            ana = browser.new_context(viewport={"width": 1000, "height": 760}).new_page()
            ana.on("pageerror", lambda exc: errors.append(str(exc)))
            ana.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
            ana.goto(base + "/?annotator=ana")
            ana.wait_for_selector("#main:not([hidden])")
            assert ana.text_content("#meta").startswith("#1 of 6")
            # blurred until revealed; the hint is shown but nothing is preselected
            hypothesis = ana.locator("#hypothesis")
            assert "blur" in hypothesis.evaluate("el => getComputedStyle(el).filter")
            assert "nli:demo: valid · pro" in ana.text_content("#hint")
            assert ana.locator("button.chosen").count() == 0
            ana.keyboard.press("r")
            ana.wait_for_function(
                "() => getComputedStyle(document.getElementById('hypothesis')).filter === 'none'"
            )

            def answered(n: int) -> None:
                ana.wait_for_function(
                    f"() => document.getElementById('progress-text').textContent.startsWith('{n} /')"
                )

            ana.keyboard.press("v")  # valid → the pro/anti step opens, same item
            ana.wait_for_selector("#step-stereotype.active")
            ana.keyboard.press("p")  # pro → next item
            answered(1)
            ana.keyboard.press("i")  # item 2 invalid → next
            answered(2)
            ana.keyboard.press("c")  # item 3 incoherent → item 4
            answered(3)
            assert ana.text_content("#meta").startswith("#4 of 6")
            # go back to item 2 and change invalid → valid / anti
            ana.keyboard.press("ArrowLeft")
            ana.keyboard.press("ArrowLeft")
            assert ana.text_content("#meta").startswith("#2 of 6")
            assert ana.locator("button.chosen").text_content().strip().endswith("invalid")
            ana.keyboard.press("v")
            ana.wait_for_selector("#step-stereotype.active")
            ana.keyboard.press("a")
            ana.wait_for_function("() => document.getElementById('meta').textContent.startsWith('#3 of 6')")
            current = AnnotationStore.for_run(run_dir).current()
            assert (current[ids[1]]["ana"].category, current[ids[1]]["ana"].stereotype) == ("valid", "anti")
            # reload: the answers are kept and the page resumes at the first unanswered item
            ana.reload()
            ana.wait_for_selector("#main:not([hidden])")
            assert ana.text_content("#meta").startswith("#4 of 6")
            assert ana.text_content("#progress-text").startswith("3 / 6")
            ana.keyboard.press("ArrowLeft")
            ana.keyboard.press("ArrowLeft")
            chosen = [b.get_attribute("data-label") for b in ana.locator("button.chosen").all()]
            assert chosen == ["valid", "anti"]

            # a second annotator at the same time, in another browser context
            ben = browser.new_context(viewport={"width": 1000, "height": 700}).new_page()
            ben.on("pageerror", lambda exc: errors.append(str(exc)))
            ben.goto(base + "/")
            ben.wait_for_selector("#login:not([hidden])")
            ben.fill("#login-name", "ben")
            ben.keyboard.press("Enter")
            ben.wait_for_selector("#main:not([hidden])")
            assert ben.text_content("#progress-text").startswith("0 / 6")
            ben.keyboard.press("i")
            ben.wait_for_function(
                "() => document.getElementById('progress-text').textContent.startsWith('1 /')"
            )
            current = AnnotationStore.for_run(run_dir).current()
            assert current[ids[0]]["ana"].category == "valid" and current[ids[0]]["ben"].category == "invalid"

            assert errors == [], f"page errors: {errors}"
            # annotator input is data, never HTML (the 400 it gets is expected)
            ana.goto(base + "/?annotator=%3Cimg%20src%3Dx%3E")
            ana.wait_for_selector("#login-error:not(:empty)")
            assert ana.locator("img").count() == 0
            errors.clear()

            # the screenshot for the docs: item 1 with its hint, revealed
            shot = browser.new_context(viewport={"width": 1000, "height": 720}).new_page()
            shot.goto(base + "/?annotator=ana")
            shot.wait_for_selector("#main:not([hidden])")
            shot.keyboard.press("ArrowLeft")
            shot.keyboard.press("ArrowLeft")
            shot.keyboard.press("ArrowLeft")
            shot.keyboard.press("r")
            shot.wait_for_function(
                "() => getComputedStyle(document.getElementById('hypothesis')).filter === 'none'"
            )
            SCREENSHOT.parent.mkdir(exist_ok=True)
            shot.screenshot(path=str(SCREENSHOT))
        finally:
            browser.close()
    assert errors == [], f"page errors: {errors}"
    assert SCREENSHOT.stat().st_size > 10_000


def test_break_reminder_appears(tmp_path: Path) -> None:
    executable = chromium_path()
    sync_api = pytest.importorskip(
        "playwright.sync_api", reason="playwright is not installed (pip install playwright)"
    )
    run_dir = tmp_path / "run"
    write_sample_queue(run_dir)
    # 0.03 minutes = 1.8 s
    with (
        running_app(run_dir, AppSettings(annotator="ana", break_minutes=0.03)) as base,
        sync_api.sync_playwright() as pw,
    ):
        browser = pw.chromium.launch(executable_path=executable, args=CHROMIUM_ARGS)
        try:
            page = browser.new_page()
            page.goto(base + "/")
            page.wait_for_selector("#break:not([hidden])", timeout=8000)
            page.keyboard.press("v")  # keys are ignored while the reminder is up
            assert AnnotationStore.for_run(run_dir).current() == {}
            page.click("#break-done")
            page.wait_for_selector("#break[hidden]", state="attached")
        finally:
            browser.close()
