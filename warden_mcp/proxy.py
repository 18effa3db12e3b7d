"""An MCP server in front of an upstream MCP server: gated calls wait for a Warden decision.

The proxy holds a ``Runtime`` over the Warden store with one agent, ``mcp:<upstream name>``,
whose tools are the upstream's (``agent_core.mcp_tools``) and whose model is a
``FunctionModel`` that emits exactly the call the MCP client asked for. A gated call
suspends that run like any other (same fingerprint, same audit, listed by the console,
``warden runs list`` and the HTTP API). Its runs carry ``request_context["warden_handover"]``:
a process that does not host the agent (the console, ``warden runs approve``, another
server) only *records* the decision (compare-and-set, audit) under a handover lease; the
proxy, which polls its waiting call, adopts that lease and applies the decision here,
where the upstream connection lives (``Runtime.adopt``). Expiries recorded by another process's
sweep are adopted the same way. Each run also stores the called tool's definition
(``request_context["warden_handover_tools"]``), so those processes validate edited arguments
against its JSON Schema and accept grants for it.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import socket
import time
import uuid
from collections.abc import Mapping, Sequence
from typing import Any

import httpx

from agent_core import Agent, Runtime
from agent_core.errors import WardenError
from agent_core.handover import HANDOVER_KEY, HANDOVER_TOOLS_KEY, declare_tools
from agent_core.mcp import McpTools
from agent_core.models import FunctionModel, Message, ModelRequestInfo, ModelResponse, ToolCall
from agent_core.stream import AgentStream
from storage.base import Store

#: the reason recorded when the MCP client cancels a call that waits for a decision.
CANCELLED_REASON = "cancelled by the MCP client"
#: the reason recorded when a restarted proxy declines the calls its dead predecessor left waiting.
ORPHANED_REASON = "the MCP proxy that received this call stopped; the MCP client's request is gone"
#: told to the MCP client when its call is declined.
DECLINED_PREFIX = "Warden: the operator declined this tool call"
#: told to the MCP client when nobody decided before the deadline (``approval_timeout``).
EXPIRED_TEXT = "Warden: the approval request expired before anyone decided; the tool was not run"


class McpProxy:
    """``async with McpProxy(upstream, store) as proxy``: connects the upstream, opens the runtime.

    ``proxy.server`` is the MCP server (the SDK's low-level ``Server``) to run over stdio or HTTP.
    """

    def __init__(
        self,
        upstream: str | Sequence[str],
        store: Store | None = None,
        *,
        warden: Any = None,
        name: str | None = None,
        require_approval: bool | Mapping[str, bool] | None = None,
        poll_seconds: float = 0.2,
        progress_seconds: float = 5.0,
        lease_seconds: float = 30.0,
        actor: str | None = None,
        approval_timeout: float | None = None,
    ) -> None:
        self.tools = McpTools(upstream, require_approval=require_approval)
        #: the upstream's raw results, by tool call id, until returned to the MCP client
        self._raw: dict[str, Any] = {}
        self.tools.raw_results = self._raw
        if (store is None) == (warden is None):
            raise ValueError("McpProxy needs exactly one of a store (local) and a warden client (a Warden server)")
        self.store: Store = store  # type: ignore[assignment]  # None with a Warden server: unused
        #: a ``warden_client.WardenClient`` when gated calls wait on a Warden server (``--server``)
        self.warden = warden
        self.name = name
        self.poll_seconds = poll_seconds
        self.progress_seconds = progress_seconds
        self.lease_seconds = lease_seconds
        self.actor = actor
        #: seconds a gated call may wait for a decision; then it expires (fail-closed), None: no deadline
        self.approval_timeout = approval_timeout
        self.agent: Agent | None = None
        self.runtime: Runtime | None = None
        self.server: Any = None
        #: how many calls of a stopped proxy were declined at start (``decline_orphans``)
        self.orphans_declined = 0

    @property
    def agent_id(self) -> str:
        return f"mcp:{self.name or self.tools.server_name or 'upstream'}"

    async def __aenter__(self) -> McpProxy:
        await self.tools.connect()
        if self.warden is not None:  # the server holds the store, the runs and the deadlines
            self.server = self._build_server()
            return self
        try:
            self.agent = Agent(
                id=self.agent_id,
                name=f"MCP proxy for {self.tools.server_name or self.tools.describe()}",
                description=f"MCP calls forwarded to {self.tools.describe()}",
                model=FunctionModel(_replay, model_id="mcp-client"),
                tools=dict(self.tools),
            )
            self.runtime = Runtime(
                {self.agent.id: self.agent}, self.store, lease_seconds=self.lease_seconds, actor=self.actor
            )
            await self.runtime.__aenter__()
            self.orphans_declined = await self.decline_orphans()
            self.server = self._build_server()
        except BaseException:
            await self.tools.aclose()
            raise
        return self

    async def __aexit__(self, *exc: object) -> None:
        try:
            if self.runtime is not None:
                await self.runtime.aclose()
            if self.warden is not None:
                await self.warden.aclose()
        finally:
            await self.tools.aclose()

    async def decline_orphans(self) -> int:
        """Decline the waiting calls of this agent left by a proxy process that no longer runs on this host.

        Their MCP client's request died with that process, so nobody could receive a result.
        Calls of live proxies (another process, same upstream) are left alone. Returns how many.
        """
        assert self.runtime is not None
        declined = 0
        listing = await self.runtime.list_suspended_runs(agent_id=self.agent_id, per_page=1000)
        for run in listing.runs:
            row = await self.store.get_run(run.run_id)
            try:
                proxy = json.loads(row.snapshot)["request_context"]["proxy"] if row else None
            except (ValueError, KeyError, TypeError):
                continue
            if not proxy or proxy.get("host") != socket.gethostname() or _alive(proxy.get("pid")):
                continue
            for call in run.tool_calls:
                try:
                    stream = await self.runtime.decline_tool_call(
                        run_id=run.run_id, tool_call_id=call.tool_call_id, reason=ORPHANED_REASON
                    )
                except WardenError:
                    continue
                await stream.wait()
                declined += 1
        return declined

    # -- the MCP server ----------------------------------------------------------------------
    def _build_server(self) -> Any:
        from mcp.server.lowlevel import Server

        async def list_tools(ctx: Any, params: Any) -> Any:
            import mcp.types as types

            return types.ListToolsResult(tools=list(self.tools.mcp_tools.values()))

        async def call_tool(ctx: Any, params: Any) -> Any:
            return await self.call(params.name, dict(params.arguments or {}), ctx=ctx)

        return Server(
            self.tools.server_name or "warden-mcp-proxy",
            instructions="Tool calls may wait for a human's approval in Warden.",
            on_list_tools=list_tools,
            on_call_tool=call_tool,
        )

    async def call(self, name: str, arguments: dict[str, Any], *, ctx: Any = None) -> Any:
        """One MCP ``tools/call``: forwarded at once when not gated, else after a Warden decision."""
        if name not in self.tools.mcp_tools:
            return _error(f"unknown tool {name!r}")
        if not self.tools.gated(name):
            return await self.tools.call(name, arguments)
        if self.warden is not None:
            return await self._call_remote(name, arguments, ctx)
        assert self.agent is not None and self.runtime is not None
        call_id = f"mcp-{uuid.uuid4().hex[:16]}"
        request = json.dumps({"tool": name, "arguments": arguments, "tool_call_id": call_id}, ensure_ascii=False)
        context = {
            HANDOVER_KEY: True,
            # the called tool's schema travels with the run: any process validates edits, grants it
            HANDOVER_TOOLS_KEY: declare_tools({name: self.agent.tools[name]}),
            "mcp_server": self.tools.server_name or self.tools.describe(),
            "proxy": {"host": socket.gethostname(), "pid": os.getpid()},
        }
        stream = await self.agent.stream(
            request, request_context=context, max_steps=2, approval_timeout=self.approval_timeout
        )
        outcome = await _outcome(stream, call_id, self._raw)
        if outcome is not None:  # not gated after all (invalid arguments, an error): answered now
            return outcome
        run_id = stream.run_id
        try:
            applied = await self._wait(run_id, call_id, ctx)
        except asyncio.CancelledError:
            await self._withdraw(run_id, call_id)
            raise
        if not isinstance(applied, AgentStream):
            return applied  # the run ended elsewhere: the MCP result already
        return await _outcome(applied, call_id, self._raw) or _error("Warden: the call ended without a result")

    async def _wait(self, run_id: str, call_id: str, ctx: Any) -> Any:
        """Poll until a decision on the call can be applied here; the stream that applies it, or the
        MCP result when the run ended elsewhere (expired by another process's sweep, say).

        Sends an MCP progress notification at once and every ``progress_seconds`` (clients that reset
        their time-out on progress keep waiting), and expires the call itself once its deadline passed."""
        assert self.agent is not None and self.runtime is not None
        started = time.monotonic()
        last: float | None = None
        deadline = next((c.expires_at for c in await self.store.get_calls(run_id) if c.tool_call_id == call_id), None)
        while True:
            stream = await self.runtime.adopt(self.agent, run_id=run_id, tool_call_id=call_id)
            if stream is not None:
                return stream
            if await self.store.get_run(run_id) is None:
                return await self._ended_elsewhere(run_id, call_id)
            now = time.monotonic()
            if ctx is not None and (last is None or now - last >= self.progress_seconds):
                last = now
                with contextlib.suppress(Exception):  # a client without a progress token: a no-op
                    await ctx.session.report_progress(round(now - started, 1), message="waiting for approval in Warden")
            if deadline is not None and time.time() > deadline:
                await self.runtime.sweep()  # fail-closed here, where the agent lives; the next turn sees it
            await asyncio.sleep(self.poll_seconds)

    async def _ended_elsewhere(self, run_id: str, call_id: str) -> Any:
        """The run is gone from the store: the audit trail says how the call ended."""
        audit = await self.store.audit_log(run_id, call_id)
        last = audit[-1] if audit else None
        if last is not None and last.decision == "expired":
            return _error(EXPIRED_TEXT)
        if last is not None and last.decision == "declined":
            return _error(f"{DECLINED_PREFIX}: {last.reason}" if last.reason else DECLINED_PREFIX)
        return _error("Warden: the call ended without a result")

    # -- gated calls through a Warden server (``--server``; warden_server.external) --------------
    async def _call_remote(self, name: str, arguments: dict[str, Any], ctx: Any) -> Any:
        spec = self.tools.mcp_tools[name]
        tool = spec.model_dump(by_alias=True, mode="json", exclude_none=True)
        state = await self.warden.register_mcp_call(
            self.agent_id,
            tool,
            arguments,
            approval_timeout=self.approval_timeout,
            server=self.tools.server_name or self.tools.describe(),
        )
        call_id, secret = state["toolCallId"], state["secret"]
        try:
            state = await self._poll_remote(state, call_id, secret, ctx)
        except asyncio.CancelledError:
            import anyio

            with anyio.CancelScope(shield=True), contextlib.suppress(Exception):
                await self.warden.withdraw_mcp_call(call_id, secret)
            raise
        status = state["status"]
        if status == "execute":
            return await self._execute_remote(name, state, secret)
        if status == "declined":
            return _error(f"{DECLINED_PREFIX}: {state['reason']}" if state.get("reason") else DECLINED_PREFIX)
        if status == "expired":
            return _error(EXPIRED_TEXT)
        return _error(f"Warden: {state.get('error') or 'the call ended without a result'}")

    async def _poll_remote(self, state: dict[str, Any], call_id: str, secret: str, ctx: Any) -> dict[str, Any]:
        """Poll the server until the call is no longer pending (progress notifications meanwhile)."""
        started = time.monotonic()
        last: float | None = None
        while state["status"] == "pending":
            now = time.monotonic()
            if ctx is not None and (last is None or now - last >= self.progress_seconds):
                last = now
                with contextlib.suppress(Exception):
                    await ctx.session.report_progress(round(now - started, 1), message="waiting for approval in Warden")
            await asyncio.sleep(self.poll_seconds)
            try:
                state = await self.warden.poll_mcp_call(call_id, secret)
            except WardenError as error:  # the server lost the call (it restarted): nothing ran
                return {"status": "error", "error": f"the Warden server lost this call ({error}); nothing ran"}
            except httpx.TransportError:
                continue  # the server is unreachable for now: keep asking
        return state

    async def _execute_remote(self, name: str, state: dict[str, Any], secret: str) -> Any:
        """Approved on the server: run the upstream tool with the arguments it approved, post its result."""
        call_id = state["toolCallId"]

        async def keep_alive() -> None:  # the server withdraws calls nobody polls
            while True:
                await asyncio.sleep(self.poll_seconds * 5)
                with contextlib.suppress(Exception):
                    await self.warden.poll_mcp_call(call_id, secret)

        alive = asyncio.get_running_loop().create_task(keep_alive())
        try:
            try:
                raw = await self.tools.call(name, state.get("args") or {})
            except Exception as error:  # the upstream went away: the MCP client and the server are told
                raw = _error(f"Warden: the upstream call failed: {type(error).__name__}: {error}")
        finally:
            alive.cancel()
        with contextlib.suppress(Exception):  # the client gets the result even if the server is gone
            await self.warden.complete_mcp_call(
                call_id, secret, raw.model_dump(by_alias=True, mode="json", exclude_none=True)
            )
        return raw

    async def _withdraw(self, run_id: str, call_id: str) -> None:
        """The MCP client cancelled: decline the waiting call (audited), unless it was decided meanwhile."""
        import anyio

        assert self.agent is not None and self.runtime is not None
        with anyio.CancelScope(shield=True):
            stream: Any
            try:
                stream = await self.runtime.decline_tool_call(
                    run_id=run_id, tool_call_id=call_id, reason=CANCELLED_REASON
                )
            except WardenError:  # decided elsewhere meanwhile: apply that decision (it was taken)
                stream = await self.runtime.adopt(self.agent, run_id=run_id, tool_call_id=call_id)
            if stream is not None:
                await stream.wait()
            self._raw.pop(call_id, None)


async def _outcome(stream: Any, call_id: str, raw: dict[str, Any]) -> Any:
    """Read a stream to its end; the MCP result for ``call_id`` (the upstream's own result when the
    tool ran), or None when the run suspended for approval."""
    import mcp.types as types

    result: Any = None
    async for chunk in stream.full_stream:
        p: Any = chunk.payload
        if chunk.type == "tool-call-approval":
            return None
        if getattr(p, "tool_call_id", None) != call_id:
            if chunk.type == "error" and result is None:
                result = _error(f"Warden: {p.error}")
            continue
        if chunk.type == "tool-result":
            result = raw.pop(call_id, None) or types.CallToolResult(
                content=[types.TextContent(type="text", text=json.dumps(p.result))]
            )
        elif chunk.type == "tool-error":
            result = raw.pop(call_id, None) or _error(str(p.error))
        elif chunk.type == "tool-call-expired":
            result = _error(EXPIRED_TEXT)
        elif chunk.type == "tool-output-denied":
            reason = f": {p.reason}" if p.reason else ""
            result = _error(f"{DECLINED_PREFIX}{reason}")
    return result


def _alive(pid: Any) -> bool:
    if not isinstance(pid, int) or pid <= 0:
        return False
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _error(text: str) -> Any:
    import mcp.types as types

    return types.CallToolResult(content=[types.TextContent(type="text", text=text)], is_error=True)


def _replay(messages: list[Message], info: ModelRequestInfo) -> ModelResponse:
    """The proxy's model: the MCP client's call, exactly; then done."""
    if messages and messages[-1].role == "user":
        request = json.loads(messages[-1].content)
        return ModelResponse(
            tool_calls=[ToolCall(id=request["tool_call_id"], name=request["tool"], args=request["arguments"])]
        )
    return ModelResponse(text="")
