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
before ``execute``, see ``Execution.before_start``). Once the run's lease has
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

CallStatus = Literal[
    "new", "awaiting_approval", "approved", "declined", "expired", "suspended", "resuming", "delegated", "done"
]
ResultKind = Literal["result", "error", "denied", "expired"]
Event = Literal[
    "gate",
    "admit",
    "approve",
    "decline",
    "expire",
    "resume",
    "suspend",
    "delegate",
    "complete",
    "fail",
    "deny",
    "lapse",
    "block",
]

#: event -> (states it may leave from, state it leads to)
TRANSITIONS: dict[Event, tuple[frozenset[CallStatus], CallStatus]] = {
    "gate": (frozenset({"new"}), "awaiting_approval"),
    "admit": (frozenset({"new"}), "approved"),
    "approve": (frozenset({"awaiting_approval"}), "approved"),
    "decline": (frozenset({"awaiting_approval", "suspended"}), "declined"),
    "expire": (frozenset({"awaiting_approval"}), "expired"),
    "resume": (frozenset({"suspended"}), "resuming"),
    "suspend": (frozenset({"approved", "resuming"}), "suspended"),
    "delegate": (frozenset({"approved", "delegated"}), "delegated"),
    "complete": (frozenset({"approved", "resuming", "delegated"}), "done"),
    "fail": (frozenset({"new", "approved", "resuming", "delegated"}), "done"),
    "deny": (frozenset({"declined"}), "done"),
    "lapse": (frozenset({"expired"}), "done"),
    "block": (frozenset({"new"}), "declined"),
}
#: A call in one of these states blocks its step until someone decides.
WAITING: frozenset[str] = frozenset({"awaiting_approval", "suspended", "delegated"})
#: A call in one of these states waits for an operator's decision (a leaf of the run tree).
DECIDABLE: frozenset[str] = frozenset({"awaiting_approval", "suspended"})
#: A call in one of these states runs (or continues) its tool or sub-agent in the current step.
RUNNABLE: frozenset[str] = frozenset({"approved", "resuming", "delegated"})
_RESOLVE_EVENT: dict[ResultKind, Event] = {"result": "complete", "error": "fail", "denied": "deny", "expired": "lapse"}

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
    #: the validated arguments an operator approved instead of ``args`` (None: not edited).
    edited_args: dict[str, Any] | None = None
    #: the approval deadline (epoch seconds) of a gated call, None: none.
    expires_at: float | None = None
    #: when the sweep expired the call (epoch seconds).
    expired_at: float | None = None
    #: the grant that approved the call without asking (None: not by a grant).
    grant_id: str | None = None
    #: the policy (version) and rule that decided the call (None: the run has no policy / no rule matched).
    policy_version: str | None = None
    policy_rule: str | None = None
    policy_reason: str | None = None
    #: distinct approvals the matching ``ask`` rules need (``approvers``).
    approvers_required: int = 1
    #: a policy ``deny`` blocked the call (nothing overrides it).
    blocked: bool = False

    def __setattr__(self, name: str, value: Any) -> None:
        # A field (no validate_assignment here): what pydantic's memoised handler does, one call
        # fewer; a dozen such writes per approval cycle. Anything else goes through pydantic.
        if name in _CALL_FIELDS:
            self.__dict__[name] = value
            self.__pydantic_fields_set__.add(name)
        else:
            super().__setattr__(name, value)

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
    def _move(self, event: Event, changes: dict[str, Any]) -> None:
        """Take ``event``'s transition and write ``changes`` with the new status (one dict update:
        transitions are on every cycle's path, and each field write is a Python call)."""
        sources, target = TRANSITIONS[event]
        if self.status not in sources:
            raise IllegalTransition(
                f"tool call {self.id!r} ({self.name}) cannot {event} from {self.status!r} "
                f"(allowed from: {', '.join(sorted(sources))})"
            )
        changes["status"] = target
        self.__dict__.update(changes)
        self.__pydantic_fields_set__.update(changes)

    def gate(self, fingerprint: str, seq: int, now: float, *, expires_at: float | None = None) -> None:
        """The policy asks for approval: wait for an operator before ``execute`` runs (until ``expires_at``)."""
        self._move("gate", {"fingerprint": fingerprint, "expires_at": expires_at, "pending_since": now, "seq": seq})

    def admit(self, *, grant_id: str | None = None) -> None:
        """The policy lets the call run without approval (or a grant approves it)."""
        self._move("admit", {"grant_id": grant_id})

    def block(self, reason: str) -> None:
        """A policy denies the call: it never runs, whatever a flag, grant or operator says."""
        self._move("block", {"reason": reason, "blocked": True})

    def approve(self, args: dict[str, Any] | None = None) -> None:
        """An operator approves; ``args``: the validated arguments to run with instead (an edit)."""
        self._move("approve", {"edited_args": args})

    def expire(self, now: float) -> None:
        """The approval deadline passed before anyone decided (fail-closed: the tool never runs)."""
        self._move("expire", {"expired_at": now})

    @property
    def run_args(self) -> dict[str, Any]:
        """The arguments the tool runs with: the operator's edit, else the model's."""
        return self.edited_args if self.edited_args is not None else self.args

    def decline(self, reason: str | None) -> None:
        self._move("decline", {"reason": reason})

    def resume(self, data: Any) -> None:
        self._move("resume", {"resume_data": data})

    def suspend(self, payload: Any) -> None:
        """The tool called ``ctx.suspend(payload)``: wait for resume data."""
        self._move("suspend", {"suspend_payload": payload, "resume_data": None})

    def delegate(self, child: RunState) -> None:
        """Run (or continue) the sub-agent's nested run ``child``."""
        self._move("delegate", {"child": child})

    def resolve(self, kind: ResultKind, result: Any) -> None:
        """The call is over: a result, an error, or a denial the model will see."""
        self._move(_RESOLVE_EVENT[kind], {"result_kind": kind, "result": result, "resume_data": None, "child": None})

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
    #: the policies the run started under, version -> body (``agent_core.policy_gate``): any process evaluates them.
    policies: dict[str, dict[str, Any]] = Field(default_factory=dict)
    #: who started the run (``actor=`` on stream/generate, else the runtime's): never counts toward a quorum.
    requested_by: str | None = None
    request_context: dict[str, Any] = Field(default_factory=dict)
    calls: list[CallState] = Field(default_factory=list)
    usage: Usage = Field(default_factory=Usage)
    created_at: float = 0.0
    #: how many of ``messages`` are already in memory (history + saved).
    memory_saved: int = 0
    seq_counter: int = 0
    #: user messages to add once the current step's tool results are in (auto-resume).
    followups: list[Message] = Field(default_factory=list)
    #: at most this many ungated calls of one step run at once (None: all).
    tool_call_concurrency: int | None = None
    #: JSON Schema the final answer must satisfy (``output_schema=`` on stream/generate).
    output_schema: dict[str, Any] | None = None
    #: seconds an approval may wait (the request's ``approval_timeout``, else the agent's); a tool's own wins.
    approval_timeout: float | None = None
    #: the W3C traceparent of the run's first ``invoke_agent`` span (None: not traced), so a decision
    #: taken in any process continues the run's trace (``agent_core.telemetry``).
    traceparent: str | None = None
    #: the serialised state of a run hosted from another framework (``agent_core.adapters``): its
    #: message history, ``RunState`` JSON or checkpoint reference; None for Warden's own agents.
    framework_state: Any = None
    outcome: Literal["running", "suspended", "finished", "failed"] = "running"
    finish_reason: str | None = None
    error: str | None = None

    def __setattr__(self, name: str, value: Any) -> None:
        if name in _RUN_FIELDS:  # as ``CallState.__setattr__``
            self.__dict__[name] = value
            self.__pydantic_fields_set__.add(name)
        else:
            super().__setattr__(name, value)

    def to_json_plain(self) -> str | None:
        """The snapshot JSON as pydantic writes it; None when some text cannot be encoded as it is.
        (The serializer itself: ``model_dump_json``'s wrapper costs more than a small snapshot's dump.)"""
        try:
            return RunState.__pydantic_serializer__.to_json(self).decode()
        except PydanticSerializationError:
            return None

    def to_json(self) -> str:
        try:
            return RunState.__pydantic_serializer__.to_json(self).decode()
        except PydanticSerializationError:
            # Text that cannot be encoded (lone surrogates from a model): stored escaped, never lost.
            data = self.model_dump(mode="python", exclude_defaults=False)
            return scrub(json.dumps(data, ensure_ascii=False, default=str), json_text=True)

    @classmethod
    def from_json(cls, text: str, *, run_id: str, store: str) -> RunState:
        try:
            state: RunState = cls.__pydantic_validator__.validate_json(text)  # no wrapper: the hot path
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


_CALL_FIELDS = frozenset(CallState.model_fields)
_RUN_FIELDS = frozenset(RunState.model_fields)


def policy_mode(default: Any) -> PolicyMode:
    """The stored policy of a run from an agent's ``require_tool_approval`` default option."""
    return "all" if default is True else "agent_default" if callable(default) else "none"
