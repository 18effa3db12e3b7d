"""A three-level supervisor chain used in and across processes.

supervisor -> agent-team (team-agent) -> agent-data (data-agent) -> find_user (requires approval).
Each level's model is deterministic: delegate on a user turn, report the tool result after it.
Run as a script: ``python -m tests.apps.supervisors start DB EXEC`` prints the run id and pending call.
"""

from __future__ import annotations

import asyncio
import json
import sys

from pydantic import BaseModel

from agent_core import Agent, Memory, Runtime, create_tool
from agent_core.models import FunctionModel, ModelResponse, ToolCall
from storage import SqliteStore
from tests.helpers import ExecLog


class UserIn(BaseModel):
    user_id: str


class Confirm(BaseModel):
    confirmed: bool


def delegating_model(tool: str, arg_name: str, prefix: str):
    def fn(messages, info):
        last = messages[-1]
        if last.role == "user":
            return ModelResponse(tool_calls=[ToolCall(name=tool, args={arg_name: last.content}, id="call_1")])
        return ModelResponse(text=f"{prefix}({last.content})")

    return FunctionModel(fn)


def build_chain(exec_path: str) -> Agent:
    log = ExecLog(exec_path)

    async def find_user(inp: UserIn, ctx):
        log.record("find_user", {"user_id": inp.user_id})
        return {"user": {"id": inp.user_id, "name": "Ann"}}

    find_user_tool = create_tool(
        id="find-user", description="Finds user by ID", input_schema=UserIn, require_approval=True, execute=find_user
    )

    def data_model(messages, info):
        last = messages[-1]
        if last.role == "user":
            uid = last.content.split()[-1]
            return ModelResponse(tool_calls=[ToolCall(name="find_user", args={"user_id": uid}, id="call_1")])
        return ModelResponse(text=f"data({last.content})")

    data = Agent(
        id="data-agent",
        name="Data Agent",
        description="Handles user look-ups",
        model=FunctionModel(data_model),
        tools={"find_user": find_user_tool},
    )
    team = Agent(
        id="team-agent",
        description="Coordinates data work",
        model=delegating_model("agent-data", "prompt", "team"),
        agents={"data": data},
    )
    return Agent(
        id="supervisor",
        name="Supervisor",
        instructions="Delegate user look-ups.",
        model=delegating_model("agent-team", "prompt", "top"),
        agents={"team": team},
        memory=Memory(),
    )


def build_runtime(db: str, exec_path: str) -> Runtime:
    return Runtime(agents={"supervisor": build_chain(exec_path)}, storage=SqliteStore(db))


async def main(argv: list[str]) -> dict:
    cmd, db, exec_path = argv[0], argv[1], argv[2]
    async with build_runtime(db, exec_path) as runtime:
        agent = runtime.get_agent("supervisor")
        if cmd == "start":
            stream = await agent.stream("Find user with ID 12345", thread_id="t-1", resource_id="u-1")
            chunks = await stream.chunks()
            last = chunks[-1]
            return {
                "run_id": stream.run_id,
                "status": stream.status,
                "type": last.type,
                "payload": last.payload.model_dump(mode="json"),
            }
    raise SystemExit(f"unknown command {cmd}")


if __name__ == "__main__":
    print(json.dumps(asyncio.run(main(sys.argv[1:]))))
