"""``Agent``: instructions, a model, tools and sub-agents, with Mastra's approval methods.

The public facade on top of ``agent_core``: it is the definition the run loop
reads (``agent_core.definition.AgentDefinition``) and hands its work to its
``Runtime``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, Unpack

from pydantic import BaseModel

from agent_core.definition import DelegateInput, PolicyFn, delegation_name
from agent_core.hooks import AGENT_HOOKS
from agent_core.memory import Memory
from agent_core.models import LanguageModel, Message, ToolSpec
from agent_core.options import ListFilters, RunOptions
from agent_core.runtime import Runtime
from agent_core.stream import AgentStream, GenerateResult
from agent_core.tools import Tool
from agent_core.verdicts import Approve, Decline, Resume
from agent_core.views import SuspendedRunList


class Agent:
    """An LLM agent. Register it in a ``Runtime`` with storage for approvals that survive restarts;
    on its own it uses a private in-memory store (approval works within the process only)."""

    def __init__(
        self,
        *,
        id: str,
        name: str | None = None,
        instructions: str = "",
        model: str | LanguageModel,
        tools: Mapping[str, Tool] | Sequence[Tool] | None = None,
        agents: Mapping[str, Agent] | None = None,
        memory: Memory | None = None,
        default_options: Mapping[str, Any] | None = None,
        description: str = "",
        hooks: Mapping[str, Callable[..., Any]] | None = None,
    ) -> None:
        self.id = id
        self.name = name or id
        self.instructions = instructions
        self.description = description
        self.model = model
        self._model: LanguageModel | None = model if isinstance(model, LanguageModel) else None
        if tools is None:
            self.tools: dict[str, Tool] = {}
        elif isinstance(tools, Mapping):
            self.tools = dict(tools)
        else:
            self.tools = {t.id: t for t in tools}
        for key, t in self.tools.items():
            if not isinstance(t, Tool):
                raise TypeError(f"agent {id!r}: tool {key!r} is not a Tool (use create_tool or @tool)")
        self.agents: dict[str, Agent] = dict(agents or {})
        #: delegation tool name (``agent-<key>``) -> sub-agent
        self.delegates: dict[str, Agent] = {delegation_name(k): a for k, a in self.agents.items()}
        clash = set(self.delegates) & set(self.tools)
        if clash:
            raise ValueError(f"agent {id!r}: tool names clash with sub-agent tools: {sorted(clash)}")
        self.memory = memory
        self.default_options: dict[str, Any] = dict(default_options or {})
        unknown = set(hooks or {}) - AGENT_HOOKS
        if unknown:
            raise ValueError(f"agent {id!r}: unknown hooks {sorted(unknown)} (known: {', '.join(sorted(AGENT_HOOKS))})")
        #: ``before_tool_call`` / ``after_tool_call`` (sync or async); see docs/hooks.md.
        self.hooks: dict[str, Callable[..., Any]] = {k: v for k, v in (hooks or {}).items() if v is not None}
        self._runtime: Runtime | None = None
        self._specs: list[ToolSpec] | None = None

    def __repr__(self) -> str:
        return f"Agent(id={self.id!r})"

    # -- wiring ------------------------------------------------------------------------------
    def _attach(self, runtime: Runtime) -> None:
        self._runtime = runtime

    @property
    def runtime(self) -> Runtime:
        if self._runtime is None:
            Runtime(agents={self.id: self})  # private in-memory store; attaches itself
        assert self._runtime is not None
        return self._runtime

    def resolved_model(self) -> LanguageModel:
        if self._model is None:
            from agent_core.providers import resolve_model

            self._model = resolve_model(self.model)
        return self._model

    def tool_names(self) -> list[str]:
        return [*self.tools, *self.delegates]

    def tool_specs(self) -> list[ToolSpec]:
        if self._specs is None:
            specs = [
                ToolSpec(name=n, description=t.description, input_schema=t.json_schema()) for n, t in self.tools.items()
            ]
            for n, sub in self.delegates.items():
                specs.append(
                    ToolSpec(
                        name=n,
                        description=sub.description or f"Delegate a task to {sub.name}",
                        input_schema=DelegateInput.model_json_schema(),
                    )
                )
            self._specs = specs
        return self._specs

    def model_messages(self, messages: list[Message]) -> list[Message]:
        if self.instructions:
            return [Message(role="system", content=self.instructions), *messages]
        return messages

    def default_policy_fn(self) -> PolicyFn | None:
        fn = self.default_options.get("require_tool_approval")
        return fn if callable(fn) else None

    def descendant(self, agent_path: Sequence[str]) -> Agent | None:
        """The agent at ``agent_path`` (ids, this agent first) among this agent's sub-agents."""
        if not agent_path or agent_path[0] != self.id:
            return None
        current: Agent = self
        for agent_id in agent_path[1:]:
            nxt = next((a for a in current.agents.values() if a.id == agent_id), None)
            if nxt is None:
                return None
            current = nxt
        return current

    # -- running -----------------------------------------------------------------------------
    async def stream(self, messages: str | list[Any], **options: Unpack[RunOptions]) -> AgentStream:
        """Start a run (options: ``agent_core.options.RunOptions``); its stream, ``run_id`` known at once."""
        return await self.runtime.start(self, messages, **options)

    async def generate(self, messages: str | list[Any], **options: Unpack[RunOptions]) -> GenerateResult:
        return await (await self.stream(messages, **options)).result()

    async def approve_tool_call(
        self,
        *,
        run_id: str,
        tool_call_id: str | None = None,
        fingerprint: str | None = None,
        output_schema: type[BaseModel] | None = None,
        args: dict[str, Any] | None = None,
        actor: str | None = None,
    ) -> AgentStream:
        """Approve a pending call; ``args``: run it with these (edited) arguments instead, validated first."""
        verdict = Approve(args=args, fingerprint=fingerprint, actor=actor)
        return await self.runtime.decide(
            self, verdict, run_id=run_id, tool_call_id=tool_call_id, output_schema=output_schema
        )

    async def decline_tool_call(
        self,
        *,
        run_id: str,
        tool_call_id: str | None = None,
        reason: str | None = None,
        output_schema: type[BaseModel] | None = None,
        actor: str | None = None,
    ) -> AgentStream:
        verdict = Decline(reason=reason, actor=actor)
        return await self.runtime.decide(
            self, verdict, run_id=run_id, tool_call_id=tool_call_id, output_schema=output_schema
        )

    async def approve_tool_call_generate(
        self,
        *,
        run_id: str,
        tool_call_id: str | None = None,
        fingerprint: str | None = None,
        output_schema: type[BaseModel] | None = None,
        args: dict[str, Any] | None = None,
        actor: str | None = None,
    ) -> GenerateResult:
        return await (
            await self.approve_tool_call(
                run_id=run_id,
                tool_call_id=tool_call_id,
                fingerprint=fingerprint,
                output_schema=output_schema,
                args=args,
                actor=actor,
            )
        ).result()

    async def decline_tool_call_generate(
        self,
        *,
        run_id: str,
        tool_call_id: str | None = None,
        reason: str | None = None,
        output_schema: type[BaseModel] | None = None,
        actor: str | None = None,
    ) -> GenerateResult:
        return await (
            await self.decline_tool_call(
                run_id=run_id, tool_call_id=tool_call_id, reason=reason, output_schema=output_schema, actor=actor
            )
        ).result()

    async def resume_stream(
        self,
        resume_data: Any,
        *,
        run_id: str,
        tool_call_id: str | None = None,
        output_schema: type[BaseModel] | None = None,
        actor: str | None = None,
    ) -> AgentStream:
        verdict = Resume(resume_data, actor=actor)
        return await self.runtime.decide(
            self, verdict, run_id=run_id, tool_call_id=tool_call_id, output_schema=output_schema
        )

    async def resume_generate(
        self,
        resume_data: Any,
        *,
        run_id: str,
        tool_call_id: str | None = None,
        output_schema: type[BaseModel] | None = None,
        actor: str | None = None,
    ) -> GenerateResult:
        return await (
            await self.resume_stream(
                resume_data, run_id=run_id, tool_call_id=tool_call_id, output_schema=output_schema, actor=actor
            )
        ).result()

    async def list_suspended_runs(self, **filters: Unpack[ListFilters]) -> SuspendedRunList:
        """This agent's pending runs (filters: ``agent_core.options.ListFilters``)."""
        return await self.runtime.list_suspended_runs(agent_id=self.id, **filters)

    async def send_tool_approval(
        self,
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
        return await self.runtime.send_tool_approval(
            self,
            thread_id=thread_id,
            resource_id=resource_id,
            approved=approved,
            tool_call_id=tool_call_id,
            run_id=run_id,
            resume_data=resume_data,
            reason=reason,
            actor=actor,
        )
