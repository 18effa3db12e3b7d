"""A runtime for the policy tests: the reference document's conditional example as a policy.

``python -m tests.apps.policy_app start|approve ...`` prints one JSON line. The store is
``WARDEN_TEST_DB``; tool executions go to ``WARDEN_TEST_EXEC``; ``WARDEN_TEST_POLICY``
(a TOML file) is the runtime's policy, absent: none.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys

from pydantic import BaseModel

from agent_core import Agent, Policy, Runtime, WardenError, create_tool
from agent_core.models import FunctionModel, ModelResponse, ToolCall
from storage import open_store
from tests.helpers import ExecLog

#: Mastra's ``requireToolApproval: ({ toolName }) => /^delete_/.test(toolName)``, as data.
DELETES_ASK = """
label = "deletes-ask"
[[rules]]
id = "deletes"
tools = ["delete_*"]
decision = "ask"
reason = "deletes need a person"
"""


class IdIn(BaseModel):
    id: str


def build_runtime(db: str, exec_path: str, policy: Policy | None = None, shadow: Policy | None = None) -> Runtime:
    log = ExecLog(exec_path)

    def delete_record(inp: IdIn, ctx):
        log.record("delete_record", {"id": inp.id})
        return {"deleted": inp.id}

    def list_records(inp: IdIn, ctx):
        log.record("list_records", {"id": inp.id})
        return {"records": [inp.id]}

    def model(messages, info):
        """Step 0: delete a; step 1: list b and delete c; then the tool results as text."""
        last_user = max(i for i, m in enumerate(messages) if m.role == "user")
        turns = sum(1 for m in messages[last_user:] if m.role == "assistant" and m.tool_calls)
        if turns == 0:
            return ModelResponse(tool_calls=[ToolCall(name="delete_record", args={"id": "a"}, id="d1")])
        if turns == 1:
            return ModelResponse(
                tool_calls=[
                    ToolCall(name="list_records", args={"id": "b"}, id="l2"),
                    ToolCall(name="delete_record", args={"id": "c"}, id="d2"),
                ]
            )
        return ModelResponse(text=" ".join(m.content for m in messages[last_user:] if m.role == "tool"))

    tools = {
        "delete_record": create_tool(id="delete_record", input_schema=IdIn, execute=delete_record),
        "list_records": create_tool(id="list_records", input_schema=IdIn, execute=list_records),
    }
    agent = Agent(id="ops", model=FunctionModel(model), tools=tools)
    return Runtime(agents={"ops": agent}, storage=open_store(db), policy=policy, shadow_policy=shadow)


async def main(argv: list[str]) -> dict:
    path = os.environ.get("WARDEN_TEST_POLICY")
    runtime = build_runtime(
        os.environ["WARDEN_TEST_DB"], os.environ["WARDEN_TEST_EXEC"], Policy.load(path) if path else None
    )
    async with runtime:
        agent = runtime.get_agent("ops")
        try:
            if argv[0] == "start":
                stream = await agent.stream("tidy up", actor=argv[1] if len(argv) > 1 else None)
            else:
                actor = argv[3] if len(argv) > 3 else None
                stream = await agent.approve_tool_call(run_id=argv[1], tool_call_id=argv[2], actor=actor)
            chunks = await stream.chunks()
        except WardenError as exc:
            return {"ok": False, "code": exc.code, "error": exc.message}
        return {
            "ok": True,
            "run_id": stream.run_id,
            "status": stream.status,
            "chunks": [c.model_dump(mode="json", by_alias=True) for c in chunks],
        }


if __name__ == "__main__":
    print(json.dumps(asyncio.run(main(sys.argv[1:]))))


def runtime() -> Runtime:
    """``--app tests.apps.policy_app:runtime``: the store and log the environment names, no policy of its own."""
    return build_runtime(os.environ["WARDEN_TEST_DB"], os.environ["WARDEN_TEST_EXEC"])
