"""Messages the console's screens, widgets and workers post upward (dataclasses, posting-style).

Down the tree (app -> screen -> widget) the console calls methods and sets
attributes; up the tree it posts one of these, handled by the ``WardenApp``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from textual.message import Message

if TYPE_CHECKING:
    from tui.backend import PendingCall
    from tui.reconcile import Removal


@dataclass
class RunRequested(Message):
    """The operator sent a prompt to an agent (run screen -> app, which starts the run)."""

    agent_id: str
    prompt: str


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
class CallsGone(Message):
    """A store poll found listed calls no longer pending (decided elsewhere, or their run ended):
    the app closes their dialogs (run screen -> app)."""

    removals: list[Removal]


@dataclass
class OpenCall(Message):
    """Open the decision dialog of a call (from the pending panel or the picker)."""

    call: PendingCall


@dataclass
class DecideCall(Message):
    """Decide a call without its dialog: ``y``/``n`` in the pending picker (picker -> app).
    An approval carries the listed call's fingerprint."""

    call: PendingCall
    approve: bool


@dataclass
class ReviewWaiting(Message):
    """The operator asked for the dialog of the first call waiting in the banner (``f2``)."""


@dataclass
class DeadlinePassed(Message):
    """A listed approval is past its deadline: the app sweeps (a local runtime) so it becomes expired."""


@dataclass
class KeysReady(Message):
    """The screen that held keys is ready: the app replays them (app -> itself, behind the keys
    already read, so the order is kept)."""
