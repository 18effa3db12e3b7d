"""What the layers below ``Agent`` need from an agent, as Protocols, and the delegation tool's shape.

``AgentDefinition`` is what the run loop (``agent_core.engine``) reads;
``HostedAgent`` adds what the runtime, the decisions and auto-resume use.
``agent_core.agent.Agent`` satisfies both; nothing below it imports it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol, Unpack

from pydantic import BaseModel

from agent_core.memory import Memory
from agent_core.models import LanguageModel, Message, ToolSpec
from agent_core.options import RunOptions
from agent_core.stream import AgentStream
from agent_core.tools import Tool


@dataclass
class ToolCallInfo:
    """What an approval policy function sees about a call."""

    tool_name: str
    args: dict[str, Any]
    request_context: dict[str, Any]
    tool_call_id: str = ""
    agent_id: str = ""


PolicyFn = Callable[[ToolCallInfo], Any]


def delegation_name(key: str) -> str:
    """The tool name under which a supervisor's model sees the sub-agent registered as ``key``."""
    return f"agent-{key}"


class DelegateInput(BaseModel):
    prompt: str


class AgentDefinition(Protocol):
    """An agent as the run loop sees it: tools, sub-agents, model, instructions, default policy."""

    @property
    def id(self) -> str: ...

    @property
    def tools(self) -> Mapping[str, Tool]: ...

    @property
    def delegates(self) -> Mapping[str, AgentDefinition]:
        """Delegation tool name (``agent-<key>``) -> sub-agent."""
        ...

    @property
    def default_options(self) -> Mapping[str, Any]: ...

    @property
    def hooks(self) -> Mapping[str, Callable[..., Any]]:
        """``before_tool_call`` / ``after_tool_call`` (see ``agent_core.hooks``); empty when unset."""
        ...

    def resolved_model(self) -> LanguageModel: ...

    def tool_names(self) -> list[str]: ...

    def tool_specs(self) -> list[ToolSpec]: ...

    def model_messages(self, messages: list[Message]) -> list[Message]: ...

    def default_policy_fn(self) -> PolicyFn | None: ...


class HostedAgent(AgentDefinition, Protocol):
    """An agent as a runtime hosts it: also its memory, its sub-agents by id, its runtime link,
    and ``stream`` (what callers of ``Runtime.get_agent`` start runs with)."""

    @property
    def memory(self) -> Memory | None: ...

    def descendant(self, agent_path: Sequence[str]) -> HostedAgent | None: ...

    def _attach(self, runtime: Any) -> None: ...

    async def stream(self, messages: str | list[Any], **options: Unpack[RunOptions]) -> AgentStream: ...
