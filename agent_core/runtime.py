"""The runtime: agents plus the store their pending runs live in.

A thin facade: it starts runs (``agent_core.persist`` advances and stores
them), hands decisions to ``agent_core.decisions``, and lists pending runs.
It knows agents through the ``HostedAgent`` protocol and never imports
``agent_core.agent``.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Mapping
from typing import Any, Unpack, cast

from pydantic import BaseModel
from pydantic_core import to_jsonable_python

from agent_core import upkeep
from agent_core.autoresume import auto_resume
from agent_core.call_state import PolicyMode, RunState, policy_mode
from agent_core.decisions import Decisions
from agent_core.definition import HostedAgent
from agent_core.errors import AgentNotFound, GrantNotAllowed, GrantNotFound, InvalidRequest, SnapshotNotFound
from agent_core.handover import RemoteAgent
from agent_core.id_prefix import resolve_id
from agent_core.ids import new_run_id
from agent_core.limits import valid_timeout
from agent_core.models import Message
from agent_core.notify import PendingCallback
from agent_core.options import ListFilters, RunOptions, check_options
from agent_core.pending import list_suspended
from agent_core.persist import Runs
from agent_core.policy import Policy
from agent_core.policy_commands import CommandGrant, CommandsInvalid
from agent_core.policy_gate import request_policy, with_policy
from agent_core.stream import AgentStream
from agent_core.structured import schema_of
from agent_core.verdicts import Approve, Decline, Resume, Verdict
from agent_core.views import AuditEntry, AuditPage, Grant, SuspendedRun, SuspendedRunList
from storage.audit import verify as verify_chain
from storage.base import Store
from storage.memory import InMemoryStore
from storage.records import GrantRow
from warden_types.audit import ChainReport

__all__ = ["Runtime"]


class Runtime:
    """Agents and their store. ``async with Runtime(...)`` closes the store at the end."""

    def __init__(
        self,
        agents: Mapping[str, HostedAgent] | None = None,
        storage: Store | None = None,
        *,
        lease_seconds: float = 30.0,
        actor: str | None = None,
        on_pending: PendingCallback | None = None,
        policy: Policy | None = None,
        shadow_policy: Policy | None = None,
    ) -> None:
        self.store: Store = storage if storage is not None else InMemoryStore()
        self.agents: dict[str, HostedAgent] = dict(agents or {})
        self._runs = Runs(self.store)
        for name, value in (("policy", policy), ("shadow_policy", shadow_policy)):
            if value is not None and not isinstance(value, Policy):
                raise InvalidRequest(f"Runtime({name}=...) takes a Policy, not {type(value).__name__}")
        #: stored with every run this runtime starts; ``shadow_policy`` is only audited where it differs.
        self.policy, self._runs.shadow_policy = policy, shadow_policy
        if on_pending is not None:
            self._runs.pending_listeners.append(on_pending)
        self._decisions = Decisions(self._runs, lease_seconds=lease_seconds, actor=actor)
        self._by_id: dict[str, HostedAgent] = {}
        for key, agent in self.agents.items():
            agent._attach(self)
            self._by_id[agent.id] = agent
            self._by_id.setdefault(key, agent)

    @property
    def storage(self) -> Store:
        return self.store

    @property
    def shadow_policy(self) -> Policy | None:
        """A candidate policy evaluated beside the enforced one: ``policy-shadow`` audit entries, never a decision."""
        return self._runs.shadow_policy

    @shadow_policy.setter
    def shadow_policy(self, value: Policy | None) -> None:
        self._runs.shadow_policy = value

    @property
    def lease_seconds(self) -> float:
        return self._decisions.lease_seconds

    @property
    def actor(self) -> str | None:
        """Who decides when a decision passes no ``actor=`` (the audit log records it)."""
        return self._decisions.actor

    @actor.setter
    def actor(self, value: str | None) -> None:
        self._decisions.actor = value

    async def __aenter__(self) -> Runtime:
        setup = getattr(self.store, "setup", None)
        if setup is not None:
            await setup()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        await self.store.aclose()

    def get_agent(self, agent_id: str) -> HostedAgent:
        """An agent by its registry key or its id."""
        agent = self._by_id.get(agent_id)
        if agent is None:
            known = ", ".join(sorted(self.agents)) or "none"
            raise AgentNotFound(f"no agent {agent_id!r} in this runtime (agents: {known})")
        return agent

    # -- starting runs ------------------------------------------------------------------
    async def start(self, agent: HostedAgent, messages: str | list[Any], **options: Unpack[RunOptions]) -> AgentStream:
        """Start a run of ``agent`` (``Agent.stream``); unknown options raise ``InvalidRequest``."""
        check_options(options, RunOptions, "stream")
        thread_id = options.get("thread_id")
        resource_id = options.get("resource_id")
        require_tool_approval = options.get("require_tool_approval")
        max_steps = options.get("max_steps")
        request_context = options.get("request_context")
        auto_resume_suspended_tools = options.get("auto_resume_suspended_tools")
        tool_call_concurrency = options.get("tool_call_concurrency")
        output_schema = options.get("output_schema")
        approval_timeout = options.get("approval_timeout")
        actor = options.get("actor")
        new_messages = _as_messages(messages)
        opts = agent.default_options
        timeout = approval_timeout if approval_timeout is not None else opts.get("approval_timeout")
        if timeout is not None and not valid_timeout(timeout):
            raise InvalidRequest(
                f"approval_timeout must be a positive number of seconds (at most ten years), not {timeout!r}"
            )
        concurrency = tool_call_concurrency if tool_call_concurrency is not None else opts.get("tool_call_concurrency")
        if concurrency is not None and (not isinstance(concurrency, int) or concurrency < 1):
            raise InvalidRequest(f"tool_call_concurrency must be a positive integer, not {concurrency!r}")
        try:
            output_json = schema_of(output_schema)
        except TypeError as exc:
            raise InvalidRequest(str(exc)) from exc
        policy_arg = require_tool_approval
        if policy_arg is None and request_policy(opts.get("require_tool_approval")) is not None:
            policy_arg = opts.get("require_tool_approval")  # an agent's default Policy is stored like a request's
        given = request_policy(policy_arg)
        policies = with_policy(with_policy({}, self.policy), given)
        if given is not None:
            mode: PolicyMode = "none"  # the policy decides (with the tools' own flags)
        elif policy_arg is None:
            mode = policy_mode(opts.get("require_tool_approval"))
        elif callable(policy_arg):
            mode = "request_fn"
        else:
            mode = "all" if policy_arg else "none"
        try:
            context = to_jsonable_python(dict(request_context or {}))
        except (TypeError, ValueError) as exc:
            raise InvalidRequest(
                f"request_context must be JSON-serialisable (it is stored with the run): {exc}"
            ) from exc
        run_id = new_run_id()
        if callable(policy_arg):
            self._runs.policies[run_id] = policy_arg
        state = RunState(
            run_id=run_id,
            agent_id=agent.id,
            agent_path=[agent.id],
            thread_id=thread_id,
            resource_id=resource_id,
            max_steps=max_steps or opts.get("max_steps", 10),
            policy=mode,
            policies=policies,
            requested_by=actor if actor is not None else self.actor,
            request_context=context,
            created_at=time.time(),
            tool_call_concurrency=concurrency,
            output_schema=output_json,
            approval_timeout=None if timeout is None else float(timeout),
        )
        auto = (
            auto_resume_suspended_tools
            if auto_resume_suspended_tools is not None
            else opts.get("auto_resume_suspended_tools", False)
        )
        history: list[Message] = []
        if agent.memory is not None and thread_id:
            raw = await self.store.load_messages(thread_id, limit=agent.memory.last_messages)
            history = agent.memory.clean_history([Message.model_validate(m) for m in raw])
            if auto:
                resumed = await auto_resume(
                    self,
                    agent,
                    thread_id=thread_id,
                    resource_id=resource_id,
                    history=history,
                    new_messages=new_messages,
                )
                if resumed is not None:
                    self._runs.policies.pop(run_id, None)
                    return resumed
        state.messages = [*history, *new_messages]
        state.memory_saved = len(history)
        if output_schema is not None:
            self._runs.output_models[run_id] = output_schema
        stream = AgentStream(run_id, self._runs.advance(agent, state, owner=None, applied=[]))
        stream.output_model = output_schema
        return stream

    # -- decisions --------------------------------------------------------------------------
    async def decide(
        self,
        agent: HostedAgent,
        verdict: Verdict,
        *,
        run_id: str,
        tool_call_id: str | None = None,
        followups: list[Message] | None = None,
        output_schema: type[BaseModel] | None = None,
    ) -> AgentStream:
        """Record a decision atomically, then return the stream that applies it (see ``Decisions``).

        ``verdict.actor``: who decides, as the audit log records it (default: the runtime's ``actor``).

        ``output_schema``: the pydantic model of the run's structured output, to validate the final
        answer with (and make ``result().object`` an instance); else the run's stored JSON Schema."""
        stream = await self._decisions.decide(
            agent, verdict, run_id=run_id, tool_call_id=tool_call_id, followups=followups
        )
        if output_schema is not None:
            # Before the stream's task first runs (no await since it was created).
            self._runs.output_models[run_id] = output_schema
            stream.output_model = output_schema
        return stream

    async def approve_tool_call(
        self,
        *,
        run_id: str,
        tool_call_id: str | None = None,
        fingerprint: str | None = None,
        args: dict[str, Any] | None = None,
        actor: str | None = None,
    ) -> AgentStream:
        agent = await self._agent_of_decided(run_id, tool_call_id)
        verdict = Approve(args=args, fingerprint=fingerprint, actor=actor)
        return await self.decide(agent, verdict, run_id=run_id, tool_call_id=tool_call_id)

    async def decline_tool_call(
        self, *, run_id: str, tool_call_id: str | None = None, reason: str | None = None, actor: str | None = None
    ) -> AgentStream:
        agent = await self._agent_of_decided(run_id, tool_call_id)
        return await self.decide(agent, Decline(reason=reason, actor=actor), run_id=run_id, tool_call_id=tool_call_id)

    async def resume_stream(
        self, resume_data: Any, *, run_id: str, tool_call_id: str | None = None, actor: str | None = None
    ) -> AgentStream:
        agent = await self._agent_of_decided(run_id, tool_call_id)
        return await self.decide(agent, Resume(resume_data, actor=actor), run_id=run_id, tool_call_id=tool_call_id)

    async def _agent_of_decided(self, run_id: str, tool_call_id: str | None) -> HostedAgent:
        run = await self._decisions.run_of_decided(run_id, tool_call_id)
        remote = RemoteAgent.of_run(run) if run.agent_id not in self._by_id else None
        if remote is not None:
            return cast(HostedAgent, remote)  # recorded here (edits checked on the declared tools), applied by its host
        return self.get_agent(run.agent_id)

    async def adopt(self, agent: HostedAgent, *, run_id: str, tool_call_id: str) -> AgentStream | None:
        """Apply a decision another process recorded on a call of ``agent`` (a run started with
        ``request_context={"warden_handover": True}``); None while there is none to apply."""
        return await self._decisions.adopt(agent, run_id, tool_call_id)

    async def send_tool_approval(
        self,
        agent: HostedAgent,
        *,
        thread_id: str,
        resource_id: str | None = None,
        approved: bool,
        tool_call_id: str | None = None,
        run_id: str | None = None,
        resume_data: Any = None,
        reason: str | None = None,
        actor: str | None = None,
    ) -> AgentStream:
        """Decide a thread's pending call without knowing its run id: found in storage."""
        return await self._decisions.send_tool_approval(
            agent,
            thread_id=thread_id,
            resource_id=resource_id,
            approved=approved,
            tool_call_id=tool_call_id,
            run_id=run_id,
            resume_data=resume_data,
            reason=reason,
            actor=actor,
        )

    def add_pending_listener(self, callback: PendingCallback) -> None:
        """Also call ``callback(PendingNotice)`` when a call of a run advanced here starts waiting."""
        self._runs.pending_listeners.append(callback)

    # -- the audit trail -----------------------------------------------------------------------
    async def audit_log(
        self,
        *,
        run_id: str | None = None,
        agent_id: str | None = None,
        actor: str | None = None,
        since: float | None = None,
        decision: str | None = None,
        after: int = 0,
        limit: int = 100,
    ) -> AuditPage:
        """Entries of the audit trail in order, filtered; ``page.next_after`` pages on."""
        if agent_id is not None and agent_id in self._by_id:
            agent_id = self._by_id[agent_id].id
        rows = await self.store.audit_log(
            run_id, agent_id=agent_id, actor=actor, since=since, decision=decision, after=after, limit=limit + 1
        )
        more = len(rows) > limit
        rows = rows[:limit]
        return AuditPage(
            entries=[AuditEntry.from_row(r) for r in rows], next_after=rows[-1].seq if more and rows else None
        )

    async def verify_audit(self) -> ChainReport:
        """Check the whole audit trail's hash chain; the report names the first broken entry."""
        return verify_chain(await self.store.audit_log())

    # -- listing -----------------------------------------------------------------------------
    async def list_suspended_runs(
        self, *, agent_id: str | None = None, **filters: Unpack[ListFilters]
    ) -> SuspendedRunList:
        """One page of pending runs; the filters and the order are the store's query (see
        ``agent_core.pending.list_suspended``)."""
        check_options(filters, ListFilters, "list_suspended_runs")
        if agent_id is not None and agent_id in self._by_id:
            agent_id = self._by_id[agent_id].id
        return await list_suspended(self.store, agent_id=agent_id, **filters)

    async def get_suspended_run(self, run_id: str) -> SuspendedRun:
        row = await self.store.get_suspended(run_id)
        if row is None or row.error is not None:
            raise SnapshotNotFound(f"no suspended run {run_id!r} in {self.store.name}")
        return SuspendedRun.from_row(row)

    async def resolve_id(self, prefix: str, *, run_id: str | None = None) -> str:
        """The run id (or, with ``run_id``, that run's tool-call id) that ``prefix`` names: the id
        itself, or a unique prefix of 6+ characters (``agent_core.id_prefix``); ambiguous is
        ``AmbiguousIdPrefix``, too short ``InvalidRequest``, none ``SnapshotNotFound`` /
        ``ToolCallNotSuspended``. The CLI takes the console's shortened ids through it."""
        return await resolve_id(self.store, prefix, run_id=run_id)

    # -- crash recovery ------------------------------------------------------------------------
    async def recover(self) -> int:
        """Advance the runs of this runtime's agents left behind under an expired lease.

        Decided calls whose tool never started go back to pending (audited);
        interrupted calls of ``idempotent=True`` tools run again; runs whose
        calls all have stored results continue (the model is called again).
        Returns how many runs were advanced. The console and the server call it
        at start and periodically; ``warden runs recover`` calls it once.
        """
        return await upkeep.recover(self._decisions, self._by_id)

    # -- deadlines -------------------------------------------------------------------------------
    async def sweep(self) -> int:
        """Expire overdue approvals (``approval_timeout``) of this runtime's agents; how many expired.

        Fail-closed: the tool never runs; the model is told the request expired and
        the run continues (a ``tool-call-expired`` chunk). Overdue calls of runs hosted
        elsewhere that ask for handover (an MCP proxy's) are expired too: recorded here
        (audited once, final), applied by their host. The console and the server
        call it periodically; ``warden runs sweep`` calls it once.
        """
        return await upkeep.sweep(self._decisions, self._by_id)

    # -- grants ----------------------------------------------------------------------------------
    async def grant(
        self,
        tool_name: str,
        *,
        scope: str,
        scope_id: str | None = None,
        agent_id: str | None = None,
        args_match: dict[str, Any] | None = None,
        expires_in: float | None = 3600,
        actor: str | None = None,
        command_match: dict[str, Any] | None = None,
    ) -> Grant:
        """Approve future gated calls of ``tool_name`` in a scope without asking (see ``Grant``).

        ``tool_name`` is the agent's key for the tool: a hosted agent's, or one a pending run of an
        agent hosted elsewhere declares (an MCP proxy's; ``handover.HANDOVER_TOOLS_KEY``). ``scope_id`` is required for
        ``run`` / ``thread`` / ``resource``; ``scope="agent"`` uses ``agent_id``.
        ``expires_in=None``: until revoked. Calls already pending are not decided.
        ``command_match`` (a shell or SQL tool): ``{"argument": "command", "prefixes": [["git", "status"]]}``
        covers a call only when every command in that argument starts with one of the prefixes and
        none is unseen (``{"argument", "statements": ["select"], "dialect"}`` for SQL); see
        ``agent_core.policy_commands.CommandGrant``.
        """
        if scope not in ("run", "thread", "resource", "agent"):
            raise InvalidRequest(f"scope must be run, thread, resource or agent, not {scope!r}")
        if scope == "agent":
            if not agent_id:
                raise InvalidRequest('scope="agent" needs agent_id')
            agent_id = self.get_agent(agent_id).id if agent_id in self._by_id else agent_id
        elif not scope_id:
            raise InvalidRequest(f"scope={scope!r} needs scope_id (the {scope} id)")
        if args_match is not None and not isinstance(args_match, dict):
            raise InvalidRequest("args_match must be an object of argument values")
        if command_match is not None:
            try:
                command_match = CommandGrant.from_json(command_match).to_json()
            except CommandsInvalid as exc:
                raise InvalidRequest(str(exc)) from None
        if expires_in is not None and (not isinstance(expires_in, int | float) or expires_in <= 0):
            raise InvalidRequest(f"expires_in must be a positive number of seconds or None, not {expires_in!r}")
        tools = _tools_named(self.agents.values(), tool_name, None if scope != "agent" else agent_id)
        if not tools:
            tools = await self._handover_tools_named(tool_name, scope, scope_id, agent_id)
        if not tools:
            raise InvalidRequest(
                f"no agent of this runtime has a tool {tool_name!r}, and no pending run of an agent hosted "
                "elsewhere (an MCP proxy's) declares one"
            )
        if any(not getattr(t, "allow_grants", True) for t in tools):
            raise GrantNotAllowed(f"tool {tool_name!r} was created with allow_grants=False: it cannot be granted")
        now = time.time()
        row = GrantRow(
            id="grant_" + uuid.uuid4().hex[:16],
            tool_name=tool_name,
            scope=scope,  # type: ignore[arg-type]
            scope_id=scope_id if scope != "agent" else None,
            agent_id=agent_id if scope == "agent" else None,
            args_match=to_jsonable_python(args_match) if args_match is not None else None,
            expires_at=None if expires_in is None else now + expires_in,
            created_by=actor if actor is not None else self.actor,
            created_at=now,
            command_match=command_match,
        )
        await self.store.add_grant(row)
        return Grant.from_row(row)

    async def _handover_tools_named(
        self, tool_name: str, scope: str, scope_id: str | None, agent_id: str | None
    ) -> list[Any]:
        """Tools called ``tool_name`` declared by pending handover runs (``HANDOVER_TOOLS_KEY``) of agents
        not hosted here, in the grant's scope: an MCP proxy's tools can be granted from any process."""
        if scope == "run":
            run = await self.store.get_run(scope_id or "")
            runs = [run] if run is not None else []
        else:
            rows, _ = await self.store.list_suspended(
                agent_id=agent_id if scope == "agent" else None,
                thread_id=scope_id if scope == "thread" else None,
                resource_id=scope_id if scope == "resource" else None,
                per_page=200,
            )
            runs = [r for r in [await self.store.get_run(row.run.run_id) for row in rows] if r is not None]
        found: list[Any] = []
        for run in runs:
            remote = RemoteAgent.of_run(run) if run.agent_id not in self._by_id else None
            if remote is not None and tool_name in remote.tools:
                found.append(remote.tools[tool_name])
        return found

    async def list_grants(self) -> list[Grant]:
        """The live grants (not expired, not revoked), oldest first."""
        return [Grant.from_row(g) for g in await self.store.list_grants(time.time())]

    async def revoke_grant(self, grant_id: str) -> None:
        """Revoke a grant (calls it already approved stay approved); ``GrantNotFound`` for an unknown id."""
        if not await self.store.delete_grant(grant_id):
            raise GrantNotFound(f"no grant {grant_id!r} in {self.store.name}")


def _tools_named(agents: Any, tool_name: str, agent_id: str | None) -> list[Any]:
    """Tools (or delegations) called ``tool_name`` in these agents and their sub-agents."""
    found: list[Any] = []
    seen: set[int] = set()
    stack = list(agents)
    while stack:
        agent = stack.pop()
        if id(agent) in seen:
            continue
        seen.add(id(agent))
        if agent_id is None or agent.id == agent_id:
            if tool_name in agent.tools:
                found.append(agent.tools[tool_name])
            elif tool_name in agent.delegates:
                found.append(agent.delegates[tool_name])
        stack.extend(agent.delegates.values())
    return found


def _as_messages(messages: str | list[Any]) -> list[Message]:
    if isinstance(messages, str):
        return [Message(role="user", content=messages)]
    out: list[Message] = []
    for m in messages:
        if isinstance(m, Message):
            out.append(m.model_copy(deep=True))  # the run stores it: the caller's object may change later
        elif isinstance(m, dict):
            out.append(Message.model_validate(m))
        elif isinstance(m, str):
            out.append(Message(role="user", content=m))
        else:
            raise TypeError(f"messages must be strings, Message objects or dicts, not {type(m).__name__}")
    return out
