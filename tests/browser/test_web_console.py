"""``warden web``: the console in a browser through textual-serve. It starts, serves its page,
refuses a public address without a token, and with a token lets in only whoever shows it;
in Chromium the page opens a websocket on which the console process draws its screen."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from playwright.sync_api import Browser

from tests.browser.site import WAIT_GUARD_SECONDS, free_port
from tests.server.procs import REPO

WEB_TOKEN = "web-token-0123456789abcdef"
#: the ``warden`` entry point installed beside this Python (``make install``)
WARDEN = Path(sys.executable).with_name("warden")


def _warden(*args: str, db: Path) -> subprocess.Popen[str]:
    env = {k: v for k, v in os.environ.items() if k not in ("WARDEN_DB", "WARDEN_WEB_TOKEN", "WARDEN_API_TOKEN")}
    env["PYTHONPATH"] = str(REPO)
    return subprocess.Popen(
        [str(WARDEN), "--db", str(db), *args],  # the console's store, given to `warden`, reaches each tab
        cwd=REPO,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )


def _wait_up(url: str, proc: subprocess.Popen[str]) -> None:
    guard = time.monotonic() + WAIT_GUARD_SECONDS
    while time.monotonic() < guard and proc.poll() is None:
        try:
            httpx.get(url, timeout=5)
            return
        except httpx.TransportError:
            time.sleep(0.1)
    raise AssertionError(f"warden web did not start (exit {proc.poll()})")


@pytest.fixture(scope="module")
def web_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("web") / "warden.db"


@pytest.fixture(scope="module")
def web(web_db: Path) -> Iterator[str]:
    db = web_db
    port = free_port()
    proc = _warden("web", "--port", str(port), "--web-token", WEB_TOKEN, db=db)
    threading.Thread(target=lambda: proc.stdout and proc.stdout.read(), daemon=True).start()
    url = f"http://127.0.0.1:{port}"
    try:
        _wait_up(url, proc)
        yield url
    finally:
        proc.terminate()
        proc.wait(timeout=60)


def test_a_public_address_without_a_token_is_refused(tmp_path: Path) -> None:
    proc = _warden("web", "--host", "0.0.0.0", "--port", str(free_port()), db=tmp_path / "w.db")
    out, _ = proc.communicate(timeout=120)
    assert proc.returncode == 2 and "without a token" in out


def test_only_the_token_opens_the_page(web: str) -> None:
    assert httpx.get(web + "/").status_code == 401
    assert httpx.get(web + "/?token=wrong").status_code == 401
    assert httpx.get(web + "/ws").status_code == 401
    with httpx.Client(base_url=web, follow_redirects=True) as client:
        r = client.get(f"/?token={WEB_TOKEN}")  # redirected: the token leaves the address bar
        assert r.status_code == 200 and str(r.url) == web + "/"
        assert "ws://" in r.text and "/ws" in r.text
        (cookie,) = client.cookies.jar
        assert cookie.name == "warden_web" and WEB_TOKEN not in str(cookie.value)


def test_the_console_draws_in_chromium(browser: Browser, web: str, web_db: Path) -> None:
    page = browser.new_page(viewport={"width": 1000, "height": 700})
    page.set_default_navigation_timeout(WAIT_GUARD_SECONDS * 2000)
    frames: list[str] = []
    page.on("websocket", lambda ws: ws.on("framereceived", lambda f: frames.append(str(f))))
    page.goto(f"{web}/?token={WEB_TOKEN}")
    guard = time.monotonic() + WAIT_GUARD_SECONDS
    while time.monotonic() < guard and not any("Warden" in f or "pending" in f.lower() for f in frames):
        page.wait_for_timeout(200)
    assert frames, "the console sent nothing over the websocket"
    assert any("Warden" in f or "pending" in f.lower() for f in frames)
    guard = time.monotonic() + WAIT_GUARD_SECONDS
    while time.monotonic() < guard and not web_db.exists():  # the console opened the store `warden --db` named
        page.wait_for_timeout(200)
    assert web_db.exists()
    page.close()
