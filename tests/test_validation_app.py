"""The annotation app at the HTTP level: token, host check, strict bodies, committed answers.

Runs a real uvicorn server on a free port in a background thread (needs fastapi and uvicorn:
``pip install -e .[validate]``; skipped with the reason when they are missing).
"""

from __future__ import annotations

import json
import socket
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from nlibias.extension.validation_handoff import read_queue
from nlibias.validation.address import check_bind
from nlibias.validation.app import AppSettings, create_app
from nlibias.validation.store import AnnotationStore
from sample_queue import write_sample_queue

pytest.importorskip("fastapi", reason="the app needs fastapi (pip install -e .[validate])")
uvicorn = pytest.importorskip("uvicorn", reason="the app needs uvicorn (pip install -e .[validate])")

TOKEN = "a-long-enough-test-token-123"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@contextmanager
def running_app(run_dir: Path, settings: AppSettings) -> Iterator[str]:
    """Serve ``create_app(run_dir, settings)`` on 127.0.0.1:<free port>; yields the base URL."""
    port = free_port()
    server = uvicorn.Server(
        uvicorn.Config(create_app(run_dir, settings), host="127.0.0.1", port=port, log_level="warning")
    )
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 10
    while not server.started:
        if time.monotonic() > deadline:
            raise RuntimeError("the server did not start")
        time.sleep(0.02)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout=10)


def call(
    url: str, body: Any = None, headers: dict[str, str] | None = None
) -> tuple[int, Any, dict[str, str]]:
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(
        url, data=data, headers={"Content-Type": "application/json", **(headers or {})}
    )
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            raw = response.read()
            kind = response.headers.get("content-type", "")
            return (
                response.status,
                json.loads(raw) if "json" in kind else raw.decode(),
                dict(response.headers),
            )
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read() or b"null"), dict(error.headers)


@pytest.fixture
def run_dir(tmp_path: Path) -> Path:
    write_sample_queue(tmp_path / "run")
    return tmp_path / "run"


def test_token_required_on_every_request(run_dir: Path) -> None:
    with running_app(run_dir, AppSettings(token=TOKEN, loopback_only=False)) as base:
        for path in ("/", "/static/app.js", "/api/config", "/api/items?annotator=ana"):
            assert call(base + path)[0] == 401, path
            assert call(base + path, headers={"X-Nlibias-Token": "wrong-token-wrong-token"})[0] == 401, path
        assert call(base + "/api/config", headers={"X-Nlibias-Token": TOKEN})[0] == 200
        assert call(base + "/api/config", headers={"Authorization": f"Bearer {TOKEN}"})[0] == 200
        status, _page, headers = call(base + f"/?token={TOKEN}")
        assert status == 200 and "nlibias_token=" in headers.get("set-cookie", "")
        assert "httponly" in headers["set-cookie"].lower()
        assert call(base + "/api/config", headers={"Cookie": f"nlibias_token={TOKEN}"})[0] == 200


def test_binding_beyond_localhost_always_gets_a_token() -> None:
    assert check_bind("127.0.0.1", None) is None
    assert check_bind("localhost", None) is None
    generated = check_bind("0.0.0.0", None)
    assert generated and len(generated) >= 20
    assert check_bind("192.168.1.5", TOKEN) == TOKEN
    with pytest.raises(Exception, match="at least 16"):
        check_bind("0.0.0.0", "short")


def test_api_commits_answers_and_validates_bodies(run_dir: Path) -> None:
    hid = read_queue(run_dir / "validation/queue.csv")[0].hypothesis_id
    with running_app(run_dir, AppSettings()) as base:
        status, page, headers = call(base + "/")
        assert status == 200 and "<title>nlibias" in page
        assert "default-src 'none'" in headers["content-security-policy"]
        answer = {"hypothesis_id": hid, "annotator": "ana", "round": "category", "label": "valid"}
        assert call(base + "/api/answer", {**answer, "round": "stereotype", "label": "pro"})[0] == 409
        status, body, _ = call(base + "/api/answer", answer)
        assert status == 200 and body["answer"] == {"category": "valid", "stereotype": None}
        status, body, _ = call(base + "/api/answer", {**answer, "round": "stereotype", "label": "anti"})
        assert (
            body["answer"] == {"category": "valid", "stereotype": "anti"}
            and body["progress"]["complete"] == 1
        )
        assert call(base + "/api/answer", {**answer, "extra": 1})[0] == 422  # extra="forbid"
        assert call(base + "/api/answer", {**answer, "label": "pro"})[0] == 422  # pro is no category
        assert call(base + "/api/answer", {**answer, "label": "<b>x</b>"})[0] == 422
        assert call(base + "/api/answer", {**answer, "annotator": "../etc"})[0] == 422
        assert call(base + "/api/answer", {**answer, "hypothesis_id": "hnotinqueue00"})[0] == 404
        assert call(base + "/api/items")[0] == 400  # no annotator
        # the answer is on disk already (committed), seen by an independent store object
        assert AnnotationStore.for_run(run_dir).current()[hid]["ana"].stereotype == "anti"
        # path traversal attempts hit no file (fixed routes only)
        assert call(base + "/static/../validation/annotations.sqlite")[0] == 404
        assert call(base + "/static/%2e%2e/app.py")[0] == 404
        # a DNS-rebinding page reaches the loopback server with a foreign Host header: refused
        assert call(base + "/api/config", headers={"Host": "evil.example:80"})[0] == 403


def test_server_with_a_fixed_annotator_refuses_others(run_dir: Path) -> None:
    with running_app(run_dir, AppSettings(annotator="ana")) as base:
        assert call(base + "/api/items")[1]["annotator"] == "ana"
        assert call(base + "/api/items?annotator=ben")[0] == 403


def test_a_killed_server_loses_no_answer(run_dir: Path) -> None:
    # `nlibias validate serve` in its own process; every answer is committed before the reply,
    # so a SIGKILL right after the reply loses nothing.
    import os
    import signal
    import subprocess
    import sys

    hids = [row.hypothesis_id for row in read_queue(run_dir / "validation/queue.csv")][:3]
    port = free_port()
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "nlibias.cli.main",
            "validate",
            "serve",
            str(run_dir),
            "--annotator",
            "ana",
            "--port",
            str(port),
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env={**os.environ},
    )
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                if call(base + "/api/config")[0] == 200:
                    break
            except OSError:
                pass
            if time.monotonic() > deadline or process.poll() is not None:
                raise RuntimeError("the server did not start")
            time.sleep(0.1)
        for hid, label in zip(hids, ("valid", "invalid", "incoherent"), strict=True):
            answer = {"hypothesis_id": hid, "annotator": "ana", "round": "category", "label": label}
            assert call(base + "/api/answer", answer)[0] == 200
    finally:
        process.send_signal(signal.SIGKILL)
        process.wait()
    current = AnnotationStore.for_run(run_dir).current()
    assert [current[h]["ana"].category for h in hids] == ["valid", "invalid", "incoherent"]


# -- hardening (#19.6): body limit, no echo, full-match names, Origin check, token in the URL ---


def raw_exchange(base: str, request: bytes, *, then: bytes = b"") -> tuple[int, bytes]:
    """Send a raw HTTP request, optionally more bytes after reading nothing; the status and body.

    A server that waited for a body it was promised would time out here (socket timeout 10 s)."""
    host, port = base.removeprefix("http://").split(":")
    with socket.create_connection((host, int(port)), timeout=10) as sock:
        sock.sendall(request)
        if then:
            sock.sendall(then)
        data = b""
        while b"\r\n\r\n" not in data or len(data) < _expected_length(data):
            chunk = sock.recv(65536)
            if not chunk:
                break
            data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    return int(head.split()[1]), body


def _expected_length(data: bytes) -> int:
    head, _, _ = data.partition(b"\r\n\r\n")
    for line in head.split(b"\r\n")[1:]:
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length":
            return len(head) + 4 + int(value)
    return 1 << 62  # read to the end


def test_an_announced_oversized_body_is_refused_before_it_is_read(run_dir: Path) -> None:
    with running_app(run_dir, AppSettings()) as base:
        head = (
            "POST /api/answer HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
            f"Content-Length: {300 * 1024 * 1024}\r\nConnection: close\r\n\r\n"
        ).encode()
        # 300 MB announced, nothing sent: the refusal comes without waiting for the body
        status, body = raw_exchange(base, head)
        assert status == 413 and b"64 kB" in body
        # exactly the limit is read and answered (an invalid body, but read: 422, not 413)
        at_limit = head.replace(str(300 * 1024 * 1024).encode(), str(64 * 1024).encode())
        assert raw_exchange(base, at_limit, then=b" " * (64 * 1024))[0] == 422


def test_a_streamed_oversized_body_is_refused_and_a_small_one_passes(run_dir: Path) -> None:
    hid = read_queue(run_dir / "validation/queue.csv")[0].hypothesis_id
    answer = {"hypothesis_id": hid, "annotator": "ana", "round": "category", "label": "valid"}

    def chunked(payload: bytes, size: int = 4096) -> bytes:
        parts = [payload[i : i + size] for i in range(0, len(payload), size)]
        return b"".join(b"%x\r\n%s\r\n" % (len(p), p) for p in parts) + b"0\r\n\r\n"

    head = (
        b"POST /api/answer HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
        b"Transfer-Encoding: chunked\r\nConnection: close\r\n\r\n"
    )
    with running_app(run_dir, AppSettings()) as base:
        big = json.dumps({**answer, "pad": "x" * (65 * 1024)}).encode()  # no Content-Length: counted
        status, _ = raw_exchange(base, head, then=chunked(big))
        assert status == 413
        status, body = raw_exchange(base, head, then=chunked(json.dumps(answer).encode()))
        assert status == 200 and json.loads(body)["answer"]["category"] == "valid"


def test_validation_errors_do_not_echo_the_input(run_dir: Path) -> None:
    hid = read_queue(run_dir / "validation/queue.csv")[0].hypothesis_id
    marker = "ECHO-ME-" + "y" * 2000
    with running_app(run_dir, AppSettings()) as base:
        for body in (
            {"hypothesis_id": hid, "annotator": "ana", "round": "category", "label": marker},
            {"hypothesis_id": hid, "annotator": "ana", "round": "category", "label": "valid", marker: 1},
            [marker],
        ):
            status, detail, _ = call(base + "/api/answer", body)
            assert status == 422 and "ECHO-ME" not in json.dumps(detail), detail
            assert detail["detail"] and all({"loc", "msg"} <= set(d) for d in detail["detail"])
        request = urllib.request.Request(
            base + "/api/answer", data=b'{"label": "ECHO-ME', headers={"Content-Type": "application/json"}
        )
        with pytest.raises(urllib.error.HTTPError) as error:
            urllib.request.urlopen(request, timeout=10)
        assert error.value.code == 422 and b"ECHO-ME" not in error.value.read()


@pytest.mark.parametrize("name", ["ana\n", "ana\r\n", " ana", "ana ", "an\na"])
def test_annotator_names_must_match_in_full(run_dir: Path, name: str) -> None:
    from urllib.parse import quote

    from nlibias.errors import ConfigError
    from nlibias.validation.store import check_annotator

    hid = read_queue(run_dir / "validation/queue.csv")[0].hypothesis_id
    answer = {"hypothesis_id": hid, "annotator": name, "round": "category", "label": "valid"}
    with running_app(run_dir, AppSettings()) as base:
        assert call(base + "/api/answer", answer)[0] in (400, 422)
        assert call(base + "/api/items?annotator=" + quote(name))[0] == 400
    with pytest.raises(ConfigError):
        check_annotator(name)
    with pytest.raises(ConfigError):
        AnnotationStore.for_run(run_dir).record(hid, name, "category", "valid")
    assert AnnotationStore.for_run(run_dir).current() == {}  # no look-alike annotator was stored


def test_state_changing_requests_from_a_foreign_origin_are_refused(run_dir: Path) -> None:
    hid = read_queue(run_dir / "validation/queue.csv")[0].hypothesis_id
    answer = {"hypothesis_id": hid, "annotator": "ana", "round": "category", "label": "valid"}
    with running_app(run_dir, AppSettings()) as base:
        foreign = [
            {"Origin": "http://evil.example"},
            {"Origin": "null"},
            {"Origin": base.replace("127.0.0.1", "localhost")},  # another origin, same machine
            {"Origin": base + "0"},  # another port
            {"Referer": "http://evil.example/page"},  # no Origin: the Referer decides
        ]
        for headers in foreign:
            status, detail, _ = call(base + "/api/answer", answer, headers=headers)
            assert status == 403 and "origin" in json.dumps(detail).lower(), headers
        assert AnnotationStore.for_run(run_dir).current() == {}
        assert call(base + "/api/answer", answer, headers={"Origin": base})[0] == 200
        assert call(base + "/api/answer", answer, headers={"Referer": base + "/?x=1"})[0] == 200
        assert call(base + "/api/answer", answer)[0] == 200  # no browser, no Origin: not a CSRF
        # reading stays open to the page's own requests whatever their Origin header says
        assert call(base + "/api/config", headers={"Origin": "http://evil.example"})[0] == 200


def test_the_token_in_the_url_opens_the_page_but_never_authorises_a_post(run_dir: Path) -> None:
    hid = read_queue(run_dir / "validation/queue.csv")[0].hypothesis_id
    answer = {"hypothesis_id": hid, "annotator": "ana", "round": "category", "label": "valid"}
    with running_app(run_dir, AppSettings(token=TOKEN, loopback_only=False)) as base:
        assert call(base + f"/api/answer?token={TOKEN}", answer)[0] == 401
        assert AnnotationStore.for_run(run_dir).current() == {}
        assert call(base + f"/?token={TOKEN}")[0] == 200  # the link the CLI prints
        assert call(base + "/api/answer", answer, headers={"X-Nlibias-Token": TOKEN})[0] == 200
        assert call(base + "/api/answer", answer, headers={"Cookie": f"nlibias_token={TOKEN}"})[0] == 200
