"""Auto-resume: the next user message of a thread answers the tool call waiting in it.

One model call (``info.purpose == "resume"``) turns the message into data for
the waiting call: resume data that must validate against the tool's
``resume_schema``, or, for an approval, an explicit decision. Anything else
leaves the call waiting and the agent answers the message normally. An
approval is granted only when the model reads an approval *and* the message
itself says yes: an unclear answer never approves (Mastra approves by default;
Warden does not).
"""

from __future__ import annotations

import json
import re
from typing import Any, Literal, Protocol

from agent_core.definition import HostedAgent
from agent_core.errors import ModelError, WardenError
from agent_core.models import Message, ModelRequestInfo
from agent_core.stream import AgentStream
from agent_core.views import SuspendedRunList


class Desk(Protocol):
    """What auto-resume needs from the runtime: the thread's pending runs, and taking a decision."""

    async def list_suspended_runs(
        self,
        *,
        agent_id: str | None = ...,
        thread_id: str | None = ...,
        resource_id: str | None = ...,
        per_page: int = ...,
    ) -> SuspendedRunList: ...

    async def decide(
        self,
        agent: HostedAgent,
        kind: Literal["approve", "decline", "resume"],
        *,
        run_id: str,
        tool_call_id: str | None = ...,
        fingerprint: str | None = ...,
        reason: str | None = ...,
        resume_data: Any = ...,
        followups: list[Message] | None = ...,
    ) -> AgentStream: ...


APPROVAL_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"decision": {"type": "string", "enum": ["approve", "decline", "unclear"]}},
    "required": ["decision"],
    "additionalProperties": False,
}

_YES = re.compile(r"\b(yes|yep|yeah|approve[ds]?|confirm(ed)?|go ahead|do it|proceed|ok(ay)?|sure|oui)\b", re.I)
_NO = re.compile(r"\b(no|nope|don'?t|do not|stop|cancel|decline[ds]?|deny|never|not|non)\b", re.I)


def explicit_yes(text: str) -> bool:
    """A message that says yes and nothing that could mean no."""
    return bool(_YES.search(text)) and not _NO.search(text)


async def auto_resume(
    runtime: Desk,
    agent: HostedAgent,
    *,
    thread_id: str,
    resource_id: str | None,
    history: list[Message],
    new_messages: list[Message],
) -> AgentStream | None:
    """The stream of the resumed run, or None when the message does not answer the waiting call."""
    listing = await runtime.list_suspended_runs(
        agent_id=agent.id, thread_id=thread_id, resource_id=resource_id, per_page=1
    )
    if not listing.runs or not listing.runs[0].tool_calls or not new_messages:
        return None
    run = listing.runs[0]
    call = run.tool_calls[-1]
    user_text = next((m.content for m in reversed(new_messages) if m.role == "user"), "")
    schema = call.resume_schema if call.kind == "suspend" else APPROVAL_SCHEMA
    if schema is None:
        return None
    info = ModelRequestInfo(tools=[], output_schema=schema, purpose="resume", agent_id=agent.id, run_id=run.run_id)
    try:
        response = await agent.resolved_model().generate(agent.model_messages([*history, *new_messages]), info)
    except (WardenError, Exception):  # no answer from the model: the message is handled normally
        return None
    data = parse_json(response.text)
    if not isinstance(data, dict):
        return None
    try:
        if call.kind == "suspend":
            return await runtime.decide(
                agent,
                "resume",
                run_id=run.run_id,
                tool_call_id=call.tool_call_id,
                resume_data=data,
                followups=new_messages,
            )
        decision = data.get("decision")
        if decision == "approve" and explicit_yes(user_text):
            return await runtime.decide(
                agent,
                "approve",
                run_id=run.run_id,
                tool_call_id=call.tool_call_id,
                fingerprint=call.fingerprint,
                followups=new_messages,
            )
        if decision == "decline":
            return await runtime.decide(
                agent,
                "decline",
                run_id=run.run_id,
                tool_call_id=call.tool_call_id,
                reason=user_text or None,
                followups=new_messages,
            )
    except (WardenError, ModelError):  # invalid data, or decided elsewhere meanwhile
        return None
    return None


def parse_json(text: str) -> Any:
    """The JSON object in a model's answer, tolerating a Markdown code fence around it."""
    text = text.strip()
    fenced = re.match(r"^```(?:json)?\s*(.*?)\s*```$", text, re.S)
    if fenced:
        text = fenced.group(1)
    try:
        return json.loads(text)
    except ValueError:
        start, end = text.find("{"), text.rfind("}")
        if 0 <= start < end:
            try:
                return json.loads(text[start : end + 1])
            except ValueError:
                return None
    return None
