"""A runtime used by multi-process tests: tool executions are counted in a SQLite file.

Configured by environment: WARDEN_TEST_DB (the store), WARDEN_TEST_EXEC (the execution log).
Run as a script: ``python -m tests.apps.counting start|approve|decline|list ...`` prints one JSON line.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
import time

from pydantic import BaseModel

from agent_core import Agent, Runtime, WardenError, create_tool
from agent_core.models import FunctionModel, ModelResponse, ToolCall
from storage import SqliteStore
from tests.helpers import ExecLog


class IdIn(BaseModel):
    id: str


def build_runtime(db: str | None = None, exec_path: str | None = None) -> Runtime:
    log = ExecLog(exec_path or os.environ["WARDEN_TEST_EXEC"])

    async def delete(inp: IdIn, ctx):
        log.record("delete", {"id": inp.id})
        return {"deleted": inp.id}

    async def read(inp: IdIn, ctx):
        log.record("read", {"id": inp.id})
        return {"read": inp.id}

    def model(messages, info):
        last_user = max(i for i, m in enumerate(messages) if m.role == "user")
        prompt = messages[last_user].content
        tool_turns = sum(1 for m in messages[last_user:] if m.role == "assistant" and m.tool_calls)
        if prompt.startswith("two-steps") and tool_turns == 1:
            return ModelResponse(tool_calls=[ToolCall(name="read", args={"id": "again"}, id="r2")])
        if tool_turns == 0:
            calls = []
            for i, word in enumerate(prompt.split()[1:]):
                name, _, arg = word.partition(":")
                calls.append(ToolCall(name=name, args={"id": arg}, id=f"c{i}"))
            return ModelResponse(tool_calls=calls)
        results = [m.content for m in messages[last_user:] if m.role == "tool"]
        return ModelResponse(text="results: " + " ".join(results))

    tools = {
        "delete": create_tool(id="delete", input_schema=IdIn, execute=delete, require_approval=True),
        "read": create_tool(id="read", input_schema=IdIn, execute=read),
    }
    agent = Agent(id="ops", model=FunctionModel(model), tools=tools)
    return Runtime(agents={"ops": agent}, storage=SqliteStore(db or os.environ["WARDEN_TEST_DB"]))


async def main(argv: list[str]) -> dict:
    runtime = build_runtime()
    agent = runtime.get_agent("ops")
    cmd = argv[0]
    try:
        if cmd == "start":
            policy = None
            if "--policy-read-free" in argv:

                def policy(call):
                    return call.tool_name != "read"

            stream = await agent.stream(
                argv[1], thread_id=argv[2] if len(argv) > 2 else None, require_tool_approval=policy
            )
            chunks = await stream.chunks()
            return {"run_id": stream.run_id, "status": stream.status, "types": [c.type for c in chunks]}
        if cmd in ("approve", "decline"):
            start_at = float(argv[3]) if len(argv) > 3 else 0
            while time.time() < start_at:  # a start line for races
                await asyncio.sleep(0.0005)
            method = agent.approve_tool_call if cmd == "approve" else agent.decline_tool_call
            stream = await method(run_id=argv[1], tool_call_id=argv[2] if len(argv) > 2 and argv[2] != "-" else None)
            chunks = await stream.chunks()
            return {"ok": True, "status": stream.status, "text": await stream.text(), "types": [c.type for c in chunks]}
        if cmd == "storm":
            # Decide every call of every listed run, in a random order, racing another process.
            import random

            rng = random.Random(int(argv[2]))
            targets = json.loads(open(argv[1]).read())
            rng.shuffle(targets)
            start_at = float(argv[3])
            while time.time() < start_at:
                await asyncio.sleep(0.0005)
            won, lost, streams = [], [], []
            for run_id, call_id in targets:
                approve = rng.random() < 0.5
                try:
                    if approve:
                        s = await agent.approve_tool_call(run_id=run_id, tool_call_id=call_id)
                    else:
                        s = await agent.decline_tool_call(run_id=run_id, tool_call_id=call_id, reason="storm")
                    streams.append(s)
                    won.append([run_id, call_id, "approved" if approve else "declined"])
                except WardenError as exc:
                    lost.append([run_id, call_id, exc.code])
            for s in streams:
                await s.wait()
            errors = [s.error for s in streams if s.error]
            return {"won": won, "lost": lost, "errors": errors}
    except WardenError as exc:
        return {"ok": False, "code": exc.code, "message": str(exc)}
    finally:
        await runtime.aclose()
    raise SystemExit(f"unknown command {cmd}")


if __name__ == "__main__":
    print(json.dumps(asyncio.run(main(sys.argv[1:]))))
