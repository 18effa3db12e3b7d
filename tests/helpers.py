"""Deterministic models and tools shared by the tests."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from agent_core import create_tool
from agent_core.models import FunctionModel, Message, ModelRequestInfo, ModelResponse, ToolCall


class IdIn(BaseModel):
    id: str


class Deleted(BaseModel):
    deleted: bool


def script(*turns: list[tuple[str, dict[str, Any], str | None]] | str, record: list | None = None) -> FunctionModel:
    """A model that plays ``turns`` in order: a list of (tool, args, id) calls, or a final text.

    Each model call takes the next turn; the last turn repeats. ``record`` gets
    the messages of every call.
    """
    state = {"i": 0}

    def fn(messages: list[Message], info: ModelRequestInfo) -> ModelResponse:
        if record is not None:
            record.append(list(messages))
        turn = turns[min(state["i"], len(turns) - 1)]
        state["i"] += 1
        if isinstance(turn, str):
            return ModelResponse(text=turn)
        return ModelResponse(tool_calls=[ToolCall(name=n, args=a, id=i) for (n, a, i) in turn])

    return FunctionModel(fn)


def echo_results() -> Callable[[list[Message], ModelRequestInfo], ModelResponse]:
    """Final text = every tool message content seen since the last user message, joined."""

    def final(messages: list[Message]) -> str:
        out = []
        for m in reversed(messages):
            if m.role == "user":
                break
            if m.role == "tool":
                out.append(f"{m.name}={m.content}")
        return " | ".join(reversed(out))

    return final


def calls_then(
    calls: list[tuple[str, dict[str, Any], str | None]],
    final: Callable[[list[Message]], str],
    record: list | None = None,
) -> FunctionModel:
    """On a user turn call ``calls``; after tool results answer ``final(messages)``."""

    def fn(messages: list[Message], info: ModelRequestInfo) -> ModelResponse:
        if record is not None:
            record.append(list(messages))
        if messages[-1].role == "user":
            return ModelResponse(tool_calls=[ToolCall(name=n, args=a, id=i) for (n, a, i) in calls])
        return ModelResponse(text=final(messages))

    return FunctionModel(fn)


def recording_tool(log: list, *, id: str = "delete-record", require_approval: bool | None = True):
    async def execute(inp: IdIn, ctx) -> dict:
        log.append(inp.id)
        return {"deleted": True}

    return create_tool(
        id=id,
        description="Delete a record by ID",
        input_schema=IdIn,
        output_schema=Deleted,
        require_approval=require_approval,
        execute=execute,
    )


class ExecLog:
    """Counts tool executions in a SQLite file, so several processes can be checked."""

    def __init__(self, path: Path | str) -> None:
        self.path = str(path)
        with sqlite3.connect(self.path) as db:
            db.execute("CREATE TABLE IF NOT EXISTS executions (tool TEXT, args TEXT, pid INTEGER)")

    def record(self, tool: str, args: Any) -> None:
        import os

        with sqlite3.connect(self.path, timeout=30) as db:
            db.execute("INSERT INTO executions VALUES (?, ?, ?)", (tool, json.dumps(args, sort_keys=True), os.getpid()))

    def rows(self) -> list[tuple[str, Any]]:
        with sqlite3.connect(self.path) as db:
            return [(t, json.loads(a)) for t, a in db.execute("SELECT tool, args FROM executions ORDER BY rowid")]


async def drain(stream) -> list:
    return [c async for c in stream.full_stream]


def types(chunks) -> list[str]:
    return [c.type for c in chunks]
