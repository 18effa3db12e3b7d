"""The browser UI in a real headless Chromium at a phone's viewport (390x844): sign-in, the
queue, approve, decline with a reason, edit then approve, the resume form, a viewer's page,
CSRF refusal and hostile arguments."""

from __future__ import annotations

import re
import uuid

from playwright.sync_api import BrowserContext, Page, expect

from tests.browser.conftest import sign_in
from tests.browser.site import PHONE, Site


def _uid() -> str:
    return uuid.uuid4().hex[:10]


def _open_call(page: Page, site: Site, run_id: str, call_id: str) -> None:
    page.goto(f"{site.url}/ui/call?run={run_id}&call={call_id}")
    expect(page.locator("#call")).to_be_visible()


def _fits_phone(page: Page) -> None:
    """Nothing wider than the phone: no sideways scrolling."""
    assert page.evaluate("document.documentElement.scrollWidth") <= PHONE["width"]


def test_sign_in_sets_a_strict_http_only_cookie(page: Page, context: BrowserContext, site: Site) -> None:
    page.goto(site.url + "/ui/")
    assert page.url.endswith("/ui/signin")
    page.fill("#token", "wdn_not-a-token")
    page.click("button[type=submit]")
    expect(page.locator(".error")).to_have_text("Unknown token.")
    assert context.cookies() == []
    sign_in(page, site, "alice")
    (cookie,) = context.cookies()
    assert cookie["name"] == "warden_session" and cookie["httpOnly"] and cookie["sameSite"] == "Strict"
    assert site.tokens["alice"] not in cookie["value"]
    expect(page.locator(".who")).to_contain_text("alice")
    assert page.evaluate("document.cookie") == ""  # HttpOnly: no script can read it
    page.click("text=Sign out")
    page.wait_for_url(site.url + "/ui/signin")
    assert context.cookies() == []
    context.add_cookies([cookie])  # a copy of the signed-out cookie opens nothing
    page.goto(site.url + "/ui/")
    assert page.url.endswith("/ui/signin")


def test_queue_lists_the_pending_call_and_refreshes(page: Page, site: Site) -> None:
    rec = _uid()
    run_id, call_id = site.start_run(f"delete rec-{rec}")
    sign_in(page, site, "alice")
    item = page.locator(".item", has_text=f"rec-{rec}")
    expect(item).to_be_visible()
    expect(item.locator(".tool")).to_have_text("delete_tool")
    expect(item.locator(".kind")).to_have_text("approval")
    expect(item.locator(".meta")).to_contain_text("agent ops")
    expect(item.locator(".meta")).to_contain_text("waiting")
    assert page.locator("meta[http-equiv=refresh]").count() == 1  # live without any script
    assert page.locator("script").count() == 0
    _fits_phone(page)
    # a call started after the page loaded appears on its own (the page refreshes itself)
    later = _uid()
    site.start_run(f"delete rec-{later}")
    expect(page.locator(".item", has_text=f"rec-{later}")).to_be_visible()
    item.locator(".tool").click()
    expect(page.locator("#fingerprint")).to_have_text(re.compile(r"^sha256:"))
    assert site.pending(run_id)
    assert call_id in page.url


def test_approve_runs_the_tool_audited_as_the_token(page: Page, site: Site) -> None:
    rec = _uid()
    run_id, call_id = site.start_run(f"delete rec-{rec}")
    sign_in(page, site, "alice")
    _open_call(page, site, run_id, call_id)
    expect(page.locator("#args")).to_contain_text(f'"id": "rec-{rec}"')
    expect(page.locator(".description")).to_have_text("Delete a record by ID")
    expect(page.locator("#request")).to_have_text(f"delete rec-{rec}")
    _fits_phone(page)
    page.locator("#approve").scroll_into_view_if_needed()
    page.click("#approve")
    expect(page.locator("#done")).to_have_text("Approved: delete_tool")
    assert not site.pending(run_id)
    (entry,) = [e for e in site.audit(run_id) if e["toolCallId"] == call_id]
    assert entry["decision"] == "approved" and entry["actor"] == "alice"
    assert any(r[1] == call_id for r in site.factory.executions("delete-record"))


def test_decline_with_a_reason(page: Page, site: Site) -> None:
    run_id, call_id = site.start_run(f"delete rec-{_uid()}")
    sign_in(page, site, "alice")
    _open_call(page, site, run_id, call_id)
    page.fill("#reason", "not this one")
    page.click("#decline")
    expect(page.locator("#done")).to_have_text("Declined: delete_tool")
    expect(page.locator("#given-reason")).to_have_text("not this one")
    (entry,) = [e for e in site.audit(run_id) if e["toolCallId"] == call_id]
    assert (entry["decision"], entry["actor"], entry["reason"]) == ("declined", "alice", "not this one")
    assert not any(r[1] == call_id for r in site.factory.executions())


def test_edit_then_approve_and_bad_json_changes_nothing(page: Page, site: Site) -> None:
    run_id, call_id = site.start_run(f"delete rec-{_uid()}")
    sign_in(page, site, "alice")
    _open_call(page, site, run_id, call_id)
    page.click("details.edit summary")
    page.fill("#args-edit", '{"id": ')
    page.click("#approve-edited")
    expect(page.locator("#error")).to_contain_text("not valid JSON")
    expect(page.locator("#args-edit")).to_have_value('{"id": ')  # the edit is kept, open, to fix
    assert site.pending(run_id)
    page.fill("#args-edit", '{"id": "edited-by-alice"}')
    page.click("#approve-edited")
    expect(page.locator("#done")).to_have_text("Approved with edited arguments: delete_tool")
    ran = [r for r in site.factory.executions("delete-record") if r[1] == call_id]
    assert [r[2] for r in ran] == ['{"id": "edited-by-alice"}']


def test_resume_form_from_the_schema(page: Page, site: Site) -> None:
    run_id, call_id = site.start_run(f"ask colour-{_uid()}?")
    sign_in(page, site, "alice")
    _open_call(page, site, run_id, call_id)
    expect(page.locator("#question")).to_contain_text("colour-")
    form = page.locator("#resume-form")
    expect(form.locator("label", has_text="Answer")).to_contain_text("*")
    page.click("#submit")  # the required field empty: the runtime's error, inline; still pending
    expect(page.locator(".field-error")).to_be_visible()
    assert site.pending(run_id)
    form.locator("input[name='f.answer']").fill("blue")
    page.click("#submit")
    expect(page.locator("#done")).to_have_text("Sent: ask_user")
    ran = [r for r in site.factory.executions("ask-user") if r[1] == call_id]
    assert [r[2] for r in ran] == ['{"answer": "blue"}']


def _csrf(page: Page) -> str:
    return str(page.locator("input[name=csrf]").first.get_attribute("value"))


def test_a_viewer_sees_no_buttons_and_a_forged_post_is_403(page: Page, site: Site) -> None:
    run_id, call_id = site.start_run(f"delete rec-{_uid()}")
    sign_in(page, site, "vic")
    _open_call(page, site, run_id, call_id)
    expect(page.locator("#read-only")).to_be_visible()
    assert page.locator("button", has_text="Approve").count() == 0
    assert page.locator("button", has_text="Decline").count() == 0
    csrf = _csrf(page)  # the viewer's own, valid token (from the sign-out form)
    r = page.request.post(
        site.url + "/ui/decide",
        form={"csrf": csrf, "run": run_id, "call": call_id, "action": "approve"},
        headers={"Origin": site.url},
    )
    assert r.status == 403 and "role viewer" in r.text()
    assert site.pending(run_id)
    assert not [e for e in site.audit(run_id) if e["toolCallId"] == call_id]


def test_a_post_without_a_valid_csrf_token_is_403(page: Page, site: Site) -> None:
    run_id, call_id = site.start_run(f"delete rec-{_uid()}")
    sign_in(page, site, "alice")
    _open_call(page, site, run_id, call_id)
    for csrf in ("", "forged", _csrf(page)[:-2] + "xx"):
        r = page.request.post(
            site.url + "/ui/decide",
            form={"csrf": csrf, "run": run_id, "call": call_id, "action": "approve"},
            headers={"Origin": site.url},
        )
        assert r.status == 403 and "CSRF" in r.text(), csrf
    # a valid token from another origin's page: refused too
    r = page.request.post(
        site.url + "/ui/decide",
        form={"csrf": _csrf(page), "run": run_id, "call": call_id, "action": "approve"},
        headers={"Origin": "http://evil.example"},
    )
    assert r.status == 403
    assert site.pending(run_id)
    assert not [e for e in site.audit(run_id) if e["toolCallId"] == call_id]


HOSTILE = "<script>alert(1)</script><img src=x onerror=alert(2)>\x1b]0;PWNED\x07\u202eevil\u200bzw"


def test_hostile_arguments_run_no_script_and_show_escapes(page: Page, site: Site) -> None:
    run_id, call_id = site.start_run(f"delete {HOSTILE}")
    sign_in(page, site, "alice")
    watch = page.watch  # type: ignore[attr-defined]
    item = page.locator(".item", has=page.locator(".warn"))
    expect(item.first).to_be_visible()
    _open_call(page, site, run_id, call_id)
    args = page.locator("#args")
    text = args.inner_text()
    assert "<script>alert(1)</script>" in text and "<img src=x onerror=alert(2)>" in text
    for escape in ("\\u001b", "\\u0007", "\\u202e", "\\u200b"):
        assert escape in text, escape
    assert not any(ch in text for ch in "\x1b\x07\u202e\u200b")
    assert args.locator(".esc").count() == 4
    expect(page.locator("#hidden-warning")).to_contain_text("hidden/control character")
    request = page.locator("#request").inner_text()
    assert "\\x1b" in request and "\\u202e" in request and "\x1b" not in request
    assert page.locator("script").count() == 0 and page.locator("img").count() == 0
    assert page.title() == "delete_tool · Warden"
    _fits_phone(page)
    assert watch.dialogs == [] and watch.errors == []
    headers = page.request.get(page.url).headers
    assert "default-src 'none'" in headers["content-security-policy"]
    assert "frame-ancestors 'none'" in headers["content-security-policy"]
    assert headers["x-frame-options"] == "DENY"


def test_a_deadline_shows_the_time_left(page: Page, site: Site) -> None:
    rec = _uid()
    run_id, call_id = site.start_run(f"delete rec-{rec}", approvalTimeout=7200)
    sign_in(page, site, "alice")
    expect(page.locator(".item", has_text=f"rec-{rec}").locator(".deadline")).to_have_text("deadline 1h left")
    _open_call(page, site, run_id, call_id)
    expect(page.locator("#deadline")).to_contain_text("1h left")
    expect(page.locator("#deadline")).to_contain_text("UTC")


def test_an_input_request_can_be_declined_with_a_reason(page: Page, site: Site) -> None:
    run_id, call_id = site.start_run(f"ask size-{_uid()}?")
    sign_in(page, site, "alice")
    _open_call(page, site, run_id, call_id)
    page.fill("#reason", "cannot answer that")
    page.click("#decline")
    expect(page.locator("#done")).to_have_text("Declined: ask_user")
    (entry,) = [e for e in site.audit(run_id) if e["toolCallId"] == call_id]
    assert (entry["decision"], entry["actor"], entry["reason"]) == ("declined", "alice", "cannot answer that")
    assert not [r for r in site.factory.executions("ask-user") if r[1] == call_id]
