"""What an operator needs beside a pending call to decide it well, read from the stored run.

The snapshot already holds the conversation; this module turns it into the
context the console and ``warden runs show`` put next to a decision: the
user's request that led to the call, the model's text just before it, the
other calls of the same step ("call 2 of 3"), the tool's description and how
long the call has waited; and a transcript to replay a reopened run into the
log. Pure functions over ``RunState``: no store, no UI.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel, ConfigDict, Field
from pydantic.alias_generators import to_camel

from agent_core.call_state import CallState, RunState
from agent_core.models import Message
from agent_core.quorum import approvals_of, quorum_line
from agent_core.snapshot import find_call

#: ``(agent_path, tool_name) -> description``; None when the tool is unknown here.
DescribeTool = Callable[[list[str], str], str | None]


class _View(BaseModel):
    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, defer_build=True)


class StepCall(_View):
    """Another call of the same step, and where it stands."""

    tool_call_id: str
    tool_name: str
    args: dict[str, Any] = Field(default_factory=dict)
    state: str


class CallContext(_View):
    run_id: str
    tool_call_id: str
    tool_name: str
    agent_path: list[str]
    thread_id: str | None = None
    resource_id: str | None = None
    #: the user message that led to this call (the top run's latest user message before it).
    request: str | None = None
    #: for a call inside a sub-agent: the prompt the supervisor gave that sub-agent.
    delegated_prompt: str | None = None
    #: the text of the model's message that made the call (often its reasoning or announcement).
    model_text: str = ""
    tool_description: str | None = None
    #: 1-based position of this call among the calls of its step, and their number.
    position: int = 1
    of: int = 1
    step_calls: list[StepCall] = Field(default_factory=list)
    pending_since: float | None = None
    #: the policy rule that asked for this approval, its reason, the policy's version, and the approvals needed.
    policy_rule: str | None = None
    policy_reason: str | None = None
    policy_version: str | None = None
    approvers_required: int = 1
    #: the votes so far of a quorum (``{actor, at}``), from the audit log.
    approvals: list[dict[str, Any]] = Field(default_factory=list)

    @property
    def policy_line(self) -> str | None:
        """``rule big-refunds: refunds over 1000 need two people`` (None: no rule asked)."""
        if self.policy_rule is None:
            return None
        return f"rule {self.policy_rule}: {self.policy_reason}" if self.policy_reason else f"rule {self.policy_rule}"

    @property
    def quorum_line(self) -> str | None:
        """``1 of 2 approvals (alice)`` for a four-eyes call (None: one approver is enough)."""
        return quorum_line(self.approvals, self.approvers_required) if self.approvers_required > 1 else None


class TranscriptEntry(_View):
    """One message of a stored run, for replay into the console's log."""

    role: str
    text: str = ""
    tool_calls: list[dict[str, Any]] = Field(default_factory=list)
    tool_call_id: str | None = None
    tool_name: str | None = None
    tool_status: str | None = None
    agent_path: list[str] = Field(default_factory=list)


def _call_state_label(call: CallState) -> str:
    if call.blocked:  # a policy deny: not an operator's decline, and nothing can approve it
        return "blocked by policy"
    if call.status == "done":
        return {"denied": "declined", "error": "failed"}.get(call.result_kind or "", "done")
    return {
        "awaiting_approval": "waiting for approval",
        "suspended": "waiting for input",
        "delegated": "in a sub-agent",
        "approved": "approved",
        "declined": "declined",
        "resuming": "resuming",
    }.get(call.status, call.status)


def _chain(state: RunState, tool_call_id: str) -> list[tuple[RunState, CallState]] | None:
    """The (run, call) pairs from the top run down to the call ``tool_call_id``."""
    for call in state.calls:
        if call.id == tool_call_id:
            return [(state, call)]
        if call.child is not None:
            below = _chain(call.child, tool_call_id)
            if below is not None:
                return [(state, call), *below]
    return None


def _assistant_index(messages: list[Message], tool_call_id: str) -> int | None:
    for i in range(len(messages) - 1, -1, -1):
        m = messages[i]
        if m.role == "assistant" and any(tc.id == tool_call_id for tc in m.tool_calls):
            return i
    return None


def _request_index(messages: list[Message], before: int | None) -> int | None:
    end = len(messages) if before is None else before
    for i in range(end - 1, -1, -1):
        if messages[i].role == "user":
            return i
    return None


def _run_start(state: RunState) -> int:
    """Index of the user message that started this run's work (thread history before it is older).

    Each step of a run adds exactly one assistant message, so the run's first
    one is the ``step + 1``-th from the end; its request is the user message before it.
    """
    assistant = [i for i, m in enumerate(state.messages) if m.role == "assistant"]
    own = state.step + 1
    first = assistant[-own] if len(assistant) >= own else (assistant[0] if assistant else None)
    found = _request_index(state.messages, first)
    return found if found is not None else 0


def call_context(
    state: RunState, tool_call_id: str, *, describe_tool: DescribeTool | None = None
) -> CallContext | None:
    """The context of pending call ``tool_call_id`` in the run ``state``; None if it is not there."""
    chain = _chain(state, tool_call_id)
    if chain is None:
        return None
    top, top_call = chain[0]
    owner, call = chain[-1]
    top_at = _assistant_index(top.messages, top_call.id)
    request_at = _request_index(top.messages, top_at)
    owner_at = _assistant_index(owner.messages, call.id)
    ids = [c.id for c in owner.calls]
    return CallContext(
        run_id=state.run_id,
        tool_call_id=call.id,
        tool_name=call.name,
        agent_path=list(owner.agent_path),
        thread_id=state.thread_id,
        resource_id=state.resource_id,
        request=None if request_at is None else top.messages[request_at].content,
        delegated_prompt=owner.messages[0].content if len(chain) > 1 and owner.messages else None,
        model_text="" if owner_at is None else owner.messages[owner_at].content,
        tool_description=describe_tool(list(owner.agent_path), call.name) if describe_tool else None,
        position=ids.index(call.id) + 1,
        of=len(ids),
        step_calls=[
            StepCall(tool_call_id=c.id, tool_name=c.name, args=c.args, state=_call_state_label(c)) for c in owner.calls
        ],
        pending_since=call.pending_since or None,
        policy_rule=call.policy_rule,
        policy_reason=call.policy_reason,
        policy_version=call.policy_version,
        approvers_required=call.approvers_required,
    )


def transcript(state: RunState, *, from_request: bool = True) -> list[TranscriptEntry]:
    """The stored conversation of the run, sub-agents' messages under their agent path.

    ``from_request``: start at the user message that started the current work
    (earlier thread history is left out), as an operator reopening the run needs.
    """
    entries: list[TranscriptEntry] = []
    _transcript(state, entries, from_request=from_request)
    return entries


def _transcript(state: RunState, out: list[TranscriptEntry], *, from_request: bool) -> None:
    messages = state.messages
    start = _run_start(state) if from_request else 0
    children = {c.id: c.child for c in state.calls if c.child is not None}
    for m in messages[start:]:
        if m.role == "system":
            continue
        out.append(
            TranscriptEntry(
                role=m.role,
                text=m.content,
                tool_calls=[{"id": tc.id, "name": tc.name, "args": tc.args} for tc in m.tool_calls],
                tool_call_id=m.tool_call_id,
                tool_name=m.name,
                tool_status=m.tool_status,
                agent_path=list(state.agent_path),
            )
        )
        for tc in m.tool_calls:
            child = children.get(tc.id or "")
            if child is not None:
                _transcript(child, out, from_request=False)


# -- a whole stored run, for the console, `warden runs show` and GET /api/runs/{runId}/context --


@dataclass(frozen=True)
class DecisionRecord:
    """One decision of the store's audit log."""

    tool_call_id: str
    tool_name: str
    decision: str
    actor: str | None = None
    reason: str | None = None
    decided_at: float | None = None


@dataclass(frozen=True)
class RunContextView:
    """A stored run as an operator reviews it: each call's context, the conversation, the decisions."""

    run_id: str
    #: Context of every call of the stored run (pending ones included), by tool call id.
    calls: dict[str, CallContext] = field(default_factory=dict)
    transcript: list[TranscriptEntry] = field(default_factory=list)
    decisions: list[DecisionRecord] = field(default_factory=list)

    def decision_of(self, tool_call_id: str) -> DecisionRecord | None:
        found = [d for d in self.decisions if d.tool_call_id == tool_call_id]
        return found[-1] if found else None

    def to_json(self) -> dict[str, Any]:
        return {
            "runId": self.run_id,
            "calls": {k: v.model_dump(mode="json", by_alias=True) for k, v in self.calls.items()},
            "transcript": [t.model_dump(mode="json", by_alias=True) for t in self.transcript],
            "decisions": [
                {
                    "toolCallId": d.tool_call_id,
                    "toolName": d.tool_name,
                    "decision": d.decision,
                    "actor": d.actor,
                    "reason": d.reason,
                    "decidedAt": d.decided_at,
                }
                for d in self.decisions
            ],
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> RunContextView:
        return cls(
            run_id=data["runId"],
            calls={k: CallContext.model_validate(v) for k, v in (data.get("calls") or {}).items()},
            transcript=[TranscriptEntry.model_validate(t) for t in data.get("transcript") or []],
            decisions=[
                DecisionRecord(
                    d.get("toolCallId", ""),
                    d.get("toolName", ""),
                    d.get("decision", ""),
                    d.get("actor"),
                    d.get("reason"),
                    d.get("decidedAt"),
                )
                for d in data.get("decisions") or []
            ],
        )


def _call_ids(state: RunState) -> list[str]:
    out = []
    for call in state.calls:
        out.append(call.id)
        if call.child is not None:
            out.extend(_call_ids(call.child))
    return out


def describer(runtime: Any) -> DescribeTool:
    """``(agent_path, tool_name) -> description`` over a runtime's agents (None when unknown)."""

    def describe(agent_path: list[str], tool_name: str) -> str | None:
        try:
            owner = runtime.get_agent(agent_path[0]).descendant(agent_path)
            tool = owner.tools.get(tool_name) if owner else None
        except Exception:  # an agent or tool this runtime does not know (any more)
            return None
        return getattr(tool, "description", None) if tool else None

    return describe


async def run_context(runtime: Any, run_id: str) -> RunContextView:
    """The stored run's context and its decisions (empty parts when the snapshot is gone)."""
    store = runtime.store
    audit = await store.audit_log(run_id)
    decisions = [
        DecisionRecord(a.tool_call_id, a.tool_name, a.decision, a.actor, a.reason, a.decided_at) for a in audit
    ]
    row = await store.get_run(run_id)
    if row is None or not getattr(row, "snapshot", None):
        return RunContextView(run_id, decisions=decisions)
    state = RunState.from_json(row.snapshot, run_id=run_id, store=store.name)
    describe = describer(runtime)
    calls: dict[str, CallContext] = {}
    for call_id in _call_ids(state):
        ctx = call_context(state, call_id, describe_tool=describe)
        if ctx is not None:
            if ctx.approvers_required > 1:
                found = find_call(state, call_id)
                fp = found[1].fingerprint if found else ""
                ctx.approvals = approvals_of(audit, fp)
            calls[call_id] = ctx
    return RunContextView(run_id, calls, transcript(state), decisions)
