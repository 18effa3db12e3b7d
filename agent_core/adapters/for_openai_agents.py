"""OpenAI Agents SDK agents in Warden: ``needs_approval`` interrupts the run, the ``RunState`` resumes it.

``result.interruptions`` become Warden's waiting calls. ``RunState.to_json()``, with how many of
the run's items were reported, is the framework state in Warden's snapshot. A decision loads it
(``RunState.from_json``), calls ``state.approve(item)`` or
``state.reject(item, rejection_message=...)`` and runs on. Warden's policy and the request's
``require_tool_approval`` reach a function tool through its ``needs_approval`` (wrapped per run).
The SDK cannot run edited arguments: an edit raises ``EditNotSupported`` before anything changes
(``FrameworkTool(editable=False)``).
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Mapping
from typing import Any

from agents import Agent as OpenAIAgent
from agents import FunctionTool, RunConfig, Runner, RunState
from agents.items import MessageOutputItem, ToolApprovalItem, ToolCallItem, ToolCallOutputItem, TResponseInputItem
from pydantic_core import to_jsonable_python

from agent_core.adapters.hosted import FrameworkAgent
from agent_core.adapters.protocol import FrameworkTool, Gate, Outcome, Pending, Seen, Verdict
from agent_core.errors import WardenError
from agent_core.models import Message

__all__ = ["OpenAIAgentsFramework", "from_openai_agents"]


def from_openai_agents(
    agent: OpenAIAgent[Any],
    *,
    id: str,
    name: str | None = None,
    context: Any = None,
    run_config: RunConfig | None = None,
    max_turns: int = 10,
    **options: Any,
) -> FrameworkAgent:
    """Host ``agent``; ``context``/``run_config``/``max_turns``: as ``Runner.run`` takes them; ``options``:
    as ``FrameworkAgent`` takes (``description``, ``memory``, ``default_options``)."""
    if not isinstance(agent, OpenAIAgent):
        raise TypeError(f"from_openai_agents needs an agents.Agent, not {type(agent).__name__}")
    framework = OpenAIAgentsFramework(agent, context=context, run_config=run_config, max_turns=max_turns)
    return FrameworkAgent(framework, id=id, name=name or agent.name or id, **options)


class OpenAIAgentsFramework:
    """Starts and resumes one OpenAI Agents SDK agent's runs (the ``Framework`` protocol)."""

    kind = "openai-agents"

    def __init__(
        self, agent: OpenAIAgent[Any], *, context: Any = None, run_config: RunConfig | None = None, max_turns: int = 10
    ) -> None:
        self.agent = agent
        self.context = context
        self.run_config = run_config
        self.max_turns = max_turns
        self._tools = {
            t.name: FrameworkTool(
                t.name,
                t.description,
                t.params_json_schema,
                require_approval=True if t.needs_approval is True else None,
                editable=False,
            )
            for t in agent.tools
            if isinstance(t, FunctionTool)
        }

    @property
    def tools(self) -> Mapping[str, FrameworkTool]:
        return self._tools

    def _gated(self, gate: Gate) -> OpenAIAgent[Any]:
        """The agent whose function tools also ask Warden (its policy, the request) when the SDK would not."""
        if not gate.asks:
            return self.agent
        tools = [
            dataclasses.replace(t, needs_approval=_asking(t.needs_approval, gate, t.name))
            if isinstance(t, FunctionTool) and t.needs_approval is not True
            else t
            for t in self.agent.tools
        ]
        return self.agent.clone(tools=tools)

    async def start(self, messages: list[Message], gate: Gate, *, run_id: str, thread_id: str | None) -> Outcome:
        items: list[TResponseInputItem] = [
            {"role": m.role, "content": m.content} for m in messages if m.role in ("user", "assistant") and m.content
        ]
        result = await Runner.run(
            self._gated(gate), items, context=self.context, run_config=self.run_config, max_turns=self.max_turns
        )
        return _outcome(result)

    async def resume(self, state: Any, verdicts: dict[str, Verdict], gate: Gate, *, run_id: str) -> Outcome:
        agent = self._gated(gate)
        try:
            run_state = await RunState.from_json(agent, state["run_state"])
            reported = int(state["items"])
        except Exception as exc:
            raise WardenError(
                f"run {run_id!r}: the stored OpenAI Agents RunState is unreadable: {exc}", code="AGENT_RUN_FAILED"
            ) from exc
        for item in run_state.get_interruptions():
            verdict = verdicts.get(_call_id(item))
            if verdict is None:
                continue
            if verdict.approved:
                run_state.approve(item)
            else:
                run_state.reject(item, rejection_message=verdict.message)
        result = await Runner.run(
            agent, run_state, context=self.context, run_config=self.run_config, max_turns=self.max_turns
        )
        return _outcome(result, reported=reported)


def _asking(own: Any, gate: Gate, name: str) -> Any:
    """A ``needs_approval`` function: the tool's own answer first, then Warden's."""

    async def needs_approval(ctx: Any, params: dict[str, Any], call_id: str) -> bool:
        if callable(own) and await own(ctx, params, call_id):
            return True
        return await gate.requires_approval(name, dict(params), call_id)

    return needs_approval


def _call_id(item: Any) -> str:
    raw = item.raw_item
    return str(raw.get("call_id") if isinstance(raw, dict) else getattr(raw, "call_id", ""))


def _outcome(result: Any, *, reported: int = 0) -> Outcome:
    """``reported``: how many of the run's items earlier stops already reported (a resumed run's
    ``new_items`` holds every item since the run began)."""
    state = {"run_state": result.to_state().to_json(), "items": len(result.new_items)}
    events: list[Seen] = []
    names: dict[str, str] = {}
    for item in result.new_items[reported:]:
        if isinstance(item, ToolCallItem):
            raw = item.raw_item
            call_id, name = _call_id(item), str(getattr(raw, "name", ""))
            names[call_id] = name
            events.append(Seen("tool-call", id=call_id, name=name, args=_args(getattr(raw, "arguments", "{}"))))
        elif isinstance(item, ToolCallOutputItem):
            call_id = _call_id(item)
            events.append(Seen("tool-result", id=call_id, name=names.get(call_id, ""), result=item.output))
        elif isinstance(item, MessageOutputItem) and result.interruptions:
            text = "".join(getattr(c, "text", "") for c in item.raw_item.content)
            events.append(Seen("text", text=text))
    if result.interruptions:
        pending = [
            Pending(_call_id(i), str(i.tool_name or ""), _args(getattr(i.raw_item, "arguments", "{}")))
            for i in result.interruptions
            if isinstance(i, ToolApprovalItem)
        ]
        return Outcome(state=state, events=events, pending=pending)
    output = result.final_output
    text = output if isinstance(output, str) else json.dumps(to_jsonable_python(output), ensure_ascii=False)
    return Outcome(state=state, events=events, text=text)


def _args(arguments: Any) -> dict[str, Any]:
    try:
        parsed = json.loads(arguments) if isinstance(arguments, str) else arguments
    except ValueError:
        return {}
    return parsed if isinstance(parsed, dict) else {}
