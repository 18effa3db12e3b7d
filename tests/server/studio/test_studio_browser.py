"""Mastra's own browser UI drives a Warden server: the real ``mastra studio`` (npm ``mastra``,
pinned in ``js/package.json`` + ``package-lock.json``) in Debian's headless Chromium (Playwright),
against ``warden serve`` with the demo agents, a token and ``--cors-origin``.

Studio lists the agents, chats with ``ops``, approves one gated call and declines a second
one in the same thread (their tool-call ids differ, so Studio keeps two cards); the store
and the audit log say what happened. Nothing leaves loopback: Studio's telemetry is off and
every other request is refused (the test fails on any but the provider logo Studio loads
from models.dev). ``make test`` installs Studio
(``make studio-js``) and Chromium (``make chromium``); outside CI a missing one skips the
test, in CI it fails.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlsplit

import httpx
import pytest
from playwright.sync_api import expect

from tests.browser.site import CHROMIUM, CHROMIUM_ARGS
from tests.server.helpers import TOKEN, raw
from warden_demo.records import list_records, records_path
from warden_server.tokens import SINGLE_TOKEN_NAME

HERE = Path(__file__).resolve().parent
JS = HERE / "js"
MASTRA = JS / "node_modules" / ".bin" / "mastra"
READY = "Warden server listening on "
LOGOS = "https://models.dev/logos/"
# Safety nets against a process or a page that never comes (not assertions about speed).
START_GUARD_SECONDS = 120
UI_TIMEOUT_MS = 90_000
SCREENSHOTS_ENV = "WARDEN_STUDIO_SCREENSHOTS"  # a directory: the test also saves its screenshots there
#: Studio's chat shows this above the prompt when ``GET /api/editor/builder/settings`` fails.
POLICY_NOTICE = "Unable to verify model policy"
BUILDER_SETTINGS = "/api/editor/builder/settings"

# ``page.set_default_timeout`` covers actions, not assertions: ``expect`` kept Playwright's 5 s
# default here (unless tests/browser's conftest had raised it), and on a loaded machine Studio's
# first page (a large bundle) or a streamed answer took longer. Every wait below is on a
# condition; this is its guard, raised as tests/browser does, never lowered.
expect.set_options(timeout=UI_TIMEOUT_MS)


def _require(what: str, ok: bool) -> None:
    if ok:
        return
    if os.environ.get("CI"):
        pytest.fail(f"the Studio browser test cannot run in CI: {what}")
    pytest.skip(what)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _warden_serve(db: Path, origin: str, log: Path) -> tuple[subprocess.Popen[str], str]:
    """``warden serve`` (the installed command) on the demo agents, any free port."""
    warden = Path(sys.executable).with_name("warden")
    env = dict(os.environ, WARDEN_DEMO_DELAY="0")
    env.pop("WARDEN_API_TOKEN", None)
    args = [str(warden), "serve", "--db", str(db), "--port", "0", "--token", TOKEN, "--cors-origin", origin]
    proc = subprocess.Popen(args, env=env, stdout=subprocess.PIPE, stderr=log.open("a"), text=True, bufsize=1)
    guard = threading.Timer(START_GUARD_SECONDS, proc.kill)
    guard.start()
    url = ""
    try:
        assert proc.stdout is not None
        for line in proc.stdout:
            if line.startswith(READY):
                url = line[len(READY) :].strip()
                break
    finally:
        guard.cancel()
    if not url:
        proc.kill()
        raise RuntimeError(f"warden serve did not start:\n{log.read_text()}")
    threading.Thread(target=lambda: [None for _ in proc.stdout or ()], daemon=True).start()
    return proc, url


def _mastra_studio(port: int, server_port: int, log: Path) -> subprocess.Popen[bytes]:
    env = dict(os.environ, MASTRA_TELEMETRY_DISABLED="1", DO_NOT_TRACK="1")
    args = [str(MASTRA), "studio", "--port", str(port), "--server-host", "localhost", "--server-port", str(server_port)]
    proc = subprocess.Popen(args, cwd=JS, env=env, stdout=log.open("ab"), stderr=subprocess.STDOUT)
    deadline = time.monotonic() + START_GUARD_SECONDS
    while time.monotonic() < deadline:
        try:
            if httpx.get(f"http://localhost:{port}/", timeout=5).status_code == 200:
                return proc
        except httpx.HTTPError:
            pass
        if proc.poll() is not None:
            break
        time.sleep(0.5)
    proc.kill()
    raise RuntimeError(f"mastra studio did not start:\n{log.read_text(errors='replace')}")


def _stop(proc: subprocess.Popen[object]) -> None:
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


@pytest.fixture
def studio(tmp_path: Path) -> Iterator[tuple[str, str, Path]]:
    """(Studio's URL, Warden's URL, the demo store's path)."""
    _require(f"{MASTRA} is missing: run `make studio-js`", MASTRA.exists() and shutil.which("node") is not None)
    _require(f"{CHROMIUM} is missing: run `make chromium`", os.access(CHROMIUM, os.X_OK))
    port = _free_port()
    origin = f"http://localhost:{port}"
    db = tmp_path / "warden.db"
    server, url = _warden_serve(db, origin, tmp_path / "warden.log")
    try:
        ui = _mastra_studio(port, urlsplit(url).port or 0, tmp_path / "studio.log")
        try:
            yield origin, url, db
        finally:
            _stop(ui)
    finally:
        _stop(server)


def _shot(page, tmp_path: Path, name: str) -> None:
    page.screenshot(path=str(tmp_path / name))
    target = os.environ.get(SCREENSHOTS_ENV)
    if target:
        shutil.copy(tmp_path / name, Path(target) / name)


def test_mastra_studio_chats_approves_and_declines(studio, tmp_path):
    from playwright.sync_api import sync_playwright

    origin, url, db = studio
    outside: list[str] = []
    failures: list[str] = []
    settings_answers: list[int] = []  # the status of each of Studio's reads of the builder settings

    def on_response(response) -> None:
        if urlsplit(response.url).path == BUILDER_SETTINGS:
            settings_answers.append(response.status)

    def only_loopback(route) -> None:
        host = urlsplit(route.request.url).hostname
        if host in ("localhost", "127.0.0.1"):
            route.continue_()
        else:
            outside.append(route.request.url)
            route.abort()

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            page = browser.new_page(viewport={"width": 1400, "height": 900})
            page.set_default_timeout(UI_TIMEOUT_MS)
            page.route("**/*", only_loopback)
            page.on("pageerror", lambda e: failures.append(str(e)))
            page.on("response", on_response)
            page.goto(f"{origin}/?auth_header=Bearer%20{TOKEN}")

            # the agents page lists Warden's demo agents
            expect(page.get_by_text("Ops agent").first).to_be_visible()
            expect(page.get_by_text("Supervisor").first).to_be_visible()
            # the Provider column: each agent's model provider (from GET /api/agents), with its model id
            page.get_by_role("button", name="Show model details for Ops agent").click()
            model = page.get_by_role("dialog")
            expect(model.get_by_text("Model")).to_be_visible()
            expect(model.get_by_text("demo", exact=True)).to_have_count(2)  # provider "demo", model id "demo"
            _shot(page, tmp_path, "studio-agents.png")
            page.keyboard.press("Escape")
            expect(model).to_be_hidden()

            page.get_by_text("Ops agent").first.click()
            box = page.get_by_placeholder("Enter your message...")
            box.fill("delete record abc-123")
            box.press("Enter")
            approve = page.get_by_role("button", name="Approve")
            expect(approve).to_have_count(1)
            expect(page.get_by_text("I will delete record abc-123.")).to_be_visible()
            # the chat has asked for the builder's model policy (events are dispatched only inside
            # Playwright's calls: nothing is missed between the check and the wait) and was answered,
            # so no "Unable to verify model policy" notice (Studio shows it once its retries failed)
            if not settings_answers:
                page.wait_for_event("response", lambda r: urlsplit(r.url).path == BUILDER_SETTINGS)
            assert set(settings_answers) == {200}, settings_answers
            expect(page.get_by_text(POLICY_NOTICE)).to_have_count(0)
            _shot(page, tmp_path, "studio-approval.png")
            assert "abc-123" in list_records(records_path(db))  # gated: nothing ran yet
            approve.click()
            expect(page.get_by_text("Done: delete_record returned deleted=True, record_id=abc-123")).to_be_visible()
            expect(page.get_by_role("button", name="Approve")).to_have_count(0)
            _shot(page, tmp_path, "studio-approved.png")

            # a second gated call in the same thread: its own card, declined
            box.fill("delete record abc-124")
            box.press("Enter")
            decline = page.get_by_role("button", name="Decline")
            expect(decline).to_have_count(1)
            expect(page.get_by_text('"record_id": "abc-124"')).to_be_visible()
            expect(page.get_by_text('"record_id": "abc-123"').first).to_be_visible()  # the first card kept
            decline.click()
            expect(page.get_by_text("I did not run delete_record: the operator declined.")).to_be_visible()
            _shot(page, tmp_path, "studio-declined.png")

            # an input request (suspend()): Studio 1.31 shows the tool's question, no form to answer it
            box.fill("what's the weather")
            box.press("Enter")
            expect(page.get_by_text("Suspend payload")).to_be_visible()
            expect(page.get_by_text("Which city should I get the weather for?")).to_be_visible()
            expect(page.get_by_role("button", name="Approve")).to_have_count(1)  # the declined card's, no new one
        finally:
            browser.close()

    # Studio's one request outside loopback is a model provider's logo (it shows a placeholder when
    # the image fails); it was refused above like anything else would be.
    unexpected = [u for u in outside if not u.startswith(LOGOS)]
    assert unexpected == [], f"Studio tried to leave loopback: {unexpected}"
    assert failures == [], f"errors in Studio's page: {failures}"
    # every read answered (a failed one, retried by Studio, ends in the notice)
    assert settings_answers and set(settings_answers) == {200}, settings_answers
    records = list_records(records_path(db))
    assert "abc-123" not in records and "abc-124" in records
    with raw(url) as c:
        # ... so the operator answers it elsewhere: here Warden's resume-stream (the console and
        # `warden runs resume` do the same)
        [run] = c.get("/api/suspended-runs").json()["runs"]
        [call] = run["toolCalls"]
        assert call["toolName"] == "get_weather" and call["requiresApproval"] is False
        r = c.post(
            "/api/agents/ops/resume-stream",
            json={"runId": run["runId"], "toolCallId": call["toolCallId"], "resumeData": {"city": "Paris"}},
        )
        assert r.status_code == 200 and '"finishReason":"stop"' in r.text.replace(" ", "")
        entries = c.get("/api/audit").json()["entries"]
        assert c.get("/api/suspended-runs").json()["total"] == 0
    decided = [(e["decision"], e["actor"]) for e in entries if e["toolName"] == "delete_record"]
    assert decided == [("approved", SINGLE_TOKEN_NAME), ("declined", SINGLE_TOKEN_NAME)]
    calls = [e["toolCallId"] for e in entries if e["toolName"] == "delete_record"]
    assert len(set(calls)) == 2  # one thread, two calls, two ids
