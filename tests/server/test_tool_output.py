"""tool-output chunks (ctx.writer) through a real server process: raw SSE (camelCase) and the client SDK."""

from __future__ import annotations

from agent_core.chunks import ToolOutputPayload
from tests.server.helpers import TOKEN, raw, sse_post, types
from warden_client import WardenClient


async def test_tool_output_over_sse_and_the_client_sdk(server):
    with raw(server.url) as c:
        r, chunks = sse_post(c, "/api/agents/ops/stream", {"messages": "progress report"})
        assert r.status_code == 200, r.text
    outs = [ch for ch in chunks if ch["type"] == "tool-output"]
    assert [o["payload"]["data"] for o in outs] == [
        {"stage": "fetching", "q": "report"},
        {"stage": "done", "percent": 100},
    ]
    assert set(outs[0]["payload"]) == {"toolCallId", "toolName", "data", "agentPath"}
    assert outs[0]["payload"]["toolName"] == "progress" and outs[0]["payload"]["agentPath"] == ["ops"]
    assert types(chunks).index("tool-output") < types(chunks).index("tool-result")

    async with WardenClient(server.url, token=TOKEN) as client:
        stream = await client.agent("ops").stream("progress sdk")
        got = [ch async for ch in stream.full_stream]
    outs_sdk = [ch for ch in got if ch.type == "tool-output"]
    assert len(outs_sdk) == 2 and all(isinstance(ch.payload, ToolOutputPayload) for ch in outs_sdk)
    assert outs_sdk[0].payload.data == {"stage": "fetching", "q": "sdk"}
    assert outs_sdk[0].payload.tool_call_id == next(ch for ch in got if ch.type == "tool-call").payload.tool_call_id
    assert stream.status == "finished"
