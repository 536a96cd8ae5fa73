"""An audit in a notebook, executed headless (nbclient) on a fake model: the first thing shown is
the verdict, and no cell prints a warning (tqdm's "IProgress not found" box where ipywidgets is
not installed) or a library's bar beside the audit's."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from test_progress import _samples

nbclient = pytest.importorskip("nbclient")  # the dev extra's; the kernel is ipykernel
nbformat = pytest.importorskip("nbformat")


def _outputs(cell: dict) -> list[dict]:
    return list(cell.get("outputs") or [])


def test_a_notebook_shows_the_verdict_first_and_no_warning(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    samples = _samples(tmp_path)  # 4 pairs
    cells = [
        "import warnings\nwarnings.simplefilter('always')\nimport nlibias",
        f"result = nlibias.audit({str(samples)!r}, models=['fake:a'], cache=False, bootstrap=50)\nresult",
        "result.summary()",
    ]
    notebook = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(c) for c in cells])
    # the kernel is a child process: it reads this checkout's package, as the tests do
    src = str(Path(__file__).parents[1] / "src")
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([src, os.environ.get("PYTHONPATH", "")]))
    client = nbclient.NotebookClient(
        notebook, timeout=600, kernel_name="python3", resources={"metadata": {"path": str(tmp_path)}}
    )
    client.execute()
    audit_cell, summary_cell = notebook.cells[1], notebook.cells[2]
    texts = [
        o.get("text", "") + json.dumps(o.get("data", {})) for cell in notebook.cells for o in _outputs(cell)
    ]
    assert not any("Warning" in t or "IProgress" in t or "Loading weights" in t for t in texts), texts
    streams = [o for o in _outputs(audit_cell) if o["output_type"] == "stream"]
    assert {o["name"] for o in streams} == {"stderr"}
    redraws = [d for d in "".join(o["text"] for o in streams).replace("\n", "\r").split("\r") if d.strip()]
    assert all(d.startswith("audit") for d in redraws), redraws  # one bar, as plain text
    assert "8/8" in redraws[-1]  # 4 pairs, both samples of each
    shown = next(o for o in _outputs(audit_cell) if o["output_type"] == "execute_result")
    html = shown["data"]["text/html"]
    assert html.index("<table") < html.index("AuditResult of")  # the verdict before what was audited
    assert "text-align: left" in html
    frame_html = next(o for o in _outputs(summary_cell) if o["output_type"] == "execute_result")["data"]
    header = frame_html["text/html"].split("<th>", 2)[2]
    assert header.startswith("verdict")  # the first column after the index
