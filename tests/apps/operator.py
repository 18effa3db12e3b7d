"""A runtime for the operator-power tests (edited arguments, deadlines, grants) on any store.

Configured by environment: WARDEN_TEST_DB (a path or a ``postgresql://`` URL), WARDEN_TEST_EXEC (the
execution log). Run as a script: ``python -m tests.apps.operator start|approve|sweep|grant ...``
prints one JSON line.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys

from pydantic import BaseModel

from agent_core import Agent, Runtime, WardenError, create_tool
from agent_core.models import FunctionModel, ModelResponse, ToolCall
from storage import open_store
from tests.helpers import ExecLog


class EmailIn(BaseModel):
    to: str
    subject: str = "hello"
    priority: int = 1


def build_runtime(db: str | None = None, exec_path: str | None = None, *, timeout: float | None = None) -> Runtime:
    log = ExecLog(exec_path or os.environ["WARDEN_TEST_EXEC"])

    async def send(inp: EmailIn, ctx):
        log.record("send_email", inp.model_dump())
        return {"sent_to": inp.to}

    async def wipe(inp: EmailIn, ctx):
        log.record("wipe", inp.model_dump())
        return {"wiped": inp.to}

    def model(messages, info):
        last_user = max(i for i, m in enumerate(messages) if m.role == "user")
        words = messages[last_user].content.split()
        if messages[-1].role == "user":
            # "send ana@example.com [wipe]": one gated call per word after the first
            calls = [
                ToolCall(name="wipe" if w == "wipe" else "send_email", args={"to": w}, id=f"c{i}")
                for i, w in enumerate(words[1:])
            ]
            return ModelResponse(tool_calls=calls)
        return ModelResponse(text=" | ".join(m.content for m in messages[last_user:] if m.role == "tool"))

    tools = {
        "send_email": create_tool(id="send-email", input_schema=EmailIn, execute=send, require_approval=True),
        "wipe": create_tool(id="wipe", input_schema=EmailIn, execute=wipe, require_approval=True, allow_grants=False),
    }
    opts = {} if timeout is None else {"approval_timeout": timeout}
    agent = Agent(id="mail", model=FunctionModel(model), tools=tools, default_options=opts)
    return Runtime(agents={"mail": agent}, storage=open_store(db or os.environ["WARDEN_TEST_DB"]))


async def main(argv: list[str]) -> dict:
    cmd = argv[0]
    async with build_runtime() as runtime:
        agent = runtime.get_agent("mail")
        try:
            if cmd == "start":  # start PROMPT THREAD [TIMEOUT]
                timeout = float(argv[3]) if len(argv) > 3 else None
                stream = await agent.stream(argv[1], thread_id=argv[2], approval_timeout=timeout)
                chunks = await stream.chunks()
                return {
                    "run_id": stream.run_id,
                    "status": stream.status,
                    "chunks": [c.model_dump(mode="json", by_alias=True) for c in chunks],
                }
            if cmd == "approve":  # approve RUN CALL ARGS_JSON [FINGERPRINT]
                args = json.loads(argv[3]) if argv[3] != "-" else None
                fp = argv[4] if len(argv) > 4 else None
                res = await agent.approve_tool_call_generate(
                    run_id=argv[1], tool_call_id=argv[2], args=args, fingerprint=fp
                )
                return {"text": res.text, "finish_reason": res.finish_reason}
            if cmd == "sweep":
                return {"expired": await runtime.sweep()}
            if cmd == "grant":  # grant TOOL SCOPE SCOPE_ID [ARGS_MATCH_JSON]
                match = json.loads(argv[4]) if len(argv) > 4 else None
                g = await runtime.grant(argv[1], scope=argv[2], scope_id=argv[3], args_match=match, actor="ops")
                return {"grant": g.model_dump(mode="json")}
        except WardenError as exc:
            return {"error": exc.code, "message": exc.message}
    raise SystemExit(f"unknown command {cmd!r}")


if __name__ == "__main__":
    print(json.dumps(asyncio.run(main(sys.argv[1:]))))


def __getattr__(name: str) -> Runtime:
    """``--app tests.apps.operator:runtime`` (server and CLI tests): built on first use from the environment."""
    if name == "runtime":
        return build_runtime()
    raise AttributeError(name)
