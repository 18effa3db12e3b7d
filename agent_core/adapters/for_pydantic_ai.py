"""pydantic-ai agents in Warden: deferred tools stop the run, ``DeferredToolResults`` resume it.

Calls of tools with ``requires_approval=True`` (or that raise ``ApprovalRequired``), and calls
Warden's policy or the request's ``require_tool_approval`` gates (a capability's
``before_tool_execute`` raises ``ApprovalRequired`` for them), end the pydantic-ai run with
``DeferredToolRequests``; the run's message history (``ModelMessagesTypeAdapter``) is the
framework state in Warden's snapshot. A decision resumes with ``True``,
``ToolApproved(override_args=...)`` (an edit; the model is told, with Warden's note) or
``ToolDenied(message)``.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from pydantic_ai import Agent as PydanticAgent
from pydantic_ai import DeferredToolRequests, DeferredToolResults, ToolApproved, ToolDenied
from pydantic_ai.capabilities import AbstractCapability
from pydantic_ai.exceptions import ApprovalRequired
from pydantic_ai.messages import (
    ModelMessage,
    ModelMessagesTypeAdapter,
    ModelRequest,
    ModelResponse,
    RetryPromptPart,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
)
from pydantic_ai.toolsets import FunctionToolset

from agent_core.adapters.hosted import FrameworkAgent
from agent_core.adapters.protocol import FrameworkTool, Gate, Outcome, Pending, Seen, Verdict
from agent_core.engine import EDITED_NOTE
from agent_core.errors import WardenError
from agent_core.models import Message

__all__ = ["PydanticAIFramework", "from_pydantic_ai"]


def from_pydantic_ai(
    agent: PydanticAgent[Any, Any],
    *,
    id: str,
    name: str | None = None,
    deps: Any = None,
    **options: Any,
) -> FrameworkAgent:
    """Host ``agent``; ``deps``: its dependencies for every run; ``options``: as ``FrameworkAgent`` takes
    (``description``, ``memory``, ``default_options``)."""
    if not isinstance(agent, PydanticAgent):
        raise TypeError(f"from_pydantic_ai needs a pydantic_ai.Agent, not {type(agent).__name__}")
    return FrameworkAgent(PydanticAIFramework(agent, deps=deps), id=id, name=name or agent.name or id, **options)


@dataclass
class _WardenApproval(AbstractCapability[Any]):
    """Defers a call Warden wants approved, before its tool function runs (the documented hook), and
    tells the model when an operator edited a call's arguments (Warden's note, as for its own tools)."""

    gate: Gate
    edited: dict[str, dict[str, Any]]

    async def before_tool_execute(self, ctx: Any, *, call: ToolCallPart, tool_def: Any, args: Any) -> Any:
        if not ctx.tool_call_approved and self.gate.asks:
            seen = dict(args) if isinstance(args, Mapping) else call.args_as_dict()
            if await self.gate.requires_approval(call.tool_name, seen, call.tool_call_id):
                raise ApprovalRequired()
        return args

    async def after_tool_execute(self, ctx: Any, *, call: ToolCallPart, tool_def: Any, args: Any, result: Any) -> Any:
        if call.tool_call_id in self.edited:
            return {"note": EDITED_NOTE, "args": self.edited[call.tool_call_id], "result": result}
        return result


def _hooks(gate: Gate, edited: dict[str, dict[str, Any]]) -> list[Any] | None:
    """The capability a run needs, if any (none when Warden never asks and nothing was edited)."""
    return [_WardenApproval(gate, edited)] if gate.asks or edited else None


class PydanticAIFramework:
    """Starts and resumes one pydantic-ai agent's runs (the ``Framework`` protocol)."""

    kind = "pydantic-ai"

    def __init__(self, agent: PydanticAgent[Any, Any], *, deps: Any = None) -> None:
        self.agent = agent
        self.deps = deps
        self._tools = _tools_of(agent)
        declared = agent.output_type
        types = list(declared) if isinstance(declared, Sequence) and not isinstance(declared, str) else [declared]
        # Warden's policy may defer a call of any tool: the run must be able to end with the requests.
        self._output_type: Any = types if DeferredToolRequests in types else [*types, DeferredToolRequests]

    @property
    def tools(self) -> Mapping[str, FrameworkTool]:
        return self._tools

    async def start(self, messages: list[Message], gate: Gate, *, run_id: str, thread_id: str | None) -> Outcome:
        history, prompt = _history(messages)
        result = await self.agent.run(
            prompt,
            message_history=history or None,
            output_type=self._output_type,
            capabilities=_hooks(gate, {}),
            deps=self.deps,
        )
        return self._outcome(result)

    async def resume(self, state: Any, verdicts: dict[str, Verdict], gate: Gate, *, run_id: str) -> Outcome:
        try:
            history = ModelMessagesTypeAdapter.validate_python(state["messages"])
        except Exception as exc:
            raise WardenError(
                f"run {run_id!r}: the stored pydantic-ai message history is unreadable: {exc}", code="AGENT_RUN_FAILED"
            ) from exc
        approvals: dict[str, bool | ToolApproved | ToolDenied] = {}
        for call_id, verdict in verdicts.items():
            if not verdict.approved:
                approvals[call_id] = ToolDenied(verdict.message or "The tool call was denied.")
            elif verdict.args is not None:
                approvals[call_id] = ToolApproved(override_args=verdict.args)
            else:
                approvals[call_id] = True
        edited = {call_id: v.args for call_id, v in verdicts.items() if v.approved and v.args is not None}
        result = await self.agent.run(
            message_history=history,
            deferred_tool_results=DeferredToolResults(approvals=approvals),
            output_type=self._output_type,
            capabilities=_hooks(gate, edited),
            deps=self.deps,
        )
        return self._outcome(result)

    def _outcome(self, result: Any) -> Outcome:
        state = {"messages": ModelMessagesTypeAdapter.dump_python(result.all_messages(), mode="json")}
        events = _events(result.new_messages())
        output = result.output
        if isinstance(output, DeferredToolRequests):
            if output.calls:
                names = ", ".join(sorted({c.tool_name for c in output.calls}))
                raise WardenError(
                    f"the pydantic-ai run deferred external calls ({names}): Warden hosts approvals only",
                    code="AGENT_RUN_FAILED",
                )
            pending = [Pending(c.tool_call_id, c.tool_name, c.args_as_dict()) for c in output.approvals]
            return Outcome(state=state, events=events, pending=pending)
        text = output if isinstance(output, str) else json.dumps(_plain(output), ensure_ascii=False)
        return Outcome(state=state, events=events, text=text)


def _tools_of(agent: PydanticAgent[Any, Any]) -> dict[str, FrameworkTool]:
    """The agent's function tools (those it declares up front; dynamic toolsets are seen at run time)."""
    tools: dict[str, FrameworkTool] = {}
    for toolset in agent.toolsets:
        if isinstance(toolset, FunctionToolset):
            for name, tool in toolset.tools.items():
                tools[name] = FrameworkTool(
                    name,
                    tool.description or "",
                    tool.function_schema.json_schema,
                    require_approval=True if tool.requires_approval else None,
                )
    return tools


def _history(messages: list[Message]) -> tuple[list[ModelMessage], str]:
    """Warden's conversation as pydantic-ai history plus the prompt (the last user message)."""
    prompt = ""
    rest = list(messages)
    if rest and rest[-1].role == "user":
        prompt = rest.pop().content
    history: list[ModelMessage] = []
    for m in rest:
        if m.role == "user":
            history.append(ModelRequest(parts=[UserPromptPart(m.content)]))
        elif m.role == "assistant" and m.content:
            history.append(ModelResponse(parts=[TextPart(m.content)]))
    return history, prompt


def _events(messages: list[ModelMessage]) -> list[Seen]:
    """What the run did, in order: tool calls, tool results (retries as errors), text beside tool calls."""
    out: list[Seen] = []
    for message in messages:
        if isinstance(message, ModelResponse):
            calls = [p for p in message.parts if isinstance(p, ToolCallPart)]
            for part in message.parts:
                if isinstance(part, TextPart) and calls and part.content:
                    out.append(Seen("text", text=part.content))
            for part in calls:
                out.append(Seen("tool-call", id=part.tool_call_id, name=part.tool_name, args=part.args_as_dict()))
        elif isinstance(message, ModelRequest):
            for rpart in message.parts:
                if isinstance(rpart, ToolReturnPart):
                    content = rpart.content
                    if isinstance(content, dict) and content.get("note") == EDITED_NOTE:
                        content = content.get("result")  # the stream shows the tool's own result
                    out.append(Seen("tool-result", id=rpart.tool_call_id, name=rpart.tool_name, result=content))
                elif isinstance(rpart, RetryPromptPart) and rpart.tool_name:
                    out.append(
                        Seen(
                            "tool-result",
                            id=rpart.tool_call_id,
                            name=rpart.tool_name,
                            result=rpart.model_response(),
                            is_error=True,
                        )
                    )
    return out


def _plain(value: Any) -> Any:
    from pydantic_core import to_jsonable_python

    return to_jsonable_python(value)
