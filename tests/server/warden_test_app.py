"""The ``module:runtime`` the server tests serve (``python -m warden_server --app warden_test_app:runtime``).

Deterministic ``FunctionModel`` agents on the store ``$WARDEN_TEST_DB`` names (a SQLite path or a
``postgresql://`` URL).
Every tool execution is recorded as one row in the SQLite file
``$WARDEN_TEST_COUNTER_DB`` (table ``executions``), so tests can count
executions across several server processes.

The model reads the last user message:
- ``delete <id>``   -> calls ``delete_tool`` (``require_approval=True``)
- ``lookup <q>``    -> calls ``lookup`` (gated only by ``requireToolApproval``)
- ``ask <q>``       -> calls ``ask_user``, which suspends until resumed with ``{"answer": str}``
- ``boom``          -> the model raises (the run fails with an ``error`` chunk)
- anything else     -> answers ``hello from <agent>``

``boss`` is a supervisor: ``delegate <prompt>`` hands ``<prompt>`` to its sub-agent ``ops``.
and after a tool result answers ``done: <result JSON>``.
"""

from __future__ import annotations

import json
import os
import sqlite3

from pydantic import BaseModel

from agent_core import Agent, Runtime, create_tool
from agent_core.models import FunctionModel, ModelResponse, ToolCall
from storage import open_store

DB = os.environ.get("WARDEN_TEST_DB", "warden-test.db")
COUNTER_DB = os.environ.get("WARDEN_TEST_COUNTER_DB", "warden-test-counter.db")


def record_execution(tool: str, tool_call_id: str, args: dict) -> None:
    con = sqlite3.connect(COUNTER_DB, timeout=60)
    try:
        with con:
            con.execute("CREATE TABLE IF NOT EXISTS executions (tool TEXT, tool_call_id TEXT, args TEXT, pid INTEGER)")
            con.execute(
                "INSERT INTO executions VALUES (?, ?, ?, ?)",
                (tool, tool_call_id, json.dumps(args, sort_keys=True), os.getpid()),
            )
    finally:
        con.close()


class DeleteIn(BaseModel):
    id: str


class DeleteOut(BaseModel):
    deleted: str


async def delete_fn(inp: DeleteIn, ctx) -> dict:
    record_execution("delete-record", ctx.tool_call_id, inp.model_dump())
    return {"deleted": inp.id}


delete_tool = create_tool(
    id="delete-record",
    description="Delete a record by ID",
    input_schema=DeleteIn,
    output_schema=DeleteOut,
    require_approval=True,
    execute=delete_fn,
)


class LookupIn(BaseModel):
    q: str


async def lookup_fn(inp: LookupIn, ctx) -> dict:
    record_execution("lookup", ctx.tool_call_id, inp.model_dump())
    return {"found": inp.q}


lookup_tool = create_tool(id="lookup", description="Look something up", input_schema=LookupIn, execute=lookup_fn)


class AskIn(BaseModel):
    question: str


class AskSuspend(BaseModel):
    question: str


class AskResume(BaseModel):
    answer: str


async def ask_fn(inp: AskIn, ctx) -> dict:
    if ctx.resume_data is None:
        return await ctx.suspend({"question": inp.question})
    record_execution("ask-user", ctx.tool_call_id, {"answer": ctx.resume_data.answer})
    return {"answer": ctx.resume_data.answer}


ask_tool = create_tool(
    id="ask-user",
    description="Ask the user a question",
    input_schema=AskIn,
    suspend_schema=AskSuspend,
    resume_schema=AskResume,
    execute=ask_fn,
)


async def progress_fn(inp: LookupIn, ctx) -> dict:
    # progress chunks (tool-output) streamed while the tool runs
    await ctx.writer.write({"stage": "fetching", "q": inp.q})
    await ctx.writer.write({"stage": "done", "percent": 100})
    return {"progressed": inp.q}


progress_tool = create_tool(
    id="progress", description="A long job that reports progress", input_schema=LookupIn, execute=progress_fn
)


def make_model(agent_name: str) -> FunctionModel:
    def fn(messages, info):
        last = messages[-1]
        if last.role == "tool":
            return ModelResponse(text=f"done: {last.content}")
        words = (last.content or "").split()
        verb = words[0].lower() if words else ""
        rest = " ".join(words[1:]) or "x"
        if verb == "delete":
            return ModelResponse(tool_calls=[ToolCall(name="delete_tool", args={"id": rest})])
        if verb == "lookup":
            return ModelResponse(tool_calls=[ToolCall(name="lookup", args={"q": rest})])
        if verb == "progress":
            return ModelResponse(tool_calls=[ToolCall(name="progress", args={"q": rest})])
        if verb == "boom":
            raise RuntimeError("model exploded")
        if verb == "ask":
            return ModelResponse(tool_calls=[ToolCall(name="ask_user", args={"question": rest})])
        return ModelResponse(text=f"hello from {agent_name}")

    return FunctionModel(fn)


TOOLS = {"delete_tool": delete_tool, "lookup": lookup_tool, "ask_user": ask_tool, "progress": progress_tool}

ops = Agent(id="ops", name="Ops", instructions="You operate records.", model=make_model("ops"), tools=TOOLS)
other = Agent(id="other", name="Other", instructions="Another agent.", model=make_model("other"), tools=TOOLS)

# gates every call unless a request says requireToolApproval: false
guarded = Agent(
    id="guarded",
    name="Guarded",
    instructions="Asks first.",
    model=make_model("guarded"),
    tools=TOOLS,
    default_options={"require_tool_approval": True, "max_steps": 1},
)


def boss_model(messages, info):
    last = messages[-1]
    if last.role == "tool":
        return ModelResponse(text=f"boss done: {last.content}")
    words = (last.content or "").split(maxsplit=1)
    if words and words[0] == "delegate":
        return ModelResponse(tool_calls=[ToolCall(name="agent-ops", args={"prompt": words[1]})])
    return ModelResponse(text="hello from boss")


# a supervisor: ops is its sub-agent, reached through the delegation tool "agent-ops"
sub_ops = Agent(id="ops", name="Ops", instructions="You operate records.", model=make_model("ops"), tools=TOOLS)
boss = Agent(
    id="boss", name="Boss", instructions="Delegates.", model=FunctionModel(boss_model), agents={"ops": sub_ops}
)

runtime = Runtime(agents={"ops": ops, "other": other, "guarded": guarded, "boss": boss}, storage=open_store(DB))
