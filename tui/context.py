"""The context of a run's pending calls, for the console and ``warden runs show`` (no textual import).

It reads the stored snapshot with ``agent_core.decision_context`` (the user's
request, the model's text before the call, the other calls of the step, the
tool's description, the stored conversation) and the store's audit log (who
decided what). ``RunContext.to_json``/``from_json`` carry it over HTTP
(``GET /api/runs/{runId}/context``, ``warden_server.context_routes``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from agent_core.decision_context import CallContext, TranscriptEntry, call_context, transcript
from agent_core.snapshot import RunState


@dataclass(frozen=True)
class Decision:
    """One decision of the store's audit log."""

    tool_call_id: str
    tool_name: str
    decision: str
    actor: str | None = None
    reason: str | None = None
    decided_at: float | None = None


@dataclass(frozen=True)
class RunContext:
    run_id: str
    #: Context of every call of the stored run (pending ones included), by tool call id.
    calls: dict[str, CallContext] = field(default_factory=dict)
    transcript: list[TranscriptEntry] = field(default_factory=list)
    decisions: list[Decision] = field(default_factory=list)

    def decision_of(self, tool_call_id: str) -> Decision | None:
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
    def from_json(cls, data: dict[str, Any]) -> RunContext:
        return cls(
            run_id=data["runId"],
            calls={k: CallContext.model_validate(v) for k, v in (data.get("calls") or {}).items()},
            transcript=[TranscriptEntry.model_validate(t) for t in data.get("transcript") or []],
            decisions=[
                Decision(
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


def describer(runtime: Any):
    """``(agent_path, tool_name) -> description`` over a runtime's agents (None when unknown)."""

    def describe(agent_path: list[str], tool_name: str) -> str | None:
        try:
            owner = runtime.get_agent(agent_path[0]).descendant(agent_path)
            tool = owner.tools.get(tool_name) if owner else None
        except Exception:  # an agent or tool this runtime does not know (any more)
            return None
        return getattr(tool, "description", None) if tool else None

    return describe


async def run_context(runtime: Any, run_id: str) -> RunContext:
    """The stored run's context and its decisions (empty parts when the snapshot is gone)."""
    store = runtime.store
    audit = await store.audit_log(run_id)
    decisions = [Decision(a.tool_call_id, a.tool_name, a.decision, a.actor, a.reason, a.decided_at) for a in audit]
    row = await store.get_run(run_id)
    if row is None or not getattr(row, "snapshot", None):
        return RunContext(run_id, decisions=decisions)
    state = RunState.from_json(row.snapshot, run_id=run_id, store=store.name)
    describe = describer(runtime)
    calls: dict[str, CallContext] = {}
    for call_id in _call_ids(state):
        ctx = call_context(state, call_id, describe_tool=describe)
        if ctx is not None:
            calls[call_id] = ctx
    return RunContext(run_id, calls, transcript(state), decisions)
