"""The console's only door to a runtime.

Screens and widgets talk to a ``ConsoleBackend``; ``LocalBackend`` wraps an
in-process ``Runtime``; ``RemoteBackend`` talks to a Warden server over HTTP
(``warden --server URL``) with the client SDK, through the same small protocol;
``tui.deferred_backend`` holds either until it has loaded, after the first frame.
The value types here are plain dataclasses so the console does not depend on
the runtime's internal classes, and can be built from a live chunk or from a
stored run alike.

No textual import here: the console's start (``tui.console_start``, ``tui.launch``) uses it before the UI.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, Literal, Protocol, runtime_checkable

if TYPE_CHECKING:  # pydantic models: loaded with the runtime, not before the first frame
    from agent_core.chunks import Chunk
    from agent_core.decision_context import RunContextView
    from tui.components.schedules import Maintenance

Kind = Literal["approval", "input"]

#: Error codes meaning a call is no longer pending (decided by someone else, or its run ended).
GONE = frozenset(
    {"AGENT_TOOL_CALL_ALREADY_DECIDED", "AGENT_RESUME_NO_SNAPSHOT_FOUND", "AGENT_RESUME_TOOL_CALL_NOT_SUSPENDED"}
)


@dataclass(frozen=True)
class AgentInfo:
    """One agent of the runtime, as the picker shows it. ``id`` is the registry key."""

    id: str
    name: str
    model_id: str
    is_demo: bool
    description: str = ""
    #: Prompts to try (the demo agents' own; an agent may set ``examples``).
    examples: tuple[str, ...] = ()


@dataclass(frozen=True)
class PendingCall:
    """A tool call waiting for a person: an approval (``kind="approval"``) or resume data (``"input"``)."""

    run_id: str
    tool_call_id: str
    tool_name: str
    args: dict[str, Any]
    kind: Kind
    fingerprint: str | None = None
    suspend_payload: Any = None
    resume_schema: dict[str, Any] | None = None
    agent_path: tuple[str, ...] = ()
    #: approvals with a deadline (``approval_timeout``): when the sweep expires the call.
    expires_at: datetime | None = None
    #: the policy rule that gated the call, the distinct approvers it needs (four eyes: 2+) and the
    #: actors who voted so far (names: untrusted text, shown escaped).
    policy_rule: str | None = None
    approvers_required: int = 1
    approvals: tuple[str, ...] = ()

    @property
    def key(self) -> str:
        return f"{self.run_id}:{self.tool_call_id}"

    @classmethod
    def from_chunk(cls, chunk: Chunk) -> PendingCall:
        """From a ``tool-call-approval`` or ``tool-call-suspended`` chunk."""
        p: Any = chunk.payload
        if chunk.type == "tool-call-approval":
            return cls(
                chunk.run_id,
                p.tool_call_id,
                p.tool_name,
                dict(p.args),
                "approval",
                fingerprint=p.fingerprint,
                resume_schema=p.resume_schema,
                agent_path=tuple(p.agent_path),
                expires_at=p.expires_at,
                policy_rule=getattr(p, "policy_rule", None),
                approvers_required=getattr(p, "approvers_required", 1),
                approvals=_voters(getattr(p, "approvals", None)),
            )
        if chunk.type == "tool-call-suspended":
            return cls(
                chunk.run_id,
                p.tool_call_id,
                p.tool_name,
                dict(p.args),
                "input",
                suspend_payload=p.suspend_payload,
                resume_schema=p.resume_schema,
                agent_path=tuple(p.agent_path),
            )
        raise ValueError(f"chunk {chunk.type!r} is not a pending decision")


@dataclass(frozen=True)
class GrantSpec:
    """What the grant choice asks for: ``Runtime.grant``'s keyword arguments."""

    scope: Literal["run", "thread", "resource", "agent"]
    scope_id: str | None = None
    agent_id: str | None = None
    args_match: dict[str, Any] | None = None
    #: seconds; None: until revoked (only when the operator chose it explicitly).
    expires_in: float | None = 3600
    #: a command tool's grant ("always allow `git status`"): ``Runtime.grant``'s ``command_match``.
    command_match: dict[str, Any] | None = None

    def kwargs(self) -> dict[str, Any]:
        """``Runtime.grant`` / ``WardenClient.grant``'s keyword arguments (the same names)."""
        out: dict[str, Any] = {
            "scope": self.scope,
            "scope_id": self.scope_id,
            "agent_id": self.agent_id,
            "args_match": self.args_match,
            "expires_in": self.expires_in,
        }
        if self.command_match is not None:
            out["command_match"] = self.command_match
        return out

    def describe(self, tool_name: str) -> str:
        """The rule in words, the same wording as ``Grant.describe()``."""
        from agent_core.views import describe_grant

        return describe_grant(
            tool_name,
            self.scope,
            self.scope_id,
            self.agent_id,
            self.args_match,
            self.expires_in,
            command_match=self.command_match,
        )


def _grants_allowed(agents: Any, tool_name: str) -> bool:
    """No tool (or delegation) of that name in these agents or their sub-agents forbids grants."""
    seen: set[int] = set()
    stack = list(agents)
    while stack:
        agent = stack.pop()
        if id(agent) in seen:
            continue
        seen.add(id(agent))
        tool = (getattr(agent, "tools", None) or {}).get(tool_name)
        if tool is None:
            tool = (getattr(agent, "delegates", None) or {}).get(tool_name)
        if tool is not None and not getattr(tool, "allow_grants", True):
            return False
        stack.extend((getattr(agent, "delegates", None) or {}).values())
    return True


@dataclass(frozen=True)
class PendingRun:
    """A suspended run and its pending calls (newest storage state)."""

    run_id: str
    agent_id: str
    thread_id: str | None
    resource_id: str | None
    suspended_at: datetime
    calls: tuple[PendingCall, ...] = field(default_factory=tuple)


@dataclass(frozen=True)
class PendingPage:
    runs: list[PendingRun]
    total: int
    #: 0-based here; the picker and the CLI show it from 1.
    page: int
    per_page: int
    #: pending calls per kind (``approval``, ``input``) under the same filters, when asked for.
    counts: dict[str, int] | None = None


@dataclass(frozen=True)
class PendingQuery:
    """The picker's filters and order, applied by the store (a query, never a scan here).

    ``text``: words that must all appear in the agent, thread, tool name or arguments;
    ``tool_name`` and ``kind`` are exact; ``sort`` is ``age`` (newest first), ``agent`` or ``tool``.
    """

    text: str | None = None
    agent_id: str | None = None
    thread_id: str | None = None
    tool_name: str | None = None
    kind: Kind | None = None
    sort: Literal["age", "agent", "tool"] = "age"

    def params(self) -> dict[str, Any]:
        """Keyword arguments of ``list_suspended_runs`` (runtime and client alike)."""
        return {
            "agent_id": self.agent_id,
            "thread_id": self.thread_id,
            "query": self.text or None,
            "tool_name": self.tool_name,
            "kind": self.kind,
            "sort": self.sort,
        }


class RunStream(Protocol):
    """What a started or resumed run gives back: its id, then chunks."""

    @property
    def run_id(self) -> str: ...

    @property
    def full_stream(self) -> AsyncIterator[Chunk]: ...


@runtime_checkable
class ConsoleBackend(Protocol):
    """Everything the console does with a runtime."""

    #: Where pending runs live, for the status bar (a file path or a URL).
    store_label: str

    def list_agents(self) -> list[AgentInfo]: ...

    async def start_run(
        self, agent_id: str, prompt: str, *, thread_id: str | None = None, resource_id: str | None = None
    ) -> RunStream: ...

    async def approve(
        self, run_id: str, tool_call_id: str, fingerprint: str | None, *, args: dict[str, Any] | None = None
    ) -> RunStream:
        """``args``: run the call with these edited arguments (``ToolArgsInvalid`` if they fail the schema)."""
        ...

    async def decline(self, run_id: str, tool_call_id: str, reason: str | None) -> RunStream: ...

    async def resume(self, run_id: str, tool_call_id: str, data: dict[str, Any]) -> RunStream: ...

    async def list_pending(
        self,
        *,
        page: int = 0,
        per_page: int = 50,
        agent_id: str | None = None,
        thread_id: str | None = None,
        resource_id: str | None = None,
        query: PendingQuery | None = None,
        with_counts: bool = False,
    ) -> PendingPage:
        """One page of pending runs; ``query`` (the picker's filters) wins over the keyword filters."""
        ...

    async def get_run(self, run_id: str) -> PendingRun: ...

    async def audit(self, *, last: int = 200) -> list[Any]:
        """The newest ``last`` audit entries (``agent_core.views.AuditEntry``), oldest first."""
        ...

    async def run_context(self, run_id: str) -> RunContextView:
        """The stored run's calls with their context, its conversation, and its decisions."""
        ...

    def grants_allowed(self, tool_name: str) -> bool:
        """False when the tool was created with ``allow_grants=False`` (the grant key says so)."""
        ...

    def command_argument(self, tool_name: str) -> str | None:
        """The argument of ``tool_name`` that holds a shell command line, per the policy's
        ``[commands].shell`` (None: not a shell tool, or no policy known here)."""
        ...

    async def grant(self, tool_name: str, spec: GrantSpec) -> Any:
        """Create a grant (``agent_core.views.Grant``) as ``Runtime.grant`` does."""
        ...

    async def list_grants(self) -> list[Any]:
        """The live grants (``agent_core.views.Grant``), oldest first."""
        ...

    async def revoke_grant(self, grant_id: str) -> None: ...

    @property
    def maintenance(self) -> Maintenance | None:
        """A local runtime's recovery and deadline sweep, which the console schedules
        (``tui.components.schedules``); None when a server keeps the store."""
        ...

    async def aclose(self) -> None: ...


async def _last_entries(read: Any, last: int) -> list[Any]:
    """Page through ``read(after=, limit=)`` (an ``AuditPage`` source) keeping the newest ``last`` entries."""
    import collections

    kept: collections.deque[Any] = collections.deque(maxlen=last)
    after = 0
    while True:
        page = await read(after=after, limit=1000)
        kept.extend(page.entries)
        if page.next_after is None:
            return list(kept)
        after = page.next_after


def listing_filters(query: PendingQuery | None, agent_id: str | None, thread_id: str | None) -> dict[str, Any]:
    """The keyword filters of ``list_suspended_runs``: ``query`` (the picker's) over the keyword filters."""
    if query is None:
        return {"agent_id": agent_id, "thread_id": thread_id}
    out = query.params()
    out["agent_id"] = out["agent_id"] or agent_id
    out["thread_id"] = out["thread_id"] or thread_id
    return out


def _voters(approvals: Any) -> tuple[str, ...]:
    """The actors of a call's votes (``[{actor, at}]``, from a listing or an approval chunk)."""
    return tuple(str(a.get("actor")) for a in approvals or () if isinstance(a, dict))


def _kind(call: Any) -> Kind:
    return "approval" if getattr(call, "requires_approval", False) else "input"


def pending_run_from_runtime(run: Any) -> PendingRun:
    """Convert the runtime's ``SuspendedRun`` into the console's ``PendingRun``."""
    suspended_at = run.suspended_at
    if isinstance(suspended_at, int | float):
        suspended_at = datetime.fromtimestamp(suspended_at, UTC)
    elif isinstance(suspended_at, str):
        suspended_at = datetime.fromisoformat(suspended_at)
    if suspended_at.tzinfo is None:
        suspended_at = suspended_at.replace(tzinfo=UTC)
    calls = tuple(
        PendingCall(
            run_id=run.run_id,
            tool_call_id=c.tool_call_id,
            tool_name=c.tool_name,
            args=dict(c.args or {}),
            kind=_kind(c),
            fingerprint=getattr(c, "fingerprint", None),
            suspend_payload=getattr(c, "suspend_payload", None),
            resume_schema=getattr(c, "resume_schema", None),
            agent_path=tuple(getattr(c, "agent_path", None) or ()),
            expires_at=getattr(c, "expires_at", None),
            policy_rule=getattr(c, "policy_rule", None),
            approvers_required=getattr(c, "approvers_required", 1),
            approvals=_voters(getattr(c, "approvals", None)),
        )
        for c in run.tool_calls
    )
    return PendingRun(run.run_id, run.agent_id, run.thread_id, run.resource_id, suspended_at, calls)


def _examples(key: str, agent: Any, model: Any) -> tuple[str, ...]:
    own = getattr(agent, "examples", None)
    if own:
        return tuple(str(e) for e in own)
    if getattr(model, "is_demo", False):
        from warden_demo.agents import EXAMPLES

        return EXAMPLES.get(key, ())
    return ()


class LocalBackend:
    """A ``ConsoleBackend`` over an in-process ``agent_core.Runtime``."""

    def __init__(self, runtime: Any, *, store_label: str | None = None) -> None:
        self.runtime = runtime
        if store_label is None:
            store = getattr(runtime, "store", None)
            path = getattr(store, "path", None)
            store_label = str(path) if path is not None else type(store).__name__
        self.store_label = store_label

    def list_agents(self) -> list[AgentInfo]:
        out = []
        for key, agent in self.runtime.agents.items():
            model = getattr(agent, "model", None)
            out.append(
                AgentInfo(
                    id=key,
                    name=getattr(agent, "name", key) or key,
                    model_id=getattr(model, "model_id", str(model)),
                    is_demo=bool(getattr(model, "is_demo", False)),
                    description=getattr(agent, "description", "") or "",
                    examples=_examples(key, agent, model),
                )
            )
        return out

    async def start_run(
        self, agent_id: str, prompt: str, *, thread_id: str | None = None, resource_id: str | None = None
    ) -> RunStream:
        agent = self.runtime.get_agent(agent_id)
        return await agent.stream(prompt, thread_id=thread_id, resource_id=resource_id)

    async def approve(
        self, run_id: str, tool_call_id: str, fingerprint: str | None, *, args: dict[str, Any] | None = None
    ) -> RunStream:
        return await self.runtime.approve_tool_call(
            run_id=run_id, tool_call_id=tool_call_id, fingerprint=fingerprint, args=args
        )

    async def decline(self, run_id: str, tool_call_id: str, reason: str | None) -> RunStream:
        return await self.runtime.decline_tool_call(run_id=run_id, tool_call_id=tool_call_id, reason=reason)

    async def resume(self, run_id: str, tool_call_id: str, data: dict[str, Any]) -> RunStream:
        return await self.runtime.resume_stream(data, run_id=run_id, tool_call_id=tool_call_id)

    async def list_pending(
        self,
        *,
        page: int = 0,
        per_page: int = 50,
        agent_id: str | None = None,
        thread_id: str | None = None,
        resource_id: str | None = None,
        query: PendingQuery | None = None,
        with_counts: bool = False,
    ) -> PendingPage:
        filters = listing_filters(query, agent_id, thread_id)
        result = await self.runtime.list_suspended_runs(
            **filters, resource_id=resource_id, page=page, per_page=per_page, with_counts=with_counts
        )
        runs = [pending_run_from_runtime(r) for r in result.runs]
        return PendingPage(runs, result.total, page, per_page, result.counts)

    async def get_run(self, run_id: str) -> PendingRun:
        return pending_run_from_runtime(await self.runtime.get_suspended_run(run_id))

    async def audit(self, *, last: int = 200) -> list[Any]:
        return await _last_entries(self.runtime.audit_log, last)

    async def run_context(self, run_id: str) -> RunContextView:
        from agent_core.decision_context import run_context

        return await run_context(self.runtime, run_id)

    def grants_allowed(self, tool_name: str) -> bool:
        return _grants_allowed(self.runtime.agents.values(), tool_name)

    def command_argument(self, tool_name: str) -> str | None:
        policy = self.runtime.policy
        return policy.commands.shell.get(tool_name) if policy is not None else None

    async def grant(self, tool_name: str, spec: GrantSpec) -> Any:
        return await self.runtime.grant(tool_name, **spec.kwargs())

    async def list_grants(self) -> list[Any]:
        return list(await self.runtime.list_grants())

    async def revoke_grant(self, grant_id: str) -> None:
        await self.runtime.revoke_grant(grant_id)

    @property
    def actor(self) -> str | None:
        return getattr(self.runtime, "actor", None)

    @property
    def maintenance(self) -> Maintenance | None:
        runtime = self.runtime
        return runtime if hasattr(runtime, "recover") and hasattr(runtime, "sweep") else None

    async def aclose(self) -> None:
        await self.runtime.aclose()


def _no_grants(agents: dict[str, Any]) -> frozenset[str]:
    """Tool names some agent lists with ``allowGrants: false`` (``GET /api/agents``)."""
    return frozenset(
        name
        for info in agents.values()
        for name, tool in (info.get("tools") or {}).items()
        if isinstance(tool, dict) and tool.get("allowGrants") is False
    )


def _agent_infos(agents: dict[str, Any]) -> list[AgentInfo]:
    """``GET /api/agents`` -> the console's agent list."""
    return [
        AgentInfo(
            id=key,
            name=info.get("name") or key,
            model_id=info.get("modelId") or "remote",
            is_demo=bool(info.get("isDemo", False)),
            description=info.get("description") or "",
        )
        for key, info in agents.items()
    ]


class RemoteBackend:
    """A ``ConsoleBackend`` over a Warden server: pending runs come from the server, decisions
    go to it, streams are shown live (server-sent events).

    Build it with ``await RemoteBackend.connect(url, token)`` (in a running loop) or
    ``RemoteBackend.open(url, token)`` (before one, as the CLI does): the agent list is read
    once there, because ``list_agents`` is synchronous. Decisions go to the route of the run's own
    agent (learned from listings, or asked of the server with ``GET /api/suspended-runs/{id}``).
    """

    def __init__(
        self, client: Any, agents: list[AgentInfo] | None = None, *, no_grants: frozenset[str] = frozenset()
    ) -> None:
        self.client = client
        self.store_label = client.base_url
        self._agents = list(agents or [])
        self._run_agent: dict[str, str] = {}
        #: tools the server lists with ``allowGrants: false`` (a sub-agent's unlisted tool: the server says).
        self._no_grants = no_grants

    @classmethod
    async def connect(cls, base_url: str, token: str | None = None, **client_options: Any) -> RemoteBackend:
        """Build it inside a running event loop (the one the console will run in)."""
        from warden_client import WardenClient  # the HTTP client is only loaded when a server is used

        client = WardenClient(base_url, token=token, **client_options)
        try:
            agents = await client.list_agents()
        except BaseException:
            await client.aclose()
            raise
        return cls(client, _agent_infos(agents), no_grants=_no_grants(agents))

    @classmethod
    def open(cls, base_url: str, token: str | None = None, **client_options: Any) -> RemoteBackend:
        """Build it before any event loop runs (``warden --server URL``): the agent list is read
        with a blocking request; the async client is bound to the console's loop on first use."""
        from warden_client import SyncWardenClient, WardenClient

        with SyncWardenClient(base_url, token=token) as probe:
            agents = probe.list_agents()
        return cls(
            WardenClient(base_url, token=token, **client_options), _agent_infos(agents), no_grants=_no_grants(agents)
        )

    def list_agents(self) -> list[AgentInfo]:
        return list(self._agents)

    async def _agent_of(self, run_id: str) -> Any:
        agent_id = self._run_agent.get(run_id)
        if agent_id is None:
            agent_id = (await self.client.get_suspended_run(run_id)).agent_id
            self._run_agent[run_id] = agent_id
        return self.client.agent(agent_id)

    async def start_run(
        self, agent_id: str, prompt: str, *, thread_id: str | None = None, resource_id: str | None = None
    ) -> RunStream:
        stream = await self.client.agent(agent_id).stream(prompt, thread_id=thread_id, resource_id=resource_id)
        self._run_agent[stream.run_id] = agent_id
        return stream

    async def approve(
        self, run_id: str, tool_call_id: str, fingerprint: str | None, *, args: dict[str, Any] | None = None
    ) -> RunStream:
        agent = await self._agent_of(run_id)
        return await agent.approve_tool_call(
            run_id=run_id, tool_call_id=tool_call_id, fingerprint=fingerprint, args=args
        )

    async def decline(self, run_id: str, tool_call_id: str, reason: str | None) -> RunStream:
        agent = await self._agent_of(run_id)
        return await agent.decline_tool_call(run_id=run_id, tool_call_id=tool_call_id, reason=reason)

    async def resume(self, run_id: str, tool_call_id: str, data: dict[str, Any]) -> RunStream:
        agent = await self._agent_of(run_id)
        return await agent.resume_stream(data, run_id=run_id, tool_call_id=tool_call_id)

    async def list_pending(
        self,
        *,
        page: int = 0,
        per_page: int = 50,
        agent_id: str | None = None,
        thread_id: str | None = None,
        resource_id: str | None = None,
        query: PendingQuery | None = None,
        with_counts: bool = False,
    ) -> PendingPage:
        filters = listing_filters(query, agent_id, thread_id)
        result = await self.client.list_suspended_runs(
            **filters, resource_id=resource_id, page=page, per_page=per_page, with_counts=with_counts
        )
        for run in result.runs:
            self._run_agent[run.run_id] = run.agent_id
        runs = [pending_run_from_runtime(r) for r in result.runs]
        return PendingPage(runs, result.total, page, per_page, result.counts)

    async def get_run(self, run_id: str) -> PendingRun:
        run = await self.client.get_suspended_run(run_id)
        self._run_agent[run_id] = run.agent_id
        return pending_run_from_runtime(run)

    async def audit(self, *, last: int = 200) -> list[Any]:
        return await _last_entries(self.client.audit_log, last)

    async def run_context(self, run_id: str) -> RunContextView:
        from agent_core.decision_context import RunContextView

        return RunContextView.from_json(await self.client.get_run_context(run_id))

    def grants_allowed(self, tool_name: str) -> bool:
        return tool_name not in self._no_grants

    def command_argument(self, tool_name: str) -> str | None:
        return None  # a server does not say its policy: the grant choice pins arguments

    async def grant(self, tool_name: str, spec: GrantSpec) -> Any:
        return await self.client.grant(tool_name, **spec.kwargs())

    async def list_grants(self) -> list[Any]:
        return list(await self.client.list_grants())

    async def revoke_grant(self, grant_id: str) -> None:
        await self.client.revoke_grant(grant_id)

    @property
    def maintenance(self) -> Maintenance | None:
        return None  # the server recovers and sweeps its own store

    async def aclose(self) -> None:
        await self.client.aclose()
