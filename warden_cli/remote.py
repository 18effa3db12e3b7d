"""``warden runs ... --server URL``: the calls the headless commands make on a ``Runtime``,
answered by a Warden server through the client SDK (``warden_client``).

The commands in ``warden_cli.runs`` and ``warden_cli.audit`` are written once against the runtime's
method names; ``RemoteRuntime`` has the same names, so local and remote print the same thing.
Decisions go to the route of the run's own agent (asked of the server first). The actor of a
remote decision is the server's to record (the token's name), so there is no ``actor=`` here.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from agent_core.views import AuditPage, Grant, SuspendedRun, SuspendedRunList
    from warden_client import RemoteAgentStream
    from warden_types.audit import ChainReport


class RemoteRuntime:
    """The subset of ``Runtime`` the CLI uses, over HTTP. ``async with`` closes the connection."""

    #: the server records who decided (its token's name); the CLI's --actor does not apply
    actor: str | None = None

    def __init__(self, base_url: str, token: str | None = None) -> None:
        from warden_client import WardenClient  # httpx is imported only when a server is used

        self.client = WardenClient(base_url, token=token)

    async def __aenter__(self) -> RemoteRuntime:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.client.aclose()

    # -- reading --------------------------------------------------------------------------------
    async def list_suspended_runs(self, **filters: Any) -> SuspendedRunList:
        return await self.client.list_suspended_runs(**filters)

    async def get_suspended_run(self, run_id: str) -> SuspendedRun:
        return await self.client.get_suspended_run(run_id)

    async def resolve_id(self, prefix: str, *, run_id: str | None = None) -> str:
        return await self.client.resolve_id(prefix, run_id=run_id)

    async def run_context(self, run_id: str) -> Any:
        from agent_core.decision_context import RunContextView

        return RunContextView.from_json(await self.client.get_run_context(run_id))

    async def audit_log(self, *, since: float | None = None, **filters: Any) -> AuditPage:
        when = None if since is None else datetime.fromtimestamp(since, UTC)
        return await self.client.audit_log(since=when, **filters)

    async def verify_audit(self) -> ChainReport:
        return await self.client.verify_audit()

    # -- deciding -------------------------------------------------------------------------------
    async def _agent(self, run_id: str) -> Any:
        return self.client.agent((await self.client.get_suspended_run(run_id)).agent_id)

    async def approve_tool_call(self, *, run_id: str, actor: str | None = None, **kw: Any) -> RemoteAgentStream:
        return await (await self._agent(run_id)).approve_tool_call(run_id=run_id, **kw)

    async def decline_tool_call(self, *, run_id: str, actor: str | None = None, **kw: Any) -> RemoteAgentStream:
        return await (await self._agent(run_id)).decline_tool_call(run_id=run_id, **kw)

    async def resume_stream(
        self, resume_data: Any, *, run_id: str, tool_call_id: str | None = None, actor: str | None = None
    ) -> RemoteAgentStream:
        agent = await self._agent(run_id)
        return await agent.resume_stream(resume_data, run_id=run_id, tool_call_id=tool_call_id)

    async def recover(self) -> int:
        return await self.client.recover()

    async def sweep(self) -> int:
        return await self.client.sweep()

    # -- grants ---------------------------------------------------------------------------------
    async def list_grants(self) -> list[Grant]:
        return await self.client.list_grants()

    async def grant(self, tool_name: str, *, actor: str | None = None, **kw: Any) -> Grant:
        return await self.client.grant(tool_name, **kw)

    async def revoke_grant(self, grant_id: str) -> None:
        await self.client.revoke_grant(grant_id)


__all__ = ["RemoteRuntime"]
