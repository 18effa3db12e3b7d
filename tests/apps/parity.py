"""A runtime for the cross-process tests of hooks, ctx.writer, tool_call_concurrency and output_schema.

``python -m tests.apps.parity start PROMPT`` starts a run (``output_schema=Answer``,
``tool_call_concurrency=1``) that suspends, and prints one JSON line. The model:
first a gated ``delete`` (prompt "approve") or a suspending ``ask`` (prompt
"suspend"), then three ungated ``w`` calls, then the final JSON answer.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from typing import Any

from pydantic import BaseModel

from agent_core import Agent, Runtime, create_tool
from agent_core.models import FunctionModel, Message, ModelRequestInfo, ModelResponse, ToolCall
from storage import SqliteStore
from tests.helpers import ExecLog


class IdIn(BaseModel):
    id: str


class Answer(BaseModel):
    city: str
    population: int


class Reply(BaseModel):
    value: str


def build_runtime(db: str, exec_path: str, tracker: dict[str, Any] | None = None) -> Runtime:
    log = ExecLog(exec_path)
    tracker = tracker if tracker is not None else {"now": 0, "peak": 0}

    async def delete(inp: IdIn, ctx):
        await ctx.writer.write({"deleting": inp.id})
        log.record("delete", {"id": inp.id})
        return {"deleted": inp.id}

    async def ask(inp: IdIn, ctx):
        if ctx.resume_data is None:
            return await ctx.suspend({"question": "value?"})
        await ctx.writer.write({"resumed_with": ctx.resume_data.value})
        return {"value": ctx.resume_data.value}

    async def w(inp: IdIn, ctx):
        tracker["now"] += 1
        tracker["peak"] = max(tracker["peak"], tracker["now"])
        await asyncio.sleep(0.01)
        tracker["now"] -= 1
        return inp.id

    def before(call):
        log.record("before_tool_call", {"tool": call.tool_name, "pid": os.getpid()})

    def model(messages: list[Message], info: ModelRequestInfo) -> ModelResponse:
        log.record("model", {"output_schema": info.output_schema is not None})
        first = next(m for m in messages if m.role == "user").content
        steps = sum(1 for m in messages if m.role == "assistant" and m.tool_calls)
        if steps == 0:
            name = "delete" if first.startswith("approve") else "ask"
            return ModelResponse(tool_calls=[ToolCall(name=name, args={"id": "a"}, id="g1")])
        if steps == 1:
            return ModelResponse(tool_calls=[ToolCall(name="w", args={"id": str(i)}, id=f"w{i}") for i in range(3)])
        return ModelResponse(text=json.dumps({"city": "Paris", "population": 3}))

    agent = Agent(
        id="par",
        model=FunctionModel(model),
        tools={
            "delete": create_tool(id="delete", input_schema=IdIn, execute=delete, require_approval=True),
            "ask": create_tool(id="ask", input_schema=IdIn, execute=ask, resume_schema=Reply),
            "w": create_tool(id="w", input_schema=IdIn, execute=w),
        },
        hooks={"before_tool_call": before},
    )
    return Runtime(agents={"par": agent}, storage=SqliteStore(db))


async def main(argv: list[str]) -> dict:
    runtime = build_runtime(os.environ["WARDEN_TEST_DB"], os.environ["WARDEN_TEST_EXEC"])
    try:
        agent = runtime.get_agent("par")
        stream = await agent.stream(argv[1], output_schema=Answer, tool_call_concurrency=1)
        chunks = await stream.chunks()
        return {"run_id": stream.run_id, "status": stream.status, "types": [c.type for c in chunks]}
    finally:
        await runtime.aclose()


if __name__ == "__main__":
    print(json.dumps(asyncio.run(main(sys.argv[1:]))))
