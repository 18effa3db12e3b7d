"""Tool hooks around ``execute``: the agent's ``before_tool_call`` / ``after_tool_call`` and a tool's
``on_input_available`` / ``on_output`` (Mastra's names, snake_case).

The run loop (``agent_core.engine``) calls ``on_input_available`` once a call's
arguments are validated, before the approval gate, and ``execute_tool`` instead
of ``tool.execute``: ``before_tool_call`` runs just before ``execute`` (after an
approval, or when none is needed) and may block it with ``{"proceed": False,
"output": X}``; ``after_tool_call`` and ``on_output`` only observe. Hooks are
plain functions (sync or async): they are never stored, so a run resumed in
another process uses the hooks of the agent registered there. With no hook
set, ``execute_tool`` is the bare call of ``execute``.
"""

from __future__ import annotations

import asyncio
import inspect
import logging
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel

from agent_core.call_state import CallState, RunState
from agent_core.errors import WardenError
from agent_core.tools import Suspension, Tool, ToolContext

__all__ = ["AGENT_HOOKS", "Blocked", "HookFailed", "ToolHookCall", "execute_tool", "on_input_available"]

log = logging.getLogger("agent_core.hooks")

#: Agent-level hooks (``Agent(hooks=...)``).
AGENT_HOOKS = frozenset({"before_tool_call", "after_tool_call"})


class HookFailed(WardenError):
    """A hook that may stop a call raised: the call fails as a ``tool-error`` the model sees."""

    code = "AGENT_TOOL_HOOK_FAILED"


@dataclass
class ToolHookCall:
    """What a hook sees about a tool call. ``args`` is the validated input, dumped to a dict."""

    tool_name: str
    tool_call_id: str
    args: dict[str, Any]
    request_context: dict[str, Any]
    run_id: str
    agent_path: list[str] = field(default_factory=list)
    agent_id: str = ""


@dataclass
class Blocked:
    """``before_tool_call`` returned ``{"proceed": False, "output": X}``: ``execute`` is skipped."""

    output: Any = None


async def _call(fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    out = fn(*args, **kwargs)
    if inspect.isawaitable(out):
        out = await out
    return out


def _hook_call(state: RunState, call: CallState, inp: BaseModel) -> ToolHookCall:
    return ToolHookCall(
        tool_name=call.name,
        tool_call_id=call.id,
        args=inp.model_dump(mode="json"),
        request_context=state.request_context,
        run_id=state.run_id,
        agent_path=list(state.agent_path),
        agent_id=state.agent_id,
    )


async def on_input_available(tool: Tool | None, state: RunState, call: CallState) -> str | None:
    """Run the tool's ``on_input_available`` hook (arguments already validated); an error message if it raised."""
    fn = tool.hooks.get("on_input_available") if tool is not None else None
    if fn is None:
        return None
    assert tool is not None
    try:
        await _call(fn, _hook_call(state, call, tool.input_schema.model_validate(call.run_args)))
    except Exception as exc:
        return f"on_input_available hook of tool {call.name!r} failed: {type(exc).__name__}: {exc}"
    return None


async def _observe(name: str, fn: Callable[..., Any], *args: Any, **kwargs: Any) -> None:
    try:
        await _call(fn, *args, **kwargs)
    except Exception:
        log.exception("%s hook raised; the tool's outcome stands", name)


async def _run(tool: Tool, inp: BaseModel, ctx: ToolContext) -> Any:
    if tool.is_async:
        return await tool.execute(inp, ctx)
    out = await asyncio.to_thread(tool.execute, inp, ctx)
    if inspect.isawaitable(out):
        out = await out
    return out


async def execute_tool(
    tool: Tool,
    inp: BaseModel,
    ctx: ToolContext,
    *,
    agent_hooks: Mapping[str, Callable[..., Any]] | None,
    state: RunState,
    call: CallState,
) -> Any:
    """``tool.execute(inp, ctx)`` wrapped in the hooks: its output, a ``Blocked``, or the exception it raised.

    A raising ``before_tool_call`` raises ``HookFailed`` (the caller reports it as a ``tool-error``).
    """
    if not agent_hooks and not tool.hooks:
        return await _run(tool, inp, ctx)
    before = agent_hooks.get("before_tool_call") if agent_hooks else None
    after = agent_hooks.get("after_tool_call") if agent_hooks else None
    on_output = tool.hooks.get("on_output")
    info = _hook_call(state, call, inp)
    if before is not None:
        try:
            decision = await _call(before, info)
        except Exception as exc:
            raise HookFailed(
                f"before_tool_call hook failed for tool {call.name!r}: {type(exc).__name__}: {exc}"
            ) from exc
        if isinstance(decision, Mapping) and decision.get("proceed", True) is False:
            return Blocked(decision.get("output"))
    try:
        out = await _run(tool, inp, ctx)
    except Exception as exc:
        if after is not None:
            await _observe("after_tool_call", after, info, result=None, error=exc)
        raise
    if ctx.suspended or isinstance(out, Suspension):
        return out  # ``execute`` suspended: no output yet, the hooks run when it completes
    if on_output is not None:
        await _observe("on_output", on_output, info, out)
    if after is not None:
        await _observe("after_tool_call", after, info, result=out, error=None)
    return out
