"""Messages the console's widgets and workers post (dataclasses, posting-style)."""

from __future__ import annotations

from dataclasses import dataclass

from textual.message import Message

from tui.backend import PendingCall


@dataclass
class RunStarted(Message):
    run_id: str
    agent_id: str | None


@dataclass
class DecisionNeeded(Message):
    """A live stream (or a stored run) has a call waiting for the operator."""

    call: PendingCall
    open_dialog: bool = True


@dataclass
class CallResolved(Message):
    """A pending call was decided (here or elsewhere): drop it from lists."""

    run_id: str
    tool_call_id: str


@dataclass
class RunEnded(Message):
    run_id: str
    status: str


@dataclass
class PendingCountChanged(Message):
    total: int


@dataclass
class OpenCall(Message):
    """Open the decision dialog of a call (from the pending panel or the picker)."""

    call: PendingCall
