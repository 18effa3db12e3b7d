"""Raw-HTTP helpers for the server tests (no client SDK)."""

from __future__ import annotations

import json
from typing import Any

import httpx

TOKEN = "test-token-0123456789"


def auth(token: str = TOKEN) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def raw(url: str, token: str | None = TOKEN) -> httpx.Client:
    return httpx.Client(base_url=url, headers=auth(token) if token else {}, timeout=60)


def parse_sse(text: str) -> list[dict[str, Any]]:
    """Parse a body exactly as ``@mastra/client-js`` does: events split on ``\\n\\n``, each
    ``data: <json>``, the last one ``data: [DONE]``; comment-only events (pings) are skipped.
    Asserts the framing is exactly that."""
    assert text.endswith("\n\n"), f"SSE body must end with a blank line: {text[-50:]!r}"
    blocks = text.split("\n\n")[:-1]
    chunks: list[dict[str, Any]] = []
    done = False
    for block in blocks:
        if block.startswith(":"):
            continue
        assert not done, "event after [DONE]"
        assert block.startswith("data: ") and "\n" not in block, f"bad SSE event {block!r}"
        data = block[len("data: ") :]
        if data == "[DONE]":
            done = True
            continue
        chunks.append(json.loads(data))
    assert done, "stream did not end with data: [DONE]"
    return chunks


def sse_post(client: httpx.Client, path: str, body: Any) -> tuple[httpx.Response, list[dict[str, Any]]]:
    r = client.post(path, json=body, headers={"Accept": "text/event-stream"})
    if r.status_code != 200:
        return r, []
    assert r.headers["content-type"].startswith("text/event-stream")
    return r, parse_sse(r.text)


def types(chunks: list[dict[str, Any]]) -> list[str]:
    return [c["type"] for c in chunks]


def first(chunks: list[dict[str, Any]], type_: str) -> dict[str, Any]:
    for c in chunks:
        if c["type"] == type_:
            return c
    raise AssertionError(f"no {type_} chunk in {types(chunks)}")


def error_of(r: httpx.Response) -> dict[str, Any]:
    body = r.json()
    assert set(body) == {"error"}, body
    assert isinstance(body["error"]["code"], str) and isinstance(body["error"]["message"], str)
    return body["error"]
