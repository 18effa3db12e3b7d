"""A runtime hosting a LangGraph agent (``create_agent`` + ``HumanInTheLoopMiddleware``) with a fake chat
model that emits tool calls (no network), on a durable SQLite checkpointer shared by every process.

Environment as ``tests.adapters.hosting`` says, plus
ADAPTER_LG_MODE=per_call (``HumanInTheLoopMiddleware(interrupt_mode="per_call")``; default batched),
ADAPTER_CHECKPOINTER=sync (``SqliteSaver``, the default) or async (``AsyncSqliteSaver`` when built inside a
running event loop; ``--app`` loads outside one, so a CLI process uses ``SqliteSaver`` on the same file).
``--app tests.adapters.lg_app:build``; ``python -m tests.adapters.lg_app approve RUN`` approves the latest call.
The model follows ``tests.adapters.script`` (``delete ID`` calls ``delete_record``, which the framework
gates; ``lookup Q`` calls ``lookup``, which it does not; ``then`` separates turns) and answers with the
results it saw (logged as ``model``).
"""

from __future__ import annotations

import asyncio
import os
import sqlite3
import sys
import time
from typing import Any

from langchain.agents import create_agent
from langchain.agents.middleware import HumanInTheLoopMiddleware
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.tools import tool

from agent_core import Policy, Runtime
from agent_core.adapters import from_langgraph
from tests.adapters.hosting import exec_log, hang, hosting, script
from tests.adapters.script import turns
from tests.helpers import ExecLog


class ScriptChatModel(BaseChatModel):
    """A fake LangChain chat model: tool calls from the user's words, then an answer from the results."""

    log_path: str | None = None

    @property
    def _llm_type(self) -> str:
        return "warden-script"

    def bind_tools(self, tools: Any, **kwargs: Any) -> ScriptChatModel:
        return self

    def _generate(
        self, messages: list[BaseMessage], stop: Any = None, run_manager: Any = None, **kw: Any
    ) -> ChatResult:
        start = max(i for i, m in enumerate(messages) if isinstance(m, HumanMessage))
        results = [str(m.content) for m in messages[start + 1 :] if isinstance(m, ToolMessage)]
        done = sum(1 for m in messages[start + 1 :] if isinstance(m, AIMessage) and m.tool_calls)
        turn = turns(str(messages[start].content), done)
        if turn is None:
            if self.log_path:
                ExecLog(self.log_path).record("model", {"seen": results})
            return _reply(AIMessage(content="; ".join(results) or "nothing to do"))
        calls = [
            {"name": name, "args": args, "id": f"lg-{len(results) + i}", "type": "tool_call"}
            for i, (name, args) in enumerate(turn)
        ]
        return _reply(AIMessage(content="", tool_calls=calls) if calls else AIMessage(content="nothing to do"))


def _reply(message: AIMessage) -> ChatResult:
    return ChatResult(generations=[ChatGeneration(message=message)])


def langgraph_agent(
    log: ExecLog | None,
    checkpointer: Any,
    *,
    hang: str = "",
    interrupt_mode: str = "batched",
    interrupt_on: dict[str, Any] | None = None,
) -> Any:
    @tool
    def delete_record(record_id: str) -> str:
        """Delete a record by id."""
        if log is not None:
            log.record("delete_record", {"record_id": record_id})
        if hang == "tool":
            time.sleep(600)
        return f"deleted {record_id}"

    @tool
    def lookup(query: str) -> str:
        """Look a record up (not in interrupt_on)."""
        if log is not None:
            log.record("lookup", {"query": query})
        return f"found {query}"

    review = HumanInTheLoopMiddleware(
        interrupt_on=interrupt_on or {"delete_record": True},
        interrupt_mode=interrupt_mode,  # type: ignore[arg-type]
    )
    return create_agent(
        ScriptChatModel(log_path=log.path if log is not None else None),
        tools=[delete_record, lookup],
        middleware=[review],
        checkpointer=checkpointer,
        name="records",
    )


class _Runtime(Runtime):
    """Also closes the async checkpointer's connection (its worker thread would keep the process alive)."""

    checkpointer_conn: Any = None

    async def aclose(self) -> None:
        await super().aclose()
        if self.checkpointer_conn is not None:
            await self.checkpointer_conn.close()


def checkpointer_for(path: str, kind: str) -> Any:
    """Both savers read and write the same file, so a process with either one can decide."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:  # AsyncSqliteSaver is built inside an event loop; `--app` loads outside one
        kind = "sync"
    if kind == "async":
        import aiosqlite
        from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver

        return AsyncSqliteSaver(aiosqlite.connect(path))
    from langgraph.checkpoint.sqlite import SqliteSaver

    return SqliteSaver(sqlite3.connect(path, check_same_thread=False))


def build(policy: Policy | None = None, **options: Any) -> Runtime:
    checkpointer = checkpointer_for(os.environ["ADAPTER_DB"] + ".graph", os.environ.get("ADAPTER_CHECKPOINTER", "sync"))
    graph = langgraph_agent(
        exec_log(), checkpointer, hang=hang(), interrupt_mode=os.environ.get("ADAPTER_LG_MODE", "batched")
    )
    runtime = hosting(from_langgraph(graph, id="records", **options), _Runtime, policy=policy)
    if not isinstance(checkpointer.conn, sqlite3.Connection):
        assert isinstance(runtime, _Runtime)
        runtime.checkpointer_conn = checkpointer.conn
    return runtime


if __name__ == "__main__":
    script(build, sys.argv)
