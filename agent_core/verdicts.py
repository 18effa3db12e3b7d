"""What a decision says, as typed values, and the plan a checked decision becomes.

``Approve`` / ``Decline`` / ``Resume`` are an operator's (or auto-resume's) word on one
waiting call; ``Expire`` is the sweep's. ``Decisions.decide`` checks one against the stored
call inside the store's compare-and-set (``agent_core.decisions``) and turns it into a
``Plan``: what ``Decisions`` then does to the call in the run's state. The public methods
(``approve_tool_call(...)`` and the rest) build these values; nothing below them passes
decisions as loose keywords.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar, Literal

from agent_core.call_state import RunState
from agent_core.models import Message
from storage.records import CallKind, PendingCallRow

#: What is done to the call in the run's state (``CallState.approve`` / ``decline`` / ``resume`` / ``expire``).
Action = Literal["approve", "decline", "resume", "expire"]


@dataclass(frozen=True, slots=True)
class Approve:
    """Run the call: with ``args`` instead of the model's (validated first), only if ``fingerprint``
    (when given) is the pending call's. On an interrupted call: run it again (audited)."""

    args: dict[str, Any] | None = None
    fingerprint: str | None = None
    actor: str | None = None
    action: ClassVar[Action] = "approve"
    #: the call kinds this decision may be taken on.
    kinds: ClassVar[tuple[CallKind, ...]] = ("approval", "interrupted")


@dataclass(frozen=True, slots=True)
class Decline:
    """Do not run the call; the model is told ``reason`` (or the default message)."""

    reason: str | None = None
    actor: str | None = None
    action: ClassVar[Action] = "decline"
    kinds: ClassVar[tuple[CallKind, ...]] = ("approval", "suspend", "interrupted")


@dataclass(frozen=True, slots=True)
class Resume:
    """Re-enter a suspended tool with ``data`` (validated against its ``resume_schema`` first)."""

    data: Any
    actor: str | None = None
    action: ClassVar[Action] = "resume"
    kinds: ClassVar[tuple[CallKind, ...]] = ("suspend",)


@dataclass(frozen=True, slots=True)
class Expire:
    """The sweep's: an overdue approval is expired, fail-closed (the tool never runs)."""

    actor: str | None = None
    action: ClassVar[Action] = "expire"
    kinds: ClassVar[tuple[CallKind, ...]] = ("approval",)


Verdict = Approve | Decline | Resume | Expire


@dataclass(slots=True)
class Plan:
    """A decision checked and claimed: what to do to ``call`` in the run, by the lease ``owner``.

    ``state`` is the run as the claim read it, or None when another holder has the run's lease
    (the decision then waits for it). ``args`` (approve): the edited arguments to run with;
    ``reason`` (decline): what the model is told; ``resume_data`` (resume): the validated data;
    ``followups``: user messages (auto-resume) that join the conversation after the step's results.
    Made by ``Decisions.check`` inside the claim; ``Decisions.decide`` completes it from the claim's
    outcome (the call as claimed, the lease) before anything applies it.
    """

    action: Action
    call: PendingCallRow
    owner: str
    state: RunState | None = None
    args: dict[str, Any] | None = None
    reason: str | None = None
    resume_data: Any = None
    followups: tuple[Message, ...] = ()
    #: who decided, as audited (``warden.approval.actor`` of the call's ``await_approval`` span).
    actor: str | None = None
