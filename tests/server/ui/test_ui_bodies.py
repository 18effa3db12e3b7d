"""Malformed requests to the browser UI's routes are typed 4xx pages, never server errors,
and decide nothing (a real ASGI app over a SQLite store)."""

from __future__ import annotations

import os
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from starlette.testclient import TestClient

from tests.server.ui.conftest import sign_in, start_run

FORM = {"content-type": "application/x-www-form-urlencoded"}
EXAMPLES = int(os.environ.get("WARDEN_UI_FUZZ_EXAMPLES", "60"))


def _pending(client: TestClient, run_id: str) -> bool:
    from tests.server.ui.conftest import TOKENS

    r = client.get(f"/api/suspended-runs/{run_id}", headers={"Authorization": f"Bearer {TOKENS['alice']}"})
    return r.status_code == 200


BAD_BODIES: list[tuple[bytes, dict[str, str]]] = [
    (b"\xff\xfe\x00garbage", FORM),  # not UTF-8
    (b"csrf=a&csrf=b&action=approve", FORM),  # a field twice
    ("&".join(f"f{i}=x" for i in range(500)).encode(), FORM),  # too many fields
    (b'{"action": "approve"}', {"content-type": "application/json"}),  # not a form
    (b"action=approve", {"content-type": "multipart/form-data; boundary=x"}),
    (b"%%%%=%zz&=&&&", FORM),
    (b"run=%ED%A0%80&action=approve", FORM),  # an encoded lone surrogate
    (b"", {}),
]


def test_malformed_decide_bodies_are_400_and_decide_nothing(client: TestClient) -> None:
    run_id, _ = start_run(client)
    sign_in(client)
    for body, headers in BAD_BODIES:
        r = client.post("/ui/decide", content=body, headers=headers)
        assert r.status_code in (400, 403), (body[:40], r.status_code, r.text[:300])
        assert r.headers["content-type"].startswith("text/html")
    assert _pending(client, run_id)


def test_malformed_sign_in_and_link_bodies_are_4xx(client: TestClient) -> None:
    for body, headers in BAD_BODIES:
        r = client.post("/ui/signin", content=body, headers=headers)
        assert 400 <= r.status_code < 500, (body[:40], r.status_code)
    for token in ("", "x", "a.b", "é.ü", "%00.%ff", "a" * 5000, "e30.e30"):
        r = client.get(f"/ui/links/{token}")
        assert r.status_code in (403, 404), (token[:20], r.status_code)
        r = client.post(f"/ui/links/{token}", content=b"\xff", headers=FORM)
        assert r.status_code in (403, 404, 405), (token[:20], r.status_code)


def test_unknown_ids_and_query_strings_are_4xx(client: TestClient) -> None:
    csrf = sign_in(client)
    for query in ("", "?run=nope&call=nope", "?run=&call=", "?run=%00&call=%ff", "?page=-1", "?page=zz"):
        r = client.get("/ui/call" + query)
        assert r.status_code in (400, 404, 409), (query, r.status_code)
    r = client.get("/ui/?page=zz")
    assert r.status_code == 200
    r = client.post("/ui/decide", data={"csrf": csrf, "run": "nope", "call": "nope", "action": "approve"})
    assert r.status_code == 404 and "not waiting any more" in r.text
    r = client.post("/ui/decide", data={"csrf": csrf, "run": "nope", "call": "nope", "action": "explode"})
    assert r.status_code == 400


text = st.text(st.characters(codec="utf-8"), max_size=40)


@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=list(HealthCheck), database=None)
@given(
    form=st.dictionaries(
        st.sampled_from(["csrf", "run", "call", "action", "fingerprint", "reason", "args", "f.answer", "x"]),
        text | st.sampled_from(["approve", "decline", "edit", "resume"]),
    ),
    raw=st.binary(max_size=200),
    use_raw=st.booleans(),
)
def test_fuzzed_forms_never_500(client: TestClient, form: dict[str, Any], raw: bytes, use_raw: bool) -> None:
    if not hasattr(client, "_signed"):
        client._signed = (sign_in(client), start_run(client))  # type: ignore[attr-defined]
    csrf, (run_id, call_id) = client._signed  # type: ignore[attr-defined]
    if use_raw:
        r = client.post("/ui/decide", content=raw, headers=FORM)
    else:
        # the real call's ids unless the example gives others: decisions are sometimes taken, and must not 500
        data = {"run": run_id, "call": call_id, **form, "csrf": form.get("csrf", csrf)}
        r = client.post("/ui/decide", data=data)
    assert r.status_code < 500, r.text[:500]
