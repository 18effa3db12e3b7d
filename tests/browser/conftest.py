"""Fixtures: one headless Chromium (Debian's, through Playwright) and one real server per module."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from playwright.sync_api import Browser, BrowserContext, Page, expect, sync_playwright

from tests.browser.site import CHROMIUM, CHROMIUM_ARGS, PHONE, WAIT_GUARD_SECONDS, Site, start_site

# The machine is shared and loaded: Playwright's 5 s default for assertions is raised, never lowered.
expect.set_options(timeout=WAIT_GUARD_SECONDS * 1000)


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
        yield b
        b.close()


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Site]:
    s = start_site(tmp_path_factory.mktemp("ui-site"))
    yield s
    s.factory.stop_all()
    s.receiver.close()


class Watch:
    """What a page did that it must not: dialogs opened (``alert``), page errors, CSP reports."""

    def __init__(self, page: Page) -> None:
        self.dialogs: list[str] = []
        self.errors: list[str] = []
        self.console: list[str] = []
        page.on("dialog", self._dialog)
        page.on("pageerror", lambda e: self.errors.append(str(e)))
        page.on("console", lambda m: self.console.append(m.text))

    def _dialog(self, dialog: Any) -> None:
        self.dialogs.append(dialog.message)
        dialog.dismiss()


@pytest.fixture
def context(browser: Browser) -> Iterator[BrowserContext]:
    ctx = browser.new_context(viewport=PHONE, device_scale_factor=1, is_mobile=True, has_touch=True)
    ctx.set_default_timeout(WAIT_GUARD_SECONDS * 1000)
    ctx.set_default_navigation_timeout(WAIT_GUARD_SECONDS * 2000)
    yield ctx
    ctx.close()


@pytest.fixture
def page(context: BrowserContext) -> Page:
    p = context.new_page()
    p.watch = Watch(p)  # type: ignore[attr-defined]
    return p


def sign_in(page: Page, site: Site, who: str) -> None:
    page.goto(site.url + "/ui/")
    assert page.url.endswith("/ui/signin")
    page.fill("#token", site.tokens[who])
    page.click("button[type=submit]")
    page.wait_for_url(site.url + "/ui/")
