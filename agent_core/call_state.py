"""The state of a run tree: the tool-call state machine (``CallState``) and the run (``RunState``).

The two models are mutually recursive (a delegation call holds its sub-agent's
run as ``child``), so they live together; queries over the tree are in
``agent_core.snapshot``.

A call moves only through the transition methods of ``CallState``; each one
checks ``TRANSITIONS`` and raises ``IllegalTransition`` otherwise. Adding a
state means adding it to ``CallStatus`` and to the rows of ``TRANSITIONS``
(plus a method when it comes with a new event). The table is documented in
``docs/operations.md``.

Crash recovery adds states that live on the store's call row, not in the
snapshot (the snapshot is only rewritten at step boundaries): a decided call
is *started* once its row has the durable ``started_at`` mark (written just
before ``execute``, see ``RunContext.before_start``). Once the run's lease has
expired, a decided call that never started reads as pending again (same kind
and fingerprint, audit ``returned-to-pending``), and an approved or resumed
call that started reads as kind ``interrupted``: ``approve`` re-executes it
(audit ``re-executed``), ``decline`` resolves it as denied with
``decisions.INTERRUPTED_DECLINED``. In the snapshot such a call is still
``awaiting_approval`` / ``suspended``, so the transitions below apply
unchanged. See ``storage.records.actionable`` and docs/operations.md.

"Approved once, never gated again" needs no flag: ``gate`` and ``admit`` are
only legal from ``new``, and no transition leads back to ``new``.
"""

from __future__ import annotations

import json
from typing import Any, Literal

from pydantic import BaseModel, Field, ValidationError
from pydantic_core import PydanticSerializationError

from agent_core.errors import CorruptSnapshot, IllegalTransition
from agent_core.limits import scrub
from agent_core.models import Message, Usage

#: Version of the snapshot JSON. Format 1 snapshots may carry a boolean
#: ``approved`` on calls (derived from ``status`` since); it is ignored on load.
SNAPSHOT_FORMAT = 1

CallStatus = Literal["new", "awaiting_approval", "approved", "declined", "suspended", "resuming", "delegated", "done"]
ResultKind = Literal["result", "error", "denied"]
Event = Literal["gate", "admit", "approve", "decline", "resume", "suspend", "delegate", "complete", "fail", "deny"]

#: event -> (states it may leave from, state it leads to)
TRANSITIONS: dict[Event, tuple[frozenset[CallStatus], CallStatus]] = {
    "gate": (frozenset({"new"}), "awaiting_approval"),
    "admit": (frozenset({"new"}), "approved"),
    "approve": (frozenset({"awaiting_approval"}), "approved"),
    "decline": (frozenset({"awaiting_approval", "suspended"}), "declined"),
    "resume": (frozenset({"suspended"}), "resuming"),
    "suspend": (frozenset({"approved", "resuming"}), "suspended"),
    "delegate": (frozenset({"approved", "delegated"}), "delegated"),
    "complete": (frozenset({"approved", "resuming", "delegated"}), "done"),
    "fail": (frozenset({"new", "approved", "resuming", "delegated"}), "done"),
    "deny": (frozenset({"declined"}), "done"),
}
#: A call in one of these states blocks its step until someone decides.
WAITING: frozenset[str] = frozenset({"awaiting_approval", "suspended", "delegated"})
#: A call in one of these states waits for an operator's decision (a leaf of the run tree).
DECIDABLE: frozenset[str] = frozenset({"awaiting_approval", "suspended"})
#: A call in one of these states runs (or continues) its tool or sub-agent in the current step.
RUNNABLE: frozenset[str] = frozenset({"approved", "resuming", "delegated"})
_RESOLVE_EVENT: dict[ResultKind, Event] = {"result": "complete", "error": "fail", "denied": "deny"}

PolicyMode = Literal["none", "all", "request_fn", "agent_default"]


class CallState(BaseModel):
    id: str
    name: str
    args: dict[str, Any] = Field(default_factory=dict)
    args_error: str | None = None
    status: CallStatus = "new"
    fingerprint: str = ""
    suspend_payload: Any = None
    resume_data: Any = None
    reason: str | None = None
    result: Any = None
    result_kind: ResultKind | None = None
    pending_since: float = 0.0
    seq: int = 0
    child: RunState | None = None

    @property
    def waiting(self) -> bool:
        return self.status in WAITING

    @property
    def decidable(self) -> bool:
        return self.status in DECIDABLE

    @property
    def runnable(self) -> bool:
        return self.status in RUNNABLE

    # -- transitions ---------------------------------------------------------------------
    def _move(self, event: Event) -> None:
        sources, target = TRANSITIONS[event]
        if self.status not in sources:
            raise IllegalTransition(
                f"tool call {self.id!r} ({self.name}) cannot {event} from {self.status!r} "
                f"(allowed from: {', '.join(sorted(sources))})"
            )
        self.status = target

    def gate(self, fingerprint: str, seq: int, now: float) -> None:
        """The policy asks for approval: wait for an operator before ``execute`` runs."""
        self._move("gate")
        self.fingerprint = fingerprint
        self.mark_pending(now, seq)

    def admit(self) -> None:
        """The policy lets the call run without approval."""
        self._move("admit")

    def approve(self) -> None:
        self._move("approve")

    def decline(self, reason: str | None) -> None:
        self._move("decline")
        self.reason = reason

    def resume(self, data: Any) -> None:
        self._move("resume")
        self.resume_data = data

    def suspend(self, payload: Any) -> None:
        """The tool called ``ctx.suspend(payload)``: wait for resume data."""
        self._move("suspend")
        self.suspend_payload = payload
        self.resume_data = None

    def delegate(self, child: RunState) -> None:
        """Run (or continue) the sub-agent's nested run ``child``."""
        self._move("delegate")
        self.child = child

    def resolve(self, kind: ResultKind, result: Any) -> None:
        """The call is over: a result, an error, or a denial the model will see."""
        self._move(_RESOLVE_EVENT[kind])
        self.result_kind = kind
        self.result = result
        self.resume_data = None
        self.child = None

    def mark_pending(self, now: float, seq: int) -> None:
        """When the call started waiting, and its order among the run's waiting calls."""
        self.pending_since, self.seq = now, seq


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
        try:
            return self.model_dump_json(exclude_defaults=False)
        except PydanticSerializationError:
            # Text that cannot be encoded (lone surrogates from a model): stored escaped, never lost.
            data = self.model_dump(mode="python", exclude_defaults=False)
            return scrub(json.dumps(data, ensure_ascii=False, default=str), json_text=True)

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


def policy_mode(default: Any) -> PolicyMode:
    """The stored policy of a run from an agent's ``require_tool_approval`` default option."""
    return "all" if default is True else "agent_default" if callable(default) else "none"
