"""The resumable state of a run: what is stored while it waits for a decision.

A run is a tree: a delegation call (``agent-<key>``) holds the sub-agent's
run as ``child``, so nested runs of any depth live in the top run's one
snapshot and are saved atomically with it. ``format`` versions the JSON.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, Literal

from pydantic import BaseModel, Field, ValidationError

from agent_core.errors import CorruptSnapshot
from agent_core.models import Message, Usage

SNAPSHOT_FORMAT = 1

CallStatus = Literal["new", "awaiting_approval", "approved", "declined", "suspended", "resuming", "delegated", "done"]
#: A call in one of these states blocks its step until someone decides.
WAITING: frozenset[str] = frozenset({"awaiting_approval", "suspended", "delegated"})

PolicyMode = Literal["none", "all", "request_fn", "agent_default"]


class CallState(BaseModel):
    id: str
    name: str
    args: dict[str, Any] = Field(default_factory=dict)
    args_error: str | None = None
    status: CallStatus = "new"
    #: approval granted once: never gated again, whatever the policy says later.
    approved: bool = False
    fingerprint: str = ""
    suspend_payload: Any = None
    resume_data: Any = None
    reason: str | None = None
    result: Any = None
    result_kind: Literal["result", "error", "denied"] | None = None
    pending_since: float = 0.0
    seq: int = 0
    child: RunState | None = None

    @property
    def waiting(self) -> bool:
        return self.status in WAITING


class RunState(BaseModel):
    format: int = SNAPSHOT_FORMAT
    run_id: str
    agent_id: str
    agent_path: list[str]
    thread_id: str | None = None
    resource_id: str | None = None
    messages: list[Message] = Field(default_factory=list)
    step: int = 0
    max_steps: int = 10
    policy: PolicyMode = "none"
    request_context: dict[str, Any] = Field(default_factory=dict)
    calls: list[CallState] = Field(default_factory=list)
    usage: Usage = Field(default_factory=Usage)
    created_at: float = 0.0
    #: how many of ``messages`` are already in memory (history + saved).
    memory_saved: int = 0
    seq_counter: int = 0
    #: user messages to add once the current step's tool results are in (auto-resume).
    followups: list[Message] = Field(default_factory=list)
    outcome: Literal["running", "suspended", "finished", "failed"] = "running"
    finish_reason: str | None = None
    error: str | None = None

    def to_json(self) -> str:
        return self.model_dump_json(exclude_defaults=False)

    @classmethod
    def from_json(cls, text: str, *, run_id: str, store: str) -> RunState:
        try:
            state = cls.model_validate_json(text)
        except ValidationError as exc:
            raise CorruptSnapshot(
                f"snapshot of run {run_id!r} in {store} is corrupt: {exc.errors()[0]['msg']}"
            ) from exc
        if state.format > SNAPSHOT_FORMAT:
            raise CorruptSnapshot(
                f"snapshot of run {run_id!r} in {store} has format {state.format}, "
                f"newer than this Warden understands ({SNAPSHOT_FORMAT})"
            )
        return state


class Leaf(BaseModel):
    """A call waiting for an operator, wherever it sits in the run tree."""

    call: CallState
    agent_path: list[str]
    kind: Literal["approval", "suspend"]


def pending_leaves(state: RunState) -> list[Leaf]:
    """Every call waiting for a decision, oldest first (the last one is the latest)."""
    leaves = list(_walk_leaves(state))
    leaves.sort(key=lambda leaf: (leaf.call.pending_since, leaf.call.seq))
    return leaves


def _walk_leaves(state: RunState) -> Iterator[Leaf]:
    for call in state.calls:
        if call.status == "awaiting_approval":
            yield Leaf(call=call, agent_path=state.agent_path, kind="approval")
        elif call.status == "suspended":
            yield Leaf(call=call, agent_path=state.agent_path, kind="suspend")
        elif call.status == "delegated" and call.child is not None:
            yield from _walk_leaves(call.child)


def find_call(state: RunState, tool_call_id: str) -> tuple[RunState, CallState] | None:
    for call in state.calls:
        if call.id == tool_call_id:
            return state, call
        if call.child is not None:
            found = find_call(call.child, tool_call_id)
            if found:
                return found
    return None


def used_ids(state: RunState, into: set[str] | None = None) -> set[str]:
    """All tool-call ids of the run tree, so new ids stay unique within the top run."""
    ids = into if into is not None else set()
    for m in state.messages:
        for tc in m.tool_calls:
            if tc.id:
                ids.add(tc.id)
    for call in state.calls:
        ids.add(call.id)
        if call.child is not None:
            used_ids(call.child, ids)
    return ids
