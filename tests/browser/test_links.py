"""Signed approval links, every case in a real headless Chromium: the webhook body's links,
a GET that only shows, the POST that decides (audited as the link actor), and used, already
decided, stale-fingerprint (409), expired (410) and tampered (403) links deciding nothing."""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterator
from datetime import datetime

import pytest
from playwright.sync_api import Page, expect

from agent_core.approval_links import LinkSigner
from tests.browser.conftest import sign_in
from tests.browser.site import WAIT_GUARD_SECONDS, WEBHOOK_SECRET, Site, start_site

ACTOR = "pager-duty"


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Site]:
    s = start_site(tmp_path_factory.mktemp("links-site"), link_actor=ACTOR)
    yield s
    s.factory.stop_all()
    s.receiver.close()


def _pending_call(site: Site) -> tuple[str, str, dict[str, str]]:
    run_id, call_id = site.start_run(f"delete rec-{uuid.uuid4().hex[:10]}")
    body = site.receiver.body_for(call_id)
    return run_id, call_id, body["links"]


def _decisions(site: Site, run_id: str, call_id: str) -> list[dict[str, str]]:
    return [e for e in site.audit(run_id) if e["toolCallId"] == call_id and e["decision"] != "notification-failed"]


def test_the_webhook_carries_three_signed_links(site: Site) -> None:
    _, _, links = _pending_call(site)
    assert sorted(links) == ["approve", "decline", "view"]
    assert all(url.startswith(site.url + "/ui/links/") for url in links.values())
    assert len(set(links.values())) == 3


def test_a_get_only_shows_then_the_post_decides_once(page: Page, site: Site) -> None:
    run_id, call_id, links = _pending_call(site)
    page.goto(links["view"])
    expect(page.locator("#tool")).to_have_text("delete_tool")
    expect(page.locator("#view-only")).to_be_visible()
    assert page.locator("button").count() == 0
    page.goto(links["approve"])  # what a link previewer does: nothing is decided
    page.goto(links["approve"])
    expect(page.locator("#args")).to_contain_text("rec-")
    assert site.pending(run_id) and not _decisions(site, run_id, call_id)
    page.click("#confirm")
    expect(page.locator("#done")).to_have_text("Approved: delete_tool")
    ((entry,)) = _decisions(site, run_id, call_id)
    assert (entry["decision"], entry["actor"]) == ("approved", ACTOR)
    assert any(r[1] == call_id for r in site.factory.executions("delete-record"))
    # used: the same link again, and its sibling
    for url in (links["approve"], links["decline"]):
        response = page.goto(url)
        assert response is not None and response.status == 409
        expect(page.locator("#reason")).to_contain_text("this link was already used")
    r = page.request.post(links["approve"], form={})
    assert r.status == 409
    assert len(_decisions(site, run_id, call_id)) == 1


def test_decline_link_with_a_reason(page: Page, site: Site) -> None:
    run_id, call_id, links = _pending_call(site)
    page.goto(links["decline"])
    page.fill("#reason", "from my phone: no")
    page.click("#confirm")
    expect(page.locator("#done")).to_have_text("Declined: delete_tool")
    ((entry,)) = _decisions(site, run_id, call_id)
    assert (entry["decision"], entry["actor"], entry["reason"]) == ("declined", ACTOR, "from my phone: no")


def test_a_call_decided_elsewhere_is_409(page: Page, site: Site) -> None:
    run_id, call_id, links = _pending_call(site)
    page.goto(links["approve"])  # the confirm page is open ...
    other = page.context.new_page()
    sign_in(other, site, "alice")  # ... when alice declines from the UI
    other.goto(f"{site.url}/ui/call?run={run_id}&call={call_id}")
    other.click("#decline")
    expect(other.locator("#done")).to_have_text("Declined: delete_tool")
    page.click("#confirm")
    expect(page.locator("#reason")).to_contain_text("already decided (declined) by alice")
    assert page.title().startswith("Link used up")
    assert [e["actor"] for e in _decisions(site, run_id, call_id)] == ["alice"]


def test_stale_fingerprint_is_409(page: Page, site: Site) -> None:
    run_id, call_id, _ = _pending_call(site)
    signer = LinkSigner(WEBHOOK_SECRET, site.url)
    stale = signer.links(run_id, call_id, "sha256:" + "0" * 64)["approve"]
    response = page.goto(stale)
    assert response is not None and response.status == 409
    expect(page.locator("#reason")).to_contain_text("stale fingerprint")
    assert page.request.post(stale, form={}).status == 409
    assert site.pending(run_id) and not _decisions(site, run_id, call_id)


def test_expired_link_is_410(page: Page, site: Site) -> None:
    run_id, call_id, _ = _pending_call(site)
    signer = LinkSigner(WEBHOOK_SECRET, site.url)
    fingerprint = site.receiver.body_for(call_id)["fingerprint"]
    token = signer.token("approve", run_id, call_id, fingerprint, deadline=time.time() - 1)
    expired = site.url + "/ui/links/" + token
    response = page.goto(expired)
    assert response is not None and response.status == 410
    expect(page.locator("#reason")).to_contain_text("expired")
    assert page.request.post(expired, form={}).status == 410
    assert site.pending(run_id) and not _decisions(site, run_id, call_id)


def test_a_link_with_the_call_deadline_expires_with_it(page: Page, site: Site) -> None:
    run_id, call_id = site.start_run(f"delete rec-{uuid.uuid4().hex[:10]}", approvalTimeout=1)
    body = site.receiver.body_for(call_id)
    token = body["links"]["approve"].rsplit("/", 1)[1]
    claims = LinkSigner(WEBHOOK_SECRET, site.url).verify(token, now=0)
    assert claims.expires_at == int(datetime.fromisoformat(body["expiresAt"]).timestamp())  # the call's deadline
    guard = time.monotonic() + WAIT_GUARD_SECONDS
    while time.monotonic() < guard and page.goto(body["links"]["approve"]).status != 410:  # type: ignore[union-attr]
        time.sleep(0.2)
    expect(page.locator("#reason")).to_contain_text("expired")
    assert not [e for e in _decisions(site, run_id, call_id) if e["decision"] == "approved"]


def test_tampered_link_is_403(page: Page, site: Site) -> None:
    run_id, call_id, links = _pending_call(site)
    url = links["approve"]
    payload, mac = url.rsplit("/", 1)[1].split(".")
    flipped = mac[:-1] + ("A" if mac[-1] != "A" else "B")
    for bad in (f"{payload}.{flipped}", f"{payload[:-1]}x.{mac}", "garbage", f"{payload}."):
        response = page.goto(site.url + "/ui/links/" + bad)
        assert response is not None and response.status == 403, bad
        expect(page.locator("#reason")).to_contain_text("not valid")
        assert page.request.post(site.url + "/ui/links/" + bad, form={}).status == 403
    forged = LinkSigner("another-secret", site.url).links(run_id, call_id, "sha256:x")["approve"]
    assert page.goto(forged).status == 403  # type: ignore[union-attr]
    assert site.pending(run_id) and not _decisions(site, run_id, call_id)


def test_an_input_request_gets_no_links_and_a_forged_one_decides_nothing(page: Page, site: Site) -> None:
    run_id, call_id = site.start_run(f"ask colour-{uuid.uuid4().hex[:6]}?")
    body = site.receiver.body_for(call_id)
    assert body["kind"] == "suspend" and "links" not in body
    forged = LinkSigner(WEBHOOK_SECRET, site.url).links(run_id, call_id, body["fingerprint"])["approve"]
    response = page.goto(forged)
    assert response is not None and response.status == 409
    expect(page.locator("#reason")).to_contain_text("not waiting for an approval")
    assert page.request.post(forged, form={}).status == 409
    assert site.pending(run_id) and not _decisions(site, run_id, call_id)
