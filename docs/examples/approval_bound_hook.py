"""Bind an approval to the exact tool arguments the operator saw (Mastra's "approval-bound agent").

The reference document's example, in Python: a ``before_tool_call`` hook lets a
sensitive tool run only if an approval was recorded for *this* tool name and
*these* arguments; anything else is blocked and the model is told why.

Run it: ``python docs/examples/approval_bound_hook.py`` (offline: a FunctionModel
plays the LLM). Warden's own ``approve_tool_call(fingerprint=...)`` does the same
check in the runtime; this shows the hook-based variant.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

from pydantic import BaseModel

from agent_core import Agent, AgentStream, ToolHookCall, create_tool
from agent_core.models import FunctionModel, Message, ModelRequestInfo, ModelResponse, ToolCall


def action_fingerprint(tool_name: str, args: Any) -> str:
    """For production, use a stable hash (``agent_core.fingerprint``); a JSON string keeps it readable."""
    return "fingerprint-" + json.dumps({"toolName": tool_name, "args": args}, sort_keys=True)


SENSITIVE_TOOLS = {"issue_refund", "delete_record"}
approved_fingerprints: set[str] = set()


class RefundInput(BaseModel):
    order_id: str


class DeleteInput(BaseModel):
    record_id: str


async def issue_refund(inp: RefundInput, ctx) -> dict[str, Any]:
    return {"refunded": inp.order_id}


async def delete_record(inp: DeleteInput, ctx) -> dict[str, Any]:
    return {"deleted": inp.record_id}


def before_tool_call(call: ToolHookCall) -> dict[str, Any] | None:
    if call.tool_name not in SENSITIVE_TOOLS:
        return None
    fingerprint = action_fingerprint(call.tool_name, call.args)
    if fingerprint not in approved_fingerprints:
        return {
            "proceed": False,
            "output": f"Tool call blocked: approval did not match {call.tool_name} arguments.",
        }
    approved_fingerprints.discard(fingerprint)  # one approval, one execution
    return None


def scripted_llm(messages: list[Message], info: ModelRequestInfo) -> ModelResponse:
    """Asks to refund the order named in the prompt, then reports the tool's answer."""
    if messages[-1].role == "user":
        order = messages[-1].content.split()[-1]
        return ModelResponse(tool_calls=[ToolCall(name="issue_refund", args={"order_id": order})])
    return ModelResponse(text=f"Tool said: {messages[-1].content}")


approval_bound_agent = Agent(
    id="approval-bound-agent",
    name="Approval Bound Agent",
    model=FunctionModel(scripted_llm),
    tools={
        "issue_refund": create_tool(id="issue-refund", input_schema=RefundInput, execute=issue_refund),
        "delete_record": create_tool(id="delete-record", input_schema=DeleteInput, execute=delete_record),
    },
    hooks={"before_tool_call": before_tool_call},
)


async def consume_approval_stream(stream: AgentStream, show_approval_dialog: Any, *, tamper: bool = False) -> str:
    """Read a stream; on each approval request record the fingerprint of what was shown, then decide."""
    async for chunk in stream.full_stream:
        if chunk.type == "tool-call-approval":
            payload = chunk.payload
            fingerprint = action_fingerprint(payload.tool_name, payload.args)
            approved = await show_approval_dialog(payload.tool_name, payload.args, fingerprint)
            if approved:
                if tamper:  # what the operator saw is not what runs: the hook must block it
                    fingerprint = action_fingerprint(payload.tool_name, {"order_id": "someone-else"})
                approved_fingerprints.add(fingerprint)
                nxt = await approval_bound_agent.approve_tool_call(
                    run_id=stream.run_id, tool_call_id=payload.tool_call_id
                )
            else:
                nxt = await approval_bound_agent.decline_tool_call(
                    run_id=stream.run_id, tool_call_id=payload.tool_call_id
                )
            return await consume_approval_stream(nxt, show_approval_dialog, tamper=tamper)
    return await stream.text()


async def main() -> list[str]:
    async def operator_says_yes(tool_name: str, args: Any, fingerprint: str) -> bool:
        print(f"approve {tool_name} {args}? yes ({fingerprint})")
        return True

    outcomes = []
    for order, tamper in (("ord-1042", False), ("ord-2000", True)):
        stream = await approval_bound_agent.stream(
            f"Refund order {order}", require_tool_approval=lambda call: call.tool_name in SENSITIVE_TOOLS
        )
        outcomes.append(await consume_approval_stream(stream, operator_says_yes, tamper=tamper))
        print(outcomes[-1])
    return outcomes


if __name__ == "__main__":
    asyncio.run(main())
