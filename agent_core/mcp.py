"""MCP servers' tools as Warden tools: ``async with mcp_tools(server) as tools: Agent(tools=tools, ...)``.

``server`` is a stdio command (a list of strings: the program and its arguments)
or a streamable-HTTP URL (``http://127.0.0.1:8000/mcp``). Each MCP tool becomes
a ``Tool`` whose input is validated against the tool's JSON Schema before
anything is gated or run, whose result is the MCP result mapped back
(structured content as is; text as a string, or as JSON when it is one JSON
value), and whose ``isError`` results are ``tool-error``s the model sees.

Approval defaults come from the MCP tool annotations: ``readOnlyHint: true``
is not gated; ``destructiveHint: true``, or no hint at all, is gated.
``require_approval`` overrides that, as a bool for every tool or a mapping of
tool names or globs (``{"delete_*": True, "get_*": False}``; the first
matching pattern wins, an exact name before any glob).

The official ``mcp`` SDK is imported only when a session is opened, so
``import agent_core`` never pays for it.
"""

from __future__ import annotations

import fnmatch
import json
from collections.abc import Iterator, Mapping, Sequence
from contextlib import AsyncExitStack
from typing import Any

from pydantic import BaseModel

from agent_core.errors import WardenError
from agent_core.json_input import input_model
from agent_core.tools import Tool, ToolContext, create_tool

__all__ = ["McpError", "McpToolError", "McpTools", "approval_for", "mcp_tools", "result_value"]

ApprovalSpec = bool | Mapping[str, bool] | None


class McpError(WardenError):
    """The MCP server could not be reached, or answered with a protocol error."""

    code = "AGENT_MCP_ERROR"


class McpToolError(Exception):
    """An MCP tool answered ``isError: true``: the run sees a ``tool-error`` with its text."""


def approval_for(name: str, annotations: Any, require_approval: ApprovalSpec) -> bool:
    """Whether a call of the MCP tool ``name`` is gated.

    ``require_approval`` (bool, or names/globs to bool) wins; else the annotations:
    ``readOnlyHint: true`` → not gated, anything else (``destructiveHint``, no hint) → gated.
    """
    if isinstance(require_approval, bool):
        return require_approval
    if require_approval:
        if name in require_approval:
            return bool(require_approval[name])
        for pattern, gated in require_approval.items():
            if fnmatch.fnmatchcase(name, pattern):
                return bool(gated)
    read_only = _hint(annotations, "read_only_hint", "readOnlyHint")
    destructive = _hint(annotations, "destructive_hint", "destructiveHint")
    return not (read_only is True and destructive is not True)


def _hint(annotations: Any, attr: str, key: str) -> Any:
    if annotations is None:
        return None
    if isinstance(annotations, Mapping):
        return annotations.get(key, annotations.get(attr))
    return getattr(annotations, attr, None)


def result_value(result: Any) -> Any:
    """An MCP ``CallToolResult`` as a Warden tool result (raises ``McpToolError`` for ``isError``)."""
    blocks = [_block(c) for c in (getattr(result, "content", None) or [])]
    texts = [b["text"] for b in blocks if b.get("type") == "text"]
    if getattr(result, "is_error", False):
        raise McpToolError("\n".join(texts) or "the MCP tool reported an error")
    structured = getattr(result, "structured_content", None)
    if structured is not None:
        return structured
    if blocks and len(texts) == len(blocks):
        if len(texts) == 1:
            try:
                return json.loads(texts[0])
            except ValueError:
                return texts[0]
        return "\n".join(texts)
    return blocks


def _block(content: Any) -> dict[str, Any]:
    if isinstance(content, BaseModel):
        return content.model_dump(mode="json", by_alias=True, exclude_none=True)
    return dict(content) if isinstance(content, Mapping) else {"type": "unknown", "value": str(content)}


class McpTools(Mapping[str, Tool]):
    """The tools of one MCP server, and the session they share.

    ``async with mcp_tools(server) as tools``: connects and lists the tools on
    enter, closes the session on exit. Or ``await tools.connect()`` and
    ``await tools.aclose()``. ``tools.mcp_tools`` holds the MCP ``Tool``
    definitions (annotations included); ``await tools.call(name, args)`` calls
    one upstream tool and returns the raw ``CallToolResult``.
    """

    def __init__(self, server: str | Sequence[str], *, require_approval: ApprovalSpec = None) -> None:
        if isinstance(server, str):
            if not server.startswith(("http://", "https://")):
                raise ValueError(f"an MCP server is a command (list of strings) or an http(s) URL, not {server!r}")
        elif not server or not all(isinstance(p, str) for p in server):
            raise ValueError("an MCP stdio server is a non-empty list of strings (the command and its arguments)")
        self.server: str | list[str] = server if isinstance(server, str) else list(server)
        self.require_approval = require_approval
        self.client: Any = None
        self.mcp_tools: dict[str, Any] = {}
        self.server_name: str = ""
        self._tools: dict[str, Tool] = {}
        self._stack: AsyncExitStack | None = None
        #: when set, the raw ``CallToolResult`` of each call a tool executes, by tool call id (the MCP proxy)
        self.raw_results: dict[str, Any] | None = None

    # -- Mapping -------------------------------------------------------------------------------
    def __getitem__(self, key: str) -> Tool:
        if self._stack is None:
            raise McpError("MCP tools are not connected yet: use `async with mcp_tools(...) as tools`")
        return self._tools[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._tools)

    def __len__(self) -> int:
        return len(self._tools)

    # -- lifetime ------------------------------------------------------------------------------
    async def __aenter__(self) -> McpTools:
        await self.connect()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    async def connect(self) -> None:
        """Open the session (start the stdio server, or reach the URL) and list the tools."""
        if self._stack is not None:
            return
        from mcp import Client, StdioServerParameters

        target: Any = self.server
        if isinstance(self.server, list):
            target = StdioServerParameters(command=self.server[0], args=self.server[1:])
        stack = AsyncExitStack()
        try:
            self.client = await stack.enter_async_context(Client(target))
            listed: list[Any] = []
            cursor = None
            while True:
                page = await self.client.list_tools(cursor=cursor)
                listed.extend(page.tools)
                cursor = page.next_cursor
                if not cursor:
                    break
        except BaseException as exc:
            await stack.aclose()
            if isinstance(exc, Exception):
                raise McpError(f"cannot use MCP server {self.describe()}: {type(exc).__name__}: {exc}") from exc
            raise
        self._stack = stack
        info = getattr(self.client, "server_info", None)
        self.server_name = getattr(info, "name", "") or ""
        self.mcp_tools = {t.name: t for t in listed}
        self._tools = {t.name: self._tool(t) for t in listed}

    async def aclose(self) -> None:
        stack, self._stack = self._stack, None
        if stack is not None:
            await stack.aclose()

    def describe(self) -> str:
        return self.server if isinstance(self.server, str) else " ".join(self.server)

    # -- calls ---------------------------------------------------------------------------------
    def gated(self, name: str) -> bool:
        return approval_for(name, getattr(self.mcp_tools.get(name), "annotations", None), self.require_approval)

    async def call(self, name: str, arguments: dict[str, Any]) -> Any:
        """Call one upstream tool; the raw MCP ``CallToolResult``."""
        if self._stack is None:
            raise McpError("MCP tools are not connected")
        return await self.client.call_tool(name, arguments)

    def _tool(self, spec: Any) -> Tool:
        name: str = spec.name

        async def execute(inp: BaseModel, ctx: ToolContext) -> Any:
            raw = await self.call(name, inp.model_dump())
            if self.raw_results is not None:
                self.raw_results[ctx.tool_call_id] = raw
            return result_value(raw)

        return create_tool(
            id=name,
            description=spec.description or spec.title or "",
            input_schema=input_model(name, spec.input_schema or {}),
            execute=execute,
            require_approval=self.gated(name),
        )


def mcp_tools(server: str | Sequence[str], *, require_approval: ApprovalSpec = None) -> McpTools:
    """The tools of the MCP server ``server`` (a stdio command as a list, or a streamable-HTTP URL).

    Use as ``async with mcp_tools(["python", "server.py"]) as tools: Agent(..., tools=tools)``;
    the session lives until the ``async with`` ends.
    """
    return McpTools(server, require_approval=require_approval)
