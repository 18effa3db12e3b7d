"""External calls: a gated MCP call that a remote ``warden mcp-proxy --server URL`` waits on here.

The proxy holds the upstream MCP connection; this server holds the store. For each gated call
the proxy registers (tool definition, arguments, deadline) this module starts a run exactly as
a local proxy does: agent ``mcp:<name>`` with that one tool (its JSON Schema validates the
arguments and any edit), a model that replays the call, ``request_context["warden_handover"]``.
So the fingerprint, the audit, grants and the deadline are the ones of any run.

The run's tool ``execute`` is remote: once a decision is applied here (recorded by this server's
decision routes, the console or the CLI and adopted here, like the local proxy does), the call's
status becomes ``execute`` with the arguments to run (edited ones included); the proxy, which
polls ``GET /api/mcp/calls/{toolCallId}``, runs the upstream tool and posts its MCP result, and
the run ends. Declined and expired calls never reach ``execute``.

The proxy polls while it waits; a call nobody polled for ``stale_seconds`` is withdrawn (declined,
audited) when still pending, or failed when its tool was running (the proxy went away). Calls
live in this process: after a restart of the server the proxy's poll answers 404 and the proxy
tells its MCP client; the run left pending is declined by the next registration for that agent.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import secrets
import socket
import time
import uuid
from dataclasses import dataclass, field
from typing import Any, Literal

import jsonschema
from pydantic import BaseModel

from agent_core import Agent, Runtime
from agent_core.errors import AgentNotFound, InvalidRequest, SnapshotNotFound, WardenError
from agent_core.handover import HANDOVER_KEY, HANDOVER_TOOLS_KEY, declare_tools
from agent_core.json_input import input_model
from agent_core.mcp import result_value
from agent_core.models import FunctionModel, Message, ModelRequestInfo, ModelResponse, ToolCall
from agent_core.tools import ToolContext, create_tool

Status = Literal["pending", "execute", "declined", "expired", "done", "error"]
#: the prefix of agent ids of external calls (so they never collide with hosted agents).
AGENT_PREFIX = "mcp:"
WITHDRAWN_REASON = "cancelled by the MCP client"
STALE_REASON = "the MCP proxy that registered this call stopped polling the Warden server"
ORPHANED_REASON = "the Warden server that held this call restarted; the MCP proxy's request is gone"


class CallNotFound(SnapshotNotFound):
    """No external call with this id in this server process (never registered, or ended)."""


@dataclass
class ExternalCall:
    """One registered call, as the proxy sees it (``GET /api/mcp/calls/{toolCallId}``)."""

    tool_call_id: str
    agent_id: str
    tool_name: str
    secret: str
    run_id: str = ""
    status: Status = "pending"
    fingerprint: str | None = None
    expires_at: float | None = None
    args: dict[str, Any] | None = None
    reason: str | None = None
    error: str | None = None
    seen: float = field(default_factory=time.monotonic)
    changed: asyncio.Event = field(default_factory=asyncio.Event)
    result: asyncio.Future[Any] | None = None
    task: asyncio.Task[None] | None = None
    #: the run's agent here (its one tool validates edited arguments of decisions recorded by this server)
    agent: Any = None

    def set(self, status: Status, **fields: Any) -> None:
        self.status = status
        for k, v in fields.items():
            setattr(self, k, v)
        self.changed.set()

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "toolCallId": self.tool_call_id,
            "runId": self.run_id,
            "agentId": self.agent_id,
            "toolName": self.tool_name,
            "status": self.status,
        }
        for key, value in (
            ("fingerprint", self.fingerprint),
            ("expiresAt", self.expires_at),
            ("args", self.args),
            ("reason", self.reason),
            ("error", self.error),
        ):
            if value is not None:
                out[key] = value
        return out


class ExternalCalls:
    """The external calls of one server process, over the server runtime's store."""

    def __init__(self, runtime: Any, *, poll_seconds: float = 0.2, stale_seconds: float = 30.0) -> None:
        self.main = runtime
        self.poll_seconds = poll_seconds
        self.stale_seconds = stale_seconds
        self.calls: dict[str, ExternalCall] = {}
        self._orphans_checked: set[str] = set()

    @property
    def store(self) -> Any:
        return self.main.store

    # -- the proxy's requests ------------------------------------------------------------------
    async def register(
        self,
        agent_id: str,
        tool: dict[str, Any],
        arguments: dict[str, Any],
        *,
        approval_timeout: float | None,
        server: str | None,
    ) -> ExternalCall:
        """Start the run of one gated call; answers once it waits, runs (a grant) or failed."""
        if not agent_id.startswith(AGENT_PREFIX) or len(agent_id) == len(AGENT_PREFIX):
            raise InvalidRequest(f"an external agent id is {AGENT_PREFIX}<name>, not {agent_id!r}")
        with contextlib.suppress(AgentNotFound):
            self.main.get_agent(agent_id)
            raise InvalidRequest(f"agent {agent_id!r} is hosted by this server: it takes no external calls")
        name = str(tool.get("name") or "")
        if not name:
            raise InvalidRequest("tool.name is required")
        if agent_id not in self._orphans_checked:
            self._orphans_checked.add(agent_id)
            await self._decline_orphans(agent_id)
        call = ExternalCall(
            tool_call_id=f"mcp-{uuid.uuid4().hex[:16]}",
            agent_id=agent_id,
            tool_name=name,
            secret=secrets.token_urlsafe(24),
            result=asyncio.get_running_loop().create_future(),
        )
        agent = call.agent = self._agent(call, tool)
        runtime = Runtime({agent_id: agent}, self.store, lease_seconds=self.main.lease_seconds)
        request = json.dumps({"tool": name, "arguments": arguments, "tool_call_id": call.tool_call_id})
        context = {
            HANDOVER_KEY: True,
            HANDOVER_TOOLS_KEY: declare_tools(agent.tools),
            "mcp_server": server or agent_id[len(AGENT_PREFIX) :],
            "proxy": {"via": "server", "host": socket.gethostname(), "pid": os.getpid()},
        }
        stream = await agent.stream(request, request_context=context, max_steps=2, approval_timeout=approval_timeout)
        call.run_id = stream.run_id
        self.calls[call.tool_call_id] = call
        call.task = asyncio.get_running_loop().create_task(self._drive(call, agent, runtime, stream))
        await call.changed.wait()
        return call

    def agent_of_run(self, run_id: str) -> Agent | None:
        """The agent of a live external call's run (None when this process holds no such call)."""
        found: Agent | None = next((c.agent for c in self.calls.values() if c.run_id == run_id), None)
        return found

    def get(self, tool_call_id: str, secret: str | None = None) -> ExternalCall:
        call = self.calls.get(tool_call_id)
        if call is None or (secret is not None and not secrets.compare_digest(secret, call.secret)):
            raise CallNotFound(f"no external call {tool_call_id!r} in this server process")
        call.seen = time.monotonic()
        return call

    async def complete(self, tool_call_id: str, secret: str, result: dict[str, Any]) -> ExternalCall:
        """The proxy ran the tool: its MCP ``CallToolResult`` (JSON) ends the run."""
        call = self.get(tool_call_id, secret)
        if call.status != "execute" or call.result is None or call.result.done():
            raise InvalidRequest(f"external call {tool_call_id!r} is {call.status}, not waiting for a result")
        call.result.set_result(result)
        if call.task is not None:
            await asyncio.shield(call.task)
        return call

    async def withdraw(self, tool_call_id: str, secret: str, reason: str = WITHDRAWN_REASON) -> ExternalCall:
        """The MCP client cancelled: decline the call when still pending (audited)."""
        call = self.get(tool_call_id, secret)
        if call.status == "pending":
            with contextlib.suppress(WardenError):  # decided meanwhile: that decision stands
                await (await self.main.decline_tool_call(run_id=call.run_id, reason=reason)).wait()
        elif call.status == "execute" and call.result is not None and not call.result.done():
            call.result.set_exception(RuntimeError("the MCP client cancelled while the tool ran"))
        if call.task is not None:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(asyncio.shield(call.task), 10 * self.stale_seconds)
        return call

    async def aclose(self) -> None:
        for call in list(self.calls.values()):
            if call.task is not None:
                call.task.cancel()

    # -- internals --------------------------------------------------------------------------------
    def _agent(self, call: ExternalCall, tool: dict[str, Any]) -> Agent:
        name = call.tool_name

        async def execute(inp: BaseModel, ctx: ToolContext) -> Any:
            assert call.result is not None
            call.set("execute", args=inp.model_dump())
            while True:  # the proxy polls while the upstream tool runs; one that stopped never answers
                with contextlib.suppress(TimeoutError):
                    raw = await asyncio.wait_for(asyncio.shield(call.result), self.poll_seconds * 5)
                    return result_value(_ToolResult(raw))
                if time.monotonic() - call.seen > self.stale_seconds:
                    raise RuntimeError(f"{STALE_REASON} while the tool ran: its outcome is unknown")

        schema = tool.get("inputSchema") or {}
        try:
            if not isinstance(schema, dict):
                raise InvalidRequest("tool.inputSchema must be a JSON Schema object")
            jsonschema.validators.validator_for(schema).check_schema(schema)
            remote = create_tool(
                id=name,
                description=str(tool.get("description") or tool.get("title") or ""),
                input_schema=input_model(name, schema),
                execute=execute,
                require_approval=True,
            )
        except (jsonschema.SchemaError, WardenError, ValueError, TypeError) as exc:
            if isinstance(exc, InvalidRequest):
                raise
            raise InvalidRequest(f"tool {name!r} cannot be registered: {exc}") from exc
        return Agent(
            id=call.agent_id,
            name=f"MCP proxy for {call.agent_id[len(AGENT_PREFIX) :]}",
            description="MCP calls of a remote warden mcp-proxy",
            model=FunctionModel(_replay, model_id="mcp-client"),
            tools={name: remote},
        )

    async def _drive(self, call: ExternalCall, agent: Agent, runtime: Runtime, stream: Any) -> None:
        try:
            if await self._read(call, stream) == "suspended":
                await self._wait(call, agent, runtime)
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # a store error: the proxy is told
            call.set("error", error=f"{type(exc).__name__}: {exc}")
        finally:
            if call.status in ("pending", "execute"):
                call.set("error", error=call.error or "the call ended without a result")
            asyncio.get_running_loop().call_later(self.stale_seconds, self.calls.pop, call.tool_call_id, None)

    async def _read(self, call: ExternalCall, stream: Any) -> str:
        async for chunk in stream.full_stream:
            p: Any = chunk.payload
            mine = getattr(p, "tool_call_id", None) == call.tool_call_id
            if chunk.type == "tool-call-approval" and mine:
                calls = await self.store.get_calls(call.run_id)
                expires = next((c.expires_at for c in calls if c.tool_call_id == call.tool_call_id), None)
                call.set("pending", fingerprint=p.fingerprint, expires_at=expires)
                return "suspended"
            if chunk.type == "tool-output-denied" and mine:
                call.set("declined", reason=p.reason)
            elif chunk.type == "tool-call-expired" and mine:
                call.set("expired")
            elif chunk.type in ("tool-result", "tool-error") and mine and call.status == "execute":
                call.set("done")
            elif chunk.type == "tool-error" and mine:
                call.set("error", error=str(p.error))
            elif chunk.type == "error" and call.status in ("pending", "execute"):
                call.set("error", error=str(p.error))
        return "ended"

    async def _wait(self, call: ExternalCall, agent: Agent, runtime: Runtime) -> None:
        while True:
            if time.monotonic() - call.seen > self.stale_seconds:
                with contextlib.suppress(WardenError):
                    await (await self.main.decline_tool_call(run_id=call.run_id, reason=STALE_REASON)).wait()
            applied = await runtime.adopt(agent, run_id=call.run_id, tool_call_id=call.tool_call_id)
            if applied is not None:
                await self._read(call, applied)
                return
            if await self.store.get_run(call.run_id) is None:  # ended elsewhere: the audit says how
                audit = await self.store.audit_log(call.run_id, call.tool_call_id)
                last = audit[-1] if audit else None
                if last is not None and last.decision == "expired":
                    call.set("expired")
                elif last is not None and last.decision == "declined":
                    call.set("declined", reason=last.reason)
                else:
                    call.set("error", error="the call ended without a result")
                return
            if call.expires_at is not None and time.time() > call.expires_at:
                await runtime.sweep()  # fail-closed; the next turn finds the run ended
            await asyncio.sleep(self.poll_seconds)

    async def _decline_orphans(self, agent_id: str) -> None:
        """Pending calls this host's earlier server processes registered for ``agent_id``: nobody waits."""
        rows, _ = await self.store.list_suspended(agent_id=agent_id, per_page=1000)
        for row in rows:
            run = await self.store.get_run(row.run.run_id)
            try:
                proxy = json.loads(run.snapshot)["request_context"]["proxy"] if run else None
            except (ValueError, KeyError, TypeError):
                continue
            if not proxy or proxy.get("via") != "server" or proxy.get("host") != socket.gethostname():
                continue
            if proxy.get("pid") == os.getpid() or _alive(proxy.get("pid")):
                continue
            with contextlib.suppress(WardenError):
                await (await self.main.decline_tool_call(run_id=row.run.run_id, reason=ORPHANED_REASON)).wait()


class _ToolResult:
    """An MCP ``CallToolResult`` posted as JSON, read the way ``agent_core.mcp.result_value`` reads one."""

    def __init__(self, raw: dict[str, Any]) -> None:
        self.content = [c for c in raw.get("content") or [] if isinstance(c, dict)]
        self.structured_content = raw.get("structuredContent")
        self.is_error = bool(raw.get("isError"))


def _alive(pid: Any) -> bool:
    if not isinstance(pid, int) or pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _replay(messages: list[Message], info: ModelRequestInfo) -> ModelResponse:
    """The call the proxy registered, exactly; then done."""
    if messages and messages[-1].role == "user":
        request = json.loads(messages[-1].content)
        return ModelResponse(
            tool_calls=[ToolCall(id=request["tool_call_id"], name=request["tool"], args=request["arguments"])]
        )
    return ModelResponse(text="")
