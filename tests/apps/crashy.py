"""A runtime for crash tests: a gated tool and a model that can hang, so a test can kill -9 the process.

Environment: CRASHY_DB (store), CRASHY_EXEC (execution log), CRASHY_LEASE (seconds),
CRASHY_HANG=tool|model (where the approving process hangs). ``python -m tests.apps.crashy
approve RUN`` approves the run's call and waits (the test kills it).
"""

from __future__ import annotations

import asyncio
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


def build(*, idempotent: bool = False) -> Runtime:
    log = ExecLog(os.environ["CRASHY_EXEC"])
    hang = os.environ.get("CRASHY_HANG", "")

    async def act(inp: IdIn, ctx: Any) -> dict[str, Any]:
        log.record("act", {"id": inp.id})
        if hang == "tool":
            await asyncio.sleep(600)
        return {"acted": inp.id}

    def model(messages: list[Message], info: ModelRequestInfo) -> ModelResponse:
        if messages[-1].role == "user":
            return ModelResponse(tool_calls=[ToolCall(name="act", args={"id": "a1"}, id="c1")])
        log.record("model", {"seen": [m.content for m in messages if m.role == "tool"]})
        if hang == "model":
            import time

            time.sleep(600)
        return ModelResponse(text="done")

    tool = create_tool(id="act", input_schema=IdIn, execute=act, require_approval=True, idempotent=idempotent)
    agent = Agent(id="crashy", model=FunctionModel(model), tools={"act": tool})
    return Runtime(
        agents={"crashy": agent},
        storage=SqliteStore(os.environ["CRASHY_DB"]),
        lease_seconds=float(os.environ.get("CRASHY_LEASE", "1")),
        actor=os.environ.get("CRASHY_ACTOR"),
    )


async def _approve(run_id: str) -> None:
    async with build() as runtime:
        stream = await runtime.approve_tool_call(run_id=run_id)
        await stream.wait()


if __name__ == "__main__":
    if sys.argv[1] == "approve":
        asyncio.run(_approve(sys.argv[2]))
