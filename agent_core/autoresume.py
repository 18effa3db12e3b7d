"""Auto-resume: the next user message of a thread answers the tool call(s) waiting in it.

One model call (``info.purpose == "resume"``) turns the message into data for
the waiting call(s). An approval is granted only when the model reads an
approval *and* the message itself says yes: an unclear answer never approves
(Mastra approves by default; Warden does not).

**One pending call in the thread.** The model's answer must validate against
the tool's ``resume_schema`` (a suspension) or ``APPROVAL_SCHEMA`` (an
approval). Anything else leaves the call waiting and the agent answers the
message normally (a new run).

**Several pending calls in the thread** (in one run or in several). An answer
applies only to the calls it designates: the model answers
``MULTI_APPROVAL_SCHEMA``, ``{"decision", "toolCallIds"}``, where the ids must
be pending approvals of the thread; each designated call is approved (only on
an explicit yes) or declined, the others stay pending. Suspensions (which need
resume data) are never resumed from such a message. When the answer designates
nothing, is unclear, or names an unknown id, *nothing is decided and no run is
started*: the agent answers, without calling the model or storing anything,
that the calls need an explicit decision and lists them (``needs_decision_stream``).
So an unclear "yes" never approves one call of several, and unclear replies do
not pile further pending runs onto the thread.
"""

from __future__ import annotations

import json
import re
import uuid
from collections.abc import AsyncIterator
from typing import Any, Protocol

from agent_core.chunks import Chunk, make_chunk
from agent_core.definition import HostedAgent
from agent_core.errors import ModelError, WardenError
from agent_core.models import Message, ModelRequestInfo
from agent_core.stream import AgentStream
from agent_core.verdicts import Approve, Decline, Resume, Verdict
from agent_core.views import PendingToolCall, SuspendedRun, SuspendedRunList


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
        verdict: Verdict,
        *,
        run_id: str,
        tool_call_id: str | None = ...,
        followups: list[Message] | None = ...,
    ) -> AgentStream: ...


APPROVAL_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"decision": {"type": "string", "enum": ["approve", "decline", "unclear"]}},
    "required": ["decision"],
    "additionalProperties": False,
}

#: How many pending runs of a thread auto-resume looks at.
MAX_PENDING_RUNS = 50


def multi_approval_schema(tool_call_ids: list[str]) -> dict[str, Any]:
    """The answer asked of the model when several calls wait: a decision and the calls it applies to."""
    return {
        "type": "object",
        "properties": {
            "decision": {"type": "string", "enum": ["approve", "decline", "unclear"]},
            "toolCallIds": {"type": "array", "items": {"type": "string", "enum": tool_call_ids}},
        },
        "required": ["decision", "toolCallIds"],
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
    """The stream of the resumed run; the stream of a reply that asks for an explicit decision
    (several calls wait and the message does not designate any); or None when the message does
    not answer the one waiting call (it is then handled normally)."""
    listing = await runtime.list_suspended_runs(
        agent_id=agent.id, thread_id=thread_id, resource_id=resource_id, per_page=MAX_PENDING_RUNS
    )
    pending = [(run, call) for run in listing.runs for call in run.tool_calls]
    if not pending or not new_messages:
        return None
    if len(pending) > 1:
        return await _several(runtime, agent, pending, history=history, new_messages=new_messages)
    run, call = pending[0]
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
                Resume(data),
                run_id=run.run_id,
                tool_call_id=call.tool_call_id,
                followups=new_messages,
            )
        decision = data.get("decision")
        if decision == "approve" and explicit_yes(user_text):
            return await runtime.decide(
                agent,
                Approve(fingerprint=call.fingerprint),
                run_id=run.run_id,
                tool_call_id=call.tool_call_id,
                followups=new_messages,
            )
        if decision == "decline":
            return await runtime.decide(
                agent,
                Decline(reason=user_text or None),
                run_id=run.run_id,
                tool_call_id=call.tool_call_id,
                followups=new_messages,
            )
    except (WardenError, ModelError):  # invalid data, or decided elsewhere meanwhile
        return None
    return None


async def _several(
    runtime: Desk,
    agent: HostedAgent,
    pending: list[tuple[SuspendedRun, PendingToolCall]],
    *,
    history: list[Message],
    new_messages: list[Message],
) -> AgentStream:
    user_text = next((m.content for m in reversed(new_messages) if m.role == "user"), "")
    approvals = {call.tool_call_id: (run, call) for run, call in pending if call.kind == "approval"}
    chosen: list[tuple[SuspendedRun, PendingToolCall]] = []
    decision = None
    if approvals:
        info = ModelRequestInfo(
            tools=[],
            output_schema=multi_approval_schema(list(approvals)),
            purpose="resume",
            agent_id=agent.id,
            run_id=pending[0][0].run_id,
        )
        try:
            response = await agent.resolved_model().generate(agent.model_messages([*history, *new_messages]), info)
            data = parse_json(response.text)
        except (WardenError, Exception):  # no answer from the model: nothing decided
            data = None
        if isinstance(data, dict):
            decision = data.get("decision")
            ids = data.get("toolCallIds")
            if isinstance(ids, list) and ids and all(isinstance(i, str) and i in approvals for i in ids):
                chosen = [approvals[i] for i in dict.fromkeys(ids)]
    if decision == "approve" and not explicit_yes(user_text):
        chosen = []
    if decision not in ("approve", "decline") or not chosen:
        return needs_decision_stream(agent.id, pending)
    streams: list[AgentStream] = []
    for i, (run, call) in enumerate(chosen):
        try:
            verdict = Approve(fingerprint=call.fingerprint) if decision == "approve" else Decline(user_text or None)
            s = await runtime.decide(
                agent,
                verdict,
                run_id=run.run_id,
                tool_call_id=call.tool_call_id,
                followups=new_messages if i == 0 else None,
            )
        except (WardenError, ModelError):  # decided elsewhere meanwhile: the others still apply
            continue
        if streams:
            await streams[-1].text()  # one decision at a time: the next sees the run the last one left
        streams.append(s)
    if not streams:
        return needs_decision_stream(agent.id, pending)
    return streams[-1]


def needs_decision_text(pending: list[tuple[SuspendedRun, PendingToolCall]]) -> str:
    lines = [
        f"{len(pending)} tool calls are waiting in this thread; this message does not say which one(s) "
        "it answers, so nothing was decided. Approve, decline or resume each one explicitly, by its tool call id:"
    ]
    for run, call in pending:
        what = call.listed_kind
        lines.append(f"- {call.tool_name} ({what}): tool call {call.tool_call_id} of run {run.run_id}")
    return "\n".join(lines)


def needs_decision_stream(agent_id: str, pending: list[tuple[SuspendedRun, PendingToolCall]]) -> AgentStream:
    """A reply that is not a run: nothing is stored, no model is called, no call is decided."""
    run_id = str(uuid.uuid4())
    text = needs_decision_text(pending)

    async def chunks() -> AsyncIterator[Chunk]:
        yield make_chunk("start", run_id, agent_id=agent_id)
        yield make_chunk("step-start", run_id, step=0)
        yield make_chunk("text-delta", run_id, text=text)
        yield make_chunk("step-finish", run_id, step=0, finish_reason="stop")
        yield make_chunk("finish", run_id, finish_reason="stop")

    return AgentStream(run_id, chunks())


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
